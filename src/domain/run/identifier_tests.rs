//! Identifier operators through whole runs: the published columns, their place in the output, the
//! report's section and warnings, for a full-domain search and a local recoding.

use super::*;
use crate::codec::CsvOptions;
use crate::core::control::NoControl;
use crate::core::identifiers::PseudonymKey;
use crate::domain::prepare;

/// 24 records, two zip classes; `mrn`, `phone` and `name` unique.
fn table() -> Table {
    let rows: Vec<Vec<String>> = (0..24)
        .map(|i| {
            vec![
                format!("MRN-{i:04}"),
                ["1301", "1302"][i % 2].to_string(),
                format!("555-867-53{i:02}"),
                format!("Patient {i}"),
            ]
        })
        .collect();
    let refs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    Table::from_rows(&["mrn", "zip", "phone", "name"], &refs)
}

fn spec(algorithm: &str, operators: [&str; 3]) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{
              "mrn": {{"role": "identifying", "operator": {}}},
              "zip": {{"role": "quasi_identifier", "data_type": "numeric",
                       "hierarchy": {{"levels": [["1301", "130*", "*"], ["1302", "130*", "*"]]}}}},
              "phone": {{"role": "identifying", "operator": {}}},
              "name": {{"role": "identifying", "operator": {}}}}},
            "privacy_models": [{{"type": "k_anonymity", "k": 3}}],
            "algorithm": {algorithm}}}"#,
        operators[0], operators[1], operators[2]
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

/// Runs `spec` on `table` with pseudonyms under `key` (inline hierarchies only).
fn run_keyed<'t>(table: &'t Table, spec: &JobSpec, key: &PseudonymKey) -> Completed<'t> {
    run_job_with_key(
        table,
        spec,
        &|_| Err("inline only".into()),
        &NoControl,
        Some(key),
    )
    .unwrap()
}

fn csv(done: &Completed<'_>) -> Vec<Vec<String>> {
    let mut bytes = Vec::new();
    done.write_csv(&mut bytes, &CsvOptions::default()).unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn operated_identifiers_are_published_in_table_order() {
    let key = PseudonymKey::new(&[5; 32]).unwrap();
    let table = table();
    for algorithm in [r#"{"type": "exhaustive"}"#, r#"{"type": "mondrian"}"#] {
        let spec = spec(
            algorithm,
            [
                r#"{"type": "pseudonym"}"#,
                r#"{"type": "mask", "keep": 2}"#,
                r#"{"type": "drop"}"#,
            ],
        );
        let done = run_keyed(&table, &spec, &key);
        let rows = csv(&done);
        assert_eq!(rows[0], ["mrn", "zip", "phone"], "{algorithm}");
        let mut tokens: Vec<String> = Vec::new();
        for row in &rows[1..] {
            tokens.push(row[0].clone());
            assert_eq!(row[2].len(), 12, "{algorithm}");
            assert!(row[2].starts_with("**********"), "{algorithm}");
        }
        // every record's pseudonym is one of the values' pseudonyms, each once
        let mut expected: Vec<String> = (0..24)
            .map(|i| key.pseudonym(&format!("MRN-{i:04}")))
            .collect();
        expected.sort();
        tokens.sort();
        assert_eq!(tokens, expected, "{algorithm}");
        let report = done.report();
        let operators: Vec<(&str, &str, bool)> = report
            .identifiers
            .iter()
            .map(|i| (i.column.as_str(), i.operator, i.key_fingerprint.is_some()))
            .collect();
        assert_eq!(
            operators,
            [
                ("mrn", "pseudonym", true),
                ("phone", "mask", false),
                ("name", "drop", false)
            ],
            "{algorithm}"
        );
        assert_eq!(
            report.identifiers[0].key_fingerprint.as_deref(),
            Some(key.fingerprint().as_str())
        );
        // the phone numbers keep 2 of 12 characters, which still tells the records apart
        let codes: Vec<&str> = report.warnings.iter().map(|w| w.code).collect();
        assert!(
            codes.contains(&"near_unique_mask"),
            "{algorithm}: {codes:?}"
        );
        assert!(
            !codes.contains(&"near_unique_column"),
            "{algorithm}: {codes:?}"
        );
        let json = serde_json::to_string(&report).unwrap();
        assert!(!json.contains("MRN-") && !json.contains("555-"), "{json}");
    }
}

#[test]
fn a_constant_and_a_coarse_mask_raise_no_warning_and_pseudonyms_need_a_key() {
    let table = table();
    let spec = spec(
        r#"{"type": "exhaustive"}"#,
        [
            r#"{"type": "replace", "value": "REDACTED"}"#,
            r#"{"type": "mask", "keep": 0, "fill": "X"}"#,
            r#"{"type": "pseudonym"}"#,
        ],
    );
    let error = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap_err();
    match error {
        RunError::Spec(e) => {
            assert_eq!(e.code, crate::error_code::ErrorCode::PseudonymKeyMissing);
            assert_eq!(e.pointer, "/attributes/name/operator");
        }
        other => panic!("{other}"),
    }
    let key = PseudonymKey::new(&[6; 32]).unwrap();
    let done = run_keyed(&table, &spec, &key);
    let rows = csv(&done);
    assert_eq!(rows[0], ["mrn", "zip", "phone", "name"]);
    assert!(rows[1..]
        .iter()
        .all(|r| r[0] == "REDACTED" && r[2] == "XXXXXXXXXXXX"));
    let codes: Vec<&str> = done.report().warnings.iter().map(|w| w.code).collect();
    assert!(!codes.contains(&"near_unique_mask"), "{codes:?}");
    assert!(!codes.contains(&"near_unique_column"), "{codes:?}");
}

#[test]
fn an_operator_outside_an_identifying_column_is_refused() {
    let json = r#"{"attributes": {
          "mrn": {"role": "insensitive", "operator": {"type": "pseudonym"}},
          "zip": {"role": "quasi_identifier",
                  "hierarchy": {"levels": [["1301", "130*", "*"], ["1302", "130*", "*"]]}},
          "phone": {"role": "identifying"}, "name": {"role": "identifying"}},
        "privacy_models": [{"type": "k_anonymity", "k": 3}]}"#;
    let spec = JobSpec::from_json(json.as_bytes()).unwrap();
    let error = prepare(&table(), &spec, &|_| Err("inline only".into())).unwrap_err();
    assert_eq!(error.pointer, "/attributes/mrn/operator");
    assert_eq!(error.code, crate::error_code::ErrorCode::InvalidParameter);
}

/// One record of zip 1309 among 23 of 1301/1302: 3-anonymity suppresses it at the bottom node. Its
/// identifiers show `*` when suppressed records are masked, and it is gone when they are removed.
#[test]
fn suppressed_records_show_no_identifier() {
    let rows: Vec<Vec<String>> = (0..24)
        .map(|i| {
            let zip = if i == 23 {
                "1309"
            } else {
                ["1301", "1302"][i % 2]
            };
            vec![format!("MRN-{i:04}"), zip.to_string()]
        })
        .collect();
    let refs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    let table = Table::from_rows(&["mrn", "zip"], &refs);
    let key = PseudonymKey::new(&[8; 32]).unwrap();
    for (mode, published) in [("mask", 24), ("remove", 23)] {
        let json = format!(
            r#"{{"attributes": {{
                  "mrn": {{"role": "identifying", "operator": {{"type": "pseudonym"}}}},
                  "zip": {{"role": "quasi_identifier", "hierarchy": {{"levels":
                      [["1301", "130*", "*"], ["1302", "130*", "*"], ["1309", "130*", "*"]]}}}}}},
                "privacy_models": [{{"type": "k_anonymity", "k": 3}}],
                "suppression_limit": 0.1, "suppressed_records": "{mode}",
                "algorithm": {{"type": "exhaustive"}}}}"#
        );
        let spec = JobSpec::from_json(json.as_bytes()).unwrap();
        let done = run_keyed(&table, &spec, &key);
        assert_eq!(done.outcome().unwrap().transformation, [0], "{mode}");
        let rows = csv(&done);
        assert_eq!(rows.len() - 1, published, "{mode}");
        for row in &rows[1..] {
            if row[1] == "*" {
                assert_eq!(row[0], "*", "{mode}: a suppressed record's pseudonym");
            } else {
                assert_eq!(row[0].len(), 32, "{mode}");
            }
        }
        let hidden = key.pseudonym("MRN-0023");
        assert!(rows.iter().all(|r| r[0] != hidden), "{mode}");
    }
}

#[test]
fn fragmentation_only_drops_identifiers() {
    let table = table();
    let json = r#"{"attributes": {
          "mrn": {"role": "identifying", "operator": {"type": "mask"}},
          "zip": {"role": "quasi_identifier",
                  "hierarchy": {"levels": [["1301", "130*", "*"], ["1302", "130*", "*"]]}},
          "phone": {"role": "identifying"}, "name": {"role": "sensitive"}},
        "privacy_models": [{"type": "k_anonymity", "k": 3}],
        "algorithm": {"type": "fragmentation", "class": "name"}}"#;
    let spec = JobSpec::from_json(json.as_bytes()).unwrap();
    let error = prepare(&table, &spec, &|_| Err("inline only".into())).unwrap_err();
    assert!(
        error.all().any(|e| e.pointer == "/attributes/mrn/operator"
            && e.code == crate::error_code::ErrorCode::UnsupportedOption),
        "{error:?}"
    );
}
