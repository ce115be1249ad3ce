//! `/v1/jobs` on both backends: validation errors with pointers, idempotency, reading, listing with
//! filters and cursors, cancellation, tenant isolation, results and downloads (gzip, checksum),
//! deletion of a dataset removing its jobs, jobs under l-diversity and l-categorical diversity, and
//! hierarchy builders and the report's warnings.
//! Jobs run through the real worker, driven step by step with `run_once` (no sleeping).

use std::sync::Arc;
use std::time::Duration;

use anonymizer::worker::{Worker, WorkerSettings};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{data_dir, expect_problem, sha256_hex, Service};

api_cases!(
    validation_errors_carry_pointers,
    independent_mistakes_come_back_together,
    idempotency_keys_make_retries_safe,
    jobs_are_read_listed_and_paginated,
    queued_jobs_cancel_at_once,
    tenants_see_only_their_jobs,
    lifecycle_result_and_download,
    failed_jobs_say_why,
    deleting_a_dataset_removes_its_jobs,
    stored_hierarchies_are_used_by_id,
    l_diversity_jobs_publish_diverse_classes,
    categorical_jobs_publish_covered_classes,
    local_recoding_jobs_publish_ranges,
    job_bodies_over_the_limit_are_refused,
    builders_and_warnings_reach_the_report,
    windows_1252_uploads_publish_utf8,
    published_outputs_assess_as_their_reports,
    anytime_searches_run_in_the_worker,
    polling_is_conditional_and_says_when_to_come_back,
);

/// The memory budget is checked at submission: with a budget below any job's needs, a valid job is
/// refused with 422 `memory_budget_exceeded` naming the dataset, and nothing is queued.
mod jobs_over_the_memory_budget_are_refused {
    use anonymizer::http::ApiSettings;

    fn tiny_budget() -> ApiSettings {
        ApiSettings {
            job_memory_budget: 1 << 20,
            ..ApiSettings::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        crate::harness::run_with(
            anonymizer::store::Backend::Sqlite,
            tiny_budget(),
            super::over_the_memory_budget,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::harness::run_with(
            anonymizer::store::Backend::Postgres,
            tiny_budget(),
            super::over_the_memory_budget,
        )
        .await;
    }
}

async fn over_the_memory_budget(service: Service) {
    let dataset = toy_dataset(&service).await;
    let problem = expect_problem(
        submit(&service, &toy_spec(&dataset, 2)).await,
        422,
        "memory_budget_exceeded",
    )
    .await;
    assert_eq!(problem["pointer"], "/dataset_id");
    assert!(
        problem["detail"].as_str().unwrap().contains("7 records"),
        "{problem}"
    );
    let list = listed_jobs(&service).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 0);
}

/// A job body over the default 1 MiB limit is 413 `payload_too_large`, declared or not.
async fn job_bodies_over_the_limit_are_refused(service: Service) {
    let dataset = toy_dataset(&service).await;
    let mut spec = toy_spec(&dataset, 2);
    spec["attributes"]["age"]["hierarchy"]["arx"] = Value::String("x".repeat(1 << 20));
    expect_problem(submit(&service, &spec).await, 413, "payload_too_large").await;
    let body = serde_json::to_vec(&spec).unwrap();
    let stream = futures_util::stream::iter(
        body.chunks(1 << 14)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let response = service
        .post("/v1/jobs")
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .expect("submit");
    // the chunks after the limit are unread: the answer tells pooling clients not to reuse the connection
    // (the next request, below, would otherwise be sent on a closing connection)
    assert_eq!(
        response.headers().get("connection").map(|v| v.as_bytes()),
        Some(&b"close"[..])
    );
    expect_problem(response, 413, "payload_too_large").await;
    // just under the limit is still read (and judged on its content)
    spec["attributes"]["age"]["hierarchy"]["arx"] = Value::String(hierarchy_text("age"));
    submit_ok(&service, &spec).await;
}

/// The ARX toy table (7 records, `;`-delimited).
pub(crate) fn toy_csv() -> Vec<u8> {
    std::fs::read(data_dir().join("arx_test/test.csv")).expect("toy table")
}

pub(crate) fn hierarchy_text(name: &str) -> String {
    std::fs::read_to_string(data_dir().join(format!("arx_test/test_hierarchy_{name}.csv")))
        .expect("toy hierarchy")
}

/// A valid spec for the toy table: k-anonymity with inline hierarchies of each form.
pub(crate) fn toy_spec(dataset_id: &str, k: u64) -> Value {
    json!({
        "dataset_id": dataset_id,
        "attributes": {
            "age": {"role": "quasi_identifier", "hierarchy": {"arx": hierarchy_text("age")}},
            "gender": {"role": "quasi_identifier", "hierarchy": {"levels": [["male", "*"], ["female", "*"]]}},
            "zipcode": {"role": "quasi_identifier", "hierarchy": {"arx": hierarchy_text("zipcode")}},
        },
        "privacy_models": [{"type": "k_anonymity", "k": k}],
        "suppression_limit": 0.0,
        "algorithm": {"type": "flash"},
        "metric": "granularity",
    })
}

pub(crate) async fn toy_dataset(service: &Service) -> String {
    let dataset = service.upload_with("toy", &toy_csv(), ";").await;
    dataset["id"].as_str().expect("dataset id").to_string()
}

/// The first page of the caller's jobs.
pub(crate) async fn listed_jobs(service: &Service) -> Value {
    service
        .get("/v1/jobs")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub(crate) async fn submit(service: &Service, body: &Value) -> reqwest::Response {
    service
        .post("/v1/jobs")
        .json(body)
        .send()
        .await
        .expect("submit")
}

pub(crate) async fn submit_ok(service: &Service, body: &Value) -> Value {
    let response = submit(service, body).await;
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_string());
    let job: Value = response.json().await.expect("job JSON");
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    assert_eq!(
        location.as_deref(),
        Some(&*format!("/v1/jobs/{}", job["id"].as_str().unwrap()))
    );
    assert_eq!(job["state"], "queued");
    job
}

pub(crate) fn worker(service: &Service) -> Worker {
    Worker::new(
        service.store().clone(),
        service.state.tables.clone(),
        Arc::clone(&service.state.metrics),
        WorkerSettings {
            worker_id: "api-test-worker".to_string(),
            slots: 1,
            threads_per_job: 1,
            lease: Duration::from_secs(30),
            tenant_max_running: 0,
            deadline: Duration::from_secs(60),
            poll_interval: Duration::from_millis(100),
            memory_budget: 0,
        },
    )
    .expect("worker pool")
}

/// Submits `body`, runs it with one worker step, checks that it succeeded and returns its id and report.
pub(crate) async fn run_to_success(service: &Service, body: &Value) -> (String, Value) {
    let job = submit_ok(service, body).await;
    worker(service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap().to_string();
    let state = get_json(service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(state["state"], "succeeded", "{state}");
    let report = get_json(service, &format!("/v1/jobs/{job_id}/result")).await;
    (job_id, report)
}

pub(crate) async fn get_json(service: &Service, path: &str) -> Value {
    let response = service.get(path).send().await.expect("GET");
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.expect("JSON")
}

/// Three independent mistakes in one spec: the problem document gives the first as its code and pointer,
/// and `errors[]` lists all three with leaf pointers; nothing is queued.
async fn independent_mistakes_come_back_together(service: Service) {
    let id = toy_dataset(&service).await;
    let mut body = toy_spec(&id, 2);
    body["attributes"]["age"] = json!({"role": "quasi_identifier"});
    body["privacy_models"][0]["k"] = json!(0);
    body["suppression_limit"] = json!(1.5);
    let problem = expect_problem(submit(&service, &body).await, 422, "missing_hierarchy").await;
    assert_eq!(problem["pointer"], "/attributes/age/hierarchy", "{problem}");
    let listed: Vec<(&str, &str)> = problem["errors"]
        .as_array()
        .expect("errors[]")
        .iter()
        .map(|e| {
            (
                e["code"].as_str().expect("code"),
                e["pointer"].as_str().expect("pointer"),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("missing_hierarchy", "/attributes/age/hierarchy"),
            ("invalid_k", "/privacy_models/0/k"),
            ("invalid_suppression_limit", "/suppression_limit"),
        ],
        "{problem}"
    );
    let jobs = listed_jobs(&service).await;
    assert_eq!(jobs["items"].as_array().map(Vec::len), Some(0), "{jobs}");
}

async fn validation_errors_carry_pointers(service: Service) {
    let id = toy_dataset(&service).await;
    let valid = toy_spec(&id, 2);
    let case = |edit: &dyn Fn(&mut Value)| {
        let mut body = valid.clone();
        edit(&mut body);
        body
    };
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            case(&|b| {
                b["attributes"]["agee"] = b["attributes"]["age"].take();
                b["attributes"].as_object_mut().unwrap().remove("age");
            }),
            422,
            "unknown_column",
            "/attributes/agee",
        ),
        (
            case(&|b| b["attributes"]["age"] = json!({"role": "quasi_identifier"})),
            422,
            "missing_hierarchy",
            "/attributes/age/hierarchy",
        ),
        (
            case(&|b| b["attributes"]["gender"]["hierarchy"] = json!({"levels": [["male", "*"]]})),
            422,
            "uncovered_values",
            "/attributes/gender/hierarchy",
        ),
        (
            case(&|b| b["privacy_models"][0]["k"] = json!(0)),
            422,
            "invalid_k",
            "/privacy_models/0/k",
        ),
        (
            case(&|b| b["privacy_models"][0]["k"] = json!(8)),
            422,
            "k_exceeds_rows",
            "/privacy_models/0/k",
        ),
        (
            case(&|b| b["suppression_limit"] = json!(1.5)),
            422,
            "invalid_suppression_limit",
            "/suppression_limit",
        ),
        (
            case(&|b| b["algorithm"] = json!({"type": "simulated_annealing"})),
            422,
            "invalid_spec",
            "/algorithm/type",
        ),
        (
            case(&|b| b["algorithm"] = json!({"type": "lightning", "time_limit_ms": 0})),
            422,
            "invalid_parameter",
            "/algorithm/time_limit_ms",
        ),
        (
            // the service's job deadline is an hour: the search would never publish its best
            case(&|b| b["algorithm"] = json!({"type": "genetic", "time_limit_ms": 3_600_000})),
            422,
            "invalid_parameter",
            "/algorithm/time_limit_ms",
        ),
        (
            case(&|b| b["algorithm"] = json!({"type": "genetic", "generations": 0})),
            422,
            "invalid_parameter",
            "/algorithm/generations",
        ),
        (
            case(&|b| b["metric"] = json!("happiness")),
            422,
            "invalid_spec",
            "/metric",
        ),
        (
            case(&|b| {
                b["attributes"].as_object_mut().unwrap().remove("zipcode");
            }),
            422,
            "undeclared_column",
            "/attributes",
        ),
        (
            case(&|b| {
                b["attributes"]["age"]["hierarchy"] =
                    json!({"id": "00000000-0000-4000-8000-000000000000"})
            }),
            422,
            "unknown_hierarchy",
            "/attributes/age/hierarchy/id",
        ),
        (
            case(&|b| b["dataset_id"] = json!("00000000-0000-4000-8000-000000000000")),
            422,
            "unknown_dataset",
            "/dataset_id",
        ),
        (
            case(&|b| b["csv"] = json!({"delimiter": ","})),
            422,
            "invalid_delimiter",
            "/csv/delimiter",
        ),
        (
            case(&|b| b["risk"] = json!({"threshold": 0})),
            422,
            "invalid_threshold",
            "/risk/threshold",
        ),
        (
            case(&|b| b["risk"] = json!({"population_size": 3})),
            422,
            "population_too_small",
            "/risk/population_size",
        ),
    ];
    for (body, status, code, pointer) in cases {
        let problem = expect_problem(submit(&service, &body).await, status, code).await;
        assert_eq!(problem["pointer"], pointer, "{problem}");
    }

    // malformed JSON, a non-object, and a wrong content type
    let response = service
        .post("/v1/jobs")
        .header("content-type", "application/json")
        .body("{\"dataset_id\": ")
        .send()
        .await
        .unwrap();
    expect_problem(response, 400, "malformed_json").await;
    let response = service
        .post("/v1/jobs")
        .header("content-type", "application/json")
        .body("[1, 2]")
        .send()
        .await
        .unwrap();
    expect_problem(response, 422, "invalid_spec").await;
    let response = service
        .post("/v1/jobs")
        .header("content-type", "text/plain")
        .body(valid.to_string())
        .send()
        .await
        .unwrap();
    expect_problem(response, 415, "unsupported_media_type").await;

    // nothing was queued by any of these
    let list = get_json(&service, "/v1/jobs").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 0);
}

async fn idempotency_keys_make_retries_safe(service: Service) {
    let id = toy_dataset(&service).await;
    let body = toy_spec(&id, 2);
    let send = |body: Value, key: &'static str| {
        service
            .post("/v1/jobs")
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let first: Value = send(body.clone(), "etl-run-1")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let retry = send(body.clone(), "etl-run-1").await.unwrap();
    assert_eq!(retry.status(), StatusCode::ACCEPTED);
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    let retry: Value = retry.json().await.unwrap();
    assert_eq!(first["id"], retry["id"]);

    // the same document with another key order and formatting is the same request
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&body).unwrap()).unwrap();
    let again: Value = send(reordered, "etl-run-1")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first["id"], again["id"]);

    let mut other = body.clone();
    other["privacy_models"][0]["k"] = json!(3);
    expect_problem(
        send(other.clone(), "etl-run-1").await.unwrap(),
        409,
        "idempotency_conflict",
    )
    .await;
    // another key is another job
    let second: Value = send(other, "etl-run-2")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_ne!(first["id"], second["id"]);
    // keys are per tenant: beta's identical key does not see alpha's job (its dataset is alpha's: 422)
    let response = service
        .client
        .post(service.url("/v1/jobs"))
        .bearer_auth(&service.other_key)
        .header("idempotency-key", "etl-run-1")
        .json(&body)
        .send()
        .await
        .unwrap();
    expect_problem(response, 422, "unknown_dataset").await;
    let list = get_json(&service, "/v1/jobs").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
}

async fn jobs_are_read_listed_and_paginated(service: Service) {
    let first = toy_dataset(&service).await;
    let second = toy_dataset(&service).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let dataset = if i % 2 == 0 { &first } else { &second };
        ids.push(submit_ok(&service, &toy_spec(dataset, 2)).await["id"].clone());
    }
    let job = get_json(&service, &format!("/v1/jobs/{}", ids[0].as_str().unwrap())).await;
    assert!(job.get("spec").is_none(), "status reads leave the spec out");
    let job = get_json(
        &service,
        &format!("/v1/jobs/{}?include=spec", ids[0].as_str().unwrap()),
    )
    .await;
    assert_eq!(job["id"], ids[0]);
    assert_eq!(job["dataset_id"], first.as_str());
    assert_eq!(job["attempt"], 0);
    assert_eq!(job["spec"]["privacy_models"][0]["k"], 2);
    assert!(job["spec"].get("dataset_id").is_none());
    assert!(job["created_at"].as_str().unwrap().ends_with('Z'));

    // pages of 2, newest first, each job exactly once
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = "/v1/jobs?limit=2".to_string();
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = get_json(&service, &path).await;
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 2);
        seen.extend(items.iter().map(|j| j["id"].clone()));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let mut expected = ids.clone();
    expected.reverse();
    assert_eq!(seen, expected);

    // filters
    let by_dataset = get_json(&service, &format!("/v1/jobs?dataset_id={second}")).await;
    assert_eq!(by_dataset["items"].as_array().unwrap().len(), 2);
    let queued = get_json(&service, "/v1/jobs?state=queued").await;
    assert_eq!(queued["items"].as_array().unwrap().len(), 5);
    let running = get_json(&service, "/v1/jobs?state=running").await;
    assert_eq!(running["items"].as_array().unwrap().len(), 0);

    for bad in [
        "/v1/jobs?state=sleeping",
        "/v1/jobs?limit=0",
        "/v1/jobs?limit=501",
        "/v1/jobs?cursor=nonsense",
        "/v1/jobs?dataset_id=42",
        "/v1/jobs?colour=blue",
    ] {
        let response = service.get(bad).send().await.unwrap();
        expect_problem(response, 400, "invalid_query").await;
    }
    for missing in [
        "/v1/jobs/00000000-0000-4000-8000-000000000000",
        "/v1/jobs/not-a-uuid",
    ] {
        expect_problem(service.get(missing).send().await.unwrap(), 404, "not_found").await;
    }
}

async fn queued_jobs_cancel_at_once(service: Service) {
    let id = toy_dataset(&service).await;
    let job = submit_ok(&service, &toy_spec(&id, 2)).await;
    let path = format!("/v1/jobs/{}/cancel", job["id"].as_str().unwrap());
    let response = service.post(&path).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let cancelled: Value = response.json().await.unwrap();
    assert_eq!(cancelled["state"], "cancelled");
    assert!(cancelled["finished_at"].is_string());
    // again: a no-op
    let again: Value = service
        .post(&path)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(again["state"], "cancelled");
    // a worker finds nothing to run
    assert!(worker(&service).run_once().await.unwrap().is_none());
    // no result for a cancelled job
    let result = service
        .get(&format!("/v1/jobs/{}/result", job["id"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(result, 409, "job_not_succeeded").await;
    assert_eq!(problem["detail"], "the job was cancelled: it has no result");
}

async fn tenants_see_only_their_jobs(service: Service) {
    let id = toy_dataset(&service).await;
    let job = submit_ok(&service, &toy_spec(&id, 2)).await;
    let job_id = job["id"].as_str().unwrap();
    let beta = |method: reqwest::Method, path: String| {
        service
            .client
            .request(method, service.url(&path))
            .bearer_auth(&service.other_key)
            .send()
    };
    for (method, path) in [
        (reqwest::Method::GET, format!("/v1/jobs/{job_id}")),
        (reqwest::Method::POST, format!("/v1/jobs/{job_id}/cancel")),
        (reqwest::Method::GET, format!("/v1/jobs/{job_id}/result")),
        (reqwest::Method::GET, format!("/v1/jobs/{job_id}/output")),
    ] {
        let response = beta(method.clone(), path.clone()).await.unwrap();
        let problem = expect_problem(response, 404, "not_found").await;
        // exactly the answer an unknown id gets
        let unknown = path.replace(job_id, "00000000-0000-4000-8000-000000000000");
        let unknown = expect_problem(
            service.request(method, &unknown).send().await.unwrap(),
            404,
            "not_found",
        )
        .await;
        assert_eq!(problem["detail"], unknown["detail"]);
    }
    let list: Value = beta(reqwest::Method::GET, "/v1/jobs".into())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 0);
    // alpha's job was not cancelled by beta's attempt
    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["state"], "queued");
    assert_eq!(job["cancel_requested"], false);
}

/// Lightning and the genetic search run through the worker with the job's clock: on the toy table
/// Lightning ends before its limit and proves its result (`exact`, the exact search's node); both
/// reports name the search that ran, and both outputs meet k with no less loss than the optimum.
async fn anytime_searches_run_in_the_worker(service: Service) {
    let id = toy_dataset(&service).await;
    let flash = submit_ok(&service, &toy_spec(&id, 2)).await;
    let mut lightning = toy_spec(&id, 2);
    lightning["algorithm"] = json!({"type": "lightning", "time_limit_ms": 60_000});
    let lightning = submit_ok(&service, &lightning).await;
    let mut genetic = toy_spec(&id, 2);
    genetic["algorithm"] =
        json!({"type": "genetic", "time_limit_ms": 60_000, "seed": 3, "generations": 2});
    let genetic = submit_ok(&service, &genetic).await;
    for _ in 0..3 {
        worker(&service).run_once().await.unwrap();
    }
    let report = |job: &Value| {
        let path = format!("/v1/jobs/{}/result", job["id"].as_str().unwrap());
        let service = &service;
        async move { get_json(service, &path).await }
    };
    let (flash, lightning, genetic) = (
        report(&flash).await,
        report(&lightning).await,
        report(&genetic).await,
    );
    assert_eq!(lightning["search"]["algorithm"], "lightning", "{lightning}");
    assert_eq!(lightning["search"]["exact"], true);
    assert!(flash["transformation"].is_object(), "{flash}");
    assert_eq!(lightning["transformation"], flash["transformation"]);
    assert_eq!(genetic["search"]["algorithm"], "genetic", "{genetic}");
    // the published tables meet k = 2, as the report's independent measure of the output says
    for report in [&lightning, &genetic] {
        assert!(report["achieved"]["k"].as_u64().unwrap() >= 2, "{report}");
        assert!(report["loss"].as_f64().unwrap() >= flash["loss"].as_f64().unwrap());
    }
}

async fn lifecycle_result_and_download(service: Service) {
    let id = toy_dataset(&service).await;
    let job = submit_ok(&service, &toy_spec(&id, 2)).await;
    let job_id = job["id"].as_str().unwrap().to_string();
    let early = service
        .get(&format!("/v1/jobs/{job_id}/output"))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(early, 409, "job_not_succeeded").await;
    assert_eq!(
        problem["detail"],
        "the job is queued: its result exists once it has succeeded"
    );

    let summary = worker(&service).run_once().await.unwrap();
    assert!(summary.is_some());
    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["attempt"], 1);
    assert!(job["finished_at"].is_string());
    assert!(job["failure"].is_null());

    let report = get_json(&service, &format!("/v1/jobs/{job_id}/result")).await;
    assert_eq!(report["records"], 7);
    assert_eq!(report["search"]["algorithm"], "flash");
    // the stored report carries the risk profiles; published classes have at least k = 2 records
    assert_eq!(report["risk"]["before"]["records"], 7);
    assert_eq!(report["risk"]["after"]["records"], 7);
    let highest = report["risk"]["after"]["prosecutor"]["highest"]
        .as_f64()
        .unwrap();
    assert!(highest > 0.0 && highest <= 0.5, "{report}");

    let response = service
        .get(&format!("/v1/jobs/{job_id}/output"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    let csv = response.bytes().await.unwrap();
    assert_eq!(headers["content-type"], "text/csv; charset=utf-8");
    // the dataset's name and the job's short id: each job of a dataset downloads to its own file
    assert_eq!(
        headers["content-disposition"],
        format!(
            "attachment; filename=\"toy-{}-anonymized.csv\"",
            &job_id[..8]
        )
        .as_str()
    );
    assert_eq!(headers["x-checksum-sha256"], sha256_hex(&csv).as_str());
    let text = std::str::from_utf8(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("age;gender;zipcode"));
    let records: Vec<&str> = lines.collect();
    assert_eq!(records.len(), 7);
    for record in &records {
        let same = records.iter().filter(|r| *r == record).count();
        assert!(same >= 2, "class of size {same} in a 2-anonymous output");
    }

    // gzip on request; the checksum is the uncompressed CSV's
    let response = service
        .get(&format!("/v1/jobs/{job_id}/output"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-encoding"], "gzip");
    assert_eq!(
        response.headers()["x-checksum-sha256"],
        sha256_hex(&csv).as_str()
    );
    let compressed = response.bytes().await.unwrap();
    let mut decoder = flate2::read::GzDecoder::new(&compressed[..]);
    let mut decompressed = Vec::new();
    std::io::Read::read_to_end(&mut decoder, &mut decompressed).unwrap();
    assert_eq!(decompressed, csv.to_vec());

    // cancelling a finished job is a conflict
    let response = service
        .post(&format!("/v1/jobs/{job_id}/cancel"))
        .send()
        .await
        .unwrap();
    expect_problem(response, 409, "conflict").await;
}

async fn failed_jobs_say_why(service: Service) {
    let id = toy_dataset(&service).await;
    // 7-anonymity of 7 records without suppression: only the top node works; exhaustive with a tiny
    // node limit refuses the lattice at run time
    let mut body = toy_spec(&id, 2);
    body["algorithm"] = json!({"type": "exhaustive", "max_nodes": 2});
    let job = submit_ok(&service, &body).await;
    worker(&service).run_once().await.unwrap();
    let job = get_json(
        &service,
        &format!("/v1/jobs/{}", job["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert_eq!(job["failure"]["code"], "lattice_too_large", "{job}");
    let message = job["failure"]["message"].as_str().unwrap();
    assert!(message.contains("exhaustive"), "{message}");
    for value in ["81667", "female", "34"] {
        assert!(!message.contains(value), "{message}");
    }
}

async fn deleting_a_dataset_removes_its_jobs(service: Service) {
    let id = toy_dataset(&service).await;
    let job = submit_ok(&service, &toy_spec(&id, 2)).await;
    worker(&service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap();
    let response = service
        .delete(&format!("/v1/datasets/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    for path in [
        format!("/v1/jobs/{job_id}"),
        format!("/v1/jobs/{job_id}/output"),
    ] {
        expect_problem(service.get(&path).send().await.unwrap(), 404, "not_found").await;
    }
}

async fn stored_hierarchies_are_used_by_id(service: Service) {
    let id = toy_dataset(&service).await;
    let response = service
        .post("/v1/hierarchies")
        .query(&[("name", "zipcode")])
        .header("content-type", "text/csv")
        .body(hierarchy_text("zipcode"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let hierarchy: Value = response.json().await.unwrap();
    let mut body = toy_spec(&id, 2);
    body["attributes"]["zipcode"]["hierarchy"] = json!({"id": hierarchy["id"]});
    let job = submit_ok(&service, &body).await;
    worker(&service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap();
    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let inline = submit_ok(&service, &toy_spec(&id, 2)).await;
    worker(&service).run_once().await.unwrap();
    // the same hierarchy by id or inline gives the same output
    let output = |job: String| {
        let service = service.clone();
        async move {
            service
                .get(&format!("/v1/jobs/{job}/output"))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
        }
    };
    assert_eq!(
        output(job_id.to_string()).await,
        output(inline["id"].as_str().unwrap().to_string()).await
    );
    // another tenant cannot use the id
    let response = service
        .client
        .post(service.url("/v1/hierarchies"))
        .bearer_auth(&service.other_key)
        .header("content-type", "text/csv")
        .body("a;*\n")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let beta_dataset = service
        .client
        .post(service.url("/v1/datasets?name=toy&delimiter=;"))
        .bearer_auth(&service.other_key)
        .header("content-type", "text/csv")
        .body(toy_csv())
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let body = {
        let mut b = toy_spec(beta_dataset["id"].as_str().unwrap(), 2);
        b["attributes"]["zipcode"]["hierarchy"] = json!({"id": hierarchy["id"]});
        b
    };
    let response = service
        .client
        .post(service.url("/v1/jobs"))
        .bearer_auth(&service.other_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, 422, "unknown_hierarchy").await;
    assert_eq!(problem["pointer"], "/attributes/zipcode/hierarchy/id");
}

async fn l_diversity_jobs_publish_diverse_classes(service: Service) {
    let csv =
        b"zip;diagnosis\n13053;flu\n13053;flu\n13068;cancer\n13068;flu\n14850;cancer\n14853;flu\n";
    let dataset = service.upload_with("clinic", csv, ";").await;
    let body = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "zip": {"role": "quasi_identifier", "hierarchy": {"levels": [
                ["13053", "130**", "*"], ["13068", "130**", "*"],
                ["14850", "148**", "*"], ["14853", "148**", "*"]
            ]}},
            "diagnosis": {"role": "sensitive"},
        },
        "privacy_models": [
            {"type": "k_anonymity", "k": 2},
            {"type": "distinct_l_diversity", "attribute": "diagnosis", "l": 2}
        ],
        "algorithm": {"type": "flash"},
    });
    let job = submit_ok(&service, &body).await;
    worker(&service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap();
    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let csv = download(&service, job_id).await;
    let mut classes: std::collections::HashMap<&str, std::collections::HashSet<&str>> =
        Default::default();
    for line in csv.lines().skip(1) {
        let (zip, diagnosis) = line.split_once(';').unwrap();
        classes.entry(zip).or_default().insert(diagnosis);
    }
    assert!(!classes.is_empty());
    for (zip, diagnoses) in &classes {
        assert!(diagnoses.len() >= 2, "class {zip} is not 2-diverse");
    }
    // the attribute must be declared sensitive
    let mut wrong = body.clone();
    wrong["attributes"]["diagnosis"] = json!({"role": "insensitive"});
    let problem = expect_problem(submit(&service, &wrong).await, 422, "not_sensitive").await;
    assert_eq!(problem["pointer"], "/privacy_models/1/attribute");
}

/// l-categorical diversity (Hsu 2008): at the original zip codes the class {TB, hepatitis} is covered by
/// one category, so the job generalizes to 130**/148**; a category set that leaves a value uncovered is
/// refused with its pointer and without naming the value.
async fn categorical_jobs_publish_covered_classes(service: Service) {
    let csv = b"zip;diagnosis\n13053;cold\n13053;cancer\n13068;TB\n13068;hepatitis\n\
                14850;AIDS\n14850;flu\n14853;cancer\n14853;TB\n";
    let dataset = service.upload_with("clinic", csv, ";").await;
    let body = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "zip": {"role": "quasi_identifier", "hierarchy": {"levels": [
                ["13053", "130**", "*"], ["13068", "130**", "*"],
                ["14850", "148**", "*"], ["14853", "148**", "*"]
            ]}},
            "diagnosis": {"role": "sensitive"},
        },
        "privacy_models": [
            {"type": "k_anonymity", "k": 2},
            {"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 2,
             "categories": {"terminal": ["cancer", "AIDS"], "infectious": ["AIDS", "TB", "hepatitis"]},
             "dont_care": ["cold", "flu"]}
        ],
        "algorithm": {"type": "flash"},
    });
    let job = submit_ok(&service, &body).await;
    worker(&service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap();
    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let csv = download(&service, job_id).await;
    let mut classes: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        Default::default();
    for line in csv.lines().skip(1) {
        let (zip, diagnosis) = line.split_once(';').unwrap();
        classes.entry(zip).or_default().insert(diagnosis);
    }
    assert_eq!(
        classes.keys().copied().collect::<Vec<_>>(),
        ["130**", "148**"],
        "{csv}"
    );
    let result = get_json(&service, &format!("/v1/jobs/{job_id}/result")).await;
    assert!(
        result
            .to_string()
            .contains("2-categorical-diversity on 'diagnosis'"),
        "{result}"
    );
    // hepatitis in no category and not don't-care
    let mut wrong = body.clone();
    wrong["privacy_models"][1]["categories"]["infectious"] = json!(["AIDS", "TB"]);
    let problem = expect_problem(submit(&service, &wrong).await, 422, "uncovered_values").await;
    assert_eq!(problem["pointer"], "/privacy_models/1/categories");
    assert!(!problem.to_string().contains("hepatitis"), "{problem}");
    // don't-care values may not sit in a category
    let mut wrong = body.clone();
    wrong["privacy_models"][1]["dont_care"] = json!(["cold", "flu", "TB"]);
    let problem = expect_problem(submit(&service, &wrong).await, 422, "dont_care_overlap").await;
    assert_eq!(
        problem["pointer"],
        "/privacy_models/1/categories/infectious"
    );
}

/// Mondrian over the API: a numeric age without a hierarchy is published as ranges, the report carries
/// the recoding and no lattice figures, and a spec error of local recoding is a 422 with its pointer.
async fn local_recoding_jobs_publish_ranges(service: Service) {
    let csv = b"age;zip;diagnosis\n21;13053;flu\n23;13053;cold\n25;13068;cancer\n28;13068;flu\n\
                41;14850;cancer\n44;14853;flu\n47;14850;cold\n49;14853;flu\n";
    let dataset = service.upload_with("ages", csv, ";").await;
    let body = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "age": {"role": "quasi_identifier", "data_type": "numeric"},
            "zip": {"role": "quasi_identifier", "hierarchy": {"levels": [
                ["13053", "130**", "*"], ["13068", "130**", "*"],
                ["14850", "148**", "*"], ["14853", "148**", "*"]
            ]}},
            "diagnosis": {"role": "sensitive"},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "algorithm": {"type": "mondrian"},
    });
    let job = submit_ok(&service, &body).await;
    worker(&service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap();
    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let report = get_json(&service, &format!("/v1/jobs/{job_id}/result")).await;
    assert_eq!(report["recoding"]["algorithm"], "mondrian", "{report}");
    assert!(report.get("transformation").is_none());
    assert!(report["recoding"]["groups"].as_u64().unwrap() >= 2);
    let csv = download(&service, job_id).await;
    let mut classes: std::collections::HashMap<(String, String), u32> = Default::default();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(';').collect();
        let age = cells[0];
        assert!(age.starts_with('[') && age.ends_with(']'), "{csv}");
        *classes
            .entry((age.to_string(), cells[1].to_string()))
            .or_default() += 1;
    }
    assert!(classes.len() >= 2, "{csv}");
    assert!(classes.values().all(|&n| n >= 2), "{csv}");
    let mut wrong = body.clone();
    wrong["attributes"]["zip"] = json!({"role": "quasi_identifier", "data_type": "numeric"});
    wrong["attributes"]["diagnosis"] = json!({"role": "quasi_identifier"});
    let problem = expect_problem(submit(&service, &wrong).await, 422, "not_numeric").await;
    assert_eq!(problem["pointer"], "/attributes/diagnosis");
}

/// Uploads 40 patients: a record number (near-unique), an age of 7 values and a sex taking the two
/// `sexes` in turn.
pub(crate) async fn upload_patients(service: &Service, sexes: [&str; 2]) -> Value {
    let mut csv = String::from("mrn,age,sex\n");
    for i in 0..40 {
        csv.push_str(&format!(
            "MRN{:05},{},{}\n",
            7919 * i % 100_000,
            20 + i % 7,
            sexes[i % 2]
        ));
    }
    service.upload_with("patients", csv.as_bytes(), ",").await
}

/// 2-anonymity of the patients over age (5-year intervals) and sex, the record number published as it is.
pub(crate) fn patients_spec(dataset: &Value) -> Value {
    json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "mrn": {"role": "insensitive"},
            "age": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "interval", "width": 5, "fanouts": [2]}}},
            "sex": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "categories", "levels": []}}},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "algorithm": {"type": "flash"},
    })
}

/// The anonymized CSV of a succeeded job.
pub(crate) async fn download(service: &Service, job_id: &str) -> String {
    service
        .get(&format!("/v1/jobs/{job_id}/output"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A job whose hierarchies come from builders runs through the service, and its report warns about a
/// record number published unchanged (`near_unique_column`), without naming any of its values.
async fn builders_and_warnings_reach_the_report(service: Service) {
    let dataset = upload_patients(&service, ["F", "M"]).await;
    let spec = patients_spec(&dataset);
    let (_, report) = run_to_success(&service, &spec).await;
    let warnings = report["warnings"].as_array().expect("warnings");
    let near_unique: Vec<&Value> = warnings
        .iter()
        .filter(|w| w["code"] == "near_unique_column")
        .collect();
    assert_eq!(near_unique.len(), 1, "{report}");
    assert_eq!(near_unique[0]["column"], "mrn");
    assert!(
        !report.to_string().contains("MRN0"),
        "a value in the report"
    );
    assert_eq!(report["fully_generalized_records"], 0);
    // a builder that cannot place a value is refused at submission with its code and pointer
    let mut bad = spec.clone();
    bad["attributes"]["sex"]["hierarchy"] = json!({"builder": {"type": "interval", "width": 5}});
    let response = service.post("/v1/jobs").json(&bad).send().await.unwrap();
    let problem = expect_problem(response, 422, "uncovered_values").await;
    assert_eq!(
        problem["pointer"], "/attributes/sex/hierarchy/builder",
        "{problem}"
    );
}

/// A Windows-1252 upload (`?encoding=`) is published as UTF-8: the accented names of an insensitive
/// column come out intact. A job cannot ask to decode a stored dataset again.
async fn windows_1252_uploads_publish_utf8(service: Service) {
    let body = b"name;sex\nJos\xe9;M\nM\xfcller;M\nRen\xe9e;F\nZo\xeb;F\n".to_vec();
    let response = service
        .post_csv(&[("encoding", "windows-1252")], &body)
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let dataset: Value = response.json().await.unwrap();
    let mut spec = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "name": {"role": "insensitive"},
            "sex": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "categories", "levels": []}}},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
    });
    let (job_id, _) = run_to_success(&service, &spec).await;
    let output = download(&service, &job_id).await;
    for name in ["José", "Müller", "Renée", "Zoë"] {
        assert!(output.contains(name), "{name} missing from {output}");
    }
    spec["csv"] = json!({"encoding": "windows-1252"});
    let response = service.post("/v1/jobs").json(&spec).send().await.unwrap();
    expect_problem(response, 422, "invalid_encoding").await;
    // the service publishes UTF-8
    spec["csv"] = json!({"output_encoding": "windows-1252"});
    let response = service.post("/v1/jobs").json(&spec).send().await.unwrap();
    let problem = expect_problem(response, 422, "invalid_encoding").await;
    assert_eq!(problem["pointer"], "/csv/output_encoding");
    spec["csv"] = json!({"output_encoding": "utf-8"});
    submit_ok(&service, &spec).await;
}

/// `POST /v1/jobs/{id}/assessments` reads a succeeded job's stored output back and measures it against
/// the dataset: the loss measures are the report's (Mondrian ranges and a hierarchy; full-domain
/// labels). A queued job is 409, another tenant's job 404.
async fn published_outputs_assess_as_their_reports(service: Service) {
    let csv = b"age;zip;diagnosis\n21;13053;flu\n23;13053;cold\n25;13068;cancer\n28;13068;flu\n\
                41;14850;cancer\n44;14853;flu\n47;14850;cold\n49;14853;flu\n";
    let dataset = service.upload_with("ages", csv, ";").await;
    let zip = json!({"role": "quasi_identifier", "hierarchy": {"levels": [
        ["13053", "130**", "*"], ["13068", "130**", "*"],
        ["14850", "148**", "*"], ["14853", "148**", "*"]
    ]}});
    let mondrian = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "age": {"role": "quasi_identifier", "data_type": "numeric"},
            "zip": zip,
            "diagnosis": {"role": "sensitive"},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "algorithm": {"type": "mondrian"},
    });
    let flash = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "age": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "interval", "width": 10, "fanouts": [2]}}},
            "zip": zip,
            "diagnosis": {"role": "sensitive"},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "algorithm": {"type": "flash"},
    });
    for body in [mondrian, flash] {
        let (job_id, report) = run_to_success(&service, &body).await;
        let response = service
            .post(&format!("/v1/jobs/{job_id}/assessments"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let a: Value = response.json().await.unwrap();
        assert_eq!(a["records"], 8, "{a}");
        assert_eq!(a["pairing"], "order", "{a}");
        let (ours, theirs) = (&a["loss_measures"], &report["loss_measures"]);
        assert_eq!(ours["redactions"], theirs["redactions"], "{a}");
        assert_eq!(ours["tree"], theirs["tree"], "{a}");
        for measure in ["entropy", "monotone_entropy", "non_uniform_entropy"] {
            let (x, y) = (
                ours[measure].as_f64().unwrap(),
                theirs[measure].as_f64().unwrap(),
            );
            assert!((x - y).abs() < 1e-9, "{measure}: {x} against {y}");
        }
        assert_eq!(ours["volume_inflation"], theirs["volume_inflation"], "{a}");
        let other = service
            .client
            .post(service.url(&format!("/v1/jobs/{job_id}/assessments")))
            .bearer_auth(&service.other_key)
            .send()
            .await
            .unwrap();
        expect_problem(other, 404, "not_found").await;
    }
    let queued = submit_ok(
        &service,
        &json!({
            "dataset_id": dataset["id"],
            "attributes": {"age": {"role": "quasi_identifier", "data_type": "numeric"},
                           "zip": {"role": "insensitive"}, "diagnosis": {"role": "sensitive"}},
            "privacy_models": [{"type": "k_anonymity", "k": 2}],
            "algorithm": {"type": "mondrian"},
        }),
    )
    .await;
    let response = service
        .post(&format!(
            "/v1/jobs/{}/assessments",
            queued["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    expect_problem(response, 409, "job_not_succeeded").await;
}

/// `GET` of `path` with `If-None-Match: etag` (none when empty).
async fn get_if_none_match(service: &Service, path: &str, etag: &str) -> reqwest::Response {
    let mut request = service.get(path);
    if !etag.is_empty() {
        request = request.header("if-none-match", etag);
    }
    request.send().await.unwrap()
}

fn etag_of(response: &reqwest::Response) -> String {
    response.headers()["etag"].to_str().unwrap().to_string()
}

/// A polling client is told when to come back (`Retry-After` on the 202 and while the job is not done),
/// sees `done` and the links of the result and output once the job succeeded, and gets 304 Not Modified
/// for a job document, a report or an output it already has (the output's tag is its checksum).
async fn polling_is_conditional_and_says_when_to_come_back(service: Service) {
    let id = toy_dataset(&service).await;
    let response = submit(&service, &toy_spec(&id, 2)).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(response.headers().get("idempotent-replayed").is_none());
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let job: Value = response.json().await.unwrap();
    assert_eq!(job["done"], false);
    assert_eq!(job["links"], json!({"self": location}));

    let queued = get_if_none_match(&service, &location, "").await;
    assert_eq!(queued.status(), StatusCode::OK);
    assert_eq!(queued.headers()["retry-after"], "1");
    let queued_tag = etag_of(&queued);
    assert!(
        queued_tag.starts_with('"') && queued_tag.ends_with('"'),
        "{queued_tag}"
    );
    let unchanged = get_if_none_match(&service, &location, &queued_tag).await;
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(etag_of(&unchanged), queued_tag);
    assert_eq!(unchanged.headers()["retry-after"], "1");
    assert!(unchanged.bytes().await.unwrap().is_empty());

    worker(&service).run_once().await.unwrap();
    let done = get_if_none_match(&service, &location, &queued_tag).await;
    assert_eq!(done.status(), StatusCode::OK);
    assert!(done.headers().get("retry-after").is_none());
    let done_tag = etag_of(&done);
    assert_ne!(done_tag, queued_tag);
    let job: Value = done.json().await.unwrap();
    assert_eq!(job["state"], "succeeded");
    assert_eq!(job["done"], true);
    assert_eq!(
        job["links"],
        json!({
            "self": location,
            "result": format!("{location}/result"),
            "output": format!("{location}/output"),
        })
    );
    let listed = format!("W/{done_tag}, \"other\"");
    assert_eq!(
        get_if_none_match(&service, &location, &listed)
            .await
            .status(),
        StatusCode::NOT_MODIFIED
    );

    let result_path = format!("{location}/result");
    let result = get_if_none_match(&service, &result_path, "").await;
    let result_tag = etag_of(&result);
    assert_eq!(result.status(), StatusCode::OK);
    assert_eq!(
        get_if_none_match(&service, &result_path, &result_tag)
            .await
            .status(),
        StatusCode::NOT_MODIFIED
    );
    assert_eq!(
        get_if_none_match(&service, &result_path, "\"stale\"")
            .await
            .status(),
        StatusCode::OK
    );

    let output_path = format!("{location}/output");
    let output = get_if_none_match(&service, &output_path, "").await;
    let output_tag = etag_of(&output);
    let checksum = output.headers()["x-checksum-sha256"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(output_tag, format!("\"{checksum}\""));
    assert_eq!(sha256_hex(&output.bytes().await.unwrap()), checksum);
    let cached = get_if_none_match(&service, &output_path, &output_tag).await;
    assert_eq!(cached.status(), StatusCode::NOT_MODIFIED);
    assert!(cached.bytes().await.unwrap().is_empty());
    // gzip on the fly makes the tag weak; weak comparison still matches
    let gzipped = service
        .get(&output_path)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    assert_eq!(etag_of(&gzipped), format!("W/{output_tag}"));
    let cached = service
        .get(&output_path)
        .header("accept-encoding", "gzip")
        .header("if-none-match", format!("W/{output_tag}"))
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), StatusCode::NOT_MODIFIED);
    // the 304 carries the tag the 200 would: weak for a gzip client
    assert_eq!(etag_of(&cached), format!("W/{output_tag}"));
    // a problem of the compressed route stays plain and names its request
    let problem = service
        .get(&format!("{output_path}?fragment=2"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert!(problem.headers().get("content-encoding").is_none());
    expect_problem(problem, 404, "unknown_fragment").await;
}
