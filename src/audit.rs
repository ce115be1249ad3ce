//! The audit trail: one structured event per data operation (an API request on a data route, an API key
//! created or revoked from the command line), written to the tracing target [`TARGET`] and, when
//! configured, appended as one JSON line to a dedicated file (created `0600`) that an operator can ship
//! or query apart from the service's logs.
//!
//! An event names who (tenant id, API key id — never the key), what (operation, route template, resource
//! id), how it ended (outcome, status) and how much (bytes in and out). It never holds a cell value, a
//! body, a query string or a file name: only ids, codes and counts.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use uuid::Uuid;

/// The tracing target of audit events (`RUST_LOG=audit=off` silences them on stderr).
pub const TARGET: &str = "audit";

/// How an audited operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Done (a 2xx or 3xx answer).
    Success,
    /// Refused for want of valid credentials (401, 403).
    Denied,
    /// Answered with another error status.
    Failed,
    /// Not completed: the client went away before the answer was sent in full.
    Aborted,
}

impl Outcome {
    /// The outcome of an answer with HTTP `status` that was sent in full.
    pub fn of_status(status: u16) -> Outcome {
        match status {
            200..=399 => Outcome::Success,
            401 | 403 => Outcome::Denied,
            _ => Outcome::Failed,
        }
    }

    /// The snake_case name, as in the JSON event.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Denied => "denied",
            Outcome::Failed => "failed",
            Outcome::Aborted => "aborted",
        }
    }
}

/// One audit event. Fields that do not apply are `null` in the JSON line, so every line has the same
/// keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEvent {
    /// When the operation ended, RFC 3339 UTC with milliseconds.
    pub time: String,
    /// Where the operation came from: `http` or `cli`.
    pub source: &'static str,
    /// What was done: `dataset.upload`, `job.download`, `key.create`, ...
    pub operation: &'static str,
    /// How it ended.
    pub outcome: Outcome,
    /// The HTTP status of the answer (`null` for commands and aborted requests).
    pub status: Option<u16>,
    /// The tenant acted for (`null` when the caller did not authenticate).
    pub tenant_id: Option<Uuid>,
    /// The id of the API key that authenticated the request (as `keys list` shows it).
    pub key_id: Option<Uuid>,
    /// The HTTP method.
    pub method: Option<String>,
    /// The route template (`/v1/datasets/{id}`), never the query string.
    pub route: Option<String>,
    /// The dataset, job, hierarchy or key the operation addressed or created.
    pub resource_id: Option<Uuid>,
    /// Request body bytes read (as sent: compressed uploads count compressed).
    pub bytes_in: u64,
    /// Response body bytes sent (as sent: gzip downloads count compressed).
    pub bytes_out: u64,
    /// The request's `x-request-id`, to join the event with the service's logs.
    pub request_id: Option<String>,
    /// Milliseconds from the start of the request to the end of its answer.
    pub duration_ms: Option<u64>,
}

impl AuditEvent {
    /// An event of a command-line operation on `resource_id` for `tenant_id`, ending now.
    pub fn command(
        operation: &'static str,
        outcome: Outcome,
        tenant_id: Option<Uuid>,
        resource_id: Option<Uuid>,
    ) -> AuditEvent {
        AuditEvent {
            time: now_rfc3339(),
            source: "cli",
            operation,
            outcome,
            status: None,
            tenant_id,
            key_id: None,
            method: None,
            route: None,
            resource_id,
            bytes_in: 0,
            bytes_out: 0,
            request_id: None,
            duration_ms: None,
        }
    }
}

/// The current time as RFC 3339 UTC text.
pub fn now_rfc3339() -> String {
    crate::http::time::rfc3339(crate::http::time::now_ms())
}

/// Where audit events go: always the tracing target [`TARGET`], and a JSON-lines file when one is
/// configured. Cheap to clone; clones share the file.
#[derive(Clone, Default)]
pub struct AuditSink {
    file: Option<Arc<Mutex<File>>>,
}

impl std::fmt::Debug for AuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditSink")
            .field("file", &self.file.is_some())
            .finish()
    }
}

impl AuditSink {
    /// A sink writing to the tracing target only (`path` absent) or also appending to the file at
    /// `path`, created `0600` when missing.
    pub fn open(path: Option<&Path>) -> std::io::Result<AuditSink> {
        let file = match path {
            Some(path) => Some(Arc::new(Mutex::new(crate::private_fs::open_append(path)?))),
            None => None,
        };
        Ok(AuditSink { file })
    }

    /// The sink `serve` is configured with (`--audit-log`); the error names the file.
    pub fn for_serve(config: &crate::config::ServeConfig) -> anyhow::Result<AuditSink> {
        AuditSink::open(config.audit_log.as_deref()).map_err(|e| {
            let path = config.audit_log.as_deref().unwrap_or(Path::new(""));
            anyhow::anyhow!("cannot open the audit log {}: {e}", path.display())
        })
    }

    /// Records `event`. A failed file write is logged (without the event) and does not fail the
    /// operation, which has already happened.
    pub fn record(&self, event: &AuditEvent) {
        tracing::info!(
            target: TARGET,
            time = %event.time,
            source = event.source,
            operation = event.operation,
            outcome = event.outcome.as_str(),
            status = event.status,
            tenant_id = event.tenant_id.map(tracing::field::display),
            key_id = event.key_id.map(tracing::field::display),
            method = event.method.as_deref(),
            route = event.route.as_deref(),
            resource_id = event.resource_id.map(tracing::field::display),
            bytes_in = event.bytes_in,
            bytes_out = event.bytes_out,
            request_id = event.request_id.as_deref(),
            duration_ms = event.duration_ms,
            "audit event"
        );
        let Some(file) = &self.file else {
            return;
        };
        let mut line = match serde_json::to_vec(event) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(target: TARGET, error = %e, "cannot encode an audit event");
                return;
            }
        };
        line.push(b'\n');
        let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // one write per line: appends of a few hundred bytes do not interleave with other writers
        if let Err(e) = file.write_all(&line) {
            tracing::error!(target: TARGET, error = %e, "cannot append to the audit log");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> AuditEvent {
        let mut e = AuditEvent::command(
            "key.create",
            Outcome::Success,
            Some(Uuid::nil()),
            Some(Uuid::max()),
        );
        e.time = "2026-11-25T13:00:00.000Z".into();
        e
    }

    #[test]
    fn outcomes_follow_the_status() {
        assert_eq!(Outcome::of_status(200), Outcome::Success);
        assert_eq!(Outcome::of_status(204), Outcome::Success);
        assert_eq!(Outcome::of_status(304), Outcome::Success);
        assert_eq!(Outcome::of_status(401), Outcome::Denied);
        assert_eq!(Outcome::of_status(403), Outcome::Denied);
        assert_eq!(Outcome::of_status(404), Outcome::Failed);
        assert_eq!(Outcome::of_status(500), Outcome::Failed);
        assert_eq!(Outcome::Aborted.as_str(), "aborted");
    }

    #[test]
    fn the_file_gets_one_json_line_per_event_with_every_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let sink = AuditSink::open(Some(&path)).unwrap();
        sink.record(&event());
        sink.clone().record(&event());
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        let line = &lines[0];
        assert_eq!(line["operation"], "key.create");
        assert_eq!(line["outcome"], "success");
        assert_eq!(line["source"], "cli");
        assert_eq!(line["tenant_id"], Uuid::nil().to_string());
        assert_eq!(line["resource_id"], Uuid::max().to_string());
        assert_eq!(line["time"], "2026-11-25T13:00:00.000Z");
        assert!(line["key_id"].is_null() && line["status"].is_null());
        assert_eq!(line.as_object().unwrap().len(), 14);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn events_go_to_the_audit_target() {
        use std::io;

        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl io::Write for Buffer {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = crate::telemetry::subscriber(
            crate::config::LogFormat::Json,
            tracing_subscriber::EnvFilter::new("off,audit=info"),
            move || writer.clone(),
            false,
        );
        tracing::subscriber::with_default(subscriber, || {
            // Test threads that hit the audit callsite first, without a subscriber, can cache its
            // interest as "never" while this one registers (a race of tracing's per-process cache that
            // the service, with one global subscriber set at start, never meets): re-evaluate and retry.
            for _ in 0..3 {
                tracing::callsite::rebuild_interest_cache();
                AuditSink::default().record(&event());
                if !buffer.0.lock().unwrap().is_empty() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["target"], "audit");
        assert_eq!(line["operation"], "key.create");
        assert_eq!(line["tenant_id"], Uuid::nil().to_string());
        assert!(line.get("key_id").is_none(), "absent fields are left out");
    }
}
