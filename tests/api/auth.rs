//! Authentication: every data route answers 401 without a valid key, with `WWW-Authenticate: Bearer`,
//! and the operations routes stay open.

use crate::api_cases;
use crate::harness::{expect_problem, Service};

api_cases!(data_routes_need_a_key, operations_routes_are_open);

const DATA_ROUTES: [(&str, &str); 16] = [
    ("POST", "/v1/datasets"),
    ("GET", "/v1/datasets"),
    ("GET", "/v1/datasets/00000000-0000-4000-8000-000000000000"),
    (
        "DELETE",
        "/v1/datasets/00000000-0000-4000-8000-000000000000",
    ),
    ("POST", "/v1/hierarchies"),
    ("POST", "/v1/jobs"),
    ("GET", "/v1/jobs"),
    ("GET", "/v1/jobs/00000000-0000-4000-8000-000000000000"),
    (
        "POST",
        "/v1/jobs/00000000-0000-4000-8000-000000000000/cancel",
    ),
    (
        "POST",
        "/v1/jobs/00000000-0000-4000-8000-000000000000/assessments",
    ),
    (
        "GET",
        "/v1/jobs/00000000-0000-4000-8000-000000000000/result",
    ),
    (
        "GET",
        "/v1/jobs/00000000-0000-4000-8000-000000000000/output",
    ),
    (
        "GET",
        "/v1/jobs/00000000-0000-4000-8000-000000000000/report.html",
    ),
    (
        "GET",
        "/v1/jobs/00000000-0000-4000-8000-000000000000/report.pdf",
    ),
    ("GET", "/v1/pseudonym-key"),
    ("POST", "/v1/pseudonym-key/rotate"),
];

async fn data_routes_need_a_key(service: Service) {
    for (method, path) in DATA_ROUTES {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let url = service.url(path);
        let no_key = service
            .client
            .request(method.clone(), &url)
            .send()
            .await
            .unwrap();
        assert_eq!(
            no_key
                .headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap()),
            Some("Bearer"),
            "{method} {path}"
        );
        expect_problem(no_key, 401, "unauthorized").await;
        let wrong_key = service
            .client
            .request(method.clone(), &url)
            .bearer_auth("anz_0000000000000000000000000000000000000000000000000000000000000000")
            .send()
            .await
            .unwrap();
        expect_problem(wrong_key, 401, "unauthorized").await;
        let not_bearer = service
            .client
            .request(method.clone(), &url)
            .header("authorization", format!("Basic {}", service.key))
            .send()
            .await
            .unwrap();
        expect_problem(not_bearer, 401, "unauthorized").await;
    }
}

async fn operations_routes_are_open(service: Service) {
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
        let response = service.client.get(service.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    let metrics = service
        .client
        .get(service.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("anonymizer_queue_depth 0"), "{metrics}");
    assert!(metrics.contains(r#"route="/healthz""#), "{metrics}");
}
