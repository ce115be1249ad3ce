//! Idempotency keys of uploads: the key a dataset or hierarchy was stored under with the fingerprint
//! of the request that stored it, the lookup of a key, and the error of a key another upload took
//! first. Jobs keep theirs in the job row (`Store::job_by_idempotency_key`).

use uuid::Uuid;

use super::{id_text, parse_id, with_pool, Result, Store, StoreError};
use crate::error_code::ErrorCode;

/// The `Idempotency-Key` an upload was sent with and the fingerprint of its request (parameters and
/// body), stored with what the upload creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    /// The client's key.
    pub key: String,
    /// Hex SHA-256 of the request's parameters and body.
    pub request_hash: String,
}

/// What an upload stored under an `Idempotency-Key`, with the fingerprint of the request that stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyed<T> {
    /// The dataset or hierarchy.
    pub stored: T,
    /// The fingerprint stored with the key.
    pub request_hash: Option<String>,
}

impl<T> Keyed<T> {
    /// The stored item when `request_hash` is the fingerprint it was stored with (a retry of the same
    /// request), None when the key was used for another request.
    pub fn replay(self, request_hash: &str) -> Option<T> {
        (self.request_hash.as_deref() == Some(request_hash)).then_some(self.stored)
    }
}

/// The store error of a failed keyed write: a unique violation of a write that carried a key means
/// another upload of the tenant holds the key (Conflict `idempotency_conflict`; the caller looks it up
/// and replays or refuses); anything else is what it is.
pub(super) fn key_taken_or(error: sqlx::Error, keyed: bool) -> StoreError {
    match &error {
        sqlx::Error::Database(db)
            if keyed && db.kind() == sqlx::error::ErrorKind::UniqueViolation =>
        {
            StoreError::Conflict(
                ErrorCode::IdempotencyConflict,
                "another upload with this Idempotency-Key was stored first",
            )
        }
        _ => error.into(),
    }
}

impl Store {
    /// The id and stored fingerprint of the row that `select_id_and_hash` (binding the tenant as $1 and
    /// the key as $2) finds, if any.
    pub(super) async fn keyed_row(
        &self,
        select_id_and_hash: &'static str,
        tenant: Uuid,
        key: &str,
    ) -> Result<Option<(Uuid, Option<String>)>> {
        let row: Option<(String, Option<String>)> = with_pool!(self, pool => {
            sqlx::query_as(select_id_and_hash)
                .bind(id_text(tenant))
                .bind(key)
                .fetch_optional(pool)
                .await?
        });
        row.map(|(id, hash)| Ok((parse_id(&id)?, hash))).transpose()
    }
}
