//! Stored hierarchies referenced by a job spec (`{"id": ...}`): fetched from the store for the caller's
//! tenant before the spec is validated or run, and handed to `domain::prepare` through its resolver.
//! Stored hierarchies are JSON documents validated when they were uploaded: `levels` (a complete
//! hierarchy) or a `builder`, built against the column of each job that uses it.

use std::collections::HashMap;

use uuid::Uuid;

use crate::domain::resolve::document::parse_hierarchy_document;
use crate::domain::spec::{pointer_segment, HierarchySpec};
use crate::domain::{JobSpec, Resolved, SpecError};
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
    by_id: HashMap<String, Resolved>,
}

impl StoredHierarchies {
    /// Fetches every hierarchy `spec` references by id, scoped to `tenant`.
    pub async fn fetch(store: &Store, tenant: Uuid, spec: &JobSpec) -> Result<Self, FetchError> {
        let references =
            spec.attributes
                .iter()
                .filter_map(|(name, attribute)| match &attribute.hierarchy {
                    Some(HierarchySpec::Id { id }) => Some((
                        format!("/attributes/{}/hierarchy/id", pointer_segment(name)),
                        id.as_str(),
                    )),
                    _ => None,
                });
        Self::fetch_references(store, tenant, references).await
    }

    /// Fetches the hierarchies of `references` (the JSON pointer of each reference and the id it
    /// names), scoped to `tenant`.
    pub async fn fetch_references<'a>(
        store: &Store,
        tenant: Uuid,
        references: impl Iterator<Item = (String, &'a str)>,
    ) -> Result<Self, FetchError> {
        let mut by_id = HashMap::new();
        for (pointer, id) in references {
            if by_id.contains_key(id) {
                continue;
            }
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
            let hierarchy = parse_hierarchy_document(stored.content_json.as_bytes())
                .map_err(|e| SpecError::new(pointer.clone(), ErrorCode::InvalidHierarchy, e))?;
            by_id.insert(id.to_string(), hierarchy);
        }
        Ok(StoredHierarchies { by_id })
    }

    /// The resolver `domain::prepare` calls for references: stored ids only (paths are a CLI feature).
    pub fn resolve(&self, source: &HierarchySpec) -> Result<Resolved, String> {
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
