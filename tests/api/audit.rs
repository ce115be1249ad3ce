//! The audit trail on both backends, read back from the JSON-lines file the service appends to: every
//! request to a data route produces exactly one event with the caller's tenant and key id (none for a
//! request without a valid key, which is `denied`), operations routes produce none, and no event holds a
//! cell value of the uploaded table or hierarchy. Also: a key's last use shows in its record.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anonymizer::audit::AuditSink;
use anonymizer::store::{Backend, LAST_USE_RESOLUTION_MS};
use anonymizer::worker::{Worker, WorkerSettings};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::harness::{run_configured, Service};

/// Six records, 2-anonymous once gender is `*` and towns are regions; every cell is a made-up word so
/// that finding one in the trail cannot be a coincidence.
const CSV: &str = "gender,town,remark\n\
Zorblaxine,Vellichor,Plimbertosh-one\n\
Zorblaxine,Ombrevale,Plimbertosh-two\n\
Quennithor,Vellichor,Plimbertosh-three\n\
Quennithor,Sarnquist,Plimbertosh-four\n\
Zorblaxine,Drummelby,Plimbertosh-five\n\
Quennithor,Sarnquist,Plimbertosh-six\n";

/// The town hierarchy (ARX CSV): its labels are cell values too.
const TOWNS: &str = "Vellichor;Nordmarkia;*\n\
Ombrevale;Nordmarkia;*\n\
Sarnquist;Sudmarkia;*\n\
Drummelby;Sudmarkia;*\n";

/// Every value of the table and the hierarchy.
fn cell_values() -> Vec<&'static str> {
    let mut values: Vec<&str> = CSV
        .lines()
        .skip(1)
        .chain(TOWNS.lines())
        .flat_map(|line| line.split([',', ';']))
        .filter(|v| *v != "*")
        .collect();
    values.sort_unstable();
    values.dedup();
    values
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    audited(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    audited(Backend::Postgres).await;
}

async fn audited(backend: Backend) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("audit.jsonl");
    let sink = AuditSink::open(Some(&path)).expect("audit log");
    let trail = Trail::new(path);
    run_configured(
        backend,
        move |state| state.with_audit(sink),
        move |service| every_data_route_is_audited_once(service, trail),
    )
    .await;
}

/// The audit file as read so far.
struct Trail {
    path: PathBuf,
    seen: usize,
}

impl Trail {
    fn new(path: PathBuf) -> Self {
        Trail { path, seen: 0 }
    }

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
            .collect()
    }

    /// The one event the last request produced. The event is recorded as the answer's body ends, so
    /// it may land a moment after the client has read the body: wait for it (generously).
    async fn one(&mut self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let lines = Self::lines(&self.path);
            if lines.len() > self.seen || Instant::now() > deadline {
                assert_eq!(
                    lines.len(),
                    self.seen + 1,
                    "expected exactly one new event: {lines:#?}"
                );
                self.seen += 1;
                return lines[self.seen - 1].clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asserts that no event came since the last one.
    fn none(&self) {
        let lines = Self::lines(&self.path);
        assert_eq!(lines.len(), self.seen, "unexpected events: {lines:#?}");
    }
}

/// The tenant and key ids of tenant `name`'s only key.
async fn principal(service: &Service, name: &str) -> (String, String) {
    let keys = service.store().list_api_keys().await.expect("keys");
    let key = keys
        .iter()
        .find(|k| k.tenant_name == name)
        .expect("the tenant's key");
    (key.tenant_id.to_string(), key.id.to_string())
}

/// Asserts the common fields of an event of `operation` by `who` (tenant id, key id).
fn check(
    event: &Value,
    operation: &str,
    method: &str,
    route: &str,
    status: u16,
    who: &(String, String),
) {
    assert_eq!(event["operation"], operation, "{event}");
    assert_eq!(event["source"], "http", "{event}");
    assert_eq!(event["method"], method, "{event}");
    assert_eq!(event["route"], route, "{event}");
    assert_eq!(event["status"], status, "{event}");
    assert_eq!(event["tenant_id"], who.0.as_str(), "{event}");
    assert_eq!(event["key_id"], who.1.as_str(), "{event}");
    let outcome = if status < 400 { "success" } else { "failed" };
    assert_eq!(event["outcome"], outcome, "{event}");
    assert!(event["request_id"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    assert!(event["time"].as_str().is_some_and(|t| t.ends_with('Z')));
}

/// The body of an answer.
struct Answer(Vec<u8>);

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.0).expect("JSON answer")
    }

    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Sends `request`; the status and the whole body.
async fn send(request: reqwest::RequestBuilder) -> (u16, Answer) {
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let body = response.bytes().await.expect("body");
    (status, Answer(body.to_vec()))
}

async fn every_data_route_is_audited_once(service: Service, mut trail: Trail) {
    let alpha = principal(&service, "alpha").await;
    let beta = principal(&service, "beta").await;

    // operations routes are not audited
    let (status, _) = send(service.client.get(service.url("/healthz"))).await;
    assert_eq!(status, 200);
    trail.none();

    // upload: resource id from Location, bytes in as sent
    let (status, body) = send(
        service
            .post("/v1/datasets")
            .query(&[("name", "people")])
            .header("content-type", "text/csv")
            .body(CSV),
    )
    .await;
    assert_eq!(status, 201);
    let dataset = body.json()["id"].as_str().expect("id").to_string();
    let event = trail.one().await;
    check(
        &event,
        "dataset.upload",
        "POST",
        "/v1/datasets",
        201,
        &alpha,
    );
    assert_eq!(event["resource_id"], dataset.as_str());
    assert_eq!(event["bytes_in"], CSV.len());
    assert_eq!(event["bytes_out"], body.len());

    let (status, body) = send(service.get("/v1/datasets")).await;
    assert_eq!(status, 200);
    let event = trail.one().await;
    check(&event, "dataset.list", "GET", "/v1/datasets", 200, &alpha);
    assert!(event["resource_id"].is_null());
    assert_eq!(event["bytes_out"], body.len());

    let (status, _) = send(service.get(&format!("/v1/datasets/{dataset}"))).await;
    assert_eq!(status, 200);
    let event = trail.one().await;
    check(
        &event,
        "dataset.read",
        "GET",
        "/v1/datasets/{id}",
        200,
        &alpha,
    );
    assert_eq!(event["resource_id"], dataset.as_str());

    let assessment = json!({"attributes": {"gender": {"role": "quasi_identifier"},
                                           "town": {"role": "quasi_identifier"},
                                           "remark": {"role": "sensitive"}}});
    let (status, _) = send(
        service
            .post(&format!("/v1/datasets/{dataset}/assessments"))
            .json(&assessment),
    )
    .await;
    assert_eq!(status, 200);
    let event = trail.one().await;
    let route = "/v1/datasets/{id}/assessments";
    check(&event, "assessment.create", "POST", route, 200, &alpha);
    assert_eq!(event["resource_id"], dataset.as_str());

    let (status, body) = send(
        service
            .post("/v1/hierarchies")
            .query(&[("name", "towns")])
            .header("content-type", "text/csv")
            .body(TOWNS),
    )
    .await;
    assert_eq!(status, 201);
    let hierarchy = body.json()["id"].as_str().expect("id").to_string();
    let event = trail.one().await;
    check(
        &event,
        "hierarchy.create",
        "POST",
        "/v1/hierarchies",
        201,
        &alpha,
    );
    assert_eq!(event["resource_id"], hierarchy.as_str());
    assert_eq!(event["bytes_in"], TOWNS.len());

    let spec = json!({
        "dataset_id": dataset,
        "attributes": {
            "gender": {"role": "quasi_identifier",
                       "hierarchy": {"levels": [["Zorblaxine", "*"], ["Quennithor", "*"]]}},
            "town": {"role": "quasi_identifier", "hierarchy": {"id": hierarchy}},
            "remark": {"role": "insensitive"},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "suppression_limit": 0.0,
        "algorithm": {"type": "flash"},
        "metric": "granularity",
    });
    let (status, body) = send(service.post("/v1/jobs").json(&spec)).await;
    assert_eq!(status, 202);
    let job = body.json()["id"].as_str().expect("id").to_string();
    let event = trail.one().await;
    check(&event, "job.submit", "POST", "/v1/jobs", 202, &alpha);
    assert_eq!(event["resource_id"], job.as_str());
    assert_eq!(event["bytes_in"], serde_json::to_vec(&spec).unwrap().len());

    let ran = worker(&service).run_once().await.expect("worker");
    assert!(ran.is_some());
    trail.none();

    let (status, _) = send(service.get("/v1/jobs")).await;
    assert_eq!(status, 200);
    check(
        &trail.one().await,
        "job.list",
        "GET",
        "/v1/jobs",
        200,
        &alpha,
    );

    let (status, body) = send(service.get(&format!("/v1/jobs/{job}"))).await;
    assert_eq!(status, 200);
    assert_eq!(body.json()["state"], "succeeded");
    let event = trail.one().await;
    check(&event, "job.read", "GET", "/v1/jobs/{id}", 200, &alpha);
    assert_eq!(event["resource_id"], job.as_str());

    let (status, _) = send(service.get(&format!("/v1/jobs/{job}/result"))).await;
    assert_eq!(status, 200);
    let event = trail.one().await;
    check(
        &event,
        "job.result",
        "GET",
        "/v1/jobs/{id}/result",
        200,
        &alpha,
    );

    // the download: bytes out as sent, whole
    let (status, output) = send(service.get(&format!("/v1/jobs/{job}/output"))).await;
    assert_eq!(status, 200);
    let text = String::from_utf8(output.0.clone()).expect("CSV");
    assert!(text.contains("Plimbertosh-one"), "remarks are published");
    let event = trail.one().await;
    check(
        &event,
        "job.download",
        "GET",
        "/v1/jobs/{id}/output",
        200,
        &alpha,
    );
    assert_eq!(event["resource_id"], job.as_str());
    assert_eq!(event["bytes_out"], output.len());
    assert!(output.len() > 0);

    // a finished job cannot be cancelled: audited as failed
    let (status, _) = send(service.post(&format!("/v1/jobs/{job}/cancel"))).await;
    assert_eq!(status, 409);
    let event = trail.one().await;
    check(
        &event,
        "job.cancel",
        "POST",
        "/v1/jobs/{id}/cancel",
        409,
        &alpha,
    );
    assert_eq!(event["resource_id"], job.as_str());

    // another tenant's key: its own principal, and not found
    let (status, _) = send(
        service
            .client
            .get(service.url(&format!("/v1/datasets/{dataset}")))
            .bearer_auth(&service.other_key),
    )
    .await;
    assert_eq!(status, 404);
    check(
        &trail.one().await,
        "dataset.read",
        "GET",
        "/v1/datasets/{id}",
        404,
        &beta,
    );

    // no key, or a wrong one: denied, without a principal
    for auth in [None, Some("anz_not-a-key")] {
        let mut request = service.client.get(service.url("/v1/jobs"));
        if let Some(key) = auth {
            request = request.bearer_auth(key);
        }
        let (status, _) = send(request).await;
        assert_eq!(status, 401);
        let event = trail.one().await;
        assert_eq!(event["operation"], "job.list", "{event}");
        assert_eq!(event["outcome"], "denied", "{event}");
        assert_eq!(event["status"], 401, "{event}");
        assert!(event["tenant_id"].is_null() && event["key_id"].is_null());
    }

    let (status, _) = send(service.delete(&format!("/v1/datasets/{dataset}"))).await;
    assert_eq!(status, 204);
    let event = trail.one().await;
    check(
        &event,
        "dataset.delete",
        "DELETE",
        "/v1/datasets/{id}",
        204,
        &alpha,
    );
    assert_eq!(event["resource_id"], dataset.as_str());
    assert_eq!(event["bytes_out"], 0);

    // a client that leaves in the middle of an upload: still exactly one event, at most the bytes sent
    let sent = b"gender,town,remark\nZorblaxine,";
    {
        use tokio::io::AsyncWriteExt;
        let address = service.base.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .expect("connect");
        let head = format!(
            "POST /v1/datasets?name=cut HTTP/1.1\r\nHost: localhost\r\n\
             Authorization: Bearer {}\r\nContent-Type: text/csv\r\nContent-Length: 100000\r\n\r\n",
            service.key
        );
        stream.write_all(head.as_bytes()).await.expect("head");
        stream.write_all(sent).await.expect("part of the body");
        stream.flush().await.expect("flush");
    }
    let event = trail.one().await;
    assert_eq!(event["operation"], "dataset.upload", "{event}");
    let outcome = event["outcome"].as_str().unwrap_or("");
    assert!(outcome == "aborted" || outcome == "failed", "{event}");
    assert!(event["bytes_in"]
        .as_u64()
        .is_some_and(|n| n <= sent.len() as u64));
    assert!(event["tenant_id"].is_null() || event["tenant_id"] == alpha.0.as_str());

    // unknown routes and query strings are not data operations
    let (status, _) = send(service.get("/v1/nothing-here?name=Zorblaxine")).await;
    assert_eq!(status, 404);
    let (status, _) = send(service.client.get(service.url("/metrics"))).await;
    assert_eq!(status, 200);
    trail.none();

    // no cell value anywhere in the trail
    let text = std::fs::read_to_string(&trail.path).expect("audit log");
    assert_eq!(trail.seen, 16);
    assert_eq!(text.lines().count(), trail.seen);
    for value in cell_values() {
        assert!(!text.contains(value), "the audit trail holds '{value}'");
    }
    assert!(!text.contains(&service.key) && !text.contains(&service.other_key));

    // the keys' last use is recorded (in the background, at most once a minute)
    let (_, alpha_key) = &alpha;
    let deadline = Instant::now() + Duration::from_secs(10);
    let last_used = loop {
        let keys = service.store().list_api_keys().await.expect("keys");
        let key = keys.iter().find(|k| k.id.to_string() == *alpha_key);
        match key.and_then(|k| k.last_used_at) {
            Some(at) => break at,
            None if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            None => panic!("the key's last use was not recorded"),
        }
    };
    let key_id: Uuid = alpha_key.parse().expect("key id");
    let store = service.store();
    assert!(
        !store
            .touch_api_key(key_id, last_used + 1_000)
            .await
            .unwrap(),
        "a second use within the minute is not written"
    );
    assert!(store
        .touch_api_key(key_id, last_used + LAST_USE_RESOLUTION_MS)
        .await
        .unwrap());
}

fn worker(service: &Service) -> Worker {
    Worker::new(
        service.store().clone(),
        service.state.tables.clone(),
        std::sync::Arc::clone(&service.state.metrics),
        WorkerSettings {
            worker_id: "audit-test-worker".to_string(),
            slots: 1,
            threads_per_job: 1,
            lease: Duration::from_secs(30),
            deadline: Duration::from_secs(60),
            poll_interval: Duration::from_millis(100),
            memory_budget: 0,
            tenant_max_running: 0,
        },
    )
    .expect("worker pool")
}

/// Every operation `openapi.yaml` describes under `/v1` is audited: a new data route cannot slip past
/// the trail unnoticed.
#[test]
fn every_documented_data_route_has_an_audit_operation() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
        .expect("openapi.yaml");
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
    let paths = doc["paths"].as_mapping().expect("paths");
    let mut checked = 0;
    for (path, item) in paths {
        let path = path.as_str().expect("path");
        if !path.starts_with("/v1") {
            continue;
        }
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let method =
                axum::http::Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            assert!(
                anonymizer::http::audit::operation(&method, path).is_some(),
                "{method} {path} has no audit operation"
            );
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} operations found");
}
