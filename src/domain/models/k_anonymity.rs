//! k-anonymity (Sweeney 2002): every published class holds at least `k` records. The verifier checks
//! class sizes ([`MinClassSize`]).

use serde::Deserialize;

use crate::core::privacy::KAnonymity;
use crate::domain::spec::SpecError;
use crate::domain::verify::MinClassSize;
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "k_anonymity", "k": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KAnonymitySpec {
    /// Minimum class size, ≥ 1 and at most the table's records.
    pub k: u64,
}

impl ModelSpec for KAnonymitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let k = self.k;
        let rows = at.table.row_count() as u64;
        if k < 1 {
            return Err(at.error("k", ErrorCode::InvalidK, "k must be at least 1"));
        }
        if k > rows {
            return Err(at.error(
                "k",
                ErrorCode::KExceedsRows,
                format!("k = {k} is larger than the table ({rows} records)"),
            ));
        }
        Ok(ResolvedModel::new(KAnonymity { k }, MinClassSize(k)))
    }
}
