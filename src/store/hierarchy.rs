//! Generalization hierarchies uploaded by a tenant, stored as JSON text the store does not interpret.

use uuid::Uuid;

use super::{id_text, now_ms, parse_id, with_pool, Result, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHierarchy {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub content_json: String,
    pub created_at: i64,
    pub updated_at: i64,
}

row_struct! {
    struct HierarchyRow {
        id: String,
        tenant_id: String,
        name: String,
        content_json: String,
        created_at: i64,
        updated_at: i64,
    }
}

impl Store {
    pub async fn create_hierarchy(
        &self,
        tenant: Uuid,
        name: &str,
        content_json: &str,
    ) -> Result<Uuid> {
        let stored = self
            .create_hierarchy_with_id(tenant, Uuid::new_v4(), name, content_json)
            .await?;
        Ok(stored.id)
    }

    /// Stores a hierarchy under an id chosen by the caller (a fresh v4 UUID, so that a name can default
    /// to it) and returns it as stored.
    pub async fn create_hierarchy_with_id(
        &self,
        tenant: Uuid,
        id: Uuid,
        name: &str,
        content_json: &str,
    ) -> Result<StoredHierarchy> {
        let now = now_ms();
        with_pool!(self, pool => {
            sqlx::query(
                "insert into hierarchy (id, tenant_id, name, content_json, created_at, updated_at) \
                 values ($1, $2, $3, $4, $5, $5)",
            )
            .bind(id_text(id))
            .bind(id_text(tenant))
            .bind(name)
            .bind(content_json)
            .bind(now)
            .execute(pool)
            .await?;
        });
        Ok(StoredHierarchy {
            id,
            tenant_id: tenant,
            name: name.to_string(),
            content_json: content_json.to_string(),
            created_at: now,
            updated_at: now,
        })
    }

    /// The tenant's hierarchy; another tenant's id is NotFound.
    pub async fn get_hierarchy(&self, tenant: Uuid, id: Uuid) -> Result<StoredHierarchy> {
        let row: Option<HierarchyRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "select id, tenant_id, name, content_json, created_at, updated_at from hierarchy \
                 where id = $1 and tenant_id = $2",
            )
            .bind(id_text(id))
            .bind(id_text(tenant))
            .fetch_optional(pool)
            .await?
        });
        let row = row.ok_or(StoreError::NotFound)?;
        Ok(StoredHierarchy {
            id: parse_id(&row.id)?,
            tenant_id: parse_id(&row.tenant_id)?,
            name: row.name,
            content_json: row.content_json,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}
