//! The context every handler shares: the store, the API's settings, the cache of parsed datasets, the
//! metrics registry and the wake-up signal that tells this process's workers a job was queued.

use std::sync::Arc;

use axum::extract::FromRef;
use tokio::sync::Notify;

use crate::metrics::Metrics;
use crate::store::Store;
use crate::tables::TableCache;

/// Default upload limit: 1 GiB (after decompression).
pub const DEFAULT_UPLOAD_LIMIT: u64 = 1 << 30;

/// Settings of the HTTP API.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// Largest accepted upload body, in bytes, after decompression.
    pub upload_limit: u64,
    /// Longest CSV field an upload may contain, in bytes.
    pub csv_field_limit: usize,
}

impl Default for ApiSettings {
    fn default() -> Self {
        ApiSettings {
            upload_limit: DEFAULT_UPLOAD_LIMIT,
            csv_field_limit: crate::codec::DEFAULT_MAX_FIELD_BYTES,
        }
    }
}

/// Shared by every handler; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The persistence layer.
    pub store: Store,
    /// API settings.
    pub settings: Arc<ApiSettings>,
    /// Parsed datasets, shared with the workers of this process.
    pub tables: TableCache,
    /// The metrics registry.
    pub metrics: Arc<Metrics>,
    /// Notified when a job is queued, so this process's idle workers claim it without waiting for
    /// their next poll.
    pub job_queued: Arc<Notify>,
}

impl AppState {
    /// A state with default settings, a fresh cache and registry.
    pub fn new(store: Store) -> Self {
        AppState {
            store,
            settings: Arc::new(ApiSettings::default()),
            tables: TableCache::default(),
            metrics: Arc::new(Metrics::default()),
            job_queued: Arc::new(Notify::new()),
        }
    }

    /// Replaces the settings.
    pub fn with_settings(mut self, settings: ApiSettings) -> Self {
        self.settings = Arc::new(settings);
        self
    }
}

impl FromRef<AppState> for Store {
    fn from_ref(state: &AppState) -> Store {
        state.store.clone()
    }
}
