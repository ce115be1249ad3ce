//! Service benchmarks against the real binary (`anonymizer serve`) over loopback HTTP, on SQLite and on
//! PostgreSQL (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a fresh database
//! per run, dropped afterwards):
//! - upload throughput of a ~200 MB CSV (adult's records repeated), MB/s of CSV bytes (target ≥ 50);
//! - latency of `GET /v1/jobs/{id}` under an open-loop 1,000 requests/s while two long jobs run
//!   (target p99 ≤ 20 ms);
//! - end-to-end adult (upload, submit 5-anonymity at 4 %, poll every 5 ms, download) minus the engine's
//!   own time from the report (target ≤ 1 s);
//! - push: an adult job with a callback, watched at once by polling every 5 ms, by its event stream and by
//!   a local webhook receiver: when each learns that the job succeeded, after submission;
//! - throughput: 100 small jobs (2,000 records of adult, 3 quasi-identifiers) submitted at once, jobs/s
//!   with two worker slots (every state change writes job events).
//!
//! `BENCH_BIN=path` runs another build of the binary (e.g. an earlier commit's, to compare).
//!
//! Every figure is the median of several runs. Run with `cargo bench --bench service` (or
//! `scripts/bench`); `cargo bench --bench service -- --quick` runs one short round as a smoke test, and
//! `upload`, `e2e` or `latency` as an argument runs only that section, `sqlite` or `postgres` only that
//! store. `BENCH_SERVER_LOG=path` keeps
//! the server's log, filtered by `BENCH_SERVER_RUST_LOG` (default `warn`).

#[path = "support/served.rs"]
mod served;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anonymizer::synthetic::adult::ADULT_COLUMNS;
use serde_json::{json, Value};

use served::{Backend, Database, Server, KEY};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // `cargo test --benches` runs benches without `--bench`: then only a smoke round.
    let quick = quick || !std::env::args().any(|a| a == "--bench");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // optional section filter: `upload`, `e2e` or `latency`
    let only = std::env::args()
        .skip(1)
        .find(|a| ["upload", "e2e", "latency", "push", "throughput"].contains(&a.as_str()));
    // optional store filter: `sqlite` or `postgres`
    let store = std::env::args()
        .skip(1)
        .find(|a| ["sqlite", "postgres"].contains(&a.as_str()));
    runtime.block_on(run(quick, only.as_deref(), store.as_deref()));
}

async fn run(quick: bool, only: Option<&str>, store: Option<&str>) {
    let wanted = |section: &str| only.is_none_or(|o| o == section);
    let backends: Vec<Backend> = [Backend::Sqlite, Backend::Postgres]
        .into_iter()
        .filter(|b| store.is_none_or(|s| s == b.name()))
        .collect();
    let upload_mb = if quick { 8 } else { 200 };
    let runs = if quick { 1 } else { 3 };
    println!(
        "service benchmarks (medians of {runs} runs{})",
        if quick { ", quick" } else { "" }
    );
    let csv = repeated_adult(upload_mb << 20);
    for &backend in &backends {
        if !wanted("upload") {
            break;
        }
        let mut rates = Vec::new();
        for _ in 0..runs {
            let database = Database::create(backend).await;
            let server = Server::start(&database.url, &[]).await;
            let started = Instant::now();
            let dataset = upload(&server, "big", csv.clone()).await;
            let seconds = started.elapsed().as_secs_f64();
            assert_eq!(dataset["byte_size"], csv.len());
            rates.push(csv.len() as f64 / 1e6 / seconds);
            drop(server);
            database.drop().await;
        }
        println!(
            "upload {:>4} MiB into {:<8}: median {:6.1} MB/s  (runs: {})",
            csv.len() >> 20,
            backend.name(),
            median(&mut rates),
            list(&rates)
        );
    }
    for &backend in &backends {
        if !wanted("e2e") {
            break;
        }
        end_to_end(backend, if quick { 1 } else { 5 }).await;
    }
    for &backend in &backends {
        if !wanted("push") || std::env::var("BENCH_BIN").is_ok() {
            break;
        }
        push(backend, if quick { 1 } else { 7 }).await;
    }
    for &backend in &backends {
        if !wanted("throughput") {
            break;
        }
        throughput(
            backend,
            if quick { 1 } else { 3 },
            if quick { 10 } else { 100 },
        )
        .await;
    }
    for &backend in &backends {
        if !wanted("latency") {
            break;
        }
        latency_under_load(
            backend,
            if quick { 2 } else { 10 },
            if quick { 1 } else { 3 },
        )
        .await;
    }
}

/// Upload → job → poll → download of adult; prints total and total minus engine time.
async fn end_to_end(backend: Backend, runs: usize) {
    let database = Database::create(backend).await;
    let server = Server::start(&database.url, &[]).await;
    let csv = std::fs::read(adult_dir().join("adult.csv")).expect("adult");
    let mut totals = Vec::new();
    let mut overheads = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let dataset = upload(&server, "adult", csv.clone()).await;
        let location = submit(
            &server,
            &adult_spec(dataset["id"].as_str().unwrap(), "nu_entropy", 0.04),
        )
        .await;
        wait_until_done(&server, &location, Duration::from_millis(5)).await;
        let report: Value = server
            .get(&format!("{location}/result"))
            .await
            .json()
            .await
            .unwrap();
        let output = server
            .get(&format!("{location}/output"))
            .await
            .bytes()
            .await
            .unwrap();
        assert!(!output.is_empty());
        let total = started.elapsed().as_secs_f64() * 1000.0;
        let engine = report["search"]["elapsed_ms"].as_f64().unwrap_or(0.0);
        totals.push(total);
        overheads.push(total - engine);
    }
    println!(
        "end-to-end adult on {:<8}: median {:6.1} ms total, {:6.1} ms beyond the engine  (runs: {})",
        backend.name(),
        median(&mut totals),
        median(&mut overheads),
        list(&overheads)
    );
    drop(server);
    database.drop().await;
}

/// Open-loop GETs of one job at 1,000 requests/s for `seconds` while two long jobs run.
async fn latency_under_load(backend: Backend, seconds: u64, runs: usize) {
    let database = Database::create(backend).await;
    let server = Server::start(&database.url, &[("ANONYMIZER_WORKER_SLOTS", "2")]).await;
    let full = std::fs::read(data_dir().join("adult_full/adult_full.csv")).expect("adult_full");
    let dataset = upload(&server, "adult_full", full).await;
    let mut p50s = Vec::new();
    let mut p99s = Vec::new();
    for _ in 0..runs {
        // two long jobs (adult_full, exact nu_entropy at 2 %: tens of seconds each)
        let mut long_jobs = Vec::new();
        for _ in 0..2 {
            long_jobs
                .push(submit(&server, &adult_full_spec(dataset["id"].as_str().unwrap())).await);
        }
        wait_until_running(&server, &long_jobs).await;
        let target = long_jobs[0].clone();
        let interval = Duration::from_micros(1000);
        let total = (seconds * 1000) as usize;
        let start = tokio::time::Instant::now();
        let mut handles = Vec::with_capacity(total);
        for i in 0..total {
            tokio::time::sleep_until(start + interval * i as u32).await;
            let client = server.client.clone();
            let url = format!("{}{}", server.base, target);
            handles.push(tokio::spawn(async move {
                let sent = Instant::now();
                let response = client.get(url).bearer_auth(KEY).send().await;
                let ok = matches!(&response, Ok(r) if r.status() == 200);
                if let Ok(r) = response {
                    let _ = r.bytes().await;
                }
                (sent.elapsed(), ok)
            }));
        }
        let achieved = total as f64 / start.elapsed().as_secs_f64();
        let mut latencies = Vec::with_capacity(total);
        let mut failures = 0;
        // requests over 100 ms, by when they were sent (ms from the start of the run)
        let mut slow: Vec<usize> = Vec::new();
        for (i, handle) in handles.into_iter().enumerate() {
            let (latency, ok) = handle.await.expect("request task");
            latencies.push(latency.as_secs_f64() * 1000.0);
            failures += usize::from(!ok);
            if latency > Duration::from_millis(100) {
                slow.push(i);
            }
        }
        if let (Some(first), Some(last)) = (slow.first(), slow.last()) {
            println!(
                "  {} requests took over 100 ms, sent between +{:.2} s and +{:.2} s",
                slow.len(),
                *first as f64 / 1000.0,
                *last as f64 / 1000.0
            );
        }
        latencies.sort_by(f64::total_cmp);
        let p50 = latencies[latencies.len() / 2];
        let p99 = latencies[latencies.len() * 99 / 100];
        p50s.push(p50);
        p99s.push(p99);
        println!(
            "  run on {:<8}: {total} GETs at {achieved:.0}/s sent, p50 {p50:.2} ms, p99 {p99:.2} ms, max {:.1} ms, {failures} failed",
            backend.name(),
            latencies[latencies.len() - 1]
        );
        for job in &long_jobs {
            let _ = server.post(&format!("{job}/cancel")).await;
        }
        for job in &long_jobs {
            wait_until_done(&server, job, Duration::from_millis(50)).await;
        }
    }
    println!(
        "GET /v1/jobs/{{id}} at 1000/s while 2 jobs run on {:<8}: median p50 {:.2} ms, median p99 {:.2} ms",
        backend.name(),
        median(&mut p50s),
        median(&mut p99s)
    );
    drop(server);
    database.drop().await;
}

/// When polling, the event stream and the webhook each learn that an adult job succeeded (ms after
/// submission), medians of `runs` jobs.
async fn push(backend: Backend, runs: usize) {
    let (receiver, arrivals) = webhook_receiver().await;
    let database = Database::create(backend).await;
    let allowed = receiver.to_string();
    let server = Server::start(
        &database.url,
        &[
            ("ANONYMIZER_WEBHOOK_ALLOWED_HOSTS", allowed.as_str()),
            ("ANONYMIZER_WEBHOOK_ALLOW_PRIVATE", "true"),
        ],
    )
    .await;
    let csv = std::fs::read(adult_dir().join("adult.csv")).expect("adult");
    let dataset = upload(&server, "adult", csv).await;
    let (mut polled, mut streamed, mut hooked) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut spec = adult_spec(dataset["id"].as_str().unwrap(), "nu_entropy", 0.04);
        spec["callback"] = json!({"url": format!("http://{receiver}/hook")});
        let started = Instant::now();
        let location = submit(&server, &spec).await;
        let job_id = location.rsplit('/').next().unwrap().to_string();
        let stream = async {
            let mut response = server.get(&format!("{location}/events")).await;
            let mut text = String::new();
            while let Some(chunk) = response.chunk().await.unwrap() {
                text.push_str(std::str::from_utf8(&chunk).unwrap());
                if text.contains("\"state\":\"succeeded\"") {
                    return started.elapsed();
                }
            }
            panic!("the stream ended before the job succeeded");
        };
        let poll = async {
            wait_until_done(&server, &location, Duration::from_millis(5)).await;
            started.elapsed()
        };
        let hook = async {
            loop {
                if arrivals.lock().unwrap().iter().any(|(id, _)| *id == job_id) {
                    return started.elapsed();
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        let (p, s, h) = tokio::join!(poll, stream, hook);
        polled.push(p.as_secs_f64() * 1000.0);
        streamed.push(s.as_secs_f64() * 1000.0);
        hooked.push(h.as_secs_f64() * 1000.0);
    }
    println!(
        "push on {:<8}: job succeeded seen after median {:6.1} ms polling every 5 ms, {:6.1} ms by its \
         event stream, {:6.1} ms by its webhook  (stream runs: {}; webhook runs: {})",
        backend.name(),
        median(&mut polled),
        median(&mut streamed),
        median(&mut hooked),
        list(&streamed),
        list(&hooked),
    );
    drop(server);
    database.drop().await;
}

/// A receiver on a free loopback port that records when each job's `job.succeeded` arrives.
async fn webhook_receiver() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::Mutex<Vec<(String, Instant)>>>,
) {
    use std::sync::{Arc, Mutex};
    let arrivals: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let seen = arrivals.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let seen = seen.clone();
            async move {
                let payload: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                if payload["type"] == "job.succeeded" {
                    let id = payload["data"]["id"].as_str().unwrap_or("").to_string();
                    seen.lock().unwrap().push((id, Instant::now()));
                }
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (address, arrivals)
}

/// `jobs` small jobs submitted at once; jobs/s until the last one is done, medians of `runs`.
async fn throughput(backend: Backend, runs: usize, jobs: usize) {
    let text = std::fs::read_to_string(adult_dir().join("adult.csv")).expect("adult");
    let small: String = text.lines().take(2001).map(|l| format!("{l}\n")).collect();
    let mut rates = Vec::new();
    for _ in 0..runs {
        let database = Database::create(backend).await;
        let server = Server::start(&database.url, &[("ANONYMIZER_WORKER_SLOTS", "2")]).await;
        let dataset = upload(&server, "adult-2k", small.clone().into_bytes()).await;
        let mut attributes = quasi_identifiers(&adult_dir(), "adult", &["sex", "age", "race"]);
        // the columns after sex, age and race
        for other in &ADULT_COLUMNS[3..] {
            attributes.insert(other.to_string(), json!({"role": "insensitive"}));
        }
        let spec = json!({
            "dataset_id": dataset["id"],
            "attributes": attributes,
            "privacy_models": [{"type": "k_anonymity", "k": 5}],
            "suppression_limit": 0.04,
            "algorithm": {"type": "flash"},
            "metric": "granularity",
        });
        let started = Instant::now();
        let mut locations = Vec::new();
        for _ in 0..jobs {
            locations.push(submit(&server, &spec).await);
        }
        for location in &locations {
            let job = wait_until_done(&server, location, Duration::from_millis(20)).await;
            assert_eq!(job["state"], "succeeded", "{job}");
        }
        rates.push(jobs as f64 / started.elapsed().as_secs_f64());
        drop(server);
        database.drop().await;
    }
    println!(
        "throughput on {:<8}: median {:6.1} jobs/s of {jobs} small jobs  (runs: {})",
        backend.name(),
        median(&mut rates),
        list(&rates)
    );
}

async fn upload(server: &Server, name: &str, csv: Vec<u8>) -> Value {
    let response = server
        .client
        .post(format!(
            "{}/v1/datasets?name={name}&delimiter=;",
            server.base
        ))
        .bearer_auth(KEY)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .expect("upload");
    let status = response.status();
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(status, 201, "{body}");
    body
}

async fn submit(server: &Server, spec: &Value) -> String {
    let response = server
        .client
        .post(format!("{}/v1/jobs", server.base))
        .bearer_auth(KEY)
        .json(spec)
        .send()
        .await
        .expect("submit");
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_string());
    assert_eq!(status, 202, "{}", response.text().await.unwrap_or_default());
    location.expect("a Location")
}

async fn wait_until_done(server: &Server, location: &str, every: Duration) -> Value {
    loop {
        let job: Value = server.get(location).await.json().await.unwrap();
        match job["state"].as_str().unwrap_or("") {
            "succeeded" | "failed" | "cancelled" => return job,
            _ => tokio::time::sleep(every).await,
        }
    }
}

async fn wait_until_running(server: &Server, locations: &[String]) {
    for location in locations {
        loop {
            let job: Value = server.get(location).await.json().await.unwrap();
            if job["state"] == "running" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// data and specs

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}

fn adult_dir() -> PathBuf {
    data_dir().join("adult")
}

/// Adult's header and its records repeated to at least `bytes`.
fn repeated_adult(bytes: usize) -> Vec<u8> {
    let text = std::fs::read(adult_dir().join("adult.csv")).expect("adult");
    let header_end = text.iter().position(|&b| b == b'\n').expect("header") + 1;
    let mut out = Vec::with_capacity(bytes + text.len());
    out.extend_from_slice(&text[..header_end]);
    while out.len() < bytes {
        out.extend_from_slice(&text[header_end..]);
    }
    out
}

fn quasi_identifiers(dir: &Path, prefix: &str, columns: &[&str]) -> serde_json::Map<String, Value> {
    columns
        .iter()
        .map(|&c| {
            let arx = std::fs::read_to_string(dir.join(format!("{prefix}_hierarchy_{c}.csv")))
                .expect("hierarchy");
            (
                c.to_string(),
                json!({"role": "quasi_identifier", "hierarchy": {"arx": arx}}),
            )
        })
        .collect()
}

fn adult_spec(dataset_id: &str, metric: &str, limit: f64) -> Value {
    let columns = [
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
        "salary-class",
    ];
    json!({
        "dataset_id": dataset_id,
        "attributes": quasi_identifiers(&adult_dir(), "adult", &columns),
        "privacy_models": [{"type": "k_anonymity", "k": 5}],
        "suppression_limit": limit,
        "algorithm": {"type": "optimal"},
        "metric": metric,
    })
}

fn adult_full_spec(dataset_id: &str) -> Value {
    let dir = data_dir().join("adult_full");
    let header = std::fs::read_to_string(dir.join("adult_full.csv")).expect("adult_full");
    let columns: Vec<&str> = header.lines().next().expect("header").split(';').collect();
    // columns with a hierarchy are quasi-identifiers, the others (education-num) insensitive
    let (with, without): (Vec<&str>, Vec<&str>) = columns
        .iter()
        .partition(|c| dir.join(format!("adult_full_hierarchy_{c}.csv")).exists());
    let mut attributes = quasi_identifiers(&dir, "adult_full", &with);
    for column in without {
        attributes.insert(column.to_string(), json!({"role": "insensitive"}));
    }
    // the age hierarchy lists some leaves twice; keep each leaf's first row
    if let Some(age) = attributes.get_mut("age") {
        let arx = age["hierarchy"]["arx"].as_str().unwrap_or("").to_string();
        let mut seen = std::collections::HashSet::new();
        let deduplicated: String = arx
            .lines()
            .filter(|l| seen.insert(l.split(';').next().unwrap_or("").to_string()))
            .map(|l| format!("{l}\n"))
            .collect();
        age["hierarchy"]["arx"] = Value::String(deduplicated);
    }
    json!({
        "dataset_id": dataset_id,
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": 5}],
        "suppression_limit": 0.02,
        "algorithm": {"type": "optimal"},
        "metric": "nu_entropy",
    })
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}
