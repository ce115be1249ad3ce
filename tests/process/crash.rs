//! The worker pool in the real binary (`anonymizer serve --role worker`), against real databases:
//! - a worker process killed with SIGKILL while the engine searches a long job leaves it `running`;
//!   once its lease (2 s) expires, a new process reclaims and finishes it as attempt 2, the dataset is
//!   intact and the output k-anonymous (on SQLite and on PostgreSQL);
//! - two worker processes sharing one PostgreSQL queue run 20 jobs exactly once between them.
//!
//! Every wait is bounded, and child processes are killed when a test fails (see [`Server`]).

use crate::database;
use crate::support;
use crate::tools::sha256_hex;

use std::collections::HashMap;
use std::fs::File;
use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anonymizer::store::{Backend, DatasetMeta, Job, JobState, Store};
use uuid::Uuid;

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// adult_full's columns, in file order.
const COLUMNS: [&str; 15] = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "salary-class",
];

/// Quasi-identifiers of the long job: every column with a usable hierarchy except fnlwgt (13 columns;
/// a few seconds with `optimal` and `nu_entropy`).
const LONG_QIS: [&str; 13] = [
    "age",
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "salary-class",
];

/// Quasi-identifiers of the small jobs (well under a second each).
const SMALL_QIS: [&str; 9] = [
    "age",
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
    "salary-class",
];

const K: usize = 5;
const SUPPRESSION_LIMIT: f64 = 0.02;

// ---------------------------------------------------------------------------------------------------
// databases

/// Runs `case` with the URL of a fresh, migrated SQLite database.
async fn on_sqlite<F, Fut>(case: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    database::with_url(Backend::Sqlite, case).await
}

/// Runs `case` with the URL of a fresh, migrated PostgreSQL database, dropped afterwards.
async fn on_postgres<F, Fut>(case: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    database::with_url(Backend::Postgres, case).await
}

// ---------------------------------------------------------------------------------------------------
// worker processes

/// A running `anonymizer serve --role worker`; killed (SIGKILL) when dropped, so a failing test leaves
/// no process behind.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    /// Starts a worker process on `database_url` with a 2 s lease and one slot, logging JSON to a file
    /// in `dir`.
    fn start(database_url: &str, dir: &Path, name: &str) -> Server {
        let log = dir.join(format!("{name}.log"));
        let stderr = File::create(&log).expect("log file");
        let child = Command::new(BIN)
            .args(["serve", "--role", "worker", "--listen", "127.0.0.1:0"])
            .env("DATABASE_URL", database_url)
            .env("ANONYMIZER_DATA_DIR", dir)
            .env("ANONYMIZER_LEASE_SECS", "2")
            .env("ANONYMIZER_WORKER_SLOTS", "1")
            .env("ANONYMIZER_SHUTDOWN_GRACE_SECS", "5")
            .env("ANONYMIZER_LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("start the binary");
        Server { child, log }
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The address the server bound (from its `serving` log line), once it answers `/healthz`.
    async fn address(&mut self) -> SocketAddr {
        let started = Instant::now();
        loop {
            if let Some(exit) = self.child.try_wait().expect("try_wait") {
                panic!("the server exited with {exit}:\n{}", self.logs());
            }
            let address = self.logs().lines().find_map(|line| {
                let event: serde_json::Value = serde_json::from_str(line).ok()?;
                (event["message"] == "serving")
                    .then(|| event["address"].as_str()?.parse().ok())
                    .flatten()
            });
            if let Some(address) = address {
                if http_get(address, "/healthz").is_ok_and(|(status, _)| status == 200) {
                    return address;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not come up:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: the process dies at once, leaving its job `running` with a lease nobody renews.
    fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// SIGTERM, then waits (bounded) for the graceful exit.
    async fn terminate(&mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let started = Instant::now();
        loop {
            if let Some(exit) = self.child.try_wait().expect("try_wait") {
                return exit;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the server did not stop:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 GET; the status and the body.
fn http_get(address: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    Ok((status, body))
}

// ---------------------------------------------------------------------------------------------------
// fixtures

fn adult_full() -> Vec<u8> {
    std::fs::read(format!("{DATA}/adult_full/adult_full.csv")).expect("adult_full.csv")
}

/// Uploads adult_full through the store API.
async fn seed_dataset(store: &Store, tenant: Uuid, bytes: &[u8]) -> Uuid {
    let mut upload = store
        .begin_dataset(tenant, "adult_full.csv")
        .await
        .expect("begin");
    upload.write(bytes).await.expect("write");
    let columns: Vec<_> = COLUMNS
        .iter()
        .map(|c| serde_json::json!({"name": c}))
        .collect();
    upload
        .finish(DatasetMeta {
            byte_size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
            row_count: 32_561,
            columns_json: serde_json::Value::from(columns).to_string(),
            delimiter: ";".to_string(),
        })
        .await
        .expect("finish")
        .id
}

/// A k-anonymity spec on adult_full with `qis` as quasi-identifiers (hierarchies inlined as ARX text),
/// every other column insensitive. adult_full's own age hierarchy is not a tree, so age uses adult's.
fn spec(qis: &[&str]) -> String {
    let mut attributes = serde_json::Map::new();
    for column in COLUMNS {
        let attribute = if qis.contains(&column) {
            let path = if column == "age" {
                format!("{DATA}/adult/adult_hierarchy_age.csv")
            } else {
                format!("{DATA}/adult_full/adult_full_hierarchy_{column}.csv")
            };
            let text = std::fs::read_to_string(path).expect("hierarchy");
            serde_json::json!({"role": "quasi_identifier", "hierarchy": {"arx": text}})
        } else {
            serde_json::json!({"role": "insensitive"})
        };
        attributes.insert(column.to_string(), attribute);
    }
    serde_json::json!({
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": K}],
        "suppression_limit": SUPPRESSION_LIMIT,
        "algorithm": {"type": "optimal"},
        "metric": "nu_entropy",
    })
    .to_string()
}

async fn queue(store: &Store, tenant: Uuid, dataset: Uuid, spec: &str) -> Job {
    store
        .create_job(tenant, dataset, spec, None, &sha256_hex(spec.as_bytes()))
        .await
        .expect("create job")
        .0
}

/// Polls the job until `ready` holds; panics with the server's logs after `limit`.
async fn wait_for(
    store: &Store,
    tenant: Uuid,
    id: Uuid,
    limit: Duration,
    server: &Server,
    ready: impl Fn(&Job) -> bool,
) -> Job {
    let started = Instant::now();
    loop {
        let job = store.get_job(tenant, id).await.expect("get job");
        if ready(&job) {
            return job;
        }
        assert!(
            started.elapsed() < limit,
            "job in state {:?} (attempt {}, failure {:?}) after {limit:?}:\n{}",
            job.state,
            job.attempt,
            job.failure_code,
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether the job's stored progress says the engine is walking the lattice (or past it).
fn in_engine(job: &Job) -> bool {
    job.progress_json
        .as_deref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .is_some_and(|p| p["step"] == "searching" || p["step"] == "selecting")
}

async fn read_chunks<F, Fut>(mut chunk: F) -> Vec<u8>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Option<Vec<u8>>>,
{
    let mut out = Vec::new();
    let mut seq = 0;
    while let Some(bytes) = chunk(seq).await {
        out.extend_from_slice(&bytes);
        seq += 1;
    }
    out
}

/// Checks independently of the engine that `output` publishes every record of `input` with its other
/// columns unchanged, suppresses (all quasi-identifiers `*`) at most the budget, and puts every other
/// record in a class of at least `K` identical quasi-identifier tuples. Returns the suppressed count.
fn assert_k_anonymous(output: &[u8], input: &[u8], qis: &[&str]) -> usize {
    let (header, rows) = support::parse_csv(output, b';');
    let (input_header, input_rows) = support::parse_csv(input, b';');
    assert_eq!(header, input_header);
    assert_eq!(rows.len(), input_rows.len(), "every record is published");
    let qi_columns: Vec<usize> = qis
        .iter()
        .map(|q| header.iter().position(|h| h == q).expect("qi column"))
        .collect();
    let mut classes: HashMap<Vec<&str>, usize> = HashMap::new();
    let mut suppressed = 0;
    for (row, original) in rows.iter().zip(&input_rows) {
        for (c, (cell, value)) in row.iter().zip(original).enumerate() {
            if !qi_columns.contains(&c) {
                assert_eq!(cell, value, "column {} changed", header[c]);
            }
        }
        let key: Vec<&str> = qi_columns.iter().map(|&c| row[c].as_str()).collect();
        if key.iter().all(|cell| *cell == "*") {
            suppressed += 1;
        } else {
            *classes.entry(key).or_default() += 1;
        }
    }
    let budget = (SUPPRESSION_LIMIT * rows.len() as f64).floor() as usize;
    assert!(suppressed <= budget, "{suppressed} suppressed > {budget}");
    let smallest = classes.values().copied().min().unwrap_or(0);
    assert!(smallest >= K, "a class of {smallest} < k = {K}");
    suppressed
}

// ---------------------------------------------------------------------------------------------------
// cases

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_s_job_is_finished_by_the_next_process_on_sqlite() {
    on_sqlite(killed_worker_s_job_is_finished_by_the_next_process).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_s_job_is_finished_by_the_next_process_on_postgres() {
    on_postgres(killed_worker_s_job_is_finished_by_the_next_process).await;
}

async fn killed_worker_s_job_is_finished_by_the_next_process(url: String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::connect(&url, 4).await.expect("open store");
    let tenant = store
        .create_api_key("crash")
        .await
        .expect("key")
        .1
        .tenant_id;
    let input = adult_full();
    let dataset = seed_dataset(&store, tenant, &input).await;
    let job = queue(&store, tenant, dataset, &spec(&LONG_QIS)).await;

    let mut first = Server::start(&url, dir.path(), "first");
    let claimed = wait_for(
        &store,
        tenant,
        job.id,
        Duration::from_secs(30),
        &first,
        |j| j.state == JobState::Running && in_engine(j),
    )
    .await;
    assert_eq!(claimed.attempt, 1);
    first.kill();
    let orphan = store.get_job(tenant, job.id).await.expect("job");
    assert_eq!(
        (orphan.state, orphan.attempt),
        (JobState::Running, 1),
        "the killed process wrote no terminal state:\n{}",
        first.logs()
    );

    let restarted = Instant::now();
    let mut second = Server::start(&url, dir.path(), "second");
    let done = wait_for(
        &store,
        tenant,
        job.id,
        Duration::from_secs(90),
        &second,
        |j| j.state.is_terminal(),
    )
    .await;
    assert_eq!(
        (done.state, done.attempt),
        (JobState::Succeeded, 2),
        "failure {:?}:\n{}",
        done.failure_message,
        second.logs()
    );
    assert!(done.lease_owner.is_none());
    eprintln!(
        "attempt 2 finished {:?} after the restart",
        restarted.elapsed()
    );

    // the dataset is intact
    let stored = store.get_dataset(tenant, dataset).await.expect("dataset");
    let bytes = read_chunks(|seq| {
        let store = store.clone();
        async move { store.dataset_chunk(dataset, seq).await.expect("chunk") }
    })
    .await;
    assert_eq!(sha256_hex(&bytes), stored.sha256);
    assert_eq!(stored.sha256, sha256_hex(&input));

    // the output is k-anonymous and matches its report
    let result = store.job_result(tenant, job.id).await.expect("result");
    let output = read_chunks(|seq| {
        let store = store.clone();
        async move { store.job_output_chunk(job.id, seq).await.expect("chunk") }
    })
    .await;
    assert_eq!(sha256_hex(&output), result.output_sha256);
    let suppressed = assert_k_anonymous(&output, &input, &LONG_QIS);
    let report: serde_json::Value = serde_json::from_str(&result.report_json).expect("report");
    assert_eq!(report["suppressed_records"], suppressed);

    let exit = second.terminate().await;
    assert!(exit.success(), "{exit:?}:\n{}", second.logs());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_worker_processes_run_every_job_exactly_once() {
    on_postgres(two_processes_share_the_queue).await;
}

async fn two_processes_share_the_queue(url: String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::connect(&url, 4).await.expect("open store");
    let tenant = store
        .create_api_key("shared")
        .await
        .expect("key")
        .1
        .tenant_id;
    let input = adult_full();
    let dataset = seed_dataset(&store, tenant, &input).await;

    let mut servers = [
        Server::start(&url, dir.path(), "one"),
        Server::start(&url, dir.path(), "two"),
    ];
    let mut addresses = Vec::new();
    for server in &mut servers {
        addresses.push(server.address().await);
    }
    // a worker process serves the operations routes only
    let (status, _) = http_get(addresses[0], "/v1/jobs").expect("GET /v1/jobs");
    assert_eq!(status, 404);
    assert_eq!(http_get(addresses[0], "/readyz").expect("readyz").0, 200);

    let spec = spec(&SMALL_QIS);
    let mut jobs = Vec::new();
    for _ in 0..20 {
        jobs.push(queue(&store, tenant, dataset, &spec).await.id);
    }
    for id in &jobs {
        let done = wait_for(
            &store,
            tenant,
            *id,
            Duration::from_secs(60),
            &servers[0],
            |j| j.state.is_terminal(),
        )
        .await;
        assert_eq!(
            (done.state, done.attempt),
            (JobState::Succeeded, 1),
            "ran exactly once"
        );
    }
    let output = read_chunks(|seq| {
        let store = store.clone();
        let id = jobs[0];
        async move { store.job_output_chunk(id, seq).await.expect("chunk") }
    })
    .await;
    assert_k_anonymous(&output, &input, &SMALL_QIS);

    // each process counts the jobs it finished
    let mut finished = Vec::new();
    for address in &addresses {
        let (status, metrics) = http_get(*address, "/metrics").expect("GET /metrics");
        assert_eq!(status, 200);
        let count = metrics
            .lines()
            .find_map(|l| {
                l.strip_prefix("anonymizer_job_duration_seconds_count{outcome=\"succeeded\"} ")
            })
            .map_or(0, |n| n.trim().parse::<u64>().expect("count"));
        finished.push(count);
    }
    assert_eq!(finished.iter().sum::<u64>(), 20, "{finished:?}");
    assert!(
        finished.iter().all(|&n| n > 0),
        "both processes took part: {finished:?}"
    );

    for server in &mut servers {
        let exit = server.terminate().await;
        assert!(exit.success(), "{exit:?}:\n{}", server.logs());
    }
    store.close().await;
}
