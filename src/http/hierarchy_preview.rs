//! `POST /v1/hierarchies/preview`: what a hierarchy (inline levels, ARX text, a builder, or a stored
//! one by id) does to one column of a stored dataset, before any job uses it: per level, the labels
//! the column's values take, with the distinct values and records each covers
//! ([`crate::domain::analysis::hierarchy_preview`]). Nothing is stored. A hierarchy that misses values
//! of the column is 422 `uncovered_values`, as a job would be.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use uuid::Uuid;

use super::auth::Caller;
use super::dataset_table::load_table;
use super::hierarchies::HIERARCHY_BODY_LIMIT;
use super::request::require_media_type;
use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::domain::analysis::hierarchy_preview::{preview, HierarchyPreview};
use crate::domain::resolve::bind_hierarchy;
use crate::domain::spec::{parse_json, HierarchySpec};
use crate::domain::SpecError;
use crate::error_code::ErrorCode;
use crate::hierarchy_refs::{FetchError, StoredHierarchies};
use crate::store::StoreError;

/// Labels listed per level unless the request asks otherwise.
pub const DEFAULT_MAX_LABELS: u32 = 100;

/// Most labels a request may ask to list per level.
pub const MAX_LABELS: u32 = 10_000;

/// The preview route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/hierarchies/preview",
        post(create)
            .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(HIERARCHY_BODY_LIMIT))
            .layer(timeout_layer(REQUEST_TIMEOUT)),
    )
}

/// The `HierarchyPreviewRequest` schema.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewRequest {
    dataset_id: String,
    column: String,
    hierarchy: HierarchySpec,
    max_labels: Option<u32>,
}

async fn create(
    caller: Caller,
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<HierarchyPreview>, ApiError> {
    require_media_type(&headers, "application/json")?;
    let request: PreviewRequest = parse_json(&body)?;
    let max_labels = request.max_labels.unwrap_or(DEFAULT_MAX_LABELS);
    if !(1..=MAX_LABELS).contains(&max_labels) {
        return Err(SpecError::new(
            "/max_labels",
            ErrorCode::InvalidRequest,
            format!("max_labels is 1 to {MAX_LABELS}"),
        )
        .into());
    }
    let unknown_dataset = || {
        ApiError::unprocessable(ErrorCode::UnknownDataset, "no dataset with this id exists")
            .with_pointer("/dataset_id")
    };
    let dataset_id = Uuid::try_parse(&request.dataset_id).map_err(|_| unknown_dataset())?;
    let tenant = caller.tenant();
    let dataset = match state.store.get_dataset(tenant, dataset_id).await {
        Ok(dataset) => dataset,
        Err(StoreError::NotFound) => return Err(unknown_dataset()),
        Err(e) => return Err(e.into()),
    };
    let reference = match &request.hierarchy {
        HierarchySpec::Id { id } => Some(("/hierarchy/id".to_string(), id.as_str())),
        _ => None,
    };
    let stored = StoredHierarchies::fetch_references(&state.store, tenant, reference.into_iter())
        .await
        .map_err(|e| match e {
            FetchError::Spec(e) => ApiError::from(e),
            FetchError::Store(e) => ApiError::from(e),
        })?;
    let table = load_table(&state, &dataset, unknown_dataset).await?;
    let preview = tokio::task::spawn_blocking(move || {
        let index = table.column_index(&request.column).ok_or_else(|| {
            SpecError::new(
                "/column",
                ErrorCode::UnknownColumn,
                "the dataset has no column of this name",
            )
        })?;
        let column = table.column(index);
        let resolve = |source: &HierarchySpec| stored.resolve(source);
        let map = bind_hierarchy(&request.hierarchy, column, "", &resolve)?;
        Ok::<_, SpecError>(preview(column, &map, max_labels as usize))
    })
    .await
    .map_err(|_| ApiError::internal())??;
    Ok(Json(preview))
}
