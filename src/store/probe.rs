//! The readiness probe's own database connection, outside the pool: a busy pool (every connection held
//! by uploads or jobs) neither delays nor fails the probe, and a database that stops answering fails it
//! within the caller's bound instead of the pool's 30 s acquire timeout.
//!
//! The connection is opened on the first probe and kept while it answers. A probe that fails or runs out
//! of time drops it (a connection interrupted mid-query is never reused), and the next probe opens a new
//! one, so readiness comes back by itself once the database does.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::Connection;
use tokio::sync::Mutex;

use super::{Result, StoreError};

/// Where the probe connects.
pub(super) enum Target {
    Postgres(PgConnectOptions),
    Sqlite(SqliteConnectOptions),
}

/// An open probe connection.
enum Conn {
    Postgres(PgConnection),
    Sqlite(SqliteConnection),
}

/// One connection for readiness checks; concurrent checks take turns on it.
pub(super) struct Probe {
    target: Target,
    conn: Mutex<Option<Conn>>,
}

impl Probe {
    /// A probe that connects to `target` on its first check.
    pub(super) fn new(target: Target) -> Probe {
        Probe {
            target,
            conn: Mutex::new(None),
        }
    }

    /// Runs `select 1` on the probe connection, connecting first when there is none; fails when that
    /// takes longer than `within`, waiting for a concurrent check included.
    pub(super) async fn check(&self, within: Duration) -> Result<()> {
        match tokio::time::timeout(within, self.check_unbounded()).await {
            Ok(result) => result,
            Err(_) => Err(StoreError::Database(format!(
                "the database did not answer within {} ms",
                within.as_millis()
            ))),
        }
    }

    async fn check_unbounded(&self) -> Result<()> {
        let mut slot = self.conn.lock().await;
        // taken out while in use: if this future is dropped mid-query, the connection goes with it
        let mut conn = match slot.take() {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        match &mut conn {
            Conn::Postgres(c) => {
                sqlx::query("select 1").execute(&mut *c).await?;
            }
            Conn::Sqlite(c) => {
                sqlx::query("select 1").execute(&mut *c).await?;
            }
        }
        *slot = Some(conn);
        Ok(())
    }

    async fn connect(&self) -> Result<Conn> {
        Ok(match &self.target {
            Target::Postgres(options) => Conn::Postgres(PgConnection::connect_with(options).await?),
            Target::Sqlite(options) => Conn::Sqlite(SqliteConnection::connect_with(options).await?),
        })
    }

    /// Closes the probe connection, if open; gives up (dropping it) after `within`.
    pub(super) async fn close(&self, within: Duration) {
        let closing = async {
            let conn = self.conn.lock().await.take();
            match conn {
                Some(Conn::Postgres(c)) => {
                    let _ = c.close().await;
                }
                Some(Conn::Sqlite(c)) => {
                    let _ = c.close().await;
                }
                None => {}
            }
        };
        let _ = tokio::time::timeout(within, closing).await;
    }
}
