//! `anonymizer serve`: starts telemetry and a Tokio runtime, then the service (see `crate::app`).

use crate::config::ServeConfig;

/// Runs the service; errors are one-line messages.
pub fn run(config: ServeConfig) -> Result<(), String> {
    crate::telemetry::init(config.log_format()).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("anonymizer-io")
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime
        .block_on(crate::app::serve(config))
        .map_err(|e| format!("{e:#}"))
}
