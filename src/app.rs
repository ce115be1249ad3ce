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
    if store
        .list_api_keys()
        .await?
        .iter()
        .all(|k| k.revoked_at.is_some())
    {
        tracing::warn!(
            "no API keys yet: create one with `anonymizer keys create --tenant NAME` against the same database"
        );
    }
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    tracing::info!(address = %listener.local_addr()?, backend = ?store.backend(), "serving");
    axum::serve(listener, http::app(store.clone()))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("the server failed")?;
    store.close().await;
    tracing::info!("stopped");
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
