//! The workers: claim queued jobs and run them on the engine. This is the only place that turns a queued
//! job into an engine run.
//!
//! - [`Worker`] holds what every job needs (store, table cache, metrics, one named rayon pool, the
//!   executor) and its [`WorkerSettings`]. [`Worker::run_once`] claims one job and runs it to its
//!   terminal state (tests drive jobs with it); [`Worker::run`] is the supervisor of a process.
//! - `runner`: one job from claim to terminal state; `heartbeat`: lease renewal, progress and cancel
//!   pickup; `control`: the job's engine `Control` (stop flag with reason, deadline, progress);
//!   `terminal`: the fenced terminal writes; `execute`: what runs on the blocking thread;
//!   `supervisor`: slots, wake-ups and graceful shutdown.
//!
//! Every write after the claim is fenced on the attempt: once another worker owns a job, this one's
//! writes change nothing and its output is dropped.

mod control;
mod execute;
mod heartbeat;
mod memory;
mod output;
mod runner;
mod supervisor;
mod terminal;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use uuid::Uuid;

pub use control::StopReason;
pub use execute::{default_executor, run_pipeline, ExecuteError, Executor, JobInput, JobOutput};
pub use output::OutputCsv;

pub use terminal::JobOutcome;

use crate::config::ServeConfig;
use crate::store::{Store, StoreError};
use crate::tables::TableCache;
use crate::telemetry::prometheus::ServiceMetrics;
use control::JobControl;

/// How long an idle supervisor waits for a wake-up before it looks at the queue again.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How a worker claims and runs jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerSettings {
    /// Written to a claimed job's `lease_owner` (e.g. `host-1234-ab12cd34`).
    pub worker_id: String,
    /// Jobs run at once by the supervisor.
    pub slots: u32,
    /// Engine threads per job (the rayon pool has `slots × threads_per_job` threads).
    pub threads_per_job: u32,
    /// How long a claim lasts without a heartbeat.
    pub lease: Duration,
    /// Running jobs one tenant may have at once (across all workers); 0 means no cap.
    pub tenant_max_running: u32,
    /// How long a job may run before it is stopped and failed with `deadline_exceeded`.
    pub deadline: Duration,
    /// How long an idle supervisor waits before it looks at the queue again.
    pub poll_interval: Duration,
    /// Bytes the jobs running at once in this process may be expected to need together (each job's
    /// estimate, see `domain::run::memory`); a job waits for running jobs to give memory back, and one larger
    /// than the whole budget fails with `memory_budget_exceeded`. 0: no budget.
    pub memory_budget: u64,
}

impl WorkerSettings {
    /// The settings of `anonymizer serve`, with a fresh [`worker_id`].
    pub fn from_config(config: &ServeConfig) -> Self {
        WorkerSettings {
            worker_id: worker_id(),
            slots: config.worker_slots,
            threads_per_job: config.threads_per_job,
            lease: config.lease(),
            tenant_max_running: config.tenant_max_running,
            deadline: config.job_deadline(),
            poll_interval: DEFAULT_POLL_INTERVAL,
            memory_budget: config.job_memory_budget,
        }
    }
}

/// Niceness of the engine threads: CPU-bound jobs yield to the API, the heartbeats and the database on
/// the same machine, so status polls stay fast while jobs run.
pub const ENGINE_NICENESS: i32 = 10;

/// Lowers the calling thread's scheduling priority to [`ENGINE_NICENESS`] (Linux: per thread). Best
/// effort: a failure only leaves the thread at normal priority.
fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority has no memory effects; `who = 0` names the calling thread on Linux.
    unsafe {
        let _ = libc::setpriority(libc::PRIO_PROCESS, 0, ENGINE_NICENESS);
    }
}

/// A worker id unique to this process: `hostname-pid-` and 8 random hex digits.
pub fn worker_id() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_string());
    let random = Uuid::new_v4().simple().to_string();
    format!("{host}-{}-{}", std::process::id(), &random[..8])
}

/// What [`Worker::run_once`] did with the job it claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRunSummary {
    /// The job.
    pub job_id: Uuid,
    /// The attempt this worker ran.
    pub attempt: i64,
    /// How it ended.
    pub outcome: JobOutcome,
    /// From claim to terminal write.
    pub elapsed: Duration,
}

/// Claims queued jobs and runs them; cheap to clone (clones share the pool and the running jobs).
#[derive(Clone)]
pub struct Worker {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("settings", &self.shared.settings)
            .finish_non_exhaustive()
    }
}

/// What every job of a worker shares.
struct Shared {
    store: Store,
    tables: TableCache,
    metrics: Arc<ServiceMetrics>,
    settings: WorkerSettings,
    pool: Arc<rayon::ThreadPool>,
    executor: Executor,
    /// The memory budget the running jobs share; None without a budget.
    memory: Option<Arc<memory::MemoryBudget>>,
    /// The controls of the jobs running now, by job and attempt.
    running: Mutex<HashMap<(Uuid, i64), Arc<JobControl>>>,
}

impl Shared {
    /// Lists a running job until the returned guard is dropped.
    fn register(&self, id: Uuid, attempt: i64, control: Arc<JobControl>) -> Registration<'_> {
        self.running_jobs().insert((id, attempt), control);
        Registration {
            shared: self,
            key: (id, attempt),
        }
    }

    fn running_jobs(&self) -> std::sync::MutexGuard<'_, HashMap<(Uuid, i64), Arc<JobControl>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Removes a job from the running list when its run ends (or its future is dropped).
struct Registration<'a> {
    shared: &'a Shared,
    key: (Uuid, i64),
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.shared.running_jobs().remove(&self.key);
    }
}

impl Worker {
    /// A worker running the real pipeline, with its engine pool of `slots × threads_per_job` threads
    /// named `anonymizer-engine-N`. Fails only when the pool's threads cannot be started.
    pub fn new(
        store: Store,
        tables: TableCache,
        metrics: Arc<ServiceMetrics>,
        settings: WorkerSettings,
    ) -> Result<Worker, rayon::ThreadPoolBuildError> {
        let threads = settings
            .slots
            .max(1)
            .saturating_mul(settings.threads_per_job.max(1));
        let pool = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("anonymizer-engine-{i}"))
            .num_threads(usize::try_from(threads).unwrap_or(1))
            .start_handler(|_| lower_thread_priority())
            .build()?;
        let memory = memory::MemoryBudget::new(settings.memory_budget).map(Arc::new);
        Ok(Worker {
            shared: Arc::new(Shared {
                store,
                tables,
                metrics,
                settings,
                pool: Arc::new(pool),
                executor: default_executor(),
                memory,
                running: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The same worker running `executor` instead of the real pipeline (tests: a panicking or endless
    /// job). Call it before the worker is cloned.
    pub fn with_executor(self, executor: Executor) -> Worker {
        let shared = match Arc::try_unwrap(self.shared) {
            Ok(shared) => Shared { executor, ..shared },
            Err(shared) => Shared {
                store: shared.store.clone(),
                tables: shared.tables.clone(),
                metrics: shared.metrics.clone(),
                settings: shared.settings.clone(),
                pool: shared.pool.clone(),
                executor,
                memory: shared.memory.clone(),
                running: Mutex::new(HashMap::new()),
            },
        };
        Worker {
            shared: Arc::new(shared),
        }
    }

    /// The worker's settings.
    pub fn settings(&self) -> &WorkerSettings {
        &self.shared.settings
    }

    /// Claims one job and runs it to its terminal state; None when nothing is queued. Only the claim's
    /// error is returned: whatever happens to the job afterwards is in the summary.
    pub async fn run_once(&self) -> Result<Option<JobRunSummary>, StoreError> {
        let Some(job) = self.claim().await? else {
            return Ok(None);
        };
        Ok(Some(runner::run(&self.shared, job, None).await))
    }

    async fn claim(&self) -> Result<Option<crate::store::ClaimedJob>, StoreError> {
        let lease_ms = i64::try_from(self.shared.settings.lease.as_millis()).unwrap_or(i64::MAX);
        self.shared
            .store
            .claim_next_capped(
                &self.shared.settings.worker_id,
                lease_ms,
                self.shared.settings.tenant_max_running,
            )
            .await
    }

    /// Tells every job running now to stop for `reason`.
    fn stop_running(&self, reason: StopReason) {
        for control in self.shared.running_jobs().values() {
            control.stop(reason);
        }
    }

    /// The jobs running now, as `(id, attempt)`.
    fn running(&self) -> Vec<(Uuid, i64)> {
        self.shared.running_jobs().keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn engine_threads_run_niced() {
        let nice = std::thread::spawn(|| {
            lower_thread_priority();
            // SAFETY: reads the calling thread's priority.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        })
        .join()
        .unwrap();
        assert_eq!(nice, ENGINE_NICENESS);
        // only that thread: this one keeps its priority
        // SAFETY: as above.
        assert_ne!(
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) },
            ENGINE_NICENESS
        );
    }
}
