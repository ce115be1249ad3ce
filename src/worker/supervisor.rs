//! The supervisor of a process's workers: claims jobs while one of `slots` permits is free, sleeps until
//! a wake-up (a job queued by this process's API) or the poll interval when nothing is queued, and on
//! shutdown stops claiming, lets running jobs finish within the grace period, then stops them and hands
//! them back to the queue for another process.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Notify, Semaphore};
use tokio::task::JoinSet;

use super::{runner, StopReason, Worker};
use crate::store::StoreError;

/// How long jobs stopped at the end of the grace period get to hand themselves back before the
/// supervisor releases them itself and stops waiting.
const STOP_WAIT: Duration = Duration::from_secs(5);

impl Worker {
    /// Runs jobs until `shutdown` turns true (or its sender is dropped), then shuts down gracefully:
    /// running jobs get `grace` to finish; the others are stopped and released back to the queue.
    pub async fn run(
        self,
        wake: Arc<Notify>,
        mut shutdown: watch::Receiver<bool>,
        grace: Duration,
    ) {
        let settings = self.settings().clone();
        let slots = usize::try_from(settings.slots.max(1)).unwrap_or(1);
        let semaphore = Arc::new(Semaphore::new(slots));
        let mut jobs = JoinSet::new();
        loop {
            while jobs.try_join_next().is_some() {}
            if is_stopping(&shutdown) {
                break;
            }
            let permit = tokio::select! {
                permit = semaphore.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break,
                },
                () = stopping(&mut shutdown) => break,
            };
            // enabled before the claim, so a job queued while the claim runs still wakes us up
            let notified = wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.claim().await {
                Ok(Some(job)) => {
                    let shared = self.shared.clone();
                    jobs.spawn(async move {
                        runner::run(&shared, job, Some(permit)).await;
                    });
                }
                Ok(None) => {
                    drop(permit);
                    tokio::select! {
                        () = &mut notified => {},
                        () = tokio::time::sleep(settings.poll_interval) => {},
                        () = stopping(&mut shutdown) => {},
                    }
                }
                Err(error) => {
                    drop(permit);
                    tracing::warn!(%error, "claiming a job failed");
                    tokio::select! {
                        () = tokio::time::sleep(settings.poll_interval) => {},
                        () = stopping(&mut shutdown) => {},
                    }
                }
            }
        }

        tracing::info!(running = jobs.len(), "the workers stop claiming jobs");
        if tokio::time::timeout(grace, drain(&mut jobs)).await.is_err() {
            tracing::info!(
                running = jobs.len(),
                "the grace period is over; handing the running jobs back to the queue"
            );
            self.stop_running(StopReason::Shutdown);
            if tokio::time::timeout(STOP_WAIT, drain(&mut jobs))
                .await
                .is_err()
            {
                self.release_running().await;
                jobs.abort_all();
            }
        }
        tracing::info!("the workers stopped");
    }

    /// Releases the jobs still running (their engines did not stop in time); fenced, so a job that
    /// released itself meanwhile is left alone.
    async fn release_running(&self) {
        for (id, attempt) in self.running() {
            match self.shared.store.release_job(id, attempt).await {
                Ok(()) => tracing::info!(job_id = %id, attempt, "released a job that did not stop"),
                Err(StoreError::LeaseLost) => {}
                Err(error) => {
                    tracing::warn!(job_id = %id, attempt, %error, "releasing a job failed")
                }
            }
        }
    }
}

/// Whether shutdown was requested (or can no longer be signalled).
fn is_stopping(shutdown: &watch::Receiver<bool>) -> bool {
    *shutdown.borrow() || shutdown.has_changed().is_err()
}

/// Resolves once shutdown is requested (or can no longer be signalled).
async fn stopping(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Waits for every job of `jobs` to end.
async fn drain(jobs: &mut JoinSet<()>) {
    while jobs.join_next().await.is_some() {}
}
