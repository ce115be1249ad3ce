//! `/v1/jobs`: submit (validated here, against the dataset's columns and hierarchies, so a bad spec never
//! reaches the queue), read, list, cancel, and fetch the report and the anonymized CSV of a job.
//!
//! Submission answers 202 with `Location` and wakes this process's idle workers; the job itself runs on
//! a worker (`crate::worker`), never in a handler. With an `Idempotency-Key`, the same key and body
//! return the same job and the same key with another body is 409 `idempotency_conflict`; "the same body"
//! compares the JSON documents with object keys sorted, so formatting and key order do not matter.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
use tower_http::compression::CompressionLayer;
use uuid::Uuid;

use super::auth::Caller;
use super::conditional;
use super::dataset_table::{check_csv_settings, load_table};
use super::error::PROBLEM_JSON;
use super::idempotency::{idempotency_key, mark_replayed};
use super::job_meta::{self, check_label, take_meta, JobMeta};
use super::request::{page_params, path_id, require_media_type, store_error};
use super::state::AppState;
use super::time::rfc3339;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::codec::archive::{fragment_entry_name, EntryCutter};
use crate::core::data::Table;
use crate::core::hex::hex;
use crate::domain::{prepare_with, JobSpec, SpecError};
use crate::error_code::ErrorCode;
use crate::hierarchy_refs::{FetchError, StoredHierarchies};
use crate::store::{Job, JobFilter, JobState, NewJob, StoreError};

/// The /v1/jobs routes; a job request body may have at most `body_limit` bytes (larger hierarchies
/// are uploaded through /v1/hierarchies and referenced).
pub fn router(body_limit: usize) -> Router<AppState> {
    Router::new()
        .route(
            "/v1/jobs",
            post(create_job)
                .layer(DefaultBodyLimit::max(body_limit))
                .get(list_jobs)
                .layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/jobs/{id}",
            get(get_job)
                .delete(delete_job)
                .layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/jobs/{id}/cancel",
            post(cancel_job).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/jobs/{id}/publish",
            post(super::publish::publish_job)
                .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(body_limit))
                .layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        .route(
            "/v1/jobs/{id}/result",
            get(get_result).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        // streamed: no request timeout; gzip when the client accepts it
        .route(
            "/v1/jobs/{id}/output",
            get(get_output)
                .layer(CompressionLayer::new().gzip(true).compress_when(
                    // a problem stays plain, so that its `instance` can be added
                    DefaultPredicate::new().and(NotForContentType::const_new(PROBLEM_JSON)),
                ))
                .layer(axum::middleware::map_response(
                    conditional::weaken_etag_when_encoded,
                )),
        )
}

/// A job as the API shows it; the spec only when asked for (it can be megabytes of inline hierarchies,
/// and dashboards poll this).
pub fn job_json(job: &Job, with_spec: bool) -> Value {
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .unwrap_or(Value::Null)
    };
    let failure = match (&job.failure_code, &job.failure_message) {
        (Some(code), message) => {
            json!({"code": code, "message": message.clone().unwrap_or_default()})
        }
        _ => Value::Null,
    };
    let mut value = json!({
        "id": job.id,
        "dataset_id": job.dataset_id,
        "name": job.name,
        "labels": job_meta::labels(job),
        "state": job.state.as_str(),
        "progress": parse(&job.progress_json),
        "attempt": job.attempt,
        "cancel_requested": job.cancel_requested,
        "failure": failure,
        "created_at": rfc3339(job.created_at),
        "updated_at": rfc3339(job.updated_at),
        "started_at": job.started_at.map(rfc3339),
        "finished_at": job.finished_at.map(rfc3339),
        "summary": job_meta::summary(job),
        "warnings": job_meta::warnings(job),
        "done": is_done(job.state),
        "links": links(job),
        "callback": job.callback_url.as_ref().map(|url| json!({"url": url})),
    });
    if with_spec {
        value["spec"] = serde_json::from_str(&job.spec_json).unwrap_or(Value::Null);
    }
    value
}

/// True once the job is in a terminal state (succeeded, failed or cancelled): polling can stop.
pub fn is_done(state: JobState) -> bool {
    matches!(
        state,
        JobState::Succeeded | JobState::Failed | JobState::Cancelled
    )
}

/// The job's own address and, once it succeeded, those of its report and output.
fn links(job: &Job) -> Value {
    let this = format!("/v1/jobs/{}", job.id);
    if job.state == JobState::Succeeded {
        json!({
            "self": this,
            "result": format!("{this}/result"),
            "output": format!("{this}/output"),
        })
    } else {
        json!({ "self": this })
    }
}

/// A job document with its entity tag, and `Retry-After` while the job is not done; 304 when the
/// client's `If-None-Match` names the document it has.
pub(super) fn job_response(
    status: StatusCode,
    headers: &HeaderMap,
    document: &Value,
    done: bool,
) -> Response {
    let body = serde_json::to_vec(document).unwrap_or_default();
    let etag = conditional::tag_of(&body);
    let mut response = if status == StatusCode::OK && conditional::none_match(headers, &etag) {
        conditional::not_modified(&etag)
    } else {
        let mut response = (status, body).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        conditional::set_etag(response.headers_mut(), &etag);
        response
    };
    if !done {
        conditional::set_retry_after(response.headers_mut());
    }
    response
}

async fn create_job(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_media_type(&headers, "application/json")?;
    submit(state, caller, &headers, &body).await
}

/// Validates and queues the job request `body` (a job request's JSON, `dataset_id` included) for the
/// caller, honouring `Idempotency-Key`: 202 with `Location` and the job.
pub(super) async fn submit(
    state: AppState,
    caller: Caller,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let idempotency_key = idempotency_key(headers)?;
    let request = parse_request(body)?;
    let (dataset_id, spec) = (request.dataset_id, &request.spec);
    let tenant = caller.tenant();

    if let Some(key) = &idempotency_key {
        if let Some(job) = state
            .store
            .job_by_idempotency_key(tenant, key, &request.hash)
            .await?
        {
            return Ok(mark_replayed(accepted(&job)));
        }
    }

    if let Some(url) = &request.meta.callback_url {
        state
            .settings
            .callback_policy
            .check_url(url)
            .map_err(|refusal| {
                ApiError::unprocessable(ErrorCode::CallbackNotAllowed, refusal.to_string())
                    .with_pointer("/callback/url")
            })?;
    }
    validate(&state, tenant, dataset_id, spec).await?;
    let hierarchy_ids = job_meta::referenced_hierarchies(spec);
    let (job, created) = state
        .store
        .create_job_with(NewJob {
            tenant,
            dataset_id,
            spec_json: &request.spec_json,
            idempotency_key: idempotency_key.as_deref(),
            request_hash: &request.hash,
            name: request.meta.name.as_deref(),
            labels: &request.meta.labels,
            hierarchy_ids: &hierarchy_ids,
            summary_json: Some(&request.summary_json),
            callback_url: request.meta.callback_url.as_deref(),
        })
        .await
        .map_err(|e| match e {
            // the dataset was deleted between validation and insertion
            StoreError::NotFound => unknown_dataset(),
            other => other.into(),
        })?;
    if created {
        state.job_queued.notify_one();
        tracing::info!(job = %job.id, dataset = %dataset_id, "job queued");
        Ok(accepted(&job))
    } else {
        // a concurrent request with the same key stored it first
        Ok(mark_replayed(accepted(&job)))
    }
}

/// 202 with `Location`, `Retry-After` (while the job is not done) and the job.
fn accepted(job: &Job) -> Response {
    let mut response = job_response(
        StatusCode::ACCEPTED,
        &HeaderMap::new(),
        &job_json(job, false),
        is_done(job.state),
    );
    if let Ok(location) = HeaderValue::from_str(&format!("/v1/jobs/{}", job.id)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// A job request, split.
struct JobRequest {
    dataset_id: Uuid,
    /// The spec as stored: the request minus `dataset_id`, `name` and `labels`.
    spec_json: String,
    /// The request's hash, for idempotency.
    hash: String,
    spec: JobSpec,
    meta: JobMeta,
    /// What the job asks for ([`job_meta::summary_json`]).
    summary_json: String,
}

/// Splits the request into the dataset id, the spec text, the request's hash for idempotency, the
/// parsed spec, the name and labels, and the summary.
fn parse_request(body: &[u8]) -> Result<JobRequest, ApiError> {
    let document = parse_json(body)?;
    let Value::Object(mut object) = document else {
        return Err(SpecError::new(
            "",
            ErrorCode::InvalidSpec,
            "the request must be a JSON object",
        )
        .into());
    };
    let dataset_id = match object.remove("dataset_id") {
        None => {
            return Err(SpecError::new(
                "/dataset_id",
                ErrorCode::InvalidSpec,
                "dataset_id is required",
            )
            .into())
        }
        Some(Value::String(text)) => Uuid::try_parse(&text).map_err(|_| unknown_dataset())?,
        Some(_) => {
            return Err(SpecError::new(
                "/dataset_id",
                ErrorCode::InvalidSpec,
                "dataset_id must be a string",
            )
            .into())
        }
    };
    let hash = request_hash(dataset_id, Value::Object(object.clone()))?;
    let meta = take_meta(&mut object)?;
    let summary_json = job_meta::summary_json(&object);
    let spec_json = serde_json::to_string(&object).map_err(|_| ApiError::internal())?;
    // positions refer to the re-serialized spec, not to the client's body: drop them
    let spec = JobSpec::from_json(spec_json.as_bytes()).map_err(|mut e| {
        if let Some(at) = e.message.rfind(" at line ") {
            e.message.truncate(at);
        }
        e
    })?;
    Ok(JobRequest {
        dataset_id,
        spec_json,
        hash,
        spec,
        meta,
        summary_json,
    })
}

/// A request body as JSON: 422 `malformed_json` when it is not JSON, `invalid_spec` when serde reads
/// it but not as a document.
pub(super) fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        let code = if e.is_syntax() || e.is_eof() {
            ErrorCode::MalformedJson
        } else {
            ErrorCode::InvalidSpec
        };
        ApiError::from(SpecError::new("", code, e.to_string()))
    })
}

fn unknown_dataset() -> ApiError {
    ApiError::unprocessable(ErrorCode::UnknownDataset, "no dataset with this id exists")
        .with_pointer("/dataset_id")
}

/// SHA-256 over the dataset id and the spec with object keys sorted.
fn request_hash(dataset_id: Uuid, spec: Value) -> Result<String, ApiError> {
    let canonical = serde_json::to_string(&sorted(spec)).map_err(|_| ApiError::internal())?;
    let mut hasher = Sha256::new();
    hasher.update(dataset_id.as_bytes());
    hasher.update(canonical.as_bytes());
    Ok(hex(&hasher.finalize()))
}

/// `value` with every object's keys in sorted order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(String, Value)> = object.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sorted(v)))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Everything the worker would check before running: the dataset exists for the tenant, the spec's
/// delimiter matches the upload's, referenced hierarchies exist, and the spec fits the table (columns,
/// roles, hierarchies covering every value, k within the table, limits).
async fn validate(
    state: &AppState,
    tenant: Uuid,
    dataset_id: Uuid,
    spec: &JobSpec,
) -> Result<(), ApiError> {
    let dataset = match state.store.get_dataset(tenant, dataset_id).await {
        Ok(dataset) => dataset,
        Err(StoreError::NotFound) => return Err(unknown_dataset()),
        Err(e) => return Err(e.into()),
    };
    check_csv_settings(&spec.csv, &dataset)?;
    check_time_limit(spec, state.settings.job_deadline)?;
    let hierarchies = StoredHierarchies::fetch(&state.store, tenant, spec)
        .await
        .map_err(|e| match e {
            FetchError::Spec(e) => ApiError::from(e),
            FetchError::Store(e) => ApiError::from(e),
        })?;
    let table = load_table(state, &dataset, unknown_dataset).await?;
    let population = load_population(state, tenant, spec).await?;
    check_memory(
        &table,
        population.as_deref(),
        state.settings.job_memory_budget,
    )?;
    let spec = spec.clone();
    tokio::task::spawn_blocking(move || {
        check_spec(&table, &spec, &hierarchies, population.as_deref())
    })
    .await
    .map_err(|_| ApiError::internal())?
}

/// A search time limit must end before the job's deadline, which would otherwise fail the job with
/// `deadline_exceeded` instead of publishing the best solution found: 422 `invalid_parameter`.
fn check_time_limit(spec: &JobSpec, deadline: std::time::Duration) -> Result<(), ApiError> {
    let Some(limit) = spec.algorithm.time_limit_ms() else {
        return Ok(());
    };
    if u128::from(limit) < deadline.as_millis() {
        return Ok(());
    }
    let pointer = match spec.algorithm {
        crate::domain::spec::AlgorithmSpec::Fragmentation(_) => {
            "/algorithm/anonymizer/time_limit_ms"
        }
        _ => "/algorithm/time_limit_ms",
    };
    Err(ApiError::from(SpecError::new(
        pointer,
        ErrorCode::InvalidParameter,
        format!(
            "time_limit_ms must be below the service's job deadline of {} ms",
            deadline.as_millis()
        ),
    )))
}

/// The population table `spec` names (a dataset of `tenant`), if any; 422 `unknown_dataset` at
/// `/population_dataset_id` when there is none with that id.
pub(super) async fn load_population(
    state: &AppState,
    tenant: Uuid,
    spec: &JobSpec,
) -> Result<Option<Arc<Table>>, ApiError> {
    let Some(id) = spec.population_dataset_id.as_deref() else {
        return Ok(None);
    };
    let id = Uuid::parse_str(id).map_err(|_| unknown_population())?;
    let dataset = match state.store.get_dataset(tenant, id).await {
        Ok(dataset) => dataset,
        Err(StoreError::NotFound) => return Err(unknown_population()),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(load_table(state, &dataset, unknown_population).await?))
}

fn unknown_population() -> ApiError {
    ApiError::unprocessable(
        ErrorCode::UnknownDataset,
        "no dataset with this id exists for the population",
    )
    .with_pointer("/population_dataset_id")
}

/// 422 `memory_budget_exceeded` when a job on `table` (and its `population`, indexed like a second
/// table) is expected to need more than `budget` bytes (0: no budget).
fn check_memory(table: &Table, population: Option<&Table>, budget: u64) -> Result<(), ApiError> {
    let estimate = crate::domain::run::memory::job_memory_estimate;
    let needed = estimate(table) + population.map_or(0, estimate);
    if budget > 0 && needed > budget {
        return Err(ApiError::unprocessable(
            ErrorCode::MemoryBudgetExceeded,
            format!(
                "a job on this dataset ({} records, {} columns) is expected to need about {} MiB, \
                 more than this service's budget of {} MiB per job",
                table.row_count(),
                table.columns().len(),
                needed >> 20,
                budget >> 20
            ),
        )
        .with_pointer("/dataset_id"));
    }
    Ok(())
}

fn check_spec(
    table: &Arc<Table>,
    spec: &JobSpec,
    hierarchies: &StoredHierarchies,
    population: Option<&Table>,
) -> Result<(), ApiError> {
    let resolve = |source: &crate::domain::spec::HierarchySpec| hierarchies.resolve(source);
    prepare_with(table, spec, &resolve, population)?;
    Ok(())
}

/// Query of `GET /v1/jobs/{id}`: `include=spec` adds the job's spec.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GetQuery {
    include: Option<String>,
}

async fn get_job(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    query: Result<Query<GetQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let with_spec = match query.include.as_deref() {
        None => false,
        Some("spec") => true,
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidQuery,
                "include accepts only `spec`",
            ))
        }
    };
    let (tenant, id) = (caller.tenant(), path_id(id, "job")?);
    let job = if with_spec {
        state.store.get_job(tenant, id).await
    } else {
        state.store.get_job_status(tenant, id).await
    }
    .map_err(store_error("job"))?;
    Ok(job_response(
        StatusCode::OK,
        &headers,
        &job_json(&job, with_spec),
        is_done(job.state),
    ))
}

/// Query of `GET /v1/jobs`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    state: Option<String>,
    dataset_id: Option<String>,
    label: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

async fn list_jobs(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) = query?;
    let job_state = match &query.state {
        None => None,
        Some(text) => Some(JobState::parse(text).ok_or_else(|| {
            ApiError::bad_request(
                ErrorCode::InvalidQuery,
                "state is one of queued, running, succeeded, failed, cancelled",
            )
        })?),
    };
    let dataset_id = match &query.dataset_id {
        None => None,
        Some(text) => Some(Uuid::try_parse(text).map_err(|_| {
            ApiError::bad_request(ErrorCode::InvalidQuery, "dataset_id is not a valid id")
        })?),
    };
    if let Some(label) = &query.label {
        check_label(label).map_err(|m| ApiError::bad_request(ErrorCode::InvalidQuery, m))?;
    }
    let (limit, cursor) = page_params(query.limit, query.cursor.as_deref())?;
    let page = state
        .store
        .list_jobs(
            caller.tenant(),
            JobFilter {
                state: job_state,
                dataset_id,
                label: query.label,
            },
            cursor,
            limit,
        )
        .await?;
    Ok(Json(json!({
        "items": page.items.iter().map(|j| job_json(j, false)).collect::<Vec<_>>(),
        "next_cursor": page.next_cursor.map(|c| c.to_string()),
    })))
}

async fn cancel_job(
    State(state): State<AppState>,
    caller: Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let job = state
        .store
        .request_cancel(caller.tenant(), path_id(id, "job")?)
        .await
        .map_err(store_error("job"))?;
    if matches!(job.state, JobState::Succeeded | JobState::Failed) {
        return Err(ApiError::conflict(
            ErrorCode::Conflict,
            format!("the job already {}", job.state.as_str()),
        ));
    }
    Ok(job_response(
        StatusCode::ACCEPTED,
        &HeaderMap::new(),
        &job_json(&job, false),
        is_done(job.state),
    ))
}

/// Deletes a job with its output and report; a running job is asked to stop first (its worker also
/// loses its lease with the row). 204.
async fn delete_job(
    State(state): State<AppState>,
    caller: Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let (tenant, id) = (caller.tenant(), path_id(id, "job")?);
    let job = state
        .store
        .get_job_status(tenant, id)
        .await
        .map_err(store_error("job"))?;
    if job.state == JobState::Running {
        state
            .store
            .request_cancel(tenant, id)
            .await
            .map_err(store_error("job"))?;
    }
    state
        .store
        .delete_job(tenant, id)
        .await
        .map_err(store_error("job"))?;
    tracing::info!(job = %id, "job deleted");
    Ok(StatusCode::NO_CONTENT)
}

async fn get_result(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let result = state
        .store
        .job_result(caller.tenant(), path_id(id, "job")?)
        .await
        .map_err(store_error("job"))?;
    // a succeeded job's report never changes
    let etag = conditional::tag_of(result.report_json.as_bytes());
    if conditional::none_match(&headers, &etag) {
        return Ok(conditional::not_modified(&etag));
    }
    let mut response = (
        [(header::CONTENT_TYPE, "application/json")],
        result.report_json,
    )
        .into_response();
    conditional::set_etag(response.headers_mut(), &etag);
    Ok(response)
}

/// Query of `GET /v1/jobs/{id}/output`: `fragment=i` (1-based) selects one fragment of a
/// fragmentation job, whose whole output is otherwise the archive of all fragments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputQuery {
    fragment: Option<String>,
}

/// The number of fragments a succeeded job's report lists (0 for a one-table job).
pub(super) fn fragments_of(report_json: &str) -> usize {
    #[derive(Deserialize)]
    struct Fragmentation {
        fragments: Vec<serde::de::IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Head {
        fragmentation: Option<Fragmentation>,
    }
    serde_json::from_str::<Head>(report_json)
        .ok()
        .and_then(|h| h.fragmentation)
        .map_or(0, |f| f.fragments.len())
}

async fn get_output(
    State(state): State<AppState>,
    caller: Caller,
    request_headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    query: Result<Query<OutputQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let tenant = caller.tenant();
    let id = path_id(id, "job")?;
    let result = state
        .store
        .job_result(tenant, id)
        .await
        .map_err(store_error("job"))?;
    let fragments = fragments_of(&result.report_json);
    let fragment = match query.fragment.as_deref() {
        None => None,
        Some(text) => {
            let index = text
                .parse::<usize>()
                .ok()
                .filter(|&i| i >= 1)
                .ok_or_else(|| {
                    ApiError::bad_request(
                        ErrorCode::InvalidQuery,
                        "fragment must be a fragment number, 1 or more",
                    )
                })?;
            if index > fragments {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    ErrorCode::UnknownFragment,
                    if fragments == 0 {
                        "the job published one table, not fragments".to_string()
                    } else {
                        format!("the job published {fragments} fragments")
                    },
                ));
            }
            Some(index)
        }
    };
    // the output's tag is its checksum (a fragment's names its part of the archive)
    let part = fragment.map(|index| format!("fragment-{index}"));
    let etag = conditional::tag_of_checksum(&result.output_sha256, part.as_deref());
    if conditional::none_match(&request_headers, &etag) {
        // the tag the 200 would carry: weak when it would be gzipped on the fly
        let etag = if conditional::accepts_gzip(&request_headers) {
            format!("W/{etag}")
        } else {
            etag
        };
        let mut response = conditional::not_modified(&etag);
        response.headers_mut().insert(
            header::VARY,
            HeaderValue::from_static("accept, accept-encoding"),
        );
        return Ok(response);
    }
    let job = state
        .store
        .get_job_status(tenant, id)
        .await
        .map_err(store_error("job"))?;
    // the job's short id keeps apart the downloads of several jobs of one dataset
    let short_id = id.simple().to_string();
    let stem = match state.store.get_dataset(tenant, job.dataset_id).await {
        Ok(dataset) => format!(
            "{}-{}",
            safe_file_stem(&dataset.name),
            short_id.get(..8).unwrap_or(&short_id)
        ),
        Err(_) => id.to_string(),
    };
    let store = state.store.clone();
    let chunks = result.output_chunk_count;
    let stream = futures_util::stream::unfold(0u64, move |seq| {
        let store = store.clone();
        async move {
            if seq >= chunks {
                return None;
            }
            let item = match store.job_output_chunk(id, seq).await {
                Ok(Some(bytes)) => Ok(Bytes::from(bytes)),
                Ok(None) => Err(std::io::Error::other("an output chunk is missing")),
                Err(e) => {
                    tracing::error!(job = %id, error = %e, "reading an output chunk failed");
                    Err(std::io::Error::other("reading the output failed"))
                }
            };
            Some((item, seq + 1))
        }
    });
    // the compression layer may poll once more after the end
    let stream = futures_util::StreamExt::fuse(stream);
    let (body, content_type, file_name, length) = match fragment {
        Some(index) => {
            // the fragment's bytes are cut out of the stored archive as its chunks arrive
            let cutter = EntryCutter::new(fragment_entry_name(index));
            let cut = futures_util::stream::unfold(
                (Box::pin(stream), cutter),
                |(mut chunks, mut cutter)| async move {
                    loop {
                        if cutter.is_done() {
                            return None;
                        }
                        match futures_util::StreamExt::next(&mut chunks).await {
                            None => return None,
                            Some(Err(e)) => return Some((Err(e), (chunks, cutter))),
                            Some(Ok(bytes)) => match cutter.feed(&bytes) {
                                Ok(piece) if piece.is_empty() => continue,
                                Ok(piece) => {
                                    return Some((Ok(Bytes::from(piece)), (chunks, cutter)))
                                }
                                Err(e) => return Some((Err(e), (chunks, cutter))),
                            },
                        }
                    }
                },
            );
            (
                Body::from_stream(futures_util::StreamExt::fuse(cut)),
                "text/csv; charset=utf-8",
                format!("{stem}-fragment-{index}.csv"),
                None,
            )
        }
        None if fragments > 0 => (
            Body::from_stream(stream),
            "application/x-tar",
            format!("{stem}-fragments.tar"),
            Some(result.output_byte_size),
        ),
        None => (
            Body::from_stream(stream),
            "text/csv; charset=utf-8",
            format!("{stem}-anonymized.csv"),
            Some(result.output_byte_size),
        ),
    };
    let content_type = if accepts_only_octet_stream(&request_headers, content_type) {
        "application/octet-stream"
    } else {
        content_type
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(length) = length {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        // the checksum is the stored output's: the whole CSV or the whole archive
        if let Ok(value) = HeaderValue::from_str(&result.output_sha256) {
            headers.insert("x-checksum-sha256", value);
        }
    }
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{file_name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    conditional::set_etag(headers, &etag);
    // the content type follows Accept (octet-stream on request); the compression layer adds its own
    headers.append(header::VARY, HeaderValue::from_static("accept"));
    Ok(response)
}

/// True when the request's `Accept` names `application/octet-stream` but not the output's own type
/// (`own`, parameters aside): clients that treat every download as bytes get them labelled so.
fn accepts_only_octet_stream(headers: &HeaderMap, own: &str) -> bool {
    let own = own.split(';').next().unwrap_or(own).trim();
    let listed: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|range| range.split(';').next().unwrap_or(range).trim())
        .collect();
    let names = |wanted: &str| listed.iter().any(|r| r.eq_ignore_ascii_case(wanted));
    names("application/octet-stream") && !names(own)
}

/// A dataset name reduced to characters safe in a quoted `filename`.
fn safe_file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if stem.is_empty() {
        "dataset".to_string()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_hash_ignores_key_order_and_formatting() {
        let request_hash =
            |id, text: &str| super::request_hash(id, serde_json::from_str(text).unwrap());
        let id = Uuid::new_v4();
        let a = request_hash(id, r#"{"a": 1, "b": {"y": [1, 2], "x": null}}"#).unwrap();
        let b = request_hash(id, r#"{"b":{"x":null,"y":[1,2]},"a":1}"#).unwrap();
        let c = request_hash(id, r#"{"b":{"x":null,"y":[2,1]},"a":1}"#).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, request_hash(Uuid::new_v4(), r#"{"a": 1}"#).unwrap());
    }

    #[test]
    fn octet_stream_is_chosen_only_when_asked_for_instead_of_the_own_type() {
        let accept = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
            headers
        };
        let csv = "text/csv; charset=utf-8";
        assert!(!accepts_only_octet_stream(&HeaderMap::new(), csv));
        assert!(accepts_only_octet_stream(
            &accept("application/octet-stream"),
            csv
        ));
        assert!(accepts_only_octet_stream(
            &accept("application/octet-stream;q=0.9, application/json"),
            csv
        ));
        assert!(!accepts_only_octet_stream(
            &accept("text/csv, application/octet-stream"),
            csv
        ));
        assert!(!accepts_only_octet_stream(&accept("*/*"), csv));
        assert!(accepts_only_octet_stream(
            &accept("application/octet-stream"),
            "application/x-tar"
        ));
    }

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(safe_file_stem("adult 2026\"; x"), "adult_2026___x");
        assert_eq!(safe_file_stem(""), "dataset");
    }
}
