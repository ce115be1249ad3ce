//! Pseudonyms through the service: a tenant's key is created by its first job with a `pseudonym`
//! operator, gives a value the same pseudonym in every job of the tenant and another one in any other
//! tenant's, is shown only by version and fingerprint, and after a rotation gives new pseudonyms.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{download, get_json, patients_spec, run_to_success, upload_patients, worker};

api_cases!(pseudonyms_link_within_a_tenant_only_and_change_with_the_key,);

/// The patients job with the record number published as a pseudonym.
fn pseudonym_spec(dataset: &Value) -> Value {
    let mut spec = patients_spec(dataset);
    spec["attributes"]["mrn"] = json!({"role": "identifying", "operator": {"type": "pseudonym"}});
    spec
}

/// The first column (the record number's pseudonym) of every published row.
fn first_column(csv: &str) -> Vec<String> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap().split(',').next(),
        Some("mrn"),
        "{csv}"
    );
    lines
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect()
}

/// Uploads the patients, submits the job, runs it and downloads its output, all with `key`.
async fn run_as(service: &Service, key: &str) -> (Value, Vec<String>) {
    let client = &service.client;
    let mut csv = String::from("mrn,age,sex\n");
    for i in 0..40 {
        csv.push_str(&format!(
            "MRN{:05},{},{}\n",
            7919 * i % 100_000,
            20 + i % 7,
            ["F", "M"][i % 2]
        ));
    }
    let dataset: Value = client
        .post(service.url("/v1/datasets?name=patients&delimiter=,"))
        .bearer_auth(key)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let job: Value = client
        .post(service.url("/v1/jobs"))
        .bearer_auth(key)
        .json(&pseudonym_spec(&dataset))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    worker(service).run_once().await.unwrap();
    let id = job["id"].as_str().unwrap();
    let get = |path: String| client.get(service.url(&path)).bearer_auth(key).send();
    let report: Value = get(format!("/v1/jobs/{id}/result"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let output = get(format!("/v1/jobs/{id}/output"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    (report, first_column(&output))
}

async fn pseudonyms_link_within_a_tenant_only_and_change_with_the_key(service: Service) {
    // no key before the first job with pseudonyms
    let response = service.get("/v1/pseudonym-key").send().await.unwrap();
    expect_problem(response, 404, "not_found").await;

    let dataset = upload_patients(&service, ["F", "M"]).await;
    let (first_id, first_report) = run_to_success(&service, &pseudonym_spec(&dataset)).await;
    let first = first_column(&download(&service, &first_id).await);
    assert_eq!(first.len(), 40);
    assert!(first
        .iter()
        .all(|p| p.len() == 32 && p.bytes().all(|b| b.is_ascii_hexdigit())));
    let distinct: std::collections::HashSet<&String> = first.iter().collect();
    assert_eq!(distinct.len(), 40, "one pseudonym per record number");
    let fingerprint = first_report["identifiers"][0]["key_fingerprint"]
        .as_str()
        .expect("the report names the key's fingerprint")
        .to_string();
    assert_eq!(first_report["identifiers"][0]["operator"], "pseudonym");
    let codes: Vec<&str> = first_report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"near_unique_column"), "{codes:?}");

    // the key, created by that job, is shown by version and fingerprint only
    let shown = get_json(&service, "/v1/pseudonym-key").await;
    assert_eq!(shown["version"], 1);
    assert_eq!(shown["fingerprint"], fingerprint.as_str());
    let tenant = service
        .store()
        .authenticate(&service.key)
        .await
        .unwrap()
        .unwrap()
        .tenant_id;
    let (_, key) = service.store().pseudonym_key(tenant).await.unwrap();
    let secret_hex: String = key.secret().iter().map(|b| format!("{b:02x}")).collect();
    for text in [shown.to_string(), first_report.to_string()] {
        assert!(
            !text.contains(&secret_hex) && !text.contains("MRN"),
            "{text}"
        );
    }
    // the pseudonyms are the HMACs of the record numbers under that key
    let mrns: Vec<String> = (0..40)
        .map(|i| format!("MRN{:05}", 7919 * i % 100_000))
        .collect();
    let expected: Vec<String> = mrns.iter().map(|m| key.pseudonym(m)).collect();
    assert_eq!(first, expected);

    // a second job of the tenant: the same pseudonyms
    let (second_id, _) = run_to_success(&service, &pseudonym_spec(&dataset)).await;
    assert_eq!(first_column(&download(&service, &second_id).await), first);

    // another tenant: another key, other pseudonyms for the same record numbers
    let (other_report, other) = run_as(&service, &service.other_key).await;
    assert_eq!(other.len(), 40);
    assert!(first.iter().zip(&other).all(|(a, b)| a != b));
    assert_ne!(
        other_report["identifiers"][0]["key_fingerprint"].as_str(),
        Some(fingerprint.as_str())
    );

    // a rotation: version 2, another fingerprint, new pseudonyms from the next job on
    let response = service
        .post("/v1/pseudonym-key/rotate")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let rotated: Value = response.json().await.unwrap();
    assert_eq!(rotated["version"], 2);
    assert_ne!(rotated["fingerprint"], fingerprint.as_str());
    assert_eq!(get_json(&service, "/v1/pseudonym-key").await, rotated);
    let (after_report, after) = run_as(&service, &service.key).await;
    assert!(first.iter().zip(&after).all(|(a, b)| a != b));
    assert_eq!(
        after_report["identifiers"][0]["key_fingerprint"],
        rotated["fingerprint"]
    );
    // the other tenant's key did not change
    let (_, other_again) = run_as(&service, &service.other_key).await;
    assert_eq!(other_again, other);
}
