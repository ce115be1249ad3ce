//! `strict` jobs: warnings the input shows refuse the submission (422 `strict_warnings`, one problem per
//! warning, pointing at its column), and warnings of the finished run fail the job with the same code
//! and publish nothing; without `strict` the same jobs run and warn.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{
    get_json, patients_spec, run_to_success, submit_ok, toy_dataset, toy_spec, upload_patients,
    worker,
};

api_cases!(
    strict_submissions_refuse_what_the_input_shows,
    strict_jobs_fail_on_warnings_of_the_run,
);

async fn strict_submissions_refuse_what_the_input_shows(service: Service) {
    let dataset = upload_patients(&service, ["F", "*"]).await;
    let mut spec = patients_spec(&dataset);
    spec["strict"] = json!(true);
    let response = service.post("/v1/jobs").json(&spec).send().await.unwrap();
    let problem = expect_problem(response, 422, "strict_warnings").await;
    assert_eq!(problem["pointer"], "/attributes/mrn", "{problem}");
    let listed: Vec<(&str, &str)> = problem["errors"]
        .as_array()
        .expect("errors[]")
        .iter()
        .map(|e| (e["code"].as_str().unwrap(), e["pointer"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("strict_warnings", "/attributes/mrn"),
            ("strict_warnings", "/attributes/sex")
        ]
    );
    assert!(!problem.to_string().contains("MRN0"), "{problem}");
    assert!(get_json(&service, "/v1/jobs").await["items"]
        .as_array()
        .unwrap()
        .is_empty());
    // the same job without strict runs and warns
    let mut lenient = spec.clone();
    lenient["strict"] = json!(false);
    let (_, report) = run_to_success(&service, &lenient).await;
    let codes: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"near_unique_column") && codes.contains(&"suppression_marker_in_input")
    );
}

async fn strict_jobs_fail_on_warnings_of_the_run(service: Service) {
    let dataset = toy_dataset(&service).await;
    // k = 7 on 7 records: every quasi-identifier ends up `*`
    let mut spec = toy_spec(&dataset, 7);
    spec["strict"] = json!(true);
    let job = submit_ok(&service, &spec).await;
    worker(&service).run_once().await.unwrap();
    let id = job["id"].as_str().unwrap();
    let failed: Value = get_json(&service, &format!("/v1/jobs/{id}")).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert_eq!(failed["failure"]["code"], "strict_warnings");
    assert!(
        failed["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("fully_generalized"),
        "{failed}"
    );
    let output = service
        .get(&format!("/v1/jobs/{id}/output"))
        .send()
        .await
        .unwrap();
    assert_eq!(output.status(), StatusCode::CONFLICT);
    spec["strict"] = json!(false);
    let (_, report) = run_to_success(&service, &spec).await;
    assert!(report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "fully_generalized"));
}
