//! The process's metrics registry, rendered in the Prometheus text format at `GET /metrics`: HTTP
//! request counts and latencies by route template (never by concrete path, so ids do not multiply
//! series), job durations by outcome (observed by this process's workers), and bytes uploaded. Job
//! counts by state and the queue depth are read from the store at scrape time, since the queue is shared
//! by every replica.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the HTTP latency histogram.
const HTTP_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Upper bounds (seconds) of the job duration histogram.
const JOB_BUCKETS: [f64; 10] = [0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0];

#[derive(Debug, Clone, Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], value: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; bounds.len()];
        }
        for (slot, bound) in self.counts.iter_mut().zip(bounds) {
            if value <= *bound {
                *slot += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str, bounds: &[f64]) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (count, bound) in self.counts.iter().zip(bounds) {
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {count}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", self.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.count);
    }
}

#[derive(Debug, Default)]
struct Registry {
    http: BTreeMap<(String, String, u16), Histogram>,
    jobs: BTreeMap<&'static str, Histogram>,
    uploaded_bytes: u64,
}

/// ServiceMetrics of this process.
#[derive(Debug, Default)]
pub struct ServiceMetrics {
    registry: Mutex<Registry>,
    /// The listener's connection counters (updated by `http::server` without the lock).
    pub connections: ConnectionCounters,
}

/// Connection counters of the listener.
#[derive(Debug, Default)]
pub struct ConnectionCounters {
    /// Connections open now.
    pub open: AtomicU64,
    /// Connections closed on arrival because the cap was reached.
    pub refused: AtomicU64,
    /// TLS handshakes that failed or timed out.
    pub failed_handshakes: AtomicU64,
}

/// Job counts read from the store at scrape time.
#[derive(Debug, Clone, Default)]
pub struct QueueSnapshot {
    /// Jobs per state name.
    pub by_state: Vec<(&'static str, u64)>,
    /// Uploads this process is receiving now.
    pub uploads_in_flight: usize,
}

impl ServiceMetrics {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records one HTTP request; `route` is the matched route template (or `unmatched`).
    pub fn observe_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        self.registry()
            .http
            .entry((method.to_string(), route.to_string(), status))
            .or_default()
            .observe(&HTTP_BUCKETS, elapsed.as_secs_f64());
    }

    /// Records a job this process finished; `outcome` is its terminal state (or `released`).
    pub fn observe_job(&self, outcome: &'static str, elapsed: Duration) {
        self.registry()
            .jobs
            .entry(outcome)
            .or_default()
            .observe(&JOB_BUCKETS, elapsed.as_secs_f64());
    }

    /// Counts bytes of a committed upload.
    pub fn add_uploaded_bytes(&self, bytes: u64) {
        self.registry().uploaded_bytes += bytes;
    }

    /// The Prometheus text exposition of everything, with `queue` read from the store.
    pub fn render(&self, queue: &QueueSnapshot) -> String {
        let registry = self.registry();
        let mut out = String::with_capacity(4096);
        out.push_str("# HELP anonymizer_http_request_duration_seconds Latency of HTTP requests by route template.\n");
        out.push_str("# TYPE anonymizer_http_request_duration_seconds histogram\n");
        for ((method, route, status), histogram) in &registry.http {
            let labels = format!(
                "method=\"{}\",route=\"{}\",status=\"{status}\"",
                escape(method),
                escape(route)
            );
            histogram.render(
                &mut out,
                "anonymizer_http_request_duration_seconds",
                &labels,
                &HTTP_BUCKETS,
            );
        }
        out.push_str("# HELP anonymizer_jobs Jobs in the shared queue by state.\n");
        out.push_str("# TYPE anonymizer_jobs gauge\n");
        let mut queued = 0;
        for (state, count) in &queue.by_state {
            let _ = writeln!(out, "anonymizer_jobs{{state=\"{state}\"}} {count}");
            if *state == "queued" {
                queued = *count;
            }
        }
        out.push_str("# HELP anonymizer_queue_depth Jobs waiting for a worker.\n");
        out.push_str("# TYPE anonymizer_queue_depth gauge\n");
        let _ = writeln!(out, "anonymizer_queue_depth {queued}");
        out.push_str(
            "# HELP anonymizer_job_duration_seconds Run time of jobs this process finished, by outcome.\n",
        );
        out.push_str("# TYPE anonymizer_job_duration_seconds histogram\n");
        for (outcome, histogram) in &registry.jobs {
            let labels = format!("outcome=\"{outcome}\"");
            histogram.render(
                &mut out,
                "anonymizer_job_duration_seconds",
                &labels,
                &JOB_BUCKETS,
            );
        }
        out.push_str(
            "# HELP anonymizer_uploaded_bytes_total Bytes of committed dataset uploads.\n",
        );
        out.push_str("# TYPE anonymizer_uploaded_bytes_total counter\n");
        let _ = writeln!(
            out,
            "anonymizer_uploaded_bytes_total {}",
            registry.uploaded_bytes
        );
        let gauges = [
            (
                "anonymizer_uploads_in_flight",
                "gauge",
                "Uploads this process is receiving.",
                queue.uploads_in_flight as u64,
            ),
            (
                "anonymizer_http_connections_open",
                "gauge",
                "Open HTTP connections.",
                self.connections.open.load(Ordering::Relaxed),
            ),
            (
                "anonymizer_http_connections_refused_total",
                "counter",
                "Connections closed on arrival at the connection cap.",
                self.connections.refused.load(Ordering::Relaxed),
            ),
            (
                "anonymizer_tls_handshake_failures_total",
                "counter",
                "TLS handshakes that failed or timed out.",
                self.connections.failed_handshakes.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        out
    }
}

/// Escapes a label value (backslash, quote, newline).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_histograms_and_gauges() {
        let metrics = ServiceMetrics::default();
        metrics.observe_request("GET", "/v1/jobs/{id}", 200, Duration::from_millis(3));
        metrics.observe_request("GET", "/v1/jobs/{id}", 200, Duration::from_millis(30));
        metrics.observe_job("succeeded", Duration::from_millis(700));
        metrics.add_uploaded_bytes(42);
        metrics.connections.open.fetch_add(7, Ordering::Relaxed);
        let text = metrics.render(&QueueSnapshot {
            by_state: vec![("queued", 3), ("running", 1)],
            uploads_in_flight: 2,
        });
        let route = r#"method="GET",route="/v1/jobs/{id}",status="200""#;
        assert!(text.contains(&format!(
            "anonymizer_http_request_duration_seconds_bucket{{{route},le=\"0.005\"}} 1"
        )));
        assert!(text.contains(&format!(
            "anonymizer_http_request_duration_seconds_bucket{{{route},le=\"0.05\"}} 2"
        )));
        assert!(text.contains(&format!(
            "anonymizer_http_request_duration_seconds_count{{{route}}} 2"
        )));
        assert!(text.contains("anonymizer_jobs{state=\"queued\"} 3"));
        assert!(text.contains("anonymizer_queue_depth 3"));
        assert!(text
            .contains("anonymizer_job_duration_seconds_bucket{outcome=\"succeeded\",le=\"1\"} 1"));
        assert!(text.contains("anonymizer_uploaded_bytes_total 42"));
        assert!(text.contains("anonymizer_uploads_in_flight 2"));
        assert!(text.contains("anonymizer_http_connections_open 7"));
        assert!(text.contains("# TYPE anonymizer_http_connections_refused_total counter"));
    }
}
