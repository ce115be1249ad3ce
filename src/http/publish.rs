//! `POST /v1/jobs/{id}/publish`: publishes one transformation of a succeeded full-domain job (typically
//! one of its report's `candidates`) as a new job, which is the source job's spec with that
//! transformation fixed, so the search is skipped and the output is exactly the table a search choosing
//! that node publishes. The body is `{"transformation": {...}}`, optionally with the new job's `name`
//! and `labels`; the new job is created as `POST /v1/jobs` creates one (validation, `Idempotency-Key`,
//! 202 with `Location`).

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Map, Value};

use super::auth::Caller;
use super::jobs::{parse_json, submit};
use super::request::{path_id, require_media_type, store_error};
use super::state::AppState;
use super::ApiError;
use crate::domain::SpecError;
use crate::error_code::ErrorCode;
use crate::store::JobState;

/// Fields of the publish request.
const FIELDS: [&str; 3] = ["transformation", "name", "labels"];

pub(super) async fn publish_job(
    State(state): State<AppState>,
    caller: Caller,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_media_type(&headers, "application/json")?;
    let request = parse_body(&body)?;
    let source = state
        .store
        .get_job(caller.tenant(), path_id(id, "job")?)
        .await
        .map_err(store_error("job"))?;
    if source.state != JobState::Succeeded {
        return Err(ApiError::conflict(
            ErrorCode::JobNotSucceeded,
            format!(
                "the job is {}: only a succeeded job's transformations are published",
                source.state.as_str()
            ),
        ));
    }
    let Ok(Value::Object(spec)) = serde_json::from_str::<Value>(&source.spec_json) else {
        return Err(ApiError::internal());
    };
    let document = derived_request(source.dataset_id, spec, request);
    let bytes = serde_json::to_vec(&document).map_err(|_| ApiError::internal())?;
    submit(state, caller, &headers, &bytes).await
}

/// The publish request's fields, checked: an object with `transformation` (an object) and at most
/// `name` and `labels` besides.
fn parse_body(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let Value::Object(object) = parse_json(body)? else {
        return Err(invalid("", "the request must be a JSON object"));
    };
    if let Some(field) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(invalid(
            &format!("/{field}"),
            "a publish request has `transformation`, and optionally `name` and `labels`",
        ));
    }
    match object.get("transformation") {
        Some(Value::Object(_)) => Ok(object),
        Some(_) => Err(invalid(
            "/transformation",
            "transformation maps every quasi-identifier to its level",
        )),
        None => Err(invalid("/transformation", "transformation is required")),
    }
}

fn invalid(pointer: &str, message: &str) -> ApiError {
    SpecError::new(pointer, ErrorCode::InvalidSpec, message).into()
}

/// The new job's request: the source's spec (without its own `candidates` and `transformation`) with
/// the requested transformation, name and labels, on the source's dataset.
fn derived_request(
    dataset_id: uuid::Uuid,
    mut spec: Map<String, Value>,
    request: Map<String, Value>,
) -> Value {
    spec.remove("candidates");
    spec.remove("transformation");
    spec.insert("dataset_id".into(), Value::from(dataset_id.to_string()));
    for (field, value) in request {
        spec.insert(field, value);
    }
    Value::Object(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_new_request_is_the_source_spec_with_the_transformation_fixed() {
        let spec = json!({"metric": "height", "candidates": 5, "transformation": {"age": 0},
                          "privacy_models": [{"type": "k_anonymity", "k": 2}]});
        let Value::Object(spec) = spec else { panic!() };
        let request = parse_body(br#"{"transformation": {"age": 2}, "name": "release"}"#).unwrap();
        let id = uuid::Uuid::nil();
        let derived = derived_request(id, spec, request);
        assert_eq!(
            derived,
            json!({"metric": "height", "transformation": {"age": 2}, "name": "release",
                   "privacy_models": [{"type": "k_anonymity", "k": 2}],
                   "dataset_id": id.to_string()})
        );
    }

    #[test]
    fn bodies_without_a_transformation_or_with_other_fields_are_refused() {
        for body in [
            &br#"{}"#[..],
            br#"{"transformation": 3}"#,
            br#"{"transformation": {}, "metric": "height"}"#,
            br#"[1]"#,
        ] {
            assert!(
                parse_body(body).is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        assert!(parse_body(b"{").is_err());
    }
}
