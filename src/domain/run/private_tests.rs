//! Differentially private jobs (SafePub) through whole runs: the published table is a sample whose
//! classes all hold k records, the report states a guarantee that is recomputed here from its k and
//! sampling probability, and specs the guarantee would not cover are refused with their codes.

use super::*;
use crate::codec::CsvOptions;
use crate::core::control::NoControl;
use crate::core::differential::parameters::tests::delta_by_definition;
use crate::domain::prepare;
use crate::error_code::ErrorCode;

/// 800 records over age (40 values) and sex.
fn table() -> Table {
    let rows: Vec<Vec<String>> = (0..800)
        .map(|i| {
            vec![
                (20 + (i * 7) % 40).to_string(),
                ["F", "M"][i % 2].to_string(),
            ]
        })
        .collect();
    super::model_tests::table_of(&["age", "sex"], &rows)
}

fn spec(model: &str, extra: &str) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{
              "age": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "interval", "width": 5, "fanouts": [2, 2]}}}}}},
              "sex": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "categories", "levels": []}}}}}}}},
            "privacy_models": [{model}]{extra}}}"#
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

const PRIVATE: &str = r#"{"type": "differential_privacy", "epsilon": 1.0, "delta": 0.001}"#;

fn problem(spec: &JobSpec) -> (String, ErrorCode) {
    let e = prepare(&table(), spec, &|_| Err("inline only".into())).unwrap_err();
    (e.pointer.clone(), e.code)
}

#[test]
fn publishes_a_sample_of_classes_of_k_and_states_a_guarantee_that_recomputes() {
    let table = table();
    let spec = spec(PRIVATE, "");
    for _ in 0..3 {
        let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
        let report = done.report();
        let private = report.differential_privacy.clone().expect("section");
        assert!(private.randomized);
        assert_eq!(private.input_records, 800);
        assert_eq!(report.records, private.sampled_records);
        assert!(report.suppressed_records_removed);
        assert_eq!(report.search.as_ref().map(|s| s.algorithm), Some("safepub"));
        assert_eq!(report.search.as_ref().map(|s| s.exact), Some(false));
        // every published class holds k records; suppressed records are left out
        assert!(report.equivalence_classes.min >= private.k || report.published_records == 0);
        let mut bytes = Vec::new();
        done.write_csv(&mut bytes, &CsvOptions::default()).unwrap();
        let lines = String::from_utf8(bytes).unwrap().lines().count() as u64 - 1;
        assert_eq!(lines, report.published_records);
        assert_eq!(
            report.published_records + report.suppressed_records,
            private.sampled_records
        );
        // the sample is about β of the records (binomial: 5 standard deviations)
        let beta = private.sampling_probability;
        let sd = (800.0 * beta * (1.0 - beta)).sqrt();
        assert!((private.sampled_records as f64 - 800.0 * beta).abs() <= 5.0 * sd);
        // the guarantee recomputed: β = 1 − e^(−ε_anon), ε_anon + ε_search = ε, δ(k) ≤ δ
        let epsilon_anon = -(1.0 - beta).ln();
        assert!((epsilon_anon + private.search_budget - private.epsilon).abs() < 1e-9);
        let delta = delta_by_definition(private.k, epsilon_anon, beta, 3000);
        assert!(delta <= private.delta, "δ({}) = {delta}", private.k);
        assert!((delta - private.delta_at_k).abs() <= 1e-9 * delta.max(1e-300));
        // the builders' hierarchies are named and warned about
        assert_eq!(private.hierarchies_from_data, vec!["age", "sex"]);
        assert!(report
            .warnings
            .iter()
            .any(|w| w.code == "hierarchy_from_data"));
    }
}

#[test]
fn a_sample_smaller_than_k_is_refused_with_its_sizes() {
    // k + 2 records: a sample of about 0.6 of them almost never holds k; whatever the draw, a run
    // either publishes classes of k or fails with too_few_records
    let k = crate::core::differential::parameters::safe_parameters(0.9, 1e-3)
        .expect("parameters")
        .k as usize;
    let rows: Vec<Vec<String>> = (0..k + 2)
        .map(|i| vec![(20 + i % 40).to_string(), ["F", "M"][i % 2].to_string()])
        .collect();
    let table = super::model_tests::table_of(&["age", "sex"], &rows);
    let spec = spec(PRIVATE, "");
    let mut refused = 0;
    for _ in 0..5 {
        match run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl) {
            Ok(done) => {
                let report = done.report();
                let k = report.differential_privacy.as_ref().expect("section").k;
                assert!(report.equivalence_classes.min >= k || report.published_records == 0);
            }
            Err(RunError::Core(e)) => {
                assert_eq!(ErrorCode::of_core(&e), ErrorCode::TooFewRecords, "{e}");
                assert!(
                    e.to_string().contains(&format!("of the {} records", k + 2)),
                    "{e}"
                );
                refused += 1;
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert!(refused > 0);
}

#[test]
fn refuses_what_the_guarantee_would_not_cover() {
    let combined = spec(
        &format!(r#"{PRIVATE}, {{"type": "k_anonymity", "k": 5}}"#),
        "",
    );
    assert_eq!(
        problem(&combined),
        ("/privacy_models/1".into(), ErrorCode::UnsupportedModel)
    );
    let algorithm = spec(PRIVATE, r#", "algorithm": {"type": "flash"}"#);
    assert_eq!(
        problem(&algorithm),
        ("/algorithm".into(), ErrorCode::UnsupportedModel)
    );
    let metric = spec(PRIVATE, r#", "metric": "height""#);
    assert_eq!(
        problem(&metric),
        ("/metric".into(), ErrorCode::UnsupportedOption)
    );
    let json = format!(
        r#"{{"attributes": {{
              "age": {{"role": "sensitive"}},
              "sex": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "categories", "levels": []}}}}}}}},
            "privacy_models": [{PRIVATE}]}}"#
    );
    let sensitive = JobSpec::from_json(json.as_bytes()).unwrap();
    assert_eq!(
        problem(&sensitive),
        ("/attributes/age/role".into(), ErrorCode::UnsupportedModel)
    );
    // an identifying column published through an operator
    let rows: Vec<Vec<String>> = (0..800)
        .map(|i| {
            vec![
                format!("MRN{i}"),
                (20 + i % 40).to_string(),
                ["F", "M"][i % 2].to_string(),
            ]
        })
        .collect();
    let with_mrn = super::model_tests::table_of(&["mrn", "age", "sex"], &rows);
    let json = format!(
        r#"{{"attributes": {{
              "mrn": {{"role": "identifying", "operator": {{"type": "replace", "value": "x"}}}},
              "age": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "interval", "width": 5, "fanouts": [2, 2]}}}}}},
              "sex": {{"role": "quasi_identifier",
                       "hierarchy": {{"builder": {{"type": "categories", "levels": []}}}}}}}},
            "privacy_models": [{PRIVATE}]}}"#
    );
    let operated = JobSpec::from_json(json.as_bytes()).unwrap();
    let e = prepare(&with_mrn, &operated, &|_| Err("inline only".into())).unwrap_err();
    assert_eq!(
        (e.pointer.as_str(), e.code),
        ("/attributes/mrn/operator", ErrorCode::UnsupportedOption)
    );
}

#[test]
fn checks_its_parameters() {
    for (model, pointer, code) in [
        (
            r#"{"type": "differential_privacy", "epsilon": 0, "delta": 0.001}"#,
            "/privacy_models/0/epsilon",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "differential_privacy", "epsilon": 1, "delta": 1}"#,
            "/privacy_models/0/delta",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "differential_privacy", "epsilon": 1, "delta": 0.001, "search_budget": 1}"#,
            "/privacy_models/0/search_budget",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "differential_privacy", "epsilon": 1, "delta": 0.001, "steps": 0}"#,
            "/privacy_models/0/steps",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "differential_privacy", "epsilon": 11, "delta": 0.001}"#,
            "/privacy_models/0/epsilon",
            ErrorCode::InvalidParameter,
        ),
        // ε 1 and δ 1e-80 need classes larger than the table
        (
            r#"{"type": "differential_privacy", "epsilon": 1, "delta": 1e-80}"#,
            "/privacy_models/0",
            ErrorCode::KExceedsRows,
        ),
    ] {
        assert_eq!(problem(&spec(model, "")), (pointer.into(), code), "{model}");
    }
}
