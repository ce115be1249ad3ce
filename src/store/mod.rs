//! Persistence: PostgreSQL and SQLite behind one interface (datasets, hierarchies, jobs, api keys).
//!
//! SQL lives only in this module. Both backends use the same schema (`migrations/postgres`,
//! `migrations/sqlite`) and, apart from the job claim, the same SQL text:
//! - ids are UUID v4 stored as hyphenated lowercase text on both backends (one SQL text serves both;
//!   the public API uses [`Uuid`]);
//! - timestamps are bigint unix milliseconds from the process clock;
//! - JSON documents (specs, reports, progress, column lists, hierarchies) are text the store never parses;
//! - large payloads (uploads, outputs) are stored as chunks of at most [`CHUNK_SIZE`] bytes, written and
//!   read one chunk at a time;
//! - placeholders are `$1..$n`, which sqlx also accepts for SQLite.
//!
//! Another tenant's row is indistinguishable from a missing one: every tenant-scoped read or write filters
//! on `tenant_id` and answers [`StoreError::NotFound`].

/// Declares a row struct and reads it from a query result by column name (what sqlx's `FromRow` derive
/// does, without its proc-macro crate).
macro_rules! row_struct {
    ($(#[$meta:meta])* struct $name:ident { $($field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        struct $name {
            $($field: $ty,)*
        }

        impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for $name
        where
            &'static str: sqlx::ColumnIndex<R>,
            $($ty: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,)*
        {
            fn from_row(row: &'r R) -> std::result::Result<Self, sqlx::Error> {
                Ok(Self {
                    $($field: row.try_get(stringify!($field))?,)*
                })
            }
        }
    };
}

mod api_key;
mod chunk;
mod dataset;
mod error;
mod event;
mod hierarchy;
mod idempotency;
mod job;
pub mod migrations;
mod probe;
mod pseudonym_key;
mod retention;
mod webhook;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use uuid::Uuid;

pub use api_key::{ApiKeyRecord, Principal, LAST_USE_RESOLUTION_MS, MIN_IMPORTED_SECRET};
pub use dataset::{Dataset, DatasetMeta, DatasetUpload};
pub use error::{InvalidCursor, StoreError};
pub use event::{EventKind, JobEvent};
pub use hierarchy::{HierarchyShape, StoredHierarchy};
pub use idempotency::{Idempotency, Keyed};
pub use job::{ClaimedJob, Completion, HeartbeatAck, Job, JobFilter, JobResult, JobState, NewJob};
pub use pseudonym_key::PseudonymKeyInfo;
pub use retention::Purged;
pub use webhook::{AfterAttempt, AttemptRecord, Delivery, DueDelivery};

/// Result of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The largest chunk of an upload or an output, in bytes (1 MiB).
pub const CHUNK_SIZE: usize = 1 << 20;

/// The largest page a list call returns; smaller limits are honoured, 0 counts as 1.
pub const MAX_PAGE_SIZE: u32 = 1000;

/// How long a SQLite writer waits for another writer before giving up with "database is locked".
/// Long, because storing a job's output holds the write lock for as long as writing it takes (uploads
/// hold it only for one chunk at a time).
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long to wait for a free pooled connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// The permits of staged-upload writes for a pool of `max_connections`: half of it, at least one.
fn upload_writers(max_connections: u32) -> std::sync::Arc<tokio::sync::Semaphore> {
    std::sync::Arc::new(tokio::sync::Semaphore::new(
        (max_connections as usize / 2).max(1),
    ))
}
/// How long [`Store::ping`] waits for the database (connecting included) before it reports it down; well
/// under the 1 s within which `/readyz` must answer.
pub const PING_TIMEOUT: Duration = Duration::from_millis(500);

/// Runs `$body` with `$pool` bound to the concrete pool (`&PgPool` or `&SqlitePool`).
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            $crate::store::Pool::Postgres($pool) => $body,
            $crate::store::Pool::Sqlite($pool) => $body,
        }
    };
}

/// Runs `$body` with `$conn` bound to the transaction's connection (`&mut PgConnection` or
/// `&mut SqliteConnection`); use it as `&mut *$conn` to execute more than one statement.
macro_rules! with_tx {
    ($tx:expr, $conn:ident => $body:expr) => {
        match $tx {
            $crate::store::Tx::Postgres(t) => {
                let $conn = &mut **t;
                $body
            }
            $crate::store::Tx::Sqlite(t) => {
                let $conn = &mut **t;
                $body
            }
        }
    };
}

use with_pool;
use with_tx;

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Postgres => "postgres",
            Backend::Sqlite => "sqlite",
        }
    }
}

#[derive(Clone)]
enum Pool {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// A pooled connection held out of the pool until dropped (see [`Store::hold_connection`]).
#[allow(dead_code)] // held for its drop only
pub enum HeldConnection {
    /// A PostgreSQL connection.
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
    /// A SQLite connection.
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
}

/// An open transaction on either backend. Dropping it rolls back.
enum Tx {
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
}

impl Tx {
    async fn commit(self) -> Result<()> {
        match self {
            Tx::Postgres(t) => t.commit().await?,
            Tx::Sqlite(t) => t.commit().await?,
        }
        Ok(())
    }

    async fn rollback(self) -> Result<()> {
        match self {
            Tx::Postgres(t) => t.rollback().await?,
            Tx::Sqlite(t) => t.rollback().await?,
        }
        Ok(())
    }
}

/// The persistence layer: a cheap-to-clone handle on a connection pool (and the readiness probe's own
/// connection).
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    /// Connections staged uploads may use at once: half the pool, so that uploads, however many, always
    /// leave connections to status reads, job submissions and the workers.
    upload_writers: std::sync::Arc<tokio::sync::Semaphore>,
    probe: Arc<probe::Probe>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend())
            .finish()
    }
}

impl Store {
    /// Opens a pool on `postgres://…` (or `postgresql://…`) or `sqlite://path` / `sqlite:path`.
    ///
    /// A SQLite file (and its directory) is created when missing, private to the service's user (see
    /// [`crate::private_fs`]), and opened in WAL mode with foreign keys on, `synchronous = full` (an
    /// acknowledged write survives a power loss) and a busy timeout.
    /// Migrations are not run; call [`Store::migrate`].
    pub async fn connect(url: &str, max_connections: u32) -> Result<Store> {
        let max_connections = max_connections.max(1);
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url)?;
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options.clone())
                .await?;
            Ok(Store {
                pool: Pool::Postgres(pool),
                upload_writers: upload_writers(max_connections),
                probe: Arc::new(probe::Probe::new(probe::Target::Postgres(options))),
            })
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true)
                .busy_timeout(SQLITE_BUSY_TIMEOUT);
            let file = options.get_filename();
            if file.as_os_str() != ":memory:" {
                crate::private_fs::create_database_file(file).map_err(|e| {
                    StoreError::Database(format!("cannot create the database file: {e}"))
                })?;
            }
            let pool = SqlitePoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options.clone())
                .await?;
            Ok(Store {
                pool: Pool::Sqlite(pool),
                upload_writers: upload_writers(max_connections),
                probe: Arc::new(probe::Probe::new(probe::Target::Sqlite(options))),
            })
        } else {
            Err(StoreError::Database(
                "unsupported database url: expected postgres://… or sqlite://…".into(),
            ))
        }
    }

    /// Applies the pending migrations of this backend; a no-op when the schema is current. On PostgreSQL
    /// sqlx holds an advisory lock, so several processes may migrate at once.
    pub async fn migrate(&self) -> Result<()> {
        match &self.pool {
            Pool::Postgres(pool) => {
                let migrator = migrations::Embedded(migrations::POSTGRES)
                    .migrator()
                    .await?;
                migrator.run(pool).await?
            }
            Pool::Sqlite(pool) => {
                let migrator = migrations::Embedded(migrations::SQLITE).migrator().await?;
                migrator.run(pool).await?
            }
        }
        Ok(())
    }

    /// Checks that the database answers (readiness probe), within [`PING_TIMEOUT`]. The check runs on
    /// a connection of its own, so it reports the database even while every pooled connection is busy,
    /// and it recovers by itself once the database is back.
    pub async fn ping(&self) -> Result<()> {
        self.probe.check(PING_TIMEOUT).await
    }

    /// Takes one connection out of the pool until the returned guard is dropped. For tests and
    /// diagnostics that need an exhausted pool; the service never holds a connection this way.
    pub async fn hold_connection(&self) -> Result<HeldConnection> {
        Ok(match &self.pool {
            Pool::Postgres(pool) => HeldConnection::Postgres(pool.acquire().await?),
            Pool::Sqlite(pool) => HeldConnection::Sqlite(pool.acquire().await?),
        })
    }

    pub fn backend(&self) -> Backend {
        match &self.pool {
            Pool::Postgres(_) => Backend::Postgres,
            Pool::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Closes the pool, waiting for checked-out connections to come back, and the probe connection.
    pub async fn close(&self) {
        self.probe.close(PING_TIMEOUT).await;
        match &self.pool {
            Pool::Postgres(pool) => pool.close().await,
            Pool::Sqlite(pool) => pool.close().await,
        }
    }

    /// Begins a write transaction. On SQLite it takes the write lock at once (`begin immediate`), so a
    /// transaction never fails halfway because another writer committed after its first read.
    async fn begin_write(&self) -> Result<Tx> {
        Ok(match &self.pool {
            Pool::Postgres(pool) => Tx::Postgres(pool.begin().await?),
            Pool::Sqlite(pool) => Tx::Sqlite(pool.begin_with("begin immediate").await?),
        })
    }
}

/// A position in a list ordered by `(created_at, id)`, newest first. Its text form (`Display` /
/// `FromStr`) is opaque to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: i64,
    pub id: Uuid,
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.created_at, self.id.simple())
    }
}

impl FromStr for Cursor {
    type Err = InvalidCursor;

    fn from_str(s: &str) -> Result<Cursor, InvalidCursor> {
        let invalid = || InvalidCursor;
        let (at, id) = s.split_once('_').ok_or_else(invalid)?;
        Ok(Cursor {
            created_at: at.parse().map_err(|_| invalid())?,
            id: Uuid::try_parse(id).map_err(|_| invalid())?,
        })
    }
}

/// One page of a list, newest first; `next_cursor` is set when more items follow.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<Cursor>,
}

/// Turns `limit + 1` fetched rows into a page of at most `limit` items.
fn page_of<T>(mut items: Vec<T>, limit: i64, key: impl Fn(&T) -> Cursor) -> Page<T> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let next_cursor = if items.len() > limit {
        items.truncate(limit);
        items.last().map(key)
    } else {
        None
    };
    Page { items, next_cursor }
}

fn page_limit(limit: u32) -> i64 {
    i64::from(limit.clamp(1, MAX_PAGE_SIZE))
}

/// Milliseconds since the Unix epoch on the process clock.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn id_text(id: Uuid) -> String {
    id.hyphenated().to_string()
}

fn parse_id(text: &str) -> Result<Uuid> {
    Uuid::try_parse(text).map_err(|_| StoreError::Database("malformed id in the database".into()))
}

fn to_u64(value: i64) -> Result<u64> {
    u64::try_from(value).map_err(|_| StoreError::Database("negative size in the database".into()))
}

fn to_i64(value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| StoreError::Database("size out of range".into()))
}
