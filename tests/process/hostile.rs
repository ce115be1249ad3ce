//! Hostile load against the real binary on loopback, on both stores: slow uploads beside normal work,
//! upload admission (per tenant and per process), idle and slow uploads refused with 408, thousands of
//! idle connections beside health checks, oversized bodies with a bounded peak memory, and HTTPS.
//! Every loop here is bounded in count and time, and every server is killed when its test ends.
//!
//! The figures a run prints (`hostile:` lines) are what docs/testing.md quotes.

use crate::database;

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anonymizer::store::Backend;
use database::TestDatabase;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");
const KEY: &str = "anz_hostile-bootstrap-key-0123456789abcdef01234567";

/// A running `anonymizer serve`, killed on drop.
struct Server {
    child: Child,
    port: u16,
    base: String,
    dir: tempfile::TempDir,
    database_url: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Creates an API key for another tenant with the CLI, against the server's database.
    fn key_for(&self, tenant: &str) -> String {
        let mut command = Command::new(BIN);
        command
            .args(["keys", "create", "--tenant", tenant])
            .env("ANONYMIZER_DATA_DIR", self.dir.path());
        match &self.database_url {
            Some(url) => command.env("DATABASE_URL", url),
            None => command.env_remove("DATABASE_URL"),
        };
        let output = command.output().expect("keys create");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    /// Peak resident memory of the server process so far (VmHWM), in MiB.
    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's /proc status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM");
        kib / 1024.0
    }
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn tls_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tls")
        .join(name)
}

/// Starts the server on `database` (None: the default SQLite file) with extra flags, and waits for it.
async fn start(database: Option<&TestDatabase>, args: &[&str], tls: bool) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--worker-slots", "1"])
        .args(args)
        .env("ANONYMIZER_DATA_DIR", dir.path())
        .env("ANONYMIZER_BOOTSTRAP_KEY", KEY)
        .env("ANONYMIZER_LOG_FORMAT", "json")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match database {
        Some(db) => command.env("DATABASE_URL", &db.url),
        None => command.env_remove("DATABASE_URL"),
    };
    if tls {
        command
            .arg("--tls-cert")
            .arg(tls_file("cert.pem"))
            .arg("--tls-key")
            .arg(tls_file("key.pem"));
    }
    let child = command.spawn().expect("start the server");
    let scheme = if tls { "https" } else { "http" };
    let server = Server {
        child,
        port,
        base: format!("{scheme}://127.0.0.1:{port}"),
        dir,
        database_url: database.map(|d| d.url.clone()),
    };
    let client = client();
    let started = Instant::now();
    loop {
        let last = match client.get(server.url("/readyz")).send().await {
            Ok(r) if r.status() == 200 => return server,
            Ok(r) => r.status().to_string(),
            Err(e) => format!("{e:?}"),
        };
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server did not become ready: {last}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn client() -> reqwest::Client {
    let certificate =
        reqwest::Certificate::from_pem(&std::fs::read(tls_file("ca.pem")).unwrap()).unwrap();
    reqwest::Client::builder()
        .add_root_certificate(certificate)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Runs `case` on SQLite (the default file) and on a fresh PostgreSQL database.
macro_rules! both_stores {
    ($name:ident, $case:ident) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                $case(None).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let db = TestDatabase::create(Backend::Postgres).await;
                $case(Some(&db)).await;
                db.drop().await;
            }
        }
    };
}

const SMALL_CSV: &str = "age;disease\n31;flu\n32;flu\n33;cold\n34;cold\n35;flu\n36;cold\n";

fn small_spec(dataset: &Value) -> Value {
    let hierarchy = (31..=36).map(|a| format!("{a};3*;*\n")).collect::<String>();
    json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "age": {"role": "quasi_identifier", "hierarchy": {"arx": hierarchy}},
            "disease": {"role": "insensitive"},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "algorithm": {"type": "optimal"},
    })
}

/// Posts `body` as a CSV upload to `path` with `key`.
async fn post_csv(
    client: &reqwest::Client,
    server: &Server,
    path: &str,
    key: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    client
        .post(server.url(path))
        .bearer_auth(key)
        .header("content-type", "text/csv")
        .body(body)
        .send()
        .await
        .unwrap()
}

async fn upload(client: &reqwest::Client, server: &Server, key: &str, csv: &str) -> Value {
    let response = post_csv(
        client,
        server,
        "/v1/datasets?delimiter=;",
        key,
        csv.to_string(),
    )
    .await;
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

/// Opens an upload of a declared `length` over a raw socket and sends its first `sent` bytes (the
/// header line and some records); the caller decides how slowly the rest comes, if ever.
async fn open_slow_upload(port: u16, key: &str, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let head = format!(
        "POST /v1/datasets?delimiter=%3B HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: text/csv\r\nContent-Length: {length}\r\n\r\nage;disease\n31;flu\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// Reads one HTTP response's status line and headers (the body, if any, is left unread).
async fn read_response_head(stream: &mut TcpStream, within: Duration) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    let deadline = Instant::now() + within;
    while !head.ends_with(b"\r\n\r\n") {
        let left = deadline.checked_duration_since(Instant::now())?;
        match tokio::time::timeout(left, stream.read(&mut byte)).await {
            Ok(Ok(1)) => head.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

fn status_of(head: &str) -> u16 {
    head.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

async fn dataset_count(client: &reqwest::Client, server: &Server, key: &str) -> usize {
    let list: Value = client
        .get(server.url("/v1/datasets"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list["items"].as_array().unwrap().len()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

/// A slow upload of one tenant never holds up another tenant: while it trickles, 20 job submissions
/// of another tenant all succeed promptly. Abandoned, it leaves nothing behind.
async fn slow_upload_beside_job_submissions(database: Option<&TestDatabase>) {
    let server = start(database, &[], false).await;
    let other = server.key_for("clinic-b");
    let client = client();
    let dataset = upload(&client, &server, &other, SMALL_CSV).await;

    let mut slow = open_slow_upload(server.port, KEY, 10_000_000).await;
    // enough to pass the header and fill part of a chunk, then a trickle below any timeout
    slow.write_all("31;flu\n".repeat(20_000).as_bytes())
        .await
        .unwrap();
    let trickle = tokio::spawn(async move {
        for _ in 0..10 {
            if slow.write_all(b"32;cold\n").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        slow
    });

    let mut latencies = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let response = client
            .post(server.url("/v1/jobs"))
            .bearer_auth(&other)
            .json(&small_spec(&dataset))
            .send()
            .await
            .unwrap();
        latencies.push(started.elapsed());
        assert_eq!(response.status(), 202, "{}", response.text().await.unwrap());
    }
    let slowest = latencies.iter().max().copied().unwrap();
    println!(
        "hostile: {} job submissions beside a slow upload: median {:?}, slowest {:?}",
        latencies.len(),
        percentile(&mut latencies, 0.5),
        slowest
    );
    assert!(
        slowest < Duration::from_secs(5),
        "a job submission waited {slowest:?} behind a slow upload"
    );
    // the upload is abandoned: nothing of it is visible, and its staged rows go
    drop(trickle.await.unwrap());
    assert_eq!(dataset_count(&client, &server, KEY).await, 0);
    let started = Instant::now();
    while stored_dataset_rows(&server).await != 1 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the abandoned upload's rows remain"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Dataset rows in the server's database, staged ones included (read with SQL, beside the server).
async fn stored_dataset_rows(server: &Server) -> i64 {
    let query = "select count(*) from dataset";
    match &server.database_url {
        Some(url) => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            let n = sqlx::query_scalar(query).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
        None => {
            let url = format!(
                "sqlite://{}",
                server.dir.path().join("anonymizer.db").display()
            );
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            let n = sqlx::query_scalar(query).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
    }
}
both_stores!(
    slow_upload_does_not_block,
    slow_upload_beside_job_submissions
);

/// An upload that stops sending is refused with 408 after the idle timeout; one that trickles below
/// the minimum rate is refused at the end of its window. Nothing is stored either way.
async fn idle_and_slow_uploads_time_out(database: Option<&TestDatabase>) {
    let server = start(
        database,
        &[
            "--upload-idle-timeout-secs",
            "1",
            "--upload-min-rate",
            "1000",
        ],
        false,
    )
    .await;
    let client = client();

    let mut idle = open_slow_upload(server.port, KEY, 1_000_000).await;
    let started = Instant::now();
    let head = read_response_head(&mut idle, Duration::from_secs(10))
        .await
        .expect("a response to the idle upload");
    assert_eq!(status_of(&head), 408, "{head}");
    assert!(
        head.to_ascii_lowercase().contains("connection: close"),
        "{head}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    let mut slow = open_slow_upload(server.port, KEY, 1_000_000).await;
    let trickle = async {
        for _ in 0..40 {
            if slow.write_all(b"33;flu\n").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(6), trickle)
        .await
        .ok();
    let head = read_response_head(&mut slow, Duration::from_secs(10))
        .await
        .expect("a response to the slow upload");
    assert_eq!(status_of(&head), 408, "{head}");
    assert_eq!(dataset_count(&client, &server, KEY).await, 0);
}
both_stores!(stalled_uploads, idle_and_slow_uploads_time_out);

/// Uploads are admitted per tenant and per process: past either bound the answer is immediate (429 or
/// 503 with Retry-After), other tenants keep their share, and a place frees up when an upload ends.
async fn upload_admission(database: Option<&TestDatabase>) {
    let server = start(
        database,
        &["--max-uploads", "2", "--max-uploads-per-tenant", "1"],
        false,
    )
    .await;
    let client = client();
    let second = server.key_for("clinic-b");
    let third = server.key_for("clinic-c");

    let mut first = open_slow_upload(server.port, KEY, 1_000_000).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = post_csv(&client, &server, "/v1/datasets?delimiter=;", KEY, SMALL_CSV).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "5");
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["code"], "too_many_uploads");

    let mut other = open_slow_upload(server.port, &second, 1_000_000).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = post_csv(
        &client,
        &server,
        "/v1/datasets?delimiter=;",
        &third,
        SMALL_CSV,
    )
    .await;
    assert_eq!(busy.status(), 503);
    assert!(busy.headers().contains_key("retry-after"));
    let problem: Value = busy.json().await.unwrap();
    assert_eq!(problem["code"], "server_busy");

    // the first upload ends (its client goes away): its place is free again
    first.shutdown().await.ok();
    drop(first);
    other.shutdown().await.ok();
    drop(other);
    let started = Instant::now();
    loop {
        let response = post_csv(
            &client,
            &server,
            "/v1/datasets?delimiter=;",
            &third,
            SMALL_CSV,
        )
        .await;
        if response.status() == 201 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the places were not given back: {}",
            response.status()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
both_stores!(admission, upload_admission);

/// Sixteen slow uploads at once do not take the database pool: status reads beside them stay fast.
async fn sixteen_slow_uploads_beside_status_polling(database: Option<&TestDatabase>) {
    let server = start(
        database,
        &["--max-uploads", "16", "--max-uploads-per-tenant", "16"],
        false,
    )
    .await;
    let client = client();
    let dataset = upload(&client, &server, KEY, SMALL_CSV).await;
    let job: Value = client
        .post(server.url("/v1/jobs"))
        .bearer_auth(KEY)
        .json(&small_spec(&dataset))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let job_url = server.url(&format!("/v1/jobs/{}", job["id"].as_str().unwrap()));

    let mut slow = Vec::new();
    for _ in 0..16 {
        let mut stream = open_slow_upload(server.port, KEY, 50_000_000).await;
        // more than a chunk each, so every upload has written to the database
        stream
            .write_all("34;cold\n".repeat(150_000).as_bytes())
            .await
            .unwrap();
        slow.push(stream);
    }
    let mut latencies = Vec::new();
    let polling = Instant::now();
    while latencies.len() < 300 && polling.elapsed() < Duration::from_secs(20) {
        let started = Instant::now();
        let response = client.get(&job_url).bearer_auth(KEY).send().await.unwrap();
        assert_eq!(response.status(), 200);
        latencies.push(started.elapsed());
        // keep the uploads alive
        if latencies.len() % 50 == 0 {
            for stream in &mut slow {
                stream.write_all(b"35;flu\n").await.ok();
            }
        }
    }
    let p99 = percentile(&mut latencies, 0.99);
    let median = percentile(&mut latencies, 0.5);
    println!(
        "hostile: {} status reads beside 16 slow uploads ({}): median {median:?}, p99 {p99:?}",
        latencies.len(),
        if database.is_some() {
            "postgres"
        } else {
            "sqlite"
        }
    );
    assert!(p99 < Duration::from_secs(1), "status p99 {p99:?}");
    drop(slow);
}
both_stores!(
    slow_uploads_and_status,
    sixteen_slow_uploads_beside_status_polling
);

/// Raises this process's open-file limit so that the test can hold thousands of sockets.
fn raise_own_file_limit(wanted: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls on a struct we own.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
    }
    assert!(
        limit.rlim_cur >= wanted,
        "the open-file limit ({}) is below {wanted}",
        limit.rlim_cur
    );
}

/// 2,000 idle connections (and a few slowloris ones that send half a header) do not stop health
/// checks or normal requests, and the header-read timeout closes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_idle_connections_beside_health_checks() {
    raise_own_file_limit(4096);
    let server = start(None, &["--header-read-timeout-secs", "3"], false).await;
    let client = client();
    let mut idle = Vec::with_capacity(2000);
    for i in 0..2000 {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        if i % 100 == 0 {
            // slowloris: a request line and never the end of the headers
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                .await
                .unwrap();
        }
        idle.push(stream);
    }
    let opened = Instant::now();
    let mut latencies = Vec::new();
    for i in 0..40 {
        let path = if i % 2 == 0 { "/healthz" } else { "/readyz" };
        let started = Instant::now();
        let response = client.get(server.url(path)).send().await.unwrap();
        latencies.push(started.elapsed());
        assert_eq!(response.status(), 200);
    }
    let datasets = client
        .get(server.url("/v1/datasets"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(datasets.status(), 200);
    let worst = latencies.iter().max().copied().unwrap();
    println!(
        "hostile: health checks beside 2,000 idle connections: median {:?}, slowest {worst:?}",
        percentile(&mut latencies, 0.5)
    );
    assert!(
        worst < Duration::from_millis(100),
        "a health check took {worst:?}"
    );
    // the header-read timeout closes every idle connection
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(opened.elapsed())).await;
    let mut closed = 0;
    for stream in &mut idle {
        let mut byte = [0u8; 1];
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut byte)).await {
            Ok(Ok(0)) | Ok(Err(_)) => closed += 1,
            // hyper may answer a half-sent request with 408 before it closes
            Ok(Ok(_)) => closed += 1,
            Err(_) => {}
        }
    }
    assert_eq!(closed, idle.len(), "idle connections left open");
}

/// Past the connection cap new connections are closed at once, and the server serves again as soon as
/// connections go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_holds_and_recovers() {
    let server = start(None, &["--max-connections", "50"], false).await;
    // The readiness probe's connection keeps its slot until its lingering close ends, which on a
    // loaded machine can come after the first connections below: the cap then refuses one of them.
    // Connections the server closed are replaced until it holds 50 open ones.
    let mut held: Vec<TcpStream> = Vec::new();
    let started = Instant::now();
    loop {
        while held.len() < 50 {
            held.push(
                TcpStream::connect(("127.0.0.1", server.port))
                    .await
                    .unwrap(),
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        // a closed connection reads end of file at once; an open one has nothing to read
        held.retain(|stream| {
            let mut byte = [0u8; 1];
            matches!(stream.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        });
        if held.len() == 50 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server does not hold 50 connections"
        );
    }
    let mut extra = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    extra
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .ok();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), extra.read(&mut buf))
        .await
        .expect("the refused connection is closed at once");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    drop(held);
    let client = client();
    let started = Instant::now();
    loop {
        if let Ok(r) = client.get(server.url("/healthz")).send().await {
            if r.status() == 200 {
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let metrics = client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let refused: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("anonymizer_http_connections_refused_total "))
        .and_then(|v| v.parse().ok())
        .expect("the refused-connections counter");
    assert!(refused >= 1, "{refused}");
}

/// Sends a request head and then `body` (ignoring a connection the server closes early), and returns the
/// status the server answered with.
async fn send_raw(port: u16, head: String, body: Vec<u8>) -> u16 {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(head.as_bytes()).await.unwrap();
    let sending = tokio::spawn(async move {
        for piece in body.chunks(1 << 16) {
            if writer.write_all(piece).await.is_err() {
                break;
            }
        }
        writer
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(30);
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") && Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(30), reader.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    sending.abort();
    status_of(&String::from_utf8_lossy(&answer))
}

/// A 61 MiB job body is refused with 413 without being held in memory, declared or chunked; the
/// server's peak memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_job_body_is_refused_with_bounded_memory() {
    let server = start(None, &[], false).await;
    let before = server.peak_rss_mib();
    let body = format!(
        "{{\"dataset_id\":\"{}\",\"pad\":\"{}\"}}",
        uuid::Uuid::new_v4(),
        "x".repeat(61 << 20)
    )
    .into_bytes();
    // a declared length: refused before the body is read
    let head = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    assert_eq!(send_raw(server.port, head, body.clone()).await, 413);
    // chunked, without a declared length: refused once the limit is crossed
    let head = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let mut chunked = Vec::with_capacity(body.len() + body.len() / 100);
    for piece in body.chunks(1 << 16) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(send_raw(server.port, head, chunked).await, 413);
    let after = server.peak_rss_mib();
    println!(
        "hostile: peak RSS before {before:.1} MiB, after two 61 MiB job bodies {after:.1} MiB"
    );
    assert!(
        after - before < 32.0,
        "peak memory grew by {:.1} MiB",
        after - before
    );
}

/// The server speaks HTTPS with `--tls-cert`/`--tls-key`, and plain HTTP on that port gets no answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_is_served_and_plain_http_refused() {
    let server = start(None, &[], true).await;
    let client = client();
    let health = client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let datasets = client
        .get(server.url("/v1/datasets"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(datasets.status(), 200);
    let dataset = upload(&client, &server, KEY, SMALL_CSV).await;
    assert_eq!(dataset["row_count"], 6);

    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/healthz", server.port))
        .timeout(Duration::from_secs(15))
        .send()
        .await;
    assert!(plain.is_err(), "plain HTTP was answered: {plain:?}");
    let mut raw = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    raw.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(15), raw.read_to_end(&mut answer)).await;
    assert!(
        !String::from_utf8_lossy(&answer).contains("HTTP/1.1 200"),
        "plain HTTP got a 200"
    );
}

/// A 200 MiB field is refused with 422 once it passes the field limit (1 MiB), without the server
/// holding it: the peak memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200_mib_field_is_refused_with_bounded_memory() {
    let server = start(None, &[], false).await;
    let before = server.peak_rss_mib();
    let mut body = b"note;age\n\"".to_vec();
    body.resize(body.len() + (200 << 20), b'x');
    body.extend_from_slice(b"\";31\n");
    let head = format!(
        "POST /v1/datasets?delimiter=%3B HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: text/csv\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let started = Instant::now();
    assert_eq!(send_raw(server.port, head, body).await, 422);
    let after = server.peak_rss_mib();
    println!(
        "hostile: a 200 MiB field refused in {:?}; peak RSS before {before:.1} MiB, after {after:.1} MiB",
        started.elapsed()
    );
    assert!(
        after - before < 64.0,
        "peak memory grew by {:.1} MiB",
        after - before
    );
    let client = client();
    assert_eq!(dataset_count(&client, &server, KEY).await, 0);
}

/// NUL bytes are refused with 422 on both stores: in a dataset name, in a hierarchy name and in a
/// field; nothing is stored.
async fn nul_bytes_are_unprocessable(database: Option<&TestDatabase>) {
    let server = start(database, &[], false).await;
    let client = client();
    let named = post_csv(
        &client,
        &server,
        "/v1/datasets?delimiter=;&name=ward%00b",
        KEY,
        SMALL_CSV,
    )
    .await;
    assert_eq!(named.status(), 422);
    let problem: Value = named.json().await.unwrap();
    assert_eq!(problem["code"], "invalid_characters");
    let field = post_csv(
        &client,
        &server,
        "/v1/datasets?delimiter=;",
        KEY,
        "age;disease\n31;fl\0u\n",
    )
    .await;
    assert_eq!(field.status(), 422);
    let hierarchy = client
        .post(server.url("/v1/hierarchies"))
        .bearer_auth(KEY)
        .json(&json!({"name": "age\u{0}", "levels": [["31", "*"]]}))
        .send()
        .await
        .unwrap();
    assert_eq!(hierarchy.status(), 422);
    assert_eq!(dataset_count(&client, &server, KEY).await, 0);
}
both_stores!(nul_bytes, nul_bytes_are_unprocessable);
