//! The HTTP API: one module per resource, one error type rendered as problem+json, and the middleware
//! every route shares (request ids, tracing, panic catching, problem bodies for bare error responses).
//!
//! Layering, outermost first: set `x-request-id` (a UUID unless the client sent one) → trace span
//! (method, path, request id; never query strings or bodies) → copy `x-request-id` to the response →
//! catch panics (500 `internal_error`) → turn bodiless error responses (unknown route, wrong method,
//! timeout, body limit) into problem+json → record the request's metrics by route template. Outside
//! all of them, an answer that left the request's body unread says `Connection: close`
//! ([`unread_body`]). Timeouts are applied per route with [`timeout_layer`] by each resource module, so that streaming routes
//! (uploads, downloads) can go without.
//!
//! Every request to a data route produces exactly one audit event ([`audit`]), recorded by the
//! outermost layer so that it sees the final status.
//!
//! Data routes take an [`auth::Caller`] (bearer API key → tenant); every store call they make is scoped
//! to that tenant, so another tenant's id answers 404 exactly like an unknown one.

pub mod assessments;
pub mod audit;
pub mod auth;
pub mod conditional;
pub mod dataset_table;
pub mod datasets;
pub mod error;
pub mod event_feed;
pub mod events;
pub mod health;
pub mod hierarchies;
pub mod hierarchy_preview;
pub mod idempotency;
pub mod job_assessments;
pub mod job_meta;
pub mod jobs;
pub mod key_use;
pub mod linger;
pub mod metrics;
pub mod proposals;
pub mod pseudonym_key;
pub mod publish;
pub mod ready;
pub mod report_page;
pub mod request;
pub mod request_body;
pub mod server;
pub mod state;
pub mod time;
pub mod unread_body;
pub mod upload_gate;
pub mod webhooks;

use std::any::Any;
use std::time::Duration;

use crate::error_code::ErrorCode;
use axum::body::{Body, HttpBody};
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};

pub use error::{ApiError, Problem};
pub use state::{ApiSettings, AppState};

/// Timeout of non-streaming routes.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The header carrying the request id.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The service's router as it stands: health and OpenAPI routes, with the shared middleware and the
/// request timeout.
pub fn router() -> Router {
    with_middleware(health::router().layer(timeout_layer(REQUEST_TIMEOUT)))
}

/// The whole service: every route backed by `state`, with the shared middleware and metrics.
pub fn app(state: AppState) -> Router {
    let body_limit = state.settings.job_body_limit;
    let routes = health::router()
        .layer(timeout_layer(REQUEST_TIMEOUT))
        .merge(ready::router())
        .merge(metrics::router())
        .merge(datasets::router())
        .merge(assessments::router(body_limit))
        .merge(proposals::router())
        .merge(hierarchies::router())
        .merge(hierarchy_preview::router())
        .merge(jobs::router(body_limit))
        .merge(job_assessments::router())
        .merge(report_page::router())
        .merge(pseudonym_key::router())
        .merge(events::router())
        .merge(webhooks::router());
    with_middleware(routes)
        .layer(axum::middleware::from_fn_with_state(
            state.metrics.clone(),
            record_request_metrics,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.audit.clone(),
            audit::layer,
        ))
        .with_state(state)
}

/// The operations routes only (`/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`), for processes that
/// run workers without the API (`--role worker`).
pub fn operations_app(state: AppState) -> Router {
    let routes = health::router()
        .layer(timeout_layer(REQUEST_TIMEOUT))
        .merge(ready::router())
        .merge(metrics::router());
    with_middleware(routes)
        .layer(axum::middleware::from_fn_with_state(
            state.metrics.clone(),
            record_request_metrics,
        ))
        .with_state(state)
}

/// Observes the request's latency under its route template (`unmatched` for unknown routes).
async fn record_request_metrics(
    axum::extract::State(metrics): axum::extract::State<
        std::sync::Arc<crate::telemetry::prometheus::ServiceMetrics>,
    >,
    request: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(request).await;
    metrics.observe_request(
        method.as_str(),
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// A timeout answering 503 `timeout` (as problem+json, through [`with_middleware`]).
pub fn timeout_layer(timeout: Duration) -> TimeoutLayer {
    TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, timeout)
}

/// Wraps `router` (all of its routes and its fallback) in the shared middleware.
pub fn with_middleware<S>(router: Router<S>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    router
        .layer(map_response(problem_for_bare_errors))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(axum::middleware::from_fn(problem_instance))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(axum::middleware::from_fn(
            unread_body::close_when_body_unread,
        ))
}

/// Names the request in the problem it is answered with (`instance`, from `x-request-id`).
async fn problem_instance(request: Request<Body>, next: axum::middleware::Next) -> Response {
    let request_id = request
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let response = next.run(request).await;
    match request_id {
        Some(id) => error::with_instance(response, &id).await,
        None => response,
    }
}

/// The span of one request: method, path and request id only.
fn request_span(request: &Request<Body>) -> tracing::Span {
    let request_id = request
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        request_id,
    )
}

/// 500 `internal_error` for a panicking handler. The payload is not logged nor returned: it may quote
/// data.
fn panic_response(_payload: Box<dyn Any + Send + 'static>) -> Response {
    tracing::error!("request handler panicked");
    ApiError::internal().into_response()
}

/// Gives error responses produced without a body (by the router or a tower layer) a problem+json body
/// with the status's generic code, keeping their other headers (`Allow`, ...).
async fn problem_for_bare_errors(response: Response) -> Response {
    let status = response.status();
    let bare = !response.headers().contains_key(header::CONTENT_TYPE)
        && response.body().size_hint().exact() == Some(0);
    // tower-http's and axum's body limits answer 413 in text/plain.
    let plain_too_large = status == StatusCode::PAYLOAD_TOO_LARGE
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/plain"));
    if !(status.is_client_error() || status.is_server_error()) || !(bare || plain_too_large) {
        return response;
    }
    let error = match status {
        StatusCode::NOT_FOUND => ApiError::new(status, ErrorCode::NotFound, "no such route"),
        StatusCode::METHOD_NOT_ALLOWED => ApiError::new(
            status,
            ErrorCode::MethodNotAllowed,
            "the route does not accept this method",
        ),
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT => ApiError::new(
            status,
            ErrorCode::Timeout,
            "the request did not complete in time",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            status,
            ErrorCode::PayloadTooLarge,
            "the request body exceeds the limit",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            status,
            ErrorCode::UnsupportedMediaType,
            "the request body has an unsupported content type",
        ),
        StatusCode::UNAUTHORIZED => ApiError::unauthorized("an API key is required"),
        s if s.is_server_error() => ApiError::internal(),
        _ => ApiError::new(status, ErrorCode::BadRequest, "the request is invalid"),
    };
    let (mut parts, _) = response.into_parts();
    let (problem_parts, body) = error.into_response().into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    for (name, value) in &problem_parts.headers {
        parts.headers.insert(name.clone(), value.clone());
    }
    if !parts.headers.contains_key(header::CONTENT_TYPE) {
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(error::PROBLEM_JSON),
        );
    }
    Response::from_parts(parts, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tower::ServiceExt;

    async fn send(app: Router, request: Request<Body>) -> (Response, axum::body::Bytes) {
        let response = app.oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (Response::from_parts(parts, Body::empty()), bytes)
    }

    fn get_request(uri: &str) -> Request<Body> {
        Request::builder().uri(uri).body(Body::empty()).unwrap()
    }

    fn json(bytes: &[u8]) -> serde_json::Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[tokio::test]
    async fn healthz_is_ok_with_a_generated_request_id() {
        let (response, body) = send(router(), get_request("/healthz")).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(json(&body), serde_json::json!({"status": "ok"}));
        let id = response.headers()[REQUEST_ID_HEADER].to_str().unwrap();
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    }

    #[tokio::test]
    async fn a_client_request_id_is_propagated() {
        let request = Request::builder()
            .uri("/healthz")
            .header(REQUEST_ID_HEADER, "client-abc-123")
            .body(Body::empty())
            .unwrap();
        let (response, _) = send(router(), request).await;
        assert_eq!(response.headers()[REQUEST_ID_HEADER], "client-abc-123");
    }

    #[tokio::test]
    async fn openapi_is_served_as_yaml() {
        let (response, body) = send(router(), get_request("/openapi.yaml")).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/yaml");
        assert_eq!(body, health::OPENAPI_YAML.as_bytes());
        assert!(health::OPENAPI_YAML.starts_with("openapi: 3.1"));
    }

    #[tokio::test]
    async fn unknown_routes_and_methods_are_problems() {
        let (response, body) = send(router(), get_request("/v1/nope")).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            error::PROBLEM_JSON
        );
        assert!(response.headers().contains_key(REQUEST_ID_HEADER));
        assert_eq!(json(&body)["code"], "not_found");

        let request = Request::builder()
            .method("DELETE")
            .uri("/healthz")
            .body(Body::empty())
            .unwrap();
        let (response, body) = send(router(), request).await;
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            error::PROBLEM_JSON
        );
        assert!(response.headers().contains_key(header::ALLOW));
        assert_eq!(json(&body)["code"], "method_not_allowed");
        assert_eq!(json(&body)["status"], 405);
    }

    #[tokio::test]
    async fn panics_become_internal_errors_with_a_request_id() {
        async fn boom() -> &'static str {
            panic!("secret cell value")
        }
        let app = with_middleware(Router::new().route("/boom", get(boom)));
        let (response, body) = send(app, get_request("/boom")).await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            error::PROBLEM_JSON
        );
        assert!(response.headers().contains_key(REQUEST_ID_HEADER));
        let body = json(&body);
        assert_eq!(body["code"], "internal_error");
        assert!(!body.to_string().contains("secret"));
    }

    #[tokio::test]
    async fn slow_handlers_time_out_as_problems() {
        async fn slow() -> &'static str {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "late"
        }
        let app = with_middleware(
            Router::new()
                .route("/slow", get(slow))
                .layer(timeout_layer(Duration::from_millis(20))),
        );
        let (response, body) = send(app, get_request("/slow")).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            error::PROBLEM_JSON
        );
        assert_eq!(json(&body)["code"], "timeout");
    }

    #[tokio::test]
    async fn body_limits_answer_problems() {
        async fn echo(body: axum::body::Bytes) -> String {
            body.len().to_string()
        }
        let app = with_middleware(
            Router::new()
                .route("/upload", axum::routing::post(echo))
                .layer(tower_http::limit::RequestBodyLimitLayer::new(8)),
        );
        let request = Request::builder()
            .method("POST")
            .uri("/upload")
            .header(header::CONTENT_LENGTH, "20")
            .body(Body::from("x".repeat(20)))
            .unwrap();
        let (response, body) = send(app.clone(), request).await;
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            error::PROBLEM_JSON
        );
        assert_eq!(json(&body)["code"], "payload_too_large");

        // without a Content-Length the limit hits while the body is read (axum's Bytes rejection)
        let request = Request::builder()
            .method("POST")
            .uri("/upload")
            .body(Body::from("x".repeat(20)))
            .unwrap();
        let (response, body) = send(app, request).await;
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            error::PROBLEM_JSON
        );
        assert_eq!(json(&body)["code"], "payload_too_large");
    }

    #[tokio::test]
    async fn handler_errors_pass_through_untouched() {
        async fn missing() -> Result<&'static str, ApiError> {
            Err(ApiError::not_found("dataset"))
        }
        let app = with_middleware(Router::new().route("/d", get(missing)));
        let (response, body) = send(app, get_request("/d")).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(json(&body)["detail"], "no such dataset");
    }
}
