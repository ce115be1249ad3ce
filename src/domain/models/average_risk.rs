//! Average prosecutor risk (ARX's average re-identification risk threshold): the mean of 1 / |class|
//! over the published records, which is classes / records, at most `threshold`. A model on the whole
//! published table: full-domain searches check it after the class-level suppression; local recodings
//! refuse it. The verifier recomputes it from the published classes ([`TableLimit`]); the report's
//! `risk.after.prosecutor.average` is the achieved figure.

use serde::Deserialize;

use crate::core::privacy::TableThreshold;
use crate::domain::spec::SpecError;
use crate::domain::verify::TableLimit;
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "average_risk", "threshold": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AverageRiskSpec {
    /// The largest average risk, in (0, 1].
    pub threshold: f64,
}

impl ModelSpec for AverageRiskSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let r = self.threshold;
        if !(r > 0.0 && r <= 1.0) {
            return Err(at.error(
                "threshold",
                ErrorCode::InvalidThreshold,
                "the average risk is a share greater than 0 and at most 1",
            ));
        }
        Ok(ResolvedModel::new(
            TableThreshold::average_risk(r),
            TableLimit::AverageRisk(r),
        ))
    }
}
