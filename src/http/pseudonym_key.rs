//! Routes of /v1/pseudonym-key: the caller's tenant's pseudonym key, by version and public fingerprint
//! (never the secret), and its rotation. The key is created by the tenant's first job with a `pseudonym`
//! operator; after a rotation, new jobs give every value another pseudonym, so their releases no longer
//! link with earlier ones (the report's `identifiers[].key_fingerprint` tells which key a release used).

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

use super::auth::Caller;
use super::state::AppState;
use super::time::rfc3339;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::error_code::ErrorCode;
use crate::store::PseudonymKeyInfo;

/// The /v1/pseudonym-key routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/pseudonym-key",
            get(read).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/pseudonym-key/rotate",
            post(rotate).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
}

/// A pseudonym key as the API shows it (the `PseudonymKey` schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PseudonymKeyView {
    /// 1 for the tenant's first key, one more per rotation.
    pub version: i64,
    /// The key's public fingerprint, as reports show it.
    pub fingerprint: String,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
}

impl From<PseudonymKeyInfo> for PseudonymKeyView {
    fn from(info: PseudonymKeyInfo) -> Self {
        Self {
            version: info.version,
            fingerprint: info.fingerprint,
            created_at: rfc3339(info.created_at),
        }
    }
}

/// The current key; 404 `not_found` before the tenant's first job with pseudonyms.
async fn read(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<PseudonymKeyView>, ApiError> {
    match state.store.pseudonym_key_info(caller.tenant()).await? {
        Some(info) => Ok(Json(info.into())),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            "this tenant has no pseudonym key yet: it is created by the first job with a pseudonym \
             operator (or by a rotation)",
        )),
    }
}

/// Retires the current key and creates the next one (201 with it).
async fn rotate(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<PseudonymKeyView>), ApiError> {
    let info = state.store.rotate_pseudonym_key(caller.tenant()).await?;
    tracing::info!(
        version = info.version,
        fingerprint = %info.fingerprint,
        "pseudonym key rotated"
    );
    Ok((StatusCode::CREATED, Json(info.into())))
}
