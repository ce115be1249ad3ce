//! `StoreError`, the one error type of the persistence layer. Messages say what failed, never a stored
//! value: database errors are reduced to their kind, SQLSTATE code and constraint name.

use crate::error_code::ErrorCode;

use sqlx::error::ErrorKind;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// The row does not exist or belongs to another tenant (the two are indistinguishable on purpose).
    #[error("not found")]
    NotFound,
    /// The request contradicts the stored state: the code answered to the client and a stable,
    /// value-free reason.
    #[error("conflict: {1}")]
    Conflict(ErrorCode, &'static str),
    /// A fenced job write hit no row: the attempt no longer owns the job (its lease was reclaimed, or the
    /// job was cancelled, finished or deleted). The worker must stop and drop its output.
    #[error("the job's lease was lost")]
    LeaseLost,
    /// A fenced write of a job's success or failure found the job's cancellation requested: the
    /// attempt still owns the job and must mark it cancelled instead ([`crate::store::Store::mark_cancelled`]).
    #[error("the job's cancellation was requested")]
    CancelRequested,
    /// An argument the store refuses; the text is a stable, value-free reason.
    #[error("invalid: {0}")]
    Invalid(&'static str),
    #[error("database error: {0}")]
    Database(String),
}

/// A list cursor that did not come from [`crate::store::Cursor`]'s text form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("invalid cursor")]
pub struct InvalidCursor;

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> StoreError {
        match error {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) => {
                let kind = match db.kind() {
                    // a referenced row (tenant, dataset, job) is gone, e.g. deleted concurrently
                    ErrorKind::ForeignKeyViolation => return StoreError::NotFound,
                    ErrorKind::UniqueViolation => "unique violation",
                    ErrorKind::NotNullViolation => "not-null violation",
                    ErrorKind::CheckViolation => "check violation",
                    _ => "error",
                };
                let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
                match db.constraint() {
                    Some(constraint) => StoreError::Database(format!(
                        "{kind} (code {code}, constraint {constraint})"
                    )),
                    None => StoreError::Database(format!("{kind} (code {code})")),
                }
            }
            sqlx::Error::ColumnDecode { index, .. } => {
                StoreError::Database(format!("cannot decode column {index}"))
            }
            sqlx::Error::Decode(_) => StoreError::Database("cannot decode a value".into()),
            sqlx::Error::Encode(_) => StoreError::Database("cannot encode a value".into()),
            other => StoreError::Database(other.to_string()),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(error: sqlx::migrate::MigrateError) -> StoreError {
        match error {
            sqlx::migrate::MigrateError::Execute(e) => StoreError::from(e),
            other => StoreError::Database(format!("migration failed: {other}")),
        }
    }
}
