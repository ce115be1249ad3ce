//! One claimed job, from claim to terminal state: load the dataset (through the shared table cache), the
//! spec and the stored hierarchies; run the executor on a blocking thread inside the worker's rayon pool
//! while a heartbeat keeps the lease; then write the terminal state the run calls for. Nothing here logs
//! a cell value or a panic payload.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;

use super::control::{JobControl, StopReason};
use super::execute::{ExecuteError, JobInput};
use super::heartbeat;
use super::memory::{Refusal, Reservation};
use super::terminal::{self, JobOutcome, Terminal};
use super::{JobRunSummary, Shared};
use crate::core::identifiers::PseudonymKey;
use crate::domain::run::RunError;
use crate::domain::JobSpec;
use crate::error_code::ErrorCode;
use crate::hierarchy_refs::{FetchError, StoredHierarchies};
use crate::store::{ClaimedJob, StoreError};
use crate::tables::LoadError;

/// The failure code of everything that is not the client's doing.
const INTERNAL_ERROR: ErrorCode = ErrorCode::InternalError;

/// The failure message of a panicking engine (the payload may quote data, so it is never shown).
const ENGINE_PANICKED: &str = "the engine failed unexpectedly";

/// What is left to do once the run is over.
enum Decision {
    /// Write this terminal state.
    Write(Terminal),
    /// Write nothing: the job is no longer this attempt's.
    Skip(JobOutcome),
}

/// Everything the executor needs, loaded before the engine starts.
struct Loaded {
    table: Arc<crate::core::data::Table>,
    spec: JobSpec,
    hierarchies: StoredHierarchies,
    delimiter: String,
    /// The tenant's pseudonym key, when the spec asks for pseudonyms.
    pseudonym_key: Option<PseudonymKey>,
    /// The population table the spec names.
    population: Option<Arc<crate::core::data::Table>>,
}

/// Runs `job` to its terminal state. `permit` (the supervisor's slot) is held until the engine's
/// blocking thread is done, even when this future is dropped earlier.
pub(super) async fn run(
    shared: &Arc<Shared>,
    job: ClaimedJob,
    permit: Option<OwnedSemaphorePermit>,
) -> JobRunSummary {
    let started = Instant::now();
    let deadline = shared.settings.deadline;
    let control = Arc::new(JobControl::new(started + deadline));
    let _registration = shared.register(job.id, job.attempt, control.clone());
    tracing::info!(job_id = %job.id, attempt = job.attempt, "job started");
    let beat = heartbeat::start(
        shared.store.clone(),
        job.id,
        job.attempt,
        control.clone(),
        shared.settings.lease,
    )
    .await;

    let decision = match load(shared, &job).await {
        Err(decision) => decision,
        Ok(_) if control.stop_reason().is_some() => stopped(&control, deadline),
        Ok(loaded) => match reserve_memory(shared, &job, &loaded, &control).await {
            Ok(reservation) => {
                execute(shared, loaded, &control, deadline, (permit, reservation)).await
            }
            Err(decision) => decision,
        },
    };
    drop(beat);

    let outcome = match decision {
        Decision::Write(terminal) => {
            terminal::write(&shared.store, job.id, job.attempt, terminal).await
        }
        Decision::Skip(outcome) => outcome,
    };
    let elapsed = started.elapsed();
    shared.metrics.observe_job(outcome.as_str(), elapsed);
    match &outcome {
        JobOutcome::Failed { code } => tracing::info!(
            job_id = %job.id, attempt = job.attempt, outcome = outcome.as_str(), code = %code,
            elapsed_ms = elapsed.as_millis() as u64, "job finished"
        ),
        _ => tracing::info!(
            job_id = %job.id, attempt = job.attempt, outcome = outcome.as_str(),
            elapsed_ms = elapsed.as_millis() as u64, "job finished"
        ),
    }
    JobRunSummary {
        job_id: job.id,
        attempt: job.attempt,
        outcome,
        elapsed,
    }
}

/// Reads the dataset's table (cached), the spec and the stored hierarchies.
async fn load(shared: &Shared, job: &ClaimedJob) -> Result<Loaded, Decision> {
    let dataset = match shared.store.get_dataset(job.tenant, job.dataset_id).await {
        Ok(dataset) => dataset,
        Err(StoreError::NotFound) => return Err(dataset_gone()),
        Err(error) => {
            tracing::warn!(job_id = %job.id, %error, "reading the job's dataset failed");
            return Err(fail(INTERNAL_ERROR, "the dataset could not be read"));
        }
    };
    let table = match shared.tables.load(&shared.store, &dataset).await {
        Ok(table) => table,
        Err(LoadError::Store(StoreError::NotFound)) => return Err(dataset_gone()),
        Err(error) => {
            tracing::warn!(job_id = %job.id, %error, "loading the job's dataset failed");
            return Err(fail(INTERNAL_ERROR, "the dataset could not be loaded"));
        }
    };
    let spec =
        JobSpec::from_json(job.spec_json.as_bytes()).map_err(|e| fail(e.code, e.to_string()))?;
    let hierarchies = match StoredHierarchies::fetch(&shared.store, job.tenant, &spec).await {
        Ok(hierarchies) => hierarchies,
        Err(FetchError::Spec(e)) => return Err(fail(e.code, e.to_string())),
        Err(FetchError::Store(error)) => {
            tracing::warn!(job_id = %job.id, %error, "reading the job's hierarchies failed");
            return Err(fail(
                INTERNAL_ERROR,
                "the job's hierarchies could not be read",
            ));
        }
    };
    // the tenant's key, created on its first job with pseudonyms
    let pseudonym_key = if spec.uses_pseudonyms() {
        match shared.store.pseudonym_key(job.tenant).await {
            Ok((_, key)) => Some(key),
            Err(error) => {
                tracing::warn!(job_id = %job.id, %error, "reading the tenant's pseudonym key failed");
                return Err(fail(
                    INTERNAL_ERROR,
                    "the tenant's pseudonym key could not be read",
                ));
            }
        }
    } else {
        None
    };
    let population = load_population(shared, job, &spec).await?;
    Ok(Loaded {
        table,
        spec,
        hierarchies,
        delimiter: dataset.delimiter,
        pseudonym_key,
        population,
    })
}

/// The population table the spec names (a dataset of the job's tenant), cached as datasets are.
async fn load_population(
    shared: &Shared,
    job: &ClaimedJob,
    spec: &JobSpec,
) -> Result<Option<Arc<crate::core::data::Table>>, Decision> {
    let Some(id) = spec.population_dataset_id.as_deref() else {
        return Ok(None);
    };
    let gone = || {
        fail(
            ErrorCode::PopulationMissing,
            "the population dataset no longer exists",
        )
    };
    let Ok(id) = uuid::Uuid::parse_str(id) else {
        return Err(fail(
            ErrorCode::PopulationMissing,
            "population_dataset_id is not a dataset id",
        ));
    };
    let dataset = match shared.store.get_dataset(job.tenant, id).await {
        Ok(dataset) => dataset,
        Err(StoreError::NotFound) => return Err(gone()),
        Err(error) => {
            tracing::warn!(job_id = %job.id, %error, "reading the job's population dataset failed");
            return Err(fail(
                INTERNAL_ERROR,
                "the population dataset could not be read",
            ));
        }
    };
    match shared.tables.load(&shared.store, &dataset).await {
        Ok(table) => Ok(Some(table)),
        Err(LoadError::Store(StoreError::NotFound)) => Err(gone()),
        Err(error) => {
            tracing::warn!(job_id = %job.id, %error, "loading the job's population dataset failed");
            Err(fail(
                INTERNAL_ERROR,
                "the population dataset could not be loaded",
            ))
        }
    }
}

/// The dataset was deleted, and with it the job (the foreign keys cascade): the fenced write below finds
/// no row and changes nothing. It is tried anyway, so that a job can never keep running without a
/// dataset.
fn dataset_gone() -> Decision {
    fail(INTERNAL_ERROR, "the job's dataset no longer exists")
}

/// Reserves the job's expected memory from the process's budget, waiting while running jobs hold too
/// much of it (the heartbeat keeps the lease meanwhile).
async fn reserve_memory(
    shared: &Shared,
    job: &ClaimedJob,
    loaded: &Loaded,
    control: &JobControl,
) -> Result<Reservation, Decision> {
    let Some(budget) = &shared.memory else {
        return Ok(Reservation::none());
    };
    // the population of k-map and δ-presence is indexed like a second table
    let needed = crate::domain::run::memory::job_memory_estimate(&loaded.table)
        + loaded
            .population
            .as_deref()
            .map_or(0, crate::domain::run::memory::job_memory_estimate);
    if needed > budget.available_bytes() {
        tracing::info!(
            job_id = %job.id, needed_mib = needed >> 20, available_mib = budget.available_bytes() >> 20,
            "the job waits for running jobs to give memory back"
        );
    }
    match budget.reserve(needed, control).await {
        Ok(reservation) => Ok(reservation),
        Err(Refusal::Stopped) => Err(stopped(control, shared.settings.deadline)),
        Err(Refusal::TooLarge { needed, budget }) => Err(fail(
            ErrorCode::MemoryBudgetExceeded,
            format!(
                "the job is expected to need {} MiB, more than this worker's memory budget of {} MiB",
                needed.div_ceil(1 << 20),
                budget >> 20
            ),
        )),
    }
}

/// Runs the executor on a blocking thread inside the worker's pool and decides what to write. `held`
/// (the supervisor's slot and the job's memory) is released when the blocking thread is done.
async fn execute(
    shared: &Shared,
    loaded: Loaded,
    control: &Arc<JobControl>,
    deadline: Duration,
    held: (Option<OwnedSemaphorePermit>, Reservation),
) -> Decision {
    let pool = shared.pool.clone();
    let executor = shared.executor.clone();
    let engine_control = control.clone();
    let handle = tokio::task::spawn_blocking(move || {
        let _held = held;
        let input = JobInput {
            table: &loaded.table,
            spec: &loaded.spec,
            hierarchies: &loaded.hierarchies,
            delimiter: &loaded.delimiter,
            pseudonym_key: loaded.pseudonym_key.as_ref(),
            population: loaded.population.as_deref(),
        };
        pool.install(|| executor(&input, engine_control.as_ref()))
    });
    match handle.await {
        Ok(Ok(output)) => match control.stop_reason() {
            Some(StopReason::LeaseLost) => Decision::Skip(JobOutcome::LeaseLost),
            // a cancel that arrived after the engine's last poll still wins
            Some(StopReason::CancelRequested) => Decision::Write(Terminal::Cancel),
            _ => Decision::Write(Terminal::Complete(output)),
        },
        Ok(Err(error)) => match control.stop_reason() {
            Some(_) => stopped(control, deadline),
            None => failed(&error),
        },
        Err(join) if join.is_panic() => {
            // the payload is dropped unread: it may quote data
            tracing::error!("the engine panicked");
            match control.stop_reason() {
                Some(StopReason::LeaseLost) => Decision::Skip(JobOutcome::LeaseLost),
                _ => fail(INTERNAL_ERROR, ENGINE_PANICKED),
            }
        }
        // the runtime is shutting down: the lease expires and the job runs again elsewhere
        Err(_) => Decision::Skip(JobOutcome::Abandoned),
    }
}

/// The terminal state of a job that was told to stop.
fn stopped(control: &JobControl, deadline: Duration) -> Decision {
    match control.stop_reason() {
        Some(StopReason::CancelRequested) => Decision::Write(Terminal::Cancel),
        Some(StopReason::LeaseLost) => Decision::Skip(JobOutcome::LeaseLost),
        Some(StopReason::Deadline) => fail(
            ErrorCode::DeadlineExceeded,
            format!(
                "the job ran longer than the deadline of {} s",
                deadline.as_secs_f64()
            ),
        ),
        Some(StopReason::Shutdown) => Decision::Write(Terminal::Release),
        None => fail(INTERNAL_ERROR, "the job stopped without a reason"),
    }
}

/// The failure of a run that ended with an error on its own.
fn failed(error: &ExecuteError) -> Decision {
    match error {
        ExecuteError::Run(RunError::Spec(e)) => fail(e.code, e.to_string()),
        ExecuteError::Run(RunError::Core(e)) => match ErrorCode::of_core(e) {
            ErrorCode::Cancelled => {
                fail(INTERNAL_ERROR, "the engine stopped without being asked to")
            }
            code => fail(code, e.to_string()),
        },
        ExecuteError::Run(RunError::Verification(e)) => fail(INTERNAL_ERROR, e.to_string()),
        ExecuteError::Output(message) => fail(INTERNAL_ERROR, *message),
    }
}

fn fail(code: ErrorCode, message: impl Into<String>) -> Decision {
    Decision::Write(Terminal::fail(code, message))
}
