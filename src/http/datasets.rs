//! Routes of /v1/datasets: streamed CSV uploads (optionally gzip-encoded), listing, reading and deleting
//! a tenant's datasets.
//!
//! An upload is parsed while it streams in. It first takes a place in the [`UploadGate`] (bounded per
//! process and per tenant; 429 or 503 with `Retry-After` otherwise). Each body frame is counted against
//! the upload limit (decompressed bytes), handed to the store's staged upload (which hashes it and
//! commits each full chunk in a short transaction of its own, so no connection or write lock is held
//! while the client sends) and passed through a bounded channel to a blocking thread running
//! [`codec::read_table`] — the parser jobs use — so every stored dataset is known to parse. A body that
//! sends nothing for the idle timeout, or less than the minimum rate over such a window, is refused
//! with 408 `upload_timeout`. When the parser rejects the CSV, a limit is exceeded or the body cannot
//! be read, reading stops and the staged rows are deleted: nothing is stored. A refused upload's
//! response carries `Connection: close` (its unread bytes end the connection). On success the columns
//! are profiled from the parsed table, the dataset published in one short update, and the table put in
//! the shared cache for the jobs that follow.
//!
//! With an `Idempotency-Key`, the request's fingerprint (parameters and the decompressed body) is
//! stored with the dataset when it is published. A retry whose key is held reads its body without
//! storing it and answers the stored dataset (`Idempotent-Replayed: true`) or 409
//! `idempotency_conflict`; a concurrent duplicate loses at publishing and answers the same way.
//!
//! [`UploadGate`]: super::upload_gate::UploadGate
//!
//! Errors name lines, columns and counts, never cell values.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tower_http::decompression::RequestDecompressionLayer;
use uuid::Uuid;

use super::auth::Caller;
use super::idempotency::{self, idempotency_key, mark_replayed, Fingerprint};
use super::request::{check_name, media_type, page_params, path_id, store_error};
use super::state::AppState;
use super::time::rfc3339;
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::codec::encoding::{encoding_for, Transcoder};
use crate::codec::profile::{profile_table, ColumnProfile};
use crate::codec::sniff::read_table_sniffing;
use crate::codec::{CodecError, CsvOptions};
use crate::core::data::Table;
use crate::error_code::ErrorCode;
use crate::frame_reader::FrameReader;
use crate::store::{Dataset, DatasetUpload, Idempotency, StoreError};

/// Body frames queued between the upload and its parser. Frames are up to a few hundred KiB, so the
/// parser may lag the network by some MiB without stalling it.
const PARSER_QUEUE_FRAMES: usize = 256;

/// The /v1/datasets routes. The upload streams and has no timeout; the others have [`REQUEST_TIMEOUT`].
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/datasets",
            post(create)
                .layer(RequestDecompressionLayer::new())
                .layer(axum::middleware::map_response(close_after_refusal))
                .merge(get(list).layer(timeout_layer(REQUEST_TIMEOUT))),
        )
        .route(
            "/v1/datasets/{id}",
            get(show)
                .delete(remove)
                .layer(timeout_layer(REQUEST_TIMEOUT)),
        )
}

/// A dataset as the API shows it (the `Dataset` schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetView {
    /// The dataset id.
    pub id: Uuid,
    /// The display name.
    pub name: String,
    /// Bytes of the uncompressed CSV as stored.
    pub byte_size: u64,
    /// Hex SHA-256 of the stored CSV.
    pub sha256: String,
    /// Records, the header excluded.
    pub row_count: u64,
    /// Column profiles, in header order.
    pub columns: Vec<ColumnProfile>,
    /// The field delimiter (one character).
    pub delimiter: String,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
}

impl DatasetView {
    /// The view of a stored dataset. Fails (500) only when its stored column list does not parse.
    pub fn of(dataset: &Dataset) -> Result<Self, ApiError> {
        let columns = serde_json::from_str(&dataset.columns_json).map_err(|_| {
            tracing::error!(dataset = %dataset.id, "stored column list does not parse");
            ApiError::internal()
        })?;
        Ok(DatasetView {
            id: dataset.id,
            name: dataset.name.clone(),
            byte_size: dataset.byte_size,
            sha256: dataset.sha256.clone(),
            row_count: dataset.row_count,
            columns,
            delimiter: dataset.delimiter.clone(),
            created_at: rfc3339(dataset.created_at),
        })
    }
}

/// One page of datasets (the `DatasetList` schema).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatasetList {
    /// The datasets of this page, newest first.
    pub items: Vec<DatasetView>,
    /// The cursor of the next page; null on the last one.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
struct UploadParams {
    name: Option<String>,
    delimiter: Option<String>,
    encoding: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ListParams {
    limit: Option<u32>,
    cursor: Option<String>,
}

async fn create(
    caller: Caller,
    State(state): State<AppState>,
    query: Result<Query<UploadParams>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let Query(params) = query?;
    // generated clients send a binary body as application/octet-stream
    if !media_type(&headers).is_some_and(|m| {
        m.eq_ignore_ascii_case("text/csv") || m.eq_ignore_ascii_case("application/octet-stream")
    }) {
        return Err(ApiError::unsupported_media_type(
            "text/csv (or application/octet-stream)",
        ));
    }
    // the key and the fingerprint of this request, completed as the body streams in
    let mut keyed = idempotency_key(&headers)?.map(|key| {
        let fingerprint = Fingerprint::new(
            "dataset",
            &[
                ("name", params.name.as_deref()),
                ("delimiter", params.delimiter.as_deref()),
                ("encoding", params.encoding.as_deref()),
            ],
        );
        (key, fingerprint)
    });
    let encoding = match params.encoding.as_deref() {
        Some(label) => encoding_for(label).map_err(|m| {
            ApiError::unprocessable(ErrorCode::InvalidEncoding, m).with_pointer("/encoding")
        })?,
        None => None,
    };
    // without a delimiter, the parser sniffs it from the header line
    let options = match params.delimiter.as_deref() {
        Some(d) => Some(CsvOptions::with_delimiter(d)?),
        None => None,
    };
    let name = params.name.filter(|n| !n.is_empty());
    if let Some(name) = &name {
        check_name(name)?;
    }
    let limit = state.settings.upload_limit;
    // present only without Content-Encoding (decompression removes it)
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(ApiError::payload_too_large(limit));
    }
    let _place = state.uploads.admit(caller.tenant())?;
    let pacing = Pacing {
        idle: state.settings.upload_idle_timeout,
        min_rate: state.settings.upload_min_rate,
    };

    let tenant = caller.tenant();
    if let Some((key, fingerprint)) = &keyed {
        if let Some(stored) = state.store.dataset_by_idempotency_key(tenant, key).await? {
            // a retry: read the body to tell the same request from another one, store nothing
            let request_hash = drain(body, fingerprint.clone(), limit, pacing).await?;
            return replay(stored.replay(&request_hash));
        }
    }

    let id = Uuid::new_v4();
    let name = name.unwrap_or_else(|| id.to_string());
    let mut upload = state
        .store
        .begin_dataset_with_id(caller.tenant(), id, &name)
        .await?;
    let field_limit = state.settings.csv_field_limit;
    let transcoder = encoding.map(Transcoder::new);
    let received = receive(
        &mut upload,
        body,
        (options, field_limit, transcoder),
        (limit, pacing),
        keyed.as_mut().map(|(_, fingerprint)| fingerprint),
    )
    .await;
    let (table, columns, options) = match received {
        Ok(parsed) => parsed,
        Err(error) => {
            if let Err(e) = upload.abort().await {
                tracing::warn!(error = %e, "rolling back a rejected upload failed");
            }
            return Err(error);
        }
    };
    let columns_json = serde_json::to_string(&columns).map_err(|_| ApiError::internal())?;
    let delimiter = char::from(options.delimiter).to_string();
    let idempotency = keyed.map(|(key, fingerprint)| Idempotency {
        key,
        request_hash: fingerprint.finish(),
    });
    if let Some(idempotency) = &idempotency {
        upload.set_idempotency(idempotency.clone());
    }
    let published = upload
        .finish_as_written(table.row_count() as u64, columns_json, delimiter)
        .await;
    let dataset = match (published, &idempotency) {
        (Ok(dataset), _) => dataset,
        // a concurrent upload with the same key was published first
        (Err(StoreError::Conflict(ErrorCode::IdempotencyConflict, _)), Some(idempotency)) => {
            let stored = state
                .store
                .dataset_by_idempotency_key(tenant, &idempotency.key)
                .await?;
            return replay(stored.and_then(|k| k.replay(&idempotency.request_hash)));
        }
        (Err(error), _) => return Err(error.into()),
    };
    state.tables.insert(dataset.id, Arc::new(table));
    state.metrics.add_uploaded_bytes(dataset.byte_size);
    tracing::info!(
        dataset = %dataset.id,
        bytes = dataset.byte_size,
        rows = dataset.row_count,
        "dataset stored"
    );
    created(&dataset)
}

/// 201 with `Location` and the dataset.
fn created(dataset: &Dataset) -> Result<Response, ApiError> {
    let location = HeaderValue::from_str(&format!("/v1/datasets/{}", dataset.id))
        .map_err(|_| ApiError::internal())?;
    let view = DatasetView::of(dataset)?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(view),
    )
        .into_response())
}

/// The answer to a retried upload: what the first request stored, marked as a replay, or 409
/// `idempotency_conflict` when the key was stored with another request.
fn replay(stored: Option<Dataset>) -> Result<Response, ApiError> {
    match stored {
        Some(dataset) => Ok(mark_replayed(created(&dataset)?)),
        None => Err(idempotency::conflict()),
    }
}

/// Reads a retried upload's body to its end under the same limits as an upload, storing nothing, and
/// returns the request's fingerprint.
async fn drain(
    body: Body,
    mut fingerprint: Fingerprint,
    limit: u64,
    pacing: Pacing,
) -> Result<String, ApiError> {
    let mut stream = body.into_data_stream();
    let mut meter = Meter::new(limit, pacing);
    loop {
        let frame = match tokio::time::timeout(pacing.idle, stream.next()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(fingerprint.finish()),
            Err(_) => return Err(pacing.idle_error()),
        };
        let bytes = frame.map_err(|_| unreadable_body())?;
        meter.count(bytes.len())?;
        fingerprint.update(&bytes);
    }
}

/// 400 for a body that could not be read.
fn unreadable_body() -> ApiError {
    // a client that went away, or a truncated or corrupt gzip stream
    ApiError::bad_request(
        ErrorCode::BadRequest,
        "the request body could not be read (interrupted, or not a valid gzip stream)",
    )
}

/// Counts an upload's bytes against its limit and its minimum rate.
struct Meter {
    limit: u64,
    pacing: Pacing,
    received: u64,
    window_start: Instant,
    window_bytes: u64,
}

impl Meter {
    fn new(limit: u64, pacing: Pacing) -> Self {
        Meter {
            limit,
            pacing,
            received: 0,
            window_start: Instant::now(),
            window_bytes: 0,
        }
    }

    /// Counts a frame of `len` bytes: 413 past the limit, 408 under the minimum rate.
    fn count(&mut self, len: usize) -> Result<(), ApiError> {
        self.received += len as u64;
        if self.received > self.limit {
            return Err(ApiError::payload_too_large(self.limit));
        }
        self.window_bytes += len as u64;
        let elapsed = self.window_start.elapsed();
        if elapsed >= self.pacing.idle {
            self.pacing.check_rate(self.window_bytes, elapsed)?;
            self.window_start = Instant::now();
            self.window_bytes = 0;
        }
        Ok(())
    }
}

/// An upload refused with an error may leave part of its body unread on the connection, which the
/// server then closes. The response says `Connection: close` so that the client does not put the
/// connection back in its pool and send its next request on a socket that is going away.
async fn close_after_refusal(mut response: Response) -> Response {
    if response.status().is_client_error() || response.status().is_server_error() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// How fast an upload must arrive.
#[derive(Debug, Clone, Copy)]
struct Pacing {
    /// Longest wait for the next body frame; also the window of the rate check.
    idle: Duration,
    /// Bytes per second each window must average (0: no minimum).
    min_rate: u64,
}

impl Pacing {
    /// 408 `upload_timeout` for a body that sent nothing for the idle timeout.
    fn idle_error(self) -> ApiError {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            ErrorCode::UploadTimeout,
            format!(
                "the upload sent nothing for {} s; nothing was stored",
                self.idle.as_secs()
            ),
        )
    }

    /// 408 `upload_timeout` when `bytes` received over `elapsed` (at least one window) fall short of
    /// the minimum rate.
    fn check_rate(self, bytes: u64, elapsed: Duration) -> Result<(), ApiError> {
        let needed = u128::from(self.min_rate) * elapsed.as_millis() / 1000;
        if u128::from(bytes) < needed {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                ErrorCode::UploadTimeout,
                format!(
                    "the upload sent {bytes} bytes in {} s, under the minimum of {} bytes per second; \
                     nothing was stored",
                    elapsed.as_secs(),
                    self.min_rate
                ),
            ));
        }
        Ok(())
    }
}

/// Streams `body` into `upload` and through the parser; returns the parsed table, its column profiles
/// and the options it was read with. `options` is the caller's delimiter (sniffed from the header line
/// when `None`) and the field limit; with a `transcoder`, the body is decoded to UTF-8 first, and the
/// store keeps the UTF-8. A `fingerprint` is fed the body as received. Any error leaves the upload to
/// be aborted by the caller.
async fn receive(
    upload: &mut DatasetUpload,
    body: Body,
    (options, field_limit, mut transcoder): (Option<CsvOptions>, usize, Option<Transcoder>),
    (limit, pacing): (u64, Pacing),
    mut fingerprint: Option<&mut Fingerprint>,
) -> Result<(Table, Vec<ColumnProfile>, CsvOptions), ApiError> {
    let (sender, receiver) = mpsc::channel::<Bytes>(PARSER_QUEUE_FRAMES);
    let parser = tokio::task::spawn_blocking(move || {
        let (table, options) =
            read_table_sniffing(FrameReader::new(receiver), options, field_limit)?;
        let columns = profile_table(&table);
        Ok::<_, CodecError>((table, columns, options))
    });
    let mut stream = body.into_data_stream();
    let mut meter = Meter::new(limit, pacing);
    loop {
        let frame = match tokio::time::timeout(pacing.idle, stream.next()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(_) => return Err(pacing.idle_error()),
        };
        let bytes = frame.map_err(|_| unreadable_body())?;
        meter.count(bytes.len())?;
        if let Some(fingerprint) = fingerprint.as_deref_mut() {
            fingerprint.update(&bytes);
        }
        let bytes = match &mut transcoder {
            Some(t) => Bytes::from(t.push(&bytes, false)),
            None => bytes,
        };
        if sender.send(bytes.clone()).await.is_err() {
            // the parser stopped early: it rejected the CSV
            transcoder = None;
            break;
        }
        upload.write(&bytes).await?;
    }
    // the decoder's last bytes (a character cut at the end of the body)
    if let Some(mut t) = transcoder {
        let rest = Bytes::from(t.push(&[], true));
        if !rest.is_empty() && sender.send(rest.clone()).await.is_ok() {
            upload.write(&rest).await?;
        }
    }
    drop(sender);
    match parser.await {
        Ok(Ok(parsed)) => Ok(parsed),
        Ok(Err(codec)) => Err(codec.into()),
        Err(_) => {
            tracing::error!("the upload parser panicked");
            Err(ApiError::internal())
        }
    }
}

async fn list(
    caller: Caller,
    State(state): State<AppState>,
    query: Result<Query<ListParams>, QueryRejection>,
) -> Result<Json<DatasetList>, ApiError> {
    let Query(params) = query?;
    let (limit, cursor) = page_params(params.limit, params.cursor.as_deref())?;
    let page = state
        .store
        .list_datasets(caller.tenant(), cursor, limit)
        .await?;
    let items = page
        .items
        .iter()
        .map(DatasetView::of)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(DatasetList {
        items,
        next_cursor: page.next_cursor.map(|c| c.to_string()),
    }))
}

async fn show(
    caller: Caller,
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<DatasetView>, ApiError> {
    let id = path_id(path, "dataset")?;
    let dataset = state
        .store
        .get_dataset(caller.tenant(), id)
        .await
        .map_err(store_error("dataset"))?;
    Ok(Json(DatasetView::of(&dataset)?))
}

async fn remove(
    caller: Caller,
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let id = path_id(path, "dataset")?;
    state
        .store
        .delete_dataset(caller.tenant(), id)
        .await
        .map_err(store_error("dataset"))?;
    state.tables.remove(id);
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_256_100_123), "2026-11-21T10:15:00.123Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(68_169_600_000), "1972-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_rate_check_measures_each_window() {
        let pacing = Pacing {
            idle: Duration::from_secs(30),
            min_rate: 1024,
        };
        assert!(pacing
            .check_rate(30 * 1024, Duration::from_secs(30))
            .is_ok());
        let slow = pacing
            .check_rate(30 * 1024 - 1, Duration::from_secs(30))
            .unwrap_err();
        assert_eq!(slow.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(slow.code(), "upload_timeout");
        let none = Pacing {
            min_rate: 0,
            ..pacing
        };
        assert!(none.check_rate(0, Duration::from_secs(300)).is_ok());
        assert_eq!(pacing.idle_error().code(), "upload_timeout");
    }
}
