//! The latest job event id of the whole service, as one process sees it: a task reads it from the
//! database every 50 ms while some event stream listens (events may be written by any
//! replica's workers), and wakes the streams when it grows. Each stream then reads its own events
//! after the last one it sent; the feed only says when to look.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::store::Store;

/// How often the latest id is read while some stream listens.
const POLL: Duration = Duration::from_millis(50);

/// How often an idle feed checks whether a stream started listening.
const IDLE_POLL: Duration = Duration::from_millis(500);

/// Shared by every handler of a process; cheap to clone.
#[derive(Clone, Default)]
pub struct EventFeed {
    latest: Arc<OnceLock<watch::Sender<i64>>>,
}

impl EventFeed {
    /// A receiver that changes whenever a newer event exists; starts the polling task on first use
    /// (inside the runtime that serves the request).
    pub fn subscribe(&self, store: &Store) -> watch::Receiver<i64> {
        self.latest
            .get_or_init(|| {
                let (sender, _) = watch::channel(0);
                tokio::spawn(poll(store.clone(), sender.clone()));
                sender
            })
            .subscribe()
    }
}

/// Reads the latest id while anyone listens; ends with the process.
async fn poll(store: Store, sender: watch::Sender<i64>) {
    loop {
        if sender.receiver_count() == 0 {
            tokio::time::sleep(IDLE_POLL).await;
            continue;
        }
        match store.latest_event_id().await {
            Ok(latest) => {
                sender.send_if_modified(|seen| {
                    let newer = latest > *seen;
                    if newer {
                        *seen = latest;
                    }
                    newer
                });
            }
            Err(error) => tracing::warn!(%error, "reading the latest job event failed"),
        }
        tokio::time::sleep(POLL).await;
    }
}
