//! The resource API a dashboard needs: stored builders, hierarchy previews, hierarchies listed, read and
//! deleted (never while a live job uses them), jobs with names, labels, summaries and warnings, and
//! jobs deleted with their output.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{
    get_json, patients_spec, run_to_success, submit_ok, toy_dataset, toy_spec, upload_patients,
};

api_cases!(
    stored_builders_are_built_per_job,
    previews_count_values_and_records_per_label,
    hierarchies_are_listed_read_and_deleted,
    hierarchies_in_use_are_not_deleted,
    jobs_carry_names_labels_and_summaries,
    jobs_are_deleted_with_their_output,
);

async fn create_hierarchy(service: &Service, body: &Value) -> Value {
    let response = service
        .post("/v1/hierarchies")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let created: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created
}

async fn preview(service: &Service, body: &Value) -> reqwest::Response {
    service
        .post("/v1/hierarchies/preview")
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A builder stored once is built against the column of each job that names it; its parameters are
/// checked at upload and its view says what it is.
async fn stored_builders_are_built_per_job(service: Service) {
    let created = create_hierarchy(
        &service,
        &json!({"name": "age bands", "builder": {"type": "interval", "width": 10, "fanouts": [2]}}),
    )
    .await;
    assert_eq!(created["kind"], "builder");
    assert_eq!(created["level_count"], 4);
    assert_eq!(created["value_count"], Value::Null);
    let response = service
        .post("/v1/hierarchies")
        .json(&json!({"builder": {"type": "interval", "width": -1}}))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, 422, "invalid_hierarchy").await;
    assert_eq!(problem["pointer"], "/builder");

    let dataset = toy_dataset(&service).await;
    let mut spec = toy_spec(&dataset, 2);
    spec["attributes"]["age"]["hierarchy"] = json!({"id": created["id"]});
    let (_, report) = run_to_success(&service, &spec).await;
    assert!(report["achieved"]["k"].as_u64().unwrap() >= 2, "{report}");
    // the same builder cannot place the values of a text column: refused at submission at its pointer
    let mut bad = toy_spec(&dataset, 2);
    bad["attributes"]["gender"]["hierarchy"] = json!({"id": created["id"]});
    let response = service.post("/v1/jobs").json(&bad).send().await.unwrap();
    let problem = expect_problem(response, 422, "uncovered_values").await;
    assert_eq!(problem["pointer"], "/attributes/gender/hierarchy");
}

/// A preview lists, per level, the labels a column's values take with the values and records each
/// covers; unknown datasets and columns and uncovered values are coded errors.
async fn previews_count_values_and_records_per_label(service: Service) {
    let dataset = toy_dataset(&service).await;
    let body = json!({
        "dataset_id": dataset,
        "column": "gender",
        "hierarchy": {"levels": [["male", "*"], ["female", "*"], ["other", "*"]]},
    });
    let response = preview(&service, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let shown: Value = response.json().await.unwrap();
    assert_eq!(shown["records"], 7);
    assert_eq!(shown["value_count"], 2);
    assert_eq!(shown["level_count"], 2);
    let level0 = &shown["levels"][0];
    assert_eq!(level0["label_count"], 2, "{shown}");
    let records: u64 = level0["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["records"].as_u64().unwrap())
        .sum();
    assert_eq!(records, 7);
    assert_eq!(
        shown["levels"][1]["labels"],
        json!([{"label": "*", "values": 2, "records": 7}])
    );

    // a stored builder by id, with a label limit
    let stored =
        create_hierarchy(&service, &json!({"builder": {"type": "mask", "levels": 3}})).await;
    let response = preview(
        &service,
        &json!({"dataset_id": dataset, "column": "zipcode", "hierarchy": {"id": stored["id"]}, "max_labels": 1}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let shown: Value = response.json().await.unwrap();
    assert_eq!(shown["level_count"], 5, "{shown}");
    assert_eq!(shown["levels"][0]["truncated"], true);
    assert_eq!(shown["levels"][0]["labels"].as_array().unwrap().len(), 1);
    assert_eq!(shown["levels"][3]["labels"][0]["label"], "81***");

    let mut wrong = body.clone();
    wrong["column"] = json!("no-such-column");
    let problem = expect_problem(preview(&service, &wrong).await, 422, "unknown_column").await;
    assert_eq!(problem["pointer"], "/column");
    let mut wrong = body.clone();
    wrong["hierarchy"] = json!({"levels": [["male", "*"]]});
    let problem = expect_problem(preview(&service, &wrong).await, 422, "uncovered_values").await;
    assert_eq!(problem["pointer"], "/hierarchy");
    let mut wrong = body.clone();
    wrong["dataset_id"] = json!(uuid::Uuid::new_v4().to_string());
    expect_problem(preview(&service, &wrong).await, 422, "unknown_dataset").await;
    // another tenant's dataset is unknown too
    let response = service
        .client
        .post(service.url("/v1/hierarchies/preview"))
        .bearer_auth(&service.other_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    expect_problem(response, 422, "unknown_dataset").await;
}

/// Hierarchies are listed newest first with cursors, read with or without their document, and
/// deleted; another tenant's are 404.
async fn hierarchies_are_listed_read_and_deleted(service: Service) {
    let mut ids = Vec::new();
    for name in ["first", "second", "third"] {
        let created = create_hierarchy(
            &service,
            &json!({"name": name, "levels": [["a", "*"], ["b", "*"]]}),
        )
        .await;
        assert_eq!(created["kind"], "levels");
        assert_eq!(created["value_count"], 2);
        assert_eq!(created["warnings"], json!([]));
        ids.push(created["id"].as_str().unwrap().to_string());
        // distinct creation times order the list
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    // a repeated row is merged when stored, and the answer says so
    let repeated = create_hierarchy(
        &service,
        &json!({"levels": [["a", "*"], ["b", "*"], ["a", "*"]]}),
    )
    .await;
    assert_eq!(repeated["value_count"], 2);
    assert_eq!(repeated["warnings"][0]["code"], "repeated_hierarchy_rows");
    assert!(repeated["warnings"][0].get("column").is_none());
    let deleted = service
        .delete(&format!(
            "/v1/hierarchies/{}",
            repeated["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let page = get_json(&service, "/v1/hierarchies?limit=2").await;
    let names: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["third", "second"]);
    let cursor = page["next_cursor"].as_str().expect("a next page");
    let rest = get_json(
        &service,
        &format!("/v1/hierarchies?limit=2&cursor={cursor}"),
    )
    .await;
    assert_eq!(rest["items"][0]["name"], "first");
    assert_eq!(rest["next_cursor"], Value::Null);

    let one = get_json(&service, &format!("/v1/hierarchies/{}", ids[0])).await;
    assert_eq!(one["name"], "first");
    assert!(one.get("content").is_none());
    let with = get_json(
        &service,
        &format!("/v1/hierarchies/{}?include=content", ids[0]),
    )
    .await;
    assert_eq!(with["content"], json!({"levels": [["a", "*"], ["b", "*"]]}));

    let theirs = service
        .client
        .get(service.url(&format!("/v1/hierarchies/{}", ids[0])))
        .bearer_auth(&service.other_key)
        .send()
        .await
        .unwrap();
    expect_problem(theirs, 404, "not_found").await;
    let theirs = service
        .client
        .delete(service.url(&format!("/v1/hierarchies/{}", ids[0])))
        .bearer_auth(&service.other_key)
        .send()
        .await
        .unwrap();
    expect_problem(theirs, 404, "not_found").await;

    let deleted = service
        .delete(&format!("/v1/hierarchies/{}", ids[0]))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let gone = service
        .get(&format!("/v1/hierarchies/{}", ids[0]))
        .send()
        .await
        .unwrap();
    expect_problem(gone, 404, "not_found").await;
    let again = service
        .delete(&format!("/v1/hierarchies/{}", ids[0]))
        .send()
        .await
        .unwrap();
    expect_problem(again, 404, "not_found").await;
}

/// A hierarchy a queued job references is 409 `hierarchy_in_use` until the job is cancelled; one only
/// finished jobs used is deleted and their reports stay.
async fn hierarchies_in_use_are_not_deleted(service: Service) {
    let dataset = toy_dataset(&service).await;
    let stored = create_hierarchy(
        &service,
        &json!({"levels": [["male", "*"], ["female", "*"]]}),
    )
    .await;
    let id = stored["id"].as_str().unwrap();
    let mut spec = toy_spec(&dataset, 2);
    spec["attributes"]["gender"]["hierarchy"] = json!({"id": id});
    let queued = submit_ok(&service, &spec).await;
    let response = service
        .delete(&format!("/v1/hierarchies/{id}"))
        .send()
        .await
        .unwrap();
    expect_problem(response, 409, "hierarchy_in_use").await;
    let cancel = service
        .post(&format!(
            "/v1/jobs/{}/cancel",
            queued["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), StatusCode::ACCEPTED);

    let (finished, _) = run_to_success(&service, &spec).await;
    let response = service
        .delete(&format!("/v1/hierarchies/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    get_json(&service, &format!("/v1/jobs/{finished}/result")).await;

    // a job whose hierarchy is deleted between its validation and its insertion is not queued
    let store = service.store();
    let tenant = store
        .authenticate(&service.key)
        .await
        .unwrap()
        .unwrap()
        .tenant_id;
    let dataset_id = uuid::Uuid::parse_str(&dataset).unwrap();
    let gone = uuid::Uuid::parse_str(id).unwrap();
    let created = store
        .create_job_with(anonymizer::store::NewJob {
            tenant,
            dataset_id,
            spec_json: "{}",
            idempotency_key: None,
            request_hash: "h",
            name: None,
            labels: &[],
            hierarchy_ids: &[gone],
            summary_json: None,
            callback_url: None,
        })
        .await;
    assert!(
        matches!(
            created,
            Err(anonymizer::store::StoreError::Conflict(
                anonymizer::error_code::ErrorCode::UnknownHierarchy,
                _
            ))
        ),
        "{created:?}"
    );
    let listed = get_json(&service, "/v1/jobs?state=queued").await;
    assert!(listed["items"].as_array().unwrap().is_empty(), "{listed}");
}

/// A job's name and labels come back on every view, lists filter by label, and the summary says what
/// the job asked for and, once it succeeded, what it achieved; warnings are in the job view too.
async fn jobs_carry_names_labels_and_summaries(service: Service) {
    let dataset = upload_patients(&service, ["F", "M"]).await;
    let mut spec = patients_spec(&dataset);
    spec["name"] = json!("cardio export");
    spec["labels"] = json!(["study=cardio", "q3"]);
    let (job_id, report) = run_to_success(&service, &spec).await;
    let mut other = spec.clone();
    other["labels"] = json!(["q4"]);
    other.as_object_mut().unwrap().remove("name");
    submit_ok(&service, &other).await;

    let job = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(job["name"], "cardio export");
    assert_eq!(job["labels"], json!(["study=cardio", "q3"]));
    let summary = &job["summary"];
    assert_eq!(summary["dataset_name"], "patients");
    assert_eq!(summary["models"], json!(["k_anonymity"]));
    assert_eq!(summary["k"], 2);
    assert_eq!(summary["algorithm"], "flash");
    assert_eq!(summary["records"], 40);
    assert_eq!(summary["achieved_k"], report["achieved"]["k"]);
    assert_eq!(summary["suppressed_records"], report["suppressed_records"]);
    assert!(summary["duration_ms"].as_i64().unwrap() >= 0);
    assert_eq!(job["warnings"], report["warnings"]);
    assert_eq!(job["warnings"][0]["code"], "near_unique_column", "{job}");
    // the stored spec is the run's spec: name and labels are not part of it
    let with_spec = get_json(&service, &format!("/v1/jobs/{job_id}?include=spec")).await;
    assert!(with_spec["spec"].get("name").is_none());

    let labelled = get_json(&service, "/v1/jobs?label=study=cardio").await;
    let items = labelled["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], job_id.as_str());
    assert_eq!(items[0]["summary"]["achieved_k"], summary["achieved_k"]);
    let q4 = get_json(&service, "/v1/jobs?label=q4").await;
    assert_eq!(q4["items"].as_array().unwrap().len(), 1);
    assert_eq!(q4["items"][0]["name"], Value::Null);
    assert_eq!(q4["items"][0]["summary"]["achieved_k"], Value::Null);
    let none = get_json(&service, "/v1/jobs?label=absent").await;
    assert!(none["items"].as_array().unwrap().is_empty());
    let response = service
        .get("/v1/jobs?label=not%20a%20label")
        .send()
        .await
        .unwrap();
    expect_problem(response, 400, "invalid_query").await;

    let mut bad = spec.clone();
    bad["labels"] = json!(["fine", "not fine"]);
    let response = service.post("/v1/jobs").json(&bad).send().await.unwrap();
    let problem = expect_problem(response, 422, "invalid_spec").await;
    assert_eq!(problem["pointer"], "/labels/1");
    let mut bad = spec.clone();
    bad["name"] = json!(7);
    let response = service.post("/v1/jobs").json(&bad).send().await.unwrap();
    let problem = expect_problem(response, 422, "invalid_spec").await;
    assert_eq!(problem["pointer"], "/name");
}

/// DELETE removes a job with its report and output (204, then 404 everywhere); unknown and other
/// tenants' jobs are 404; a queued job is deleted too.
async fn jobs_are_deleted_with_their_output(service: Service) {
    let dataset = toy_dataset(&service).await;
    let (job_id, _) = run_to_success(&service, &toy_spec(&dataset, 2)).await;
    let theirs = service
        .client
        .delete(service.url(&format!("/v1/jobs/{job_id}")))
        .bearer_auth(&service.other_key)
        .send()
        .await
        .unwrap();
    expect_problem(theirs, 404, "not_found").await;
    let deleted = service
        .delete(&format!("/v1/jobs/{job_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    for path in ["", "/result", "/output"] {
        let response = service
            .get(&format!("/v1/jobs/{job_id}{path}"))
            .send()
            .await
            .unwrap();
        expect_problem(response, 404, "not_found").await;
    }
    let id = uuid::Uuid::parse_str(&job_id).unwrap();
    assert_eq!(service.store().job_output_chunk(id, 0).await.unwrap(), None);
    let queued = submit_ok(&service, &toy_spec(&dataset, 2)).await;
    let deleted = service
        .delete(&format!("/v1/jobs/{}", queued["id"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let listed = get_json(&service, "/v1/jobs").await;
    assert!(listed["items"].as_array().unwrap().is_empty(), "{listed}");
}
