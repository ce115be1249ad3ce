//! The heartbeat of one running job: a task that renews the lease, stores the latest progress and picks
//! up cancel requests. A cancel request or a lost lease stops the job through its [`JobControl`]. The
//! first beat is awaited before the job is loaded, so its `phase` is visible as soon as it runs.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use uuid::Uuid;

use super::control::{JobControl, StopReason};
use crate::store::{Store, StoreError};

/// The longest pause between two beats, so that a cancel request takes effect within about a second.
const MAX_INTERVAL: Duration = Duration::from_secs(1);

/// The shortest pause between two beats.
const MIN_INTERVAL: Duration = Duration::from_millis(20);

/// The pause between beats for a lease: a third of it, at most [`MAX_INTERVAL`].
pub(crate) fn interval(lease: Duration) -> Duration {
    (lease / 3).clamp(MIN_INTERVAL, MAX_INTERVAL)
}

/// A running heartbeat; dropping it stops the beats.
#[derive(Debug)]
pub(crate) struct Heartbeat {
    task: Option<JoinHandle<()>>,
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Beats once for attempt `attempt` of job `id` (so the progress is stored before anything else
/// happens), then keeps beating in a task until dropped, or until the lease is lost.
pub(crate) async fn start(
    store: Store,
    id: Uuid,
    attempt: i64,
    control: Arc<JobControl>,
    lease: Duration,
) -> Heartbeat {
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let pause = interval(lease);
    if !beat(&store, id, attempt, &control, lease_ms).await {
        return Heartbeat { task: None };
    }
    let task = tokio::spawn(async move {
        loop {
            tokio::time::sleep(pause).await;
            if !beat(&store, id, attempt, &control, lease_ms).await {
                return;
            }
        }
    });
    Heartbeat { task: Some(task) }
}

/// One beat: renews the lease, stores the progress and stops the job on a cancel request or a lost
/// lease. False once the lease is lost (no further beat can succeed).
async fn beat(store: &Store, id: Uuid, attempt: i64, control: &JobControl, lease_ms: i64) -> bool {
    let progress = control.progress_json();
    match store
        .record_heartbeat(id, attempt, &progress, lease_ms)
        .await
    {
        Ok(ack) => {
            if ack.cancel_requested {
                control.stop(StopReason::CancelRequested);
            }
            true
        }
        Err(StoreError::LeaseLost) => {
            tracing::warn!(job_id = %id, attempt, "the job's lease was lost; stopping it");
            control.stop(StopReason::LeaseLost);
            false
        }
        // transient: the next beat tries again (the lease outlives a few missed beats)
        Err(error) => {
            tracing::warn!(job_id = %id, attempt, %error, "a heartbeat failed");
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beats_every_third_of_the_lease_but_at_least_every_second() {
        assert_eq!(interval(Duration::from_secs(30)), Duration::from_secs(1));
        assert_eq!(
            interval(Duration::from_millis(900)),
            Duration::from_millis(300)
        );
        assert_eq!(interval(Duration::from_millis(3)), MIN_INTERVAL);
    }
}
