//! Stored hierarchies referenced by a job spec (`{"id": ...}`): fetched from the store for the caller's
//! tenant before the spec is validated or run, and handed to `domain::prepare` through its resolver.
//! Stored hierarchies are JSON `levels` documents, validated when they were uploaded.

use std::collections::HashMap;

use uuid::Uuid;

use crate::codec::parse_json_hierarchy;
use crate::core::data::Hierarchy;
use crate::domain::spec::{pointer_segment, HierarchySpec};
use crate::domain::{JobSpec, SpecError};
use crate::error_code::ErrorCode;
use crate::store::{Store, StoreError};

/// Why the referenced hierarchies could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A reference is malformed or names no hierarchy of the tenant (422 with the pointer).
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// The store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// The hierarchies a spec references, by the id text the spec uses.
#[derive(Debug, Default)]
pub struct StoredHierarchies {
    by_id: HashMap<String, Hierarchy>,
}

impl StoredHierarchies {
    /// Fetches every hierarchy `spec` references by id, scoped to `tenant`.
    pub async fn fetch(store: &Store, tenant: Uuid, spec: &JobSpec) -> Result<Self, FetchError> {
        let mut by_id = HashMap::new();
        for (name, attribute) in &spec.attributes {
            let Some(HierarchySpec::Id { id }) = &attribute.hierarchy else {
                continue;
            };
            if by_id.contains_key(id) {
                continue;
            }
            let pointer = format!("/attributes/{}/hierarchy/id", pointer_segment(name));
            let unknown = || {
                SpecError::new(
                    pointer.clone(),
                    ErrorCode::UnknownHierarchy,
                    "no hierarchy with this id exists",
                )
            };
            let uuid = Uuid::parse_str(id).map_err(|_| unknown())?;
            let stored = match store.get_hierarchy(tenant, uuid).await {
                Ok(stored) => stored,
                Err(StoreError::NotFound) => return Err(unknown().into()),
                Err(e) => return Err(e.into()),
            };
            let hierarchy = parse_json_hierarchy(stored.content_json.as_bytes()).map_err(|e| {
                SpecError::new(pointer.clone(), ErrorCode::InvalidHierarchy, e.to_string())
            })?;
            by_id.insert(id.clone(), hierarchy);
        }
        Ok(StoredHierarchies { by_id })
    }

    /// The resolver `domain::prepare` calls for references: stored ids only (paths are a CLI feature).
    pub fn resolve(&self, source: &HierarchySpec) -> Result<Hierarchy, String> {
        match source {
            HierarchySpec::Id { id } => self
                .by_id
                .get(id)
                .cloned()
                .ok_or_else(|| "no hierarchy with this id exists".to_string()),
            HierarchySpec::Path { .. } => Err(
                "the service takes hierarchies by id, inline levels or inline ARX text, not by path"
                    .to_string(),
            ),
            _ => Err("unsupported hierarchy source".to_string()),
        }
    }
}
