//! Routes of /v1/hierarchies: storing a generalization hierarchy sent as an ARX hierarchy CSV
//! (`text/csv`), as JSON levels or as a builder (`application/json`); listing, reading and deleting
//! them. Previews are in [`super::hierarchy_preview`].
//!
//! Levels, in either form, are validated in full (same number of levels on every row, one parent per
//! label, a single top value) and stored normalized as `{"levels": [[original, level1, ..., top], ...]}`,
//! one row per distinct original value in order of first appearance. A builder's parameters are checked
//! and stored as `{"builder": {...}}`; each job builds it against its own column. Jobs refer to either by
//! id; one referenced by a queued or running job cannot be deleted (409 `hierarchy_in_use`). Errors
//! name lines and levels, never labels.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use super::auth::Caller;
use super::error::redact_serde_values;
use super::idempotency::{self, idempotency_key, mark_replayed, Fingerprint};
use super::request::{
    check_name, check_name_characters, media_type, page_params, path_id, store_error,
    MAX_NAME_CHARS,
};
use super::state::AppState;
use super::time::rfc3339;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::codec::{check_labels, parse_arx_hierarchy, CodecError, CsvOptions};
use crate::core::data::Hierarchy;
use crate::domain::analysis::warnings::repeated_hierarchy_rows;
use crate::domain::resolve::document::{parse_builder, parse_hierarchy_document};
use crate::domain::spec::parse_json;
use crate::domain::Resolved;
use crate::error_code::ErrorCode;
use crate::store::{HierarchyShape, Idempotency, StoreError, StoredHierarchy};

/// Largest accepted hierarchy body, in bytes (64 MiB).
pub const HIERARCHY_BODY_LIMIT: usize = 64 << 20;

/// The /v1/hierarchies routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/hierarchies",
            post(create)
                .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(HIERARCHY_BODY_LIMIT))
                .get(list)
                .layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/hierarchies/{id}",
            get(read)
                .delete(delete)
                .layer(timeout_layer(REQUEST_TIMEOUT)),
        )
}

/// A stored hierarchy as the API shows it (the `Hierarchy` schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HierarchyView {
    /// The hierarchy id.
    pub id: Uuid,
    /// The display name.
    pub name: String,
    /// `levels` (a complete hierarchy) or `builder` (built against each job's column).
    pub kind: String,
    /// Levels, the original values and the top included; `null` for a builder whose levels depend on
    /// the column.
    pub level_count: Option<u64>,
    /// Original values (rows); `null` for a builder.
    pub value_count: Option<u64>,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
}

impl HierarchyView {
    /// The view of a stored hierarchy: its recorded shape, or the one read from its document (stored
    /// before shapes were recorded; `content_json` must then be present).
    pub fn of(stored: &StoredHierarchy) -> Self {
        let shape = stored
            .shape
            .or_else(|| {
                parse_hierarchy_document(stored.content_json.as_bytes())
                    .ok()
                    .map(|r| shape_of(&r))
            })
            .unwrap_or(HierarchyShape {
                kind: "levels",
                level_count: None,
                value_count: None,
            });
        HierarchyView {
            id: stored.id,
            name: stored.name.clone(),
            kind: shape.kind.to_string(),
            level_count: shape.level_count,
            value_count: shape.value_count,
            created_at: rfc3339(stored.created_at),
        }
    }
}

/// The shape of a parsed document.
fn shape_of(resolved: &Resolved) -> HierarchyShape {
    match resolved {
        Resolved::Hierarchy(h) => HierarchyShape {
            kind: "levels",
            level_count: Some(h.height() as u64),
            value_count: Some(h.leaf_count() as u64),
        },
        Resolved::Builder(b) => HierarchyShape {
            kind: "builder",
            level_count: b.level_count().map(|n| n as u64),
            value_count: None,
        },
    }
}

#[derive(Debug, Deserialize)]
struct CreateParams {
    name: Option<String>,
    delimiter: Option<String>,
}

/// The JSON body: the `HierarchyLevels` or `HierarchyBuilderBody` schema plus an optional display name
/// (a string when present; `null` is a wrong type, not an absent name).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonBody {
    #[serde(default, deserialize_with = "present_string")]
    name: Option<String>,
    levels: Option<Vec<Vec<String>>>,
    builder: Option<Value>,
}

/// A field that, when present, must be a string.
fn present_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

async fn create(
    caller: Caller,
    State(state): State<AppState>,
    query: Result<Query<CreateParams>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let Query(params) = query?;
    let media = media_type(&headers).map(str::to_ascii_lowercase);
    let json =
        match media.as_deref() {
            // generated clients send a binary body as application/octet-stream
            Some("text/csv" | "application/octet-stream") => false,
            Some("application/json") => true,
            _ => return Err(ApiError::unsupported_media_type(
                "text/csv or application/octet-stream (ARX hierarchy) or application/json (levels)",
            )),
        };
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::payload_too_large(HIERARCHY_BODY_LIMIT as u64)
        } else {
            ApiError::bad_request(ErrorCode::BadRequest, "the request body could not be read")
        }
    })?;
    let idempotency = idempotency_key(&headers)?.map(|key| {
        let mut fingerprint = Fingerprint::new(
            "hierarchy",
            &[
                ("form", Some(if json { "json" } else { "csv" })),
                ("name", params.name.as_deref()),
                ("delimiter", params.delimiter.as_deref()),
            ],
        );
        fingerprint.update(&body);
        Idempotency {
            key,
            request_hash: fingerprint.finish(),
        }
    });
    let query_name = params.name.filter(|n| !n.is_empty());
    if let Some(name) = &query_name {
        check_name(name)?;
    }
    let delimiter = if json {
        None
    } else {
        Some(CsvOptions::with_delimiter(params.delimiter.as_deref().unwrap_or(";"))?.delimiter)
    };

    let parsed = tokio::task::spawn_blocking(move || parse(&body, delimiter))
        .await
        .map_err(|_| {
            tracing::error!("the hierarchy parser panicked");
            ApiError::internal()
        })??;
    let body_name = parsed.name.filter(|n| !n.is_empty());
    if let Some(name) = &body_name {
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(ApiError::unprocessable(
                ErrorCode::InvalidRequest,
                format!("name must be at most {MAX_NAME_CHARS} characters"),
            )
            .with_pointer("/name"));
        }
        check_name_characters(name).map_err(|e| e.with_pointer("/name"))?;
    }

    let tenant = caller.tenant();
    if let Some(idempotency) = &idempotency {
        if let Some(keyed) = state
            .store
            .hierarchy_by_idempotency_key(tenant, &idempotency.key)
            .await?
        {
            return replay(
                keyed.replay(&idempotency.request_hash),
                parsed.repeated_rows,
            );
        }
    }
    let id = Uuid::new_v4();
    let name = query_name.or(body_name).unwrap_or_else(|| id.to_string());
    let inserted = state
        .store
        .create_hierarchy_with_id(
            tenant,
            id,
            &name,
            &parsed.content_json,
            Some(parsed.shape),
            idempotency.as_ref(),
        )
        .await;
    let stored = match (inserted, &idempotency) {
        (Ok(stored), _) => stored,
        // a concurrent upload with the same key stored it first
        (Err(StoreError::Conflict(ErrorCode::IdempotencyConflict, _)), Some(idempotency)) => {
            let keyed = state
                .store
                .hierarchy_by_idempotency_key(tenant, &idempotency.key)
                .await?;
            return replay(
                keyed.and_then(|k| k.replay(&idempotency.request_hash)),
                parsed.repeated_rows,
            );
        }
        (Err(error), _) => return Err(error.into()),
    };
    created(&stored, parsed.repeated_rows)
}

/// The answer to a retried upload: what the first request stored, marked as a replay, or 409
/// `idempotency_conflict` when the key was stored with another request.
fn replay(stored: Option<StoredHierarchy>, repeated_rows: usize) -> Result<Response, ApiError> {
    match stored {
        Some(stored) => Ok(mark_replayed(created(&stored, repeated_rows)?)),
        None => Err(idempotency::conflict()),
    }
}

/// 201 with `Location` and the stored hierarchy, warning when its upload repeated `repeated_rows` rows.
fn created(stored: &StoredHierarchy, repeated_rows: usize) -> Result<Response, ApiError> {
    let location = HeaderValue::from_str(&format!("/v1/hierarchies/{}", stored.id))
        .map_err(|_| ApiError::internal())?;
    let mut view =
        serde_json::to_value(HierarchyView::of(stored)).map_err(|_| ApiError::internal())?;
    // the stored document lists each value once: say so now, since no job can tell later
    let repeated: Vec<(String, usize)> = Some((String::new(), repeated_rows))
        .filter(|(_, n)| *n > 0)
        .into_iter()
        .collect();
    let warnings: Vec<_> = repeated_hierarchy_rows(&repeated)
        .into_iter()
        .map(|mut warning| {
            warning.column = None;
            warning
        })
        .collect();
    view["warnings"] = serde_json::to_value(warnings).map_err(|_| ApiError::internal())?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(view),
    )
        .into_response())
}

/// Query of `GET /v1/hierarchies`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    limit: Option<u32>,
    cursor: Option<String>,
}

/// The tenant's hierarchies, newest first (the `HierarchyPage` schema).
async fn list(
    caller: Caller,
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) = query?;
    let (limit, cursor) = page_params(query.limit, query.cursor.as_deref())?;
    let page = state
        .store
        .list_hierarchies(caller.tenant(), cursor, limit)
        .await?;
    Ok(Json(json!({
        "items": page.items.iter().map(HierarchyView::of).collect::<Vec<_>>(),
        "next_cursor": page.next_cursor.map(|c| c.to_string()),
    })))
}

/// Query of `GET /v1/hierarchies/{id}`: `include=content` adds the stored document.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadQuery {
    include: Option<String>,
}

/// One hierarchy; with `include=content`, its document (`levels` or `builder`) as `content`.
async fn read(
    caller: Caller,
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
    query: Result<Query<ReadQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) = query?;
    let with_content = match query.include.as_deref() {
        None => false,
        Some("content") => true,
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidQuery,
                "include accepts only `content`",
            ))
        }
    };
    let stored = state
        .store
        .get_hierarchy(caller.tenant(), path_id(id, "hierarchy")?)
        .await
        .map_err(store_error("hierarchy"))?;
    let mut view =
        serde_json::to_value(HierarchyView::of(&stored)).map_err(|_| ApiError::internal())?;
    if with_content {
        view["content"] =
            serde_json::from_str(&stored.content_json).map_err(|_| ApiError::internal())?;
    }
    Ok(Json(view))
}

/// Deletes a hierarchy no queued or running job uses (204; 409 `hierarchy_in_use` otherwise).
async fn delete(
    caller: Caller,
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    state
        .store
        .delete_hierarchy(caller.tenant(), path_id(id, "hierarchy")?)
        .await
        .map_err(store_error("hierarchy"))?;
    Ok(StatusCode::NO_CONTENT)
}

/// A validated hierarchy body.
struct Parsed {
    shape: HierarchyShape,
    content_json: String,
    name: Option<String>,
    /// Rows that repeated an original value's row (merged into one when stored).
    repeated_rows: usize,
}

/// Parses and validates an ARX CSV body (`delimiter` given) or a JSON body, and normalizes it.
fn parse(body: &[u8], delimiter: Option<u8>) -> Result<Parsed, ApiError> {
    let (hierarchy, name) = match delimiter {
        Some(delimiter) => {
            let hierarchy = parse_arx_hierarchy(body, delimiter).map_err(hierarchy_error)?;
            (hierarchy, None)
        }
        None => {
            let doc: JsonBody = parse_json(body).map_err(|e| {
                let message = redact_serde_values(&e.message);
                if e.code == "malformed_json" {
                    ApiError::bad_request(ErrorCode::MalformedJson, message)
                } else if e.pointer == "/name" {
                    ApiError::unprocessable(
                        ErrorCode::InvalidRequest,
                        format!("name must be a string: {message}"),
                    )
                    .with_pointer(e.pointer)
                } else {
                    ApiError::unprocessable(
                        ErrorCode::InvalidHierarchy,
                        format!(
                            "expected {{\"levels\": [[value, level1, ..., top], ...]}} or \
                             {{\"builder\": {{\"type\": ...}}}}: {message}"
                        ),
                    )
                }
            })?;
            match (doc.levels, doc.builder) {
                (Some(levels), None) => {
                    check_labels(&levels).map_err(hierarchy_error)?;
                    let hierarchy = Hierarchy::from_rows(&levels)
                        .map_err(|e| hierarchy_error(CodecError::Hierarchy(e)))?;
                    (hierarchy, doc.name)
                }
                (None, Some(builder)) => return parse_builder_body(builder, doc.name),
                _ => {
                    return Err(ApiError::unprocessable(
                        ErrorCode::InvalidHierarchy,
                        "a hierarchy body has exactly one of levels and builder",
                    ))
                }
            }
        }
    };
    let content_json = normalized_json(&hierarchy).map_err(|_| ApiError::internal())?;
    let repeated_rows = hierarchy.repeated_rows();
    Ok(Parsed {
        shape: shape_of(&Resolved::Hierarchy(hierarchy)),
        content_json,
        name,
        repeated_rows,
    })
}

/// A builder body: its parameters checked, stored as `{"builder": {...}}`.
fn parse_builder_body(builder: Value, name: Option<String>) -> Result<Parsed, ApiError> {
    let spec = parse_builder(&builder).map_err(|m| {
        ApiError::unprocessable(ErrorCode::InvalidHierarchy, m).with_pointer("/builder")
    })?;
    let content_json = json!({ "builder": builder }).to_string();
    Ok(Parsed {
        shape: shape_of(&Resolved::Builder(spec)),
        content_json,
        name,
        repeated_rows: 0,
    })
}

/// Every problem of a hierarchy body is 422 `invalid_hierarchy` with the codec's value-free message.
fn hierarchy_error(e: CodecError) -> ApiError {
    ApiError::unprocessable(ErrorCode::InvalidHierarchy, e.to_string())
}

/// `{"levels": [[original, level1, ..., top], ...]}`, one row per original value in code order.
pub fn normalized_json(hierarchy: &Hierarchy) -> Result<String, serde_json::Error> {
    let height = hierarchy.height();
    let leaves = hierarchy.labels(0);
    let levels: Vec<Vec<&str>> = (0..leaves.len() as u32)
        .map(|leaf| {
            (0..height)
                .map(|level| {
                    hierarchy
                        .labels(level)
                        .value(hierarchy.ancestor(leaf, level))
                })
                .collect()
        })
        .collect();
    serde_json::to_string(&serde_json::json!({ "levels": levels }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::parse_json_hierarchy;

    #[test]
    fn arx_bodies_are_normalized_to_json_levels() {
        let parsed = parse(b"39;30-39;*\n41;40-49;*\n39;30-39;*\n", Some(b';')).unwrap();
        assert_eq!(
            parsed.content_json,
            r#"{"levels":[["39","30-39","*"],["41","40-49","*"]]}"#
        );
        assert_eq!(parsed.repeated_rows, 1);
        let back = parse_json_hierarchy(parsed.content_json.as_bytes()).unwrap();
        assert_eq!(back.height(), 3);
        assert_eq!(back.leaf_count(), 2);
        assert_eq!(
            parsed.shape,
            HierarchyShape {
                kind: "levels",
                level_count: Some(3),
                value_count: Some(2)
            }
        );
    }

    #[test]
    fn json_bodies_carry_an_optional_name() {
        let parsed = parse(
            br#"{"name": "sex", "levels": [["m", "*"], ["f", "*"]]}"#,
            None,
        )
        .unwrap();
        assert_eq!(parsed.name.as_deref(), Some("sex"));
        assert_eq!(parsed.shape.value_count, Some(2));
    }

    #[test]
    fn builder_bodies_are_checked_and_stored_as_builders() {
        let parsed = parse(
            br#"{"name": "age", "builder": {"type": "interval", "width": 5, "fanouts": [2, 2]}}"#,
            None,
        )
        .unwrap();
        assert_eq!(
            parsed.shape,
            HierarchyShape {
                kind: "builder",
                level_count: Some(5),
                value_count: None
            }
        );
        assert!(matches!(
            parse_hierarchy_document(parsed.content_json.as_bytes()).unwrap(),
            Resolved::Builder(_)
        ));
        let e = parse(br#"{"builder": {"type": "interval", "width": 0}}"#, None)
            .err()
            .unwrap();
        assert_eq!(
            (e.code().as_str(), e.pointer()),
            ("invalid_hierarchy", Some("/builder"))
        );
        let e = parse(
            br#"{"levels": [["a", "*"]], "builder": {"type": "mask"}}"#,
            None,
        )
        .err()
        .unwrap();
        assert_eq!(e.code().as_str(), "invalid_hierarchy");
        let e = parse(br#"{"name": "x"}"#, None).err().unwrap();
        assert_eq!(e.code().as_str(), "invalid_hierarchy");
    }

    #[test]
    fn errors_are_specific_and_value_free() {
        let e = parse(b"{\"levels\": ", None).err().unwrap();
        assert_eq!(e.code(), "malformed_json");
        let e = parse(br#"{"levels": "secret-value"}"#, None).err().unwrap();
        assert_eq!(e.code(), "invalid_hierarchy");
        assert!(!e.detail().contains("secret"), "{}", e.detail());
        let e = parse(br#"{"levels": [["secret-value", "a"], ["x", "b"]]}"#, None)
            .err()
            .unwrap();
        assert_eq!(e.code(), "invalid_hierarchy");
        assert!(!e.detail().contains("secret"), "{}", e.detail());
        let e = parse(b"a;x;*\nb;*\n", Some(b';')).err().unwrap();
        assert_eq!(e.code(), "invalid_hierarchy");
        assert!(e.detail().contains("line 2"), "{}", e.detail());
        let e = parse(b"a;x;*\nb;\"x;*\nc;x;*\n", Some(b';')).err().unwrap();
        assert_eq!(e.code(), "invalid_hierarchy");
        assert!(e.detail().contains("line 2"), "{}", e.detail());
        let e = parse(br#"{"levels": [["a", "*"], ["b\u0000", "*"]]}"#, None)
            .err()
            .unwrap();
        assert_eq!(e.code(), "invalid_hierarchy");
        assert!(e.detail().contains("line 2"), "{}", e.detail());
    }

    #[test]
    fn a_name_is_a_string_when_present() {
        for body in [
            &br#"{"name": null, "levels": [["m", "*"]]}"#[..],
            br#"{"name": 5, "levels": [["m", "*"]]}"#,
            br#"{"name": ["secret-value"], "levels": [["m", "*"]]}"#,
        ] {
            let e = parse(body, None).err().unwrap();
            assert_eq!(
                (e.status().as_u16(), e.code().as_str()),
                (422, "invalid_request")
            );
            assert_eq!(e.pointer(), Some("/name"));
            assert!(!e.detail().contains("secret"), "{}", e.detail());
        }
        let parsed = parse(br#"{"levels": [["m", "*"]]}"#, None).unwrap();
        assert_eq!(parsed.name, None);
    }
}
