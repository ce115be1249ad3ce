//! Server-sent events: `GET /v1/jobs/{id}/events` streams one job's events (from its creation, or after
//! `Last-Event-ID`) and ends after its terminal state; `GET /v1/events` streams every job event of the
//! caller's tenant (from now, or after `Last-Event-ID`) until the client leaves. Each event carries its
//! id (resume with `Last-Event-ID` and nothing committed is missed), a type (`state`,
//! `cancel_requested`, `progress`) and a JSON document; a comment line is sent as a heartbeat while
//! nothing happens, so that proxies keep the connection open. A job stream resumed after its last event
//! answers 204, which tells EventSource clients to stop reconnecting. A tenant stream starts with an
//! id-only block naming where it starts, so that a client that reconnects before the first event resumes
//! from there. Streams end after [`MAX_STREAM_AGE`] (clients reconnect and are authenticated again), when
//! their job is deleted, and when the server stops; each process admits a bounded number of streams, per
//! tenant and in all (429 `too_many_streams`, 503 `server_busy`).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::watch;
use uuid::Uuid;

use super::auth::Caller;
use super::request::{path_id, store_error};
use super::state::AppState;
use super::time::rfc3339;
use super::upload_gate::UploadPermit;
use super::ApiError;
use crate::error_code::ErrorCode;
use crate::store::{EventKind, JobEvent, Store, StoreError};

/// Events read from the store at once.
const BATCH: u32 = 200;

/// The longest a stream waits for the feed before it reads the store anyway (and checks that its job
/// still exists).
const RECHECK: Duration = Duration::from_secs(2);

/// How long one stream lasts before the server ends it; the client reconnects with `Last-Event-ID`, so
/// a revoked key stops receiving events within this time.
pub const MAX_STREAM_AGE: Duration = Duration::from_secs(600);

/// The event stream routes (streamed: no request timeout).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/jobs/{id}/events", get(job_events))
        .route("/v1/events", get(tenant_events))
}

/// One job's events.
async fn job_events(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let id = path_id(path, "job")?;
    let tenant = caller.tenant();
    let after = last_event_id(&headers)?.unwrap_or(0);
    let job = state
        .store
        .get_job_status(tenant, id)
        .await
        .map_err(store_error("job"))?;
    if job.state.is_terminal()
        && state
            .store
            .job_events(tenant, Some(id), after, 1)
            .await?
            .is_empty()
    {
        // everything was seen: EventSource stops reconnecting on 204
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    stream(&state, tenant, Some(id), after)
}

/// Every event of the caller's tenant.
async fn tenant_events(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let after = match last_event_id(&headers)? {
        Some(after) => after,
        None => state.store.latest_event_id().await?,
    };
    stream(&state, caller.tenant(), None, after)
}

/// The `Last-Event-ID` header: a non-negative integer, or absent.
fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .map(str::trim)
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|id| *id >= 0)
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(
                ErrorCode::InvalidLastEventId,
                "Last-Event-ID is not an event id of this service (a non-negative integer)",
            )
        })
}

/// Where a stream stands.
struct Cursor {
    store: Store,
    tenant: Uuid,
    job: Option<Uuid>,
    after: i64,
    pending: VecDeque<JobEvent>,
    feed: watch::Receiver<i64>,
    /// The latest id of the service when the store was last read.
    feed_seen: i64,
    shutdown: Option<watch::Receiver<bool>>,
    finished: bool,
    /// A tenant stream first tells the client where it starts.
    announce_start: bool,
    opened: Instant,
    /// The stream's place in the process's admission; given back when the stream ends.
    _permit: UploadPermit,
}

fn stream(
    state: &AppState,
    tenant: Uuid,
    job: Option<Uuid>,
    after: i64,
) -> Result<Response, ApiError> {
    let permit = state.streams.admit(tenant)?;
    let cursor = Cursor {
        store: state.store.clone(),
        tenant,
        job,
        after,
        pending: VecDeque::new(),
        feed: state.events.subscribe(&state.store),
        feed_seen: 0,
        shutdown: state.shutdown.clone(),
        finished: false,
        announce_start: job.is_none(),
        opened: Instant::now(),
        _permit: permit,
    };
    let events = futures_util::stream::unfold(cursor, next_event);
    let mut response = Sse::new(events)
        .keep_alive(
            KeepAlive::new()
                .interval(state.settings.sse_heartbeat)
                .text("heartbeat"),
        )
        .into_response();
    // proxies must not buffer the stream
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// The next event of the stream; None ends it (the job's terminal state was sent, the job is gone, the
/// stream is old enough, the server stops, or the store failed).
async fn next_event(mut cursor: Cursor) -> Option<(Result<Event, Infallible>, Cursor)> {
    if cursor.announce_start {
        cursor.announce_start = false;
        let start = Event::default().id(cursor.after.to_string());
        return Some((Ok(start), cursor));
    }
    loop {
        if cursor.finished || cursor.opened.elapsed() >= MAX_STREAM_AGE {
            return None;
        }
        if let Some(event) = cursor.pending.pop_front() {
            cursor.after = event.id;
            // a job stream ends with the job
            cursor.finished =
                cursor.job.is_some() && event.kind == EventKind::State && event.state.is_terminal();
            return Some((Ok(sse_event(&event)), cursor));
        }
        // what the feed says from here on is news to this read
        cursor.feed_seen = *cursor.feed.borrow_and_update();
        match cursor
            .store
            .job_events(cursor.tenant, cursor.job, cursor.after, BATCH)
            .await
        {
            Ok(events) if !events.is_empty() => {
                cursor.pending.extend(events);
                continue;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(%error, "reading job events failed; ending the stream");
                return None;
            }
        }
        match wait(&mut cursor).await {
            Wake::Feed => {}
            Wake::Stop => return None,
            Wake::Recheck => {
                // a deleted job takes its events with it: its stream would wait forever
                if let Some(job) = cursor.job {
                    if let Err(StoreError::NotFound) =
                        cursor.store.get_job_status(cursor.tenant, job).await
                    {
                        return None;
                    }
                }
            }
        }
    }
}

/// Why a stream's wait ended.
enum Wake {
    /// The feed reports an event newer than the last read.
    Feed,
    /// [`RECHECK`] passed.
    Recheck,
    /// The server stops.
    Stop,
}

/// Waits until the feed reports an event newer than the last read of the store, for at most
/// [`RECHECK`], or until the server stops.
async fn wait(cursor: &mut Cursor) -> Wake {
    let shutdown = async {
        match cursor.shutdown.as_mut() {
            Some(receiver) => {
                let _ = receiver.wait_for(|stop| *stop).await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    let seen = cursor.feed_seen;
    tokio::select! {
        () = shutdown => Wake::Stop,
        _ = cursor.feed.wait_for(|latest| *latest > seen) => Wake::Feed,
        () = tokio::time::sleep(RECHECK) => Wake::Recheck,
    }
}

/// An event as the stream sends it.
fn sse_event(event: &JobEvent) -> Event {
    Event::default()
        .id(event.id.to_string())
        .event(event.kind.as_str())
        .data(event_document(event).to_string())
}

/// The JSON document of an event.
pub fn event_document(event: &JobEvent) -> Value {
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .unwrap_or(Value::Null)
    };
    let failure = match &event.failure_code {
        Some(code) => json!({
            "code": code,
            "message": event.failure_message.clone().unwrap_or_default(),
        }),
        None => Value::Null,
    };
    json!({
        "id": event.id,
        "type": event.kind.as_str(),
        "job_id": event.job_id,
        "state": event.state.as_str(),
        "done": event.state.is_terminal(),
        "attempt": event.attempt,
        "cancel_requested": event.cancel_requested,
        "progress": parse(&event.progress_json),
        "failure": failure,
        "at": rfc3339(event.created_at),
    })
}
