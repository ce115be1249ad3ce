//! Throwaway databases for the suites that need a real store: a SQLite file in a temporary directory, or
//! a fresh PostgreSQL database on TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//! created from template0 and dropped afterwards (`with (force)`, so lingering connections do not keep
//! it). A missing PostgreSQL fails the test rather than skipping it. Included with `#[path]` by the
//! suites that use it; each uses part of it.
#![allow(dead_code)]

use std::future::Future;

use anonymizer::store::{Backend, Store};
use sqlx::Connection;
use uuid::Uuid;

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database that exists until [`TestDatabase::drop`].
pub struct TestDatabase {
    /// Its URL, for `Store::connect` or a server process's `DATABASE_URL`.
    pub url: String,
    kind: Kind,
}

enum Kind {
    Sqlite(tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl TestDatabase {
    /// A fresh, empty (not migrated) database of `backend`.
    pub async fn create(backend: Backend) -> TestDatabase {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("db/test.sqlite").display());
                TestDatabase {
                    url,
                    kind: Kind::Sqlite(dir),
                }
            }
            Backend::Postgres => {
                let admin_url = std::env::var("TEST_DATABASE_URL")
                    .unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_string());
                let name = format!("anonymizer_t_{}", Uuid::new_v4().simple());
                let mut admin = sqlx::PgConnection::connect(&admin_url)
                    .await
                    .unwrap_or_else(|e| panic!("PostgreSQL at TEST_DATABASE_URL is required: {e}"));
                // template0 accepts no connections, so concurrent creations never collide on it
                sqlx::query(&format!("create database {name} template template0"))
                    .execute(&mut admin)
                    .await
                    .expect("create test database");
                TestDatabase {
                    url: database_url(&admin_url, &name),
                    kind: Kind::Postgres { admin_url, name },
                }
            }
        }
    }

    /// A migrated store on the database with a pool of `max_connections`.
    pub async fn open(&self, max_connections: u32) -> Store {
        let store = Store::connect(&self.url, max_connections)
            .await
            .expect("open the test store");
        store.migrate().await.expect("migrate the test store");
        store
    }

    /// Removes the database (the SQLite directory, or the PostgreSQL database).
    pub async fn drop(self) {
        match self.kind {
            Kind::Sqlite(dir) => drop(dir),
            Kind::Postgres { admin_url, name } => {
                let mut admin = sqlx::PgConnection::connect(&admin_url)
                    .await
                    .expect("admin connection");
                sqlx::query(&format!("drop database if exists {name} with (force)"))
                    .execute(&mut admin)
                    .await
                    .expect("drop test database");
            }
        }
    }
}

/// Runs `case` on a migrated store of `backend`, then closes it and drops the database, re-raising the
/// case's panic afterwards.
pub async fn with_store<F, Fut>(backend: Backend, max_connections: u32, case: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let database = TestDatabase::create(backend).await;
    let store = database.open(max_connections).await;
    assert_eq!(store.backend(), backend);
    let outcome = tokio::spawn(case(store.clone())).await;
    store.close().await;
    database.drop().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Runs `case` with the URL of a migrated database of `backend` (for server processes), then drops it.
pub async fn with_url<F, Fut>(backend: Backend, case: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let database = TestDatabase::create(backend).await;
    database.open(2).await.close().await;
    let outcome = tokio::spawn(case(database.url.clone())).await;
    database.drop().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// `admin_url` with its database replaced by `name` (query parameters kept).
fn database_url(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin_url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{name}{query}", &base[..host_end])
}
