//! `assess --published` against the engine's own outputs: the loss measures and dependency loss read
//! back from the published CSV equal the job report's, for every algorithm, whether the rows come in
//! the original order or shuffled (then paired by content).

use anonymizer::codec::{read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::domain::analysis::published::{assess_published, Pairing};
use anonymizer::domain::resolve::prepare;
use anonymizer::domain::run::run_job;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::error_code::ErrorCode;

use super::local_recoding::dependency_job;

/// Whether two report values agree, numbers to 1e-9 relative.
fn agree(a: &serde_json::Value, b: &serde_json::Value, path: &str, skip: &[&str]) -> Vec<String> {
    use serde_json::Value;
    if skip.contains(&path) {
        return Vec::new();
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut diffs: Vec<String> = x
                .iter()
                .flat_map(|(k, v)| {
                    agree(
                        v,
                        y.get(k).unwrap_or(&Value::Null),
                        &format!("{path}/{k}"),
                        skip,
                    )
                })
                .collect();
            if x.len() != y.len() {
                diffs.push(format!("{path}: keys differ"));
            }
            diffs
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .flat_map(|(i, (u, v))| agree(u, v, &format!("{path}/{i}"), skip))
            .collect(),
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() <= 1e-9 * x.abs().max(1.0) {
                Vec::new()
            } else {
                vec![format!("{path}: {x} against {y}")]
            }
        }
        _ if a == b => Vec::new(),
        _ => vec![format!("{path}: {a} against {b}")],
    }
}

/// The CSV with its data lines in a fixed scrambled order.
fn shuffled(csv: &str) -> String {
    let mut lines: Vec<&str> = csv.lines().collect();
    let header = lines.remove(0);
    let n = lines.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (i * 7919 + 13) % n.max(1));
    let mut out = String::from(header);
    for i in order {
        out.push('\n');
        out.push_str(lines[i]);
    }
    out.push('\n');
    out
}

#[test]
fn published_outputs_measure_as_their_reports_say() {
    let no_files = |_: &HierarchySpec| -> Result<anonymizer::domain::Resolved, String> {
        Err("inline only".into())
    };
    for algorithm in [
        serde_json::json!({"type": "flash"}),
        serde_json::json!({"type": "mondrian"}),
        serde_json::json!({"type": "mondrian", "relaxed": true}),
        serde_json::json!({"type": "k_member", "seed": 3}),
        serde_json::json!({"type": "top_down", "seed": 3}),
        serde_json::json!({"type": "pair_enum"}),
        serde_json::json!({"type": "k_assemble", "seed": 5}),
    ] {
        let (table, spec) = dependency_job(240, algorithm.clone());
        let done = run_job(&table, &spec, &no_files, &NoControl).unwrap_or_else(|e| panic!("{e}"));
        let report = serde_json::to_value(done.report()).unwrap();
        let mut csv = Vec::new();
        done.write_csv(&mut csv, &CsvOptions::default()).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let prepared = prepare(&table, &spec, &no_files).unwrap();
        let out = read_table(csv.as_bytes(), &CsvOptions::default()).unwrap();
        let a = assess_published(&table, &out, &prepared).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.pairing, Pairing::Order, "{algorithm}");
        let diffs = agree(
            &report["loss_measures"],
            &serde_json::to_value(&a.loss_measures).unwrap(),
            "",
            &[],
        );
        assert!(diffs.is_empty(), "{algorithm}: {diffs:?}");
        let diffs = agree(
            &report["dependencies"],
            &serde_json::to_value(&a.dependencies).unwrap(),
            "",
            &[],
        );
        assert!(diffs.is_empty(), "{algorithm}: {diffs:?}");
        // the report counts records generalized to `*` everywhere as a class, the published table
        // cannot tell them from suppressed records and counts them apart
        let all_stars = report["fully_generalized_records"].as_u64().unwrap()
            + report["suppressed_records"].as_u64().unwrap();
        assert_eq!(a.fully_generalized_records, all_stars, "{algorithm}");
        let star_class = u64::from(report["fully_generalized_records"].as_u64().unwrap() > 0);
        assert_eq!(
            (a.classes + star_class, a.k),
            (
                report["equivalence_classes"]["count"].as_u64().unwrap(),
                report["equivalence_classes"]["min"].as_u64().unwrap()
            ),
            "{algorithm}"
        );
        // shuffled rows pair by content, where equal-looking records may take other rows than the
        // engine's: the measures of a record against its own class (the mean inflation, the hybrid
        // variance) and those of a class's sensitive values (noise scanning) may then differ, every
        // other measure is the same
        let mixed = read_table(shuffled(&csv).as_bytes(), &CsvOptions::default()).unwrap();
        let b = assess_published(&table, &mixed, &prepared).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.pairing, Pairing::Content, "{algorithm}");
        assert_eq!((b.classes, b.k), (a.classes, a.k));
        let diffs = agree(
            &serde_json::to_value(&a.loss_measures).unwrap(),
            &serde_json::to_value(&b.loss_measures).unwrap(),
            "",
            &[
                "/volume_inflation/mean",
                "/variance/0/hybrid",
                "/variance/0/hybrid_ratio",
                "/noise/0/mean",
                "/noise/0/max",
                "/noise/0/noisy_classes",
                "/noise/0/queries",
            ],
        );
        assert!(diffs.is_empty(), "{algorithm} shuffled: {diffs:?}");
    }
}

#[test]
fn relocated_cells_cannot_be_paired() {
    let no_files = |_: &HierarchySpec| -> Result<anonymizer::domain::Resolved, String> {
        Err("inline only".into())
    };
    let (table, spec) = dependency_job(
        240,
        serde_json::json!({"type": "hybrid", "relocation_limit": 0.05, "mode": "deterministic"}),
    );
    let done = run_job(&table, &spec, &no_files, &NoControl).unwrap_or_else(|e| panic!("{e}"));
    let relocated = serde_json::to_value(done.report()).unwrap()["recoding"]["details"]
        ["rows_relocated"]
        .as_u64()
        .unwrap_or(0);
    let mut csv = Vec::new();
    done.write_csv(&mut csv, &CsvOptions::default()).unwrap();
    let prepared = prepare(&table, &spec, &no_files).unwrap();
    let out = read_table(&csv[..], &CsvOptions::default()).unwrap();
    match assess_published(&table, &out, &prepared) {
        Ok(a) => assert_eq!(relocated, 0, "{a:?}"),
        Err(e) => {
            assert!(relocated > 0);
            assert_eq!(e.code, ErrorCode::PublishedUnpaired, "{e}");
        }
    }
}
