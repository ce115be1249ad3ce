//! Tracing subscriber setup: JSON lines in containers, human-readable lines on a terminal, filtered by
//! `RUST_LOG` (default `info`; `warn` plus audit events for administrative commands), always to stderr.
//!
//! Audit events (`crate::audit`) use the target `audit`: `RUST_LOG=info,audit=off` keeps them off
//! stderr when they are shipped from the `--audit-log` file instead, and a log shipper can route lines
//! whose `target` is `audit` to their own index.
//!
//! The rule for everything that logs: **never log cell values**. Log ids, counts, sizes, column names,
//! codes and durations; never a field of an uploaded table, a hierarchy label, an output row, a query
//! string's free text or a panic payload. Errors from `codec`, `core` and `domain` are value-free by
//! construction and may be logged as they are.

pub mod prometheus;

use tracing::level_filters::LevelFilter;
use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Why the subscriber could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("could not install the tracing subscriber: {0}")]
pub struct TelemetryError(String);

/// The filter from `RUST_LOG`, `info` when unset (invalid directives are skipped).
pub fn env_filter() -> EnvFilter {
    EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .from_env_lossy()
}

/// The filter of administrative commands: `RUST_LOG`, else warnings and audit events only.
pub fn command_filter() -> EnvFilter {
    match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.trim().is_empty() => {
            EnvFilter::builder().parse_lossy(directives)
        }
        _ => EnvFilter::new(format!("warn,{}=info", crate::audit::TARGET)),
    }
}

/// A subscriber writing `format` lines to `writer`, keeping what `filter` lets through.
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
    ansi: bool,
) -> Box<dyn Subscriber + Send + Sync + 'static>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Json => Box::new(
            builder
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .finish(),
        ),
        LogFormat::Pretty => Box::new(builder.with_ansi(ansi).finish()),
    }
}

/// Installs the global subscriber (stderr, `RUST_LOG` or `info`); fails when one is already installed.
pub fn init(format: LogFormat) -> Result<(), TelemetryError> {
    init_with(format, env_filter())
}

/// Installs the global subscriber of an administrative command (stderr, [`command_filter`]).
pub fn init_command(format: LogFormat) -> Result<(), TelemetryError> {
    init_with(format, command_filter())
}

fn init_with(format: LogFormat, filter: EnvFilter) -> Result<(), TelemetryError> {
    use std::io::IsTerminal;
    let ansi = std::io::stderr().is_terminal();
    subscriber(format, filter, std::io::stderr, ansi)
        .try_init()
        .map_err(|e| TelemetryError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'w self) -> Buffer {
            self.clone()
        }
    }

    fn capture(format: LogFormat, filter: &str) -> String {
        let buffer = Buffer::default();
        let sub = subscriber(format, EnvFilter::new(filter), buffer.clone(), false);
        tracing::subscriber::with_default(sub, || {
            let span = tracing::info_span!("request", request_id = "r-1");
            let _entered = span.enter();
            tracing::info!(job_id = "j-1", rows = 42u64, "job queued");
            tracing::debug!("hidden at info");
        });
        let bytes = buffer.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn json_lines_carry_fields_and_span() {
        let out = capture(LogFormat::Json, "info");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1, "{out}");
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["message"], "job queued");
        assert_eq!(v["job_id"], "j-1");
        assert_eq!(v["rows"], 42);
        assert_eq!(v["level"], "INFO");
        assert_eq!(v["span"]["request_id"], "r-1");
    }

    #[test]
    fn pretty_lines_respect_the_filter() {
        let out = capture(LogFormat::Pretty, "debug");
        assert!(out.contains("job queued"), "{out}");
        assert!(out.contains("hidden at info"), "{out}");
        let out = capture(LogFormat::Pretty, "warn");
        assert!(out.is_empty(), "{out}");
    }
}
