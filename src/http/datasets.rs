//! Routes of /v1/datasets.

use axum::Router;

use super::state::AppState;

/// The /v1/datasets routes.
pub fn router() -> Router<AppState> {
    Router::new()
}
