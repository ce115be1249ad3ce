//! Checks `openapi.yaml`: OpenAPI 3.1, the routes of the service with operations and responses, every
//! `$ref` resolving, every example valid against its schema (types, `required`, enums, closed objects,
//! `oneOf`/`anyOf`/`allOf`), every error code of `ApiError` listed, and the routes the router serves agreeing with
//! the document.

use std::collections::BTreeSet;

use serde_json::Value;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Every route of the service, as `METHOD path`.
const ROUTES: [&str; 33] = [
    "POST /v1/datasets",
    "GET /v1/datasets",
    "GET /v1/datasets/{id}",
    "DELETE /v1/datasets/{id}",
    "POST /v1/datasets/{id}/assessments",
    "POST /v1/datasets/{id}/proposal",
    "POST /v1/hierarchies",
    "GET /v1/hierarchies",
    "GET /v1/hierarchies/{id}",
    "DELETE /v1/hierarchies/{id}",
    "POST /v1/hierarchies/preview",
    "POST /v1/jobs",
    "GET /v1/jobs",
    "GET /v1/jobs/{id}",
    "DELETE /v1/jobs/{id}",
    "POST /v1/jobs/{id}/cancel",
    "POST /v1/jobs/{id}/publish",
    "POST /v1/jobs/{id}/assessments",
    "GET /v1/jobs/{id}/result",
    "GET /v1/jobs/{id}/output",
    "GET /v1/jobs/{id}/report.html",
    "GET /v1/jobs/{id}/report.pdf",
    "GET /v1/pseudonym-key",
    "POST /v1/pseudonym-key/rotate",
    "GET /v1/jobs/{id}/events",
    "GET /v1/events",
    "GET /v1/jobs/{id}/deliveries",
    "GET /v1/webhook-secret",
    "POST /v1/webhook-secret/rotate",
    "GET /healthz",
    "GET /readyz",
    "GET /metrics",
    "GET /openapi.yaml",
];

fn document() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
        .expect("openapi.yaml is readable");
    assert_eq!(text, anonymizer::http::health::OPENAPI_YAML);
    serde_yaml::from_str(&text).expect("openapi.yaml is valid YAML with string keys")
}

fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths is a map") {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((method.to_uppercase(), path.clone(), op));
            }
        }
    }
    out
}

/// Resolves a local `$ref`.
fn resolve<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    doc.pointer(reference.strip_prefix('#')?)
}

#[test]
fn is_openapi_3_1_with_info_and_bearer_security() {
    let doc = document();
    let version = doc["openapi"].as_str().expect("openapi is a string");
    assert!(version.starts_with("3.1."), "{version}");
    assert!(doc["info"]["title"].is_string());
    assert!(doc["info"]["version"].is_string());
    let bearer = &doc["components"]["securitySchemes"]["bearer"];
    assert_eq!(bearer["type"], "http");
    assert_eq!(bearer["scheme"], "bearer");
    assert_eq!(doc["security"][0]["bearer"], serde_json::json!([]));
}

#[test]
fn documents_exactly_the_routes_of_the_service() {
    let doc = document();
    let documented: BTreeSet<String> = operations(&doc)
        .iter()
        .map(|(m, p, _)| format!("{m} {p}"))
        .collect();
    let expected: BTreeSet<String> = ROUTES.iter().map(|s| s.to_string()).collect();
    assert_eq!(documented, expected);
}

#[test]
fn every_operation_has_an_id_and_described_responses() {
    let doc = document();
    let mut ids = BTreeSet::new();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"].as_str().unwrap_or_default();
        assert!(!id.is_empty(), "{method} {path} has no operationId");
        assert!(ids.insert(id.to_string()), "duplicate operationId {id}");
        let responses = op["responses"].as_object().expect("responses is a map");
        assert!(!responses.is_empty(), "{method} {path} has no responses");
        for (status, response) in responses {
            assert!(
                status.len() == 3 && status.chars().all(|c| c.is_ascii_digit()),
                "{method} {path}: status {status}"
            );
            let response = match response.get("$ref").and_then(Value::as_str) {
                Some(r) => resolve(&doc, r).expect("response $ref resolves"),
                None => response,
            };
            assert!(
                response["description"].is_string(),
                "{method} {path} {status} has no description"
            );
            if status.starts_with('4') || status.starts_with('5') {
                let schema = &response["content"]["application/problem+json"]["schema"]["$ref"];
                assert_eq!(
                    schema, "#/components/schemas/Problem",
                    "{method} {path} {status} is not a problem"
                );
            }
        }
        let public = !path.starts_with("/v1/");
        if public {
            assert_eq!(
                op["security"],
                serde_json::json!([]),
                "{path} should be public"
            );
        } else {
            assert!(
                op.get("security").is_none(),
                "{method} {path} overrides security"
            );
            assert!(responses.contains_key("401"), "{method} {path} lacks 401");
        }
    }
}

#[test]
fn every_ref_resolves() {
    fn walk(doc: &Value, v: &Value, at: &str, count: &mut usize) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let here = format!("{at}/{k}");
                    if k == "$ref" {
                        let r = child.as_str().expect("$ref is a string");
                        assert!(r.starts_with("#/"), "{here}: non-local $ref {r}");
                        assert!(resolve(doc, r).is_some(), "{here}: {r} does not resolve");
                        *count += 1;
                    } else if k == "mapping" && at.ends_with("/discriminator") {
                        for (name, r) in child.as_object().expect("mapping is a map") {
                            let r = r.as_str().expect("mapping values are refs");
                            assert!(resolve(doc, r).is_some(), "{here}/{name}: {r}");
                            *count += 1;
                        }
                    } else {
                        walk(doc, child, &here, count);
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(doc, child, &format!("{at}/{i}"), count);
                }
            }
            _ => {}
        }
    }
    let doc = document();
    let mut count = 0;
    walk(&doc, &doc, "", &mut count);
    assert!(count > 50, "only {count} refs");
}

/// The keywords a schema object may hold (JSON Schema 2020-12 as OpenAPI 3.1 uses it, with OpenAPI's
/// own). An unquoted flow-mapping description with a comma (`{description: a, b}`) parses as a stray
/// key `b`, which generators then trip on; this catches it without Redocly.
const SCHEMA_KEYWORDS: [&str; 40] = [
    "$ref",
    "type",
    "properties",
    "required",
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "description",
    "title",
    "enum",
    "const",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "example",
    "examples",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "default",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "discriminator",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "unevaluatedProperties",
];

/// Checks the keys of `schema` (at `at`) and of every schema inside it.
fn check_schema_keys(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    for (key, child) in map {
        let here = format!("{at}/{key}");
        if !SCHEMA_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{here}: not a schema keyword"));
            continue;
        }
        match key.as_str() {
            "properties" | "patternProperties" => {
                for (name, property) in child.as_object().into_iter().flatten() {
                    check_schema_keys(property, &format!("{here}/{name}"), problems);
                }
            }
            "items" | "additionalProperties" | "not" | "propertyNames" => {
                check_schema_keys(child, &here, problems)
            }
            "oneOf" | "anyOf" | "allOf" | "prefixItems" => {
                for (i, branch) in child.as_array().into_iter().flatten().enumerate() {
                    check_schema_keys(branch, &format!("{here}/{i}"), problems);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn schemas_hold_only_schema_keywords() {
    fn walk(v: &Value, at: &str, problems: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let here = format!("{at}/{k}");
                    if k == "schema" {
                        check_schema_keys(child, &here, problems);
                    } else if k != "example" && k != "examples" {
                        walk(child, &here, problems);
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, &format!("{at}/{i}"), problems);
                }
            }
            _ => {}
        }
    }
    let doc = document();
    let mut problems = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().expect("schemas") {
        check_schema_keys(
            schema,
            &format!("/components/schemas/{name}"),
            &mut problems,
        );
    }
    walk(&doc["paths"], "/paths", &mut problems);
    walk(
        &doc["components"]["responses"],
        "/components/responses",
        &mut problems,
    );
    walk(
        &doc["components"]["parameters"],
        "/components/parameters",
        &mut problems,
    );
    walk(
        &doc["components"]["headers"],
        "/components/headers",
        &mut problems,
    );
    assert!(problems.is_empty(), "{problems:#?}");
    // the check finds the stray key of an unquoted description with a comma
    let broken: Value =
        serde_yaml::from_str("{type: integer, description: Levels, original values.}").unwrap();
    let mut found = Vec::new();
    check_schema_keys(&broken, "/x", &mut found);
    assert_eq!(found, ["/x/original values.: not a schema keyword"]);
}

/// Every response the service sends carries `x-request-id`, so every response the document describes
/// declares it (responses by `$ref` declare it where they are defined).
#[test]
fn every_response_declares_the_request_id() {
    let doc = document();
    let mut missing = Vec::new();
    let mut check = |response: &Value, at: String| {
        if response.get("$ref").is_none() && response["headers"].get("X-Request-Id").is_none() {
            missing.push(at);
        }
    };
    for (method, path, op) in operations(&doc) {
        for (status, response) in op["responses"].as_object().expect("responses") {
            check(response, format!("{method} {path} {status}"));
        }
    }
    for (name, response) in doc["components"]["responses"]
        .as_object()
        .expect("responses")
    {
        check(response, format!("components/responses/{name}"));
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn every_error_code_is_documented() {
    let doc = document();
    // the code is open: a client generated from the contract must accept a code a later release adds
    let open = doc["components"]["schemas"]["ErrorCode"]["anyOf"]
        .as_array()
        .expect("ErrorCode is anyOf the known codes and any string");
    assert!(
        open.iter()
            .any(|alt| alt["type"] == "string" && alt.get("enum").is_none()),
        "ErrorCode admits codes it does not list"
    );
    let mut errors = Vec::new();
    let future = serde_json::json!("some_future_code");
    validate(
        &doc,
        &doc["components"]["schemas"]["ErrorCode"],
        &future,
        "",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");
    validate(
        &doc,
        &doc["components"]["schemas"]["ErrorCode"],
        &serde_json::json!(42),
        "",
        &mut errors,
    );
    assert!(!errors.is_empty(), "a code is a string");
    let documented: BTreeSet<&str> = doc["components"]["schemas"]["KnownErrorCode"]["enum"]
        .as_array()
        .expect("KnownErrorCode has an enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let emitted: BTreeSet<&str> = anonymizer::error_code::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let undocumented: Vec<_> = emitted.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "codes the service emits but openapi.yaml does not list: {undocumented:?}"
    );
    let unknown: Vec<_> = documented.difference(&emitted).collect();
    assert!(
        unknown.is_empty(),
        "codes openapi.yaml lists but the service never emits: {unknown:?}"
    );
    let described = doc["components"]["schemas"]["KnownErrorCode"]["description"]
        .as_str()
        .unwrap_or_default();
    for code in &documented {
        assert!(
            described.contains(&format!("`{code}`")),
            "{code} undescribed"
        );
    }
}

#[test]
fn spec_enums_match_the_engine() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    let metrics: Vec<&str> = schemas["Metric"]["enum"]
        .as_array()
        .expect("Metric enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let engine: Vec<&str> = anonymizer::core::loss::MetricKind::ALL
        .iter()
        .map(|m| m.name())
        .collect();
    assert_eq!(metrics, engine);
    let mut algorithms: Vec<&str> = schemas["Algorithm"]["discriminator"]["mapping"]
        .as_object()
        .expect("Algorithm mapping")
        .keys()
        .map(String::as_str)
        .collect();
    algorithms.sort_unstable();
    assert_eq!(
        algorithms,
        [
            "best_first",
            "datafly",
            "exhaustive",
            "flash",
            "fragmentation",
            "genetic",
            "hybrid",
            "incognito",
            "k_assemble",
            "k_member",
            "lightning",
            "mdav",
            "mondrian",
            "ola",
            "optimal",
            "pair_enum",
            "samarati",
            "top_down"
        ]
    );
    // the documented privacy models are the registry's, no more and no fewer
    let mut models: Vec<&str> = schemas["PrivacyModel"]["discriminator"]["mapping"]
        .as_object()
        .expect("PrivacyModel mapping")
        .keys()
        .map(String::as_str)
        .collect();
    models.sort_unstable();
    let mut registry = anonymizer::domain::models::PrivacyModelSpec::TYPES.to_vec();
    registry.sort_unstable();
    assert_eq!(models, registry);
    // Each documented algorithm parses as a spec algorithm (with its required fields).
    for a in &algorithms {
        let required = if *a == "fragmentation" {
            r#", "class": "c""#
        } else {
            ""
        };
        let spec = format!(
            r#"{{"attributes": {{}}, "privacy_models": [], "algorithm": {{"type": "{a}"{required}}}}}"#
        );
        assert!(
            anonymizer::domain::JobSpec::from_json(spec.as_bytes()).is_ok(),
            "{a}"
        );
    }
}

#[test]
fn request_examples_parse_as_job_specs() {
    let doc = document();
    let examples = doc["paths"]["/v1/jobs"]["post"]["requestBody"]["content"]["application/json"]
        ["examples"]
        .as_object()
        .expect("job examples");
    assert!(!examples.is_empty());
    for (name, example) in examples {
        let mut value = example["value"].clone();
        let object = value.as_object_mut().expect("an object");
        assert!(object.remove("dataset_id").is_some(), "{name}");
        let bytes = serde_json::to_vec(&value).expect("serializable");
        if let Err(e) = anonymizer::domain::JobSpec::from_json(&bytes) {
            panic!("example {name}: {e}");
        }
    }
}

// ---- example validation ----

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(expected: &str, v: &Value) -> bool {
    let actual = json_type(v);
    expected == actual
        || (expected == "number" && actual == "integer")
        || (expected == "integer"
            && actual == "number"
            && v.as_f64().is_some_and(|f| f.fract() == 0.0))
}

/// Property names a schema (with its `$ref` and `allOf`) declares.
fn declared_properties(doc: &Value, schema: &Value, out: &mut BTreeSet<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        if let Some(target) = resolve(doc, r) {
            declared_properties(doc, target, out);
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.extend(props.keys().cloned());
    }
    for sub in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        declared_properties(doc, sub, out);
    }
}

/// Appends to `errors` every way `value` breaks `schema` (the subset of JSON Schema this file uses).
fn validate(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        match resolve(doc, r) {
            Some(target) => validate(doc, target, value, at, errors),
            None => errors.push(format!("{at}: unresolved {r}")),
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) if !type_matches(t, value) => {
            errors.push(format!("{at}: expected {t}, found {}", json_type(value)));
            return;
        }
        Some(Value::Array(ts))
            if !ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| type_matches(t, value)) =>
        {
            errors.push(format!(
                "{at}: expected one of {ts:?}, found {}",
                json_type(value)
            ));
            return;
        }
        _ => {}
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            errors.push(format!("{at}: expected {c}, found {value}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            errors.push(format!("{at}: {value} is not one of the enum"));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            if n < min {
                errors.push(format!("{at}: {n} < minimum {min}"));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            if n > max {
                errors.push(format!("{at}: {n} > maximum {max}"));
            }
        }
    }
    if let Value::Object(map) = value {
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !map.contains_key(key) {
                errors.push(format!("{at}: missing required key {key}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, v) in map {
            match props.and_then(|p| p.get(k)) {
                Some(sub) => validate(doc, sub, v, &format!("{at}/{k}"), errors),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        errors.push(format!("{at}: unexpected key {k}"));
                    }
                    Some(sub @ Value::Object(_)) => {
                        validate(doc, sub, v, &format!("{at}/{k}"), errors)
                    }
                    _ => {}
                },
            }
        }
        if schema.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
            let mut declared = BTreeSet::new();
            declared_properties(doc, schema, &mut declared);
            for k in map.keys().filter(|k| !declared.contains(*k)) {
                errors.push(format!("{at}: unevaluated key {k}"));
            }
        }
    }
    if let Value::Array(items) = value {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
            if (items.len() as u64) < min {
                errors.push(format!("{at}: fewer than {min} items"));
            }
        }
        if let Some(sub) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                validate(doc, sub, item, &format!("{at}/{i}"), errors);
            }
        }
    }
    for sub in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        validate(doc, sub, value, at, errors);
    }
    if let Some(options) = schema.get("anyOf").and_then(Value::as_array) {
        let matches = |sub: &&Value| {
            let mut e = Vec::new();
            validate(doc, sub, value, at, &mut e);
            e.is_empty()
        };
        if !options.iter().any(|sub| matches(&sub)) {
            errors.push(format!("{at}: matches no anyOf alternative"));
        }
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = options
            .iter()
            .filter(|sub| {
                let mut e = Vec::new();
                validate(doc, sub, value, at, &mut e);
                e.is_empty()
            })
            .count();
        if matching != 1 {
            errors.push(format!("{at}: matches {matching} oneOf alternatives"));
        }
    }
}

/// Every (example, schema, location) in the document: schema examples, and the examples of media types,
/// parameters and headers against their `schema`.
fn examples(doc: &Value) -> Vec<(Value, Value, String)> {
    fn walk(v: &Value, at: &str, out: &mut Vec<(Value, Value, String)>) {
        let Value::Object(map) = v else {
            if let Value::Array(items) = v {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}/{i}"), out);
                }
            }
            return;
        };
        let own_schema = map.get("schema").cloned();
        let is_schema = own_schema.is_none()
            && [
                "type",
                "properties",
                "$ref",
                "allOf",
                "oneOf",
                "anyOf",
                "enum",
            ]
            .iter()
            .any(|k| map.contains_key(*k));
        let target = own_schema.or_else(|| is_schema.then(|| v.clone()));
        if let Some(schema) = target {
            if let Some(example) = map.get("example") {
                out.push((example.clone(), schema.clone(), format!("{at}/example")));
            }
            match map.get("examples") {
                Some(Value::Object(named)) => {
                    for (name, ex) in named {
                        let value = ex.get("value").cloned().unwrap_or(Value::Null);
                        out.push((value, schema.clone(), format!("{at}/examples/{name}")));
                    }
                }
                Some(Value::Array(list)) => {
                    for (i, ex) in list.iter().enumerate() {
                        out.push((ex.clone(), schema.clone(), format!("{at}/examples/{i}")));
                    }
                }
                _ => {}
            }
        }
        for (k, child) in map {
            if k != "example" && k != "examples" {
                walk(child, &format!("{at}/{k}"), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(doc, "", &mut out);
    out
}

#[test]
fn every_example_is_valid_against_its_schema() {
    let doc = document();
    let all = examples(&doc);
    assert!(all.len() > 30, "only {} examples found", all.len());
    let mut errors = Vec::new();
    for (example, schema, at) in &all {
        validate(&doc, schema, example, at, &mut errors);
    }
    assert!(
        errors.is_empty(),
        "invalid examples:\n{}",
        errors.join("\n")
    );
}

#[test]
fn the_validator_catches_broken_examples() {
    let doc = document();
    let problem = serde_json::json!({"$ref": "#/components/schemas/Problem"});
    let mut errors = Vec::new();
    validate(
        &doc,
        &problem,
        &serde_json::json!({"type": "x", "title": "t", "status": 422, "code": 42}),
        "",
        &mut errors,
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("missing required key detail")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("matches no anyOf alternative")),
        "{errors:?}"
    );
    let known = serde_json::json!({"$ref": "#/components/schemas/KnownErrorCode"});
    let mut errors = Vec::new();
    validate(
        &doc,
        &known,
        &serde_json::json!("no_such_code"),
        "",
        &mut errors,
    );
    assert!(
        errors.iter().any(|e| e.contains("not one of the enum")),
        "{errors:?}"
    );
    let request = serde_json::json!({"$ref": "#/components/schemas/JobRequest"});
    let mut errors = Vec::new();
    validate(
        &doc,
        &request,
        &serde_json::json!({"dataset_id": "d", "attributes": {}, "privacy_models": [{"type": "k_anonymity", "k": 0}], "metrc": "x", "algorithm": {"type": "annealing"}}),
        "",
        &mut errors,
    );
    assert!(
        errors.iter().any(|e| e.contains("unevaluated key metrc")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("/privacy_models/0: matches 0")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("/algorithm: matches 0")),
        "{errors:?}"
    );
    let k = serde_json::json!({"$ref": "#/components/schemas/KAnonymity"});
    let mut errors = Vec::new();
    validate(
        &doc,
        &k,
        &serde_json::json!({"type": "k_anonymity", "k": 0, "l": 2}),
        "",
        &mut errors,
    );
    assert!(
        errors.iter().any(|e| e.contains("< minimum 1")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("unexpected key l")),
        "{errors:?}"
    );
    let job = serde_json::json!({"$ref": "#/components/schemas/Job"});
    let mut errors = Vec::new();
    validate(
        &doc,
        &job,
        &serde_json::json!({"id": "j", "dataset_id": "d", "state": "done", "attempt": 1.5, "created_at": "t", "updated_at": "t", "failure": {"code": "no_solution"}}),
        "",
        &mut errors,
    );
    assert!(errors.iter().any(|e| e.contains("/state")), "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/attempt: expected integer")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("/failure: matches 0")),
        "{errors:?}"
    );
}

// ---- router agreement ----

#[tokio::test]
async fn the_router_serves_the_documented_routes() {
    use axum::body::Body;
    use axum::http::{Method, Request, StatusCode};
    use tower::ServiceExt;

    let doc = document();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
    let store = anonymizer::store::Store::connect(&url, 1)
        .await
        .expect("a SQLite store");
    store.migrate().await.expect("migrations");
    let mut missing = BTreeSet::new();
    for (method, path, _) in operations(&doc) {
        let uri = path.replace("{id}", "00000000-0000-4000-8000-000000000000");
        let request = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).expect("a method"))
            .uri(uri)
            .body(Body::empty())
            .expect("a request");
        let response = anonymizer::http::app(anonymizer::http::AppState::new(store.clone()))
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("a body");
        let unrouted = status == StatusCode::METHOD_NOT_ALLOWED
            || (status == StatusCode::NOT_FOUND
                && serde_json::from_slice::<Value>(&body)
                    .is_ok_and(|b| b["detail"] == "no such route"));
        if unrouted {
            missing.insert(format!("{method} {path}"));
        }
    }
    assert!(missing.is_empty(), "documented but not routed: {missing:?}");
}
