//! Readiness: `GET /readyz` answers 200 while the database answers, 503 `unavailable` otherwise, so load
//! balancers and orchestrators only send traffic to replicas that can serve it. The answer comes within
//! 1 s: [`Store::ping`] gives the database [`crate::store::PING_TIMEOUT`] on a connection of its own, so
//! neither a database that stopped answering nor a pool busy with other requests holds the probe up.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::error_code::ErrorCode;
use crate::store::Store;

/// The `/readyz` route.
pub fn router() -> Router<AppState> {
    Router::new().route("/readyz", get(readyz).layer(timeout_layer(REQUEST_TIMEOUT)))
}

async fn readyz(State(store): State<Store>) -> Response {
    match store.ping().await {
        Ok(()) => Json(serde_json::json!({"status": "ok"})).into_response(),
        Err(error) => {
            tracing::warn!(%error, "readiness check failed");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::Unavailable,
                "the database is not reachable",
            )
            .into_response()
        }
    }
}
