//! `POST /v1/datasets/{id}/assessments`: authentication, tenant isolation, validation with pointers,
//! and an assessment of a small table computed by hand.

use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};

/// zip × age × diagnosis. Classes by (zip, age): (1301, 30) {flu, flu, cold}, (1302, 40) {flu, cold,
/// cancer, cancer}, (1303, 50) {cold, cold}: sizes 3, 4, 2 (9 records).
const CSV: &[u8] = b"zip,age,diagnosis\n\
1301,30,flu\n1301,30,flu\n1301,30,cold\n\
1302,40,flu\n1302,40,cold\n1302,40,cancer\n1302,40,cancer\n\
1303,50,cold\n1303,50,cold\n";

fn body() -> Value {
    json!({"attributes": {"zip": {"role": "quasi_identifier"},
                          "age": {"role": "quasi_identifier"},
                          "diagnosis": {"role": "sensitive"}},
           "risk": {"threshold": 0.3}})
}

async fn dataset(service: &Service) -> String {
    let uploaded = service.upload("assess", CSV).await;
    uploaded["id"].as_str().expect("id").to_string()
}

async fn assesses_a_table_computed_by_hand(service: Service) {
    let id = dataset(&service).await;
    let response = service
        .post(&format!("/v1/datasets/{id}/assessments"))
        .json(&body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let a: Value = response.json().await.unwrap();
    assert_eq!(a["records"], 9);
    assert_eq!(a["classes"], 3);
    assert_eq!(a["k"], 2);
    assert_eq!(a["quasi_identifiers"], json!(["zip", "age"]));
    let d = &a["sensitive_attributes"]["diagnosis"];
    // distinct values per class: 2, 3, 1
    assert_eq!(d["distinct_l"], 1);
    assert_eq!(d["entropy_l"], 1.0);
    assert_eq!(d["recursive_c_for_l2_must_exceed"], Value::Null);
    let risk = &a["risk"];
    assert_eq!(risk["prosecutor"]["highest"], 0.5);
    assert_eq!(risk["prosecutor"]["average"], 3.0 / 9.0);
    // threshold 0.3: the class of 2 (risk 1/2) and the class of 3 (1/3) are at risk: 5 of 9
    assert_eq!(risk["prosecutor"]["records_at_risk"], 5.0 / 9.0);
    assert_eq!(risk["prosecutor"]["records_at_highest_risk"], 2.0 / 9.0);
    assert_eq!(risk["sample_uniques"], 0.0);
    assert_eq!(risk["population_uniques"]["population_size"], 9);
}

async fn needs_a_key(service: Service) {
    let id = dataset(&service).await;
    let response = service
        .client
        .post(service.url(&format!("/v1/datasets/{id}/assessments")))
        .json(&body())
        .send()
        .await
        .unwrap();
    expect_problem(response, 401, "unauthorized").await;
}

async fn another_tenants_dataset_is_not_found(service: Service) {
    let id = dataset(&service).await;
    let response = service
        .client
        .post(service.url(&format!("/v1/datasets/{id}/assessments")))
        .bearer_auth(&service.other_key)
        .json(&body())
        .send()
        .await
        .unwrap();
    expect_problem(response, 404, "not_found").await;
    let response = service
        .post("/v1/datasets/00000000-0000-0000-0000-000000000000/assessments")
        .json(&body())
        .send()
        .await
        .unwrap();
    expect_problem(response, 404, "not_found").await;
}

async fn unknown_column_is_422_with_pointer(service: Service) {
    let id = dataset(&service).await;
    let mut request = body();
    request["attributes"]["salary"] = json!({"role": "sensitive"});
    let response = service
        .post(&format!("/v1/datasets/{id}/assessments"))
        .json(&request)
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, 422, "unknown_column").await;
    assert_eq!(problem["pointer"], "/attributes/salary");
    let mut request = body();
    request["risk"] = json!({"sampling_fraction": 2});
    let response = service
        .post(&format!("/v1/datasets/{id}/assessments"))
        .json(&request)
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, 422, "invalid_sampling_fraction").await;
    assert_eq!(problem["pointer"], "/risk/sampling_fraction");
}

api_cases!(
    assesses_a_table_computed_by_hand,
    needs_a_key,
    another_tenants_dataset_is_not_found,
    unknown_column_is_422_with_pointer,
);
