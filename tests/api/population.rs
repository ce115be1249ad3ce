//! Models against a population through the service: `population_dataset_id` names another dataset of
//! the caller's tenant, which the job's validation and its run both read; mistakes come back with their
//! codes and pointers before anything is queued.

use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{download, patients_spec, run_to_success, submit, upload_patients};

api_cases!(population_models_read_another_dataset_of_the_tenant,);

/// The 40 patients of [`upload_patients`] and `extra` more records of the same ages and sexes.
async fn upload_population(service: &Service, key: &str, extra: usize) -> Value {
    let mut csv = String::from("mrn,age,sex\n");
    for i in 0..40 + extra {
        csv.push_str(&format!(
            "MRN{:05},{},{}\n",
            7919 * i % 100_000,
            20 + i % 7,
            ["F", "M"][i % 2]
        ));
    }
    let response = service
        .client
        .post(service.url("/v1/datasets?name=population&delimiter=,"))
        .bearer_auth(key)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

fn k_map_spec(dataset: &Value, population: Option<&Value>, k: u64) -> Value {
    let mut spec = patients_spec(dataset);
    spec["attributes"]["mrn"] = json!({"role": "identifying"});
    spec["privacy_models"] = json!([{"type": "k_map", "k": k}]);
    if let Some(population) = population {
        spec["population_dataset_id"] = population["id"].clone();
    }
    spec
}

async fn population_models_read_another_dataset_of_the_tenant(service: Service) {
    let dataset = upload_patients(&service, ["F", "M"]).await;
    let population = upload_population(&service, &service.key, 100).await;
    // 140 population records over 7 ages × 2 sexes, 10 per combination: 10-map holds at the bottom
    let (id, report) = run_to_success(&service, &k_map_spec(&dataset, Some(&population), 10)).await;
    assert_eq!(
        report["privacy_models"],
        json!(["10-map (a population of 140 records)"])
    );
    assert_eq!(report["transformation"], json!({"age": 0, "sex": 0}));
    assert_eq!(download(&service, &id).await.lines().count(), 41);
    // 11-map needs the 5-year intervals or no sex (20 per class or more)
    let (_, report) = run_to_success(&service, &k_map_spec(&dataset, Some(&population), 11)).await;
    assert_ne!(report["transformation"], json!({"age": 0, "sex": 0}));
    // δ-presence: 40 of 140 everywhere at the bottom (2 or 3 of 10 per combination)
    let mut presence = k_map_spec(&dataset, Some(&population), 1);
    presence["privacy_models"] =
        json!([{"type": "delta_presence", "delta_min": 0.2, "delta_max": 0.3}]);
    let (_, report) = run_to_success(&service, &presence).await;
    assert_eq!(report["transformation"], json!({"age": 0, "sex": 0}));

    // mistakes, refused before anything is queued
    let problem = expect_problem(
        submit(&service, &k_map_spec(&dataset, None, 2)).await,
        422,
        "population_missing",
    )
    .await;
    assert_eq!(problem["pointer"], "/privacy_models/0");
    let mut unknown = k_map_spec(&dataset, None, 2);
    unknown["population_dataset_id"] = json!("00000000-0000-4000-8000-000000000000");
    let problem = expect_problem(submit(&service, &unknown).await, 422, "unknown_dataset").await;
    assert_eq!(problem["pointer"], "/population_dataset_id");
    // another tenant's dataset is no dataset of this one
    let foreign = upload_population(&service, &service.other_key, 100).await;
    let problem = expect_problem(
        submit(&service, &k_map_spec(&dataset, Some(&foreign), 2)).await,
        422,
        "unknown_dataset",
    )
    .await;
    assert_eq!(problem["pointer"], "/population_dataset_id");
    // a population that lacks some of the dataset's individuals: 20 of the 40
    let mut half = k_map_spec(&dataset, None, 2);
    let tiny = {
        let mut csv = String::from("mrn,age,sex\n");
        for i in 0..20 {
            csv.push_str(&format!("X{i},{},{}\n", 20 + i % 7, ["F", "M"][i % 2]));
        }
        service.upload_with("tiny", csv.as_bytes(), ",").await
    };
    half["population_dataset_id"] = tiny["id"].clone();
    let problem = expect_problem(
        submit(&service, &half).await,
        422,
        "sample_not_in_population",
    )
    .await;
    assert_eq!(problem["pointer"], "/privacy_models/0");
    // a population no model reads
    let mut unread = patients_spec(&dataset);
    unread["population_dataset_id"] = population["id"].clone();
    let problem = expect_problem(submit(&service, &unread).await, 422, "population_missing").await;
    assert_eq!(problem["pointer"], "/population_dataset_id");
}
