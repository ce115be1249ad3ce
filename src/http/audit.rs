//! The audit middleware: exactly one [`AuditEvent`] per request to a data route (see [`operation`]),
//! authenticated or not.
//!
//! The layer puts an empty [`AuditSlot`] in the request's extensions, which the [`super::auth::Caller`]
//! extractor fills with the principal it authenticated; it counts the request body bytes the handler
//! reads and the response body bytes sent. The event is recorded when the answer's body ends (its last
//! frame, or as many bytes as its `Content-Length`), or, when the client goes away first, as `aborted`
//! when the request or the body is dropped. Both paths go through one [`Pending`] that records at most
//! once.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{MatchedPath, State};
use axum::http::{header, HeaderMap, Method, Request};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use uuid::Uuid;

use super::request_body::BodyWatch;
use super::REQUEST_ID_HEADER;
use crate::audit::{now_rfc3339, AuditEvent, AuditSink, Outcome};
use crate::store::Principal;

/// Longest request id copied into an event; longer ones (or ones with other than visible ASCII) are
/// left out.
const MAX_REQUEST_ID_LEN: usize = 128;

/// The audited operation of a route, by method and route template; `None` for routes that touch no
/// tenant data (health, metrics, OpenAPI) and for methods a route does not serve. `HEAD` counts as
/// `GET`.
pub fn operation(method: &Method, route: &str) -> Option<&'static str> {
    let method = if method == Method::HEAD {
        "GET"
    } else {
        method.as_str()
    };
    let name = match (method, route) {
        ("POST", "/v1/datasets") => "dataset.upload",
        ("GET", "/v1/datasets") => "dataset.list",
        ("GET", "/v1/datasets/{id}") => "dataset.read",
        ("DELETE", "/v1/datasets/{id}") => "dataset.delete",
        ("POST", "/v1/datasets/{id}/assessments") => "assessment.create",
        ("POST", "/v1/datasets/{id}/proposal") => "proposal.create",
        ("POST", "/v1/hierarchies") => "hierarchy.create",
        ("GET", "/v1/hierarchies") => "hierarchy.list",
        ("GET", "/v1/hierarchies/{id}") => "hierarchy.read",
        ("DELETE", "/v1/hierarchies/{id}") => "hierarchy.delete",
        ("POST", "/v1/hierarchies/preview") => "hierarchy.preview",
        ("POST", "/v1/jobs") => "job.submit",
        ("GET", "/v1/jobs") => "job.list",
        ("GET", "/v1/jobs/{id}") => "job.read",
        ("DELETE", "/v1/jobs/{id}") => "job.delete",
        ("POST", "/v1/jobs/{id}/cancel") => "job.cancel",
        ("POST", "/v1/jobs/{id}/publish") => "job.publish",
        ("GET", "/v1/jobs/{id}/result") => "job.result",
        ("GET", "/v1/jobs/{id}/output") => "job.download",
        ("GET", "/v1/jobs/{id}/report.html") => "job.report_page",
        ("GET", "/v1/jobs/{id}/report.pdf") => "job.report_pdf",
        ("POST", "/v1/jobs/{id}/assessments") => "job.assessment",
        ("GET", "/v1/pseudonym-key") => "pseudonym_key.read",
        ("POST", "/v1/pseudonym-key/rotate") => "pseudonym_key.rotate",
        ("GET", "/v1/jobs/{id}/events") => "job.events",
        ("GET", "/v1/events") => "events.stream",
        ("GET", "/v1/jobs/{id}/deliveries") => "job.deliveries",
        ("GET", "/v1/webhook-secret") => "webhook_secret.read",
        ("POST", "/v1/webhook-secret/rotate") => "webhook_secret.rotate",
        _ => return None,
    };
    Some(name)
}

/// Where the [`super::auth::Caller`] extractor leaves the principal of an audited request.
#[derive(Debug, Clone, Default)]
pub struct AuditSlot(Arc<OnceLock<Principal>>);

impl AuditSlot {
    /// Records who the caller is; the first principal stays.
    pub fn fill(&self, principal: Principal) {
        let _ = self.0.set(principal);
    }

    fn principal(&self) -> Option<Principal> {
        self.0.get().copied()
    }
}

/// The middleware (install with `from_fn_with_state(sink, audit::layer)` outside the routes' own
/// layers, so it sees the final status).
pub async fn layer(State(sink): State<AuditSink>, request: Request<Body>, next: Next) -> Response {
    let Some(route) = request.extensions().get::<MatchedPath>().cloned() else {
        return next.run(request).await;
    };
    let Some(operation) = operation(request.method(), route.as_str()) else {
        return next.run(request).await;
    };
    let slot = AuditSlot::default();
    let head = request.method() == Method::HEAD;
    let (mut parts, body) = request.into_parts();
    let (body, request_body) = BodyWatch::wrap(body);
    let mut pending = Pending {
        sink,
        slot: slot.clone(),
        request_body,
        started: Instant::now(),
        expected_out: None,
        event: Some(AuditEvent {
            time: String::new(),
            source: "http",
            operation,
            outcome: Outcome::Aborted,
            status: None,
            tenant_id: None,
            key_id: None,
            method: Some(parts.method.as_str().to_string()),
            route: Some(route.as_str().to_string()),
            resource_id: path_id(route.as_str(), parts.uri.path()),
            bytes_in: 0,
            bytes_out: 0,
            request_id: None,
            duration_ms: None,
        }),
    };
    parts.extensions.insert(slot);
    // if the client goes away now, dropping `pending` records the request as aborted
    let response = next.run(Request::from_parts(parts, body)).await;
    pending.answered(&response);
    if head {
        // the answer to HEAD has no body: it is complete now
        pending.finish(None);
    }
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(AuditedBody::new(body, pending)))
}

/// The id in a request path at the template's `{id}` segment, when it is a UUID (anything else is not
/// copied: a path is client text).
fn path_id(route: &str, path: &str) -> Option<Uuid> {
    let index = route.split('/').position(|segment| segment == "{id}")?;
    path.split('/').nth(index)?.parse().ok()
}

/// The id a creating request's `Location` header names (`/v1/jobs/{id}`).
fn location_id(headers: &HeaderMap) -> Option<Uuid> {
    let location = headers.get(header::LOCATION)?.to_str().ok()?;
    location.rsplit('/').next()?.parse().ok()
}

/// The response's request id, when it is short visible ASCII.
fn request_id(headers: &HeaderMap) -> Option<String> {
    let id = headers.get(REQUEST_ID_HEADER)?.to_str().ok()?;
    (id.len() <= MAX_REQUEST_ID_LEN && id.bytes().all(|b| b.is_ascii_graphic()))
        .then(|| id.to_string())
}

/// The event of one request, recorded once: by [`Pending::finish`] or, failing that, when dropped.
struct Pending {
    sink: AuditSink,
    slot: AuditSlot,
    /// The request body as the handler reads it.
    request_body: Arc<BodyWatch>,
    started: Instant,
    /// The answer's `Content-Length`: a server stops polling a body once it has sent that much.
    expected_out: Option<u64>,
    /// `None` once recorded.
    event: Option<AuditEvent>,
}

impl Pending {
    /// Takes what the answer tells: status, request id and, for a create, the new resource's id.
    fn answered(&mut self, response: &Response) {
        if let Some(event) = &mut self.event {
            event.status = Some(response.status().as_u16());
            self.expected_out = response
                .headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok());
            event.request_id = request_id(response.headers());
            if event.resource_id.is_none() && response.status().is_success() {
                event.resource_id = location_id(response.headers());
            }
        }
    }

    /// Counts `n` response body bytes; whether that was all the `Content-Length` announced.
    fn sent(&mut self, n: usize) -> bool {
        match &mut self.event {
            Some(event) => {
                event.bytes_out += n as u64;
                self.expected_out == Some(event.bytes_out)
            }
            None => false,
        }
    }

    /// Records the event with `outcome` (the status's outcome when `None`), once.
    fn finish(&mut self, outcome: Option<Outcome>) {
        let Some(mut event) = self.event.take() else {
            return;
        };
        event.outcome = match (outcome, event.status) {
            (Some(outcome), _) => outcome,
            (None, Some(status)) => Outcome::of_status(status),
            (None, None) => Outcome::Aborted,
        };
        if let Some(principal) = self.slot.principal() {
            event.tenant_id = Some(principal.tenant_id);
            event.key_id = Some(principal.key_id);
        }
        event.bytes_in = self.request_body.bytes_read();
        event.duration_ms =
            Some(u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX));
        event.time = now_rfc3339();
        self.sink.record(&event);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.finish(Some(Outcome::Aborted));
    }
}

/// A response body that counts the bytes sent and records the event when it ends.
struct AuditedBody {
    inner: Body,
    pending: Pending,
}

impl AuditedBody {
    fn new(inner: Body, mut pending: Pending) -> Self {
        // a server does not poll an empty body: its answer is complete already
        if inner.is_end_stream() {
            pending.finish(None);
        }
        AuditedBody { inner, pending }
    }
}

impl HttpBody for AuditedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                let all_sent = frame
                    .data_ref()
                    .is_some_and(|data| self.pending.sent(data.len()));
                if all_sent || self.inner.is_end_stream() {
                    self.pending.finish(None);
                }
            }
            Poll::Ready(Some(Err(_))) => self.pending.finish(Some(Outcome::Failed)),
            Poll::Ready(None) => self.pending.finish(None),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_routes_have_operations_and_others_none() {
        assert_eq!(
            operation(&Method::POST, "/v1/datasets"),
            Some("dataset.upload")
        );
        assert_eq!(
            operation(&Method::HEAD, "/v1/jobs/{id}/output"),
            Some("job.download")
        );
        assert_eq!(operation(&Method::GET, "/healthz"), None);
        assert_eq!(operation(&Method::PUT, "/v1/datasets/{id}"), None);
    }

    #[test]
    fn ids_come_from_the_path_or_the_location() {
        let id = Uuid::new_v4();
        assert_eq!(
            path_id("/v1/jobs/{id}/output", &format!("/v1/jobs/{id}/output")),
            Some(id)
        );
        assert_eq!(path_id("/v1/datasets/{id}", "/v1/datasets/Alice"), None);
        assert_eq!(path_id("/v1/datasets", "/v1/datasets"), None);
        let mut headers = HeaderMap::new();
        headers.insert(
            header::LOCATION,
            format!("/v1/datasets/{id}").parse().unwrap(),
        );
        assert_eq!(location_id(&headers), Some(id));
        headers.insert(REQUEST_ID_HEADER, "a b".parse().unwrap());
        assert_eq!(request_id(&headers), None);
        headers.insert(REQUEST_ID_HEADER, "r-1".parse().unwrap());
        assert_eq!(request_id(&headers).as_deref(), Some("r-1"));
    }
}
