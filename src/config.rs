//! Service configuration from flags and environment: every `serve` setting is a flag that can also be
//! given as an `ANONYMIZER_*` variable (the database as `DATABASE_URL`). Secrets never appear in `Debug`
//! output: the bootstrap key is redacted and so is the password of a database URL.

use std::fmt;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{Args, ValueEnum};

/// Which parts of the service a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServeRole {
    /// The HTTP API only (validates, stores and enqueues; never computes).
    Api,
    /// The job workers only.
    Worker,
    /// Both, in one process.
    All,
}

impl ServeRole {
    /// Whether this process serves HTTP.
    pub fn runs_api(self) -> bool {
        matches!(self, ServeRole::Api | ServeRole::All)
    }

    /// Whether this process runs jobs.
    pub fn runs_workers(self) -> bool {
        matches!(self, ServeRole::Worker | ServeRole::All)
    }
}

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line (containers, log shippers).
    Json,
    /// Human-readable lines (a terminal).
    Pretty,
}

impl LogFormat {
    /// `pretty` when stderr is a terminal, `json` otherwise.
    pub fn detect() -> Self {
        if std::io::stderr().is_terminal() {
            LogFormat::Pretty
        } else {
            LogFormat::Json
        }
    }
}

/// A secret string: usable through [`Secret::expose`], printed as `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret::new(s))
    }
}

/// `url` when given and not empty, else the SQLite file `<data_dir>/anonymizer.db` (created when missing).
pub fn resolve_database_url(url: Option<&str>, data_dir: &std::path::Path) -> String {
    match url.map(str::trim) {
        Some(url) if !url.is_empty() => url.to_string(),
        _ => format!(
            "sqlite://{}?mode=rwc",
            data_dir.join("anonymizer.db").display()
        ),
    }
}

/// The file of a SQLite URL (`sqlite://path?…`); `None` for other databases and in-memory ones.
pub fn sqlite_file(url: &str) -> Option<PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// Where a database URL points, for people: a SQLite file's absolute path, else the URL without its
/// password.
pub fn database_location(url: &str) -> String {
    match sqlite_file(url) {
        Some(file) => std::path::absolute(&file)
            .unwrap_or(file)
            .display()
            .to_string(),
        None => redact_url_password(url),
    }
}

/// The database of the administrative commands (`anonymizer keys …`): the same defaults as `serve`.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// Database: `postgres://...` or `sqlite://...`; a SQLite file in the data directory when absent.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,

    /// Directory for local state (the default SQLite database).
    #[arg(long, env = "ANONYMIZER_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// A file the audit events of key changes are appended to (JSON lines, created 0600), as with
    /// `serve --audit-log`; they also go to the `audit` log target.
    #[arg(long, env = "ANONYMIZER_AUDIT_LOG")]
    pub audit_log: Option<PathBuf>,
}

impl DatabaseArgs {
    /// The database URL, resolved as for `serve`.
    pub fn database_url(&self) -> String {
        resolve_database_url(self.database_url.as_deref(), &self.data_dir)
    }
}

/// Default upload limit: 1 GiB (after decompression).
pub const DEFAULT_UPLOAD_LIMIT: u64 = 1 << 30;

/// Default limit of a job or assessment request body: 1 MiB.
pub const DEFAULT_JOB_BODY_LIMIT: usize = 1 << 20;

/// Default memory budget of the jobs a process runs: 8 GiB.
pub const DEFAULT_JOB_MEMORY_BUDGET: u64 = 8 << 30;

/// Parses `--listen`: an address as it is, else a host name resolved to its first address (IPv4
/// first, as `localhost` usually means 127.0.0.1 to clients).
fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    use std::net::ToSocketAddrs;
    let addresses: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("not an address or host:port ({e})"))?
        .collect();
    addresses
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addresses.first())
        .copied()
        .ok_or_else(|| format!("{text} resolves to no address"))
}

/// Settings of `anonymizer serve`.
#[derive(Clone, Args)]
pub struct ServeConfig {
    /// Address the HTTP API listens on: an IP address or a host name (`localhost:8080`), with a port.
    #[arg(long, env = "ANONYMIZER_LISTEN", default_value = "127.0.0.1:8080",
          value_parser = parse_listen)]
    pub listen: SocketAddr,

    /// Which parts run in this process: the API, the workers, or both.
    #[arg(long, env = "ANONYMIZER_ROLE", value_enum, default_value_t = ServeRole::All)]
    pub role: ServeRole,

    /// Database: `postgres://...` or `sqlite://...`; a SQLite file in the data directory when absent.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,

    /// Directory for local state (the default SQLite database).
    #[arg(long, env = "ANONYMIZER_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Jobs run at once by this process.
    #[arg(long, env = "ANONYMIZER_WORKER_SLOTS", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub worker_slots: u32,

    /// CPU threads each job may use.
    #[arg(long, env = "ANONYMIZER_THREADS_PER_JOB", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads_per_job: u32,

    /// Largest accepted upload, in bytes (after decompression).
    #[arg(long, env = "ANONYMIZER_UPLOAD_LIMIT", default_value_t = DEFAULT_UPLOAD_LIMIT,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub upload_limit: u64,

    /// Longest CSV field an upload may contain, in bytes; a longer one is refused with its line.
    #[arg(long, env = "ANONYMIZER_CSV_FIELD_LIMIT", default_value_t = crate::codec::DEFAULT_MAX_FIELD_BYTES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub csv_field_limit: usize,

    /// A job still running after this many seconds is stopped and fails with `deadline_exceeded`.
    #[arg(long, env = "ANONYMIZER_JOB_DEADLINE_SECS", default_value_t = 3600,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub job_deadline_secs: u64,

    /// A Chromium (or Chrome) executable that prints report pages to PDF for
    /// `GET /v1/jobs/{id}/report.pdf`, e.g. /usr/bin/chromium; without one that route answers 501.
    #[arg(long, env = "ANONYMIZER_PDF_RENDERER")]
    pub pdf_renderer: Option<std::path::PathBuf>,

    /// Hosts a job's callback URL may name, comma-separated: `host`, `host:port` or `*.domain` (its
    /// subdomains). Empty (the default): jobs may not carry callbacks.
    #[arg(long, env = "ANONYMIZER_WEBHOOK_ALLOWED_HOSTS", value_delimiter = ',')]
    pub webhook_allowed_hosts: Vec<String>,

    /// Let webhooks go to loopback, private and link-local addresses (refused by default, so that a
    /// callback cannot reach the service's own network).
    #[arg(
        long,
        env = "ANONYMIZER_WEBHOOK_ALLOW_PRIVATE",
        default_value_t = false
    )]
    pub webhook_allow_private: bool,

    /// Seconds after a job's state change during which its webhook is retried.
    #[arg(long, env = "ANONYMIZER_WEBHOOK_RETRY_SECS", default_value_t = 86_400,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_retry_secs: u64,

    /// Milliseconds before a webhook's first retry; each later retry waits twice as long (with jitter),
    /// at most an hour.
    #[arg(long, env = "ANONYMIZER_WEBHOOK_RETRY_BASE_MS", default_value_t = 5_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_retry_base_ms: u64,

    /// Seconds a claimed job stays leased without a heartbeat before another worker may reclaim it.
    #[arg(long, env = "ANONYMIZER_LEASE_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_secs: u64,

    /// Running jobs one tenant may have at once across all workers; 0 means no cap. Claims are fair
    /// across tenants either way (the tenant with the fewest running jobs goes first).
    #[arg(long, env = "ANONYMIZER_TENANT_MAX_RUNNING", default_value_t = 0)]
    pub tenant_max_running: u32,

    /// Days datasets, outputs and finished jobs are kept; 0 keeps them forever.
    #[arg(long, env = "ANONYMIZER_RETENTION_DAYS", default_value_t = 30)]
    pub retention_days: u32,

    /// Seconds running jobs get to finish on shutdown before they are handed back to the queue.
    #[arg(long, env = "ANONYMIZER_SHUTDOWN_GRACE_SECS", default_value_t = 30)]
    pub shutdown_grace_secs: u64,

    /// Log format; `pretty` when stderr is a terminal, `json` otherwise.
    #[arg(long, env = "ANONYMIZER_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,

    /// An API key accepted on first start, when the database has no keys yet (read it through
    /// [`ServeConfig::bootstrap_key`], which ignores an empty value).
    #[arg(long, env = "ANONYMIZER_BOOTSTRAP_KEY", hide_env_values = true)]
    pub bootstrap_key: Option<Secret>,

    /// A file the audit events of data operations are appended to (JSON lines, created 0600); they
    /// always go to the `audit` log target too.
    #[arg(long, env = "ANONYMIZER_AUDIT_LOG")]
    pub audit_log: Option<PathBuf>,

    /// Whether database migrations run at start (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`).
    #[arg(long, env = "ANONYMIZER_MIGRATE", default_value = "true",
          value_parser = BoolishValueParser::new(), action = clap::ArgAction::Set)]
    pub migrate: bool,

    /// Open HTTP connections at most; more are closed as they arrive.
    #[arg(long, env = "ANONYMIZER_MAX_CONNECTIONS", default_value_t = 4096,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,

    /// Seconds a client has to send a request's headers (and to finish a TLS handshake); also the idle
    /// time after which a keep-alive connection is closed.
    #[arg(long, env = "ANONYMIZER_HEADER_READ_TIMEOUT_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_secs: u64,

    /// PEM certificate chain: serve HTTPS instead of HTTP (needs `--tls-key`).
    #[arg(long, env = "ANONYMIZER_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of `--tls-cert`.
    #[arg(long, env = "ANONYMIZER_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Largest accepted job (and assessment) request body, in bytes.
    #[arg(long, env = "ANONYMIZER_JOB_BODY_LIMIT", default_value_t = DEFAULT_JOB_BODY_LIMIT,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub job_body_limit: usize,

    /// Seconds an upload may send nothing before it is refused with 408; also the window over which
    /// `--upload-min-rate` is measured.
    #[arg(long, env = "ANONYMIZER_UPLOAD_IDLE_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub upload_idle_timeout_secs: u64,

    /// Bytes per second an upload must average over each idle-timeout window (0: no minimum).
    #[arg(long, env = "ANONYMIZER_UPLOAD_MIN_RATE", default_value_t = 1024)]
    pub upload_min_rate: u64,

    /// Uploads this process receives at once; more are refused with 503 and `Retry-After`.
    #[arg(long, env = "ANONYMIZER_MAX_UPLOADS", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_uploads: u32,

    /// Bytes a job may be expected to need (records and columns of its dataset, see "Memory per record"
    /// in docs/benchmarks.md); a larger job is refused at submission with `memory_budget_exceeded`. The jobs this
    /// process runs at once share it: a job that does not fit beside them waits until they finish.
    /// 0: no budget.
    #[arg(long, env = "ANONYMIZER_JOB_MEMORY_BUDGET", default_value_t = DEFAULT_JOB_MEMORY_BUDGET)]
    pub job_memory_budget: u64,

    /// Uploads one tenant may have in flight in this process; more are refused with 429 and `Retry-After`.
    #[arg(long, env = "ANONYMIZER_MAX_UPLOADS_PER_TENANT", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_uploads_per_tenant: u32,
}

impl ServeConfig {
    /// The database URL: `DATABASE_URL` when given and not empty, else
    /// `sqlite://<data_dir>/anonymizer.db?mode=rwc` (created when missing).
    pub fn database_url(&self) -> String {
        resolve_database_url(self.database_url.as_deref(), &self.data_dir)
    }

    /// The bootstrap key, unless absent or empty (an empty variable, as `VAR=` in a compose file, means
    /// none).
    pub fn bootstrap_key(&self) -> Option<&Secret> {
        self.bootstrap_key
            .as_ref()
            .filter(|k| !k.expose().trim().is_empty())
    }

    /// The log format, detected from stderr when not given.
    pub fn log_format(&self) -> LogFormat {
        self.log_format.unwrap_or_else(LogFormat::detect)
    }

    /// The job deadline.
    pub fn job_deadline(&self) -> Duration {
        Duration::from_secs(self.job_deadline_secs)
    }

    /// How webhooks are sent; an error names an allowlist entry that is not a host pattern.
    pub fn webhooks(&self) -> Result<crate::webhooks::WebhookSettings, String> {
        let defaults = crate::webhooks::WebhookSettings::default();
        Ok(crate::webhooks::WebhookSettings {
            policy: crate::webhooks::CallbackPolicy::new(
                &self.webhook_allowed_hosts,
                self.webhook_allow_private,
            )?,
            retry_for: Duration::from_secs(self.webhook_retry_secs),
            retry_base: Duration::from_millis(self.webhook_retry_base_ms),
            retry_max: defaults
                .retry_max
                .max(Duration::from_millis(self.webhook_retry_base_ms)),
            ..defaults
        })
    }

    /// The lease duration.
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease_secs)
    }

    /// The shutdown grace period.
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }

    /// The header-read timeout.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs(self.header_read_timeout_secs)
    }

    /// The upload idle timeout.
    pub fn upload_idle_timeout(&self) -> Duration {
        Duration::from_secs(self.upload_idle_timeout_secs)
    }

    /// The retention period, `None` when data is kept forever.
    pub fn retention(&self) -> Option<Duration> {
        (self.retention_days > 0)
            .then(|| Duration::from_secs(u64::from(self.retention_days) * 86_400))
    }
}

impl fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeConfig")
            .field("listen", &self.listen)
            .field("role", &self.role)
            .field(
                "database_url",
                &self.database_url.as_deref().map(redact_url_password),
            )
            .field("data_dir", &self.data_dir)
            .field("worker_slots", &self.worker_slots)
            .field("threads_per_job", &self.threads_per_job)
            .field("upload_limit", &self.upload_limit)
            .field("csv_field_limit", &self.csv_field_limit)
            .field("job_deadline_secs", &self.job_deadline_secs)
            .field("pdf_renderer", &self.pdf_renderer)
            .field("webhook_allowed_hosts", &self.webhook_allowed_hosts)
            .field("webhook_allow_private", &self.webhook_allow_private)
            .field("webhook_retry_secs", &self.webhook_retry_secs)
            .field("webhook_retry_base_ms", &self.webhook_retry_base_ms)
            .field("lease_secs", &self.lease_secs)
            .field("tenant_max_running", &self.tenant_max_running)
            .field("retention_days", &self.retention_days)
            .field("shutdown_grace_secs", &self.shutdown_grace_secs)
            .field("log_format", &self.log_format)
            .field("bootstrap_key", &self.bootstrap_key)
            .field("migrate", &self.migrate)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout_secs", &self.header_read_timeout_secs)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("job_body_limit", &self.job_body_limit)
            .field("upload_idle_timeout_secs", &self.upload_idle_timeout_secs)
            .field("upload_min_rate", &self.upload_min_rate)
            .field("max_uploads", &self.max_uploads)
            .field("max_uploads_per_tenant", &self.max_uploads_per_tenant)
            .field("job_memory_budget", &self.job_memory_budget)
            .field("audit_log", &self.audit_log)
            .finish()
    }
}

/// `scheme://user:password@host/...` with the password replaced by `[redacted]`; other URLs unchanged.
pub fn redact_url_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &authority[..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}{}:[redacted]{}",
            &url[..scheme_end + 3],
            &userinfo[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::sync::Mutex;

    /// Tests that read or write `ANONYMIZER_*` variables hold this lock.
    static ENV: Mutex<()> = Mutex::new(());

    /// DATABASE_URL is left alone: a CI run may set it for the store's tests.
    const VARS: [&str; 25] = [
        "ANONYMIZER_LISTEN",
        "ANONYMIZER_ROLE",
        "ANONYMIZER_DATA_DIR",
        "ANONYMIZER_WORKER_SLOTS",
        "ANONYMIZER_THREADS_PER_JOB",
        "ANONYMIZER_UPLOAD_LIMIT",
        "ANONYMIZER_JOB_DEADLINE_SECS",
        "ANONYMIZER_LEASE_SECS",
        "ANONYMIZER_RETENTION_DAYS",
        "ANONYMIZER_SHUTDOWN_GRACE_SECS",
        "ANONYMIZER_LOG_FORMAT",
        "ANONYMIZER_BOOTSTRAP_KEY",
        "ANONYMIZER_MIGRATE",
        "ANONYMIZER_MAX_CONNECTIONS",
        "ANONYMIZER_HEADER_READ_TIMEOUT_SECS",
        "ANONYMIZER_TLS_CERT",
        "ANONYMIZER_TLS_KEY",
        "ANONYMIZER_JOB_BODY_LIMIT",
        "ANONYMIZER_UPLOAD_IDLE_TIMEOUT_SECS",
        "ANONYMIZER_UPLOAD_MIN_RATE",
        "ANONYMIZER_MAX_UPLOADS",
        "ANONYMIZER_MAX_UPLOADS_PER_TENANT",
        "ANONYMIZER_JOB_MEMORY_BUDGET",
        "ANONYMIZER_AUDIT_LOG",
        "ANONYMIZER_CSV_FIELD_LIMIT",
    ];

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeConfig,
    }

    fn parse(args: &[&str]) -> Result<ServeConfig, clap::Error> {
        Cli::try_parse_from(std::iter::once("anonymizer").chain(args.iter().copied()))
            .map(|c| c.serve)
    }

    fn clear() {
        for v in VARS {
            std::env::remove_var(v);
        }
    }

    #[test]
    fn defaults() {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        clear();
        let mut c = parse(&[]).unwrap();
        assert_eq!(c.listen, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(c.role, ServeRole::All);
        assert_eq!(c.data_dir, PathBuf::from("./data"));
        assert_eq!(c.worker_slots, 2);
        assert_eq!(c.threads_per_job, 1);
        assert_eq!(c.upload_limit, 1024 * 1024 * 1024);
        assert_eq!(c.job_deadline(), Duration::from_secs(3600));
        assert_eq!(c.lease(), Duration::from_secs(30));
        assert_eq!(c.retention(), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(c.shutdown_grace(), Duration::from_secs(30));
        assert_eq!(c.log_format, None);
        assert!(c.bootstrap_key.is_none());
        assert!(c.migrate);
        assert_eq!(c.max_connections, 4096);
        assert_eq!(c.header_read_timeout_secs, 10);
        assert_eq!(c.tls_cert, None);
        assert_eq!(c.job_body_limit, 1 << 20);
        assert_eq!(c.upload_idle_timeout_secs, 30);
        assert_eq!(c.upload_min_rate, 1024);
        assert_eq!((c.max_uploads, c.max_uploads_per_tenant), (8, 2));
        assert_eq!(c.job_memory_budget, 8 << 30);
        assert!(
            parse(&["--tls-cert", "c.pem"]).is_err(),
            "a certificate needs its key"
        );
        c.database_url = None;
        assert_eq!(c.database_url(), "sqlite://./data/anonymizer.db?mode=rwc");
        c.database_url = Some("postgres://db/anon".into());
        assert_eq!(c.database_url(), "postgres://db/anon");
    }

    #[test]
    fn tenant_max_running_is_no_cap_by_default_and_read_from_its_variable() {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        clear();
        std::env::remove_var("ANONYMIZER_TENANT_MAX_RUNNING");
        let default = parse(&[]);
        std::env::set_var("ANONYMIZER_TENANT_MAX_RUNNING", "3");
        let from_env = parse(&[]);
        let from_flag = parse(&["--tenant-max-running", "1"]);
        std::env::remove_var("ANONYMIZER_TENANT_MAX_RUNNING");
        assert_eq!(default.unwrap().tenant_max_running, 0);
        assert_eq!(from_env.unwrap().tenant_max_running, 3);
        assert_eq!(from_flag.unwrap().tenant_max_running, 1);
        assert!(parse(&["--tenant-max-running", "-1"]).is_err());
    }

    #[test]
    fn environment_overrides_defaults_and_flags_override_environment() {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        clear();
        let set = [
            ("ANONYMIZER_LISTEN", "0.0.0.0:9000"),
            ("ANONYMIZER_ROLE", "worker"),
            ("ANONYMIZER_DATA_DIR", "/var/lib/anonymizer"),
            ("ANONYMIZER_WORKER_SLOTS", "8"),
            ("ANONYMIZER_THREADS_PER_JOB", "4"),
            ("ANONYMIZER_UPLOAD_LIMIT", "1000"),
            ("ANONYMIZER_JOB_DEADLINE_SECS", "60"),
            ("ANONYMIZER_LEASE_SECS", "5"),
            ("ANONYMIZER_RETENTION_DAYS", "0"),
            ("ANONYMIZER_SHUTDOWN_GRACE_SECS", "2"),
            ("ANONYMIZER_LOG_FORMAT", "json"),
            ("ANONYMIZER_BOOTSTRAP_KEY", "s3cret-key"),
            ("ANONYMIZER_MIGRATE", "off"),
        ];
        for (k, v) in set {
            std::env::set_var(k, v);
        }
        let from_env = parse(&[]);
        let from_flags = parse(&["--worker-slots", "3", "--role", "api", "--migrate", "yes"]);
        let zero_slots = parse(&["--worker-slots", "0"]);
        std::env::set_var("ANONYMIZER_BOOTSTRAP_KEY", "");
        let empty_key = parse(&[]);
        clear();

        let mut c = from_env.unwrap();
        assert_eq!(c.listen, "0.0.0.0:9000".parse().unwrap());
        assert_eq!(
            parse_listen("localhost:8081"),
            Ok("127.0.0.1:8081".parse().unwrap())
        );
        assert_eq!(parse_listen("[::1]:80"), Ok("[::1]:80".parse().unwrap()));
        assert!(parse_listen("localhost").is_err());
        assert!(parse_listen("no such host.invalid:80").is_err());
        assert_eq!(c.role, ServeRole::Worker);
        assert!(c.role.runs_workers() && !c.role.runs_api());
        assert_eq!(c.worker_slots, 8);
        assert_eq!(c.threads_per_job, 4);
        assert_eq!(c.upload_limit, 1000);
        assert_eq!(c.job_deadline_secs, 60);
        assert_eq!(c.lease_secs, 5);
        assert_eq!(c.retention(), None);
        assert_eq!(c.shutdown_grace_secs, 2);
        assert_eq!(c.log_format(), LogFormat::Json);
        assert_eq!(c.bootstrap_key().map(Secret::expose), Some("s3cret-key"));
        assert!(!c.migrate);
        c.database_url = None;
        assert_eq!(
            c.database_url(),
            "sqlite:///var/lib/anonymizer/anonymizer.db?mode=rwc"
        );

        let f = from_flags.unwrap();
        assert_eq!(f.worker_slots, 3);
        assert_eq!(f.role, ServeRole::Api);
        assert!(f.migrate);
        assert_eq!(f.threads_per_job, 4);

        assert!(zero_slots.is_err());

        let mut e = empty_key.unwrap();
        assert!(e.bootstrap_key().is_none());
        e.database_url = Some(String::new());
        assert_eq!(
            e.database_url(),
            "sqlite:///var/lib/anonymizer/anonymizer.db?mode=rwc"
        );
    }

    #[test]
    fn debug_redacts_secrets() {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        clear();
        let mut c = parse(&["--bootstrap-key", "s3cret-key"]).unwrap();
        c.database_url = Some("postgres://anon:hunter2@db:5432/anon?sslmode=disable".into());
        let debug = format!("{c:?}");
        assert!(!debug.contains("s3cret-key"), "{debug}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(debug.contains("[redacted]"));
        assert!(debug.contains("postgres://anon:[redacted]@db:5432/anon?sslmode=disable"));
    }

    #[test]
    fn csv_field_limit_has_a_default_an_environment_variable_and_a_flag() {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        clear();
        std::env::remove_var("ANONYMIZER_CSV_FIELD_LIMIT");
        let default = parse(&[]).map(|c| c.csv_field_limit);
        std::env::set_var("ANONYMIZER_CSV_FIELD_LIMIT", "4096");
        let from_env = parse(&[]).map(|c| c.csv_field_limit);
        let from_flag = parse(&["--csv-field-limit", "77"]).map(|c| c.csv_field_limit);
        let zero = parse(&["--csv-field-limit", "0"]).map(|c| c.csv_field_limit);
        std::env::remove_var("ANONYMIZER_CSV_FIELD_LIMIT");
        assert_eq!(default.unwrap(), 1 << 20);
        assert_eq!(from_env.unwrap(), 4096);
        assert_eq!(from_flag.unwrap(), 77);
        assert!(zero.is_err());
    }

    #[test]
    fn url_redaction_leaves_password_free_urls_alone() {
        assert_eq!(
            redact_url_password("sqlite://./data/a.db"),
            "sqlite://./data/a.db"
        );
        assert_eq!(
            redact_url_password("postgres://anon@db/x"),
            "postgres://anon@db/x"
        );
        assert_eq!(
            redact_url_password("postgres://u:p@ss@db/x"),
            "postgres://u:[redacted]@db/x"
        );
        assert_eq!(redact_url_password("not a url"), "not a url");
    }
}
