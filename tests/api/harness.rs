//! The API under test: the real router (`http::app`) behind the service's own accept loop
//! (`http::server::serve`: header timeout, connection cap, lingering close), over real HTTP on a random
//! loopback port, backed by a real store (a throwaway database from `tests/support/database.rs`), with
//! two tenants' keys. Cases are async functions taking a [`Service`]; `api_cases!` runs each on both backends.

use std::future::Future;
use std::time::Duration;

use anonymizer::http::{self, ApiSettings, AppState};
use anonymizer::store::{Backend, Store};

use crate::database::TestDatabase;

/// Runs each named case on SQLite and on PostgreSQL.
#[macro_export]
macro_rules! api_cases {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    $crate::harness::run(anonymizer::store::Backend::Sqlite, super::$case).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    $crate::harness::run(anonymizer::store::Backend::Postgres, super::$case).await;
                }
            }
        )*
    };
}

/// A running service and clients for it.
#[derive(Clone)]
pub struct Service {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The state behind the router (store, tables, metrics, wake-up).
    pub state: AppState,
    /// A key of tenant `alpha`.
    pub key: String,
    /// A key of tenant `beta`.
    pub other_key: String,
    /// An HTTP client (no automatic decompression, so tests see raw encodings).
    pub client: reqwest::Client,
}

impl Service {
    /// The store behind the service.
    pub fn store(&self) -> &Store {
        &self.state.store
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with tenant alpha's key.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(&self.key)
    }

    /// A GET with tenant alpha's key.
    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::GET, path)
    }

    /// A POST with tenant alpha's key.
    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, path)
    }

    /// A DELETE with tenant alpha's key.
    pub fn delete(&self, path: &str) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::DELETE, path)
    }

    /// Uploads `csv` as dataset `name` (comma-delimited) and returns its JSON; panics unless 201.
    pub async fn upload(&self, name: &str, csv: &[u8]) -> serde_json::Value {
        self.upload_with(name, csv, ",").await
    }

    /// Sends `csv` to `POST /v1/datasets` with the query parameters `query`; the answer as it is.
    pub async fn post_csv(&self, query: &[(&str, &str)], csv: &[u8]) -> reqwest::Response {
        self.post("/v1/datasets")
            .query(query)
            .header("content-type", "text/csv")
            .body(csv.to_vec())
            .send()
            .await
            .expect("upload request")
    }

    /// Uploads `csv` with `delimiter` and returns its JSON; panics unless 201.
    pub async fn upload_with(&self, name: &str, csv: &[u8], delimiter: &str) -> serde_json::Value {
        let response = self
            .post_csv(&[("name", name), ("delimiter", delimiter)], csv)
            .await;
        let status = response.status();
        let body: serde_json::Value = response.json().await.expect("upload answer is JSON");
        assert_eq!(status, 201, "upload failed: {body}");
        body
    }
}

/// Asserts a problem+json answer with `status` and `code`; returns the problem.
pub async fn expect_problem(
    response: reqwest::Response,
    status: u16,
    code: &str,
) -> serde_json::Value {
    let actual = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let text = response.text().await.expect("body");
    assert_eq!(
        actual, status,
        "expected {status} {code}, got {actual}: {text}"
    );
    assert_eq!(content_type, "application/problem+json", "{text}");
    let problem: serde_json::Value = serde_json::from_str(&text).expect("problem is JSON");
    assert_eq!(problem["code"], code, "{problem}");
    assert_eq!(problem["status"], status, "{problem}");
    // the occurrence is named by the request's id
    assert_eq!(
        problem["instance"],
        format!("urn:uuid:{request_id}").as_str(),
        "{problem}"
    );
    problem
}

/// Runs `case` against a fresh service on `backend`, then tears everything down even if it panicked.
pub async fn run<F, Fut>(backend: Backend, case: F)
where
    F: FnOnce(Service) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    run_with(backend, ApiSettings::default(), case).await
}

/// [`run`] with custom API settings.
pub async fn run_with<F, Fut>(backend: Backend, settings: ApiSettings, case: F)
where
    F: FnOnce(Service) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    run_configured(backend, move |state| state.with_settings(settings), case).await
}

/// [`run`] with the service's state passed through `configure` (settings, audit sink, ...).
pub async fn run_configured<C, F, Fut>(backend: Backend, configure: C, case: F)
where
    C: FnOnce(AppState) -> AppState,
    F: FnOnce(Service) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let database = TestDatabase::create(backend).await;
    let store = database.open(10).await;
    assert_eq!(store.backend(), backend);
    let (key, _) = store.create_api_key("alpha").await.expect("key alpha");
    let (other_key, _) = store.create_api_key("beta").await.expect("key beta");
    let state = configure(AppState::new(store.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let app = http::app(state.clone());
    // the service's own accept loop: header timeout, connection cap and lingering close included
    let limits = http::server::ServerLimits {
        max_connections: 1024,
        header_read_timeout: Duration::from_secs(10),
        shutdown_grace: Duration::from_secs(1),
    };
    let metrics = state.metrics.clone();
    let server = tokio::spawn(async move {
        let _ = http::server::serve(
            listener,
            app,
            limits,
            None,
            metrics,
            std::future::pending::<()>(),
        )
        .await;
    });
    let client = reqwest::Client::builder()
        .no_gzip()
        .build()
        .expect("client");
    let service = Service {
        base,
        state,
        key,
        other_key,
        client,
    };
    let outcome = tokio::spawn(case(service)).await;
    server.abort();
    let _ = server.await;
    store.close().await;
    database.drop().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The repository's test data directory.
pub fn data_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}
