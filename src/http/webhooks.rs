//! Webhook routes: `GET /v1/webhook-secret` shows the caller's tenant's signing secret (created on first
//! use; receivers verify deliveries with it), `POST /v1/webhook-secret/rotate` replaces it (the previous
//! one keeps signing beside it for the overlap, so receivers can switch without losing deliveries), and
//! `GET /v1/jobs/{id}/deliveries` lists a job's webhook deliveries with every attempt.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::auth::Caller;
use super::request::{path_id, store_error};
use super::state::AppState;
use super::time::rfc3339;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::store::Delivery;
use crate::webhooks::signature::secret_text;

/// The webhook routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/webhook-secret",
            get(read_secret).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/webhook-secret/rotate",
            post(rotate_secret).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/jobs/{id}/deliveries",
            get(list_deliveries).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
}

/// The current secret (`whsec_…`), its version, and how many secrets sign now.
async fn read_secret(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(secret_document(&state, caller).await?))
}

/// Retires the current secret and creates the next (201 with it).
async fn rotate_secret(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let version = state.store.rotate_webhook_secret(caller.tenant()).await?;
    tracing::info!(version, "webhook secret rotated");
    Ok((
        StatusCode::CREATED,
        Json(secret_document(&state, caller).await?),
    ))
}

async fn secret_document(state: &AppState, caller: Caller) -> Result<Value, ApiError> {
    let overlap =
        i64::try_from(state.settings.webhook_secret_overlap.as_millis()).unwrap_or(i64::MAX);
    let (version, secrets) = state
        .store
        .webhook_secrets(caller.tenant(), overlap)
        .await?;
    let current = secrets.first().ok_or_else(ApiError::internal)?;
    Ok(json!({
        "version": version,
        "secret": secret_text(current),
        "signing_secrets": secrets.len(),
    }))
}

/// The job's deliveries, oldest first.
async fn list_deliveries(
    caller: Caller,
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = path_id(path, "job")?;
    let deliveries = state
        .store
        .job_deliveries(caller.tenant(), id)
        .await
        .map_err(store_error("job"))?;
    Ok(Json(json!({
        "items": deliveries.iter().map(delivery_document).collect::<Vec<_>>(),
    })))
}

fn delivery_document(delivery: &Delivery) -> Value {
    json!({
        "id": delivery.event_id.to_string(),
        "type": format!("job.{}", delivery.state),
        "url": delivery.url,
        "status": delivery.status,
        "created_at": rfc3339(delivery.created_at),
        "next_attempt_at": delivery.next_attempt_at.map(rfc3339),
        "finished_at": delivery.finished_at.map(rfc3339),
        "attempts": delivery.attempts.iter().map(|a| json!({
            "started_at": rfc3339(a.started_at),
            "duration_ms": a.duration_ms,
            "status_code": a.status_code,
            "error": a.error,
        })).collect::<Vec<_>>(),
    })
}
