//! Risk-threshold privacy models through whole runs: `highest_risk` publishes what k-anonymity with
//! k = ⌈1 / threshold⌉ publishes, for a lattice search and for a local recoding, and its mistakes are
//! refused with their codes.

use super::*;
use crate::codec::CsvOptions;
use crate::core::control::NoControl;
use crate::error_code::ErrorCode;

/// 60 records over age (30 values) and sex.
fn table() -> Table {
    let rows: Vec<Vec<String>> = (0..60)
        .map(|i| {
            vec![
                (20 + (i * 7) % 30).to_string(),
                ["F", "M"][i % 2].to_string(),
            ]
        })
        .collect();
    let refs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    Table::from_rows(&["age", "sex"], &refs)
}

fn spec(model: &str, algorithm: &str) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{
              "age": {{"role": "quasi_identifier", "data_type": "numeric",
                       "hierarchy": {{"builder": {{"type": "interval", "width": 5, "fanouts": [2, 3]}}}}}},
              "sex": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "categories", "levels": []}}}}}}}},
            "privacy_models": [{model}],
            "suppression_limit": {},
            "algorithm": {algorithm}}}"#,
        if algorithm.contains("mondrian") {
            0.0
        } else {
            0.05
        }
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

fn output(spec: &JobSpec) -> (Vec<u8>, Report) {
    let table = table();
    let done = run_job(&table, spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    let mut bytes = Vec::new();
    done.write_csv(&mut bytes, &CsvOptions::default()).unwrap();
    (bytes, done.report())
}

#[test]
fn highest_risk_publishes_what_its_k_anonymity_publishes() {
    for algorithm in [r#"{"type": "exhaustive"}"#, r#"{"type": "mondrian"}"#] {
        for (threshold, k) in [(0.2, 5), (0.3, 4), (0.1, 10)] {
            let risk = spec(
                &format!(r#"{{"type": "highest_risk", "threshold": {threshold}}}"#),
                algorithm,
            );
            let anonymity = spec(
                &format!(r#"{{"type": "k_anonymity", "k": {k}}}"#),
                algorithm,
            );
            let (published, report) = output(&risk);
            assert_eq!(published, output(&anonymity).0, "{algorithm} {threshold}");
            assert!(
                report.equivalence_classes.min >= k,
                "{algorithm} {threshold}"
            );
            assert!(
                report.risk.after.prosecutor.highest <= threshold,
                "{algorithm} {threshold}: {}",
                report.risk.after.prosecutor.highest
            );
            assert!(
                report.privacy_models[0].contains("highest prosecutor risk"),
                "{:?}",
                report.privacy_models
            );
        }
    }
}

#[test]
fn highest_risk_refuses_thresholds_outside_the_unit_interval_and_beyond_the_table() {
    for (threshold, code) in [
        ("0", ErrorCode::InvalidThreshold),
        ("1.5", ErrorCode::InvalidThreshold),
        ("-0.2", ErrorCode::InvalidThreshold),
        ("0.01", ErrorCode::KExceedsRows),
    ] {
        let json = format!(r#"{{"type": "highest_risk", "threshold": {threshold}}}"#);
        let error = prepare(&table(), &spec(&json, r#"{"type": "flash"}"#), &|_| {
            Err("inline only".into())
        })
        .unwrap_err();
        assert_eq!(error.code, code, "{threshold}");
        assert_eq!(error.pointer, "/privacy_models/0/threshold", "{threshold}");
    }
}
