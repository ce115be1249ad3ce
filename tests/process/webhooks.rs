//! Webhooks with the real binary on both stores, against a receiver in this process: deliveries carry a
//! Standard Webhooks signature that verifies with the tenant's secret (checked here with `hmac`, not the
//! service's code); a receiver that fails twice then succeeds gets exactly the requests expected (the
//! first state three times, the others once, in order) and the job's deliveries list every attempt; a
//! callback outside the allowlist is 422; a redirect is recorded and not followed; and a delivery still
//! being retried when the server is killed (SIGKILL) is delivered by the next server process.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::database;
use crate::local_server::BIN;
use anonymizer::store::Backend;

const KEY: &str = "anz_webhook-bootstrap-key-0123456789abcdef0123456789";

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    id: String,
    timestamp: i64,
    signature: String,
    body: Vec<u8>,
    answered: u16,
}

/// A webhook receiver: `/hook` fails while `failures_left` > 0 (or while `down`), `/redirect` answers
/// 307 to `/elsewhere`, and every request is recorded.
#[derive(Clone, Default)]
struct Receiver {
    log: Arc<Mutex<Vec<Received>>>,
    failures_left: Arc<Mutex<u32>>,
    down: Arc<Mutex<bool>>,
}

impl Receiver {
    async fn start(failures: u32) -> (Receiver, SocketAddr) {
        let receiver = Receiver::default();
        *receiver.failures_left.lock().unwrap() = failures;
        let app = Router::new()
            .route("/hook", post(hook))
            .route("/redirect", post(redirect))
            .route("/elsewhere", post(elsewhere))
            .with_state(receiver.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (receiver, address)
    }

    fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }

    fn record(&self, path: &str, headers: &HeaderMap, body: &[u8], answered: u16) {
        let header = |name: &str| {
            headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        };
        self.log.lock().unwrap().push(Received {
            path: path.to_string(),
            id: header("webhook-id"),
            timestamp: header("webhook-timestamp").parse().unwrap_or(0),
            signature: header("webhook-signature"),
            body: body.to_vec(),
            answered,
        });
    }
}

async fn hook(
    axum::extract::State(receiver): axum::extract::State<Receiver>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> StatusCode {
    let fail = {
        let mut left = receiver.failures_left.lock().unwrap();
        let down = *receiver.down.lock().unwrap();
        if down {
            true
        } else if *left > 0 {
            *left -= 1;
            true
        } else {
            false
        }
    };
    let status = if fail {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::NO_CONTENT
    };
    receiver.record("/hook", &headers, &body, status.as_u16());
    status
}

async fn redirect(
    axum::extract::State(receiver): axum::extract::State<Receiver>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> (StatusCode, [(&'static str, &'static str); 1]) {
    receiver.record("/redirect", &headers, &body, 307);
    (StatusCode::TEMPORARY_REDIRECT, [("location", "/elsewhere")])
}

async fn elsewhere(
    axum::extract::State(receiver): axum::extract::State<Receiver>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> StatusCode {
    receiver.record("/elsewhere", &headers, &body, 200);
    StatusCode::OK
}

/// `anonymizer serve` on `database_url`, allowing callbacks to the receiver's address; killed when
/// dropped.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    async fn start(database_url: &str, dir: &Path, receiver: SocketAddr) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let child = Command::new(BIN)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--webhook-allowed-hosts", &receiver.to_string()])
            .args(["--webhook-allow-private", "--webhook-retry-base-ms", "100"])
            .env("DATABASE_URL", database_url)
            .env("ANONYMIZER_DATA_DIR", dir)
            .env("ANONYMIZER_BOOTSTRAP_KEY", KEY)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let client = reqwest::Client::new();
        let started = Instant::now();
        while !client
            .get(format!("{}/readyz", server.base))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            assert!(started.elapsed() < Duration::from_secs(30), "no server");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of one server.
struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    fn of(server: &Server) -> Api {
        Api {
            client: reqwest::Client::new(),
            base: server.base.clone(),
        }
    }

    async fn get(&self, path: &str) -> Value {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        response.json().await.unwrap()
    }

    async fn upload_adult(&self) -> String {
        let csv = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/adult/adult.csv"
        ))
        .unwrap();
        let response = self
            .client
            .post(format!("{}/v1/datasets?name=adult", self.base))
            .bearer_auth(KEY)
            .header("content-type", "text/csv")
            .body(csv)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let dataset: Value = response.json().await.unwrap();
        dataset["id"].as_str().unwrap().to_string()
    }

    /// Submits the README's adult job with `callback`; the response as it came.
    async fn submit(&self, dataset: &str, callback: &str) -> reqwest::Response {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/adult-builders.json"
        ))
        .unwrap();
        let mut spec: Value = serde_json::from_str(&text).unwrap();
        spec["dataset_id"] = json!(dataset);
        spec["callback"] = json!({ "url": callback });
        self.client
            .post(format!("{}/v1/jobs", self.base))
            .bearer_auth(KEY)
            .json(&spec)
            .send()
            .await
            .unwrap()
    }

    async fn submit_ok(&self, dataset: &str, callback: &str) -> String {
        let response = self.submit(dataset, callback).await;
        assert_eq!(response.status(), 202);
        let job: Value = response.json().await.unwrap();
        assert_eq!(job["callback"]["url"], callback);
        job["id"].as_str().unwrap().to_string()
    }

    /// Polls the job's deliveries until `done` holds (at most 30 s).
    async fn deliveries_until(&self, job: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let listed = self.get(&format!("/v1/jobs/{job}/deliveries")).await;
            let items = listed["items"].as_array().unwrap().clone();
            if done(&items) {
                return items;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "deliveries did not settle: {listed}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn all_delivered(expected: usize) -> impl Fn(&[Value]) -> bool {
    move |items| items.len() == expected && items.iter().all(|d| d["status"] == "delivered")
}

/// Checks a request's Standard Webhooks signature with the tenant's secret (`whsec_…`).
fn verify(secret: &str, request: &Received) {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.", request.id, request.timestamp).as_bytes());
    mac.update(&request.body);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    assert!(
        request.signature.split(' ').any(|s| s == expected),
        "the signature does not verify"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - request.timestamp).abs() < 120, "a fresh timestamp");
}

fn body_of(request: &Received) -> Value {
    serde_json::from_slice(&request.body).expect("a JSON body")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_signed_retried_and_listed_on_sqlite() {
    database::with_url(Backend::Sqlite, signed_retried_and_listed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_signed_retried_and_listed_on_postgres() {
    database::with_url(Backend::Postgres, signed_retried_and_listed).await;
}

async fn signed_retried_and_listed(url: String) {
    let dir = tempfile::tempdir().unwrap();
    let (receiver, address) = Receiver::start(2).await;
    let server = Server::start(&url, dir.path(), address).await;
    let api = Api::of(&server);
    let dataset = api.upload_adult().await;

    // outside the allowlist: refused at submission, nothing queued
    for refused in [
        "https://example.org/hook".to_string(),
        format!("http://127.0.0.1:{}/hook", address.port().wrapping_add(1)),
        format!("ftp://{address}/hook"),
    ] {
        let response = api.submit(&dataset, &refused).await;
        assert_eq!(response.status(), 422, "{refused}");
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["code"], "callback_not_allowed");
        assert_eq!(problem["pointer"], "/callback/url");
    }
    let listed = api.get("/v1/jobs").await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 0);

    // fails twice, then succeeds: queued three times, running and succeeded once each, in order
    let hook = format!("http://{address}/hook");
    let job = api.submit_ok(&dataset, &hook).await;
    let deliveries = api.deliveries_until(&job, all_delivered(3)).await;
    let received = receiver.received();
    let summary: Vec<(String, u16)> = received
        .iter()
        .map(|r| (body_of(r)["type"].as_str().unwrap().to_string(), r.answered))
        .collect();
    assert_eq!(
        summary,
        [
            ("job.queued".to_string(), 503),
            ("job.queued".to_string(), 503),
            ("job.queued".to_string(), 204),
            ("job.running".to_string(), 204),
            ("job.succeeded".to_string(), 204),
        ]
    );
    // every retry is the same message: same id, same body
    assert_eq!(received[0].id, received[2].id);
    assert_eq!(received[0].body, received[2].body);
    let ids: Vec<i64> = received[2..]
        .iter()
        .map(|r| r.id.parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase: {ids:?}");
    // signed with the tenant's secret
    let secret = api.get("/v1/webhook-secret").await;
    let secret = secret["secret"].as_str().unwrap().to_string();
    for request in &received {
        verify(&secret, request);
    }
    // the body is the job document as of the event
    let last = body_of(&received[4]);
    assert_eq!(last["data"]["id"], job.as_str());
    assert_eq!(last["data"]["state"], "succeeded");
    assert_eq!(last["data"]["done"], true);
    assert_eq!(body_of(&received[3])["data"]["state"], "running");
    // the job's deliveries list every attempt
    let codes: Vec<Vec<u64>> = deliveries
        .iter()
        .map(|d| {
            d["attempts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["status_code"].as_u64().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(codes, [vec![503, 503, 204], vec![204], vec![204]]);
    assert_eq!(deliveries[0]["type"], "job.queued");
    assert_eq!(deliveries[0]["id"], received[0].id.as_str());

    // a redirect is recorded, not followed
    let redirecting = api
        .submit_ok(&dataset, &format!("http://{address}/redirect"))
        .await;
    let deliveries = api
        .deliveries_until(&redirecting, |items| {
            items
                .first()
                .is_some_and(|d| d["attempts"].as_array().unwrap().len() >= 2)
        })
        .await;
    let attempt = &deliveries[0]["attempts"][0];
    assert_eq!(attempt["status_code"], 307);
    assert!(attempt["error"].as_str().unwrap().contains("redirect"));
    assert_eq!(deliveries[0]["status"], "pending");
    assert!(receiver.received().iter().all(|r| r.path != "/elsewhere"));

    // after a rotation the new secret signs (and the previous one still does, for the overlap)
    let rotated = api
        .client
        .post(format!("{}/v1/webhook-secret/rotate", api.base))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(rotated.status(), 201);
    let rotated: Value = rotated.json().await.unwrap();
    let new_secret = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(new_secret, secret);
    assert_eq!(rotated["signing_secrets"], 2);
    let before = receiver.received().len();
    let third = api.submit_ok(&dataset, &hook).await;
    api.deliveries_until(&third, all_delivered(3)).await;
    for request in &receiver.received()[before..] {
        verify(&new_secret, request);
        verify(&secret, request);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_survives_a_killed_server_on_sqlite() {
    database::with_url(Backend::Sqlite, survives_a_killed_server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_survives_a_killed_server_on_postgres() {
    database::with_url(Backend::Postgres, survives_a_killed_server).await;
}

async fn survives_a_killed_server(url: String) {
    let dir = tempfile::tempdir().unwrap();
    let (receiver, address) = Receiver::start(0).await;
    *receiver.down.lock().unwrap() = true;
    let mut server = Server::start(&url, dir.path(), address).await;
    let api = Api::of(&server);
    let dataset = api.upload_adult().await;
    let job = api
        .submit_ok(&dataset, &format!("http://{address}/hook"))
        .await;
    // the job ends while its first delivery is being retried
    let started = Instant::now();
    loop {
        let state = api.get(&format!("/v1/jobs/{job}")).await;
        if state["done"] == true && receiver.received().len() >= 2 {
            assert_eq!(state["state"], "succeeded");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill();
    let failed_before = receiver.received().len();
    *receiver.down.lock().unwrap() = false;

    let server = Server::start(&url, dir.path(), address).await;
    let api = Api::of(&server);
    let deliveries = api.deliveries_until(&job, all_delivered(3)).await;
    let delivered: Vec<String> = receiver
        .received()
        .iter()
        .filter(|r| r.answered == 204)
        .map(|r| body_of(r)["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(delivered, ["job.queued", "job.running", "job.succeeded"]);
    assert!(failed_before >= 2);
    assert!(deliveries[0]["attempts"].as_array().unwrap().len() > failed_before.min(2));
}
