//! The service process: connects the store (running migrations unless disabled), serves the HTTP API
//! and shuts down gracefully on SIGINT or SIGTERM.

use anyhow::Context;
use tokio::net::TcpListener;

use crate::config::ServeConfig;
use crate::http;
use crate::store::Store;

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
    let state = http::AppState::new(store.clone()).with_settings(http::ApiSettings {
        upload_limit: config.upload_limit,
    });
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    tracing::info!(address = %listener.local_addr()?, backend = ?store.backend(), "serving");
    axum::serve(listener, http::app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("the server failed")?;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
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
                Err(crate::store::StoreError::Conflict(_)) => tracing::warn!(
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
