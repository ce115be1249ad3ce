//! Integration suite of `src/worker`: jobs seeded through the store API and driven with `run_once` (or
//! the supervisor for shutdown and wake-ups) on SQLite (a temp file) and PostgreSQL (a fresh database per
//! test on TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres, dropped afterwards).
//! Real databases and the real engine; substitute executors only where a job must panic or run forever.

use crate::database;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anonymizer::core::control::{Control, Progress, Stage};
use anonymizer::core::error::CoreError;
use anonymizer::domain::run::RunError;
use anonymizer::store::{Backend, DatasetMeta, Job, JobFilter, JobState, Store, CHUNK_SIZE};
use anonymizer::tables::TableCache;
use anonymizer::telemetry::prometheus::ServiceMetrics;
use anonymizer::worker::{
    run_pipeline, ExecuteError, Executor, JobInput, JobOutcome, JobOutput, Worker, WorkerSettings,
};
use sha2::{Digest, Sha256};
use tokio::sync::{watch, Notify};
use uuid::Uuid;

/// Runs `case` on a migrated store of each backend, then cleans up even when the case panicked.
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::run_sqlite(super::$case).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::run_postgres(super::$case).await;
                }
            }
        )*
    };
}

on_both_backends!(
    a_real_job_succeeds_with_a_k_anonymous_output,
    concurrent_workers_run_distinct_jobs_once,
    a_panicking_engine_fails_the_job_and_the_worker_lives_on,
    a_cancel_request_stops_a_running_job,
    a_cancel_after_the_search_ends_the_job_cancelled,
    a_cancel_the_engine_never_saw_still_wins,
    a_deleted_running_job_stops_and_leaves_nothing,
    a_job_past_its_deadline_fails,
    a_lost_lease_drops_the_output,
    a_spec_that_no_longer_fits_fails_with_its_code,
    shutdown_releases_running_jobs,
    a_wake_up_starts_a_queued_job_at_once,
    a_quiet_tenant_waits_one_job_behind_a_busy_tenants_backlog,
    the_tenant_cap_keeps_a_slot_for_another_tenant,
    a_job_larger_than_the_memory_budget_fails_with_its_code,
    jobs_that_do_not_fit_the_memory_budget_together_run_one_after_another,
    progress_only_grows_and_ends_at_one_when_done,
);

async fn run_sqlite<F, Fut>(case: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    database::with_store(Backend::Sqlite, 8, case).await
}

async fn run_postgres<F, Fut>(case: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    database::with_store(Backend::Postgres, 16, case).await
}

// ---------------------------------------------------------------------------------------------------
// fixtures

const ARX_TEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/arx_test");

/// The quasi-identifiers of the arx_test table.
const QUASI_IDENTIFIERS: [&str; 3] = ["age", "gender", "zipcode"];

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn tenant(store: &Store) -> Uuid {
    named_tenant(store, "acme").await
}

async fn named_tenant(store: &Store, name: &str) -> Uuid {
    store
        .create_api_key(name)
        .await
        .expect("create key")
        .1
        .tenant_id
}

/// Uploads arx_test's table (7 rows, `;`-separated) through the store API.
async fn arx_dataset(store: &Store, tenant: Uuid) -> Uuid {
    let bytes = std::fs::read(format!("{ARX_TEST}/test.csv")).expect("test.csv");
    let mut upload = store
        .begin_dataset(tenant, "test.csv")
        .await
        .expect("begin");
    upload.write(&bytes).await.expect("write");
    upload
        .finish(DatasetMeta {
            byte_size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            row_count: 7,
            columns_json: r#"[{"name":"age"},{"name":"gender"},{"name":"zipcode"}]"#.to_string(),
            delimiter: ";".to_string(),
        })
        .await
        .expect("finish")
        .id
}

/// A k-anonymity spec for arx_test, hierarchies inlined as ARX text.
fn arx_spec(k: u64) -> String {
    let mut attributes = serde_json::Map::new();
    for column in QUASI_IDENTIFIERS {
        let text = std::fs::read_to_string(format!("{ARX_TEST}/test_hierarchy_{column}.csv"))
            .expect("hierarchy");
        attributes.insert(
            column.to_string(),
            serde_json::json!({"role": "quasi_identifier", "hierarchy": {"arx": text}}),
        );
    }
    serde_json::json!({
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": k}],
        "suppression_limit": 0.0,
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

fn settings(lease: Duration, deadline: Duration) -> WorkerSettings {
    WorkerSettings {
        worker_id: format!("test-{}", Uuid::new_v4().simple()),
        slots: 1,
        threads_per_job: 1,
        lease,
        tenant_max_running: 0,
        deadline,
        poll_interval: Duration::from_millis(50),
        memory_budget: 0,
    }
}

fn worker_with(store: &Store, settings: WorkerSettings) -> Worker {
    Worker::new(
        store.clone(),
        TableCache::default(),
        Arc::new(ServiceMetrics::default()),
        settings,
    )
    .expect("worker")
}

fn default_worker(store: &Store) -> Worker {
    worker_with(
        store,
        settings(Duration::from_secs(30), Duration::from_secs(60)),
    )
}

/// An executor that runs until its control stops it, then returns `stale` output (or Cancelled).
fn endless(return_output: bool) -> Executor {
    Arc::new(move |_input: &JobInput<'_>, control: &dyn Control| {
        while !control.is_cancelled() {
            std::thread::sleep(Duration::from_millis(5));
        }
        if return_output {
            Ok(JobOutput {
                csv: b"stale\n".to_vec().into(),
                report_json: r#"{"stale":true}"#.to_string(),
                outcome_json: None,
            })
        } else {
            Err(ExecuteError::Run(RunError::Core(CoreError::Cancelled)))
        }
    })
}

async fn get(store: &Store, tenant: Uuid, id: Uuid) -> Job {
    store.get_job(tenant, id).await.expect("get job")
}

/// Polls the job until `ready` holds (bounded: panics after 10 s).
async fn wait_for(store: &Store, tenant: Uuid, id: Uuid, ready: impl Fn(&Job) -> bool) -> Job {
    let started = Instant::now();
    loop {
        let job = get(store, tenant, id).await;
        if ready(&job) {
            return job;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "job never reached the expected state: {:?} attempt {}",
            job.state,
            job.attempt
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn read_output(store: &Store, id: Uuid) -> Vec<u8> {
    let mut out = Vec::new();
    let mut seq = 0;
    while let Some(chunk) = store.job_output_chunk(id, seq).await.expect("chunk") {
        assert!(chunk.len() <= CHUNK_SIZE);
        out.extend_from_slice(&chunk);
        seq += 1;
    }
    out
}

/// Checks independently of the engine that `csv` (`;`-separated, header first) keeps every row of
/// arx_test, and that every combination of quasi-identifier values occurs at least `k` times.
fn assert_k_anonymous(csv: &[u8], k: usize) {
    let text = std::str::from_utf8(csv).expect("utf-8 output");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(';').collect();
    assert_eq!(header, QUASI_IDENTIFIERS);
    let mut classes: HashMap<&str, usize> = HashMap::new();
    let mut rows = 0;
    for line in lines {
        assert_eq!(line.split(';').count(), 3, "ragged output row");
        *classes.entry(line).or_default() += 1;
        rows += 1;
    }
    assert_eq!(rows, 7, "every record is published");
    assert!(
        classes.values().all(|&n| n >= k),
        "a class is smaller than {k}: sizes {:?}",
        classes.values().collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------------------------------
// cases

async fn a_real_job_succeeds_with_a_k_anonymous_output(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let worker = default_worker(&store);

    let summary = worker.run_once().await.expect("claim").expect("a job");
    assert_eq!(summary.job_id, job.id);
    assert_eq!(summary.attempt, 1);
    assert_eq!(summary.outcome, JobOutcome::Succeeded);

    let done = get(&store, t, job.id).await;
    assert_eq!(done.state, JobState::Succeeded);
    assert_eq!(done.attempt, 1);
    assert!(done.finished_at.is_some() && done.lease_owner.is_none());
    let progress: serde_json::Value =
        serde_json::from_str(done.progress_json.as_deref().expect("progress")).expect("json");
    assert!(progress["phase"].is_string(), "{progress}");
    assert!(progress["fraction"].is_number(), "{progress}");

    let result = store.job_result(t, job.id).await.expect("result");
    let report: serde_json::Value = serde_json::from_str(&result.report_json).expect("report");
    assert_eq!(report["records"], 7);
    assert_eq!(report["privacy_models"][0], "2-anonymity");
    let output = read_output(&store, job.id).await;
    assert_eq!(result.output_byte_size, output.len() as u64);
    assert_eq!(result.output_sha256, sha256_hex(&output));
    assert_k_anonymous(&output, 2);

    assert_eq!(
        worker.run_once().await.expect("claim"),
        None,
        "queue is empty"
    );
}

async fn concurrent_workers_run_distinct_jobs_once(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let spec = arx_spec(2);
    let mut created = HashSet::new();
    for _ in 0..20 {
        created.insert(queue(&store, t, data, &spec).await.id);
    }
    let tables = TableCache::default();
    let metrics = Arc::new(ServiceMetrics::default());
    let mut workers = Vec::new();
    for _ in 0..8 {
        let worker = Worker::new(
            store.clone(),
            tables.clone(),
            metrics.clone(),
            settings(Duration::from_secs(30), Duration::from_secs(60)),
        )
        .expect("worker");
        workers.push(tokio::spawn(async move {
            let mut ran = Vec::new();
            while let Some(summary) = worker.run_once().await.expect("claim") {
                ran.push(summary);
            }
            ran
        }));
    }
    let mut ran = Vec::new();
    for worker in workers {
        ran.extend(worker.await.expect("worker"));
    }
    assert_eq!(ran.len(), 20, "every job ran once");
    assert_eq!(
        ran.iter().map(|s| s.job_id).collect::<HashSet<_>>(),
        created
    );
    assert!(ran
        .iter()
        .all(|s| s.outcome == JobOutcome::Succeeded && s.attempt == 1));
    for id in created {
        let job = get(&store, t, id).await;
        assert_eq!((job.state, job.attempt), (JobState::Succeeded, 1));
        assert_k_anonymous(&read_output(&store, id).await, 2);
    }
    let text = metrics.render(&Default::default());
    assert!(
        text.contains("anonymizer_job_duration_seconds_count{outcome=\"succeeded\"} 20"),
        "{text}"
    );
}

/// The real pipeline's control, with a pause at each stage so that heartbeats store every stage.
struct Lingering<'c> {
    inner: &'c dyn Control,
}

impl Control for Lingering<'_> {
    fn is_cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }
    fn report(&self, progress: Progress) {
        self.inner.report(progress);
    }
    fn enter(&self, stage: Stage) {
        self.inner.enter(stage);
        std::thread::sleep(Duration::from_millis(80));
    }
}

async fn progress_only_grows_and_ends_at_one_when_done(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let executor: Executor = Arc::new(|input: &JobInput<'_>, control: &dyn Control| {
        run_pipeline(input, &Lingering { inner: control })
    });
    // a 150 ms lease beats every 50 ms
    let worker = worker_with(
        &store,
        settings(Duration::from_millis(150), Duration::from_secs(60)),
    )
    .with_executor(executor);
    let running = tokio::spawn(async move { worker.run_once().await });
    let mut seen: Vec<serde_json::Value> = Vec::new();
    let started = Instant::now();
    loop {
        let current = get(&store, t, job.id).await;
        if let Some(progress) = current.progress_json.as_deref() {
            let progress: serde_json::Value = serde_json::from_str(progress).expect("json");
            if seen.last() != Some(&progress) {
                seen.push(progress);
            }
        }
        if current.state == JobState::Succeeded {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the job did not succeed: {:?}, {seen:?}",
            current.state
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let summary = running.await.expect("join").expect("claim").expect("a job");
    assert_eq!(summary.outcome, JobOutcome::Succeeded);
    let order = [
        "loading",
        "searching",
        "verifying",
        "measuring",
        "writing",
        "done",
    ];
    let stage = |p: &serde_json::Value| {
        order
            .iter()
            .position(|s| p["phase"] == *s)
            .unwrap_or_else(|| panic!("unknown phase in {p}"))
    };
    for pair in seen.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        assert!(stage(before) <= stage(after), "{before} then {after}");
        let (f0, f1) = (
            before["fraction"].as_f64().expect("fraction"),
            after["fraction"].as_f64().expect("fraction"),
        );
        assert!(f0 <= f1, "the fraction fell: {before} then {after}");
        if stage(before) == stage(after) {
            assert!(before["phase_fraction"].as_f64() <= after["phase_fraction"].as_f64());
        }
    }
    let phases: Vec<&str> = seen.iter().filter_map(|p| p["phase"].as_str()).collect();
    for expected in ["searching", "verifying", "measuring", "writing"] {
        assert!(
            phases.contains(&expected),
            "{expected} never stored: {phases:?}"
        );
    }
    let last = seen.last().expect("progress");
    assert_eq!(last["phase"], "done", "{seen:?}");
    assert_eq!(last["fraction"], 1.0);
    assert_eq!(last["phase_fraction"], 1.0);
}

async fn a_panicking_engine_fails_the_job_and_the_worker_lives_on(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let first = queue(&store, t, data, &arx_spec(2)).await;
    let second = queue(&store, t, data, &arx_spec(3)).await;
    let panicked = Arc::new(AtomicBool::new(false));
    let once = panicked.clone();
    let executor: Executor = Arc::new(move |input: &JobInput<'_>, control: &dyn Control| {
        if !once.swap(true, Ordering::SeqCst) {
            panic!("engine bug quoting a cell value");
        }
        run_pipeline(input, control)
    });
    let worker = default_worker(&store).with_executor(executor);

    let summary = worker.run_once().await.expect("claim").expect("a job");
    assert_eq!(summary.job_id, first.id);
    assert_eq!(
        summary.outcome,
        JobOutcome::Failed {
            code: "internal_error".into()
        }
    );
    assert!(panicked.load(Ordering::SeqCst));
    let failed = get(&store, t, first.id).await;
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(failed.failure_code.as_deref(), Some("internal_error"));
    let message = failed.failure_message.expect("message");
    assert_eq!(message, "the engine failed unexpectedly");

    let summary = worker.run_once().await.expect("claim").expect("a job");
    assert_eq!(summary.job_id, second.id);
    assert_eq!(summary.outcome, JobOutcome::Succeeded);
    assert_k_anonymous(&read_output(&store, second.id).await, 3);
}

async fn a_cancel_request_stops_a_running_job(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let worker = default_worker(&store).with_executor(endless(false));
    let running = tokio::spawn(async move { worker.run_once().await });
    // running, and the first heartbeat (progress) is in
    wait_for(&store, t, job.id, |j| {
        j.state == JobState::Running && j.progress_json.is_some()
    })
    .await;

    let asked = Instant::now();
    let after = store.request_cancel(t, job.id).await.expect("cancel");
    assert_eq!(after.state, JobState::Running);
    assert!(after.cancel_requested);
    let summary = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the job stops")
        .expect("task")
        .expect("claim")
        .expect("a job");
    let took = asked.elapsed();
    assert_eq!(summary.outcome, JobOutcome::Cancelled);
    assert!(
        took < Duration::from_millis(1500),
        "cancelled after {took:?}"
    );
    let cancelled = get(&store, t, job.id).await;
    assert_eq!(cancelled.state, JobState::Cancelled);
    assert!(cancelled.finished_at.is_some());
}

/// The real pipeline's control, held at `hold` until `go` is set; with `blind` it never reports a
/// stop (a cancel that arrives after the engine's last poll). Records the stages entered.
struct HeldAt<'c> {
    inner: &'c dyn Control,
    hold: Stage,
    go: Arc<AtomicBool>,
    blind: bool,
    entered: Arc<std::sync::Mutex<Vec<Stage>>>,
}

impl Control for HeldAt<'_> {
    fn is_cancelled(&self) -> bool {
        !self.blind && self.inner.is_cancelled()
    }
    fn report(&self, progress: Progress) {
        self.inner.report(progress);
    }
    fn enter(&self, stage: Stage) {
        self.inner.enter(stage);
        self.entered.lock().expect("stages").push(stage);
        if stage == self.hold {
            let started = Instant::now();
            while !self.go.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Runs arx_test through the real pipeline held at `hold`, asks for the cancellation there, lets the
/// pipeline go on once the heartbeat has seen it (or at once when `blind`) and checks that the job
/// ends cancelled with no output. Returns the stages the pipeline entered.
async fn cancel_while_held(store: Store, hold: Stage, blind: bool) -> Vec<Stage> {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let go = Arc::new(AtomicBool::new(false));
    let entered = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (go_in, entered_in) = (go.clone(), entered.clone());
    let executor: Executor = Arc::new(move |input: &JobInput<'_>, control: &dyn Control| {
        let held = HeldAt {
            inner: control,
            hold,
            go: go_in.clone(),
            blind,
            entered: entered_in.clone(),
        };
        run_pipeline(input, &held)
    });
    // a 150 ms lease beats every 50 ms; when `blind`, a 3 s lease beats every second, so that the run
    // ends before a beat can tell the worker: the terminal write alone must find the cancel
    let lease = if blind { 3000 } else { 150 };
    let worker = worker_with(
        &store,
        settings(Duration::from_millis(lease), Duration::from_secs(60)),
    )
    .with_executor(executor);
    let running = tokio::spawn(async move { worker.run_once().await });
    let stage_name = hold.name();
    wait_for(&store, t, job.id, |j| {
        j.progress_json
            .as_deref()
            .is_some_and(|p| p.contains(&format!("\"phase\":\"{stage_name}\"")))
    })
    .await;
    let after = store.request_cancel(t, job.id).await.expect("cancel");
    assert!(after.cancel_requested);
    if !blind {
        // two beats: the worker's control has seen the request
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    go.store(true, Ordering::SeqCst);
    let summary = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the job stops")
        .expect("task")
        .expect("claim")
        .expect("a job");
    assert_eq!(
        summary.outcome,
        JobOutcome::Cancelled,
        "held at {stage_name}"
    );
    let cancelled = get(&store, t, job.id).await;
    assert_eq!(cancelled.state, JobState::Cancelled);
    assert!(read_output(&store, job.id).await.is_empty());
    let stages = entered.lock().expect("stages").clone();
    stages
}

/// A cancel that arrives while the job measures its report ends it cancelled, and the
/// pipeline stops at the next stage boundary instead of finishing its work.
async fn a_cancel_after_the_search_ends_the_job_cancelled(store: Store) {
    let stages = cancel_while_held(store, Stage::Measuring, false).await;
    assert!(
        !stages.contains(&Stage::Writing),
        "the pipeline went on writing after the cancel: {stages:?}"
    );
}

/// A cancel the engine never saw (it arrived after the last poll) still wins over the finished
/// output: the terminal write finds it.
async fn a_cancel_the_engine_never_saw_still_wins(store: Store) {
    let stages = cancel_while_held(store, Stage::Writing, true).await;
    assert!(stages.contains(&Stage::Writing));
}

/// Deleting a running job (as `DELETE /v1/jobs/{id}` does: cancel, then delete) stops its worker at
/// the next heartbeat; the output it would have written is dropped and no row is left behind.
async fn a_deleted_running_job_stops_and_leaves_nothing(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let worker = default_worker(&store).with_executor(endless(true));
    let running = tokio::spawn(async move { worker.run_once().await });
    wait_for(&store, t, job.id, |j| {
        j.state == JobState::Running && j.progress_json.is_some()
    })
    .await;
    store.request_cancel(t, job.id).await.expect("cancel");
    store.delete_job(t, job.id).await.expect("delete");
    let summary = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the job stops")
        .expect("task")
        .expect("claim")
        .expect("a job");
    assert!(
        matches!(
            summary.outcome,
            JobOutcome::Cancelled | JobOutcome::LeaseLost
        ),
        "{:?}",
        summary.outcome
    );
    assert!(matches!(
        store.get_job(t, job.id).await,
        Err(anonymizer::store::StoreError::NotFound)
    ));
    assert_eq!(store.job_output_chunk(job.id, 0).await.unwrap(), None);
    assert!(matches!(
        store.delete_job(t, job.id).await,
        Err(anonymizer::store::StoreError::NotFound)
    ));
}

async fn a_job_past_its_deadline_fails(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let worker = worker_with(
        &store,
        settings(Duration::from_secs(30), Duration::from_millis(300)),
    )
    .with_executor(endless(false));
    let summary = tokio::time::timeout(Duration::from_secs(10), worker.run_once())
        .await
        .expect("the deadline stops the job")
        .expect("claim")
        .expect("a job");
    assert_eq!(
        summary.outcome,
        JobOutcome::Failed {
            code: "deadline_exceeded".into()
        }
    );
    assert!(summary.elapsed >= Duration::from_millis(300));
    let failed = get(&store, t, job.id).await;
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(failed.failure_code.as_deref(), Some("deadline_exceeded"));
    assert_eq!(
        failed.failure_message.as_deref(),
        Some("the job ran longer than the deadline of 0.3 s")
    );
}

async fn a_lost_lease_drops_the_output(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    // a 1 ms lease expires between two heartbeats: the first worker looks dead to the second
    let first = worker_with(
        &store,
        settings(Duration::from_millis(1), Duration::from_secs(60)),
    )
    .with_executor(endless(true));
    let second = default_worker(&store);
    let stale = tokio::spawn(async move { first.run_once().await });
    wait_for(&store, t, job.id, |j| j.state == JobState::Running).await;

    let started = Instant::now();
    let summary = loop {
        if let Some(summary) = second.run_once().await.expect("claim") {
            break summary;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never reclaimed"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    assert_eq!((summary.job_id, summary.attempt), (job.id, 2));
    assert_eq!(summary.outcome, JobOutcome::Succeeded);

    let stale = tokio::time::timeout(Duration::from_secs(10), stale)
        .await
        .expect("the first worker stops")
        .expect("task")
        .expect("claim")
        .expect("a job");
    assert_eq!((stale.job_id, stale.attempt), (job.id, 1));
    assert_eq!(stale.outcome, JobOutcome::LeaseLost);

    let done = get(&store, t, job.id).await;
    assert_eq!((done.state, done.attempt), (JobState::Succeeded, 2));
    let result = store.job_result(t, job.id).await.expect("result");
    assert!(!result.report_json.contains("stale"));
    let output = read_output(&store, job.id).await;
    assert_ne!(output, b"stale\n");
    assert_k_anonymous(&output, 2);
}

async fn a_spec_that_no_longer_fits_fails_with_its_code(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let mut spec: serde_json::Value = serde_json::from_str(&arx_spec(2)).expect("spec");
    spec["attributes"]["postcode"] = serde_json::json!({"role": "insensitive"});
    let job = queue(&store, t, data, &spec.to_string()).await;
    let summary = default_worker(&store)
        .run_once()
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(
        summary.outcome,
        JobOutcome::Failed {
            code: "unknown_column".into()
        }
    );
    let failed = get(&store, t, job.id).await;
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(failed.failure_code.as_deref(), Some("unknown_column"));
    assert!(failed
        .failure_message
        .as_deref()
        .is_some_and(|m| m.contains("/attributes/postcode")));
}

async fn shutdown_releases_running_jobs(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let worker = default_worker(&store).with_executor(endless(false));
    let (stop, stopping) = watch::channel(false);
    let supervisor = tokio::spawn(worker.run(
        Arc::new(Notify::new()),
        stopping,
        Duration::from_millis(200),
    ));
    wait_for(&store, t, job.id, |j| j.state == JobState::Running).await;

    stop.send(true).expect("supervisor listens");
    tokio::time::timeout(Duration::from_secs(10), supervisor)
        .await
        .expect("the supervisor stops")
        .expect("supervisor");
    let released = get(&store, t, job.id).await;
    assert_eq!(released.state, JobState::Queued);
    assert_eq!(released.attempt, 1);
    assert!(released.lease_owner.is_none() && released.lease_expires_at.is_none());

    // another process picks it up
    let summary = default_worker(&store)
        .run_once()
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!((summary.job_id, summary.attempt), (job.id, 2));
    assert_eq!(summary.outcome, JobOutcome::Succeeded);
}

async fn a_wake_up_starts_a_queued_job_at_once(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    let mut slow_poll = settings(Duration::from_secs(30), Duration::from_secs(60));
    slow_poll.poll_interval = Duration::from_secs(3600);
    slow_poll.slots = 2;
    let worker = worker_with(&store, slow_poll);
    let wake = Arc::new(Notify::new());
    let (stop, stopping) = watch::channel(false);
    let supervisor = tokio::spawn(worker.run(wake.clone(), stopping, Duration::from_secs(5)));
    // let the supervisor find the queue empty and go to sleep for an hour unless woken (had it not
    // yet, its claim finds the job instead: either order must start the job at once)
    tokio::time::sleep(Duration::from_millis(100)).await;
    let job = queue(&store, t, data, &arx_spec(2)).await;
    wake.notify_one();
    let done = wait_for(&store, t, job.id, |j| j.state == JobState::Succeeded).await;
    assert_eq!(done.attempt, 1);

    stop.send(true).expect("supervisor listens");
    tokio::time::timeout(Duration::from_secs(10), supervisor)
        .await
        .expect("the supervisor stops")
        .expect("supervisor");
}

/// Unix milliseconds, as the store writes them.
fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

/// Stops the supervisor and waits for it (bounded).
async fn stop_supervisor(stop: watch::Sender<bool>, supervisor: tokio::task::JoinHandle<()>) {
    stop.send(true).expect("supervisor listens");
    tokio::time::timeout(Duration::from_secs(10), supervisor)
        .await
        .expect("the supervisor stops")
        .expect("supervisor");
}

async fn a_quiet_tenant_waits_one_job_behind_a_busy_tenants_backlog(store: Store) {
    let busy = named_tenant(&store, "busy").await;
    let quiet = named_tenant(&store, "quiet").await;
    let busy_data = arx_dataset(&store, busy).await;
    let quiet_data = arx_dataset(&store, quiet).await;
    let spec = arx_spec(2);
    let mut backlog = Vec::new();
    for _ in 0..200 {
        backlog.push(queue(&store, busy, busy_data, &spec).await.id);
    }
    // one slot: the jobs run one after the other
    let worker = default_worker(&store);
    let (stop, stopping) = watch::channel(false);
    let supervisor =
        tokio::spawn(worker.run(Arc::new(Notify::new()), stopping, Duration::from_secs(5)));
    wait_for(&store, busy, backlog[0], |j| j.state != JobState::Queued).await;
    let submitted = queue(&store, quiet, quiet_data, &spec).await;
    // committed by now: every claim from the next millisecond on sees the quiet tenant's job
    let queued_at = unix_ms();
    let done = wait_for(&store, quiet, submitted.id, |j| {
        j.state == JobState::Succeeded
    })
    .await;
    stop_supervisor(stop, supervisor).await;

    let started = done.started_at.expect("started");
    let busy_jobs = store
        .list_jobs(busy, JobFilter::default(), None, 1000)
        .await
        .expect("list")
        .items;
    assert_eq!(busy_jobs.len(), 200);
    let overtaking = busy_jobs
        .iter()
        .filter(|j| j.started_at.is_some_and(|s| s > queued_at && s < started))
        .count();
    assert_eq!(
        overtaking, 0,
        "only the busy tenant's job that was running may finish first"
    );
    let before = busy_jobs
        .iter()
        .filter(|j| j.started_at.is_some_and(|s| s < started))
        .count();
    assert!(before < 200, "the backlog was not drained first");
    let mut durations: Vec<i64> = busy_jobs
        .iter()
        .filter_map(|j| Some(j.finished_at? - j.started_at?))
        .collect();
    durations.sort_unstable();
    eprintln!(
        "the quiet tenant's job started {} ms after it was queued, once {before} of the busy tenant's \
         200 jobs had started (a busy job took {} ms median, {} ms max)",
        started - queued_at,
        durations.get(durations.len() / 2).copied().unwrap_or(0),
        durations.last().copied().unwrap_or(0),
    );
}

async fn the_tenant_cap_keeps_a_slot_for_another_tenant(store: Store) {
    let busy = named_tenant(&store, "busy").await;
    let quiet = named_tenant(&store, "quiet").await;
    let busy_data = arx_dataset(&store, busy).await;
    let quiet_data = arx_dataset(&store, quiet).await;
    let spec = arx_spec(2);
    let first = queue(&store, busy, busy_data, &spec).await;
    // a later millisecond: within one, the claim order falls back to the random ids
    tokio::time::sleep(Duration::from_millis(3)).await;
    let second = queue(&store, busy, busy_data, &spec).await;
    let mut capped = settings(Duration::from_secs(30), Duration::from_secs(60));
    capped.slots = 2;
    capped.tenant_max_running = 1;
    let worker = worker_with(&store, capped).with_executor(endless(false));
    let (stop, stopping) = watch::channel(false);
    let supervisor = tokio::spawn(worker.run(
        Arc::new(Notify::new()),
        stopping,
        Duration::from_millis(200),
    ));
    wait_for(&store, busy, first.id, |j| j.state == JobState::Running).await;
    // without the cap the second slot would run the busy tenant's second job, and nothing would be
    // left for this one
    let submitted = queue(&store, quiet, quiet_data, &spec).await;
    wait_for(&store, quiet, submitted.id, |j| {
        j.state == JobState::Running
    })
    .await;
    assert_eq!(get(&store, busy, second.id).await.state, JobState::Queued);
    stop_supervisor(stop, supervisor).await;
}

async fn a_job_larger_than_the_memory_budget_fails_with_its_code(store: Store) {
    let t = tenant(&store).await;
    let data = arx_dataset(&store, t).await;
    // queued directly, as by a replica with a larger budget: the API would refuse it at submission
    let job = queue(&store, t, data, &arx_spec(2)).await;
    let mut small = settings(Duration::from_secs(30), Duration::from_secs(60));
    small.memory_budget = 16 << 20;
    let summary = worker_with(&store, small)
        .run_once()
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(
        summary.outcome,
        JobOutcome::Failed {
            code: "memory_budget_exceeded".into()
        }
    );
    let failed = get(&store, t, job.id).await;
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(
        failed.failure_code.as_deref(),
        Some("memory_budget_exceeded")
    );
    assert!(failed
        .failure_message
        .as_deref()
        .is_some_and(|m| m.contains("16 MiB")));
}

/// An executor that holds its job for `hold` and records how many jobs ran at once at most.
fn overlap_counter(hold: Duration) -> (Executor, Arc<AtomicUsize>) {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let most_seen = most.clone();
    let executor: Executor = Arc::new(move |_input: &JobInput<'_>, _control: &dyn Control| {
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        most_seen.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(hold);
        running.fetch_sub(1, Ordering::SeqCst);
        Ok(JobOutput {
            csv: b"age\n*\n".to_vec().into(),
            report_json: "{}".to_string(),
            outcome_json: None,
        })
    });
    (executor, most)
}

/// Runs three jobs on a two-slot supervisor with `memory_budget` and returns how many ran at once.
async fn most_jobs_at_once(store: &Store, memory_budget: u64) -> usize {
    let t = named_tenant(store, &format!("budget-{memory_budget}")).await;
    let data = arx_dataset(store, t).await;
    let mut jobs = Vec::new();
    for _ in 0..3 {
        jobs.push(queue(store, t, data, &arx_spec(2)).await.id);
    }
    let mut two_slots = settings(Duration::from_secs(30), Duration::from_secs(60));
    two_slots.slots = 2;
    two_slots.memory_budget = memory_budget;
    let (executor, most) = overlap_counter(Duration::from_millis(400));
    let worker = worker_with(store, two_slots).with_executor(executor);
    let (stop, stopping) = watch::channel(false);
    let supervisor = tokio::spawn(worker.run(
        Arc::new(Notify::new()),
        stopping,
        Duration::from_millis(200),
    ));
    for id in jobs {
        wait_for(store, t, id, |j| j.state == JobState::Succeeded).await;
    }
    stop_supervisor(stop, supervisor).await;
    most.load(Ordering::SeqCst)
}

async fn jobs_that_do_not_fit_the_memory_budget_together_run_one_after_another(store: Store) {
    // arx_test's jobs are expected to need a little over the 32 MiB base each
    assert_eq!(
        most_jobs_at_once(&store, 0).await,
        2,
        "no budget: both slots run"
    );
    assert_eq!(
        most_jobs_at_once(&store, 128 << 20).await,
        2,
        "room for both"
    );
    assert_eq!(
        most_jobs_at_once(&store, 48 << 20).await,
        1,
        "room for one: the second waits for the first"
    );
}
