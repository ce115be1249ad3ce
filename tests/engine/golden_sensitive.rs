//! Sensitive-attribute models on ARX's adult benchmark (tests/data/adult, 30,162 records), through the
//! CLI's path (JobSpec JSON → `prepare` with hierarchy files from disk → engine → independent
//! verification of the published table, `domain::run::run_job`):
//! - ARX parity: t-closeness on `occupation` with the other eight columns as quasi-identifiers, with the
//!   equal and the hierarchical ground distance, and entropy 5-diversity, must reproduce the optimum and
//!   loss of ARX's own test suite, β-likeness its optimal transformation, and Grassberger entropy
//!   l-diversity the exhaustive optimum, never worse than ARX's;
//! - the issue's acceptance runs: eight quasi-identifiers, `salary-class` sensitive, k = 5 with distinct
//!   2-diversity or with 0.2-closeness (equal distance), at 0 % and 2 % suppression: every exact algorithm
//!   finds the non-uniform-entropy optimum of the exhaustive search, and the report states the achieved
//!   k, l and t.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anonymizer::codec::{parse_arx_hierarchy, read_table};
use anonymizer::core::control::NoControl;
use anonymizer::core::data::Table;
use anonymizer::core::loss::MetricKind;
use anonymizer::domain::resolve::input_format;
use anonymizer::domain::run::run_job;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::JobSpec;

/// The columns of adult.csv, in file order.
const COLUMNS: [&str; 9] = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult")
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let spec = JobSpec::from_json(
            br#"{"csv": {"delimiter": ";"}, "attributes": {}, "privacy_models": []}"#,
        )
        .unwrap();
        let file = File::open(data_dir().join("adult.csv")).unwrap();
        let table = read_table(
            BufReader::new(file),
            &input_format(&spec.csv)
                .unwrap()
                .delimiter
                .unwrap_or_default(),
        )
        .unwrap();
        assert_eq!(table.row_count(), 30_162);
        table
    })
}

/// Resolves `{"path": ...}` hierarchies as the CLI does.
fn resolve(source: &HierarchySpec) -> Result<anonymizer::domain::Resolved, String> {
    match source {
        HierarchySpec::Path { path, .. } => {
            let bytes = std::fs::read(data_dir().join(path)).map_err(|e| e.to_string())?;
            parse_arx_hierarchy(&bytes, b';')
                .map(Into::into)
                .map_err(|e| e.to_string())
        }
        _ => Err("only paths are used here".into()),
    }
}

/// A job with every column but `sensitive` as a quasi-identifier; `sensitive_hierarchy` attaches the
/// attribute's hierarchy file (for the hierarchical distance).
fn spec(
    sensitive: &str,
    sensitive_hierarchy: bool,
    models: serde_json::Value,
    limit: f64,
    metric: &str,
    algorithm: &str,
) -> JobSpec {
    let attributes: serde_json::Map<String, serde_json::Value> = COLUMNS
        .iter()
        .map(|&c| {
            let hierarchy = serde_json::json!({"path": format!("adult_hierarchy_{c}.csv")});
            let declaration = if c != sensitive {
                serde_json::json!({"role": "quasi_identifier", "hierarchy": hierarchy})
            } else if sensitive_hierarchy {
                serde_json::json!({"role": "sensitive", "hierarchy": hierarchy})
            } else {
                serde_json::json!({"role": "sensitive"})
            };
            (c.to_string(), declaration)
        })
        .collect();
    let json = serde_json::json!({
        "csv": {"delimiter": ";"},
        "attributes": attributes,
        "privacy_models": models,
        "suppression_limit": limit,
        "algorithm": {"type": algorithm},
        "metric": metric,
    });
    JobSpec::from_json(json.to_string().as_bytes()).expect("valid spec")
}

/// Relative closeness for losses of 10^5–10^9.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// One ARX test case: transformation over the eight quasi-identifiers in file order, and the loss.
struct ArxCase {
    what: &'static str,
    hierarchy: bool,
    models: fn() -> serde_json::Value,
    limit: f64,
    metric: &'static str,
    transformation: [u8; 8],
    loss: f64,
}

fn equal_closeness() -> serde_json::Value {
    serde_json::json!([
        {"type": "t_closeness", "attribute": "occupation", "t": 0.2},
        {"type": "k_anonymity", "k": 5}
    ])
}

fn hierarchical_closeness() -> serde_json::Value {
    serde_json::json!([
        {"type": "k_anonymity", "k": 5},
        {"type": "t_closeness", "attribute": "occupation", "t": 0.2, "distance": "hierarchical"}
    ])
}

fn entropy_diversity() -> serde_json::Value {
    serde_json::json!([{"type": "entropy_l_diversity", "attribute": "occupation", "l": 5}])
}

fn grassberger_diversity(l: u64) -> serde_json::Value {
    serde_json::json!([
        {"type": "entropy_l_diversity", "attribute": "occupation", "l": l, "estimator": "grassberger"}
    ])
}

/// Source: ARX 3.9.2 test suite, arx-deidentifier/arx src/test/org/deidentifier/arx/test/
/// TestAnonymizationTCloseness.java (cases 0, 4: EqualDistanceTCloseness("occupation", 0.2) + KAnonymity(5)
/// with Metric.createDiscernabilityMetric(true), whose values are the sum of squared class sizes with
/// suppressed classes included, our `dm_star`; cases 2, 6: KAnonymity(5) + HierarchicalDistanceTCloseness
/// ("occupation", 0.2, adult_hierarchy_occupation.csv) with Metric.createEntropyMetric(true)) and
/// TestAnonymizationLDiversity.java (EntropyLDiversity("occupation", 5), 0 % suppression; without
/// suppression ARX's non-monotone entropy equals the monotone one).
const ARX_CASES: [ArxCase; 5] = [
    ArxCase {
        what: "k = 5, equal 0.2-closeness, 4 %, DM*",
        hierarchy: false,
        models: equal_closeness,
        limit: 0.04,
        metric: "dm_star",
        transformation: [1, 4, 1, 0, 3, 2, 2, 1],
        loss: 3.11880088e8,
    },
    ArxCase {
        what: "k = 5, equal 0.2-closeness, 0 %, DM*",
        hierarchy: false,
        models: equal_closeness,
        limit: 0.0,
        metric: "dm_star",
        transformation: [1, 4, 1, 1, 3, 2, 2, 1],
        loss: 4.56853172e8,
    },
    ArxCase {
        what: "k = 5, hierarchical 0.2-closeness, 4 %, entropy",
        hierarchy: true,
        models: hierarchical_closeness,
        limit: 0.04,
        metric: "nu_entropy",
        transformation: [1, 4, 0, 0, 3, 2, 2, 1],
        loss: 377622.78458729305,
    },
    ArxCase {
        what: "k = 5, hierarchical 0.2-closeness, 0 %, entropy",
        hierarchy: true,
        models: hierarchical_closeness,
        limit: 0.0,
        metric: "nu_entropy",
        transformation: [0, 4, 1, 1, 3, 2, 2, 1],
        loss: 398400.0741806447,
    },
    ArxCase {
        what: "entropy 5-diversity, 0 %, entropy",
        hierarchy: false,
        models: entropy_diversity,
        limit: 0.0,
        metric: "nu_entropy",
        transformation: [1, 1, 1, 1, 3, 2, 2, 1],
        loss: 324620.5269918695,
    },
];

/// β-likeness on `occupation` (no k), against ARX 3.9.2's test suite
/// (arx-deidentifier/arx src/test/org/deidentifier/arx/test/TestAnonymizationBLikeness.java, cases 0, 1
/// and 4: BasicBLikeness(3) at 50 %, EnhancedBLikeness(2) at 0 %, BasicBLikeness(5) at 40 %, with
/// Metric.createLossMetric()). ARX's loss metric normalizes differently from `granularity`, so only the
/// optimal transformation is compared (ARX reports 0.3488, 0.7592 and 0.2335; `granularity` gives
/// 0.3528, 0.8041 and 0.2388 at the same nodes).
#[test]
fn beta_likeness_finds_arx_optima() {
    for (limit, variant, beta, transformation) in [
        (0.5, "basic", 3.0, [0, 3, 0, 0, 2, 0, 1, 0]),
        (0.0, "enhanced", 2.0, [1, 4, 1, 1, 3, 2, 2, 0]),
        (0.4, "basic", 5.0, [0, 2, 0, 0, 2, 0, 1, 0]),
    ] {
        let models = serde_json::json!([
            {"type": "beta_likeness", "attribute": "occupation", "beta": beta, "variant": variant}
        ]);
        let spec = spec("occupation", false, models, limit, "granularity", "optimal");
        let done = run_job(table(), &spec, &resolve, &NoControl).expect("a solution exists");
        assert_eq!(
            done.outcome().unwrap().transformation,
            transformation,
            "{variant} β = {beta} at {limit}"
        );
        let achieved = done.report().achieved;
        let beta_achieved = achieved.sensitive_attributes["occupation"].beta.unwrap();
        assert!(
            beta_achieved <= beta + 1e-9,
            "{variant} β = {beta}: {beta_achieved}"
        );
    }
}

#[test]
fn reproduces_arx_optima_on_occupation() {
    for case in &ARX_CASES {
        for algorithm in ["flash", "optimal"] {
            let spec = spec(
                "occupation",
                case.hierarchy,
                (case.models)(),
                case.limit,
                case.metric,
                algorithm,
            );
            let done = run_job(table(), &spec, &resolve, &NoControl)
                .unwrap_or_else(|e| panic!("{}: {e}", case.what));
            let outcome = done.outcome().unwrap();
            assert_eq!(
                outcome.transformation, case.transformation,
                "{} ({algorithm})",
                case.what
            );
            let loss = outcome.metrics.get(outcome.metric);
            assert!(
                close(loss, case.loss),
                "{} ({algorithm}): loss {loss}, ARX {}",
                case.what,
                case.loss
            );
        }
    }
}

/// Grassberger entropy l-diversity on `occupation` (no k), `nu_entropy`, against ARX 3.9.2's test suite
/// (arx-deidentifier/arx src/test/org/deidentifier/arx/test/TestAnonymizationEntropyLDiversity.java,
/// cases 0, 2 and 3: EntropyLDiversity("occupation", l, EntropyEstimator.GRASSBERGER) with
/// Metric.createPrecomputedEntropyMetric(0.1, false), in ARX's exact mode). Flash and `optimal` must
/// find the exhaustive search's optimum, and it must be at least as good as ARX's. Without suppression
/// it is ARX's. With suppression it is better: l = 5 at 4 %, [1, 0, 1, 1, 2, 2, 2, 0] at 198,181.40
/// suppresses 1,107 records (limit 1,206) where ARX reports [1, 0, 1, 0, 3, 2, 2, 0] at 216,092.12;
/// l = 3 at 5 %, [0, 0, 1, 0, 3, 2, 1, 0] at 160,937.45 suppresses 1,478 (limit 1,508) where ARX
/// reports [0, 0, 1, 1, 2, 2, 2, 0] at 180,347.43. A separate script grouping the CSV with the
/// hierarchy files confirmed both failing-record counts. (ARX declares the estimator monotone, which
/// it is not: see `core/privacy/grassberger.rs`.)
#[test]
fn grassberger_diversity_is_exact_and_no_worse_than_arx() {
    for (l, limit, arx_transformation, arx_loss) in [
        (5u64, 0.04, [1u8, 0, 1, 0, 3, 2, 2, 0], 216092.124036387),
        (5, 0.0, [1, 1, 1, 1, 3, 2, 2, 1], 324620.5269918692),
        (3, 0.05, [0, 0, 1, 1, 2, 2, 2, 0], 180347.4325366015),
    ] {
        let models = grassberger_diversity(l);
        let oracle = spec(
            "occupation",
            false,
            models.clone(),
            limit,
            "nu_entropy",
            "exhaustive",
        );
        let oracle = run_job(table(), &oracle, &resolve, &NoControl).expect("a solution exists");
        let best = oracle.outcome().unwrap();
        let best_loss = best.metrics.get(best.metric);
        assert!(
            best_loss <= arx_loss * (1.0 + 1e-12),
            "l = {l} at {limit}: {best_loss} worse than ARX's {arx_loss}"
        );
        if close(best_loss, arx_loss) {
            assert_eq!(
                best.transformation, arx_transformation,
                "l = {l} at {limit}"
            );
        }
        for algorithm in ["flash", "optimal"] {
            let job = spec(
                "occupation",
                false,
                models.clone(),
                limit,
                "nu_entropy",
                algorithm,
            );
            let done = run_job(table(), &job, &resolve, &NoControl).expect("a solution exists");
            let outcome = done.outcome().unwrap();
            assert_eq!(
                outcome.transformation, best.transformation,
                "l = {l} at {limit} ({algorithm})"
            );
            assert!(close(outcome.metrics.get(outcome.metric), best_loss));
        }
    }
}

/// The issue's acceptance runs: every exact algorithm agrees with the exhaustive search.
#[test]
fn exact_searches_match_the_exhaustive_optimum_with_salary_class_sensitive() {
    let models = [
        serde_json::json!([
            {"type": "k_anonymity", "k": 5},
            {"type": "distinct_l_diversity", "attribute": "salary-class", "l": 2}
        ]),
        serde_json::json!([
            {"type": "k_anonymity", "k": 5},
            {"type": "t_closeness", "attribute": "salary-class", "t": 0.2}
        ]),
    ];
    for models in &models {
        for limit in [0.0, 0.02] {
            let oracle = run_job(
                table(),
                &spec(
                    "salary-class",
                    false,
                    models.clone(),
                    limit,
                    "nu_entropy",
                    "exhaustive",
                ),
                &resolve,
                &NoControl,
            )
            .expect("a solution exists");
            let expected = oracle.outcome().unwrap().metrics.get(MetricKind::NuEntropy);
            // the report states what the published table achieves, and it meets the request
            let achieved = oracle.report().achieved;
            let salary = &achieved.sensitive_attributes["salary-class"];
            assert!(achieved.k >= 5, "{models}: k = {}", achieved.k);
            if models.to_string().contains("distinct") {
                assert!(salary.distinct_l >= Some(2), "{models}: {salary:?}");
            } else {
                assert!(
                    salary.t_equal.is_some_and(|t| t <= 0.2),
                    "{models}: {salary:?}"
                );
            }
            for algorithm in ["ola", "flash", "incognito", "best_first", "optimal"] {
                let what = format!("{models} at {limit} with {algorithm}");
                let done = run_job(
                    table(),
                    &spec(
                        "salary-class",
                        false,
                        models.clone(),
                        limit,
                        "nu_entropy",
                        algorithm,
                    ),
                    &resolve,
                    &NoControl,
                )
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let loss = done.outcome().unwrap().metrics.get(MetricKind::NuEntropy);
                assert!(
                    close(loss, expected),
                    "{what}: {loss}, exhaustive {expected}"
                );
                assert!(done.outcome().unwrap().search.exact, "{what}");
            }
        }
    }
}
