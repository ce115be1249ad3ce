//! Local recoding through the CLI's path (JobSpec JSON → `prepare` → local algorithm → independent
//! verification → CSV and report), with every published table checked again here from its CSV text:
//! classes by quasi-identifier text, the requested models per class, every cell covering the record's
//! original value, and the other columns unchanged.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anonymizer::codec::{parse_arx_hierarchy, read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::core::data::{Hierarchy, Table};
use anonymizer::domain::pipeline::{run, RunError};
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::JobSpec;

/// The columns of adult.csv, in file order.
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

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult")
}

fn adult() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let file = File::open(data_dir().join("adult.csv")).unwrap();
        read_table(
            BufReader::new(file),
            &CsvOptions::with_delimiter(";").unwrap(),
        )
        .unwrap()
    })
}

fn resolve(source: &HierarchySpec) -> Result<Hierarchy, String> {
    match source {
        HierarchySpec::Path { path, .. } => {
            let bytes = std::fs::read(data_dir().join(path)).map_err(|e| e.to_string())?;
            parse_arx_hierarchy(&bytes, b';').map_err(|e| e.to_string())
        }
        _ => Err("only paths are used here".into()),
    }
}

fn hierarchy_rows(path: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(data_dir().join(path))
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect()
}

/// Adult with age numeric (no hierarchy), the other seven as categorical quasi-identifiers and
/// `salary-class` sensitive.
fn adult_spec(models: serde_json::Value, algorithm: serde_json::Value) -> JobSpec {
    let attributes: serde_json::Map<String, serde_json::Value> = ADULT
        .iter()
        .map(|&c| {
            let value = match c {
                "salary-class" => serde_json::json!({"role": "sensitive"}),
                "age" => serde_json::json!({"role": "quasi_identifier", "data_type": "numeric"}),
                _ => serde_json::json!({"role": "quasi_identifier",
                    "hierarchy": {"path": format!("adult_hierarchy_{c}.csv")}}),
            };
            (c.to_string(), value)
        })
        .collect();
    let spec = serde_json::json!({
        "csv": {"delimiter": ";"},
        "attributes": attributes,
        "privacy_models": models,
        "algorithm": algorithm,
    });
    JobSpec::from_json(spec.to_string().as_bytes()).unwrap()
}

/// The published CSV as rows of texts (header first).
fn published(table: &Table, spec: &JobSpec) -> (Vec<Vec<String>>, serde_json::Value) {
    let done = run(table, spec, &resolve, &NoControl).unwrap_or_else(|e| panic!("{e}"));
    let mut csv = Vec::new();
    done.write_csv(&mut csv, &CsvOptions::with_delimiter(";").unwrap())
        .unwrap();
    let rows = String::from_utf8(csv)
        .unwrap()
        .lines()
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect();
    (rows, serde_json::to_value(done.report()).unwrap())
}

/// Whether a published age text covers the original age.
fn age_covers(published: &str, original: &str) -> bool {
    let value: f64 = original.parse().unwrap();
    match published
        .strip_prefix('[')
        .and_then(|p| p.strip_suffix(']'))
    {
        Some(range) => {
            let (low, high) = range.split_once('-').unwrap();
            low.parse::<f64>().unwrap() <= value && value <= high.parse::<f64>().unwrap()
        }
        None => published == original,
    }
}

#[test]
fn mondrian_on_adult_is_k_anonymous_diverse_and_truthful() {
    let table = adult();
    let mut ancestors: HashMap<&str, HashMap<String, BTreeSet<String>>> = HashMap::new();
    for c in ADULT.iter().filter(|&&c| c != "age" && c != "salary-class") {
        let mut map: HashMap<String, BTreeSet<String>> = HashMap::new();
        for row in hierarchy_rows(&format!("adult_hierarchy_{c}.csv")) {
            map.insert(row[0].clone(), row.iter().cloned().collect());
        }
        ancestors.insert(c, map);
    }
    // the original rows, in file order
    let original: Vec<Vec<&str>> = (0..table.row_count())
        .map(|r| {
            table
                .columns()
                .iter()
                .map(|c| c.dictionary.value(c.codes[r]))
                .collect()
        })
        .collect();
    for (models, l) in [
        (serde_json::json!([{"type": "k_anonymity", "k": 5}]), 1),
        (
            serde_json::json!([{"type": "k_anonymity", "k": 5},
                {"type": "distinct_l_diversity", "attribute": "salary-class", "l": 2}]),
            2,
        ),
    ] {
        for relaxed in [false, true] {
            let spec = adult_spec(
                models.clone(),
                serde_json::json!({"type": "mondrian", "relaxed": relaxed}),
            );
            let (rows, report) = published(table, &spec);
            let what = format!("l = {l}, relaxed = {relaxed}");
            let header = &rows[0];
            assert_eq!(header.len(), 9);
            assert_eq!(rows.len(), table.row_count() + 1, "{what}");
            let salary = header.iter().position(|h| h == "salary-class").unwrap();
            let mut classes: HashMap<Vec<&str>, (u64, BTreeSet<&str>)> = HashMap::new();
            for (r, row) in rows[1..].iter().enumerate() {
                // nothing is reordered or suppressed by Mondrian
                for (c, name) in header.iter().enumerate() {
                    let source = original[r][table.column_index(name).unwrap()];
                    match name.as_str() {
                        "salary-class" => assert_eq!(row[c], source, "{what}"),
                        "age" => assert!(
                            age_covers(&row[c], source),
                            "{what}: {} vs {source}",
                            row[c]
                        ),
                        other => assert!(
                            ancestors[other][source].contains(&row[c]),
                            "{what}: {other} cell does not cover"
                        ),
                    }
                }
                let key: Vec<&str> = (0..row.len())
                    .filter(|&c| c != salary)
                    .map(|c| row[c].as_str())
                    .collect();
                let class = classes.entry(key).or_default();
                class.0 += 1;
                class.1.insert(row[salary].as_str());
            }
            assert!(classes.values().all(|(n, _)| *n >= 5), "{what}");
            assert!(classes.values().all(|(_, s)| s.len() as u64 >= l), "{what}");
            // local recoding is far finer than full-domain generalization (a few hundred classes)
            assert!(classes.len() > 1000, "{what}: {} classes", classes.len());
            let recoding = &report["recoding"];
            assert_eq!(recoding["algorithm"], "mondrian");
            assert_eq!(
                recoding["groups"].as_u64().unwrap() as usize >= classes.len(),
                true
            );
            let gcp = recoding["metrics"]["gcp"].as_f64().unwrap();
            assert!(gcp > 0.0 && gcp < 1.0, "{what}: {gcp}");
            assert!(report.get("transformation").is_none());
            assert!(report["achieved"]["k"].as_u64().unwrap() >= 5);
            assert!(
                report["risk"]["after"]["prosecutor"]["highest"]
                    .as_f64()
                    .unwrap()
                    <= 0.2
            );
        }
    }
}

#[test]
fn spec_errors_of_local_recoding_are_specific() {
    let table = Table::from_rows(
        &["age", "grade", "zip"],
        &[
            vec!["30", "low", "1301"],
            vec!["31", "high", "1302"],
            vec!["x", "mid", "1303"],
            vec!["33", "low", "1304"],
        ],
    );
    let no_files = |_: &HierarchySpec| -> Result<Hierarchy, String> { Err("inline only".into()) };
    let error = |json: &str| match run(
        &table,
        &JobSpec::from_json(json.as_bytes()).unwrap(),
        &no_files,
        &NoControl,
    ) {
        Err(RunError::Spec(e)) => (e.pointer, e.code),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("accepted: {json}"),
    };
    let spec = |age: &str, grade: &str, rest: &str| {
        format!(
            r#"{{"attributes": {{"age": {age}, "grade": {grade}, "zip": {{"role": "insensitive"}}}},
                "privacy_models": [{{"type": "k_anonymity", "k": 2}}], {rest}}}"#
        )
    };
    let ordinal =
        r#"{"role": "quasi_identifier", "data_type": "ordinal", "order": ["low", "mid", "high"]}"#;
    let mondrian = r#""algorithm": {"type": "mondrian"}"#;
    // "x" is not a number: the age cannot be numeric
    assert_eq!(
        error(&spec(r#"{"role": "quasi_identifier"}"#, ordinal, mondrian)),
        ("/attributes/age".into(), "not_numeric")
    );
    let age = r#"{"role": "quasi_identifier", "data_type": "ordinal"}"#;
    assert_eq!(
        error(&spec(
            age,
            r#"{"role": "quasi_identifier", "data_type": "ordinal", "order": ["low", "high"]}"#,
            mondrian
        )),
        ("/attributes/grade/order".into(), "incomplete_order")
    );
    assert_eq!(
        error(&spec(
            age,
            r#"{"role": "quasi_identifier", "data_type": "ordinal", "order": ["low", "mid", "low", "high"]}"#,
            mondrian
        )),
        ("/attributes/grade/order".into(), "invalid_order")
    );
    assert_eq!(
        error(&spec(
            age,
            r#"{"role": "quasi_identifier", "data_type": "categorical"}"#,
            mondrian
        )),
        ("/attributes/grade/hierarchy".into(), "missing_hierarchy")
    );
    assert_eq!(
        error(&spec(
            age,
            ordinal,
            r#""algorithm": {"type": "mondrian", "split_preference": ["zip"]}"#
        )),
        (
            "/algorithm/split_preference/0".into(),
            "unknown_quasi_identifier"
        )
    );
    assert_eq!(
        error(&spec(
            age,
            ordinal,
            r#""algorithm": {"type": "mondrian"}, "suppression_limit": 0.1"#
        )),
        ("/suppression_limit".into(), "unsupported_option")
    );
    // full-domain algorithms still need hierarchies, and take no functional dependencies
    assert_eq!(
        error(&spec(age, ordinal, r#""algorithm": {"type": "flash"}"#)),
        ("/attributes/age/hierarchy".into(), "missing_hierarchy")
    );
    assert_eq!(
        error(&spec(
            age,
            ordinal,
            r#""algorithm": {"type": "mondrian"}, "functional_dependencies": [{"lhs": ["zap"], "rhs": ["zip"]}]"#
        )),
        ("/functional_dependencies/0/lhs/0".into(), "unknown_column")
    );
    // ordinal ranges follow the declared order (low < mid < high), not the text order
    let done = run(
        &table,
        &JobSpec::from_json(spec(age, ordinal, mondrian).as_bytes()).unwrap(),
        &no_files,
        &NoControl,
    )
    .unwrap();
    let mut csv = Vec::new();
    done.write_csv(&mut csv, &CsvOptions::default()).unwrap();
    let text = String::from_utf8(csv).unwrap();
    for line in text.lines().skip(1) {
        let grade = line.split(',').nth(1).unwrap();
        assert!(
            [
                "low",
                "mid",
                "high",
                "[low-mid]",
                "[mid-high]",
                "[low-high]"
            ]
            .contains(&grade),
            "{text}"
        );
    }
}
