//! Datasets: streamed uploads (plain and gzip) with checksums, row counts and column profiles; reading,
//! listing with cursor pagination and deleting; tenant isolation; every rejected upload answers a
//! specific problem, leaves nothing behind and never echoes a cell value.

use std::collections::HashSet;
use std::io::Write;

use anonymizer::http::ApiSettings;

use crate::api_cases;
use crate::csv_battery::{self, Expect};
use crate::harness::{data_dir, expect_problem, sha256_hex, Service};

api_cases!(
    adult_upload_is_stored_and_profiled,
    gzip_uploads_store_the_decompressed_bytes,
    tab_delimited_uploads_and_default_names,
    listing_pages_through_every_dataset_newest_first,
    list_parameters_are_checked,
    other_tenants_datasets_are_not_found,
    deleted_datasets_are_gone,
    rejected_uploads_are_specific_problems_and_leave_nothing,
    cell_values_are_never_echoed,
    csv_battery_on_upload,
    control_characters_in_names_and_delimiters_are_refused,
    delimiters_are_sniffed_and_a_wrong_one_is_refused,
    windows_1252_uploads_are_stored_as_utf8,
    retried_uploads_with_an_idempotency_key_store_once,
);

/// Runs each case on both backends with an upload limit of [`LIMIT`] bytes.
macro_rules! limited_cases {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    $crate::harness::run_with(
                        anonymizer::store::Backend::Sqlite,
                        super::limited(),
                        super::$case,
                    )
                    .await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    $crate::harness::run_with(
                        anonymizer::store::Backend::Postgres,
                        super::limited(),
                        super::$case,
                    )
                    .await;
                }
            }
        )*
    };
}

limited_cases!(
    bodies_over_the_limit_are_refused_and_leave_nothing,
    a_body_at_the_limit_is_accepted,
);

/// The upload limit of the limited cases.
const LIMIT: u64 = 1000;

fn limited() -> ApiSettings {
    ApiSettings {
        upload_limit: LIMIT,
        ..ApiSettings::default()
    }
}

fn adult() -> Vec<u8> {
    std::fs::read(data_dir().join("adult/adult.csv")).expect("adult.csv")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("compress");
    encoder.finish().expect("compress")
}

/// Header names and distinct values per column, counted independently of the service.
fn distinct_counts(csv: &str, delimiter: char) -> Vec<(String, usize)> {
    let mut lines = csv.lines();
    let header: Vec<String> = lines
        .next()
        .expect("header")
        .split(delimiter)
        .map(str::to_string)
        .collect();
    let mut sets: Vec<HashSet<&str>> = vec![HashSet::new(); header.len()];
    for line in lines.filter(|l| !l.is_empty()) {
        for (set, value) in sets.iter_mut().zip(line.split(delimiter)) {
            set.insert(value);
        }
    }
    header
        .into_iter()
        .zip(sets.iter().map(HashSet::len))
        .collect()
}

/// Every dataset of the tenant behind `key`, following the cursors.
async fn list_all(service: &Service, key: &str) -> Vec<serde_json::Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut request = service
            .client
            .get(service.url("/v1/datasets"))
            .bearer_auth(key)
            .query(&[("limit", "100")]);
        if let Some(c) = &cursor {
            request = request.query(&[("cursor", c)]);
        }
        let response = request.send().await.expect("list");
        assert_eq!(response.status(), 200);
        let page: serde_json::Value = response.json().await.expect("JSON");
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return items,
        }
    }
}

fn is_rfc3339_utc(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
}

async fn adult_upload_is_stored_and_profiled(service: Service) {
    let csv = adult();
    let response = service
        .post("/v1/datasets")
        .query(&[("name", "adult"), ("delimiter", ";")])
        .header("content-type", "text/csv; charset=utf-8")
        .body(csv.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let dataset: serde_json::Value = response.json().await.unwrap();
    let id = dataset["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/datasets/{id}"));
    assert_eq!(dataset["name"], "adult");
    assert_eq!(dataset["sha256"], sha256_hex(&csv));
    assert_eq!(dataset["byte_size"], csv.len() as u64);
    assert_eq!(dataset["row_count"], 30162);
    assert_eq!(dataset["delimiter"], ";");
    assert!(
        is_rfc3339_utc(dataset["created_at"].as_str().unwrap()),
        "{dataset}"
    );

    let expected = distinct_counts(std::str::from_utf8(&csv).unwrap(), ';');
    let columns = dataset["columns"].as_array().unwrap();
    assert_eq!(columns.len(), expected.len());
    for (column, (name, distinct)) in columns.iter().zip(&expected) {
        assert_eq!(column["name"], name.as_str());
        assert_eq!(column["distinct_count"], *distinct as u64, "{name}");
        let kind = if name == "age" { "integer" } else { "string" };
        assert_eq!(column["type"], kind, "{name}");
    }

    // the parsed table is cached for the jobs that follow, and the bytes are counted
    let uuid = uuid::Uuid::parse_str(id).unwrap();
    let table = service.state.tables.get(uuid).expect("cached table");
    assert_eq!(table.row_count(), 30162);

    let fetched: serde_json::Value = service
        .get(&location)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(fetched, dataset);

    // the stored bytes are the uploaded ones
    let stored = service
        .store()
        .get_dataset(table_tenant(&service).await, uuid)
        .await
        .unwrap();
    let mut bytes = Vec::new();
    for seq in 0..stored.chunk_count {
        bytes.extend(
            service
                .store()
                .dataset_chunk(uuid, seq)
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert!(bytes == csv, "stored bytes differ from the upload");
}

/// Tenant alpha's id.
async fn table_tenant(service: &Service) -> uuid::Uuid {
    service
        .store()
        .authenticate(&service.key)
        .await
        .unwrap()
        .expect("alpha's key")
        .tenant_id
}

async fn gzip_uploads_store_the_decompressed_bytes(service: Service) {
    let csv = adult();
    let response = service
        .post("/v1/datasets")
        .query(&[("delimiter", ";")])
        .header("content-type", "text/csv")
        .header("content-encoding", "gzip")
        .body(gzip(&csv))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let dataset: serde_json::Value = response.json().await.unwrap();
    assert_eq!(dataset["sha256"], sha256_hex(&csv));
    assert_eq!(dataset["byte_size"], csv.len() as u64);
    assert_eq!(dataset["row_count"], 30162);
    let id = uuid::Uuid::parse_str(dataset["id"].as_str().unwrap()).unwrap();
    let mut bytes = Vec::new();
    let mut seq = 0;
    while let Some(chunk) = service.store().dataset_chunk(id, seq).await.unwrap() {
        bytes.extend(chunk);
        seq += 1;
    }
    assert!(bytes == csv, "stored bytes are not the decompressed upload");

    // an unsupported encoding is refused
    let response = service
        .post("/v1/datasets")
        .header("content-type", "text/csv")
        .header("content-encoding", "br")
        .body("a,b\n1,2\n")
        .send()
        .await
        .unwrap();
    expect_problem(response, 415, "unsupported_media_type").await;
}

async fn tab_delimited_uploads_and_default_names(service: Service) {
    let csv = b"id\tamount\tday\n1\t2.5\t2024-02-29\n2\t3\t2024-03-01\n2\t\t2024-03-01\n";
    let dataset = service.upload_with("", csv, "\\t").await;
    assert_eq!(dataset["delimiter"], "\t");
    assert_eq!(
        dataset["name"], dataset["id"],
        "the name defaults to the id"
    );
    assert_eq!(dataset["row_count"], 3);
    let types: Vec<&str> = dataset["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["integer", "decimal", "date"]);
    assert_eq!(dataset["columns"][1]["distinct_count"], 3);

    // a literal tab character works too
    let dataset = service.upload_with("tabs", csv, "\t").await;
    assert_eq!(dataset["delimiter"], "\t");
    assert_eq!(dataset["columns"].as_array().unwrap().len(), 3);
}

async fn listing_pages_through_every_dataset_newest_first(service: Service) {
    let mut uploaded = Vec::new();
    for i in 0..5 {
        let csv = format!("n,v\n{i},x\n");
        let dataset = service.upload(&format!("d{i}"), csv.as_bytes()).await;
        uploaded.push(dataset["id"].as_str().unwrap().to_string());
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut request = service.get("/v1/datasets").query(&[("limit", "2")]);
        if let Some(c) = &cursor {
            request = request.query(&[("cursor", c)]);
        }
        let page: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
        pages += 1;
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 2);
        seen.extend(items.iter().map(|d| d["id"].as_str().unwrap().to_string()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => {
                assert!(page["next_cursor"].is_null(), "{page}");
                break;
            }
        }
        assert!(pages < 10, "pagination does not end");
    }
    assert_eq!(pages, 3);
    uploaded.reverse();
    assert_eq!(seen, uploaded, "every dataset once, newest first");
}

async fn list_parameters_are_checked(service: Service) {
    for query in [
        "cursor=nope",
        "cursor=12_zz",
        "limit=0",
        "limit=501",
        "limit=two",
    ] {
        let response = service
            .get(&format!("/v1/datasets?{query}"))
            .send()
            .await
            .unwrap();
        expect_problem(response, 400, "invalid_query").await;
    }
    let page: serde_json::Value = service
        .get("/v1/datasets")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page, serde_json::json!({"items": [], "next_cursor": null}));
}

async fn other_tenants_datasets_are_not_found(service: Service) {
    let dataset = service.upload("mine", b"a,b\n1,2\n").await;
    let path = format!("/v1/datasets/{}", dataset["id"].as_str().unwrap());
    let unknown = "/v1/datasets/00000000-0000-4000-8000-000000000000";

    let as_beta = |method: reqwest::Method, path: &str| {
        service
            .client
            .request(method, service.url(path))
            .bearer_auth(&service.other_key)
    };
    let mut problems = Vec::new();
    for target in [path.as_str(), unknown, "/v1/datasets/not-a-uuid"] {
        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let response = as_beta(method, target).send().await.unwrap();
            problems.push(expect_problem(response, 404, "not_found").await);
        }
    }
    // each occurrence has its own instance; everything else is the same
    for problem in &mut problems {
        problem.as_object_mut().unwrap().remove("instance");
    }
    assert!(
        problems.windows(2).all(|w| w[0] == w[1]),
        "another tenant's id answers exactly like an unknown one: {problems:?}"
    );
    assert!(list_all(&service, &service.other_key).await.is_empty());

    // alpha still has it
    assert_eq!(service.get(&path).send().await.unwrap().status(), 200);
    assert_eq!(list_all(&service, &service.key).await.len(), 1);
}

async fn deleted_datasets_are_gone(service: Service) {
    let dataset = service.upload("doomed", b"a,b\n1,2\n").await;
    let id = dataset["id"].as_str().unwrap();
    let path = format!("/v1/datasets/{id}");
    let uuid = uuid::Uuid::parse_str(id).unwrap();
    assert!(service.state.tables.get(uuid).is_some());

    let response = service.delete(&path).send().await.unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.bytes().await.unwrap().is_empty());
    expect_problem(service.get(&path).send().await.unwrap(), 404, "not_found").await;
    expect_problem(
        service.delete(&path).send().await.unwrap(),
        404,
        "not_found",
    )
    .await;
    assert!(list_all(&service, &service.key).await.is_empty());
    assert!(service.state.tables.get(uuid).is_none());
    assert_eq!(service.store().chunk_count(uuid).await.unwrap(), 0);
}

/// Uploads `body` and expects a problem; returns it.
async fn reject(
    service: &Service,
    body: Vec<u8>,
    headers: &[(&str, &str)],
    query: &[(&str, &str)],
    status: u16,
    code: &str,
) -> serde_json::Value {
    let mut request = service.post("/v1/datasets").query(query).body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    expect_problem(request.send().await.unwrap(), status, code).await
}

async fn rejected_uploads_are_specific_problems_and_leave_nothing(service: Service) {
    let csv = [("content-type", "text/csv")];
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("ragged", b"a,b\n1,2\n3\n".to_vec(), 422, "ragged_row"),
        (
            "invalid UTF-8",
            b"a,b\n1,\xff\n".to_vec(),
            422,
            "invalid_utf8",
        ),
        ("empty", Vec::new(), 422, "empty_body"),
        ("header only", b"a,b\n".to_vec(), 422, "no_records"),
        (
            "duplicate",
            b"a,b,a\n1,2,3\n".to_vec(),
            422,
            "duplicate_column",
        ),
        (
            "empty name",
            b"a,,b\n1,2,3\n".to_vec(),
            422,
            "empty_column_name",
        ),
    ];
    for (what, body, status, code) in cases {
        let problem = reject(&service, body, &csv, &[], status, code).await;
        assert!(!problem["detail"].as_str().unwrap().is_empty(), "{what}");
    }
    let problem = reject(
        &service,
        b"a,b\n1,2\n3\n".to_vec(),
        &csv,
        &[],
        422,
        "ragged_row",
    )
    .await;
    assert_eq!(
        problem["detail"],
        "line 3: the record has 1 fields but the header has 2"
    );

    // a ragged row far into a large upload: the parser stops it, nothing is kept
    let mut big = adult();
    big.extend_from_slice(b"Male;39\n");
    big.extend_from_slice(&adult()[..200_000]);
    reject(
        &service,
        big,
        &csv,
        &[("delimiter", ";")],
        422,
        "ragged_row",
    )
    .await;

    let good = b"a,b\n1,2\n".to_vec();
    reject(
        &service,
        good.clone(),
        &[("content-type", "application/json")],
        &[],
        415,
        "unsupported_media_type",
    )
    .await;
    reject(
        &service,
        good.clone(),
        &[],
        &[],
        415,
        "unsupported_media_type",
    )
    .await;
    for delimiter in [";;", "\"", "é", "\\n"] {
        reject(
            &service,
            good.clone(),
            &csv,
            &[("delimiter", delimiter)],
            422,
            "invalid_delimiter",
        )
        .await;
    }
    let long_name = "n".repeat(201);
    reject(
        &service,
        good.clone(),
        &csv,
        &[("name", long_name.as_str())],
        400,
        "invalid_query",
    )
    .await;

    // corrupt and truncated gzip streams
    let gz = [("content-type", "text/csv"), ("content-encoding", "gzip")];
    let mut bad_checksum = gzip(&adult());
    let trailer = bad_checksum.len() - 8;
    bad_checksum[trailer] ^= 0xff;
    reject(
        &service,
        bad_checksum,
        &gz,
        &[("delimiter", ";")],
        400,
        "bad_request",
    )
    .await;
    // garbage mid-stream: whichever is noticed first, the broken stream or the broken CSV it yields
    let mut corrupt = gzip(&adult());
    let middle = corrupt.len() / 2;
    for byte in &mut corrupt[middle..middle + 64] {
        *byte ^= 0x5a;
    }
    let mut request = service
        .post("/v1/datasets")
        .query(&[("delimiter", ";")])
        .body(corrupt);
    for (name, value) in gz {
        request = request.header(name, value);
    }
    let status = request.send().await.unwrap().status().as_u16();
    assert!(status == 400 || status == 422, "{status}");
    let truncated = gzip(&adult())[..10_000].to_vec();
    reject(
        &service,
        truncated,
        &gz,
        &[("delimiter", ";")],
        400,
        "bad_request",
    )
    .await;
    reject(
        &service,
        b"not gzip at all".to_vec(),
        &gz,
        &[],
        400,
        "bad_request",
    )
    .await;

    assert!(
        list_all(&service, &service.key).await.is_empty(),
        "a rejected upload left a dataset behind"
    );
    // the service still works
    service.upload("after", &good).await;
}

async fn cell_values_are_never_echoed(service: Service) {
    let csv = [("content-type", "text/csv")];
    let bodies: Vec<(Vec<u8>, &str)> = vec![
        (
            b"name,city\nsecret-value,secret-value\nsecret-value\n".to_vec(),
            "ragged_row",
        ),
        (
            b"name,city\nsecret-value,secret-value,secret-value\n".to_vec(),
            "ragged_row",
        ),
        (
            b"name,city\nsecret-value,\xffsecret-value\n".to_vec(),
            "invalid_utf8",
        ),
    ];
    for (body, code) in bodies {
        let problem = reject(&service, body, &csv, &[], 422, code).await;
        assert!(!problem.to_string().contains("secret"), "{problem}");
    }
    assert!(list_all(&service, &service.key).await.is_empty());
}

async fn bodies_over_the_limit_are_refused_and_leave_nothing(service: Service) {
    let mut csv = b"a,b\n".to_vec();
    while csv.len() as u64 <= 20 * LIMIT {
        csv.extend_from_slice(b"1234,5678\n");
    }
    // declared too large: refused at once
    let response = service
        .post("/v1/datasets")
        .header("content-type", "text/csv")
        .body(csv.clone())
        .send()
        .await
        .unwrap();
    // the unread body ends the connection: the client is told not to reuse it
    assert_eq!(response.headers()["connection"], "close");
    let problem = expect_problem(response, 413, "payload_too_large").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("1000"),
        "{problem}"
    );

    // no Content-Length: counted while streaming. The server answers as soon as the limit is crossed,
    // possibly while the client is still sending; the client may then see the connection close before
    // it reads the 413 (a race of the transport, not of the service), so retry a few times for the
    // problem itself. Nothing may be stored either way (checked below).
    let mut refused = None;
    for _ in 0..5 {
        let frames: Vec<Result<Vec<u8>, std::io::Error>> =
            csv.chunks(300).map(|c| Ok(c.to_vec())).collect();
        let sent = service
            .post("/v1/datasets")
            .header("content-type", "text/csv")
            .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
                frames,
            )))
            .send()
            .await;
        match sent {
            Ok(response) => {
                refused = Some(response);
                break;
            }
            Err(e) => assert!(e.is_request(), "{e}"),
        }
    }
    expect_problem(
        refused.expect("the streamed upload is answered"),
        413,
        "payload_too_large",
    )
    .await;

    // gzip: the decompressed size counts
    let response = service
        .post("/v1/datasets")
        .header("content-type", "text/csv")
        .header("content-encoding", "gzip")
        .body(gzip(&csv))
        .send()
        .await
        .unwrap();
    expect_problem(response, 413, "payload_too_large").await;

    assert!(list_all(&service, &service.key).await.is_empty());
}

async fn a_body_at_the_limit_is_accepted(service: Service) {
    // 4 bytes of header and 249 records of 4 bytes: exactly the limit
    let mut body = b"a,b\n".to_vec();
    while (body.len() as u64) < LIMIT {
        body.extend_from_slice(b"1,2\n");
    }
    assert_eq!(body.len() as u64, LIMIT);
    let dataset = service.upload("exact", &body).await;
    assert_eq!(dataset["byte_size"], LIMIT);
    assert_eq!(dataset["row_count"], 249);

    let mut over = body;
    over.extend_from_slice(b"1,2\n");
    let response = service
        .post("/v1/datasets")
        .header("content-type", "text/csv")
        .body(over)
        .send()
        .await
        .unwrap();
    expect_problem(response, 413, "payload_too_large").await;
    assert_eq!(list_all(&service, &service.key).await.len(), 1);
}

/// The CSV-reader battery through the upload route: a case that parses is stored with exactly its
/// records (the cached table is the parsed upload), any other is its coded problem naming the line, and
/// leaves nothing behind.
async fn csv_battery_on_upload(service: Service) {
    let csv = [("content-type", "text/csv")];
    let mut stored = 0;
    for case in csv_battery::cases() {
        match &case.expect {
            Expect::Records(values) => {
                let body = service.upload_with(case.name, &case.input, ";").await;
                assert_eq!(body["row_count"], values.len(), "{}", case.name);
                let id = uuid::Uuid::parse_str(body["id"].as_str().unwrap()).unwrap();
                let table = service.state.tables.get(id).expect("the parsed table");
                let v = table.column(1);
                let read: Vec<&[u8]> = v
                    .codes
                    .iter()
                    .map(|&code| v.dictionary.value(code).as_bytes())
                    .collect();
                let expected: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
                assert!(read == expected, "{}: other records", case.name);
                assert_eq!(body["sha256"], sha256_hex(&case.input), "{}", case.name);
                stored += 1;
            }
            Expect::Error {
                code,
                line,
                fragment,
            } => {
                let problem = reject(
                    &service,
                    case.input.clone(),
                    &csv,
                    &[("delimiter", ";")],
                    422,
                    code,
                )
                .await;
                let detail = problem["detail"].as_str().unwrap();
                assert!(
                    detail.starts_with(&format!("line {line}:"))
                        || detail.starts_with(&format!("line {line},")),
                    "{}: {detail}",
                    case.name
                );
                assert!(detail.contains(fragment), "{}: {detail}", case.name);
            }
        }
    }
    assert_eq!(list_all(&service, &service.key).await.len(), stored);
}

async fn control_characters_in_names_and_delimiters_are_refused(service: Service) {
    let csv = [("content-type", "text/csv")];
    let good = b"a;b\n1;2\n".to_vec();
    for name in [
        "nul\0name",
        "line\nbreak",
        "tab\there",
        "esc\u{1b}[0m",
        "c1\u{9b}",
    ] {
        let problem = reject(
            &service,
            good.clone(),
            &csv,
            &[("name", name), ("delimiter", ";")],
            422,
            "invalid_characters",
        )
        .await;
        assert!(!problem.to_string().contains("name\\u0000"), "{problem}");
    }
    for delimiter in ["\0", "\u{1}", "\r", "\u{7f}"] {
        reject(
            &service,
            good.clone(),
            &csv,
            &[("delimiter", delimiter)],
            422,
            "invalid_delimiter",
        )
        .await;
    }
    assert!(list_all(&service, &service.key).await.is_empty());
    // a tab is a delimiter, and any other printable text a name
    let tab = service
        .upload_with("Zürich – 2024 (v2)", b"a\tb\n1\t2\n", "\t")
        .await;
    assert_eq!(tab["name"], "Zürich – 2024 (v2)");
    assert_eq!(tab["delimiter"], "\t");
}

/// Without `delimiter`, the header line decides (`;`, tab and `|` as well as `,`); with a wrong one the
/// table would be one column named with the right one, and the upload is refused with a hint, leaving
/// nothing behind.
async fn delimiters_are_sniffed_and_a_wrong_one_is_refused(service: Service) {
    for (csv, expected) in [
        (&b"zip;age\n1301;30\n1302;41\n"[..], ";"),
        (&b"zip\tage\n1301\t30\n"[..], "\t"),
        (&b"zip|age\n1301|30\n"[..], "|"),
        (&b"zip,age\n1301,30\n"[..], ","),
    ] {
        let response = service.post_csv(&[], csv).await;
        assert_eq!(response.status(), 201);
        let dataset: serde_json::Value = response.json().await.unwrap();
        assert_eq!(dataset["delimiter"], expected);
        assert_eq!(dataset["columns"].as_array().unwrap().len(), 2, "{dataset}");
    }
    let before: serde_json::Value = service
        .get("/v1/datasets")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let response = service
        .post_csv(
            &[("delimiter", ",")],
            b"zip;age
SECRET-1;30
",
        )
        .await;
    let problem = expect_problem(response, 422, "delimiter_mismatch").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("';'"),
        "{problem}"
    );
    assert!(!problem.to_string().contains("SECRET"));
    let after: serde_json::Value = service
        .get("/v1/datasets")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(before["items"], after["items"]);
}

/// `?encoding=windows-1252` decodes the body: the stored dataset is UTF-8 (its download has the accented
/// names); an unknown label is refused and stores nothing.
async fn windows_1252_uploads_are_stored_as_utf8(service: Service) {
    let body = b"name;sex\nJos\xe9;M\nM\xfcller;M\nRen\xe9e;F\n".to_vec();
    let response = service
        .post_csv(&[("encoding", "windows-1252")], &body)
        .await;
    assert_eq!(response.status(), 201);
    let dataset: serde_json::Value = response.json().await.unwrap();
    assert_eq!(dataset["delimiter"], ";");
    assert_eq!(dataset["columns"][0]["distinct_count"], 3, "{dataset}");
    // what is stored (and checksummed) is the UTF-8 text
    let utf8 = "name;sex\nJosé;M\nMüller;M\nRenée;F\n";
    assert_eq!(dataset["sha256"], sha256_hex(utf8.as_bytes()), "{dataset}");
    assert_eq!(dataset["byte_size"], utf8.len() as u64);
    let response = service.post_csv(&[("encoding", "klingon")], &body).await;
    expect_problem(response, 422, "invalid_encoding").await;
    // without the encoding the bytes are not UTF-8
    let response = service.post_csv(&[], &body).await;
    expect_problem(response, 422, "invalid_utf8").await;
}

/// Sends `csv` (gzip-encoded when `gzipped`) with `Idempotency-Key: key` as tenant `bearer`.
async fn upload_keyed(
    service: &Service,
    bearer: &str,
    key: &str,
    name: &str,
    csv: &[u8],
    gzipped: bool,
) -> reqwest::Response {
    let mut request = service
        .client
        .post(service.url("/v1/datasets"))
        .bearer_auth(bearer)
        .query(&[("name", name)])
        .header("content-type", "text/csv")
        .header("idempotency-key", key);
    request = if gzipped {
        request.header("content-encoding", "gzip").body(gzip(csv))
    } else {
        request.body(csv.to_vec())
    };
    request.send().await.expect("upload")
}

/// An ETL retry of an upload with the same `Idempotency-Key` gets the dataset the first attempt stored
/// (marked `Idempotent-Replayed: true`), whether it comes plain or gzip-encoded, one at a time or at
/// once; the key with another body or name is 409 `idempotency_conflict`; keys are per tenant; a
/// refused upload does not take its key.
async fn retried_uploads_with_an_idempotency_key_store_once(service: Service) {
    let csv = b"age,zip\n34,47677\n35,47678\n";
    let key = service.key.clone();
    let first = upload_keyed(&service, &key, "etl-1", "toy", csv, false).await;
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: serde_json::Value = first.json().await.unwrap();
    for gzipped in [false, true] {
        let retry = upload_keyed(&service, &key, "etl-1", "toy", csv, gzipped).await;
        assert_eq!(retry.status(), 201);
        assert_eq!(retry.headers()["idempotent-replayed"], "true");
        assert_eq!(
            retry.headers()["location"],
            format!("/v1/datasets/{}", first["id"].as_str().unwrap()).as_str()
        );
        let retry: serde_json::Value = retry.json().await.unwrap();
        assert_eq!(retry, first);
    }
    // the same key with another body, or another name, is another request
    let other_body = upload_keyed(&service, &key, "etl-1", "toy", b"age,zip\n1,2\n", false).await;
    expect_problem(other_body, 409, "idempotency_conflict").await;
    let other_name = upload_keyed(&service, &key, "etl-1", "toy2", csv, false).await;
    expect_problem(other_name, 409, "idempotency_conflict").await;
    // another tenant's identical key is its own
    let other_key = service.other_key.clone();
    let beta = upload_keyed(&service, &other_key, "etl-1", "toy", csv, false).await;
    assert_eq!(beta.status(), 201);
    assert!(beta.headers().get("idempotent-replayed").is_none());
    let beta: serde_json::Value = beta.json().await.unwrap();
    assert_ne!(beta["id"], first["id"]);

    // a refused upload leaves its key free for the corrected one
    let refused = upload_keyed(&service, &key, "etl-2", "bad", b"a,b\n1,2,3\n", false).await;
    assert_eq!(refused.status(), 422);
    let corrected = upload_keyed(&service, &key, "etl-2", "bad", csv, false).await;
    assert_eq!(corrected.status(), 201);
    assert!(corrected.headers().get("idempotent-replayed").is_none());

    // two attempts at once: one dataset, both answers name it, one of them a replay
    let (a, b) = tokio::join!(
        upload_keyed(&service, &key, "etl-3", "race", csv, false),
        upload_keyed(&service, &key, "etl-3", "race", csv, false),
    );
    let replays = [&a, &b]
        .iter()
        .filter(|r| r.headers().get("idempotent-replayed").is_some())
        .count();
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (201, 201));
    assert_eq!(replays, 1);
    let (a, b): (serde_json::Value, serde_json::Value) =
        (a.json().await.unwrap(), b.json().await.unwrap());
    assert_eq!(a["id"], b["id"]);

    let listed = service
        .get("/v1/datasets")
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let names: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["bad", "race", "toy"], "{names:?}");
}
