//! `POST /v1/datasets/{id}/proposal`: a complete job request for a stored dataset nobody has described
//! yet ([`crate::domain::proposal`]): the spec with the dataset's id (ready for `POST /v1/jobs`), a reason
//! per column, the assessment of the dataset as it is and the proposal's expected outcome. The trial run
//! behind the expected outcome is skipped when the dataset is larger than the trial limit or than this
//! service's per-job memory budget, and stopped after [`TRIAL_BUDGET`] or when the request is dropped
//! (then the outcome is the bound k gives, with a note). One trial runs at a time per process; other
//! proposals wait for it. Nothing is stored.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

use super::auth::Caller;
use super::dataset_table::load_table;
use super::request::{path_id, store_error};
use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::core::control::{CancelFlag, Control, Progress};
use crate::domain::proposal::propose;
use crate::domain::run::RunError;
use crate::error_code::ErrorCode;

/// How long a proposal's trial run may take before the k bound stands in for it (the request's own
/// timeout is 30 s).
pub const TRIAL_BUDGET: Duration = Duration::from_secs(15);

/// Trial runs of one process at a time: each may use one job's memory and a core.
static TRIALS: Semaphore = Semaphore::const_new(1);

/// Cancels the trial when the request is dropped (timeout, client gone).
struct StopOnDrop(Arc<CancelFlag>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// A control that stops the trial at its deadline, or earlier when its flag is set.
struct Deadline {
    started: std::time::Instant,
    until: std::time::Instant,
    flag: Arc<CancelFlag>,
}

impl Deadline {
    fn new(budget: Duration, flag: Arc<CancelFlag>) -> Self {
        let started = std::time::Instant::now();
        Self {
            started,
            until: started + budget,
            flag,
        }
    }
}

impl Control for Deadline {
    fn is_cancelled(&self) -> bool {
        self.flag.is_cancelled() || std::time::Instant::now() >= self.until
    }
    fn report(&self, _progress: Progress) {}
    fn clock_ms(&self) -> Option<u64> {
        Some(self.started.elapsed().as_millis() as u64)
    }
}

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
    // one trial at a time per process, stopped at its deadline or when this request is dropped
    let _permit = if fits {
        Some(TRIALS.acquire().await.map_err(|_| ApiError::internal())?)
    } else {
        None
    };
    let flag = Arc::new(CancelFlag::default());
    let _stop_on_drop = StopOnDrop(Arc::clone(&flag));
    let proposal = tokio::task::spawn_blocking(move || {
        let control = Deadline::new(TRIAL_BUDGET, flag);
        propose(&table, None, fits.then_some(&control as &dyn Control))
    })
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
