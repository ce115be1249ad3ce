//! `POST /v1/datasets/{id}/proposal`: a hospital table's identifiers are proposed `identifying`, its
//! demographics quasi-identifiers with builders, and the proposed request runs as it is to an output
//! that is k-anonymous when counted here, independently of the engine.

use std::collections::HashMap;

use reqwest::StatusCode;
use serde_json::Value;

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::hospital::hospital_csv;
use crate::jobs::{download, get_json, submit_ok, worker};

api_cases!(a_proposal_runs_as_it_is_to_a_k_anonymous_output);

/// The smallest class of `csv` over `columns`, the all-`*` class (suppressed records) left out.
pub(crate) fn smallest_class(csv: &str, columns: &[&str]) -> usize {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at: Vec<usize> = columns
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .expect("published column")
        })
        .collect();
    let mut classes: HashMap<Vec<&str>, usize> = HashMap::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let key: Vec<&str> = at.iter().map(|&i| cells[i]).collect();
        if key.iter().all(|c| *c == "*") {
            continue;
        }
        *classes.entry(key).or_default() += 1;
    }
    classes.values().copied().min().unwrap_or(usize::MAX)
}

async fn a_proposal_runs_as_it_is_to_a_k_anonymous_output(service: Service) {
    let dataset = service
        .upload_with("admissions", hospital_csv().as_bytes(), ",")
        .await;
    let id = dataset["id"].as_str().unwrap();
    let response = service
        .post(&format!("/v1/datasets/{id}/proposal"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let proposal: Value = response.json().await.unwrap();
    let roles: Vec<(&str, &str)> = proposal["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            ("mrn", "identifying"),
            ("name", "identifying"),
            ("birth_date", "quasi_identifier"),
            ("zip", "quasi_identifier"),
            ("sex", "quasi_identifier"),
            ("diagnosis", "sensitive"),
        ]
    );
    assert!(
        !proposal.to_string().contains("Patient 1"),
        "a value leaked"
    );
    assert_eq!(proposal["spec"]["dataset_id"], id);
    assert_eq!(proposal["assessment"]["k"], 1);
    assert_eq!(proposal["expected"]["basis"], "trial");
    let k = proposal["spec"]["privacy_models"][0]["k"].as_u64().unwrap();
    assert_eq!(k, 5);

    let job = submit_ok(&service, &proposal["spec"]).await;
    worker(&service).run_once().await.unwrap();
    let job_id = job["id"].as_str().unwrap();
    let state = get_json(&service, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(state["state"], "succeeded", "{state}");
    let output = download(&service, job_id).await;
    assert!(!output.lines().next().unwrap().contains("mrn"));
    let smallest = smallest_class(&output, &["birth_date", "zip", "sex"]);
    assert!(smallest >= k as usize, "a class of {smallest}");
    assert_eq!(
        state["summary"]["achieved_k"],
        proposal["expected"]["trial"]["achieved_k"]
    );

    // another tenant's dataset is not found
    let theirs = service
        .client
        .post(service.url(&format!("/v1/datasets/{id}/proposal")))
        .bearer_auth(&service.other_key)
        .send()
        .await
        .unwrap();
    expect_problem(theirs, 404, "not_found").await;
}
