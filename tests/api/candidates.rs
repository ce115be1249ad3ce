//! `"candidates": N` and `POST /v1/jobs/{id}/publish` on both backends: the report lists the best
//! transformations with their losses, risk and Pareto fronts; publishing one creates a job whose
//! report and output are exactly those of a job submitted with that transformation fixed; the
//! request's mistakes are coded problems.

use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{get_json, submit, submit_ok, toy_dataset, toy_spec, worker};

api_cases!(
    candidates_are_listed_and_published,
    publish_requests_are_checked,
);

async fn output(service: &Service, job: &str) -> Vec<u8> {
    let response = service
        .get(&format!("/v1/jobs/{job}/output"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.bytes().await.unwrap().to_vec()
}

async fn publish(
    service: &Service,
    job: &str,
    body: &Value,
    key: Option<&str>,
) -> reqwest::Response {
    let mut request = service.post(&format!("/v1/jobs/{job}/publish")).json(body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    request.send().await.unwrap()
}

async fn candidates_are_listed_and_published(service: Service) {
    let dataset = toy_dataset(&service).await;
    let mut spec = toy_spec(&dataset, 2);
    spec["candidates"] = json!(4);
    let job = submit_ok(&service, &spec).await;
    let job = job["id"].as_str().unwrap().to_string();
    worker(&service).run_once().await.unwrap();
    let report = get_json(&service, &format!("/v1/jobs/{job}/result")).await;
    let section = &report["candidates"];
    assert_eq!(section["requested"], 4, "{report}");
    assert_eq!(section["exact"], true);
    let list = section["list"].as_array().unwrap();
    assert_eq!(list.len(), 4, "{section}");
    assert_eq!(list[0]["transformation"], report["transformation"]);
    assert_eq!(list[0]["loss"], report["loss"]);
    assert_eq!(list[0]["suppressed_records"], report["suppressed_records"]);
    assert_eq!(list[0]["risk"], report["risk"]["after"]["prosecutor"]);
    for (rank, pair) in list.windows(2).enumerate() {
        assert_eq!(pair[0]["rank"], rank + 1);
        assert!(
            pair[0]["loss"].as_f64() <= pair[1]["loss"].as_f64(),
            "{section}"
        );
        assert_ne!(pair[0]["transformation"], pair[1]["transformation"]);
    }
    for front in ["average_risk", "highest_risk"] {
        let ranks = section["pareto_front"][front].as_array().unwrap();
        // the cheapest candidate is on every front unless another as cheap is safer
        assert!(!ranks.is_empty() && ranks.iter().all(|r| (1..=4).contains(&r.as_u64().unwrap())));
    }

    // publish the third: the same table as a job with that transformation fixed
    let chosen = list[2]["transformation"].clone();
    let response = publish(
        &service,
        &job,
        &json!({"transformation": chosen, "name": "third"}),
        Some("publish-3"),
    )
    .await;
    assert_eq!(response.status(), 202);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let published: Value = response.json().await.unwrap();
    let published_id = published["id"].as_str().unwrap().to_string();
    assert_eq!(location, format!("/v1/jobs/{published_id}"));
    assert_eq!(published["name"], "third");
    assert_eq!(published["dataset_id"], dataset.as_str());
    // a retry with the same key is the same job
    let again: Value = publish(
        &service,
        &job,
        &json!({"transformation": chosen, "name": "third"}),
        Some("publish-3"),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(again["id"], published_id.as_str());
    let mut fixed = toy_spec(&dataset, 2);
    fixed["transformation"] = chosen.clone();
    let fixed = submit_ok(&service, &fixed).await;
    let fixed = fixed["id"].as_str().unwrap().to_string();
    worker(&service).run_once().await.unwrap();
    worker(&service).run_once().await.unwrap();
    let with_spec = get_json(&service, &format!("/v1/jobs/{published_id}?include=spec")).await;
    assert_eq!(with_spec["state"], "succeeded", "{with_spec}");
    assert_eq!(with_spec["spec"]["transformation"], chosen);
    assert!(with_spec["spec"].get("candidates").is_none());
    let republished = get_json(&service, &format!("/v1/jobs/{published_id}/result")).await;
    assert_eq!(republished["transformation"], chosen);
    assert_eq!(republished["loss"], list[2]["loss"]);
    assert_eq!(
        republished["suppressed_records"],
        list[2]["suppressed_records"]
    );
    assert_eq!(
        republished["equivalence_classes"],
        list[2]["equivalence_classes"]
    );
    assert_eq!(republished["risk"]["after"]["prosecutor"], list[2]["risk"]);
    assert!(republished.get("candidates").is_none());
    assert_eq!(
        output(&service, &published_id).await,
        output(&service, &fixed).await
    );
    assert_ne!(
        output(&service, &published_id).await,
        output(&service, &job).await
    );
}

async fn publish_requests_are_checked(service: Service) {
    let dataset = toy_dataset(&service).await;
    let queued = submit_ok(&service, &toy_spec(&dataset, 2)).await;
    let queued = queued["id"].as_str().unwrap().to_string();
    let body = json!({"transformation": {"age": 1, "gender": 0, "zipcode": 1}});
    // only a succeeded job's transformations are published
    let problem = expect_problem(
        publish(&service, &queued, &body, None).await,
        409,
        "job_not_succeeded",
    )
    .await;
    assert!(
        problem["detail"].as_str().unwrap().contains("queued"),
        "{problem}"
    );
    worker(&service).run_once().await.unwrap();
    let unknown = "00000000-0000-4000-8000-000000000000";
    let missing = expect_problem(
        publish(&service, unknown, &body, None).await,
        404,
        "not_found",
    )
    .await;
    // another tenant's job answers exactly as an unknown one
    let foreign = service
        .client
        .post(service.url(&format!("/v1/jobs/{queued}/publish")))
        .bearer_auth(&service.other_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let foreign = expect_problem(foreign, 404, "not_found").await;
    assert_eq!(foreign["detail"], missing["detail"]);
    // the same key with another transformation is a conflict
    let first = publish(&service, &queued, &body, Some("key-1")).await;
    assert_eq!(first.status(), 202);
    let other = json!({"transformation": {"age": 2, "gender": 0, "zipcode": 1}});
    expect_problem(
        publish(&service, &queued, &other, Some("key-1")).await,
        409,
        "idempotency_conflict",
    )
    .await;
    for (body, pointer) in [
        (json!({}), "/transformation"),
        (json!({"transformation": 2}), "/transformation"),
        (json!({"transformation": {}, "metric": "height"}), "/metric"),
    ] {
        let problem = expect_problem(
            publish(&service, &queued, &body, None).await,
            422,
            "invalid_spec",
        )
        .await;
        assert_eq!(problem["pointer"], pointer, "{problem}");
    }
    // the transformation is validated as a job's: a level above the hierarchy's top
    let problem = expect_problem(
        publish(
            &service,
            &queued,
            &json!({"transformation": {"age": 9, "gender": 0, "zipcode": 0}}),
            None,
        )
        .await,
        422,
        "invalid_parameter",
    )
    .await;
    assert!(problem.to_string().contains("/transformation"), "{problem}");
    // `candidates` itself: a count from 1 to 100, on a full-domain job
    for (n, code) in [(0, "invalid_parameter"), (101, "invalid_parameter")] {
        let mut spec = toy_spec(&dataset, 2);
        spec["candidates"] = json!(n);
        let problem = expect_problem(submit(&service, &spec).await, 422, code).await;
        assert_eq!(problem["pointer"], "/candidates", "{problem}");
    }
    let mut local = toy_spec(&dataset, 2);
    local["algorithm"] = json!({"type": "mondrian"});
    local["candidates"] = json!(3);
    for qi in ["age", "zipcode"] {
        local["attributes"][qi] = json!({"role": "quasi_identifier", "data_type": "numeric"});
    }
    local["attributes"]["gender"] = json!({"role": "quasi_identifier", "data_type": "ordinal"});
    let response = submit(&service, &local).await;
    let problem = expect_problem(response, 422, "unsupported_option").await;
    assert!(problem.to_string().contains("/candidates"), "{problem}");
    // a local recoding has no transformation to publish
    local.as_object_mut().unwrap().remove("candidates");
    let recoded = submit_ok(&service, &local).await;
    let recoded = recoded["id"].as_str().unwrap().to_string();
    worker(&service).run_once().await.unwrap();
    worker(&service).run_once().await.unwrap();
    let problem = expect_problem(
        publish(&service, &recoded, &body, None).await,
        422,
        "unsupported_option",
    )
    .await;
    assert!(problem.to_string().contains("/transformation"), "{problem}");
}
