//! The context every handler shares: the store, the API's settings, the cache of parsed datasets, the
//! metrics registry, the wake-up signal that tells this process's workers a job was queued, the audit
//! sink, the last-use tracker of API keys, and the feed and shutdown signal of event streams.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;
use tokio::sync::Notify;

use super::event_feed::EventFeed;
use super::key_use::KeyUse;
use super::upload_gate::UploadGate;
use crate::audit::AuditSink;
use crate::store::Store;
use crate::tables::TableCache;
use crate::telemetry::prometheus::ServiceMetrics;

use crate::config::{DEFAULT_JOB_BODY_LIMIT, DEFAULT_JOB_MEMORY_BUDGET, DEFAULT_UPLOAD_LIMIT};

/// Settings of the HTTP API.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// Largest accepted upload body, in bytes, after decompression.
    pub upload_limit: u64,
    /// Largest accepted job or assessment request body, in bytes.
    pub job_body_limit: usize,
    /// An upload that sends nothing for this long is refused with 408; also the window over which
    /// `upload_min_rate` is measured.
    pub upload_idle_timeout: Duration,
    /// Bytes per second an upload must average over each `upload_idle_timeout` window (0: none).
    pub upload_min_rate: u64,
    /// Uploads received at once by this process.
    pub max_uploads: usize,
    /// Uploads one tenant may have in flight in this process.
    pub max_uploads_per_tenant: usize,
    /// Bytes a job may be expected to need (see `domain::run::memory`); a larger job is refused at
    /// submission. 0: no budget.
    pub job_memory_budget: u64,
    /// Longest CSV field an upload may contain, in bytes.
    pub csv_field_limit: usize,
    /// How long a job may run (the workers' deadline): a search time limit must end before it.
    pub job_deadline: Duration,
    /// The Chromium that prints report pages to PDF; none: `report.pdf` answers 501.
    pub pdf_renderer: Option<std::path::PathBuf>,
    /// Which callback URLs a job may carry (none unless the operator allows hosts).
    pub callback_policy: crate::webhooks::CallbackPolicy,
    /// How often an idle event stream sends a heartbeat comment.
    pub sse_heartbeat: Duration,
    /// Event streams open at once in this process.
    pub max_streams: usize,
    /// Event streams one tenant may have open in this process.
    pub max_streams_per_tenant: usize,
    /// How long a rotated-out webhook secret keeps signing beside the new one.
    pub webhook_secret_overlap: Duration,
}

impl Default for ApiSettings {
    fn default() -> Self {
        ApiSettings {
            upload_limit: DEFAULT_UPLOAD_LIMIT,
            job_body_limit: DEFAULT_JOB_BODY_LIMIT,
            upload_idle_timeout: Duration::from_secs(30),
            upload_min_rate: 1024,
            max_uploads: 8,
            max_uploads_per_tenant: 2,
            job_memory_budget: DEFAULT_JOB_MEMORY_BUDGET,
            csv_field_limit: crate::codec::DEFAULT_MAX_FIELD_BYTES,
            job_deadline: Duration::from_secs(3600),
            pdf_renderer: None,
            callback_policy: crate::webhooks::CallbackPolicy::default(),
            sse_heartbeat: Duration::from_secs(15),
            max_streams: 1024,
            max_streams_per_tenant: 32,
            webhook_secret_overlap: crate::webhooks::WebhookSettings::default().secret_overlap,
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
    pub metrics: Arc<ServiceMetrics>,
    /// Notified when a job is queued, so this process's idle workers claim it without waiting for
    /// their next poll.
    pub job_queued: Arc<Notify>,
    /// Admission of uploads (per process and per tenant).
    pub uploads: UploadGate,
    /// Where the audit events of data routes go.
    pub audit: AuditSink,
    /// The keys whose last use this process recorded recently.
    pub key_use: Arc<KeyUse>,
    /// Wakes event streams when a job event was written.
    pub events: EventFeed,
    /// Admission of event streams (per process and per tenant).
    pub streams: UploadGate,
    /// Turns true when the server stops (event streams end); none: never.
    pub shutdown: Option<tokio::sync::watch::Receiver<bool>>,
}

impl AppState {
    /// A state with default settings, a fresh cache and registry, audit events to the tracing target
    /// only.
    pub fn new(store: Store) -> Self {
        let settings_default = ApiSettings::default();
        AppState {
            store,
            settings: Arc::new(ApiSettings::default()),
            tables: TableCache::default(),
            metrics: Arc::new(ServiceMetrics::default()),
            job_queued: Arc::new(Notify::new()),
            uploads: UploadGate::new(
                settings_default.max_uploads,
                settings_default.max_uploads_per_tenant,
            ),
            audit: AuditSink::default(),
            key_use: Arc::new(KeyUse::default()),
            events: EventFeed::default(),
            streams: UploadGate::for_streams(
                settings_default.max_streams,
                settings_default.max_streams_per_tenant,
            ),
            shutdown: None,
        }
    }

    /// Replaces the settings.
    pub fn with_settings(mut self, settings: ApiSettings) -> Self {
        self.uploads = UploadGate::new(settings.max_uploads, settings.max_uploads_per_tenant);
        self.streams =
            UploadGate::for_streams(settings.max_streams, settings.max_streams_per_tenant);
        self.settings = Arc::new(settings);
        self
    }

    /// Ends event streams when `stopping` turns true.
    pub fn with_shutdown(mut self, stopping: tokio::sync::watch::Receiver<bool>) -> Self {
        self.shutdown = Some(stopping);
        self
    }

    /// Replaces the audit sink.
    pub fn with_audit(mut self, audit: AuditSink) -> Self {
        self.audit = audit;
        self
    }
}

impl FromRef<AppState> for Store {
    fn from_ref(state: &AppState) -> Store {
        state.store.clone()
    }
}
