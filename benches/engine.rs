//! Engine benchmarks on the bundled data sets: runs the real engine (spec → prepare → anonymize) several
//! times per case and prints the median, minimum and maximum engine time, nodes checked and the loss.
//!
//! `cargo bench --bench engine` runs every case; `cargo bench --bench engine -- adult` runs cases whose
//! name contains `adult`; `--runs N` sets the repetitions (default 7). The `sensitive/…` cases time
//! 5-anonymity alone and with distinct 2-diversity or 0.2-closeness on one sensitive column, on the same
//! quasi-identifiers, so the cost of the sensitive-attribute model is their ratio. The `issa/…` cases
//! compare the nodes checked and the grouping work of OLA and Incognito with and without Super-Root
//! (Issa 2009, Figs 33–34).

#[path = "support/arx_files.rs"]
mod arx_files;
#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anonymizer::codec::{read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::core::engine::anonymize;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::{prepare, JobSpec};

struct Case {
    name: String,
    dataset: &'static str,
    data: &'static str,
    prefix: &'static str,
    columns: Vec<&'static str>,
    suppression: f64,
    algorithm: &'static str,
    metric: &'static str,
    /// A sensitive column (not a quasi-identifier then) and the models added to 5-anonymity on it.
    sensitive: Option<(&'static str, SensitiveModel)>,
    /// The k of k-anonymity.
    k: u64,
}

/// What protects the sensitive column in the sensitive-attribute cases.
#[derive(Clone, Copy)]
enum SensitiveModel {
    /// Nothing: the k-only baseline on the same quasi-identifiers.
    None,
    /// Distinct 2-diversity.
    Distinct2,
    /// 0.2-closeness, equal distance.
    Closeness,
}

impl SensitiveModel {
    fn label(self) -> &'static str {
        match self {
            SensitiveModel::None => "k5",
            SensitiveModel::Distinct2 => "k5+distinct2",
            SensitiveModel::Closeness => "k5+t0.2",
        }
    }

    fn spec(self, column: &str) -> Option<serde_json::Value> {
        match self {
            SensitiveModel::None => None,
            SensitiveModel::Distinct2 => Some(
                serde_json::json!({"type": "distinct_l_diversity", "attribute": column, "l": 2}),
            ),
            SensitiveModel::Closeness => {
                Some(serde_json::json!({"type": "t_closeness", "attribute": column, "t": 0.2}))
            }
        }
    }
}

const ADULT: [&str; 9] = [
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
const FARS: [&str; 8] = [
    "iage",
    "irace",
    "ideathmon",
    "ideathday",
    "isex",
    "ihispanic",
    "istatenum",
    "iinjury",
];
const ADULT_FULL: [&str; 14] = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "salary-class",
];

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for algorithm in ["optimal", "best_first", "flash"] {
        for metric in ["nu_entropy", "discernibility", "granularity"] {
            for suppression in [0.0, 0.02] {
                out.push(Case {
                    name: format!("adult/{algorithm}/{metric}/{}%", suppression * 100.0),
                    dataset: "adult",
                    data: "adult.csv",
                    prefix: "adult_hierarchy_",
                    columns: ADULT.to_vec(),
                    suppression,
                    algorithm,
                    metric,
                    sensitive: None,
                    k: 5,
                });
            }
        }
        for metric in ["nu_entropy", "discernibility", "granularity"] {
            for suppression in [0.0, 0.02] {
                out.push(Case {
                    name: format!("fars/{algorithm}/{metric}/{}%", suppression * 100.0),
                    dataset: "fars",
                    data: "fars_int.csv",
                    prefix: "fars_int_hierarchy_",
                    columns: FARS.to_vec(),
                    suppression,
                    algorithm,
                    metric,
                    sensitive: None,
                    k: 5,
                });
            }
        }
    }
    // the 8.7 M-node lattice: exact search cost that follows the nodes checked, not the lattice
    for algorithm in ["optimal", "best_first", "flash"] {
        for suppression in [0.0, 0.02] {
            out.push(Case {
                name: format!("adult_full/{algorithm}/nu_entropy/{}%", suppression * 100.0),
                dataset: "adult_full",
                data: "adult_full.csv",
                prefix: "adult_full_hierarchy_",
                columns: ADULT_FULL.to_vec(),
                suppression,
                algorithm,
                metric: "nu_entropy",
                sensitive: None,
                k: 5,
            });
        }
    }
    // Issa (2009) Figs 33–34: nodes checked and grouping work of Incognito, with and without the
    // Super-Root optimisation (LeFevre et al. 2005), against OLA, at 5 % suppression and k = 2…15
    for (dataset, data, prefix, columns) in [
        ("adult", "adult.csv", "adult_hierarchy_", ADULT.to_vec()),
        ("fars", "fars_int.csv", "fars_int_hierarchy_", FARS.to_vec()),
    ] {
        for k in [2, 5, 10, 15] {
            for algorithm in ["ola", "incognito", "incognito_super_root"] {
                out.push(Case {
                    name: format!("issa/{dataset}/k{k}/{algorithm}"),
                    dataset,
                    data,
                    prefix,
                    columns: columns.clone(),
                    suppression: 0.05,
                    algorithm,
                    metric: "nu_entropy",
                    sensitive: None,
                    k,
                });
            }
        }
    }
    // the cost of a sensitive-attribute model over the k-only search on the same quasi-identifiers
    for (dataset, data, prefix, columns, sensitive) in [
        (
            "adult",
            "adult.csv",
            "adult_hierarchy_",
            ADULT.to_vec(),
            "salary-class",
        ),
        (
            "fars",
            "fars_int.csv",
            "fars_int_hierarchy_",
            FARS.to_vec(),
            "istatenum",
        ),
    ] {
        for model in [
            SensitiveModel::None,
            SensitiveModel::Distinct2,
            SensitiveModel::Closeness,
        ] {
            for suppression in [0.0, 0.02] {
                out.push(Case {
                    name: format!(
                        "sensitive/{dataset}/{sensitive}/{}/{}%",
                        model.label(),
                        suppression * 100.0
                    ),
                    dataset,
                    data,
                    prefix,
                    columns: columns
                        .iter()
                        .copied()
                        .filter(|&c| c != sensitive)
                        .collect(),
                    suppression,
                    algorithm: "optimal",
                    metric: "nu_entropy",
                    sensitive: Some((sensitive, model)),
                    k: 5,
                });
            }
        }
    }
    out
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn run(case: &Case, runs: usize) {
    let dir = data_dir().join(case.dataset);
    let mut attributes = serde_json::Map::new();
    let bytes = std::fs::read(dir.join(case.data)).expect("data file");
    let options = CsvOptions {
        delimiter: b';',
        ..CsvOptions::default()
    };
    let table = read_table(bytes.as_slice(), &options).expect("table");
    for column in table.columns() {
        let role = if case.columns.contains(&column.name.as_str()) {
            serde_json::json!({"role": "quasi_identifier",
                "hierarchy": {"path": format!("{}{}.csv", case.prefix, column.name)}})
        } else if case.sensitive.is_some_and(|(s, _)| s == column.name) {
            serde_json::json!({"role": "sensitive"})
        } else {
            serde_json::json!({"role": "insensitive"})
        };
        attributes.insert(column.name.clone(), role);
    }
    let mut models = vec![serde_json::json!({"type": "k_anonymity", "k": case.k})];
    if let Some((column, model)) = case.sensitive {
        models.extend(model.spec(column));
    }
    let spec = serde_json::json!({
        "attributes": attributes,
        "privacy_models": models,
        "suppression_limit": case.suppression,
        "algorithm": match case.algorithm {
            "incognito_super_root" => serde_json::json!({"type": "incognito", "super_root": true}),
            other => serde_json::json!({"type": other}),
        },
        "metric": case.metric,
    });
    let spec = JobSpec::from_json(spec.to_string().as_bytes()).expect("spec");
    let resolve = |source: &HierarchySpec| arx_files::resolve_in(&dir, source);
    let prepared = prepare(&table, &spec, &resolve).expect("prepare");
    let input = prepared.input(&table);
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let outcome = anonymize(&input, &prepared.plan, &NoControl).expect("anonymize");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        last = Some(outcome);
    }
    let timing = support::Timing::of(&times);
    let outcome = last.expect("at least one run");
    println!(
        "{:<40} median {:>9.2} ms  min {:>9.2}  max {:>9.2}  runs {}  ran {:<10}  checked {:>7}  work {:>9}  lattice {:>8}  node {:?}  loss {}",
        case.name,
        timing.median,
        timing.min,
        timing.max,
        runs,
        outcome.search.algorithm,
        outcome.search.nodes_checked,
        outcome.search.grouping_work,
        outcome.search.lattice_size,
        outcome.transformation,
        outcome.metrics.get(outcome.metric),
    );
}

fn main() {
    let args = support::Args::parse(7, "adult/optimal/nu_entropy/0%");
    for case in cases() {
        if args.selects(&case.name) {
            let runs = if case.dataset == "adult_full" {
                args.runs.min(3)
            } else {
                args.runs
            };
            run(&case, runs);
        }
    }
}
