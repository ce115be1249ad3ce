//! Recursive (c,l)-diversity (Machanavajjhala et al. 2007; Hsu 2008, Def 3.3.3): in every class the most
//! frequent sensitive value's count is below `c` times the sum of the counts from the `l`-th most
//! frequent on; `c` is read as the exact decimal it is written as.

use std::collections::HashMap;

use serde::Deserialize;

use crate::core::privacy::{Decimal, RecursiveCLDiversity};
use crate::domain::spec::SpecError;
use crate::domain::verify::{diversity, ClassRequirement};

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "recursive_cl_diversity", "attribute": …, "c": …, "l": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecursiveClDiversitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The constant c, > 0, read as the decimal it is written as.
    pub c: f64,
    /// The diversity parameter, ≥ 1.
    pub l: u64,
}

impl ModelSpec for RecursiveClDiversitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let l = at.diversity_l(self.l)?;
        let c = at.positive_c(self.c)?;
        Ok(ResolvedModel::new(
            RecursiveCLDiversity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                c,
                l,
            },
            RecursiveClCheck {
                column: self.attribute.clone(),
                c,
                l,
            },
        ))
    }
}

/// Recursive (c,l)-diversity of the values of `column` (strict inequality).
#[derive(Debug, Clone, PartialEq)]
pub struct RecursiveClCheck {
    /// Output column name.
    pub column: String,
    /// The constant c.
    pub c: Decimal,
    /// The diversity parameter.
    pub l: u64,
}

impl ClassRequirement for RecursiveClCheck {
    fn describe(&self) -> String {
        format!(
            "recursive-({},{})-diversity on '{}'",
            self.c, self.l, self.column
        )
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        diversity::recursive_cl(values, self.c, self.l)
    }
}
