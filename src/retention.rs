//! The retention sweeper: once an hour (and at start), deletes datasets, outputs and finished jobs older
//! than the configured retention, so personal data does not outlive its purpose. Runs in every process
//! that serves the API; concurrent sweeps on a shared database are harmless (deletes are idempotent).
//! A second, more frequent sweep deletes uploads abandoned mid-stream by a process that died, and a third
//! prunes job progress events that event streams no longer need.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;

use crate::store::{Purged, Store};

/// Time between sweeps.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(3600);

/// One sweep: deletes what is older than `retention` now.
pub async fn sweep(store: &Store, retention: Duration) -> Result<Purged, crate::store::StoreError> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let keep_ms = i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
    let purged = store.purge_expired(now_ms.saturating_sub(keep_ms)).await?;
    if purged != Purged::default() {
        tracing::info!(
            datasets = purged.datasets,
            jobs = purged.jobs,
            "retention: deleted expired data"
        );
    }
    Ok(purged)
}

/// Sweeps every [`SWEEP_INTERVAL`] until `shutdown` turns true.
pub async fn run(store: Store, retention: Duration, mut shutdown: watch::Receiver<bool>) {
    loop {
        if let Err(error) = sweep(&store, retention).await {
            tracing::warn!(%error, "retention sweep failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(SWEEP_INTERVAL) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
    }
}

/// Time between sweeps of abandoned uploads.
pub const UPLOAD_SWEEP_INTERVAL: Duration = Duration::from_secs(60);

/// Deletes staged uploads that wrote nothing for `stale_after` (their process died mid-upload), now and
/// every [`UPLOAD_SWEEP_INTERVAL`] until `shutdown` turns true.
pub async fn sweep_stale_uploads(
    store: Store,
    stale_after: Duration,
    shutdown: watch::Receiver<bool>,
) {
    every(UPLOAD_SWEEP_INTERVAL, shutdown, || async {
        match store.purge_stale_uploads(cutoff(stale_after)).await {
            Ok(0) => {}
            Ok(deleted) => tracing::info!(deleted, "deleted abandoned uploads"),
            Err(error) => tracing::warn!(%error, "sweeping abandoned uploads failed"),
        }
    })
    .await
}

/// How long job progress events are kept for event streams to resume from (state events stay with
/// their job).
pub const PROGRESS_EVENT_AGE: Duration = Duration::from_secs(15 * 60);

/// Deletes progress events older than [`PROGRESS_EVENT_AGE`], now and every [`UPLOAD_SWEEP_INTERVAL`]
/// until `shutdown` turns true.
pub async fn prune_progress_events(store: Store, shutdown: watch::Receiver<bool>) {
    every(UPLOAD_SWEEP_INTERVAL, shutdown, || async {
        if let Err(error) = store
            .prune_progress_events(cutoff(PROGRESS_EVENT_AGE))
            .await
        {
            tracing::warn!(%error, "pruning progress events failed");
        }
    })
    .await
}

/// Unix ms `age` ago.
fn cutoff(age: Duration) -> i64 {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    now_ms.saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX))
}

/// Runs `sweep` now and every `interval` until `shutdown` turns true.
async fn every<F, Fut>(interval: Duration, mut shutdown: watch::Receiver<bool>, mut sweep: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    loop {
        sweep().await;
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
    }
}
