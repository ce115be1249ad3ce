//! The one error type of the HTTP layer, rendered as RFC 9457 `application/problem+json` with a stable
//! snake_case `code`. Details are built from value-free sources (spec, codec and engine errors never quote
//! cells), so no response echoes a cell value.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::codec::CodecError;
use crate::core::error::CoreError;
use crate::domain::SpecError;
use crate::error_code::ErrorCode;
use crate::store::{InvalidCursor, StoreError};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Prefix of the `type` URI; the code follows.
pub const TYPE_PREFIX: &str = "urn:anonymizer:problem:";

/// One problem among several (`errors` of a [`Problem`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldProblem {
    /// Stable snake_case code.
    pub code: String,
    /// What is wrong, without cell values.
    pub detail: String,
    /// JSON pointer of the offending spec field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// The wire form of an error (RFC 9457 plus `code`, `pointer` and `errors`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// `urn:anonymizer:problem:<code>`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The status's reason phrase.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong in this request.
    pub detail: String,
    /// Stable snake_case code.
    pub code: String,
    /// JSON pointer of the offending spec field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Further problems of the same request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldProblem>,
    /// This occurrence of the problem: the request's id as a URN (set by [`with_instance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

/// An error answered to an HTTP client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {detail}")]
pub struct ApiError {
    status: StatusCode,
    code: ErrorCode,
    detail: String,
    pointer: Option<String>,
    errors: Vec<FieldProblem>,
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with any status and code.
    pub fn new(status: StatusCode, code: ErrorCode, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            detail: detail.into(),
            pointer: None,
            errors: Vec::new(),
            retry_after: None,
        }
    }

    /// 400 with a specific code.
    pub fn bad_request(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, detail)
    }

    /// 401 `unauthorized`; the response carries `WWW-Authenticate: Bearer`.
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, detail)
    }

    /// 404 `not_found` for a resource kind (`"dataset"`, `"job"`, ...). Used alike for unknown ids and
    /// other tenants' ids.
    pub fn not_found(resource: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            format!("no such {resource}"),
        )
    }

    /// 409 with a specific code (`conflict`, `idempotency_conflict`, `cancelled`).
    pub fn conflict(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }

    /// 413 `payload_too_large`.
    pub fn payload_too_large(limit_bytes: u64) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            format!("the request body exceeds the limit of {limit_bytes} bytes"),
        )
    }

    /// 415 `unsupported_media_type`, naming what is accepted.
    pub fn unsupported_media_type(expected: &str) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedMediaType,
            format!("the request body must be {expected}"),
        )
    }

    /// 422 with a specific code.
    pub fn unprocessable(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail)
    }

    /// 500 `internal_error`. The detail is fixed: the cause goes to the log, not to the client.
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InternalError,
            "an internal error occurred; the request id identifies it in the logs",
        )
    }

    /// Locates the problem at a JSON pointer of the request body.
    pub fn with_pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// Adds further problems of the same request.
    pub fn with_errors(mut self, errors: Vec<FieldProblem>) -> Self {
        self.errors = errors;
        self
    }

    /// Asks the client to wait `seconds` before retrying (`Retry-After`).
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The detail message.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The JSON pointer, if any.
    pub fn pointer(&self) -> Option<&str> {
        self.pointer.as_deref()
    }

    /// The wire form.
    pub fn problem(&self) -> Problem {
        Problem {
            kind: format!("{TYPE_PREFIX}{}", self.code.as_str()),
            title: self
                .status
                .canonical_reason()
                .unwrap_or("Error")
                .to_string(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            code: self.code.as_str().to_string(),
            pointer: self.pointer.clone(),
            errors: self.errors.clone(),
            instance: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = match serde_json::to_vec(&self.problem()) {
            Ok(body) => body,
            Err(_) => br#"{"type":"urn:anonymizer:problem:internal_error","title":"Internal Server Error","status":500,"detail":"the error could not be rendered","code":"internal_error"}"#.to_vec(),
        };
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// The largest problem body [`with_instance`] rewrites; a larger one is passed on unchanged.
const MAX_PROBLEM_BYTES: usize = 1 << 20;

/// The `instance` of a problem answered to request `request_id`: `urn:uuid:<id>` for the UUIDs the
/// service makes, and `urn:anonymizer:request:<id>` (percent-encoded) for an id the client chose.
pub fn instance_of(request_id: &str) -> String {
    match uuid::Uuid::parse_str(request_id) {
        Ok(id) => format!("urn:uuid:{}", id.hyphenated()),
        Err(_) => {
            let mut urn = String::from("urn:anonymizer:request:");
            for byte in request_id.bytes() {
                if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                    urn.push(char::from(byte));
                } else {
                    urn.push_str(&format!("%{byte:02X}"));
                }
            }
            urn
        }
    }
}

/// Adds `instance` (the request's id, [`instance_of`]) to a problem+json response, so that a client
/// can quote the occurrence to an operator; other responses pass unchanged.
pub async fn with_instance(response: Response, request_id: &str) -> Response {
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(PROBLEM_JSON));
    if !is_problem {
        return response;
    }
    // a body of unknown or large size passes unchanged (the service's problems are small and whole)
    let size = axum::body::HttpBody::size_hint(response.body()).exact();
    if size.is_none_or(|n| n > MAX_PROBLEM_BYTES as u64) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PROBLEM_BYTES).await else {
        return ApiError::internal().into_response();
    };
    let rewritten = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(mut problem)) if !problem.contains_key("instance") => {
            problem.insert(
                "instance".to_string(),
                serde_json::Value::String(instance_of(request_id)),
            );
            serde_json::to_vec(&problem).ok()
        }
        _ => None,
    };
    let body = match rewritten {
        Some(body) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            body.into()
        }
        None => bytes.into(),
    };
    Response::from_parts(parts, body)
}

impl From<SpecError> for ApiError {
    /// `malformed_json` is a syntax error of the body (400); every other spec problem is 422. Both carry
    /// the pointer. When validation found several problems, `errors` lists every one of them (the first,
    /// which also gives the document's code, pointer and detail, included).
    fn from(e: SpecError) -> Self {
        let status = if e.code == ErrorCode::MalformedJson {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        let errors = if e.others.is_empty() {
            Vec::new()
        } else {
            e.all()
                .map(|p| FieldProblem {
                    code: p.code.as_str().to_string(),
                    detail: spec_message(p),
                    pointer: Some(p.pointer.clone()),
                })
                .collect()
        };
        ApiError::new(status, e.code, spec_message(&e))
            .with_pointer(e.pointer)
            .with_errors(errors)
    }
}

/// The client-facing message of a spec problem: serde's messages may quote values, so those are redacted.
fn spec_message(e: &SpecError) -> String {
    if matches!(e.code, ErrorCode::MalformedJson | ErrorCode::InvalidSpec) {
        redact_serde_values(&e.message)
    } else {
        e.message.clone()
    }
}

impl From<CodecError> for ApiError {
    /// Every input problem is 422 with the codec's code and value-free message; a failed write is a
    /// server error.
    fn from(e: CodecError) -> Self {
        if let CodecError::Write(_) = e {
            tracing::error!(error = %e, "writing output failed");
            return ApiError::internal();
        }
        ApiError::unprocessable(e.code(), e.to_string())
    }
}

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        match ErrorCode::of_core(&e) {
            ErrorCode::Cancelled => ApiError::conflict(ErrorCode::Cancelled, e.to_string()),
            ErrorCode::InternalError => {
                tracing::error!(error = %e, "secure randomness unavailable");
                ApiError::internal()
            }
            code => ApiError::unprocessable(code, e.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    /// Not found (unknown or another tenant's id) is 404; a conflict 409 with the store's code and
    /// value-free reason (`idempotency_conflict`; `job_not_succeeded`, naming the job's state); a lost
    /// lease 409 `conflict` (the job changed concurrently); a database failure is logged and answered
    /// 500.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::NotFound,
                "no such resource",
            ),
            StoreError::Conflict(code, reason) => ApiError::conflict(code, reason),
            StoreError::LeaseLost | StoreError::CancelRequested => ApiError::conflict(
                ErrorCode::Conflict,
                "the job changed concurrently; retry the request",
            ),
            StoreError::Invalid(reason) => {
                ApiError::unprocessable(ErrorCode::InvalidRequest, reason)
            }
            StoreError::Database(message) => {
                tracing::error!(error = %message, "database error");
                ApiError::internal()
            }
        }
    }
}

impl From<InvalidCursor> for ApiError {
    fn from(_: InvalidCursor) -> Self {
        ApiError::bad_request(
            ErrorCode::InvalidQuery,
            "the cursor is not one this service returned",
        )
    }
}

impl From<JsonRejection> for ApiError {
    /// A missing `application/json` content type is 415, a syntax error 400 `malformed_json`, a body that
    /// does not fit the type 422 `invalid_spec`. axum's messages quote serde's, which name fields, not
    /// values of uploaded tables.
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::MissingJsonContentType(_) => {
                ApiError::unsupported_media_type("application/json")
            }
            JsonRejection::JsonSyntaxError(e) => ApiError::bad_request(
                ErrorCode::MalformedJson,
                redact_serde_values(&e.body_text()),
            ),
            JsonRejection::JsonDataError(e) => {
                ApiError::unprocessable(ErrorCode::InvalidSpec, redact_serde_values(&e.body_text()))
            }
            JsonRejection::BytesRejection(e) => {
                if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        ErrorCode::PayloadTooLarge,
                        e.body_text(),
                    )
                } else {
                    ApiError::bad_request(ErrorCode::BadRequest, e.body_text())
                }
            }
            other => ApiError::bad_request(ErrorCode::BadRequest, other.body_text()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::bad_request(ErrorCode::InvalidQuery, redact_serde_values(&r.body_text()))
    }
}

/// Removes the values serde quotes in its messages (`invalid type: string "Alice"` becomes
/// `invalid type: string`, likewise integer, float and character values), keeping field and variant
/// names. A JSON body may carry hierarchy labels, which are cell values.
pub fn redact_serde_values(message: &str) -> String {
    const QUOTED: [(&str, char); 4] = [
        ("string \"", '"'),
        ("integer `", '`'),
        ("floating point `", '`'),
        ("character `", '`'),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        for (prefix, close) in QUOTED {
            if let Some(tail) = rest.strip_prefix(prefix) {
                let mut escaped = false;
                for (i, c) in tail.char_indices() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == close {
                        out.push_str(prefix.trim_end_matches(close).trim_end());
                        rest = &tail[i + c.len_utf8()..];
                        continue 'scan;
                    }
                }
                out.push_str(prefix.trim_end_matches(close).trim_end());
                break 'scan;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::HierarchyError;

    async fn render(
        e: impl Into<ApiError>,
    ) -> (StatusCode, axum::http::HeaderMap, serde_json::Value) {
        let response = e.into().into_response();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, headers, serde_json::from_slice(&bytes).unwrap())
    }

    fn assert_problem(body: &serde_json::Value, status: u16, code: &str) {
        assert_eq!(body["status"], status, "{body}");
        assert_eq!(body["code"], code, "{body}");
        assert_eq!(body["type"], format!("urn:anonymizer:problem:{code}"));
        assert!(body["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(body["detail"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(
            ErrorCode::from_name(code).is_some(),
            "{code} is not an ErrorCode"
        );
    }

    #[tokio::test]
    async fn constructors_render_status_code_and_media_type() {
        let cases = [
            (
                ApiError::bad_request(ErrorCode::BadRequest, "x"),
                400,
                "bad_request",
            ),
            (
                ApiError::unauthorized("missing bearer token"),
                401,
                "unauthorized",
            ),
            (ApiError::not_found("dataset"), 404, "not_found"),
            (
                ApiError::conflict(ErrorCode::IdempotencyConflict, "x"),
                409,
                "idempotency_conflict",
            ),
            (ApiError::payload_too_large(10), 413, "payload_too_large"),
            (
                ApiError::unsupported_media_type("text/csv"),
                415,
                "unsupported_media_type",
            ),
            (
                ApiError::unprocessable(ErrorCode::UnknownColumn, "x"),
                422,
                "unknown_column",
            ),
            (ApiError::internal(), 500, "internal_error"),
        ];
        for (error, status, code) in cases {
            let (s, headers, body) = render(error).await;
            assert_eq!(s.as_u16(), status);
            assert_eq!(headers[header::CONTENT_TYPE], PROBLEM_JSON);
            assert_eq!(
                headers.contains_key(header::WWW_AUTHENTICATE),
                status == 401
            );
            assert_problem(&body, status, code);
            assert!(body.get("pointer").is_none());
            assert!(body.get("errors").is_none());
        }
        let (_, headers, body) = render(ApiError::unauthorized("no key")).await;
        assert_eq!(headers[header::WWW_AUTHENTICATE], "Bearer");
        assert_eq!(body["title"], "Unauthorized");
        let (_, _, body) = render(ApiError::not_found("job")).await;
        assert_eq!(body["detail"], "no such job");
    }

    #[tokio::test]
    async fn pointer_and_errors_are_rendered() {
        let e = ApiError::unprocessable(ErrorCode::InvalidSpec, "two problems")
            .with_pointer("/attributes")
            .with_errors(vec![FieldProblem {
                code: "unknown_column".into(),
                detail: "no column named agee".into(),
                pointer: Some("/attributes/agee".into()),
            }]);
        let (_, _, body) = render(e).await;
        assert_eq!(body["pointer"], "/attributes");
        assert_eq!(body["errors"][0]["code"], "unknown_column");
        assert_eq!(body["errors"][0]["pointer"], "/attributes/agee");
        let parsed: Problem = serde_json::from_value(body).unwrap();
        assert_eq!(parsed.errors.len(), 1);
    }

    #[tokio::test]
    async fn spec_errors_are_422_with_their_pointer_except_syntax() {
        let (s, _, body) = render(SpecError::new(
            "/privacy_models/0/k",
            ErrorCode::InvalidK,
            "k must be at least 1",
        ))
        .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
        assert_problem(&body, 422, "invalid_k");
        assert_eq!(body["pointer"], "/privacy_models/0/k");
        assert_eq!(body["detail"], "k must be at least 1");

        let e = crate::domain::JobSpec::from_json(b"{\"attributes\": ").unwrap_err();
        let (s, _, body) = render(e).await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert_problem(&body, 400, "malformed_json");
        assert!(body.get("pointer").is_some());

        let e = crate::domain::JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [], "algorithm": {"type": "annealing"}}"#,
        )
        .unwrap_err();
        let (_, _, body) = render(e).await;
        assert_problem(&body, 422, "invalid_spec");
        assert_eq!(body["pointer"], "/algorithm/type");
    }

    #[tokio::test]
    async fn codec_errors_map_to_specific_codes() {
        let cases: Vec<(CodecError, u16, &str)> = vec![
            (CodecError::Empty, 422, "empty_body"),
            (CodecError::NoRecords, 422, "no_records"),
            (
                CodecError::EmptyColumnName { position: 2 },
                422,
                "empty_column_name",
            ),
            (
                CodecError::DuplicateColumnName {
                    name: "age".into(),
                    first: 1,
                    second: 3,
                },
                422,
                "duplicate_column",
            ),
            (
                CodecError::RaggedRow {
                    line: 7,
                    found: 3,
                    expected: 4,
                },
                422,
                "ragged_row",
            ),
            (
                CodecError::InvalidUtf8 { line: 2, column: 1 },
                422,
                "invalid_utf8",
            ),
            (
                CodecError::Malformed {
                    line: 3,
                    problem: "unterminated quote".into(),
                },
                422,
                "malformed_csv",
            ),
            (
                CodecError::UnterminatedQuote { line: 2 },
                422,
                "unterminated_quote",
            ),
            (
                CodecError::TextAfterQuote { opened: 2, line: 5 },
                422,
                "text_after_quote",
            ),
            (
                CodecError::StrayCarriageReturn { line: 4 },
                422,
                "stray_carriage_return",
            ),
            (
                CodecError::FieldTooLong {
                    line: 3,
                    column: 2,
                    limit: 10,
                },
                422,
                "field_too_long",
            ),
            (
                CodecError::InvalidCharacters {
                    line: 3,
                    column: 1,
                    what: "the field contains a NUL byte",
                },
                422,
                "invalid_characters",
            ),
            (CodecError::BadDelimiter, 422, "invalid_delimiter"),
            (
                CodecError::Hierarchy(HierarchyError::Empty),
                422,
                "invalid_hierarchy",
            ),
            (
                CodecError::HierarchyJson("expected array".into()),
                422,
                "invalid_hierarchy",
            ),
            (CodecError::Write("disk full".into()), 500, "internal_error"),
        ];
        for (error, status, code) in cases {
            let detail = error.to_string();
            let (s, _, body) = render(error).await;
            assert_eq!(s.as_u16(), status);
            assert_problem(&body, status, code);
            if status == 422 {
                assert_eq!(body["detail"], detail);
            } else {
                assert!(!body["detail"].as_str().unwrap_or("").contains("disk"));
            }
        }
        let (_, _, body) = render(CodecError::RaggedRow {
            line: 7,
            found: 3,
            expected: 4,
        })
        .await;
        assert_eq!(
            body["detail"],
            "line 7: the record has 3 fields but the header has 4"
        );
    }

    #[tokio::test]
    async fn core_errors_map_to_specific_codes() {
        let cases: Vec<(CoreError, u16, &str)> = vec![
            (
                CoreError::InvalidParameter {
                    name: "suppression_limit",
                    problem: "must be within [0, 1]".into(),
                },
                422,
                "invalid_parameter",
            ),
            (
                CoreError::TooFewRecords {
                    model: "5-anonymity".into(),
                    needed: 5,
                    rows: 3,
                },
                422,
                "too_few_records",
            ),
            (
                CoreError::LatticeTooLarge {
                    size: 10,
                    algorithm: "exhaustive",
                    limit: 5,
                },
                422,
                "lattice_too_large",
            ),
            (
                CoreError::NoSolution {
                    models: "5-anonymity".into(),
                    max_suppressed: 0,
                    top_failing: 3,
                    top_classes: 1,
                    top_smallest_class: 3,
                },
                422,
                "no_solution",
            ),
            (CoreError::Cancelled, 409, "cancelled"),
        ];
        for (error, status, code) in cases {
            let detail = error.to_string();
            let (s, _, body) = render(error).await;
            assert_eq!(s.as_u16(), status);
            assert_problem(&body, status, code);
            assert_eq!(body["detail"], detail);
        }
    }

    #[test]
    fn serde_values_are_redacted() {
        assert_eq!(
            redact_serde_values(r#"invalid type: string "Alice \"A\"", expected u64 at line 1"#),
            "invalid type: string, expected u64 at line 1"
        );
        assert_eq!(
            redact_serde_values("invalid type: integer `42`, expected a string"),
            "invalid type: integer, expected a string"
        );
        assert_eq!(
            redact_serde_values("unknown field `metrc`, expected one of `csv`"),
            "unknown field `metrc`, expected one of `csv`"
        );
        assert_eq!(redact_serde_values(r#"string "unterminated"#), "string");
        assert_eq!(redact_serde_values("naïve ✓"), "naïve ✓");
    }

    #[tokio::test]
    async fn store_errors_map_to_statuses() {
        let cases: Vec<(ApiError, u16, &str)> = vec![
            (StoreError::NotFound.into(), 404, "not_found"),
            (
                StoreError::Conflict(ErrorCode::IdempotencyConflict, "idempotency key is in use")
                    .into(),
                409,
                "idempotency_conflict",
            ),
            (
                StoreError::Conflict(ErrorCode::JobNotSucceeded, "job has not succeeded").into(),
                409,
                "job_not_succeeded",
            ),
            (
                StoreError::Conflict(ErrorCode::Conflict, "something else").into(),
                409,
                "conflict",
            ),
            (StoreError::LeaseLost.into(), 409, "conflict"),
            (
                StoreError::Database("unique violation (code 23505)".into()).into(),
                500,
                "internal_error",
            ),
            (InvalidCursor.into(), 400, "invalid_query"),
        ];
        for (error, status, code) in cases {
            let (s, _, body) = render(error).await;
            assert_eq!(s.as_u16(), status);
            assert_problem(&body, status, code);
            assert!(!body.to_string().contains("23505"));
        }
    }

    #[tokio::test]
    async fn json_rejections_are_problems() {
        use axum::extract::FromRequest;
        use axum::http::Request;
        use axum::Json;

        async fn reject(content_type: Option<&str>, body: &'static str) -> serde_json::Value {
            let mut builder = Request::builder().method("POST").uri("/");
            if let Some(ct) = content_type {
                builder = builder.header(header::CONTENT_TYPE, ct);
            }
            let request = builder.body(axum::body::Body::from(body)).unwrap();
            let rejection =
                Json::<std::collections::BTreeMap<String, u64>>::from_request(request, &())
                    .await
                    .unwrap_err();
            render(rejection).await.2
        }
        assert_problem(&reject(None, "{}").await, 415, "unsupported_media_type");
        assert_problem(
            &reject(Some("application/json"), "{").await,
            400,
            "malformed_json",
        );
        assert_problem(
            &reject(Some("application/json"), r#"{"k": "x"}"#).await,
            422,
            "invalid_spec",
        );
    }
}
