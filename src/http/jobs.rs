//! Routes of /v1/jobs.

use axum::Router;

use super::state::AppState;

/// The /v1/jobs routes.
pub fn router() -> Router<AppState> {
    Router::new()
}
