//! What the service benches share: the real binary started on a fresh database (a SQLite file, or a
//! PostgreSQL database made on TEST_DATABASE_URL's server, default
//! postgres://postgres@127.0.0.1:5432/postgres, and dropped afterwards) and requests with its bootstrap
//! key.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::Connection;

/// The binary under test: this build's, or `BENCH_BIN` (another build, to compare with).
pub fn binary() -> String {
    std::env::var("BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_anonymizer").to_string())
}

/// The bootstrap API key the server is started with.
pub const KEY: &str = "anz_bench-bootstrap-key-0123456789abcdef0123456789";

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The real binary serving on a free loopback port; killed on drop.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The port it listens on.
    #[allow(dead_code)]
    pub port: u16,
    /// A client with a large keep-alive pool.
    pub client: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `anonymizer serve` on `database_url` with extra environment `env` and waits until
    /// `/readyz` answers 200.
    pub async fn start(database_url: &str, env: &[(&str, &str)]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        let data_dir = std::env::temp_dir().join(format!("anonymizer-bench-{port}"));
        let mut command = Command::new(binary());
        command
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("DATABASE_URL", database_url)
            .env("ANONYMIZER_DATA_DIR", &data_dir)
            .env("ANONYMIZER_BOOTSTRAP_KEY", KEY)
            .env("ANONYMIZER_UPLOAD_LIMIT", (1u64 << 31).to_string())
            // adult_full's spec inlines the 1.4 MB fnlwgt hierarchy, over the 1 MiB default
            .env("ANONYMIZER_JOB_BODY_LIMIT", (8u64 << 20).to_string())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // `BENCH_SERVER_LOG=path` keeps the server's log (with `BENCH_SERVER_RUST_LOG` as its filter)
        if let Ok(path) = std::env::var("BENCH_SERVER_LOG") {
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("server log file");
            command.stderr(log);
            if let Ok(filter) = std::env::var("BENCH_SERVER_RUST_LOG") {
                command.env("RUST_LOG", filter);
            }
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let child = command.spawn().expect("start the server");
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            port,
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(256)
                // under the server's idle timeout (its header-read timeout, 10 s), so that a request never
                // goes out on a connection the server is closing
                .pool_idle_timeout(Duration::from_secs(5))
                .build()
                .expect("client"),
        };
        let started = Instant::now();
        loop {
            if let Ok(r) = server
                .client
                .get(format!("{}/readyz", server.base))
                .send()
                .await
            {
                if r.status() == 200 {
                    return server;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "server not ready"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The server's process id.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// GET `path` with the bootstrap key.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .bearer_auth(KEY)
            .send()
            .await
            .expect("GET")
    }

    /// POST `path` (no body) with the bootstrap key.
    #[allow(dead_code)]
    pub async fn post(&self, path: &str) -> reqwest::Response {
        self.client
            .post(format!("{}{path}", self.base))
            .bearer_auth(KEY)
            .send()
            .await
            .expect("POST")
    }
}

/// Where the server keeps its data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in a temporary directory.
    Sqlite,
    /// A fresh PostgreSQL database on TEST_DATABASE_URL's server.
    Postgres,
}

impl Backend {
    /// `sqlite` or `postgres`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// A database made for one bench and dropped by [`Database::drop`].
pub struct Database {
    /// Its URL, for the server's `DATABASE_URL`.
    pub url: String,
    postgres: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl Database {
    /// A new database of `backend`.
    pub async fn create(backend: Backend) -> Database {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                Database {
                    url: format!("sqlite://{}", dir.path().join("bench.sqlite").display()),
                    postgres: None,
                    _dir: Some(dir),
                }
            }
            Backend::Postgres => {
                let admin = std::env::var("TEST_DATABASE_URL")
                    .unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_string());
                let name = format!("anonymizer_bench_{}", uuid::Uuid::new_v4().simple());
                let mut connection = sqlx::PgConnection::connect(&admin)
                    .await
                    .expect("PostgreSQL");
                sqlx::query(&format!("create database {name} template template0"))
                    .execute(&mut connection)
                    .await
                    .expect("create database");
                let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
                Database {
                    url: format!("{base}/{name}"),
                    postgres: Some((admin.clone(), name)),
                    _dir: None,
                }
            }
        }
    }

    /// Drops the PostgreSQL database (a SQLite directory goes with the value).
    pub async fn drop(self) {
        if let Some((admin, name)) = self.postgres {
            let mut connection = sqlx::PgConnection::connect(&admin)
                .await
                .expect("PostgreSQL");
            let _ = sqlx::query(&format!("drop database if exists {name} with (force)"))
                .execute(&mut connection)
                .await;
        }
    }
}
