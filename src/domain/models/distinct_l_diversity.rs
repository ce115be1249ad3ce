//! Distinct l-diversity (Machanavajjhala et al. 2007; Hsu 2008, Def 3.3.1): every class holds at least
//! `l` distinct values of the sensitive attribute.

use std::collections::HashMap;

use serde::Deserialize;

use crate::core::privacy::DistinctLDiversity;
use crate::domain::spec::SpecError;
use crate::domain::verify::{diversity, ClassRequirement};

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "distinct_l_diversity", "attribute": …, "l": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistinctLDiversitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// Minimum number of distinct values, ≥ 1.
    pub l: u64,
}

impl ModelSpec for DistinctLDiversitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let l = at.diversity_l(self.l)?;
        Ok(ResolvedModel::new(
            DistinctLDiversity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                l,
            },
            DistinctLCheck {
                column: self.attribute.clone(),
                l,
            },
        ))
    }
}

/// At least `l` distinct values in output column `column`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistinctLCheck {
    /// Output column name.
    pub column: String,
    /// Minimum number of distinct values.
    pub l: u64,
}

impl ClassRequirement for DistinctLCheck {
    fn describe(&self) -> String {
        format!("distinct-{}-diversity on '{}'", self.l, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        diversity::distinct_l(values, self.l)
    }
}
