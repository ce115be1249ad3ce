//! Each tenant's pseudonym key: the secret of the `pseudonym` identifier operator, so that a value gets
//! the same pseudonym in every job of the tenant and another one in any other tenant's. The current key
//! is created on first use (32 bytes from the operating system); rotating retires it and creates the
//! next version, after which new pseudonyms no longer match older releases'. Secrets leave this module
//! only as a [`PseudonymKey`] (whose `Debug` hides them) for the worker; listings carry the version and
//! the public fingerprint.

use uuid::Uuid;

use super::{id_text, now_ms, with_pool, with_tx, Result, Store, StoreError};
use crate::core::identifiers::PseudonymKey;
use crate::error_code::ErrorCode;

/// A tenant's pseudonym key as shown: never the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PseudonymKeyInfo {
    /// 1 for the first key, one more per rotation.
    pub version: i64,
    /// The key's public fingerprint (the one reports show).
    pub fingerprint: String,
    /// When it was created (unix ms).
    pub created_at: i64,
}

row_struct! {
    struct KeyRow {
        version: i64,
        secret: Vec<u8>,
        fingerprint: String,
        created_at: i64,
    }
}

impl KeyRow {
    fn info(&self) -> PseudonymKeyInfo {
        PseudonymKeyInfo {
            version: self.version,
            fingerprint: self.fingerprint.clone(),
            created_at: self.created_at,
        }
    }
}

const CURRENT: &str = "select version, secret, fingerprint, created_at from pseudonym_key \
                       where tenant_id = $1 and retired_at is null order by version desc limit 1";

impl Store {
    /// The tenant's current key, created when it has none. Two replicas creating it at once agree: the
    /// second insert of version 1 does nothing and both read the one stored.
    pub async fn pseudonym_key(&self, tenant: Uuid) -> Result<(PseudonymKeyInfo, PseudonymKey)> {
        if let Some(row) = self.current_key(tenant).await? {
            return key_of(row);
        }
        let fresh = fresh_key()?;
        with_pool!(self, pool => {
            sqlx::query(
                "insert into pseudonym_key (tenant_id, version, secret, fingerprint, created_at) \
                 values ($1, 1, $2, $3, $4) on conflict (tenant_id, version) do nothing",
            )
            .bind(id_text(tenant))
            .bind(fresh.secret())
            .bind(fresh.fingerprint())
            .bind(now_ms())
            .execute(pool)
            .await?
            .rows_affected()
        });
        // a rotation commits its retirement and its new key at once, so a current key exists now
        match self.current_key(tenant).await? {
            Some(row) => key_of(row),
            None => Err(StoreError::Conflict(
                ErrorCode::Conflict,
                "the pseudonym key changed while it was read; retry",
            )),
        }
    }

    /// The tenant's current key as shown, if it has one.
    pub async fn pseudonym_key_info(&self, tenant: Uuid) -> Result<Option<PseudonymKeyInfo>> {
        Ok(self.current_key(tenant).await?.map(|row| row.info()))
    }

    /// Retires the tenant's current key (if any) and creates the next version. A rotation that races
    /// another for the same version is Conflict (nothing changes); versions stay consecutive.
    pub async fn rotate_pseudonym_key(&self, tenant: Uuid) -> Result<PseudonymKeyInfo> {
        let fresh = fresh_key()?;
        let now = now_ms();
        let tenant_id = id_text(tenant);
        let mut tx = self.begin_write().await?;
        let inserted = with_tx!(&mut tx, conn => {
            let latest: Option<i64> = sqlx::query_scalar(
                "select max(version) from pseudonym_key where tenant_id = $1",
            )
            .bind(&tenant_id)
            .fetch_one(&mut *conn)
            .await?;
            sqlx::query(
                "update pseudonym_key set retired_at = $2 where tenant_id = $1 and retired_at is null",
            )
            .bind(&tenant_id)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            let version = latest.unwrap_or(0) + 1;
            let rows = sqlx::query(
                "insert into pseudonym_key (tenant_id, version, secret, fingerprint, created_at) \
                 values ($1, $2, $3, $4, $5) on conflict (tenant_id, version) do nothing",
            )
            .bind(&tenant_id)
            .bind(version)
            .bind(fresh.secret())
            .bind(fresh.fingerprint())
            .bind(now)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            (rows == 1).then_some(version)
        });
        let Some(version) = inserted else {
            return Err(StoreError::Conflict(
                ErrorCode::Conflict,
                "the pseudonym key is being rotated by another request; retry",
            ));
        };
        tx.commit().await?;
        Ok(PseudonymKeyInfo {
            version,
            fingerprint: fresh.fingerprint(),
            created_at: now,
        })
    }

    async fn current_key(&self, tenant: Uuid) -> Result<Option<KeyRow>> {
        Ok(with_pool!(self, pool => {
            sqlx::query_as(CURRENT)
                .bind(id_text(tenant))
                .fetch_optional(pool)
                .await?
        }))
    }
}

/// A new key of 32 bytes from the operating system's randomness.
fn fresh_key() -> Result<PseudonymKey> {
    use rand_core::{OsRng, RngCore};
    let mut secret = [0u8; crate::core::identifiers::MIN_KEY_BYTES];
    OsRng
        .try_fill_bytes(&mut secret)
        .map_err(|_| StoreError::Invalid("the operating system gave no random bytes"))?;
    PseudonymKey::new(&secret).map_err(|_| StoreError::Invalid("a new pseudonym key is too short"))
}

fn key_of(row: KeyRow) -> Result<(PseudonymKeyInfo, PseudonymKey)> {
    let info = row.info();
    let key = PseudonymKey::new(&row.secret)
        .map_err(|_| StoreError::Invalid("a stored pseudonym key is too short"))?;
    Ok((info, key))
}
