//! Models against a population (k-map, δ-presence) through whole runs, on hand-computed tables.
//!
//! The table holds ages 20, 21 ×2, 22 ×3, 30, 31, 32, 33 (10 records); its population 20 ×2, 21 ×2,
//! 22 ×4, 23 ×2, 30, 31, 32, 33, 34 ×2 (16 records), under decades then `*`.
//! - Level 0: population counts 2, 2, 4, 1, 1, 1, 1 for the table's classes of 1, 2, 3, 1, 1, 1, 1
//!   (δ = 0.5, 1, 0.75, 1, 1, 1, 1); the population's 23 and 34 have no table record (δ = 0).
//! - Level 1: 20–29 holds 6 of 10 (δ 0.6), 30–39 holds 4 of 6 (δ 0.667).
//! - Level 2: 10 of 16 (δ 0.625).

use super::*;
use crate::core::control::NoControl;
use crate::error_code::ErrorCode;

fn ages(values: &[&str]) -> Table {
    let rows: Vec<Vec<&str>> = values.iter().map(|a| vec![*a]).collect();
    Table::from_rows(&["age"], &rows)
}

fn sample() -> Table {
    ages(&["20", "21", "21", "22", "22", "22", "30", "31", "32", "33"])
}

fn population() -> Table {
    ages(&[
        "20", "20", "21", "21", "22", "22", "22", "22", "23", "23", "30", "31", "32", "33", "34",
        "34",
    ])
}

fn spec(models: &str, algorithm: &str) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{"age": {{"role": "quasi_identifier", "hierarchy": {{"levels": [
              ["20", "20-29", "*"], ["21", "20-29", "*"], ["22", "20-29", "*"], ["23", "20-29", "*"],
              ["24", "20-29", "*"], ["30", "30-39", "*"], ["31", "30-39", "*"], ["32", "30-39", "*"],
              ["33", "30-39", "*"], ["34", "30-39", "*"]]}}}}}},
            "privacy_models": [{models}], "algorithm": {{"type": "{algorithm}"}}}}"#
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

fn run(
    table: &Table,
    models: &str,
    population: Option<&Table>,
) -> Result<(Vec<u8>, Report), RunError> {
    let inputs = JobInputs {
        pseudonym_key: None,
        population,
    };
    let spec = spec(models, "flash");
    run_job_with(
        table,
        &spec,
        &|_| Err("inline only".into()),
        &NoControl,
        inputs,
    )
    .map(|done| {
        let report = done.report();
        (done.outcome().unwrap().transformation.clone(), report)
    })
}

fn levels(models: &str) -> Vec<u8> {
    run(&sample(), models, Some(&population())).unwrap().0
}

#[test]
fn k_map_counts_the_population_of_each_class() {
    // the 30s are alone in the population at level 0, and 6 by decades
    assert_eq!(levels(r#"{"type": "k_map", "k": 1}"#), [0]);
    assert_eq!(levels(r#"{"type": "k_map", "k": 2}"#), [1]);
    assert_eq!(levels(r#"{"type": "k_map", "k": 6}"#), [1]);
    assert_eq!(levels(r#"{"type": "k_map", "k": 7}"#), [2]);
    let (_, report) = run(
        &sample(),
        r#"{"type": "k_map", "k": 2}"#,
        Some(&population()),
    )
    .unwrap();
    assert_eq!(
        report.privacy_models,
        ["2-map (a population of 16 records)"]
    );
    // by decades: 6 of 10 and 4 of 6
    let achieved = report.achieved.population.unwrap();
    assert_eq!((achieved.records, achieved.k_map), (16, 6));
    assert_eq!(achieved.delta_min, Some(0.6));
    assert_eq!(achieved.delta_max, Some(4.0 / 6.0));
    // k-map is weaker than k-anonymity: 2-anonymity needs the same decades here, 7-anonymity the top
    assert_eq!(
        levels(r#"{"type": "k_anonymity", "k": 5}, {"type": "k_map", "k": 2}"#),
        [2]
    );
}

#[test]
fn delta_presence_bounds_every_population_class() {
    assert_eq!(
        levels(r#"{"type": "delta_presence", "delta_min": 0, "delta_max": 1}"#),
        [0]
    );
    // 21 and the 30s are fully present at level 0; by decades 0.6 and 0.667
    assert_eq!(
        levels(r#"{"type": "delta_presence", "delta_min": 0, "delta_max": 0.7}"#),
        [1]
    );
    assert_eq!(
        levels(r#"{"type": "delta_presence", "delta_min": 0, "delta_max": 0.65}"#),
        [2]
    );
    // every class of level 0 is within [0.5, 1], but 23 and 34 are absent from the table (δ = 0)
    assert_eq!(
        levels(r#"{"type": "delta_presence", "delta_min": 0.5, "delta_max": 1}"#),
        [1]
    );
    // 0.7 is above both decades' δ and the top's 0.625
    assert!(matches!(
        run(
            &sample(),
            r#"{"type": "delta_presence", "delta_min": 0.7, "delta_max": 1}"#,
            Some(&population())
        ),
        Err(RunError::Core(
            crate::core::error::CoreError::NoSolution { .. }
        ))
    ));
}

#[test]
fn estimated_k_map_derives_its_class_size() {
    // 10 records of 100: λ = 1, so k = 10 at 5 % asks for classes of 5 (Poisson) or 4 (zero-truncated)
    let poisson = r#"{"type": "k_map", "k": 10, "estimator": "poisson", "sampling_fraction": 0.1}"#;
    let (levels, report) = run(&sample(), poisson, None).unwrap();
    assert_eq!(levels, [2]);
    assert!(
        report.privacy_models[0].contains("classes of at least 5 records"),
        "{:?}",
        report.privacy_models
    );
    assert_eq!(report.risk.after.population_uniques.population_size, 100);
    let truncated = r#"{"type": "k_map", "k": 10, "estimator": "zero_truncated_poisson",
        "population_size": 100, "significance": 0.05}"#;
    assert_eq!(run(&sample(), truncated, None).unwrap().0, [1]);
    // a local recoding takes the derived class size as it takes k
    let spec = spec(poisson, "mondrian");
    let table = sample();
    let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    assert!(done.report().equivalence_classes.min >= 5);
}

#[test]
fn population_mistakes_are_refused_with_their_codes() {
    let error = |table: &Table, models: &str, population: Option<&Table>| match run(
        table, models, population,
    ) {
        Err(RunError::Spec(e)) => (e.code, e.pointer),
        other => panic!("{:?}", other.map(|r| r.0)),
    };
    let k_map = r#"{"type": "k_map", "k": 2}"#;
    assert_eq!(
        error(&sample(), k_map, None),
        (ErrorCode::PopulationMissing, "/privacy_models/0".into())
    );
    // a population with fewer 22s than the table
    let smaller = ages(&["20", "21", "21", "22", "30", "31", "32", "33"]);
    assert_eq!(
        error(&sample(), k_map, Some(&smaller)),
        (ErrorCode::SampleNotInPopulation, "/privacy_models/0".into())
    );
    // a population value the hierarchy lacks
    let unknown = ages(&[
        "20", "21", "21", "22", "22", "22", "30", "31", "32", "33", "99",
    ]);
    assert_eq!(
        error(&sample(), k_map, Some(&unknown)),
        (ErrorCode::UncoveredValues, "/privacy_models/0".into())
    );
    let other_column = Table::from_rows(&["year"], &[vec!["20"]]);
    assert_eq!(
        error(&sample(), k_map, Some(&other_column)),
        (ErrorCode::MissingInPopulation, "/privacy_models/0".into())
    );
    assert_eq!(
        error(
            &sample(),
            r#"{"type": "k_map", "k": 17}"#,
            Some(&population())
        ),
        (ErrorCode::KExceedsRows, "/privacy_models/0/k".into())
    );
    // a population no model reads
    assert_eq!(
        error(
            &sample(),
            r#"{"type": "k_anonymity", "k": 2}"#,
            Some(&population())
        ),
        (
            ErrorCode::PopulationMissing,
            "/population_dataset_id".into()
        )
    );
    for (model, pointer) in [
        (
            r#"{"type": "delta_presence", "delta_min": 0.5, "delta_max": 0.4}"#,
            "/privacy_models/0/delta_min",
        ),
        (
            r#"{"type": "delta_presence", "delta_min": 0, "delta_max": 0}"#,
            "/privacy_models/0/delta_max",
        ),
    ] {
        assert_eq!(
            error(&sample(), model, Some(&population())),
            (ErrorCode::InvalidThreshold, pointer.into())
        );
    }
    for (model, pointer, code) in [
        (
            r#"{"type": "k_map", "k": 2, "sampling_fraction": 0.5}"#,
            "/privacy_models/0/sampling_fraction",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "k_map", "k": 2, "estimator": "poisson"}"#,
            "/privacy_models/0",
            ErrorCode::InvalidParameter,
        ),
        (
            r#"{"type": "k_map", "k": 2, "estimator": "poisson", "population_size": 20, "significance": 1}"#,
            "/privacy_models/0/significance",
            ErrorCode::InvalidParameter,
        ),
    ] {
        assert_eq!(
            error(&sample(), model, None),
            (code, pointer.into()),
            "{model}"
        );
    }
    // local recodings cannot match a population
    let spec = spec(k_map, "mondrian");
    let inputs = JobInputs {
        pseudonym_key: None,
        population: Some(&population()),
    };
    match run_job_with(
        &sample(),
        &spec,
        &|_| Err("inline only".into()),
        &NoControl,
        inputs,
    ) {
        Err(RunError::Spec(e)) => assert_eq!(e.code, ErrorCode::UnsupportedModel),
        other => panic!("{:?}", other.is_ok()),
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;
    use crate::domain::run::model_tests::properties::{
        agree_with_exhaustive, two_column_spec, two_columns, ALGORITHMS,
    };

    /// A table of two quasi-identifiers (0–5 under `0-2`/`3-5` then `*`; 0–3 under `*`), the extra
    /// records its population holds besides it, a model (k-map with k 1–8, or δ-presence with δ_min
    /// 0 or 0.2 and δ_max 0.3–1) and a suppression limit.
    type Records = Vec<(u8, u8)>;

    fn job() -> impl Strategy<Value = (Records, Records, bool, u8, u8, u8)> {
        (
            prop::collection::vec((0u8..6, 0u8..4), 4..30),
            prop::collection::vec((0u8..6, 0u8..4), 0..40),
            any::<bool>(),
            1u8..9,
            0u8..2,
            0u8..3,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Every exact search finds the optimum the exhaustive search finds (or none, as it does);
        /// each published output passed the verifier's population count.
        #[test]
        fn exact_searches_agree_under_population_models(
            (rows, extra, k_map, parameter, low, limit) in job()
        ) {
            let sample = two_columns(&rows);
            let mut all = rows.clone();
            all.extend(extra);
            let population = two_columns(&all);
            let model = if k_map {
                format!(r#"{{"type": "k_map", "k": {parameter}}}"#)
            } else {
                format!(
                    r#"{{"type": "delta_presence", "delta_min": {}, "delta_max": {}}}"#,
                    f64::from(low) * 0.2,
                    0.2 + f64::from(parameter) / 10.0
                )
            };
            let mut results = Vec::new();
            for algorithm in ALGORITHMS {
                let spec = two_column_spec(&model, limit, algorithm);
                let inputs = JobInputs { pseudonym_key: None, population: Some(&population) };
                match run_job_with(&sample, &spec, &|_| Err("inline only".into()), &NoControl, inputs) {
                    Ok(done) => results.push(Some(done.report().loss.unwrap())),
                    Err(RunError::Spec(e)) if e.code == ErrorCode::KExceedsRows => return Ok(()),
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
