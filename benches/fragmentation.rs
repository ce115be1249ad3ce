//! The fragmentation paper's experiment (Zakerzadeh et al., §6) on creditcard (30,000 records, 23
//! integer-coded features, the binary class `default-payment-next-month`), through the shared run
//! pipeline: for the first 10, 15, 20 and 23 features and k ∈ {10, 40, 100}, unfragmented Mondrian
//! against fragmentation into two fragments with each repair (naive, DGBE, δ-selectivity with δ = 0.5),
//! and both again with distinct 2-diversity of the class (`-l2`: the segment pipeline; a binary class is
//! one segment).
//!
//! Per case: the median engine time (`run_job`: resolution, the algorithm, verification), the median
//! whole-job time (the engine, the report without classification, and writing every output CSV), the
//! information loss of §5.3 computed from the published CSV texts (a range's width over the feature's,
//! averaged over every feature cell of every published table), the class values the repair changed, and
//! the weighted F-measure of the decision tree and the 5-NN classifier trained on the published records
//! (70/30 split, seed 1) next to the same learners on the original records. Peak memory is the process's
//! (VmHWM) after the case. Reading the CSV is excluded.
//!
//! `cargo bench --bench fragmentation` runs every case; `-- d23` filters by name (`d23-k40-dgbe`);
//! `--runs N` (default 3).

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Instant;

use anonymizer::codec::{read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::core::data::Table;
use anonymizer::domain::run::run_job;
use anonymizer::domain::JobSpec;

fn load() -> Table {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/creditcard/creditcard_int.csv");
    let bytes = std::fs::read(path).expect("tests/data/creditcard");
    read_table(
        &bytes[..],
        &CsvOptions::with_delimiter(";").expect("delimiter"),
    )
    .expect("creditcard")
}

/// The spec of one case: the first `d` features as quasi-identifiers, the others dropped.
fn spec(table: &Table, d: usize, k: u64, method: &str, utility: bool) -> JobSpec {
    let columns = table.columns();
    let (class, features) = columns.split_last().expect("class");
    let mut attributes = serde_json::Map::new();
    for (j, feature) in features.iter().enumerate() {
        let role = if j < d {
            "quasi_identifier"
        } else {
            "identifying"
        };
        attributes.insert(feature.name.clone(), serde_json::json!({"role": role}));
    }
    attributes.insert(class.name.clone(), serde_json::json!({"role": "sensitive"}));
    let (method, diverse) = match method.strip_suffix("-l2") {
        Some(base) => (base, true),
        None => (method, false),
    };
    let algorithm = match method {
        "mondrian" => serde_json::json!({"type": "mondrian"}),
        strategy => serde_json::json!({"type": "fragmentation", "class": class.name,
                                        "fragments": 2, "strategy": strategy}),
    };
    let mut models = vec![serde_json::json!({"type": "k_anonymity", "k": k})];
    if diverse {
        models.push(
            serde_json::json!({"type": "distinct_l_diversity", "attribute": class.name, "l": 2}),
        );
    }
    let mut spec = serde_json::json!({
        "attributes": attributes,
        "privacy_models": models,
        "algorithm": algorithm,
    });
    if utility {
        spec["utility"] = serde_json::json!({"class": class.name, "seed": 1});
    }
    JobSpec::from_json(spec.to_string().as_bytes()).expect("spec")
}

/// Per feature column of a published CSV: Σ over its cells of the cell's width, and the cells.
fn cell_widths(csv: &[u8], class: &str, sums: &mut std::collections::HashMap<String, (f64, u64)>) {
    let mut reader = csv::ReaderBuilder::new().from_reader(csv);
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    for record in reader.records() {
        let record = record.expect("record");
        for (name, cell) in header.iter().zip(record.iter()) {
            if name == class {
                continue;
            }
            let width = match cell.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
                Some(range) => {
                    let (low, high) = range.split_once(" .. ").expect("a range");
                    high.parse::<f64>().expect("number") - low.parse::<f64>().expect("number")
                }
                None => 0.0,
            };
            let entry = sums.entry(name.clone()).or_insert((0.0, 0));
            entry.0 += width;
            entry.1 += 1;
        }
    }
}

/// The process's peak resident memory in MiB.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let args = support::Args::parse(3, "d10-k100-dgbe");
    let table = load();
    let class = table.columns().last().expect("class").name.clone();
    // each feature's width over every record
    let widths: std::collections::HashMap<String, f64> = table.columns()
        [..table.columns().len() - 1]
        .iter()
        .map(|c| {
            let numbers: Vec<f64> = c
                .dictionary
                .values()
                .map(|v| v.parse().unwrap_or(0.0))
                .collect();
            let low = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let high = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (c.name.clone(), high - low)
        })
        .collect();
    println!(
        "| features | k | method | engine median (min–max) | whole job median | IL | F tree (original) | F 5-NN (original) | changed | peak |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let resolve = |_: &anonymizer::domain::spec::HierarchySpec| Err("inline only".to_string());
    for d in [10usize, 15, 20, 23] {
        for k in [10u64, 40, 100] {
            for method in [
                "mondrian",
                "naive",
                "dgbe",
                "delta_selectivity",
                "mondrian-l2",
                "dgbe-l2",
            ] {
                let name = format!("d{d}-k{k}-{method}");
                if !args.selects(&name) {
                    continue;
                }
                let plain = spec(&table, d, k, method, false);
                let mut engine = Vec::new();
                let mut whole = Vec::new();
                let mut outputs: Vec<Vec<u8>> = Vec::new();
                let mut changed = 0;
                for _ in 0..args.runs {
                    let started = Instant::now();
                    let done = run_job(&table, &plain, &resolve, &NoControl).expect("run");
                    engine.push(started.elapsed().as_secs_f64());
                    let report = done.report();
                    outputs.clear();
                    for i in 0..done.outputs() {
                        let mut bytes = Vec::new();
                        done.write_output(i, &mut bytes, &CsvOptions::default())
                            .expect("write");
                        outputs.push(bytes);
                    }
                    whole.push(started.elapsed().as_secs_f64());
                    changed = report
                        .fragmentation
                        .as_ref()
                        .map_or(0, |f| f.summary.class_values_changed);
                }
                let mut sums = std::collections::HashMap::new();
                for csv in &outputs {
                    cell_widths(csv, &class, &mut sums);
                }
                let loss = sums
                    .iter()
                    .map(|(name, (sum, cells))| {
                        let width = widths[name];
                        if width > 0.0 {
                            sum / width / *cells as f64
                        } else {
                            0.0
                        }
                    })
                    .sum::<f64>()
                    / sums.len() as f64;
                let measured = run_job(
                    &table,
                    &spec(&table, d, k, method, true),
                    &resolve,
                    &NoControl,
                )
                .expect("run")
                .report();
                let f = measured.classification.expect("classification");
                let (e, w) = (support::Timing::of(&engine), support::Timing::of(&whole));
                println!(
                    "| {d} | {k} | {method} | {:.1} ms ({:.1}–{:.1}) | {:.2} s | {loss:.3} | {:.3} ({:.3}) | {:.3} ({:.3}) | {changed} | {:.0} MiB |",
                    e.median * 1000.0,
                    e.min * 1000.0,
                    e.max * 1000.0,
                    w.median,
                    f.decision_tree.anonymized.weighted_f,
                    f.decision_tree.original.weighted_f,
                    f.nearest_neighbours.anonymized.weighted_f,
                    f.nearest_neighbours.original.weighted_f,
                    peak_mib()
                );
            }
        }
    }
}
