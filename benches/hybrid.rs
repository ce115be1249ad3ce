//! Hybrid k-anonymization benchmark on adult (8 quasi-identifiers with their ARX hierarchies, 10-anonymity,
//! no suppression): S-Hybrid at p = 1 % in both modes, at p = 0 as a cross-check, and next to them the
//! engine's exact global searches on the same input minimising the same loss (`granularity`, Iyengar's
//! loss metric), so their time ratio can be quoted. Prints median, minimum and maximum times.
//!
//! `cargo bench --bench hybrid` runs every case; `cargo bench --bench hybrid -- randomized` runs cases
//! whose name contains `randomized`; `--runs N` sets the repetitions (default 7).

#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anonymizer::codec::{parse_arx_hierarchy, read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::core::data::{GeneralizationMap, Table};
use anonymizer::core::engine::anonymize;
use anonymizer::core::local::hybrid::{hybrid, HybridMode, HybridOptions};
use anonymizer::core::local::{Domain, LocalAttribute, LocalInput};
use anonymizer::core::secret_rng::SecretKey;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::{prepare, JobSpec};

const QUASI_IDENTIFIERS: [&str; 8] = [
    "age",
    "sex",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
];
const K: u64 = 10;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult")
}

fn load() -> (Table, Vec<GeneralizationMap>) {
    let dir = data_dir();
    let bytes = std::fs::read(dir.join("adult.csv")).expect("data file");
    let table = read_table(
        bytes.as_slice(),
        &CsvOptions {
            delimiter: b';',
            ..CsvOptions::default()
        },
    )
    .expect("table");
    let maps = QUASI_IDENTIFIERS
        .iter()
        .map(|name| {
            let text =
                std::fs::read(dir.join(format!("adult_hierarchy_{name}.csv"))).expect("hierarchy");
            let hierarchy = parse_arx_hierarchy(&text, b';').expect("hierarchy");
            let column = table.column(table.column_index(name).expect("column"));
            GeneralizationMap::bind(hierarchy, column).expect("bound hierarchy")
        })
        .collect();
    (table, maps)
}

fn report(name: &str, times: &[f64], detail: String) {
    let timing = support::Timing::of(times);
    println!(
        "{name:<36} median {:>9.2} ms  min {:>9.2}  max {:>9.2}  runs {}  {detail}",
        timing.median,
        timing.min,
        timing.max,
        times.len(),
    );
}

fn run_hybrid(name: &str, p: f64, mode: HybridMode, runs: usize) {
    let (table, maps) = load();
    let input = LocalInput {
        rows: table.row_count(),
        quasi_identifiers: QUASI_IDENTIFIERS
            .iter()
            .zip(&maps)
            .map(|(name, map)| {
                let column = table.column(table.column_index(name).expect("column"));
                LocalAttribute {
                    name,
                    codes: &column.codes,
                    distinct: column.dictionary.len(),
                    domain: Domain::Hierarchy(map),
                }
            })
            .collect(),
        sensitive: vec![],
    };
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for run in 0..runs {
        let options = HybridOptions {
            relocation_limit: p,
            mode,
            key: SecretKey::from_u64(0x5EED + run as u64),
            ..HybridOptions::default()
        };
        let start = Instant::now();
        let result = hybrid(&input, K, &options, &NoControl).expect("hybrid");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        last = Some(result.report);
    }
    let r = last.expect("at least one run");
    report(
        name,
        &times,
        format!(
            "levels {:?}  loss {:.6}  cells {}/{}  rows moved {}  evaluated {}/{}",
            r.levels,
            r.loss,
            r.cells_changed,
            r.budget,
            r.rows_relocated,
            r.nodes_evaluated,
            r.lattice_size
        ),
    );
}

fn run_global(name: &str, algorithm: &str, runs: usize) {
    let dir = data_dir();
    let bytes = std::fs::read(dir.join("adult.csv")).expect("data file");
    let table = read_table(
        bytes.as_slice(),
        &CsvOptions {
            delimiter: b';',
            ..CsvOptions::default()
        },
    )
    .expect("table");
    let mut attributes = serde_json::Map::new();
    for column in table.columns() {
        let role = if QUASI_IDENTIFIERS.contains(&column.name.as_str()) {
            serde_json::json!({"role": "quasi_identifier",
                "hierarchy": {"path": format!("adult_hierarchy_{}.csv", column.name)}})
        } else {
            serde_json::json!({"role": "insensitive"})
        };
        attributes.insert(column.name.clone(), role);
    }
    let spec = serde_json::json!({
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": K}],
        "suppression_limit": 0.0,
        "algorithm": {"type": algorithm},
        "metric": "granularity",
    });
    let spec = JobSpec::from_json(spec.to_string().as_bytes()).expect("spec");
    let resolve = |source: &HierarchySpec| match source {
        HierarchySpec::Path { path, .. } => {
            let text = std::fs::read(dir.join(path)).map_err(|e| e.to_string())?;
            parse_arx_hierarchy(&text, b';')
                .map(Into::into)
                .map_err(|e| e.to_string())
        }
        _ => Err("unsupported".to_string()),
    };
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
    let outcome = last.expect("at least one run");
    report(
        name,
        &times,
        format!(
            "node {:?}  loss {:.6}  checked {}",
            outcome.transformation,
            outcome.metrics.get(outcome.metric),
            outcome.search.nodes_checked
        ),
    );
}

fn main() {
    let args = support::Args::parse(7, "hybrid/adult-k10-p1/randomized");
    let runs = args.runs;
    let hybrids = [
        (
            "hybrid/adult-k10-p1/deterministic",
            0.01,
            HybridMode::Deterministic,
        ),
        (
            "hybrid/adult-k10-p1/randomized",
            0.01,
            HybridMode::Randomized,
        ),
        (
            "hybrid/adult-k10-p0/deterministic",
            0.0,
            HybridMode::Deterministic,
        ),
    ];
    for (name, p, mode) in hybrids {
        if args.selects(name) {
            run_hybrid(name, p, mode, runs);
        }
    }
    for (name, algorithm) in [
        ("global/adult-k10/optimal", "optimal"),
        ("global/adult-k10/flash", "flash"),
    ] {
        if args.selects(name) {
            run_global(name, algorithm, runs);
        }
    }
}
