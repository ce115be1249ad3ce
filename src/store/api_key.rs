//! Tenants and API keys. A key is `anz_` followed by 64 hex characters (two UUID v4s, 244 random bits);
//! only its SHA-256 (hex) and an 8-character display prefix (the first hex characters after `anz_`) are
//! stored. Tenants are created on their first key. A key's last use is recorded at most once per
//! [`LAST_USE_RESOLUTION_MS`], so frequent polling does not turn every request into a write.

use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{id_text, now_ms, parse_id, with_pool, with_tx, Result, Store, StoreError};
use crate::core::hex::hex;
use crate::error_code::ErrorCode;

const KEY_MARK: &str = "anz_";
const PREFIX_LEN: usize = 8;

/// How stale a key's recorded last use may get: [`Store::touch_api_key`] writes only when the stored
/// time is older than this (one minute).
pub const LAST_USE_RESOLUTION_MS: i64 = 60_000;

/// Fewest characters after `anz_` in an imported key.
pub const MIN_IMPORTED_SECRET: usize = 32;

/// Who is calling: the tenant and the key that authenticated the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Principal {
    pub tenant_id: Uuid,
    pub key_id: Uuid,
}

/// An API key as listed; never contains the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyRecord {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub tenant_name: String,
    /// The first 8 hex characters after `anz_`, to recognise a key in listings.
    pub prefix: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// When the key last authenticated a request (unix ms), to within [`LAST_USE_RESOLUTION_MS`];
    /// `None` when it never did.
    pub last_used_at: Option<i64>,
}

row_struct! {
    struct ApiKeyRow {
        id: String,
        tenant_id: String,
        tenant_name: String,
        prefix: String,
        created_at: i64,
        revoked_at: Option<i64>,
        last_used_at: Option<i64>,
    }
}

impl TryFrom<ApiKeyRow> for ApiKeyRecord {
    type Error = StoreError;

    fn try_from(row: ApiKeyRow) -> Result<ApiKeyRecord> {
        Ok(ApiKeyRecord {
            id: parse_id(&row.id)?,
            tenant_id: parse_id(&row.tenant_id)?,
            tenant_name: row.tenant_name,
            prefix: row.prefix,
            created_at: row.created_at,
            revoked_at: row.revoked_at,
            last_used_at: row.last_used_at,
        })
    }
}

fn key_hash(plaintext: &str) -> String {
    hex(&Sha256::digest(plaintext.as_bytes()))
}

impl Store {
    /// Creates a key for the tenant named `tenant_name`, creating the tenant when it is new. Returns the
    /// plaintext key (shown once, never stored) and its record.
    pub async fn create_api_key(&self, tenant_name: &str) -> Result<(String, ApiKeyRecord)> {
        let plaintext = format!(
            "{KEY_MARK}{}{}",
            Uuid::new_v4().simple(),
            Uuid::new_v4().simple()
        );
        let record = self.insert_api_key(tenant_name, &plaintext).await?;
        Ok((plaintext, record))
    }

    /// Stores a key chosen by the operator (the bootstrap key of a first start) for the tenant named
    /// `tenant_name`, creating the tenant when it is new. The key must be `anz_` followed by at least
    /// [`MIN_IMPORTED_SECRET`] characters; storing a key that already exists is Conflict.
    pub async fn import_api_key(&self, tenant_name: &str, plaintext: &str) -> Result<ApiKeyRecord> {
        let secret_ok = plaintext.strip_prefix(KEY_MARK).is_some_and(|s| {
            s.len() >= MIN_IMPORTED_SECRET && s.bytes().all(|b| b.is_ascii_graphic())
        });
        if !secret_ok {
            return Err(StoreError::Invalid(
                "an API key is `anz_` followed by at least 32 printable characters",
            ));
        }
        let hash = key_hash(plaintext);
        let exists: Option<String> = with_pool!(self, pool => {
            sqlx::query_scalar("select id from api_key where key_hash = $1")
                .bind(&hash)
                .fetch_optional(pool)
                .await?
        });
        if exists.is_some() {
            return Err(StoreError::Conflict(
                ErrorCode::Conflict,
                "this API key is already stored",
            ));
        }
        self.insert_api_key(tenant_name, plaintext).await
    }

    async fn insert_api_key(&self, tenant_name: &str, plaintext: &str) -> Result<ApiKeyRecord> {
        let prefix: String = plaintext[KEY_MARK.len()..]
            .chars()
            .take(PREFIX_LEN)
            .collect();
        let hash = key_hash(plaintext);
        let key_id = Uuid::new_v4();
        let now = now_ms();

        let mut tx = self.begin_write().await?;
        let tenant_id: String = with_tx!(&mut tx, conn => {
            sqlx::query(
                "insert into tenant (id, name, created_at, updated_at) values ($1, $2, $3, $3) \
                 on conflict (name) do nothing",
            )
            .bind(id_text(Uuid::new_v4()))
            .bind(tenant_name)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            let tenant_id: String = sqlx::query_scalar("select id from tenant where name = $1")
                .bind(tenant_name)
                .fetch_one(&mut *conn)
                .await?;
            sqlx::query(
                "insert into api_key (id, tenant_id, key_hash, prefix, created_at, updated_at) \
                 values ($1, $2, $3, $4, $5, $5)",
            )
            .bind(id_text(key_id))
            .bind(&tenant_id)
            .bind(&hash)
            .bind(&prefix)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            tenant_id
        });
        tx.commit().await?;

        Ok(ApiKeyRecord {
            id: key_id,
            tenant_id: parse_id(&tenant_id)?,
            tenant_name: tenant_name.to_string(),
            prefix,
            created_at: now,
            revoked_at: None,
            last_used_at: None,
        })
    }

    /// The principal of a valid, unrevoked key; `None` for anything else.
    pub async fn authenticate(&self, plaintext: &str) -> Result<Option<Principal>> {
        if !plaintext.starts_with(KEY_MARK) {
            return Ok(None);
        }
        let hash = key_hash(plaintext);
        let row: Option<(String, String)> = with_pool!(self, pool => {
            sqlx::query_as(
                "select id, tenant_id from api_key where key_hash = $1 and revoked_at is null",
            )
            .bind(&hash)
            .fetch_optional(pool)
            .await?
        });
        row.map(|(id, tenant_id)| {
            Ok(Principal {
                tenant_id: parse_id(&tenant_id)?,
                key_id: parse_id(&id)?,
            })
        })
        .transpose()
    }

    /// Every key of every tenant, oldest first (for the `keys list` command).
    pub async fn list_api_keys(&self) -> Result<Vec<ApiKeyRecord>> {
        let rows: Vec<ApiKeyRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "select k.id, k.tenant_id, t.name as tenant_name, k.prefix, k.created_at, k.revoked_at, \
                 k.last_used_at from api_key k join tenant t on t.id = k.tenant_id \
                 order by k.created_at, k.id",
            )
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(ApiKeyRecord::try_from).collect()
    }

    /// Records that key `id` authenticated a request at `now` (unix ms), unless its recorded last use
    /// is less than [`LAST_USE_RESOLUTION_MS`] older. Returns whether a row was written; unknown ids
    /// write nothing.
    pub async fn touch_api_key(&self, id: Uuid, now: i64) -> Result<bool> {
        let written = with_pool!(self, pool => {
            sqlx::query(
                "update api_key set last_used_at = $2 \
                 where id = $1 and (last_used_at is null or last_used_at <= $3)",
            )
            .bind(id_text(id))
            .bind(now)
            .bind(now - LAST_USE_RESOLUTION_MS)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(written > 0)
    }

    /// Revokes a key; revoking a revoked key keeps its first revocation time. Unknown ids are NotFound.
    pub async fn revoke_api_key(&self, id: Uuid) -> Result<()> {
        let now = now_ms();
        let done = with_pool!(self, pool => {
            sqlx::query(
                "update api_key set revoked_at = coalesce(revoked_at, $2), updated_at = $2 where id = $1",
            )
            .bind(id_text(id))
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        if done == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}
