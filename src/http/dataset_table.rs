//! The stored dataset a job submission or an assessment reads: the request's `csv` settings checked
//! against the upload's (the same delimiter, no encoding but UTF-8), and the parsed table from the shared cache (read from the store on a miss).

use std::sync::Arc;

use super::state::AppState;
use super::ApiError;
use crate::codec::CsvOptions;
use crate::core::data::Table;
use crate::domain::spec::CsvSpec;
use crate::domain::SpecError;
use crate::error_code::ErrorCode;
use crate::store::{Dataset, StoreError};
use crate::tables::LoadError;

/// A request may repeat the delimiter the dataset was uploaded with, but not name another one, and may
/// name no encoding but UTF-8 (datasets are stored decoded).
pub fn check_csv_settings(csv: &CsvSpec, dataset: &Dataset) -> Result<(), ApiError> {
    // datasets are decoded at upload and stored as UTF-8: a job cannot decode them again
    if let Some(label) = &csv.encoding {
        let decodes = crate::codec::encoding::encoding_for(label)
            .map_err(|m| SpecError::new("/csv/encoding", ErrorCode::InvalidEncoding, m))?;
        if decodes.is_some() {
            return Err(SpecError::new(
                "/csv/encoding",
                ErrorCode::InvalidEncoding,
                "datasets are stored as UTF-8 (decoded at upload with ?encoding=); leave csv.encoding out",
            )
            .into());
        }
    }
    if let Some(label) = &csv.output_encoding {
        let encodes = crate::codec::encoding::encoding_for(label)
            .map_err(|m| SpecError::new("/csv/output_encoding", ErrorCode::InvalidEncoding, m))?;
        if encodes.is_some() {
            return Err(SpecError::new(
                "/csv/output_encoding",
                ErrorCode::InvalidEncoding,
                "the service publishes UTF-8; leave csv.output_encoding out",
            )
            .into());
        }
    }
    let Some(delimiter) = &csv.delimiter else {
        return Ok(());
    };
    let requested = CsvOptions::with_delimiter(delimiter).map_err(|e| {
        ApiError::from(SpecError::new(
            "/csv/delimiter",
            ErrorCode::InvalidDelimiter,
            e.to_string(),
        ))
    })?;
    let stored =
        CsvOptions::with_delimiter(&dataset.delimiter).map_err(|_| ApiError::internal())?;
    if requested.delimiter != stored.delimiter {
        return Err(SpecError::new(
            "/csv/delimiter",
            ErrorCode::InvalidDelimiter,
            "csv.delimiter differs from the delimiter the dataset was uploaded with; leave it out",
        )
        .into());
    }
    Ok(())
}

/// The dataset's parsed table; a dataset deleted meanwhile is `missing()`, a stored dataset that no
/// longer parses an internal error (logged by id, never by content).
pub async fn load_table(
    state: &AppState,
    dataset: &Dataset,
    missing: impl FnOnce() -> ApiError,
) -> Result<Arc<Table>, ApiError> {
    state
        .tables
        .load(&state.store, dataset)
        .await
        .map_err(|e| match e {
            LoadError::Store(StoreError::NotFound) => missing(),
            LoadError::Store(e) => ApiError::from(e),
            LoadError::Codec(_) | LoadError::Internal => {
                tracing::error!(dataset = %dataset.id, "a stored dataset does not parse");
                ApiError::internal()
            }
        })
}
