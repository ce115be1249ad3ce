//! MDAV through whole runs: numeric quasi-identifiers publish their group's centroid, categorical ones
//! their group's lowest common label, every published class holds k records (the verifier checks it on
//! the published texts), the report gives SSE/SST, and specs MDAV cannot run are refused.

use super::*;
use crate::codec::CsvOptions;
use crate::core::control::NoControl;
use crate::domain::prepare;
use crate::error_code::ErrorCode;

/// 60 records: age 20–79 (one each), income age × 100 + 7, sex alternating.
fn table() -> Table {
    let rows: Vec<Vec<String>> = (0..60)
        .map(|i| {
            vec![
                (20 + i).to_string(),
                ((20 + i) * 100 + 7).to_string(),
                ["F", "M"][i % 2].to_string(),
            ]
        })
        .collect();
    super::model_tests::table_of(&["age", "income", "sex"], &rows)
}

fn spec(models: &str, age: &str) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{
              "age": {age},
              "income": {{"role": "quasi_identifier", "data_type": "numeric"}},
              "sex": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "categories", "levels": []}}}}}}}},
            "privacy_models": [{models}],
            "algorithm": {{"type": "mdav"}}}}"#
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

const NUMERIC: &str = r#"{"role": "quasi_identifier", "data_type": "numeric"}"#;

#[test]
fn publishes_centroids_in_classes_of_k_and_reports_sse_sst() {
    let table = table();
    let spec = spec(r#"{"type": "k_anonymity", "k": 4}"#, NUMERIC);
    let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    let mut bytes = Vec::new();
    done.write_csv(&mut bytes, &CsvOptions::default()).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let mut classes: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("age,income,sex"));
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let age: f64 = cells[0].parse().expect("a centroid is a number");
        let income: f64 = cells[1].parse().expect("a centroid is a number");
        // income is age × 100 + 7 on every record, so on every centroid too
        assert!((income - (age * 100.0 + 7.0)).abs() < 1e-6, "{line}");
        *classes.entry(line).or_default() += 1;
    }
    // 60 ages one apart: 15 groups of four consecutive ages, whose centroids are all distinct
    assert_eq!(classes.len(), 15);
    assert!(classes.values().all(|&n| n == 4), "{classes:?}");
    assert!(
        classes.keys().any(|l| l.starts_with("21.5,2157,")),
        "{classes:?}"
    );
    let report = done.report();
    assert_eq!(report.equivalence_classes.min, 4);
    let details = &report.recoding.as_ref().expect("recoding").details;
    let ratio = details["sse_sst"].as_f64().expect("sse_sst");
    // groups of 4 consecutive values: within-group variance 1.25 of a total 299.92 per attribute
    let expected = 1.25 / ((60.0 * 60.0 - 1.0) / 12.0);
    assert!((ratio - expected).abs() < 1e-9, "{ratio} vs {expected}");
    assert_eq!(report.recoding.as_ref().map(|r| r.algorithm), Some("mdav"));
    // centroids cannot be read back as generalizations: assessing the output says so
    let prepared = prepare(&table, &spec, &|_| Err("inline only".into())).unwrap();
    let e = crate::domain::analysis::published::assess_published(&table, &table, &prepared)
        .unwrap_err();
    assert_eq!(
        (e.pointer.as_str(), e.code),
        ("/algorithm", ErrorCode::UnsupportedOption)
    );
}

/// Groups whose centroids read the same are one published class: ages that repeat in runs of four
/// give groups of equal centroids, which the report counts as one class each.
#[test]
fn groups_with_equal_centroids_are_one_class() {
    let rows: Vec<Vec<String>> = (0..48)
        .map(|i| {
            vec![
                (20 + (i / 8) * 10).to_string(),
                ((i / 8) * 100).to_string(),
                "F".into(),
            ]
        })
        .collect();
    let table = super::model_tests::table_of(&["age", "income", "sex"], &rows);
    let spec = spec(r#"{"type": "k_anonymity", "k": 4}"#, NUMERIC);
    let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    let report = done.report();
    // six values, eight records each: 12 groups of four, two per value, published as 6 classes of 8
    assert_eq!(report.recoding.as_ref().map(|r| r.groups), Some(12));
    assert_eq!(report.equivalence_classes.count, 6);
    assert_eq!(report.equivalence_classes.min, 8);
}

#[test]
fn refuses_what_mdav_cannot_run() {
    let table = table();
    let problem = |spec: &JobSpec| {
        let e = prepare(&table, spec, &|_| Err("inline only".into())).unwrap_err();
        (e.pointer.clone(), e.code)
    };
    let json = r#"{"attributes": {
          "age": {"role": "quasi_identifier", "data_type": "numeric"},
          "income": {"role": "sensitive"},
          "sex": {"role": "quasi_identifier",
                  "hierarchy": {"builder": {"type": "categories", "levels": []}}}},
        "privacy_models": [{"type": "k_anonymity", "k": 4},
                           {"type": "distinct_l_diversity", "attribute": "income", "l": 2}],
        "algorithm": {"type": "mdav"}}"#;
    let diversity = JobSpec::from_json(json.as_bytes()).unwrap();
    assert_eq!(
        problem(&diversity),
        ("/privacy_models/1".into(), ErrorCode::UnsupportedModel)
    );
    let json = r#"{"attributes": {
          "age": {"role": "insensitive"}, "income": {"role": "insensitive"},
          "sex": {"role": "quasi_identifier",
                  "hierarchy": {"builder": {"type": "categories", "levels": []}}}},
        "privacy_models": [{"type": "k_anonymity", "k": 4}],
        "algorithm": {"type": "mdav"}}"#;
    let categorical = JobSpec::from_json(json.as_bytes()).unwrap();
    assert_eq!(
        problem(&categorical),
        ("/algorithm".into(), ErrorCode::InvalidParameter)
    );
}
