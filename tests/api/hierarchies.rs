//! Hierarchies: ARX CSV and JSON levels are validated and stored as the normalized JSON jobs read back;
//! structural problems are 422 `invalid_hierarchy` with the line, syntax errors and wrong content types
//! are refused, and nothing is stored for a rejected body.

use anonymizer::codec::{parse_arx_hierarchy, parse_json_hierarchy};

use crate::api_cases;
use crate::harness::{data_dir, expect_problem, Service};

api_cases!(
    arx_hierarchies_are_stored_as_json_levels,
    json_hierarchies_are_stored,
    invalid_hierarchies_are_refused,
    control_characters_and_wrong_name_types_are_refused,
    retried_uploads_with_an_idempotency_key_store_once,
);

/// Tenant alpha's id.
async fn alpha(service: &Service) -> uuid::Uuid {
    service
        .store()
        .authenticate(&service.key)
        .await
        .unwrap()
        .expect("alpha's key")
        .tenant_id
}

/// Reads the stored row of a created hierarchy and parses it the way jobs do.
async fn stored(
    service: &Service,
    created: &serde_json::Value,
) -> anonymizer::core::data::Hierarchy {
    let id = uuid::Uuid::parse_str(created["id"].as_str().unwrap()).unwrap();
    let row = service
        .store()
        .get_hierarchy(alpha(service).await, id)
        .await
        .expect("stored hierarchy");
    assert_eq!(row.name, created["name"].as_str().unwrap());
    parse_json_hierarchy(row.content_json.as_bytes()).expect("jobs can read it")
}

fn assert_same(a: &anonymizer::core::data::Hierarchy, b: &anonymizer::core::data::Hierarchy) {
    assert_eq!(a.height(), b.height());
    assert_eq!(a.leaf_count(), b.leaf_count());
    for leaf in 0..a.leaf_count() as u32 {
        for level in 0..a.height() {
            assert_eq!(
                a.labels(level).value(a.ancestor(leaf, level)),
                b.labels(level).value(b.ancestor(leaf, level))
            );
        }
    }
}

async fn post(
    service: &Service,
    content_type: &str,
    query: &[(&str, &str)],
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    service
        .post("/v1/hierarchies")
        .query(query)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

async fn created(response: reqwest::Response) -> serde_json::Value {
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/hierarchies/{}", body["id"].as_str().unwrap())
    );
    assert!(
        body["created_at"].as_str().unwrap().ends_with('Z'),
        "{body}"
    );
    body
}

async fn arx_hierarchies_are_stored_as_json_levels(service: Service) {
    for (column, levels, values) in [
        ("age", 5, 100),
        ("sex", 2, 2),
        ("education", 4, 16),
        ("workclass", 3, 8),
    ] {
        let file = std::fs::read(data_dir().join(format!("adult/adult_hierarchy_{column}.csv")))
            .expect("hierarchy file");
        let response = post(&service, "text/csv", &[("name", column)], file.clone()).await;
        let body = created(response).await;
        assert_eq!(body["name"], column);
        assert_eq!(body["level_count"], levels, "{column}");
        assert_eq!(body["value_count"], values, "{column}");
        let expected = parse_arx_hierarchy(&file, b';').unwrap();
        assert_same(&stored(&service, &body).await, &expected);
    }

    // another delimiter, CRLF, duplicate rows, a charset parameter; the name defaults to the id
    let response = post(
        &service,
        "text/csv; charset=utf-8",
        &[("delimiter", "\\t")],
        "39\t30-39\t*\r\n41\t40-49\t*\r\n39\t30-39\t*\r\n",
    )
    .await;
    let body = created(response).await;
    assert_eq!(body["name"], body["id"]);
    assert_eq!(body["level_count"], 3);
    assert_eq!(body["value_count"], 2);
    let hierarchy = stored(&service, &body).await;
    assert_eq!(hierarchy.labels(1).value(hierarchy.ancestor(1, 1)), "40-49");
}

async fn json_hierarchies_are_stored(service: Service) {
    let levels = serde_json::json!({"levels": [["male", "*"], ["female", "*"]]});
    let response = post(
        &service,
        "application/json",
        &[("name", "sex")],
        levels.to_string(),
    )
    .await;
    let body = created(response).await;
    assert_eq!(body["name"], "sex");
    assert_eq!(body["level_count"], 2);
    assert_eq!(body["value_count"], 2);
    let expected = parse_json_hierarchy(levels.to_string().as_bytes()).unwrap();
    assert_same(&stored(&service, &body).await, &expected);

    // a name in the body; the query's wins when both are given
    let named = serde_json::json!({"name": "zip", "levels": [["81667", "8166*", "*"], ["81675", "8167*", "*"]]});
    let body = created(post(&service, "application/json", &[], named.to_string()).await).await;
    assert_eq!(body["name"], "zip");
    assert_eq!(body["level_count"], 3);
    let body = created(
        post(
            &service,
            "application/json",
            &[("name", "postcode")],
            named.to_string(),
        )
        .await,
    )
    .await;
    assert_eq!(body["name"], "postcode");

    let body = created(post(&service, "application/json", &[], levels.to_string()).await).await;
    assert_eq!(body["name"], body["id"]);
}

async fn invalid_hierarchies_are_refused(service: Service) {
    let tenant = alpha(&service).await;
    let csv_cases: [(&str, &str); 5] = [
        ("a;x;*\nb;*\n", "line 2"),
        ("a;x;*\na;y;*\n", "line 2"),
        ("a;x;*\nb;y;top\n", "2 distinct"),
        ("", "no rows"),
        ("secret-value;x;*\nsecret-value;*\n", "line 2"),
    ];
    for (body, mentions) in csv_cases {
        let problem = expect_problem(
            post(&service, "text/csv", &[], body).await,
            422,
            "invalid_hierarchy",
        )
        .await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(mentions), "{detail}");
        assert!(!problem.to_string().contains("secret"), "{problem}");
    }
    let json_cases = [
        r#"{"levels": [["a", "x", "*"], ["b", "*"]]}"#,
        r#"{"levels": [["a", "x", "*"], ["a", "y", "*"]]}"#,
        r#"{"levels": [["a", "x"], ["b", "y"]]}"#,
        r#"{"levels": []}"#,
        r#"{"levels": "secret-value"}"#,
        r#"{"levels": [[1, 2]]}"#,
        r#"{"levels": [["a", "*"]], "secret-value": 1}"#,
        r#"{"rows": [["a", "*"]]}"#,
    ];
    for body in json_cases {
        let problem = expect_problem(
            post(&service, "application/json", &[], body).await,
            422,
            "invalid_hierarchy",
        )
        .await;
        let text = problem.to_string();
        assert!(!text.contains("secret-value\""), "{text}");
    }
    for body in ["{\"levels\": [[\"a\", \"*\"]", "not json", ""] {
        expect_problem(
            post(&service, "application/json", &[], body).await,
            400,
            "malformed_json",
        )
        .await;
    }
    for content_type in ["application/xml", "text/plain"] {
        expect_problem(
            post(&service, content_type, &[], "a;*\n").await,
            415,
            "unsupported_media_type",
        )
        .await;
    }
    let no_type = service
        .post("/v1/hierarchies")
        .body("a;*\n")
        .send()
        .await
        .unwrap();
    expect_problem(no_type, 415, "unsupported_media_type").await;
    expect_problem(
        post(&service, "text/csv", &[("delimiter", ";;")], "a;*\n").await,
        422,
        "invalid_delimiter",
    )
    .await;

    // a valid hierarchy is still accepted, and only its tenant sees it
    let body = created(post(&service, "text/csv", &[("name", "ok")], "a;*\n").await).await;
    let id = uuid::Uuid::parse_str(body["id"].as_str().unwrap()).unwrap();
    assert!(service.store().get_hierarchy(tenant, id).await.is_ok());
    let beta = service
        .store()
        .authenticate(&service.other_key)
        .await
        .unwrap()
        .unwrap()
        .tenant_id;
    assert!(service.store().get_hierarchy(beta, id).await.is_err());
}

/// NUL and other control characters in names, labels and delimiters, and names of the wrong type, are
/// 422 on both stores (PostgreSQL's text type cannot hold NUL), and nothing is stored.
async fn control_characters_and_wrong_name_types_are_refused(service: Service) {
    let tenant = alpha(&service).await;
    let levels = r#"{"levels": [["a", "*"]]}"#;
    for name in ["nul\0name", "line\nbreak", "esc\u{1b}"] {
        expect_problem(
            post(&service, "application/json", &[("name", name)], levels).await,
            422,
            "invalid_characters",
        )
        .await;
        expect_problem(
            post(&service, "text/csv", &[("name", name)], "a;*\n").await,
            422,
            "invalid_characters",
        )
        .await;
        let body = serde_json::json!({"name": name, "levels": [["a", "*"]]}).to_string();
        let problem = expect_problem(
            post(&service, "application/json", &[], body).await,
            422,
            "invalid_characters",
        )
        .await;
        assert_eq!(problem["pointer"], "/name");
    }
    for name in ["null", "5", "[\"secret-value\"]", "{}"] {
        let body = format!(r#"{{"name": {name}, "levels": [["a", "*"]]}}"#);
        let problem = expect_problem(
            post(&service, "application/json", &[], body).await,
            422,
            "invalid_request",
        )
        .await;
        assert_eq!(problem["pointer"], "/name");
        assert!(!problem.to_string().contains("secret"), "{problem}");
    }
    let labels: [(&str, &[u8], &str); 4] = [
        (
            "application/json",
            br#"{"levels": [["a", "*"], ["secret\u0000", "*"]]}"#,
            "line 2, column 1",
        ),
        ("text/csv", b"a;*\nsecret\0;*\n", "line 2, column 1"),
        ("text/csv", b"a;*\n\"secret;*\nb;*\n", "line 2"),
        ("text/csv", b"a;*\nb\rc;*\n", "line 2"),
    ];
    for (content_type, body, mentions) in labels {
        let problem = expect_problem(
            post(&service, content_type, &[], body.to_vec()).await,
            422,
            "invalid_hierarchy",
        )
        .await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(mentions), "{detail}");
        assert!(!problem.to_string().contains("secret"), "{problem}");
    }
    for delimiter in ["\0", "\u{1}", "\n"] {
        expect_problem(
            post(&service, "text/csv", &[("delimiter", delimiter)], "a;*\n").await,
            422,
            "invalid_delimiter",
        )
        .await;
    }
    // the service still stores a valid hierarchy
    let body = created(post(&service, "text/csv", &[("name", "ok")], "a;*\n").await).await;
    let id = uuid::Uuid::parse_str(body["id"].as_str().unwrap()).unwrap();
    assert!(service.store().get_hierarchy(tenant, id).await.is_ok());
}

/// A hierarchy upload retried with the same `Idempotency-Key` returns the hierarchy the first attempt
/// stored (`Idempotent-Replayed: true`, same warnings); another body under the key is 409
/// `idempotency_conflict`; the list holds one hierarchy.
async fn retried_uploads_with_an_idempotency_key_store_once(service: Service) {
    // a repeated row: the answer warns, and so does its replay
    let csv = "34;30-39;*\n35;30-39;*\n34;30-39;*\n";
    let send = |body: &'static str, key: &'static str| {
        service
            .post("/v1/hierarchies")
            .query(&[("name", "age")])
            .header("content-type", "text/csv")
            .header("idempotency-key", key)
            .body(body)
            .send()
    };
    let first = send(csv, "h-1").await.unwrap();
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first = created(first).await;
    assert_eq!(first["warnings"].as_array().unwrap().len(), 1, "{first}");
    let retry = send(csv, "h-1").await.unwrap();
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    let retry = created(retry).await;
    assert_eq!(retry, first);
    expect_problem(
        send("34;30-39;*\n", "h-1").await.unwrap(),
        409,
        "idempotency_conflict",
    )
    .await;
    let list: serde_json::Value = service
        .get("/v1/hierarchies")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
}
