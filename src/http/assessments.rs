//! `POST /v1/datasets/{id}/assessments`: the risk and privacy assessment of a stored dataset as it is
//! (`domain::assessment`), answered at once with 200. Nothing is stored or changed.
//!
//! The dataset is looked up for the caller's tenant (another tenant's id is the same 404 as an unknown
//! one), its table comes from the shared cache (parsed from the store on a miss), and the assessment
//! runs on a blocking thread.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};

use super::auth::Caller;
use super::request::{path_id, require_media_type, store_error};
use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::codec::CsvOptions;
use crate::core::data::Table;
use crate::domain::assessment::{assess, Assessment, AssessmentSpec};
use crate::domain::SpecError;
use crate::store::StoreError;
use crate::tables::LoadError;

/// The assessment route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/datasets/{id}/assessments",
        post(create).layer(timeout_layer(REQUEST_TIMEOUT)),
    )
}

async fn create(
    caller: Caller,
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Assessment>, ApiError> {
    let id = path_id(path, "dataset")?;
    let dataset = state
        .store
        .get_dataset(caller.tenant(), id)
        .await
        .map_err(store_error("dataset"))?;
    require_media_type(&headers, "application/json")?;
    let spec = AssessmentSpec::from_json(&body)?;
    if let Some(delimiter) = &spec.csv.delimiter {
        let requested = CsvOptions::with_delimiter(delimiter).map_err(|e| {
            ApiError::from(SpecError::new(
                "/csv/delimiter",
                "invalid_delimiter",
                e.to_string(),
            ))
        })?;
        let stored =
            CsvOptions::with_delimiter(&dataset.delimiter).map_err(|_| ApiError::internal())?;
        if requested.delimiter != stored.delimiter {
            return Err(SpecError::new(
                "/csv/delimiter",
                "invalid_delimiter",
                "csv.delimiter differs from the delimiter the dataset was uploaded with; leave it out",
            )
            .into());
        }
    }
    let table: Arc<Table> =
        state
            .tables
            .load(&state.store, &dataset)
            .await
            .map_err(|e| match e {
                LoadError::Store(StoreError::NotFound) => ApiError::not_found("dataset"),
                LoadError::Store(e) => ApiError::from(e),
                LoadError::Codec(_) | LoadError::Internal => {
                    tracing::error!(dataset = %id, "a stored dataset does not parse");
                    ApiError::internal()
                }
            })?;
    let assessment = tokio::task::spawn_blocking(move || assess(&table, &spec))
        .await
        .map_err(|_| ApiError::internal())??;
    Ok(Json(assessment))
}
