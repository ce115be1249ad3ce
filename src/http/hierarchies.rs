//! Routes of /v1/hierarchies.

use axum::Router;

use super::state::AppState;

/// The /v1/hierarchies routes.
pub fn router() -> Router<AppState> {
    Router::new()
}
