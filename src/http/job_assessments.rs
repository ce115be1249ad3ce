//! `POST /v1/jobs/{id}/assessments`: the loss measures of a succeeded job's published output against its
//! dataset, read back from the stored CSV as a recipient downloads it (`domain::analysis::published`),
//! answered at once with 200; nothing is stored. It checks the report's `loss_measures` and
//! `dependencies` from the published texts alone.
//!
//! The job, its dataset and its stored hierarchies are looked up for the caller's tenant (another
//! tenant's job is the same 404 as an unknown one); a job that has not succeeded is 409
//! `job_not_succeeded`; a fragmentation job is 422 `unsupported_option` (it publishes several tables).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use uuid::Uuid;

use super::auth::Caller;
use super::dataset_table::load_table;
use super::jobs::fragments_of;
use super::request::{path_id, store_error};
use super::state::AppState;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::codec::encoding::DecodingReader;
use crate::codec::{read_table, CsvOptions};
use crate::core::data::Table;
use crate::domain::analysis::published::{assess_published, PublishedAssessment};
use crate::domain::resolve::{output_encoding, prepare_with};
use crate::domain::spec::HierarchySpec;
use crate::domain::JobSpec;
use crate::error_code::ErrorCode;
use crate::frame_reader::{parse_stored_chunks, ChunkGap};
use crate::hierarchy_refs::{FetchError, StoredHierarchies};
use crate::store::Store;

/// Stored output chunks queued for the parser at most.
const CHUNKS_IN_FLIGHT: usize = 4;

/// The route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/jobs/{id}/assessments",
        post(create).layer(timeout_layer(REQUEST_TIMEOUT)),
    )
}

async fn create(
    caller: Caller,
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<PublishedAssessment>, ApiError> {
    let id = path_id(path, "job")?;
    let tenant = caller.tenant();
    let result = state
        .store
        .job_result(tenant, id)
        .await
        .map_err(store_error("job"))?;
    if fragments_of(&result.report_json) > 0 {
        return Err(ApiError::unprocessable(
            ErrorCode::UnsupportedOption,
            "a fragmentation job publishes several tables; their loss is in the job's report",
        ));
    }
    let job = state
        .store
        .get_job(tenant, id)
        .await
        .map_err(store_error("job"))?;
    let spec = JobSpec::from_json(job.spec_json.as_bytes()).map_err(|_| {
        tracing::error!(job = %id, "a stored job spec does not parse");
        ApiError::internal()
    })?;
    let dataset = state
        .store
        .get_dataset(tenant, job.dataset_id)
        .await
        .map_err(store_error("dataset"))?;
    let hierarchies = StoredHierarchies::fetch(&state.store, tenant, &spec)
        .await
        .map_err(|e| match e {
            FetchError::Spec(e) => ApiError::from(e),
            FetchError::Store(e) => ApiError::from(e),
        })?;
    let table = load_table(&state, &dataset, || ApiError::not_found("dataset")).await?;
    let options = CsvOptions::with_delimiter(&dataset.delimiter)
        .map_err(|_| ApiError::internal())?
        .with_max_field_bytes(usize::MAX);
    let encoding = output_encoding(&spec.csv)?;
    let published = read_output(
        &state.store,
        id,
        result.output_chunk_count,
        options,
        encoding,
    )
    .await?;
    let population = super::jobs::load_population(&state, tenant, &spec).await?;
    let assessment = tokio::task::spawn_blocking(move || {
        let resolve = |source: &HierarchySpec| hierarchies.resolve(source);
        let prepared = prepare_with(&table, &spec, &resolve, population.as_deref())?;
        assess_published(&table, &published, &prepared)
    })
    .await
    .map_err(|_| ApiError::internal())??;
    Ok(Json(assessment))
}

/// The job's stored output parsed as a table, chunk by chunk.
async fn read_output(
    store: &Store,
    job: Uuid,
    chunks: u64,
    options: CsvOptions,
    encoding: Option<&'static encoding_rs::Encoding>,
) -> Result<Table, ApiError> {
    let (parsed, gap) = parse_stored_chunks(
        chunks,
        CHUNKS_IN_FLIGHT,
        |seq| store.job_output_chunk(job, seq),
        move |frames| match encoding {
            Some(encoding) => read_table(DecodingReader::new(frames, encoding), &options),
            None => read_table(frames, &options),
        },
    )
    .await;
    let parsed = parsed.ok_or_else(ApiError::internal)?;
    match gap {
        Some(ChunkGap::Missing) => {
            tracing::error!(job = %job, "an output chunk is missing");
            return Err(ApiError::internal());
        }
        Some(ChunkGap::Failed(e)) => {
            tracing::error!(job = %job, error = %e, "reading an output chunk failed");
            return Err(ApiError::internal());
        }
        None => {}
    }
    parsed.map_err(|e| {
        if e.code() == ErrorCode::NoRecords {
            // every record was suppressed and removed: nothing was published to measure
            return ApiError::unprocessable(
                ErrorCode::PublishedUnreadable,
                "the job's output has no records: every record was suppressed and removed",
            );
        }
        tracing::error!(job = %job, "a stored output does not parse");
        ApiError::internal()
    })
}
