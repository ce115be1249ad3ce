//! Stored hierarchies referenced by a job spec (`{"id": ...}`): fetched from the store for the caller's
//! tenant before the spec is validated or run, and handed to `domain::prepare` through its resolver.
//! Stored hierarchies are JSON documents validated when they were uploaded: `levels` (a complete
//! hierarchy) or a `builder`, built against the column of each job that uses it.
//!
//! Documents are parsed on a blocking thread, and the last [`PARSED_CACHE_ENTRIES`] parsed ones are kept
//! for the process (stored hierarchies never change), so that a job's validation at submission and its
//! run on a worker of the same process parse a large hierarchy once. A cached one is used only after the
//! store confirms that the tenant still has it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

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
    by_id: HashMap<String, Arc<Resolved>>,
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
            if let Some(parsed) = cached(tenant, uuid) {
                if !store.hierarchy_exists(tenant, uuid).await? {
                    return Err(unknown().into());
                }
                by_id.insert(id.to_string(), parsed);
                continue;
            }
            let stored = match store.get_hierarchy(tenant, uuid).await {
                Ok(stored) => stored,
                Err(StoreError::NotFound) => return Err(unknown().into()),
                Err(e) => return Err(e.into()),
            };
            let parsed = tokio::task::spawn_blocking(move || {
                parse_hierarchy_document(stored.content_json.as_bytes())
            })
            .await
            .map_err(|_| StoreError::Database("parsing a stored hierarchy failed".into()))?
            .map_err(|e| SpecError::new(pointer.clone(), ErrorCode::InvalidHierarchy, e))?;
            let parsed = Arc::new(parsed);
            remember(tenant, uuid, Arc::clone(&parsed));
            by_id.insert(id.to_string(), parsed);
        }
        Ok(StoredHierarchies { by_id })
    }

    /// The resolver `domain::prepare` calls for references: stored ids only (paths are a CLI feature).
    pub fn resolve(&self, source: &HierarchySpec) -> Result<Resolved, String> {
        match source {
            HierarchySpec::Id { id } => self
                .by_id
                .get(id)
                .map(|parsed| Resolved::clone(parsed))
                .ok_or_else(|| "no hierarchy with this id exists".to_string()),
            HierarchySpec::Path { .. } => Err(
                "the service takes hierarchies by id, inline levels or inline ARX text, not by path"
                    .to_string(),
            ),
            _ => Err("unsupported hierarchy source".to_string()),
        }
    }
}

/// Parsed stored hierarchies kept per process, most recently used last.
pub const PARSED_CACHE_ENTRIES: usize = 32;

/// Tenant and hierarchy id.
type ParsedKey = (Uuid, Uuid);

/// The cached entries, least recently used first.
type ParsedEntries = Mutex<VecDeque<(ParsedKey, Arc<Resolved>)>>;

fn parsed_cache() -> &'static ParsedEntries {
    static CACHE: OnceLock<ParsedEntries> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(VecDeque::new()))
}

/// The parsed hierarchy `id` of `tenant`, if this process parsed it lately.
fn cached(tenant: Uuid, id: Uuid) -> Option<Arc<Resolved>> {
    let mut cache = parsed_cache().lock().unwrap_or_else(|e| e.into_inner());
    let at = cache.iter().position(|(key, _)| *key == (tenant, id))?;
    let entry = cache.remove(at)?;
    let parsed = Arc::clone(&entry.1);
    cache.push_back(entry);
    Some(parsed)
}

/// Keeps a parsed hierarchy, evicting the least recently used beyond [`PARSED_CACHE_ENTRIES`].
fn remember(tenant: Uuid, id: Uuid, parsed: Arc<Resolved>) {
    let mut cache = parsed_cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(key, _)| *key != (tenant, id));
    cache.push_back(((tenant, id), parsed));
    while cache.len() > PARSED_CACHE_ENTRIES {
        cache.pop_front();
    }
}
