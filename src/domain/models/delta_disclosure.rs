//! δ-disclosure privacy (Brickell & Shmatikov 2008): for every value a class holds,
//! `|log₂(class frequency / table frequency)| < δ` (ARX's conventions: only the values the class holds,
//! δ in bits). The verifier recomputes the frequencies from value texts
//! ([`crate::domain::verify::likeness`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::core::privacy::{DeltaDisclosure, TableDistribution};
use crate::domain::column_values::distribution_by_text;
use crate::domain::spec::SpecError;
use crate::domain::verify::{likeness, ClassRequirement};
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "delta_disclosure", "attribute": …, "delta": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaDisclosureSpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The bound, in bits, > 0.
    pub delta: f64,
}

impl ModelSpec for DeltaDisclosureSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let delta = self.delta;
        if !(delta.is_finite() && delta > 0.0) {
            return Err(at.error(
                "delta",
                ErrorCode::InvalidDelta,
                "delta must be a positive number",
            ));
        }
        let column = protected.column;
        Ok(ResolvedModel::new(
            DeltaDisclosure {
                slot: protected.slot,
                attribute: column.name.clone(),
                delta,
                table: TableDistribution::new(column.value_counts()),
            },
            DeltaDisclosureCheck {
                column: column.name.clone(),
                delta,
                global: distribution_by_text(column),
            },
        ))
    }
}

/// For every value of `column` a class holds, `|log₂(class frequency / table frequency)| < delta`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaDisclosureCheck {
    /// Output column name.
    pub column: String,
    /// The bound in bits.
    pub delta: f64,
    /// Records per value over the whole input table.
    pub global: Arc<HashMap<String, u64>>,
}

impl ClassRequirement for DeltaDisclosureCheck {
    fn describe(&self) -> String {
        format!("{}-disclosure privacy on '{}'", self.delta, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        likeness::is_delta_disclosure_private(values, &self.global, self.delta)
    }
}
