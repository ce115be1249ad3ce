//! `Connection: close` on answers sent before the request's body was read to its end.
//!
//! A route may answer before it has read the whole body (413 for a body over the limit, 401 before an
//! upload, 422 for a CSV refused in its first lines). The rest of that body is still on the wire, so the
//! connection cannot carry another request: the server closes it (and lingers, see `linger.rs`). The
//! HTTP server only decides this after the answer's head has gone out, without saying so in it, and a
//! pooling client (reqwest, Python requests, curl with several URLs) then sends its next request on a
//! connection that is closing and gets "connection closed before message completed" instead of an
//! answer. This layer marks such answers `Connection: close` (RFC 9112 §9.6), so clients open a new
//! connection for their next request.

use axum::body::{Body, HttpBody};
use axum::http::{header, HeaderValue, Request};
use axum::middleware::Next;
use axum::response::Response;

use super::request_body::BodyWatch;

/// Middleware: runs the request with its body wrapped so that reaching the body's end is recorded, and
/// adds `Connection: close` to the answer when a body was sent and not read to its end.
pub async fn close_when_body_unread(request: Request<Body>, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let (body, watch) = BodyWatch::wrap(body);
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if !watch.ended() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use axum::routing::post;
    use axum::Router;
    use tower::ServiceExt;

    fn app() -> Router {
        Router::new()
            .route("/ignore", post(|| async { "ignored" }))
            .route(
                "/read",
                post(|body: Bytes| async move { body.len().to_string() }),
            )
            .layer(axum::middleware::from_fn(close_when_body_unread))
    }

    async fn connection_header(path: &str, body: &'static str) -> Option<String> {
        let request = Request::post(path).body(Body::from(body)).unwrap();
        let response = app().oneshot(request).await.unwrap();
        response
            .headers()
            .get(header::CONNECTION)
            .map(|v| v.to_str().unwrap().to_string())
    }

    #[tokio::test]
    async fn an_answer_that_left_the_body_unread_closes_the_connection() {
        assert_eq!(
            connection_header("/ignore", "abc").await.as_deref(),
            Some("close")
        );
    }

    #[tokio::test]
    async fn a_read_or_empty_body_keeps_the_connection() {
        assert_eq!(connection_header("/read", "abc").await, None);
        assert_eq!(connection_header("/ignore", "").await, None);
    }
}
