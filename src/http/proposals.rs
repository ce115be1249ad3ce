//! `POST /v1/datasets/{id}/proposal`: a complete job request for a stored dataset nobody has described
//! yet ([`crate::domain::proposal`]): the spec with the dataset's id (ready for `POST /v1/jobs`), a reason
//! per column, the assessment of the dataset as it is and the proposal's expected outcome. The trial run
//! behind the expected outcome is skipped when the dataset is larger than the trial limit or than this
//! service's per-job memory budget (then the outcome is the bound k gives). Nothing is stored.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Map, Value};

use super::auth::Caller;
use super::dataset_table::load_table;
use super::request::{path_id, store_error};
use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::domain::proposal::propose;
use crate::domain::run::RunError;
use crate::error_code::ErrorCode;

/// The proposal route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/datasets/{id}/proposal",
        post(create).layer(timeout_layer(REQUEST_TIMEOUT)),
    )
}

async fn create(
    caller: Caller,
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = path_id(path, "dataset")?;
    let dataset = state
        .store
        .get_dataset(caller.tenant(), id)
        .await
        .map_err(store_error("dataset"))?;
    let table = load_table(&state, &dataset, || ApiError::not_found("dataset")).await?;
    let budget = state.settings.job_memory_budget;
    let fits = budget == 0 || crate::domain::run::memory::job_memory_estimate(&table) <= budget;
    let proposal = tokio::task::spawn_blocking(move || propose(&table, None, fits))
        .await
        .map_err(|_| ApiError::internal())?
        .map_err(|e| match e {
            RunError::Spec(e) => ApiError::from(e),
            RunError::Core(e) => {
                let code = ErrorCode::of_core(&e);
                ApiError::unprocessable(code, format!("the proposal's trial run failed: {e}"))
            }
            RunError::Verification(_) => ApiError::internal(),
        })?;
    let mut value = serde_json::to_value(&proposal).map_err(|_| ApiError::internal())?;
    // the spec as a job request: the dataset's id first
    if let Some(Value::Object(spec)) = value.get_mut("spec") {
        let mut request = Map::new();
        request.insert("dataset_id".into(), Value::String(id.to_string()));
        request.extend(std::mem::take(spec));
        *spec = request;
    }
    Ok(Json(value))
}
