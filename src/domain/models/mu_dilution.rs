//! μ-dilution (Hsu 2008, Def 3.5.6) alone: the don't-care values hold at least the fraction `mu` of each
//! class. Next to a `d_density` without `mu`, both bounds apply to the don't-care set.

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;

use crate::core::privacy::{Decimal, MuDilution};
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, ClassRequirement};
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "mu_dilution", "attribute": …, "mu": …, "dont_care": […]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MuDilutionSpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The dilution bound, in [0, 1].
    pub mu: f64,
    /// Values no one minds disclosing (Y).
    pub dont_care: Vec<String>,
}

impl ModelSpec for MuDilutionSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let mu = at.fraction("mu", ErrorCode::InvalidMu, self.mu)?;
        let dont_care: BTreeSet<String> = self.dont_care.iter().cloned().collect();
        let flags = protected
            .column
            .dictionary
            .values()
            .map(|v| dont_care.contains(v))
            .collect();
        Ok(ResolvedModel::new(
            MuDilution {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                mu,
                dont_care: flags,
            },
            MuDilutionCheck {
                column: self.attribute.clone(),
                mu,
                dont_care,
            },
        ))
    }
}

/// Y holds at least `mu` of each class.
#[derive(Debug, Clone, PartialEq)]
pub struct MuDilutionCheck {
    /// Output column name.
    pub column: String,
    /// The dilution bound.
    pub mu: Decimal,
    /// The don't-care values.
    pub dont_care: BTreeSet<String>,
}

impl ClassRequirement for MuDilutionCheck {
    fn describe(&self) -> String {
        format!("{}-dilution on '{}'", self.mu, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::mu_dilution(values, self.mu, &self.dont_care)
    }
}
