//! `GET /v1/jobs/{id}/report.html` and `GET /v1/jobs/{id}/report.pdf`: a succeeded job's report as the
//! page a privacy officer signs ([`crate::report_page`]), with the provenance the service knows: the
//! dataset's name, size and SHA-256, the job's id, tenant and times, and its spec.
//!
//! The page is served with its Content-Security-Policy as a header too and a weak ETag over what it
//! shows (the rendering time aside), so `If-None-Match` answers 304. The PDF is the page printed by a
//! headless Chromium that the operator names (`--pdf-renderer`, `ANONYMIZER_PDF_RENDERER`); without one
//! the route answers 501 `pdf_unavailable`. Chromium gets a private temporary directory (the page, its
//! profile, the PDF), no network (a proxy that does not exist), and [`PDF_TIMEOUT`], in a process group
//! of its own that is killed when it ends; at most [`PDF_RENDERS`] run at once per process (another
//! request is 503 `server_busy` with `Retry-After`, never queued). A job that has not succeeded is 409 `job_not_succeeded`,
//! another tenant's job 404, as for the JSON report.

use std::path::Path as FsPath;
use std::process::Stdio;
use std::time::Duration;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::sync::Semaphore;
use uuid::Uuid;

use super::auth::Caller;
use super::conditional;
use super::request::{path_id, store_error};
use super::state::AppState;
use super::time::{now_ms, rfc3339};
use super::{timeout_layer, ApiError, REQUEST_TIMEOUT};
use crate::error_code::ErrorCode;
use crate::report_page::{render, DatasetFacts, JobFacts, Provenance, CONTENT_SECURITY_POLICY};
use crate::store::StoreError;

/// How long Chromium may take to print one report.
pub const PDF_TIMEOUT: Duration = Duration::from_secs(60);
/// PDF renderings at once in one process (each is a Chromium).
pub const PDF_RENDERS: usize = 2;

static PDF_PERMITS: Semaphore = Semaphore::const_new(PDF_RENDERS);

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/jobs/{id}/report.html",
            get(get_report_html).layer(timeout_layer(REQUEST_TIMEOUT)),
        )
        // Chromium may take longer than an ordinary request: PDF_TIMEOUT bounds it
        .route("/v1/jobs/{id}/report.pdf", get(get_report_pdf))
}

/// What the page of a job shows, read from the store, and the tag of it.
struct PageSource {
    report_json: String,
    provenance: Provenance,
    /// Weak: the page's bytes also hold the time it was rendered.
    etag: String,
}

/// The page source of job `id` (404 unknown, 409 not succeeded).
async fn page_source(state: &AppState, tenant: Uuid, id: Uuid) -> Result<PageSource, ApiError> {
    let result = state
        .store
        .job_result(tenant, id)
        .await
        .map_err(store_error("job"))?;
    let job = state
        .store
        .get_job(tenant, id)
        .await
        .map_err(store_error("job"))?;
    // a deleted dataset leaves its name (kept on the job) and no checksum
    let dataset = match state.store.get_dataset(tenant, job.dataset_id).await {
        Ok(d) => Some(d),
        Err(StoreError::NotFound) => None,
        Err(e) => return Err(e.into()),
    };
    let facts = DatasetFacts {
        id: Some(job.dataset_id.to_string()),
        name: dataset
            .as_ref()
            .map(|d| d.name.clone())
            .or_else(|| job.dataset_name.clone())
            .unwrap_or_else(|| "(deleted dataset)".to_string()),
        byte_size: dataset.as_ref().map(|d| d.byte_size),
        sha256: dataset.as_ref().map(|d| d.sha256.clone()),
        records: dataset.as_ref().map(|d| d.row_count),
    };
    let provenance = Provenance {
        service_version: env!("CARGO_PKG_VERSION").to_string(),
        generated_at: rfc3339(now_ms()),
        dataset: facts,
        job: Some(JobFacts {
            id: job.id.to_string(),
            tenant: job.tenant_id.to_string(),
            name: job.name.clone(),
            submitted_at: rfc3339(job.created_at),
            started_at: job.started_at.map(rfc3339),
            finished_at: job.finished_at.map(rfc3339),
        }),
        spec: serde_json::from_str(&job.spec_json).unwrap_or(serde_json::Value::Null),
    };
    // what the page shows, its rendering time aside: the report, the dataset and the software
    let tag_source = format!(
        "{}\n{}\n{:?}\n{:?}\n{}",
        env!("CARGO_PKG_VERSION"),
        result.report_json,
        provenance.dataset.sha256,
        provenance.dataset.name,
        job.spec_json
    );
    Ok(PageSource {
        report_json: result.report_json,
        provenance,
        etag: format!("W/{}", conditional::tag_of(tag_source.as_bytes())),
    })
}

impl PageSource {
    /// The page, rendered on a blocking thread.
    async fn render(self) -> Result<String, ApiError> {
        let report: serde_json::Value = serde_json::from_str(&self.report_json)
            .map_err(|_| failed("the stored report is not JSON"))?;
        let provenance = self.provenance;
        tokio::task::spawn_blocking(move || render(&report, &provenance))
            .await
            .map_err(|_| failed("the report page could not be rendered"))?
            .map_err(|e| failed(&e.to_string()))
    }
}

/// A 500 whose cause goes to the log (with the request id), never to the client.
fn failed(why: &str) -> ApiError {
    tracing::error!(error = why, "report page");
    ApiError::internal()
}

fn attachment(headers: &mut HeaderMap, disposition: &str, name: &str) {
    if let Ok(value) = HeaderValue::from_str(&format!("{disposition}; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
}

async fn get_report_html(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let id = path_id(id, "job")?;
    let source = page_source(&state, caller.tenant(), id).await?;
    // an unchanged page is answered before it is rendered
    let etag = source.etag.clone();
    if conditional::none_match(&headers, &etag) {
        return Ok(conditional::not_modified(&etag));
    }
    let mut response = source.render().await?.into_response();
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    out.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    attachment(out, "inline", &format!("job-{id}-report.html"));
    conditional::set_etag(out, &etag);
    Ok(response)
}

async fn get_report_pdf(
    State(state): State<AppState>,
    caller: Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let id = path_id(id, "job")?;
    let Some(renderer) = state.settings.pdf_renderer.clone() else {
        // the job is still looked up: an unknown job is 404 and an unfinished one 409 either way
        state
            .store
            .job_result(caller.tenant(), id)
            .await
            .map_err(store_error("job"))?;
        return Err(ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            ErrorCode::PdfUnavailable,
            "this server has no PDF renderer; GET report.html and print it, or start the server \
             with --pdf-renderer naming a Chromium",
        ));
    };
    // a render that cannot start now is refused rather than queued: nothing waits behind Chromium
    let _permit = PDF_PERMITS.try_acquire().map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ServerBusy,
            "the server is printing as many reports as it can; retry shortly",
        )
        .with_retry_after(5)
    })?;
    let html = page_source(&state, caller.tenant(), id)
        .await?
        .render()
        .await?;
    let pdf = print_to_pdf(&renderer, &html)
        .await
        .map_err(|e| failed(&format!("the PDF renderer failed: {e}")))?;
    let mut response = pdf.into_response();
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/pdf"),
    );
    attachment(out, "attachment", &format!("job-{id}-report.pdf"));
    Ok(response)
}

/// Prints `html` to PDF with the Chromium at `renderer`, in a private temporary directory.
pub async fn print_to_pdf(renderer: &FsPath, html: &str) -> Result<Vec<u8>, String> {
    let dir = tempfile::Builder::new()
        .prefix("anonymizer-pdf-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {}", e.kind()))?;
    let page = dir.path().join("report.html");
    let pdf = dir.path().join("report.pdf");
    tokio::fs::write(&page, html)
        .await
        .map_err(|e| format!("writing the page: {}", e.kind()))?;
    let mut command = tokio::process::Command::new(renderer);
    command
        .arg("--headless")
        .arg("--disable-gpu")
        .arg("--no-first-run")
        .arg("--disable-background-networking")
        .arg("--disable-component-update")
        .arg("--disable-sync")
        .arg("--disable-extensions")
        // nothing may be fetched: the page needs no network and any request goes nowhere
        .arg("--proxy-server=127.0.0.1:9")
        .arg("--no-pdf-header-footer")
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--print-to-pdf={}", pdf.display()));
    // Chromium refuses to run as root inside its sandbox; the page is the service's own, without script
    // SAFETY: geteuid has no preconditions and cannot fail
    if unsafe { libc::geteuid() } == 0 {
        command.arg("--no-sandbox");
    }
    command
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Chromium and its helper processes form a group of their own, killed together
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| format!("starting {}: {}", renderer.display(), e.kind()))?;
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let waited = tokio::time::timeout(PDF_TIMEOUT, child.wait()).await;
    // whatever happened, no helper outlives the render (and none writes in the directory once it is
    // deleted): the group is killed and the browser reaped
    if let Some(group) = group {
        // SAFETY: kill has no memory preconditions; the group is the one Chromium was started in
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    let status = match waited {
        Ok(status) => status.map_err(|e| format!("waiting for the renderer: {}", e.kind()))?,
        Err(_) => {
            let _ = child.wait().await;
            return Err(format!("no PDF after {} s", PDF_TIMEOUT.as_secs()));
        }
    };
    let bytes = tokio::fs::read(&pdf).await.unwrap_or_default();
    if !status.success() || !bytes.starts_with(b"%PDF-") {
        return Err(format!("the renderer exited with {status} without a PDF"));
    }
    Ok(bytes)
}
