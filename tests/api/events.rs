//! Server-sent events: a job's stream shows queued → running → progress → succeeded in order and ends,
//! a client that disconnects resumes with `Last-Event-ID` without missing a state change, a stream
//! resumed after the job's last event is 204, the tenant's stream shows the same events, another
//! tenant sees nothing of them (only heartbeats), and a malformed `Last-Event-ID` is 400.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::harness::{expect_problem, run_with, Service};
use crate::jobs::{submit_ok, toy_dataset, toy_spec, worker};
use anonymizer::http::ApiSettings;
use anonymizer::store::Backend;

crate::api_cases!(the_log_records_each_kind_of_change_and_prunes_only_progress);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    run_with(
        Backend::Sqlite,
        settings(),
        streams_show_every_state_and_resume,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    run_with(
        Backend::Postgres,
        settings(),
        streams_show_every_state_and_resume,
    )
    .await;
}

/// Heartbeats every 100 ms, so that a short test sees them.
fn settings() -> ApiSettings {
    ApiSettings {
        sse_heartbeat: Duration::from_millis(100),
        ..ApiSettings::default()
    }
}

/// One block of an event stream: an event (id, type, data) or a comment.
#[derive(Debug, Clone, PartialEq)]
enum Block {
    Event {
        id: i64,
        kind: String,
        data: Value,
    },
    /// An id without data: where a tenant stream starts.
    Start(i64),
    Comment(String),
}

/// Reads an event stream block by block.
struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    async fn open(
        service: &Service,
        path: &str,
        key: &str,
        last_event_id: Option<i64>,
    ) -> SseReader {
        let mut request = service
            .client
            .get(service.url(path))
            .bearer_auth(key)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = request.send().await.expect("GET events");
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        SseReader {
            response,
            buffer: String::new(),
        }
    }

    /// The next block; None when the stream ended or nothing came within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Block> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let raw: String = self.buffer.drain(..end + 2).collect();
                return Some(parse_block(&raw));
            }
            match tokio::time::timeout(wait, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                _ => return None,
            }
        }
    }

    /// The events (not comments) until the stream ends or is quiet for `wait`.
    async fn events(&mut self, wait: Duration) -> Vec<(i64, String, Value)> {
        let mut events = Vec::new();
        while let Some(block) = self.next(wait).await {
            if let Block::Event { id, kind, data } = block {
                events.push((id, kind, data));
            }
        }
        events
    }

    /// Whether the server ended the stream (rather than it falling quiet).
    async fn ended(&mut self) -> bool {
        matches!(
            tokio::time::timeout(Duration::from_secs(5), self.response.chunk()).await,
            Ok(Ok(None))
        )
    }
}

fn parse_block(raw: &str) -> Block {
    let (mut id, mut kind, mut data) = (None, None, String::new());
    for line in raw.lines() {
        if let Some(comment) = line.strip_prefix(':') {
            return Block::Comment(comment.trim().to_string());
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => id = Some(value.parse().expect("numeric id")),
            "event" => kind = Some(value.to_string()),
            "data" => data.push_str(value),
            _ => {}
        }
    }
    let id = id.expect("an event id");
    if kind.is_none() && data.is_empty() {
        return Block::Start(id);
    }
    Block::Event {
        id,
        kind: kind.expect("an event type"),
        data: serde_json::from_str(&data).expect("JSON data"),
    }
}

async fn streams_show_every_state_and_resume(service: Service) {
    // the tenants' streams start before the job exists
    let mut alpha_all = SseReader::open(&service, "/v1/events", &service.key, None).await;
    let mut beta_all = SseReader::open(&service, "/v1/events", &service.other_key, None).await;

    let dataset = toy_dataset(&service).await;
    let job = submit_ok(&service, &toy_spec(&dataset, 2)).await;
    let id = job["id"].as_str().unwrap().to_string();
    let path = format!("/v1/jobs/{id}/events");

    // the first client sees the job queued, then goes away
    let mut first = SseReader::open(&service, &path, &service.key, None).await;
    let Some(Block::Event {
        id: queued_id,
        kind,
        data,
    }) = first.next(Duration::from_secs(5)).await
    else {
        panic!("no first event");
    };
    assert_eq!(
        (kind.as_str(), data["state"].as_str()),
        ("state", Some("queued"))
    );
    assert_eq!(data["job_id"], id.as_str());
    drop(first);

    // the job runs while nobody listens to its stream
    worker(&service).run_once().await.unwrap();

    // the client comes back with the last id it saw and misses nothing
    let mut resumed = SseReader::open(&service, &path, &service.key, Some(queued_id)).await;
    let rest = resumed.events(Duration::from_secs(5)).await;
    let kinds: Vec<(&str, &str)> = rest
        .iter()
        .map(|(_, kind, data)| (kind.as_str(), data["state"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds.first(), Some(&("state", "running")), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&("state", "succeeded")), "{kinds:?}");
    assert!(
        kinds[1..kinds.len() - 1]
            .iter()
            .all(|k| *k == ("progress", "running")),
        "between running and succeeded only progress: {kinds:?}"
    );
    assert!(kinds.len() >= 3, "at least one progress event: {kinds:?}");
    assert!(rest.iter().all(|(event_id, _, _)| *event_id > queued_id));
    assert!(rest.windows(2).all(|w| w[0].0 < w[1].0), "ids increase");
    let last = rest.last().unwrap();
    assert_eq!(last.2["done"], true);
    assert!(last.2["progress"]["fraction"].as_f64().unwrap() >= 1.0);

    // a fresh client replays everything; the resumed one saw exactly what followed the first event
    let mut replay = SseReader::open(&service, &path, &service.key, None).await;
    let all = replay.events(Duration::from_secs(5)).await;
    let ids = |events: &[(i64, String, Value)]| events.iter().map(|e| e.0).collect::<Vec<_>>();
    assert_eq!(ids(&all)[0], queued_id);
    assert_eq!(ids(&all)[1..], ids(&rest)[..]);

    // after the last event there is nothing more to wait for: 204 stops EventSource reconnecting
    let done = service
        .get(&path)
        .header("last-event-id", last.0.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), StatusCode::NO_CONTENT);

    // the tenant's stream carried the same events, and stays open
    let mut tenant_events = Vec::new();
    while tenant_events.len() < all.len() {
        match alpha_all.next(Duration::from_secs(5)).await {
            Some(Block::Event { id, .. }) => tenant_events.push(id),
            Some(_) => {}
            None => panic!("the tenant stream ended early: {tenant_events:?}"),
        }
    }
    assert_eq!(tenant_events, ids(&all));

    // the other tenant saw where its stream started, then heartbeats only, and cannot open the job's
    // stream
    let Some(Block::Start(start)) = beta_all.next(Duration::from_secs(5)).await else {
        panic!("a tenant stream first names where it starts");
    };
    assert!(start < queued_id);
    let mut beta_blocks = Vec::new();
    while let Some(block) = beta_all.next(Duration::from_millis(400)).await {
        beta_blocks.push(block);
        if beta_blocks.len() >= 3 {
            break;
        }
    }
    assert!(!beta_blocks.is_empty(), "heartbeats keep the stream alive");
    assert!(
        beta_blocks
            .iter()
            .all(|b| *b == Block::Comment("heartbeat".into())),
        "{beta_blocks:?}"
    );
    let foreign = service
        .client
        .get(service.url(&path))
        .bearer_auth(&service.other_key)
        .send()
        .await
        .unwrap();
    expect_problem(foreign, 404, "not_found").await;

    // a job stream ends by itself after the terminal state
    let mut again = SseReader::open(&service, &path, &service.key, Some(queued_id)).await;
    assert!(!again.events(Duration::from_secs(5)).await.is_empty());
    assert!(again.ended().await, "the server ended the job's stream");

    // a Last-Event-ID that is not an id of this service
    let bad = service
        .get("/v1/events")
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    expect_problem(bad, 400, "invalid_last_event_id").await;
    // no credentials, no stream
    let anonymous = service
        .client
        .get(service.url("/v1/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
}

/// The triggers on both backends: creation, claim, a beat with new progress, a beat with the same
/// progress (no event), a cancel request and the cancellation each leave what they should; pruning
/// takes progress events only.
async fn the_log_records_each_kind_of_change_and_prunes_only_progress(service: Service) {
    let store = service.store();
    let dataset = toy_dataset(&service).await;
    let job = submit_ok(&service, &toy_spec(&dataset, 2)).await;
    let id: uuid::Uuid = job["id"].as_str().unwrap().parse().unwrap();
    let first = store.latest_event_id().await.unwrap();
    let tenant = store.job_event(first).await.unwrap().tenant_id;
    let claimed = store
        .claim_next("events-test", 30_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, id);
    let progress = r#"{"phase":"searching","done":1,"total":2}"#;
    store
        .record_heartbeat(id, claimed.attempt, progress, 30_000)
        .await
        .unwrap();
    store
        .record_heartbeat(id, claimed.attempt, progress, 30_000)
        .await
        .unwrap();
    let cancelling = service
        .post(&format!("/v1/jobs/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancelling.status(), StatusCode::ACCEPTED);
    store.mark_cancelled(id, claimed.attempt).await.unwrap();

    let kinds = |events: &[anonymizer::store::JobEvent]| {
        events
            .iter()
            .map(|e| (e.kind.as_str(), e.state.as_str(), e.cancel_requested))
            .collect::<Vec<_>>()
    };
    let events = store.job_events(tenant, Some(id), 0, 100).await.unwrap();
    assert_eq!(
        kinds(&events),
        [
            ("state", "queued", false),
            ("state", "running", false),
            ("progress", "running", false),
            ("cancel_requested", "running", true),
            ("state", "cancelled", true),
        ]
    );
    assert_eq!(events[2].progress_json.as_deref(), Some(progress));
    assert_eq!(events[1].attempt, 1);
    // another tenant's view of the log holds none of it
    let other = store
        .job_events(uuid::Uuid::new_v4(), Some(id), 0, 100)
        .await
        .unwrap();
    assert!(other.is_empty());

    assert_eq!(store.prune_progress_events(i64::MAX).await.unwrap(), 1);
    let kept = store.job_events(tenant, Some(id), 0, 100).await.unwrap();
    assert_eq!(kept.len(), 4);
    assert!(kept
        .iter()
        .all(|e| e.kind != anonymizer::store::EventKind::Progress));
}
