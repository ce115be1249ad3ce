//! Sample uniqueness (ARX's sample-uniques threshold): the share of published records alone in their
//! class at most `threshold`. A model on the whole published table: full-domain searches check it after
//! the class-level suppression; local recodings refuse it. The verifier recomputes it from the published
//! classes ([`TableLimit`]); the report's `risk.after.sample_uniques` is the achieved figure.

use serde::Deserialize;

use crate::core::privacy::TableThreshold;
use crate::domain::spec::SpecError;
use crate::domain::verify::TableLimit;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "sample_uniqueness", "threshold": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleUniquenessSpec {
    /// The largest share of unique records, in [0, 1].
    pub threshold: f64,
}

impl ModelSpec for SampleUniquenessSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let u = at.share_threshold(self.threshold, "the share of sample uniques is between 0 and 1")?;
        Ok(ResolvedModel::new(
            TableThreshold::sample_uniqueness(u),
            TableLimit::UniqueShare(u),
        ))
    }
}
