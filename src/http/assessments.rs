//! `POST /v1/datasets/{id}/assessments`: the risk and privacy assessment of a stored dataset as it is
//! (`domain::analysis::assessment`), answered at once with 200. Nothing is stored or changed.
//!
//! The dataset is looked up for the caller's tenant (another tenant's id is the same 404 as an unknown
//! one), its table comes from the shared cache (parsed from the store on a miss), and the assessment
//! runs on a blocking thread.

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::DefaultBodyLimit;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};

use super::auth::Caller;
use super::dataset_table::{check_csv_settings, load_table};
use super::request::{path_id, require_media_type, store_error};
use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::domain::analysis::assessment::{assess, Assessment, AssessmentSpec};

/// The assessment route; a request body may have at most `body_limit` bytes.
pub fn router(body_limit: usize) -> Router<AppState> {
    Router::new().route(
        "/v1/datasets/{id}/assessments",
        post(create)
            .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(body_limit))
            .layer(timeout_layer(REQUEST_TIMEOUT)),
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
    check_csv_settings(&spec.csv, &dataset)?;
    let table = load_table(&state, &dataset, || ApiError::not_found("dataset")).await?;
    let assessment = tokio::task::spawn_blocking(move || assess(&table, &spec))
        .await
        .map_err(|_| ApiError::internal())??;
    Ok(Json(assessment))
}
