//! The retention sweeper: once an hour (and at start), deletes datasets, outputs and finished jobs older
//! than the configured retention, so personal data does not outlive its purpose. Runs in every process
//! that serves the API; concurrent sweeps on a shared database are harmless (deletes are idempotent).

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
