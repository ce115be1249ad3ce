//! Risk-threshold privacy models through whole runs: `highest_risk` publishes what k-anonymity with
//! k = ⌈1 / threshold⌉ publishes, for a lattice search and for a local recoding, and its mistakes are
//! refused with their codes.

use super::*;
use crate::codec::CsvOptions;
use crate::core::control::NoControl;
use crate::domain::prepare;
use crate::error_code::ErrorCode;

/// A table of `rows` (owned texts) under `header`.
pub(super) fn table_of(header: &[&str], rows: &[Vec<String>]) -> Table {
    let refs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    Table::from_rows(header, &refs)
}

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
    table_of(&["age", "sex"], &rows)
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

/// Ten records: ages 20, 21 (×2), 22 (×3) and 30–33, generalized by decades then `*`. At the bottom:
/// 7 classes over 10 records (average risk 0.7, 5 uniques); by decades: 2 classes (0.2, no unique).
fn ages() -> Table {
    let ages = ["20", "21", "21", "22", "22", "22", "30", "31", "32", "33"];
    let rows: Vec<Vec<&str>> = ages.iter().map(|a| vec![*a]).collect();
    Table::from_rows(&["age"], &rows)
}

fn ages_spec(models: &str, limit: f64) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{"age": {{"role": "quasi_identifier", "hierarchy": {{"levels": [
              ["20", "20-29", "*"], ["21", "20-29", "*"], ["22", "20-29", "*"],
              ["30", "30-39", "*"], ["31", "30-39", "*"], ["32", "30-39", "*"], ["33", "30-39", "*"]]}}}}}},
            "privacy_models": [{models}], "suppression_limit": {limit},
            "algorithm": {{"type": "exhaustive"}}}}"#
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

#[test]
fn table_risk_thresholds_pick_the_lowest_node_that_meets_them() {
    let table = ages();
    let run = |models: &str, limit: f64| {
        run_job(
            &table,
            &ages_spec(models, limit),
            &|_| Err("inline only".into()),
            &NoControl,
        )
        .map(|done| {
            let report = done.report();
            (done.outcome().unwrap().transformation.clone(), report)
        })
    };
    // 0.7 at the bottom
    let (levels, report) = run(r#"{"type": "average_risk", "threshold": 0.7}"#, 0.0).unwrap();
    assert_eq!(levels, [0]);
    assert_eq!(report.risk.after.prosecutor.average, 0.7);
    let (levels, report) = run(r#"{"type": "average_risk", "threshold": 0.5}"#, 0.0).unwrap();
    assert_eq!(levels, [1]);
    assert!(report.risk.after.prosecutor.average <= 0.5);
    // 5 uniques of 10 at the bottom, none by decades
    let (levels, _) = run(r#"{"type": "sample_uniqueness", "threshold": 0.5}"#, 0.0).unwrap();
    assert_eq!(levels, [0]);
    let (levels, report) = run(r#"{"type": "sample_uniqueness", "threshold": 0.0}"#, 0.0).unwrap();
    assert_eq!(levels, [1]);
    assert_eq!(report.risk.after.sample_uniques, 0.0);
    // with 2-anonymity and 50 % suppression the bottom suppresses the 5 uniques, leaving 2 classes
    // over 5 records (0.4): a solution for 0.4, not for 0.3; decades (0.2, no suppression) lose less
    // by granularity (0.4 against 0.5) and win either way
    for threshold in [0.4, 0.3] {
        let both = format!(
            r#"{{"type": "k_anonymity", "k": 2}}, {{"type": "average_risk", "threshold": {threshold}}}"#
        );
        let (levels, report) = run(&both, 0.5).unwrap();
        assert_eq!(levels, [1]);
        assert_eq!(report.suppressed_records, 0);
        assert_eq!(report.risk.after.prosecutor.average, 0.2);
    }
    // the top meets 0.1: one class of `*` over 10 records, which the verifier counts as a class
    let (levels, report) = run(r#"{"type": "average_risk", "threshold": 0.1}"#, 0.0).unwrap();
    assert_eq!(levels, [2]);
    assert_eq!(report.risk.after.prosecutor.average, 0.1);
    // nothing meets an average risk of 0.05 (the top has 1 class over 10 records)
    assert!(matches!(
        run(r#"{"type": "average_risk", "threshold": 0.05}"#, 0.0),
        Err(RunError::Core(
            crate::core::error::CoreError::NoSolution { .. }
        ))
    ));
}

/// The ages at the bottom form classes of sizes 1, 2, 3, 1, 1, 1, 1: 5 uniques of 10 records.
/// - The table as its own population (10): the population uniques are the sample's, 0.5.
/// - A population of 20 records: Zayatz's model estimates 7.3076923… uniques (`scripts/risk_reference.py`,
///   `zayatz([1, 2, 3, 1, 1, 1, 1], 20)`), a share of 0.365.
/// - By decades (sizes 6 and 4) there is no unique, so every estimate is 0.
#[test]
fn population_uniqueness_picks_the_lowest_node_whose_estimate_meets_it() {
    let table = ages();
    let run = |model: &str| {
        let done = run_job(
            &table,
            &ages_spec(model, 0.0),
            &|_| Err("inline only".into()),
            &NoControl,
        )
        .unwrap();
        let report = done.report();
        (done.outcome().unwrap().transformation.clone(), report)
    };
    let model = |threshold: f64, population: &str| {
        format!(
            r#"{{"type": "population_uniqueness", "threshold": {threshold}, "model": "zayatz", {population}}}"#
        )
    };
    let (levels, report) = run(&model(0.5, r#""population_size": 10"#));
    assert_eq!(levels, [0]);
    let after = &report.risk.after.population_uniques;
    assert_eq!(
        after.population_size, 10,
        "the model's population is the report's"
    );
    assert_eq!(after.dankar.estimate.fraction, Some(0.5));
    assert_eq!(run(&model(0.49, r#""population_size": 10"#)).0, [1]);
    let (levels, report) = run(&model(0.37, r#""sampling_fraction": 0.5"#));
    assert_eq!(levels, [0]);
    let share = report
        .risk
        .after
        .population_uniques
        .zayatz
        .fraction
        .unwrap();
    assert!(
        (share - 7.307_692_307_692_307_7 / 20.0).abs() < 1e-12,
        "{share}"
    );
    let (levels, report) = run(&model(0.36, r#""population_size": 20"#));
    assert_eq!(levels, [1]);
    assert_eq!(
        report.risk.after.population_uniques.zayatz.uniques,
        Some(0.0)
    );
    // the job's own risk section names the report's population
    let json = format!(
        r#"{{"attributes": {{"age": {{"role": "quasi_identifier", "hierarchy": {{"levels": [
              ["20", "20-29", "*"], ["21", "20-29", "*"], ["22", "20-29", "*"],
              ["30", "30-39", "*"], ["31", "30-39", "*"], ["32", "30-39", "*"], ["33", "30-39", "*"]]}}}}}},
            "privacy_models": [{}], "risk": {{"population_size": 40}},
            "algorithm": {{"type": "flash"}}}}"#,
        model(0.37, r#""population_size": 20"#)
    );
    let spec = JobSpec::from_json(json.as_bytes()).unwrap();
    let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    assert_eq!(done.outcome().unwrap().transformation, [0]);
    assert_eq!(
        done.report().risk.after.population_uniques.population_size,
        40
    );
}

#[test]
fn population_uniqueness_needs_a_valid_population_and_threshold() {
    let table = ages();
    for (model, pointer, code) in [
        (
            r#"{"type": "population_uniqueness", "threshold": 0.1}"#,
            "/privacy_models/0",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "population_uniqueness", "threshold": 1.5, "population_size": 100}"#,
            "/privacy_models/0/threshold",
            ErrorCode::InvalidThreshold,
        ),
        (
            r#"{"type": "population_uniqueness", "threshold": 0.1, "population_size": 9}"#,
            "/privacy_models/0/population_size",
            ErrorCode::PopulationTooSmall,
        ),
        (
            r#"{"type": "population_uniqueness", "threshold": 0.1, "sampling_fraction": 0}"#,
            "/privacy_models/0/sampling_fraction",
            ErrorCode::InvalidSamplingFraction,
        ),
        (
            r#"{"type": "population_uniqueness", "threshold": 0.1, "sampling_fraction": 0.5, "population_size": 30}"#,
            "/privacy_models/0",
            ErrorCode::ConflictingPopulation,
        ),
    ] {
        let error = prepare(&table, &ages_spec(model, 0.0), &|_| {
            Err("inline only".into())
        })
        .unwrap_err();
        assert_eq!(
            (error.code, error.pointer.as_str()),
            (code, pointer),
            "{model}"
        );
    }
    assert!(serde_json::from_str::<crate::domain::models::PrivacyModelSpec>(
        r#"{"type": "population_uniqueness", "threshold": 0.1, "population_size": 30, "model": "other"}"#
    )
    .is_err());
}

#[test]
fn table_risk_thresholds_are_refused_by_local_recodings_and_checked_for_range() {
    let table = ages();
    for (model, code) in [
        (
            r#"{"type": "average_risk", "threshold": 0}"#,
            ErrorCode::InvalidThreshold,
        ),
        (
            r#"{"type": "average_risk", "threshold": 1.2}"#,
            ErrorCode::InvalidThreshold,
        ),
        (
            r#"{"type": "sample_uniqueness", "threshold": -0.1}"#,
            ErrorCode::InvalidThreshold,
        ),
    ] {
        let error = prepare(&table, &ages_spec(model, 0.0), &|_| {
            Err("inline only".into())
        })
        .unwrap_err();
        assert_eq!(error.code, code, "{model}");
        assert_eq!(error.pointer, "/privacy_models/0/threshold");
    }
    let json = r#"{"attributes": {"age": {"role": "quasi_identifier", "data_type": "numeric"}},
        "privacy_models": [{"type": "k_anonymity", "k": 2}, {"type": "average_risk", "threshold": 0.5}],
        "algorithm": {"type": "mondrian"}}"#;
    let spec = JobSpec::from_json(json.as_bytes()).unwrap();
    let error = prepare(&table, &spec, &|_| Err("inline only".into())).unwrap_err();
    assert_eq!(error.code, ErrorCode::UnsupportedModel);
    assert_eq!(error.pointer, "/privacy_models/1");
    assert!(error.others.is_empty(), "{error:?}");
}

pub(super) mod properties {
    use proptest::prelude::*;

    use super::*;

    /// The exact searches, the exhaustive one first (the oracle).
    pub(in crate::domain::run) const ALGORITHMS: [&str; 6] = [
        "exhaustive",
        "flash",
        "ola",
        "best_first",
        "incognito",
        "optimal",
    ];

    /// Random tables of two quasi-identifiers (values 0–5 under `0-2`/`3-5` then `*`, and 0–3 under
    /// `*`), a risk threshold (0: average risk, 1: sample uniques, 2: population uniques by Zayatz's
    /// model in a population of 100), maybe 2-anonymity, and a suppression limit.
    fn job() -> impl Strategy<Value = (Vec<(u8, u8)>, u8, u8, bool, u8)> {
        (
            prop::collection::vec((0u8..6, 0u8..4), 6..40),
            0u8..3,
            1u8..10,
            any::<bool>(),
            0u8..3,
        )
    }

    /// A table of two quasi-identifiers `a` and `b` with these records.
    pub(in crate::domain::run) fn two_columns(rows: &[(u8, u8)]) -> Table {
        let texts: Vec<Vec<String>> = rows
            .iter()
            .map(|(a, b)| vec![a.to_string(), b.to_string()])
            .collect();
        let refs: Vec<Vec<&str>> = texts
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Table::from_rows(&["a", "b"], &refs)
    }

    /// The job of [`two_columns`]: `a` (0–5) under `0-2`/`3-5` then `*`, `b` (0–3) under `*`, the
    /// precision metric, a suppression limit of `tenths` / 10.
    pub(in crate::domain::run) fn two_column_spec(
        models: &str,
        tenths: u8,
        algorithm: &str,
    ) -> JobSpec {
        let json = format!(
            r#"{{"attributes": {{
                  "a": {{"role": "quasi_identifier", "hierarchy": {{"levels": [
                      ["0", "0-2", "*"], ["1", "0-2", "*"], ["2", "0-2", "*"],
                      ["3", "3-5", "*"], ["4", "3-5", "*"], ["5", "3-5", "*"]]}}}},
                  "b": {{"role": "quasi_identifier", "hierarchy": {{"levels": [
                      ["0", "*"], ["1", "*"], ["2", "*"], ["3", "*"]]}}}}}},
                "privacy_models": [{models}], "suppression_limit": {},
                "metric": "precision", "algorithm": {{"type": "{algorithm}"}}}}"#,
            f64::from(tenths) / 10.0
        );
        JobSpec::from_json(json.as_bytes()).unwrap()
    }

    /// Each search's loss (`None`: no solution), in [`ALGORITHMS`] order, equals the exhaustive one's.
    pub(in crate::domain::run) fn agree_with_exhaustive(
        results: &[Option<f64>],
    ) -> Result<(), TestCaseError> {
        for (algorithm, result) in ALGORITHMS.iter().zip(results) {
            match (result, &results[0]) {
                (Some(a), Some(b)) => {
                    prop_assert!((a - b).abs() < 1e-9, "{algorithm}: {a} vs {b}")
                }
                (None, None) => {}
                _ => prop_assert!(
                    false,
                    "{algorithm}: {result:?} vs exhaustive {:?}",
                    results[0]
                ),
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Every exact search finds the optimum the exhaustive search finds (or none, as it does), and
        /// the published table meets the threshold by the report's own risk figures.
        #[test]
        fn exact_searches_agree_under_table_risk_thresholds(
            (rows, measure, tenth, with_k, limit) in job()
        ) {
            let table = two_columns(&rows);
            let threshold = f64::from(tenth) / if measure == 2 { 40.0 } else { 10.0 };
            let model = match measure {
                0 => format!(r#"{{"type": "average_risk", "threshold": {threshold}}}"#),
                1 => format!(r#"{{"type": "sample_uniqueness", "threshold": {threshold}}}"#),
                _ => format!(
                    r#"{{"type": "population_uniqueness", "threshold": {threshold}, "model": "zayatz", "population_size": 100}}"#
                ),
            };
            let models = if with_k {
                format!(r#"{{"type": "k_anonymity", "k": 2}}, {model}"#)
            } else {
                model
            };
            let mut results = Vec::new();
            for algorithm in ALGORITHMS {
                let spec = two_column_spec(&models, limit, algorithm);
                match run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl) {
                    Ok(done) => {
                        let report = done.report();
                        let after = &report.risk.after;
                        let figure = match measure {
                            0 => after.prosecutor.average,
                            1 => after.sample_uniques,
                            _ => after.population_uniques.zayatz.fraction.unwrap_or(0.0),
                        };
                        prop_assert!(figure <= threshold + 1e-12, "{algorithm}: {figure} > {threshold}");
                        results.push(Some(report.loss.unwrap()));
                    }
                    Err(RunError::Core(crate::core::error::CoreError::NoSolution { .. })) => {
                        results.push(None)
                    }
                    Err(other) => return Err(TestCaseError::fail(format!("{algorithm}: {other}"))),
                }
            }
            agree_with_exhaustive(&results)?;
        }
    }
}
