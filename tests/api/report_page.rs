//! `GET /v1/jobs/{id}/report.html` and `report.pdf`: the page of a succeeded job with the dataset's
//! checksum and the achieved k, conditional, tenant-scoped, 409 before success, no cell value of the
//! identifying and sensitive columns anywhere in it; the PDF is 501 without a renderer.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{get_json, submit_ok, worker};

api_cases!(the_report_page_shows_provenance_and_no_cell_value);

/// A distinctive text no page template or figure could produce by chance.
fn unique_text(prefix: &str, i: usize) -> String {
    // a fixed, well-mixed sequence: the same table every run
    let mixed = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20;
    format!("{prefix}{mixed:011x}q")
}

/// 60 records: a unique name (identifying) and a unique diagnosis (sensitive) each, and two
/// quasi-identifiers with small domains.
fn synthetic_table() -> (Vec<u8>, Vec<String>) {
    let mut csv = String::from("name,age,zip,diagnosis\n");
    let mut secrets = Vec::new();
    for i in 0..60 {
        let name = unique_text("nm", i);
        let diagnosis = unique_text("dx", i);
        csv.push_str(&format!(
            "{name},{},{},{diagnosis}\n",
            20 + (i % 4) * 10,
            ["10115", "10117", "20095", "20097"][i % 4 / 2 + (i / 30) * 2]
        ));
        secrets.push(name);
        secrets.push(diagnosis);
    }
    (csv.into_bytes(), secrets)
}

/// 5-anonymity and t-closeness with the ordered distance, whose value order lists every diagnosis: the
/// spec itself holds the sensitive values, and the page must not show them.
fn spec(dataset_id: &str, diagnoses: &[String]) -> Value {
    json!({
        "dataset_id": dataset_id,
        "attributes": {
            "name": {"role": "identifying"},
            "age": {"role": "quasi_identifier", "hierarchy": {"levels": [
                ["20", "20-39", "*"], ["30", "20-39", "*"], ["40", "40-59", "*"], ["50", "40-59", "*"]]}},
            "zip": {"role": "quasi_identifier", "hierarchy": {"levels": [
                ["10115", "101**", "*"], ["10117", "101**", "*"], ["20095", "200**", "*"], ["20097", "200**", "*"]]}},
            "diagnosis": {"role": "sensitive"},
        },
        "privacy_models": [
            {"type": "k_anonymity", "k": 5},
            {"type": "t_closeness", "attribute": "diagnosis", "t": 1.0, "distance": "ordered",
             "order": diagnoses},
        ],
        "suppression_limit": 0.0,
        "algorithm": {"type": "flash"},
        "metric": "arx_loss",
    })
}

async fn the_report_page_shows_provenance_and_no_cell_value(service: Service) {
    let (csv, secrets) = synthetic_table();
    let dataset = service.upload_with("ward-7", &csv, ",").await;
    let dataset_id = dataset["id"].as_str().unwrap();
    let sha256 = dataset["sha256"].as_str().unwrap().to_string();
    let diagnoses: Vec<String> = secrets
        .iter()
        .filter(|s| s.starts_with("dx"))
        .cloned()
        .collect();
    let job = submit_ok(&service, &spec(dataset_id, &diagnoses)).await;
    let id = job["id"].as_str().unwrap();
    let page_path = format!("/v1/jobs/{id}/report.html");

    // not yet: the job has not succeeded
    let early = service.get(&page_path).send().await.unwrap();
    expect_problem(early, 409, "job_not_succeeded").await;

    worker(&service).run_once().await.unwrap();
    let response = service.get(&page_path).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert!(headers["content-security-policy"]
        .to_str()
        .unwrap()
        .starts_with("default-src 'none'"));
    assert_eq!(
        headers["content-disposition"],
        format!("inline; filename=\"job-{id}-report.html\"").as_str()
    );
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with("W/\""), "{etag}");
    let html = response.text().await.unwrap();

    let report = get_json(&service, &format!("/v1/jobs/{id}/result")).await;
    let k = report["achieved"]["k"].as_u64().unwrap();
    assert!(k >= 5, "{report}");
    assert!(html.contains(&format!(r#"<code id="dataset-sha256">{sha256}</code>"#)));
    assert!(html.contains(&format!(r#"id="achieved-k">k = {k}</span>"#)));
    assert!(html.contains(id) && html.contains("ward-7"));
    assert!(html.contains("<svg"));
    // no cell value of the identifying or the sensitive column, anywhere in the page
    for secret in &secrets {
        assert!(
            !html.contains(secret.as_str()),
            "the page shows a cell value"
        );
    }
    // the inline hierarchies' leaves are summarized too
    assert!(!html.contains("10115") && !html.contains("20097"));

    // conditional: the same page is not sent again
    let again = service
        .get(&page_path)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    // another tenant sees nothing
    let foreign = service
        .client
        .get(service.url(&page_path))
        .bearer_auth(&service.other_key)
        .send()
        .await
        .unwrap();
    expect_problem(foreign, 404, "not_found").await;

    // no PDF renderer configured: 501, after the job itself was found
    let pdf = service
        .get(&format!("/v1/jobs/{id}/report.pdf"))
        .send()
        .await
        .unwrap();
    expect_problem(pdf, 501, "pdf_unavailable").await;
    let unknown = service
        .get("/v1/jobs/00000000-0000-4000-8000-000000000000/report.pdf")
        .send()
        .await
        .unwrap();
    expect_problem(unknown, 404, "not_found").await;
}
