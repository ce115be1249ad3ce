//! The service process: connects the store (running migrations unless disabled), serves the HTTP API
//! (or only the operations routes with `--role worker`), runs the worker supervisor (`--role all` or
//! `worker`) and shuts down gracefully on SIGINT or SIGTERM: stop accepting requests, stop claiming,
//! give running jobs the grace period, hand the rest back to the queue, close the store.

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::ServeConfig;
use crate::http;
use crate::store::Store;
use crate::worker::{Worker, WorkerSettings};

/// Connections the pool may open.
const MAX_CONNECTIONS: u32 = 16;

/// Runs `anonymizer serve` until a shutdown signal arrives.
pub async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    let url = config.database_url();
    let store = Store::connect(&url, MAX_CONNECTIONS)
        .await
        .with_context(|| {
            format!(
                "cannot open the database {}",
                crate::config::redact_url_password(&url)
            )
        })?;
    if config.migrate {
        store
            .migrate()
            .await
            .context("database migrations failed")?;
    }
    ensure_an_api_key(&store, &config).await?;
    install_panic_hook();
    let webhooks = std::sync::Arc::new(
        config
            .webhooks()
            .map_err(|e| anyhow::anyhow!("--webhook-allowed-hosts: {e}"))?,
    );
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => Some(http::server::load_tls(cert, key)?),
        _ => None,
    };
    let open_files = http::server::raise_open_file_limit();
    let limits = http::server::ServerLimits {
        max_connections: http::server::fit_connection_cap(config.max_connections, open_files),
        header_read_timeout: config.header_read_timeout(),
        shutdown_grace: config.shutdown_grace(),
    };
    let state = http::AppState::new(store.clone()).with_settings(http::ApiSettings {
        upload_limit: config.upload_limit,
        job_body_limit: config.job_body_limit,
        upload_idle_timeout: config.upload_idle_timeout(),
        upload_min_rate: config.upload_min_rate,
        max_uploads: config.max_uploads as usize,
        max_uploads_per_tenant: config.max_uploads_per_tenant as usize,
        job_memory_budget: config.job_memory_budget,
        csv_field_limit: config.csv_field_limit,
        job_deadline: config.job_deadline(),
        pdf_renderer: config.pdf_renderer.clone(),
        callback_policy: webhooks.policy.clone(),
        sse_heartbeat: std::time::Duration::from_secs(15),
        max_streams: http::ApiSettings::default().max_streams,
        max_streams_per_tenant: http::ApiSettings::default().max_streams_per_tenant,
        webhook_secret_overlap: webhooks.secret_overlap,
    });
    let state = state.with_audit(crate::audit::AuditSink::for_serve(&config)?);
    // bound before the workers start, so a busy port fails the start before any job is claimed
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let (stop, stopping) = watch::channel(false);
    let state = state.with_shutdown(stopping.clone());
    // the workers share the API's table cache and metrics, so a job submitted right after its upload
    // reuses the parsed table
    let supervisor = if config.role.runs_workers() {
        let settings = WorkerSettings::from_config(&config);
        tracing::info!(
            worker_id = %settings.worker_id,
            slots = settings.slots,
            threads_per_job = settings.threads_per_job,
            lease_secs = settings.lease.as_secs(),
            "starting the workers"
        );
        let worker = Worker::new(
            store.clone(),
            state.tables.clone(),
            state.metrics.clone(),
            settings,
        )
        .context("cannot start the engine's threads")?;
        Some(tokio::spawn(worker.run(
            state.job_queued.clone(),
            stopping.clone(),
            config.shutdown_grace(),
        )))
    } else {
        None
    };
    // retention runs where the API runs (one sweeper per API process; sweeps are idempotent)
    let sweeper = match config.retention() {
        Some(retention) if config.role.runs_api() => Some(tokio::spawn(crate::retention::run(
            store.clone(),
            retention,
            stopping.clone(),
        ))),
        _ => None,
    };
    // webhooks are sent where the API runs (deliveries are leased, so replicas share them)
    let dispatcher = config.role.runs_api().then(|| {
        tokio::spawn(crate::webhooks::dispatcher::run(
            store.clone(),
            webhooks.clone(),
            stopping.clone(),
        ))
    });
    let event_pruner = config.role.runs_api().then(|| {
        tokio::spawn(crate::retention::prune_progress_events(
            store.clone(),
            stopping.clone(),
        ))
    });
    let upload_sweeper = config.role.runs_api().then(|| {
        tokio::spawn(crate::retention::sweep_stale_uploads(
            store.clone(),
            stale_upload_age(config.upload_idle_timeout()),
            stopping.clone(),
        ))
    });
    let state_metrics = state.metrics.clone();
    let router = if config.role.runs_api() {
        http::app(state)
    } else {
        http::operations_app(state)
    };
    tracing::info!(
        address = %listener.local_addr()?,
        backend = ?store.backend(),
        database = %crate::config::database_location(&url),
        role = ?config.role,
        tls = tls.is_some(),
        max_connections = limits.max_connections,
        "serving"
    );
    let signal = tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop.send(true);
    });
    let mut http_stopping = stopping.clone();
    let served = http::server::serve(listener, router, limits, tls, state_metrics, async move {
        let _ = http_stopping.wait_for(|stop| *stop).await;
    })
    .await
    .context("the server failed");
    // the server may also have ended with an error: dropping the sender stops the workers too
    signal.abort();
    if let Some(sweeper) = sweeper {
        sweeper.abort();
    }
    if let Some(sweeper) = upload_sweeper {
        sweeper.abort();
    }
    if let Some(pruner) = event_pruner {
        pruner.abort();
    }
    if let Some(dispatcher) = dispatcher {
        // an attempt cut short is sent again by the next process (its lease runs out)
        dispatcher.abort();
    }
    if let Some(supervisor) = supervisor {
        if supervisor.await.is_err() {
            tracing::error!("the worker supervisor failed");
        }
    }
    store.close().await;
    tracing::info!("stopped");
    served
}

/// How long a staged upload may write nothing before the sweeper deletes it: well past the idle
/// timeout that would have refused it, so only uploads whose process died are taken.
fn stale_upload_age(idle_timeout: std::time::Duration) -> std::time::Duration {
    (idle_timeout * 4).max(std::time::Duration::from_secs(600))
}

/// Logs panics without their payload (it may quote data) instead of printing them to stderr. Request
/// handlers and engine runs catch their panics and carry on; this only keeps the message out of the logs.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(%location, "a thread panicked");
    }));
}

/// Tenant that owns the bootstrap key.
pub const BOOTSTRAP_TENANT: &str = "default";

/// When the database has no usable key: stores the bootstrap key (for tenant `default`) if one is
/// configured, else logs how to create one.
async fn ensure_an_api_key(store: &Store, config: &ServeConfig) -> anyhow::Result<()> {
    let keys = store.list_api_keys().await?;
    if keys.iter().any(|k| k.revoked_at.is_none()) {
        return Ok(());
    }
    match config.bootstrap_key() {
        Some(key) => {
            match store.import_api_key(BOOTSTRAP_TENANT, key.expose()).await {
                Ok(record) => tracing::info!(
                    tenant = BOOTSTRAP_TENANT,
                    prefix = %record.prefix,
                    "stored the bootstrap API key"
                ),
                // the key was stored before and revoked since: do not bring it back
                Err(crate::store::StoreError::Conflict(..)) => tracing::warn!(
                    "the bootstrap API key was revoked; create a key with `anonymizer keys create --tenant NAME`"
                ),
                Err(e) => {
                    return Err(anyhow::anyhow!("ANONYMIZER_BOOTSTRAP_KEY is not usable: {e}"))
                }
            }
        }
        None => tracing::warn!(
            "no API keys yet: create one with `anonymizer keys create --tenant NAME` against the same database, or set ANONYMIZER_BOOTSTRAP_KEY"
        ),
    }
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutdown requested");
}
