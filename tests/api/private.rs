//! Differentially private jobs through the service: the published table is a random sample whose
//! classes (counted here from the downloaded CSV) all hold the k the report states, and a spec that
//! would publish a column outside the guarantee is refused before anything is queued.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{download, run_to_success, submit};

api_cases!(differential_privacy_publishes_a_sample_of_large_classes,);

fn private_spec(dataset: &Value, mrn: &str) -> Value {
    json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "mrn": {"role": mrn},
            "age": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "interval", "width": 5, "fanouts": [2]}}},
            "sex": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "categories", "levels": []}}},
        },
        "privacy_models": [{"type": "differential_privacy", "epsilon": 1.0, "delta": 0.001}],
        "metric": "discernibility",
    })
}

async fn differential_privacy_publishes_a_sample_of_large_classes(service: Service) {
    let mut csv = String::from("mrn,age,sex\n");
    for i in 0..600 {
        csv.push_str(&format!(
            "MRN{:05},{},{}\n",
            7919 * i % 100_000,
            20 + i % 17,
            ["F", "M"][i % 2]
        ));
    }
    let dataset = service.upload_with("cohort", csv.as_bytes(), ",").await;
    let (id, report) = run_to_success(&service, &private_spec(&dataset, "identifying")).await;
    let private = &report["differential_privacy"];
    assert_eq!(private["randomized"], json!(true));
    assert_eq!(private["input_records"], json!(600));
    assert_eq!(report["records"], private["sampled_records"]);
    assert_eq!(report["search"]["algorithm"], "safepub");
    let k = private["k"].as_u64().unwrap();
    let output = download(&service, &id).await;
    let mut lines = output.lines();
    assert_eq!(
        lines.next(),
        Some("age,sex"),
        "the record number is dropped"
    );
    let mut classes: HashMap<&str, u64> = HashMap::new();
    for line in lines {
        *classes.entry(line).or_default() += 1;
    }
    let published: u64 = classes.values().sum();
    assert_eq!(published, report["published_records"].as_u64().unwrap());
    assert!(published < 600);
    assert!(
        classes.values().all(|&size| size >= k),
        "{classes:?}, k {k}"
    );

    // a record number published as it is lies outside the guarantee
    let problem = expect_problem(
        submit(&service, &private_spec(&dataset, "insensitive")).await,
        422,
        "unsupported_model",
    )
    .await;
    assert_eq!(problem["pointer"], "/attributes/mrn/role");
}
