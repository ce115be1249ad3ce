//! Entropy l-diversity (Machanavajjhala et al. 2007; Hsu 2008, Def 3.3.2): the entropy of every class's
//! sensitive values is at least `ln l`, estimated as Shannon's plug-in entropy or Grassberger's.

use std::collections::HashMap;

use serde::Deserialize;

use crate::core::privacy::{EntropyEstimator, EntropyLDiversity};
use crate::domain::spec::SpecError;
use crate::domain::verify::{diversity, ClassRequirement};

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "entropy_l_diversity", "attribute": …, "l": …, "estimator": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntropyLDiversitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The diversity parameter, ≥ 1.
    pub l: u64,
    /// How entropy is estimated: `shannon` (default) or `grassberger`.
    #[serde(default)]
    pub estimator: EntropyEstimator,
}

impl ModelSpec for EntropyLDiversitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let l = at.diversity_l(self.l)?;
        Ok(ResolvedModel::new(
            EntropyLDiversity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                l,
                estimator: self.estimator,
            },
            EntropyLCheck {
                column: self.attribute.clone(),
                l,
                estimator: self.estimator,
            },
        ))
    }
}

/// Entropy of the values of `column` at least `ln l` (and at least `l` distinct values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntropyLCheck {
    /// Output column name.
    pub column: String,
    /// The diversity parameter.
    pub l: u64,
    /// How the entropy is estimated.
    pub estimator: EntropyEstimator,
}

impl ClassRequirement for EntropyLCheck {
    fn describe(&self) -> String {
        match self.estimator {
            EntropyEstimator::Shannon => {
                format!("entropy-{}-diversity on '{}'", self.l, self.column)
            }
            EntropyEstimator::Grassberger => format!(
                "entropy-{}-diversity (Grassberger) on '{}'",
                self.l, self.column
            ),
        }
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        diversity::entropy_l(values, self.l, self.estimator)
    }
}
