//! Generalization hierarchies uploaded by a tenant, stored as JSON text the store does not interpret,
//! with the shape the uploader read from it (kind, levels, values) so that lists need not parse it.

use uuid::Uuid;

use super::idempotency::{key_taken_or, Idempotency, Keyed};
use super::{
    id_text, now_ms, page_limit, page_of, parse_id, with_pool, with_tx, Cursor, Page, Result,
    Store, StoreError,
};
use crate::error_code::ErrorCode;

/// What a stored hierarchy document holds, as its uploader read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HierarchyShape {
    /// `levels` or `builder`.
    pub kind: &'static str,
    /// Levels, original values and top included (`None` for a builder whose levels depend on the
    /// column).
    pub level_count: Option<u64>,
    /// Original values (`None` for a builder, which is built against each job's column).
    pub value_count: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHierarchy {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub content_json: String,
    /// The shape recorded at upload (`None` for hierarchies stored before shapes were recorded).
    pub shape: Option<HierarchyShape>,
    pub created_at: i64,
    pub updated_at: i64,
}

row_struct! {
    struct HierarchyRow {
        id: String,
        tenant_id: String,
        name: String,
        content_json: String,
        kind: Option<String>,
        level_count: Option<i64>,
        value_count: Option<i64>,
        created_at: i64,
        updated_at: i64,
    }
}

impl TryFrom<HierarchyRow> for StoredHierarchy {
    type Error = StoreError;

    fn try_from(row: HierarchyRow) -> Result<StoredHierarchy> {
        let kind = match row.kind.as_deref() {
            Some("levels") => Some("levels"),
            Some("builder") => Some("builder"),
            _ => None,
        };
        let shape = kind.map(|kind| HierarchyShape {
            kind,
            level_count: row.level_count.and_then(|v| u64::try_from(v).ok()),
            value_count: row.value_count.and_then(|v| u64::try_from(v).ok()),
        });
        Ok(StoredHierarchy {
            id: parse_id(&row.id)?,
            tenant_id: parse_id(&row.tenant_id)?,
            name: row.name,
            content_json: row.content_json,
            shape,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// The columns of a hierarchy row, the document included.
macro_rules! hierarchy_columns {
    () => {
        "id, tenant_id, name, content_json, kind, level_count, value_count, created_at, updated_at"
    };
}

impl Store {
    pub async fn create_hierarchy(
        &self,
        tenant: Uuid,
        name: &str,
        content_json: &str,
    ) -> Result<Uuid> {
        let stored = self
            .create_hierarchy_with_id(tenant, Uuid::new_v4(), name, content_json, None, None)
            .await?;
        Ok(stored.id)
    }

    /// Stores a hierarchy under an id chosen by the caller (a fresh v4 UUID, so that a name can default
    /// to it) and returns it as stored. With `idempotency`, the key and the request's fingerprint are
    /// stored with it; a key another hierarchy of the tenant holds is Conflict (`idempotency_conflict`),
    /// and the caller looks it up ([`Store::hierarchy_by_idempotency_key`]).
    pub async fn create_hierarchy_with_id(
        &self,
        tenant: Uuid,
        id: Uuid,
        name: &str,
        content_json: &str,
        shape: Option<HierarchyShape>,
        idempotency: Option<&Idempotency>,
    ) -> Result<StoredHierarchy> {
        let now = now_ms();
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let inserted = with_pool!(self, pool => {
            sqlx::query(
                "insert into hierarchy (id, tenant_id, name, content_json, kind, level_count, \
                 value_count, created_at, updated_at, idempotency_key, request_hash) \
                 values ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10)",
            )
            .bind(id_text(id))
            .bind(id_text(tenant))
            .bind(name)
            .bind(content_json)
            .bind(shape.map(|s| s.kind))
            .bind(shape.and_then(|s| s.level_count).map(as_i64))
            .bind(shape.and_then(|s| s.value_count).map(as_i64))
            .bind(now)
            .bind(idempotency.map(|i| i.key.as_str()))
            .bind(idempotency.map(|i| i.request_hash.as_str()))
            .execute(pool)
            .await
            .map(|_| ())
        });
        inserted.map_err(|error| key_taken_or(error, idempotency.is_some()))?;
        Ok(StoredHierarchy {
            id,
            tenant_id: tenant,
            name: name.to_string(),
            content_json: content_json.to_string(),
            shape,
            created_at: now,
            updated_at: now,
        })
    }

    /// The tenant's hierarchy stored under Idempotency-Key `key`, with the fingerprint of the request
    /// that stored it; None when no hierarchy holds the key.
    pub async fn hierarchy_by_idempotency_key(
        &self,
        tenant: Uuid,
        key: &str,
    ) -> Result<Option<Keyed<StoredHierarchy>>> {
        let row = self
            .keyed_row(
                "select id, request_hash from hierarchy where tenant_id = $1 and idempotency_key = $2",
                tenant,
                key,
            )
            .await?;
        Ok(match row {
            Some((id, request_hash)) => Some(Keyed {
                stored: self.get_hierarchy(tenant, id).await?,
                request_hash,
            }),
            None => None,
        })
    }

    /// The tenant's hierarchy; another tenant's id is NotFound.
    pub async fn get_hierarchy(&self, tenant: Uuid, id: Uuid) -> Result<StoredHierarchy> {
        let row: Option<HierarchyRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "select ", hierarchy_columns!(), " from hierarchy where id = $1 and tenant_id = $2"
            ))
            .bind(id_text(id))
            .bind(id_text(tenant))
            .fetch_optional(pool)
            .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// Whether the tenant has this hierarchy (without reading its document).
    pub async fn hierarchy_exists(&self, tenant: Uuid, id: Uuid) -> Result<bool> {
        let found: Option<i32> = with_pool!(self, pool => {
            sqlx::query_scalar("select 1 from hierarchy where id = $1 and tenant_id = $2")
                .bind(id_text(id))
                .bind(id_text(tenant))
                .fetch_optional(pool)
                .await?
        });
        Ok(found.is_some())
    }

    /// The tenant's hierarchies, newest first, at most `limit` (1..=1000) per page. Documents are read
    /// only for hierarchies stored without a recorded shape (`content_json` is empty otherwise).
    pub async fn list_hierarchies(
        &self,
        tenant: Uuid,
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Page<StoredHierarchy>> {
        let limit = page_limit(limit);
        let (at, id) = cursor.map_or((i64::MAX, String::new()), |c| (c.created_at, id_text(c.id)));
        let rows: Vec<HierarchyRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "select id, tenant_id, name, \
                   case when kind is null then content_json else '' end as content_json, \
                   kind, level_count, value_count, created_at, updated_at from hierarchy \
                 where tenant_id = $1 and ($2 = '' or created_at < $3 or (created_at = $3 and id < $2)) \
                 order by created_at desc, id desc limit $4",
            )
            .bind(id_text(tenant))
            .bind(&id)
            .bind(at)
            .bind(limit + 1)
            .fetch_all(pool)
            .await?
        });
        let items = rows
            .into_iter()
            .map(StoredHierarchy::try_from)
            .collect::<Result<Vec<_>>>()?;
        Ok(page_of(items, limit, |h| Cursor {
            created_at: h.created_at,
            id: h.id,
        }))
    }

    /// Deletes the tenant's hierarchy unless a queued or running job references it (Conflict
    /// `hierarchy_in_use`); finished jobs keep their reports and outputs. NotFound when the tenant has
    /// no such hierarchy.
    ///
    /// In one transaction, the links of finished jobs go first, then the row; a link left (a live job,
    /// also one whose creation committed while the delete waited for the row) fails the delete on the
    /// link's foreign key, which both backends check when the statement ends.
    pub async fn delete_hierarchy(&self, tenant: Uuid, id: Uuid) -> Result<()> {
        let mut tx = self.begin_write().await?;
        with_tx!(&mut tx, conn => {
            sqlx::query(
                "delete from job_hierarchy where hierarchy_id = $1 and job_id in (\
                   select j.id from job j where j.tenant_id = $2 and j.state not in ('queued', 'running'))",
            )
            .bind(id_text(id))
            .bind(id_text(tenant))
            .execute(&mut *conn)
            .await?;
        });
        let deleted = with_tx!(&mut tx, conn => {
            sqlx::query("delete from hierarchy where id = $1 and tenant_id = $2")
                .bind(id_text(id))
                .bind(id_text(tenant))
                .execute(&mut *conn)
                .await
                .map(|done| done.rows_affected())
        });
        match deleted {
            Ok(1) => tx.commit().await,
            Ok(_) => {
                tx.rollback().await?;
                Err(StoreError::NotFound)
            }
            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                tx.rollback().await?;
                Err(StoreError::Conflict(
                    ErrorCode::HierarchyInUse,
                    "a queued or running job uses this hierarchy; cancel or wait for it first",
                ))
            }
            Err(e) => {
                tx.rollback().await?;
                Err(e.into())
            }
        }
    }
}
