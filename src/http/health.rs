//! Process health and the API description: `GET /healthz` (the process answers) and `GET /openapi.yaml`
//! (the OpenAPI 3.1 document, embedded at build time).

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};

/// The OpenAPI document served at `/openapi.yaml`.
pub const OPENAPI_YAML: &str = include_str!("../../openapi.yaml");

/// Routes `/healthz` and `/openapi.yaml`; stateless, so they merge into a router of any state.
pub fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/healthz", get(healthz))
        .route("/openapi.yaml", get(openapi))
}

/// `200 {"status": "ok"}` while the process serves requests.
async fn healthz() -> impl IntoResponse {
    Json(serde_json::json!({"status": "ok"}))
}

/// The OpenAPI document as `application/yaml`.
async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/yaml")], OPENAPI_YAML)
}
