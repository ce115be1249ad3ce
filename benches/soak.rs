//! Soak: the real binary (`anonymizer serve`) for minutes under a mix of normal and hostile load, on
//! SQLite and on PostgreSQL, watching for errors, latency drift and leaks. At once:
//! - status polling: an open-loop 200 `GET /v1/jobs/{id}` a second;
//! - whole jobs, one after another: upload adult (30,162 records), submit 5-anonymity, poll, download
//!   the output, check that it is 5-anonymous over its quasi-identifiers, delete the dataset;
//! - slow uploads: four at a time, each trickling under `--upload-min-rate` until the server answers 408;
//! - idle connections: a pool of idle TCP connections kept open (the server closes them after its
//!   header-read timeout; they are opened again);
//! - junk: a NUL byte in a dataset name (422), an oversized job body (413), an unterminated quote (422),
//!   a wrong key (401), one a second.
//!
//! Every answer is checked; any unexpected status, failed job or request error fails the soak. Every
//! interval prints status p50/p99/max, jobs done, the server's resident memory and open file
//! descriptors; the summary compares the first and last intervals (a leak shows as growth).
//!
//! `cargo bench --bench soak -- [sqlite|postgres] [--minutes M]` (default both stores, 10 minutes each;
//! or `scripts/soak`). Without `--bench` (as `cargo test --all-targets` runs it) a 6-second round on
//! SQLite with fewer idle connections checks that it works.

#[path = "support/served.rs"]
mod served;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use served::{Backend, Database, Server, KEY};

/// The soak's settings.
#[derive(Clone, Copy)]
struct Plan {
    length: Duration,
    intervals: u32,
    idle_connections: usize,
    status_rate: u32,
    /// The server's `--upload-idle-timeout-secs`: how long a slow upload lasts before its 408.
    upload_window_secs: u64,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut minutes = 10.0f64;
    let mut stores = vec![Backend::Sqlite, Backend::Postgres];
    let mut benchmarking = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => benchmarking = true,
            "--minutes" => minutes = args.next().and_then(|m| m.parse().ok()).unwrap_or(minutes),
            "sqlite" => stores = vec![Backend::Sqlite],
            "postgres" => stores = vec![Backend::Postgres],
            _ => {}
        }
    }
    let plan = if benchmarking {
        Plan {
            length: Duration::from_secs_f64(minutes * 60.0),
            intervals: 10,
            idle_connections: 1000,
            status_rate: 200,
            upload_window_secs: 30,
        }
    } else {
        stores = vec![Backend::Sqlite];
        Plan {
            length: Duration::from_secs(6),
            intervals: 2,
            idle_connections: 50,
            status_rate: 50,
            upload_window_secs: 2,
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    raise_file_limit();
    for store in stores {
        runtime.block_on(soak(store, plan));
    }
}

/// What the load tasks saw, shared with the sampler.
#[derive(Default)]
struct Observed {
    /// Status latencies (ms) per interval.
    status: Mutex<HashMap<u32, Vec<f64>>>,
    /// Whole jobs (ms) per interval.
    jobs: Mutex<HashMap<u32, Vec<f64>>>,
    slow_uploads_refused: AtomicU64,
    idle_reopened: AtomicU64,
    junk_refused: AtomicU64,
    /// Oversized bodies whose 413 the client could not read: the server answers before the body has
    /// arrived and closes the connection, which can reset it under the unsent rest.
    oversized_reset: AtomicU64,
    /// Unexpected answers, described without data.
    unexpected: Mutex<Vec<String>>,
}

impl Observed {
    fn unexpected(&self, what: String) {
        let mut list = self.unexpected.lock().expect("lock");
        if list.len() < 20 {
            list.push(what);
        }
    }
}

/// One interval's samples of the server process.
struct Sample {
    rss_mib: f64,
    fds: usize,
}

async fn soak(store: Backend, plan: Plan) {
    let database = Database::create(store).await;
    let window = plan.upload_window_secs.to_string();
    let server = Arc::new(
        Server::start(
            &database.url,
            &[
                ("ANONYMIZER_WORKER_SLOTS", "1"),
                // the defaults, which the bench server raises for its large inputs
                ("ANONYMIZER_JOB_BODY_LIMIT", "1048576"),
                ("ANONYMIZER_UPLOAD_LIMIT", "268435456"),
                ("ANONYMIZER_UPLOAD_IDLE_TIMEOUT_SECS", &window),
                // one tenant runs every load here: room for its four slow uploads beside the others
                ("ANONYMIZER_MAX_UPLOADS_PER_TENANT", "8"),
            ],
        )
        .await,
    );
    let started = Instant::now();
    let interval = plan.length / plan.intervals;
    let observed = Arc::new(Observed::default());
    let slot = move |at: Instant| {
        (at.duration_since(started).as_secs_f64() / interval.as_secs_f64()) as u32
    };
    let end = started + plan.length;

    // a job whose status the pollers read
    let adult = std::fs::read(adult_dir().join("adult.csv")).expect("adult");
    let dataset = upload(&server, "status-target", adult.clone()).await;
    let target = submit(&server, &adult_spec(&dataset)).await;

    let mut tasks = tokio::task::JoinSet::new();
    {
        let (server, observed, target) = (server.clone(), observed.clone(), target.clone());
        tasks.spawn(async move {
            poll_status(&server, &observed, &target, plan.status_rate, end, slot).await
        });
    }
    {
        let (server, observed, adult) = (server.clone(), observed.clone(), adult.clone());
        tasks.spawn(async move { whole_jobs(&server, &observed, adult, end, slot).await });
    }
    for _ in 0..4 {
        let (server, observed) = (server.clone(), observed.clone());
        let window = Duration::from_secs(plan.upload_window_secs);
        tasks.spawn(async move { slow_uploads(&server, &observed, window, end).await });
    }
    {
        let (server, observed) = (server.clone(), observed.clone());
        tasks.spawn(async move {
            idle_connections(&server, &observed, plan.idle_connections, end).await
        });
    }
    {
        let (server, observed) = (server.clone(), observed.clone());
        tasks.spawn(async move { junk(&server, &observed, end).await });
    }

    println!(
        "soak on {} for {:.1} min: {} status GETs/s, whole adult jobs back to back, 4 slow uploads, {} idle connections, junk 1/s",
        store.name(),
        plan.length.as_secs_f64() / 60.0,
        plan.status_rate,
        plan.idle_connections
    );
    println!(
        "  interval | status p50 ms | p99 ms | max ms | jobs | job median s | RSS MiB | open fds"
    );
    let mut samples = Vec::new();
    for i in 0..plan.intervals {
        tokio::time::sleep_until((started + interval * (i + 1)).into()).await;
        let sample = sample(server.pid());
        let mut status = observed
            .status
            .lock()
            .expect("lock")
            .remove(&i)
            .unwrap_or_default();
        let mut jobs = observed
            .jobs
            .lock()
            .expect("lock")
            .remove(&i)
            .unwrap_or_default();
        status.sort_by(f64::total_cmp);
        jobs.sort_by(f64::total_cmp);
        let at = |v: &[f64], q: f64| {
            v.get(((v.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        println!(
            "  {:>8} | {:>13.2} | {:>6.2} | {:>6.1} | {:>4} | {:>12.2} | {:>7.1} | {:>8}",
            i + 1,
            at(&status, 0.5),
            at(&status, 0.99),
            status.last().copied().unwrap_or(f64::NAN),
            jobs.len(),
            at(&jobs, 0.5) / 1000.0,
            sample.rss_mib,
            sample.fds
        );
        samples.push((sample, at(&status, 0.99)));
    }
    while let Some(task) = tasks.join_next().await {
        task.expect("a load task panicked");
    }
    let peak = peak_rss_mib(server.pid());
    let unexpected = observed.unexpected.lock().expect("lock").clone();
    let (first, last) = (&samples[0], &samples[samples.len() - 1]);
    println!(
        "  summary on {}: RSS {:.1} → {:.1} MiB (peak {:.1}), open fds {} → {}, status p99 {:.2} → {:.2} ms; \
         {} slow uploads refused with 408, {} idle connections reopened, {} junk requests refused \
         ({} oversized bodies reset before their 413 was read), {} unexpected",
        store.name(),
        first.0.rss_mib,
        last.0.rss_mib,
        peak,
        first.0.fds,
        last.0.fds,
        first.1,
        last.1,
        observed.slow_uploads_refused.load(Ordering::Relaxed),
        observed.idle_reopened.load(Ordering::Relaxed),
        observed.junk_refused.load(Ordering::Relaxed),
        observed.oversized_reset.load(Ordering::Relaxed),
        unexpected.len()
    );
    assert!(unexpected.is_empty(), "unexpected answers: {unexpected:#?}");
    drop(server);
    database.drop().await;
}

/// Open-loop status GETs at `rate` a second until `end`.
async fn poll_status(
    server: &Server,
    observed: &Arc<Observed>,
    target: &str,
    rate: u32,
    end: Instant,
    slot: impl Fn(Instant) -> u32,
) {
    let every = Duration::from_secs(1) / rate;
    let mut next = Instant::now();
    let mut inflight = tokio::task::JoinSet::new();
    while next < end {
        tokio::time::sleep_until(next.into()).await;
        let (client, url, observed) = (
            server.client.clone(),
            format!("{}{target}", server.base),
            observed.clone(),
        );
        let interval = slot(next);
        inflight.spawn(async move {
            let sent = Instant::now();
            match client.get(url).bearer_auth(KEY).send().await {
                Ok(response) if response.status() == 200 => {
                    let _ = response.bytes().await;
                    let ms = sent.elapsed().as_secs_f64() * 1000.0;
                    observed
                        .status
                        .lock()
                        .expect("lock")
                        .entry(interval)
                        .or_default()
                        .push(ms);
                }
                Ok(response) => {
                    observed.unexpected(format!("status GET answered {}", response.status()))
                }
                Err(error) => observed.unexpected(format!("status GET failed: {error:?}")),
            }
        });
        while inflight.try_join_next().is_some() {}
        next += every;
    }
    while inflight.join_next().await.is_some() {}
}

/// Upload → submit → poll → download → check → delete, back to back until `end`.
async fn whole_jobs(
    server: &Server,
    observed: &Arc<Observed>,
    adult: Vec<u8>,
    end: Instant,
    slot: impl Fn(Instant) -> u32,
) {
    while Instant::now() < end {
        let started = Instant::now();
        let dataset = upload(server, "soak-adult", adult.clone()).await;
        let location = submit(server, &adult_spec(&dataset)).await;
        let job = loop {
            let job: Value = server.get(&location).await.json().await.expect("job JSON");
            match job["state"].as_str().unwrap_or("") {
                "succeeded" | "failed" | "cancelled" => break job,
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        if job["state"] != "succeeded" {
            observed.unexpected(format!("a job ended {}: {}", job["state"], job["failure"]));
        } else {
            let output = server
                .get(&format!("{location}/output"))
                .await
                .bytes()
                .await
                .expect("output");
            if let Err(problem) = check_k_anonymous(&output, 5) {
                observed.unexpected(problem);
            }
            observed
                .jobs
                .lock()
                .expect("lock")
                .entry(slot(started))
                .or_default()
                .push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let deleted = server
            .client
            .delete(format!("{}/v1/datasets/{dataset}", server.base))
            .bearer_auth(KEY)
            .send()
            .await
            .expect("delete");
        if deleted.status() != 204 {
            observed.unexpected(format!("deleting a dataset answered {}", deleted.status()));
        }
    }
}

/// Checks, independently of the engine, that every combination of quasi-identifier values in `csv`
/// occurs at least `k` times (suppressed records included: they share one all-`*` combination).
fn check_k_anonymous(csv: &[u8], k: usize) -> Result<(), String> {
    let text = std::str::from_utf8(csv).map_err(|_| "the output is not UTF-8".to_string())?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(';').collect();
    let columns: Vec<usize> = ADULT_QUASI_IDENTIFIERS
        .iter()
        .map(|q| {
            header
                .iter()
                .position(|h| h == q)
                .ok_or(format!("the output has no column {q}"))
        })
        .collect::<Result<_, _>>()?;
    let mut classes: HashMap<Vec<&str>, usize> = HashMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split(';').collect();
        *classes
            .entry(
                columns
                    .iter()
                    .map(|&c| fields.get(c).copied().unwrap_or(""))
                    .collect(),
            )
            .or_default() += 1;
    }
    match classes.values().min() {
        Some(&smallest) if smallest < k => Err(format!(
            "an output class has {smallest} records, fewer than {k}"
        )),
        _ => Ok(()),
    }
}

/// Uploads that trickle 64 bytes a second (under the server's 1 KiB/s minimum) until refused, which
/// takes about `window`; one starts only when it can end before `end`.
async fn slow_uploads(server: &Server, observed: &Arc<Observed>, window: Duration, end: Instant) {
    while Instant::now() + window + Duration::from_secs(3) < end {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", server.port)).await else {
            observed.unexpected("a slow upload could not connect".to_string());
            return;
        };
        let head = format!(
            "POST /v1/datasets?delimiter=%3B HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {KEY}\r\n\
             Content-Type: text/csv\r\nContent-Length: 100000000\r\n\r\nage;disease\n"
        );
        if stream.write_all(head.as_bytes()).await.is_err() {
            observed.unexpected("a slow upload's headers could not be sent".to_string());
            continue;
        }
        let mut response = [0u8; 64];
        let status = loop {
            tokio::select! {
                read = stream.read(&mut response) => break match read {
                    Ok(n) if n >= 12 => String::from_utf8_lossy(&response[9..12]).into_owned(),
                    _ => "closed".to_string(),
                },
                () = tokio::time::sleep(Duration::from_secs(1)) => {
                    if stream.write_all(&b"31;flu\n".repeat(10)[..64]).await.is_err() {
                        break "closed".to_string();
                    }
                }
            }
        };
        if status == "408" {
            observed
                .slow_uploads_refused
                .fetch_add(1, Ordering::Relaxed);
        } else {
            observed.unexpected(format!("a slow upload got {status}, not 408"));
        }
    }
}

/// Keeps `count` idle connections open until `end`, reopening those the server closes.
async fn idle_connections(server: &Server, observed: &Arc<Observed>, count: usize, end: Instant) {
    let mut open = tokio::task::JoinSet::new();
    for _ in 0..count {
        let port = server.port;
        let observed = observed.clone();
        open.spawn(async move {
            let mut first = true;
            while Instant::now() < end {
                let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                if !first {
                    observed.idle_reopened.fetch_add(1, Ordering::Relaxed);
                }
                first = false;
                let mut byte = [0u8; 1];
                let left = end.saturating_duration_since(Instant::now());
                // resolves when the server closes the connection (or at the end)
                let _ = tokio::time::timeout(left, stream.read(&mut byte)).await;
            }
        });
    }
    while open.join_next().await.is_some() {}
}

/// One hostile request a second, each answered with its expected status.
async fn junk(server: &Server, observed: &Arc<Observed>, end: Instant) {
    let oversized = vec![b' '; 2 << 20];
    let mut round = 0u32;
    while Instant::now() < end {
        let client = &server.client;
        let (what, expected, request) = match round % 4 {
            0 => (
                "a NUL byte in a dataset name",
                422,
                client
                    .post(format!(
                        "{}/v1/datasets?name=a%00b&delimiter=;",
                        server.base
                    ))
                    .bearer_auth(KEY)
                    .header("content-type", "text/csv")
                    .body("age;disease\n31;flu\n"),
            ),
            1 => (
                "an oversized job body",
                413,
                client
                    .post(format!("{}/v1/jobs", server.base))
                    .bearer_auth(KEY)
                    .header("content-type", "application/json")
                    .body(oversized.clone()),
            ),
            2 => (
                "an unterminated quote",
                422,
                client
                    .post(format!("{}/v1/datasets?delimiter=;", server.base))
                    .bearer_auth(KEY)
                    .header("content-type", "text/csv")
                    .body("a;b\nx;\"abc\nx;2\n"),
            ),
            _ => (
                "a wrong key",
                401,
                client
                    .get(format!("{}/v1/datasets", server.base))
                    .bearer_auth("anz_wrong"),
            ),
        };
        match request.send().await {
            Ok(response) if response.status() == expected => {
                observed.junk_refused.fetch_add(1, Ordering::Relaxed);
            }
            Ok(response) => observed.unexpected(format!(
                "{what} answered {}, not {expected}",
                response.status()
            )),
            Err(_) if expected == 413 => {
                observed.oversized_reset.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => observed.unexpected(format!("{what} failed: {error:?}")),
        }
        round += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

// ---------------------------------------------------------------------------------------------------
// the server process

fn sample(pid: u32) -> Sample {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    Sample {
        rss_mib: status_kib(&status, "VmRSS:") / 1024.0,
        fds: std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| d.count())
            .unwrap_or(0),
    }
}

fn peak_rss_mib(pid: u32) -> f64 {
    status_kib(
        &std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default(),
        "VmHWM:",
    ) / 1024.0
}

fn status_kib(status: &str, field: &str) -> f64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Idle connections need file descriptors on this side too.
fn raise_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write and read the struct passed by pointer only.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// data and requests

const ADULT_QUASI_IDENTIFIERS: [&str; 9] = [
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

fn adult_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/adult"))
}

fn adult_spec(dataset_id: &str) -> Value {
    let attributes: serde_json::Map<String, Value> = ADULT_QUASI_IDENTIFIERS
        .iter()
        .map(|&c| {
            let arx = std::fs::read_to_string(adult_dir().join(format!("adult_hierarchy_{c}.csv")))
                .expect("hierarchy");
            (
                c.to_string(),
                json!({"role": "quasi_identifier", "hierarchy": {"arx": arx}}),
            )
        })
        .collect();
    json!({
        "dataset_id": dataset_id,
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": 5}],
        "suppression_limit": 0.04,
        "algorithm": {"type": "optimal"},
        "metric": "nu_entropy",
    })
}

async fn upload(server: &Server, name: &str, csv: Vec<u8>) -> String {
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
    assert_eq!(response.status(), 201, "upload");
    let body: Value = response.json().await.expect("JSON");
    body["id"].as_str().expect("dataset id").to_string()
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
    assert_eq!(response.status(), 202, "submit");
    response.headers()["location"]
        .to_str()
        .expect("location")
        .to_string()
}
