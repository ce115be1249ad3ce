//! The end of a job run by this worker: which terminal write a run calls for, and that write, fenced on
//! the attempt and retried with backoff on transient store errors. A lost fence means another worker
//! owns the job: the write is dropped and nothing else happens.

use crate::error_code::ErrorCode;
use std::time::Duration;

use uuid::Uuid;

use super::execute::JobOutput;
use crate::store::{Completion, Store, StoreError};

/// How many times a terminal write is tried before the job is left to its expiring lease.
const WRITE_TRIES: u32 = 5;

/// The pause before the first retry; it doubles for each further one.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// How a job run by this worker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome {
    /// The output and the report were stored.
    Succeeded,
    /// The job failed with this stable code.
    Failed {
        /// The failure code stored on the job.
        code: String,
    },
    /// The job stopped on a cancel request.
    Cancelled,
    /// The job was handed back to the queue (shutdown).
    Released,
    /// Another worker owns the job now; this run's result was dropped.
    LeaseLost,
    /// The job (and its dataset) was deleted while it ran.
    Deleted,
    /// The terminal write kept failing; the lease will expire and the job will be claimed again.
    Abandoned,
}

impl JobOutcome {
    /// The outcome's name, as used for metrics.
    pub fn as_str(&self) -> &'static str {
        match self {
            JobOutcome::Succeeded => "succeeded",
            JobOutcome::Failed { .. } => "failed",
            JobOutcome::Cancelled => "cancelled",
            JobOutcome::Released => "released",
            JobOutcome::LeaseLost => "lease_lost",
            JobOutcome::Deleted => "deleted",
            JobOutcome::Abandoned => "abandoned",
        }
    }
}

/// The terminal write a run calls for.
#[derive(Debug)]
pub(crate) enum Terminal {
    /// Store the output and the report; the job succeeded.
    Complete(JobOutput),
    /// Mark the job failed.
    Fail { code: ErrorCode, message: String },
    /// Mark the job cancelled.
    Cancel,
    /// Hand the job back to the queue.
    Release,
}

impl Terminal {
    /// A failure with a stable code and a value-free message.
    pub(crate) fn fail(code: ErrorCode, message: impl Into<String>) -> Terminal {
        Terminal::Fail {
            code,
            message: message.into(),
        }
    }

    fn outcome(&self) -> JobOutcome {
        match self {
            Terminal::Complete(_) => JobOutcome::Succeeded,
            Terminal::Fail { code, .. } => JobOutcome::Failed {
                code: code.as_str().to_string(),
            },
            Terminal::Cancel => JobOutcome::Cancelled,
            Terminal::Release => JobOutcome::Released,
        }
    }

    async fn try_write(&self, store: &Store, id: Uuid, attempt: i64) -> Result<(), StoreError> {
        match self {
            Terminal::Complete(output) => {
                store
                    .complete_job_streamed(
                        id,
                        attempt,
                        Completion {
                            report_json: &output.report_json,
                            outcome_json: output.outcome_json.as_deref(),
                            progress_json: &super::control::done_progress_json(),
                        },
                        output.csv.chunks(),
                    )
                    .await
            }
            Terminal::Fail { code, message } => {
                store.fail_job(id, attempt, code.as_str(), message).await
            }
            Terminal::Cancel => store.mark_cancelled(id, attempt).await,
            Terminal::Release => store.release_job(id, attempt).await,
        }
    }
}

/// Writes `terminal` for attempt `attempt` of job `id`, retrying transient store errors.
/// A success or failure whose write finds the job's cancellation requested becomes a cancel.
pub(crate) async fn write(store: &Store, id: Uuid, attempt: i64, terminal: Terminal) -> JobOutcome {
    let mut backoff = FIRST_BACKOFF;
    for tries in 1..=WRITE_TRIES {
        match terminal.try_write(store, id, attempt).await {
            Ok(()) => return terminal.outcome(),
            Err(StoreError::CancelRequested) if !matches!(terminal, Terminal::Cancel) => {
                tracing::info!(job_id = %id, attempt, "the job's cancellation arrived before its end was stored");
                // the cancel gets tries of its own
                return Box::pin(write(store, id, attempt, Terminal::Cancel)).await;
            }
            Err(StoreError::LeaseLost) => {
                tracing::warn!(
                    job_id = %id,
                    attempt,
                    "the job is no longer this attempt's (reclaimed, finished or deleted); its result is dropped"
                );
                return JobOutcome::LeaseLost;
            }
            Err(StoreError::NotFound) => {
                tracing::info!(job_id = %id, attempt, "the job was deleted while it ran");
                return JobOutcome::Deleted;
            }
            Err(error @ StoreError::Database(_)) if tries < WRITE_TRIES => {
                tracing::warn!(job_id = %id, attempt, %error, tries, "storing the job's end failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
            Err(error) => {
                tracing::error!(
                    job_id = %id,
                    attempt,
                    %error,
                    "storing the job's end failed; its lease will expire and it will run again"
                );
                return JobOutcome::Abandoned;
            }
        }
    }
    JobOutcome::Abandoned
}
