//! Highest prosecutor risk (ARX's risk-threshold model): no record's re-identification risk, 1 / |its
//! class|, above `threshold`; the same as k-anonymity with k = ⌈1 / threshold⌉, and checked by the
//! verifier as class sizes ([`MinClassSize`]). The report's `risk.after.prosecutor.highest` is the
//! achieved figure.

use serde::Deserialize;

use crate::core::privacy::HighestRisk;
use crate::domain::spec::SpecError;
use crate::domain::verify::MinClassSize;
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "highest_risk", "threshold": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HighestRiskSpec {
    /// The largest prosecutor risk a published record may have, in (0, 1].
    pub threshold: f64,
}

impl HighestRiskSpec {
    /// The class size the threshold takes, when the threshold is valid.
    pub fn k(&self) -> Option<u64> {
        HighestRisk::new(self.threshold).map(|m| m.k)
    }
}

impl ModelSpec for HighestRiskSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let rows = at.table.row_count() as u64;
        // a threshold below 1 / records needs classes larger than the table
        if self.threshold > 0.0 && self.threshold * (rows as f64) < 1.0 {
            return Err(at.error(
                "threshold",
                ErrorCode::KExceedsRows,
                format!(
                    "a highest risk of {} needs classes larger than the table's {rows} records",
                    self.threshold
                ),
            ));
        }
        let Some(model) = HighestRisk::new(self.threshold) else {
            return Err(at.error(
                "threshold",
                ErrorCode::InvalidThreshold,
                "the highest risk is a share greater than 0 and at most 1",
            ));
        };
        if model.k > rows {
            return Err(at.error(
                "threshold",
                ErrorCode::KExceedsRows,
                format!(
                    "a highest risk of {} needs classes of {} records, more than the table's {rows}",
                    self.threshold, model.k
                ),
            ));
        }
        let k = model.k;
        Ok(ResolvedModel::new(model, MinClassSize(k)))
    }
}
