//! `GET /metrics`: the Prometheus text exposition of this process's registry plus the shared queue's
//! job counts by state. Unauthenticated like the health routes (it carries no data); operators keep it
//! off public networks.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::telemetry::prometheus::QueueSnapshot;

/// Content type of the Prometheus text format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The `/metrics` route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/metrics",
        get(metrics).layer(timeout_layer(REQUEST_TIMEOUT)),
    )
}

async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let counts = state.store.count_jobs_by_state().await?;
    let snapshot = QueueSnapshot {
        by_state: counts.into_iter().map(|(s, n)| (s.as_str(), n)).collect(),
        uploads_in_flight: state.uploads.in_flight(),
    };
    Ok((
        [(header::CONTENT_TYPE, PROMETHEUS_TEXT)],
        state.metrics.render(&snapshot),
    ))
}
