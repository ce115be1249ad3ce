//! Last use of API keys: after a successful authentication the key's `last_used_at` is written in the
//! background, at most once per [`LAST_USE_RESOLUTION_MS`] per key in this process (and the store
//! skips the write when another process did it within that time), so polling at a thousand requests a
//! second stays about one write a minute — and a request never waits for the write (on SQLite another
//! writer, such as a job's output being stored, may hold the write lock for a while).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::store::{Store, LAST_USE_RESOLUTION_MS};

/// How long this process waits before writing a key's last use again.
const RESOLUTION: Duration = Duration::from_millis(LAST_USE_RESOLUTION_MS.unsigned_abs());

/// The keys this process recorded a use of recently.
#[derive(Debug, Default)]
pub struct KeyUse {
    written: Mutex<HashMap<Uuid, Instant>>,
}

impl KeyUse {
    /// Notes that `key_id` authenticated a request now; writes it to `store` in a background task
    /// unless this process did so within the resolution. Must be called within a Tokio runtime.
    pub fn note(&self, store: &Store, key_id: Uuid) {
        let now = Instant::now();
        {
            let mut written = self
                .written
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match written.get(&key_id) {
                Some(at) if now.duration_since(*at) < RESOLUTION => return,
                _ => {
                    written.insert(key_id, now);
                }
            }
        }
        let store = store.clone();
        tokio::spawn(async move {
            let now = super::time::now_ms();
            if let Err(e) = store.touch_api_key(key_id, now).await {
                tracing::warn!(%key_id, error = %e, "cannot record the API key's last use");
            }
        });
    }
}
