//! End-to-end tests of the `anonymizer` binary: real processes on files in temporary directories.
//!
//! Covers a full run on the adult benchmark (the only test that uses it), removal of suppressed records,
//! column roles, every user-facing error (exit code, a single `error:` line that names the problem and
//! never echoes a cell value, no output file left behind), determinism, and the JSON and inline hierarchy
//! sources. Everything but the adult run works on small generated tables, so the file runs in seconds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

use crate::csv_battery;

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");

/// A cell value planted in the data of error cases; no message may contain it.
const SECRET: &str = "SECRET-VALUE-123";

const ADULT_COLUMNS: [&str; 9] = [
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

fn data_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name)
}

/// A temporary working directory holding the inputs of one run and its outputs.
struct Case {
    dir: TempDir,
}

impl Case {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create directory");
        }
        std::fs::write(&path, bytes).expect("write file");
        path
    }

    fn write_spec(&self, name: &str, spec: &Value) -> PathBuf {
        self.write(
            name,
            serde_json::to_vec_pretty(spec).expect("serialize spec"),
        )
    }

    /// Runs `anonymize` with `out.csv` and `report.json` in this directory, from an unrelated working
    /// directory so that nothing depends on it.
    fn run(&self, input: &Path, spec: &Path) -> Output {
        self.run_to(input, spec, "out.csv")
    }

    fn run_to(&self, input: &Path, spec: &Path, output: &str) -> Output {
        Command::new(BIN)
            .current_dir(std::env::temp_dir())
            .arg("anonymize")
            .arg("--input")
            .arg(input)
            .arg("--spec")
            .arg(spec)
            .arg("--output")
            .arg(self.path(output))
            .arg("--report")
            .arg(self.path(&format!("{output}.report.json")))
            .arg("--quiet")
            .output()
            .expect("run the anonymizer binary")
    }

    fn report(&self, output: &str) -> Value {
        let bytes = std::fs::read(self.path(&format!("{output}.report.json"))).expect("report");
        serde_json::from_slice(&bytes).expect("report is JSON")
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("list directory")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "exit {:?}, stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Reads a `;`-separated CSV file into its header and records, field by field, as bytes.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<Vec<u8>>>) {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(b';')
        .has_headers(true)
        .from_path(path)
        .expect("open CSV");
    let header = reader
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    let records = reader
        .byte_records()
        .map(|r| r.expect("record").iter().map(<[u8]>::to_vec).collect())
        .collect();
    (header, records)
}

fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

// ---------------------------------------------------------------------------------------------------------
// A small generated table: people with an identifying name, three quasi-identifiers, a sensitive diagnosis
// and an insensitive free-text note whose values need quoting or carry odd whitespace.

const AGES: [u32; 10] = [21, 25, 34, 38, 41, 47, 52, 58, 63, 69];
const ZIPS: [&str; 6] = ["81667", "81669", "81675", "81925", "81931", "81939"];
const SEXES: [&str; 2] = ["male", "female"];
const DIAGNOSES: [&str; 4] = ["flu", "asthma", "diabetes", "none"];
const NOTES: [&str; 6] = [
    "plain",
    "semi;colon",
    "say \"hi\"",
    " padded ",
    "",
    "Zürich",
];

/// `rows` records drawn by a fixed linear congruential generator.
fn people_csv(rows: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % n as u64) as usize
    };
    let mut writer = csv::WriterBuilder::new()
        .delimiter(b';')
        .from_writer(Vec::new());
    writer
        .write_record(["name", "age", "zip", "sex", "diagnosis", "note"])
        .unwrap();
    for r in 0..rows {
        let name = format!("Person {r:05}");
        let age = AGES[next(AGES.len())].to_string();
        let zip = ZIPS[next(ZIPS.len())];
        let sex = SEXES[next(SEXES.len())];
        let diagnosis = DIAGNOSES[next(DIAGNOSES.len())];
        let note = NOTES[next(NOTES.len())];
        writer
            .write_record([name.as_str(), &age, zip, sex, diagnosis, note])
            .unwrap();
    }
    String::from_utf8(writer.into_inner().unwrap()).unwrap()
}

/// Rows of the age hierarchy: value, decade, half-century, `*`.
fn age_levels() -> Vec<Vec<String>> {
    (0..100u32)
        .map(|a| {
            let decade = format!("{}-{}", a / 10 * 10, a / 10 * 10 + 9);
            let half = if a < 50 { "<50" } else { ">=50" };
            vec![a.to_string(), decade, half.to_string(), "*".to_string()]
        })
        .collect()
}

fn zip_levels() -> Vec<Vec<String>> {
    ZIPS.iter()
        .map(|z| {
            vec![
                z.to_string(),
                format!("{}*", &z[..4]),
                format!("{}**", &z[..3]),
                "*".to_string(),
            ]
        })
        .collect()
}

fn sex_levels() -> Vec<Vec<String>> {
    SEXES
        .iter()
        .map(|s| vec![s.to_string(), "*".to_string()])
        .collect()
}

fn arx(levels: &[Vec<String>]) -> String {
    levels.iter().map(|row| row.join(";") + "\n").collect()
}

/// Writes the three hierarchies as ARX CSV files into `dir` and returns the spec that uses them.
fn people_spec(case: &Case, dir: &str) -> Value {
    case.write(&format!("{dir}/age.csv"), arx(&age_levels()));
    case.write(&format!("{dir}/zip.csv"), arx(&zip_levels()));
    case.write(&format!("{dir}/sex.csv"), arx(&sex_levels()));
    json!({
        "csv": {"delimiter": ";"},
        "attributes": {
            "name": {"role": "identifying"},
            "age": {"role": "quasi_identifier", "hierarchy": {"path": format!("{dir}/age.csv")}},
            "zip": {"role": "quasi_identifier", "hierarchy": {"path": format!("{dir}/zip.csv")}},
            "sex": {"role": "quasi_identifier", "hierarchy": {"path": format!("{dir}/sex.csv")}},
            "diagnosis": {"role": "sensitive"},
            "note": {"role": "insensitive"}
        },
        "privacy_models": [{"type": "k_anonymity", "k": 3}],
        "suppression_limit": 0.05,
        "algorithm": {"type": "flash"},
        "metric": "granularity"
    })
}

// ---------------------------------------------------------------------------------------------------------
// (a) adult, all nine columns as quasi-identifiers

/// The adult table with its nine quasi-identifiers (hierarchy files copied into `case`), k = 5 at 4 %,
/// flash, nu_entropy: the spec's path and the input's.
fn adult_k5_case(case: &Case) -> (PathBuf, PathBuf) {
    let source = data_dir("adult");
    let mut attributes = serde_json::Map::new();
    for name in ADULT_COLUMNS {
        let file = format!("adult_hierarchy_{name}.csv");
        let bytes = std::fs::read(source.join(&file)).expect("adult hierarchy");
        case.write(&format!("hierarchies/{file}"), bytes);
        attributes.insert(
            name.to_string(),
            json!({"role": "quasi_identifier", "hierarchy": {"path": format!("hierarchies/{file}")}}),
        );
    }
    let spec = case.write_spec(
        "spec.json",
        &json!({
            "csv": {"delimiter": ";"},
            "attributes": attributes,
            "privacy_models": [{"type": "k_anonymity", "k": 5}],
            "suppression_limit": 0.04,
            "algorithm": {"type": "flash"},
            "metric": "nu_entropy"
        }),
    );
    (spec, source.join("adult.csv"))
}

/// `--transformation` with the node flash finds publishes the same table and metrics without a search
/// (a one-node lattice).
#[test]
fn a_fixed_transformation_on_the_command_line_publishes_that_node() {
    let case = Case::new();
    let (spec, input) = adult_k5_case(&case);
    assert_success(&case.run_to(&input, &spec, "searched.csv"));
    let searched = case.report("searched.csv");
    let levels: Vec<String> = searched["transformation"]
        .as_object()
        .expect("transformation")
        .iter()
        .map(|(name, level)| format!("{name}={level}"))
        .collect();
    let output = run_with(
        &case,
        &input,
        &spec,
        &["--transformation", &levels.join(",")],
        &[],
    );
    assert_success(&output);
    let fixed = case.report("out.csv");
    assert_eq!(fixed["transformation"], searched["transformation"]);
    assert_eq!(fixed["metrics"], searched["metrics"]);
    assert_eq!(fixed["search"]["lattice_size"], 1);
    assert_eq!(
        std::fs::read(case.path("out.csv")).expect("fixed output"),
        std::fs::read(case.path("searched.csv")).expect("searched output")
    );
    // a column that is no quasi-identifier is refused with its pointer
    let bad = run_with(&case, &input, &spec, &["--transformation", "nope=1"], &[]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/transformation/nope"));
}

/// `"candidates": 3`: the report lists the three best, the terminal summary (without `--report`) names
/// them as `--transformation` takes them, and the third passed to `--transformation` publishes the
/// table whose report matches the third candidate.
#[test]
fn candidates_are_listed_and_one_is_published_with_the_transformation_flag() {
    let case = Case::new();
    let (spec, input) = adult_k5_case(&case);
    let mut ranked: Value = serde_json::from_slice(&std::fs::read(&spec).expect("spec")).unwrap();
    ranked["candidates"] = json!(3);
    let ranked_spec = case.write_spec("ranked.json", &ranked);
    assert_success(&case.run_to(&input, &ranked_spec, "ranked.csv"));
    let report = case.report("ranked.csv");
    let list = report["candidates"]["list"].as_array().expect("candidates");
    assert_eq!(list.len(), 3, "{report}");
    assert_eq!(report["candidates"]["exact"], true);
    assert_eq!(list[0]["transformation"], report["transformation"]);
    let third: Vec<String> = list[2]["transformation"]
        .as_object()
        .expect("levels")
        .iter()
        .map(|(name, level)| format!("{name}={level}"))
        .collect();
    let third = third.join(",");
    assert_success(&run_with(
        &case,
        &input,
        &spec,
        &["--transformation", &third],
        &[],
    ));
    let fixed = case.report("out.csv");
    assert_eq!(fixed["transformation"], list[2]["transformation"]);
    assert_eq!(fixed["metrics"], list[2]["metrics"]);
    assert_eq!(fixed["suppressed_records"], list[2]["suppressed_records"]);
    let summary = Command::new(BIN)
        .current_dir(std::env::temp_dir())
        .arg("anonymize")
        .arg("--input")
        .arg(&input)
        .arg("--spec")
        .arg(&ranked_spec)
        .arg("--output")
        .arg(case.path("summary.csv"))
        .arg("--quiet")
        .output()
        .expect("run the anonymizer binary");
    assert_success(&summary);
    let stderr = String::from_utf8_lossy(&summary.stderr);
    assert!(stderr.contains("candidates (the proven best"), "{stderr}");
    assert!(stderr.contains(&format!("  3. {third} loss")), "{stderr}");
}

#[test]
fn adult_k5_flash_nu_entropy() {
    let case = Case::new();
    let (spec, input) = adult_k5_case(&case);
    let source = data_dir("adult");
    let output = case.run(&input, &spec);
    assert_success(&output);

    let report = case.report("out.csv");
    let expected = json!({
        "sex": 1, "age": 0, "race": 1, "marital-status": 1, "education": 3,
        "native-country": 2, "workclass": 2, "occupation": 0, "salary-class": 1
    });
    assert_eq!(report["transformation"], expected);
    assert_eq!(report["records"], 30162);
    let suppressed = report["suppressed_records"]
        .as_u64()
        .expect("suppressed_records");
    assert!(
        suppressed <= 1206,
        "{suppressed} suppressed, floor(0.04 × 30162) = 1206"
    );
    for metric in [
        "precision",
        "dm_star",
        "discernibility",
        "nu_entropy",
        "aecs",
        "height",
        "granularity",
    ] {
        assert!(
            report["metrics"][metric].is_number(),
            "metrics.{metric} missing: {report}"
        );
    }
    assert_eq!(report["metric"], "nu_entropy");
    assert_eq!(report["loss"], report["metrics"]["nu_entropy"]);
    assert_eq!(report["metrics"]["height"], 11.0);
    let classes = &report["equivalence_classes"];
    for field in ["count", "min", "max", "mean"] {
        assert!(
            classes[field].is_number(),
            "equivalence_classes.{field} missing"
        );
    }
    let search = &report["search"];
    assert_eq!(search["algorithm"], "flash");
    assert_eq!(search["lattice_size"], 12960);
    assert!(search["nodes_checked"].as_u64().expect("nodes_checked") > 0);
    assert!(search["elapsed_ms"].is_number());

    // the output: same rows, suppressed rows masked, every published class of size ≥ 5
    let (in_header, in_rows) = read_csv(&input);
    let (header, rows) = read_csv(&case.path("out.csv"));
    assert_eq!(header, in_header);
    assert_eq!(rows.len(), in_rows.len());
    let mut masked = 0u64;
    let mut classes_seen: HashMap<&[Vec<u8>], u64> = HashMap::new();
    for row in &rows {
        assert_eq!(row.len(), ADULT_COLUMNS.len());
        if row.iter().all(|cell| cell == b"*") {
            masked += 1;
        } else {
            // age and occupation stay at level 0, so only suppressed rows have `*` there
            assert_ne!(row[column(&header, "age")], b"*");
            assert_ne!(row[column(&header, "occupation")], b"*");
            *classes_seen.entry(row.as_slice()).or_default() += 1;
        }
    }
    assert_eq!(masked, suppressed);
    let smallest = classes_seen.values().copied().min().expect("some class");
    assert!(smallest >= 5, "a published class has {smallest} records");
    assert_eq!(classes["count"], classes_seen.len() as u64);
    assert_eq!(classes["min"], smallest);
    assert_eq!(
        classes["max"],
        classes_seen.values().copied().max().unwrap()
    );
    // generalized values are the hierarchy's labels: sex at level 1 is its top
    assert!(rows.iter().all(|r| r[column(&header, "sex")] == b"*"));

    check_against_definitions(&report, &source, &in_rows, &rows);
}

/// Recomputes the adult run from the input, the hierarchies and the reported transformation: every
/// published row is the input row generalized, the suppressed records are exactly those in classes
/// smaller than k, and every reported metric matches its definition (src/core/loss/mod.rs).
fn check_against_definitions(
    report: &Value,
    source: &Path,
    input: &[Vec<Vec<u8>>],
    output: &[Vec<Vec<u8>>],
) {
    const K: u64 = 5;
    let n = input.len() as f64;
    let q = ADULT_COLUMNS.len() as f64;
    // per column: leaf → its hierarchy row, and label → leaves under it at the chosen level
    let mut generalize: Vec<HashMap<Vec<u8>, Vec<u8>>> = Vec::new();
    let mut leaves_under: Vec<HashMap<Vec<u8>, u64>> = Vec::new();
    let mut leaf_count = Vec::new();
    let mut levels = Vec::new();
    let mut max_levels = Vec::new();
    for name in ADULT_COLUMNS {
        let level = report["transformation"][name].as_u64().unwrap() as usize;
        let text = std::fs::read_to_string(source.join(format!("adult_hierarchy_{name}.csv")))
            .expect("hierarchy");
        let hierarchy: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.split(';').collect())
            .collect();
        let mut map = HashMap::new();
        let mut under = HashMap::new();
        for row in &hierarchy {
            map.insert(row[0].as_bytes().to_vec(), row[level].as_bytes().to_vec());
            *under.entry(row[level].as_bytes().to_vec()).or_insert(0u64) += 1;
        }
        generalize.push(map);
        leaves_under.push(under);
        leaf_count.push(hierarchy.len() as u64);
        levels.push(level);
        max_levels.push(hierarchy[0].len() - 1);
    }
    let generalized: Vec<Vec<Vec<u8>>> = input
        .iter()
        .map(|row| {
            row.iter()
                .zip(&generalize)
                .map(|(cell, map)| map[cell].clone())
                .collect()
        })
        .collect();
    let mut class_sizes: HashMap<&[Vec<u8>], u64> = HashMap::new();
    for row in &generalized {
        *class_sizes.entry(row.as_slice()).or_default() += 1;
    }
    let mut suppressed = 0u64;
    let (mut dm_star, mut kept_squares, mut kept_classes) = (0u64, 0u64, 0u64);
    for &size in class_sizes.values() {
        dm_star += size * size;
        if size < K {
            suppressed += size;
        } else {
            kept_squares += size * size;
            kept_classes += 1;
        }
    }
    assert_eq!(report["suppressed_records"], suppressed);
    let mut granularity_cells = 0.0;
    for (r, (row, published)) in generalized.iter().zip(output).enumerate() {
        if class_sizes[row.as_slice()] < K {
            assert!(
                published.iter().all(|c| c == b"*"),
                "record {r} is not masked"
            );
            granularity_cells += q;
        } else {
            assert_eq!(row, published, "record {r} is not its generalization");
            for (j, label) in row.iter().enumerate() {
                granularity_cells +=
                    (leaves_under[j][label] - 1) as f64 / (leaf_count[j] - 1) as f64;
            }
        }
    }
    // non-uniform entropy: Σ_j Σ_records log2(#records with the same label / #records with the same value)
    let mut nu_entropy = 0.0;
    for j in 0..ADULT_COLUMNS.len() {
        let mut by_value: HashMap<&[u8], u64> = HashMap::new();
        let mut by_label: HashMap<&[u8], u64> = HashMap::new();
        for (row, g) in input.iter().zip(&generalized) {
            *by_value.entry(&row[j]).or_default() += 1;
            *by_label.entry(&g[j]).or_default() += 1;
        }
        for (value, &count) in &by_value {
            let label = generalize[j][*value].as_slice();
            nu_entropy += count as f64 * (by_label[label] as f64 / count as f64).log2();
        }
    }
    let expected = [
        (
            "precision",
            levels
                .iter()
                .zip(&max_levels)
                .map(|(&v, &h)| v as f64 / h as f64)
                .sum::<f64>()
                / q,
        ),
        ("height", levels.iter().sum::<usize>() as f64),
        ("dm_star", dm_star as f64),
        (
            "discernibility",
            kept_squares as f64 + n * suppressed as f64,
        ),
        (
            "aecs",
            n / (kept_classes + u64::from(suppressed > 0)) as f64,
        ),
        ("granularity", granularity_cells / (n * q)),
        ("nu_entropy", nu_entropy),
    ];
    for (metric, value) in expected {
        let reported = report["metrics"][metric].as_f64().unwrap();
        assert!(
            (reported - value).abs() <= 1e-9 * value.abs().max(1.0),
            "{metric}: reported {reported}, the definition gives {value}"
        );
    }
    let classes = &report["equivalence_classes"];
    assert_eq!(classes["count"], kept_classes);
    let mean = (n - suppressed as f64) / kept_classes as f64;
    assert!((classes["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
}

// ---------------------------------------------------------------------------------------------------------
// (b) removal and (c) roles

#[test]
fn suppressed_records_remove_drops_them() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(400));
    let mut spec = people_spec(&case, "h");
    let mask = case.write_spec("mask.json", &spec);
    spec["suppressed_records"] = json!("remove");
    let remove = case.write_spec("remove.json", &spec);

    assert_success(&case.run_to(&input, &mask, "masked.csv"));
    assert_success(&case.run_to(&input, &remove, "removed.csv"));
    let masked_report = case.report("masked.csv");
    let removed_report = case.report("removed.csv");
    let suppressed = removed_report["suppressed_records"].as_u64().unwrap();
    assert!(
        suppressed > 0,
        "the fixture must suppress something: {removed_report}"
    );
    assert_eq!(
        masked_report["transformation"],
        removed_report["transformation"]
    );
    assert_eq!(removed_report["suppressed_records_removed"], true);
    assert_eq!(removed_report["published_records"], 400 - suppressed);
    assert_eq!(masked_report["published_records"], 400);

    let (header, masked) = read_csv(&case.path("masked.csv"));
    let (_, removed) = read_csv(&case.path("removed.csv"));
    let qi: Vec<usize> = ["age", "zip", "sex"]
        .iter()
        .map(|c| column(&header, c))
        .collect();
    let is_masked = |row: &Vec<Vec<u8>>| qi.iter().all(|&j| row[j] == b"*");
    assert_eq!(
        masked.iter().filter(|r| is_masked(r)).count() as u64,
        suppressed
    );
    assert_eq!(removed.len() as u64, 400 - suppressed);
    assert!(!removed.iter().any(is_masked));
    // what remains is exactly the unsuppressed rows, in input order
    let kept: Vec<&Vec<Vec<u8>>> = masked.iter().filter(|r| !is_masked(r)).collect();
    assert_eq!(kept, removed.iter().collect::<Vec<_>>());
}

#[test]
fn roles_drop_identifying_and_keep_other_columns_verbatim() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(300));
    let spec = case.write_spec("spec.json", &people_spec(&case, "h"));
    assert_success(&case.run(&input, &spec));

    let (in_header, in_rows) = read_csv(&input);
    let (header, rows) = read_csv(&case.path("out.csv"));
    assert_eq!(header, ["age", "zip", "sex", "diagnosis", "note"]);
    assert_eq!(rows.len(), in_rows.len());
    for name in ["diagnosis", "note"] {
        let (i, o) = (column(&in_header, name), column(&header, name));
        for (r, (a, b)) in in_rows.iter().zip(&rows).enumerate() {
            assert_eq!(a[i], b[o], "column {name}, record {r}");
        }
    }
    let text = std::fs::read_to_string(case.path("out.csv")).unwrap();
    assert!(!text.contains("Person "), "identifying values leaked");
    // and the quasi-identifiers are the hierarchy labels at the reported levels
    let report = case.report("out.csv");
    let level = report["transformation"]["zip"].as_u64().unwrap() as usize;
    let zip = column(&header, "zip");
    let labels: Vec<String> = zip_levels().into_iter().map(|r| r[level].clone()).collect();
    for row in &rows {
        let cell = String::from_utf8(row[zip].clone()).unwrap();
        assert!(cell == "*" || labels.contains(&cell), "{cell}");
    }
}

/// `anonymize` with extra arguments and environment variables (`--quiet`, `out.csv`, its report).
fn run_with(case: &Case, input: &Path, spec: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command
        .current_dir(std::env::temp_dir())
        .env_remove("ANONYMIZER_PSEUDONYM_KEY")
        .arg("anonymize")
        .arg("--input")
        .arg(input)
        .arg("--spec")
        .arg(spec)
        .arg("--output")
        .arg(case.path("out.csv"))
        .arg("--report")
        .arg(case.path("out.csv.report.json"))
        .arg("--quiet")
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run the anonymizer binary")
}

/// k-map against `--population` (the input's 300 people and 600 more, read as the input is): the run
/// succeeds, and every published class matches at least k population records, counted here from the
/// hierarchy rows; without the population the run fails with `population_missing`.
#[test]
fn k_map_reads_the_population_file() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(300));
    // the generator's first 300 records are the input's
    let population = case.write("population.csv", people_csv(900));
    let mut spec = people_spec(&case, "h");
    spec["privacy_models"] = json!([{"type": "k_map", "k": 5}]);
    let spec = case.write_spec("spec.json", &spec);
    let population_arg = population.to_str().unwrap();
    let output = run_with(&case, &input, &spec, &["--population", population_arg], &[]);
    assert_success(&output);
    let report = case.report("out.csv");
    assert_eq!(
        report["privacy_models"],
        json!(["5-map (a population of 900 records)"])
    );
    // every published label, per column, with the population values it covers
    let hierarchies = [
        ("age", age_levels()),
        ("zip", zip_levels()),
        ("sex", sex_levels()),
    ];
    let (header, rows) = read_csv(&case.path("out.csv"));
    let (population_header, population_rows) = read_csv(&population);
    let mut classes: std::collections::HashSet<Vec<Vec<u8>>> = std::collections::HashSet::new();
    for row in &rows {
        let key: Vec<Vec<u8>> = hierarchies
            .iter()
            .map(|(name, _)| row[column(&header, name)].clone())
            .collect();
        if key.iter().any(|cell| cell != b"*") {
            classes.insert(key);
        }
    }
    assert!(!classes.is_empty());
    for class in &classes {
        let matches = population_rows
            .iter()
            .filter(|record| {
                hierarchies
                    .iter()
                    .zip(class)
                    .all(|((name, levels), label)| {
                        let value =
                            std::str::from_utf8(&record[column(&population_header, name)]).unwrap();
                        let label = std::str::from_utf8(label).unwrap();
                        levels
                            .iter()
                            .any(|row| row[0] == value && row.iter().any(|l| l == label))
                    })
            })
            .count();
        assert!(matches >= 5, "a class matches {matches} population records");
    }
    // the published table's assessment takes the same population
    let assessed = Command::new(BIN)
        .arg("assess")
        .arg("--input")
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .arg("--published")
        .arg(case.path("out.csv"))
        .arg("--population")
        .arg(&population)
        .output()
        .unwrap();
    assert_success(&assessed);
    std::fs::remove_file(case.path("out.csv")).unwrap();
    std::fs::remove_file(case.path("out.csv.report.json")).unwrap();
    let output = run_with(&case, &input, &spec, &[], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("population_missing"), "{stderr}");
    assert!(!case.path("out.csv").exists());
}

/// The identifying column `name` published as pseudonyms: from a key file or the environment, the same
/// key gives the same pseudonyms, another key others; the key shows nowhere; without a key, or with a
/// short one, the run fails naming the problem.
#[test]
fn pseudonyms_come_from_the_key_file_or_the_environment() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(300));
    let mut spec = people_spec(&case, "h");
    spec["attributes"]["name"]["operator"] = json!({"type": "pseudonym"});
    let spec = case.write_spec("spec.json", &spec);
    const KEY: &str = "KEY-0123456789abcdef0123456789abcdef";
    let key_file = case.write("pseudonym.key", format!("{KEY}\n"));
    let key_arg = key_file.to_str().unwrap();
    let pseudonyms = |output: Output| -> Vec<Vec<u8>> {
        assert_success(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains(KEY), "{stderr}");
        let (header, rows) = read_csv(&case.path("out.csv"));
        assert_eq!(header[0], "name");
        let report = std::fs::read_to_string(case.path("out.csv.report.json")).unwrap();
        assert!(
            !report.contains(KEY) && !report.contains("Person "),
            "{report}"
        );
        let identifiers = &case.report("out.csv")["identifiers"];
        assert_eq!(identifiers[0]["operator"], "pseudonym");
        assert_eq!(
            identifiers[0]["key_fingerprint"].as_str().unwrap().len(),
            16
        );
        rows.into_iter().map(|r| r[0].clone()).collect()
    };
    let from_file = pseudonyms(run_with(
        &case,
        &input,
        &spec,
        &["--pseudonym-key-file", key_arg],
        &[],
    ));
    // suppressed records show `*` instead of their pseudonym
    assert!(from_file
        .iter()
        .all(|p| p == b"*" || (p.len() == 32 && p.iter().all(u8::is_ascii_hexdigit))));
    assert!(from_file.iter().filter(|p| *p != b"*").count() > 250);
    let text = std::fs::read_to_string(case.path("out.csv")).unwrap();
    assert!(!text.contains("Person ") && !text.contains(KEY));
    // the file's final line break is not part of the key: the variable without one gives the same
    let from_env = pseudonyms(run_with(
        &case,
        &input,
        &spec,
        &[],
        &[("ANONYMIZER_PSEUDONYM_KEY", KEY)],
    ));
    assert_eq!(from_file, from_env);
    let other = pseudonyms(run_with(
        &case,
        &input,
        &spec,
        &[],
        &[(
            "ANONYMIZER_PSEUDONYM_KEY",
            "another-key-0123456789abcdef0123456789",
        )],
    ));
    assert!(from_file
        .iter()
        .zip(&other)
        .all(|(a, b)| a != b || a == b"*"));
    // each record's pseudonym is the library's HMAC of its name under the key
    let key = anonymizer::core::identifiers::PseudonymKey::new(KEY.as_bytes()).unwrap();
    let (in_header, in_rows) = read_csv(&input);
    let name = column(&in_header, "name");
    for (row, pseudonym) in in_rows.iter().zip(&from_file) {
        let value = std::str::from_utf8(&row[name]).unwrap();
        if pseudonym != b"*" {
            assert_eq!(key.pseudonym(value).as_bytes(), &pseudonym[..]);
        }
    }

    std::fs::remove_file(case.path("out.csv")).unwrap();
    std::fs::remove_file(case.path("out.csv.report.json")).unwrap();
    for (args, env, expected) in [
        (vec![], vec![], "pseudonym_key_missing"),
        (
            vec![],
            vec![("ANONYMIZER_PSEUDONYM_KEY", "short-SECRET")],
            "at least 32 bytes",
        ),
    ] {
        let output = run_with(&case, &input, &spec, &args, &env);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!stderr.contains("short-SECRET"), "{stderr}");
        assert!(!case.path("out.csv").exists());
    }
    // a spec without pseudonyms never reads the key
    let plain = case.write_spec("plain.json", &people_spec(&case, "h"));
    assert_success(&run_with(
        &case,
        &input,
        &plain,
        &["--pseudonym-key-file", "/nonexistent/key"],
        &[("ANONYMIZER_PSEUDONYM_KEY", "short")],
    ));
}

// ---------------------------------------------------------------------------------------------------------
// (d) errors

/// The table most error cases start from: `SECRET` is a cell value in every column kind.
const TABLE: &str = "name;age;city;note\n\
                     SECRET-VALUE-123;34;Bern;x\n\
                     Ann;45;SECRET-VALUE-123;y\n\
                     Bob;34;Basel;SECRET-VALUE-123\n\
                     Cid;45;Bern;x\n\
                     Dan;34;Basel;y\n\
                     Eve;45;Bern;x\n";

fn base_spec() -> Value {
    json!({
        "csv": {"delimiter": ";"},
        "attributes": {
            "name": {"role": "identifying"},
            "age": {"role": "quasi_identifier",
                    "hierarchy": {"levels": [["34", "30-49", "*"], ["45", "30-49", "*"]]}},
            "city": {"role": "quasi_identifier",
                     "hierarchy": {"levels": [["Bern", "*"], ["Basel", "*"], ["SECRET-VALUE-123", "*"]]}},
            "note": {"role": "insensitive"}
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
        "suppression_limit": 0.2
    })
}

/// Runs a job expected to fail and checks the failure contract.
fn assert_fails(case: &Case, input: &Path, spec: &Path, expected: &[&str]) {
    let before = case.entries();
    let output = case.run(input, spec);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "expected a failure: {stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr: {stderr:?}");
    assert!(lines[0].starts_with("error: "), "{stderr:?}");
    for fragment in expected {
        assert!(
            stderr.contains(fragment),
            "stderr {stderr:?} should contain {fragment:?}"
        );
    }
    assert!(!stderr.contains(SECRET), "a cell value leaked: {stderr:?}");
    assert!(output.stdout.is_empty(), "nothing on stdout");
    assert!(!case.path("out.csv").exists(), "an output file was left");
    assert!(
        !case.path("out.csv.report.json").exists(),
        "a report was left"
    );
    assert_eq!(case.entries(), before, "the directory changed");
}

/// A case whose input is `table` and whose spec is `spec`.
fn error_case(table: impl AsRef<[u8]>, spec: &Value) -> (Case, PathBuf, PathBuf) {
    let case = Case::new();
    let input = case.write("data.csv", table);
    let spec = case.write_spec("spec.json", spec);
    (case, input, spec)
}

#[test]
fn base_error_fixture_is_valid() {
    // the error cases below each break one thing of this working job
    let (case, input, spec) = error_case(TABLE, &base_spec());
    assert_success(&case.run(&input, &spec));
}

#[test]
fn error_ragged_row_names_the_line() {
    let table =
        "name;age;city;note\nAnn;34;Bern;x\nBob;45;Basel;y\nSECRET-VALUE-123;45\nEve;45;Bern;x\n";
    let (case, input, spec) = error_case(table, &base_spec());
    assert_fails(
        &case,
        &input,
        &spec,
        &["line 4", "2 fields", "header has 4"],
    );
}

#[test]
fn error_invalid_utf8() {
    let table: &[u8] =
        b"name;age;city;note\nAnn;34;Bern;x\nSECRET-VALUE-123;45;Bern;caf\xe9\nEve;45;Bern;x\n";
    let (case, input, spec) = error_case(table, &base_spec());
    assert_fails(&case, &input, &spec, &["line 3", "column 4", "UTF-8"]);
}

#[test]
fn error_empty_file() {
    let (case, input, spec) = error_case("", &base_spec());
    assert_fails(&case, &input, &spec, &["empty"]);
}

#[test]
fn error_header_only() {
    let (case, input, spec) = error_case("name;age;city;note\n", &base_spec());
    assert_fails(&case, &input, &spec, &["header but no records"]);
}

#[test]
fn error_duplicate_column_names() {
    let table = "name;age;city;age\nSECRET-VALUE-123;34;Bern;34\n";
    let (case, input, spec) = error_case(table, &base_spec());
    assert_fails(&case, &input, &spec, &["'age'", "appears twice"]);
}

#[test]
fn independent_spec_mistakes_are_printed_together() {
    let mut spec = base_spec();
    spec["attributes"]["age"] = json!({"role": "quasi_identifier"});
    spec["privacy_models"][0]["k"] = json!(0);
    spec["suppression_limit"] = json!(1.5);
    let (case, input, spec) = error_case(TABLE, &spec);
    let before = case.entries();
    let output = case.run(&input, &spec);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "error: spec: 3 problems",
            "  /attributes/age/hierarchy: quasi-identifier 'age' needs a hierarchy [missing_hierarchy]",
            "  /privacy_models/0/k: k must be at least 1 [invalid_k]",
            "  /suppression_limit: the suppression limit is a fraction of records between 0 and 1 \
             [invalid_suppression_limit]",
        ],
        "{stderr}"
    );
    assert_eq!(case.entries(), before, "the directory changed");
}

#[test]
fn error_unknown_column_in_spec() {
    let mut spec = base_spec();
    spec["attributes"]["salary"] = json!({"role": "sensitive"});
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["/attributes/salary", "no column 'salary'"],
    );
}

#[test]
fn error_column_without_role() {
    let mut spec = base_spec();
    spec["attributes"].as_object_mut().unwrap().remove("note");
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(&case, &input, &spec, &["'note'", "no role"]);
}

#[test]
fn error_quasi_identifier_without_hierarchy() {
    let mut spec = base_spec();
    spec["attributes"]["age"] = json!({"role": "quasi_identifier"});
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["/attributes/age/hierarchy", "'age' needs a hierarchy"],
    );
}

#[test]
fn error_hierarchy_misses_values() {
    let mut spec = base_spec();
    // neither Basel nor the secret value is covered
    spec["attributes"]["city"]["hierarchy"] = json!({"levels": [["Bern", "*"], ["Zug", "*"]]});
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &[
            "column 'city'",
            "does not cover 2 of the column's 3 distinct values",
        ],
    );
}

#[test]
fn error_ragged_hierarchy_file() {
    let mut spec = base_spec();
    spec["attributes"]["age"]["hierarchy"] = json!({"path": "age.csv"});
    let (case, input, spec) = error_case(TABLE, &spec);
    case.write("age.csv", "34;30-49;*\n45;30-49;*\nSECRET-VALUE-123;*\n");
    assert_fails(
        &case,
        &input,
        &spec,
        &["age.csv", "line 3 has 2 levels but line 1 has 3"],
    );
}

#[test]
fn error_missing_hierarchy_file() {
    let mut spec = base_spec();
    spec["attributes"]["age"]["hierarchy"] = json!({"path": "no-such-hierarchy.csv"});
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["cannot read hierarchy file", "no-such-hierarchy.csv"],
    );
}

#[test]
fn error_k_zero() {
    let mut spec = base_spec();
    spec["privacy_models"][0]["k"] = json!(0);
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(&case, &input, &spec, &["/privacy_models/0/k", "at least 1"]);
}

#[test]
fn error_k_larger_than_the_table() {
    let mut spec = base_spec();
    spec["privacy_models"][0]["k"] = json!(7);
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["k = 7", "larger than the table (6 records)"],
    );
}

#[test]
fn error_suppression_limit_out_of_range() {
    let mut spec = base_spec();
    spec["suppression_limit"] = json!(1.5);
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["/suppression_limit", "between 0 and 1"],
    );
}

#[test]
fn error_unknown_algorithm() {
    let mut spec = base_spec();
    spec["algorithm"] = json!({"type": "simulated_annealing"});
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["/algorithm", "unknown variant `simulated_annealing`"],
    );
}

#[test]
fn error_unknown_metric() {
    let mut spec = base_spec();
    spec["metric"] = json!("loss_of_everything");
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(
        &case,
        &input,
        &spec,
        &["/metric", "unknown variant `loss_of_everything`"],
    );
}

#[test]
fn error_unknown_spec_field() {
    let mut spec = base_spec();
    spec["suppresion_limit"] = json!(0.1);
    let (case, input, spec) = error_case(TABLE, &spec);
    assert_fails(&case, &input, &spec, &["unknown field `suppresion_limit`"]);
}

#[test]
fn error_malformed_spec_json() {
    let case = Case::new();
    let input = case.write("data.csv", TABLE);
    let spec = case.write(
        "spec.json",
        r#"{"csv": {"delimiter": ";"}, "attributes": {"#,
    );
    assert_fails(&case, &input, &spec, &["spec.json", "EOF while parsing"]);
}

#[test]
fn error_missing_input_file() {
    let case = Case::new();
    let spec = case.write_spec("spec.json", &base_spec());
    let input = case.path("no-such-input.csv");
    assert_fails(
        &case,
        &input,
        &spec,
        &["cannot read input", "no-such-input.csv"],
    );
}

#[test]
fn error_missing_spec_file() {
    let case = Case::new();
    let input = case.write("data.csv", TABLE);
    let spec = case.path("no-such-spec.json");
    assert_fails(
        &case,
        &input,
        &spec,
        &["cannot read spec", "no-such-spec.json"],
    );
}

#[test]
fn a_failed_run_keeps_an_existing_output_file() {
    // the output is written to a temporary name and renamed, so a failure never truncates a file
    let mut spec = base_spec();
    spec["privacy_models"][0]["k"] = json!(0);
    let (case, input, spec) = error_case(TABLE, &spec);
    case.write("out.csv", "previous result\n");
    let output = case.run(&input, &spec);
    assert!(!output.status.success());
    assert_eq!(
        std::fs::read_to_string(case.path("out.csv")).unwrap(),
        "previous result\n"
    );
}

// ---------------------------------------------------------------------------------------------------------
// (e) determinism

#[test]
fn runs_are_deterministic() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(3000));
    let mut spec = people_spec(&case, "h");
    spec["privacy_models"][0]["k"] = json!(10);
    spec["suppression_limit"] = json!(0.02);
    spec["algorithm"] = json!({"type": "optimal"});
    spec["metric"] = json!("discernibility");
    let spec = case.write_spec("spec.json", &spec);
    assert_success(&case.run_to(&input, &spec, "first.csv"));
    assert_success(&case.run_to(&input, &spec, "second.csv"));
    let first = std::fs::read(case.path("first.csv")).unwrap();
    let second = std::fs::read(case.path("second.csv")).unwrap();
    assert!(first == second, "outputs differ");
    let (a, b) = (case.report("first.csv"), case.report("second.csv"));
    assert_eq!(a["transformation"], b["transformation"]);
    assert_eq!(a["metrics"], b["metrics"]);
    assert_eq!(a["suppressed_records"], b["suppressed_records"]);
    assert_eq!(a["search"]["nodes_checked"], b["search"]["nodes_checked"]);
}

// ---------------------------------------------------------------------------------------------------------
// (f) hierarchy sources

#[test]
fn json_file_and_inline_hierarchies_match_arx_files() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(500));
    let arx_spec = people_spec(&case, "arx");
    let arx_path = case.write_spec("arx.json", &arx_spec);

    // the same hierarchies as JSON files …
    let mut json_spec = arx_spec.clone();
    for (name, levels) in [
        ("age", age_levels()),
        ("zip", zip_levels()),
        ("sex", sex_levels()),
    ] {
        let file = format!("json/{name}.json");
        case.write(
            &file,
            serde_json::to_vec(&json!({"levels": levels})).unwrap(),
        );
        json_spec["attributes"][name]["hierarchy"] = json!({"path": file});
    }
    let json_path = case.write_spec("json.json", &json_spec);

    // … inline as levels, and inline as ARX text with another delimiter
    let mut inline_spec = arx_spec.clone();
    inline_spec["attributes"]["age"]["hierarchy"] = json!({"levels": age_levels()});
    inline_spec["attributes"]["zip"]["hierarchy"] = json!({"levels": zip_levels()});
    let sex_arx: String = sex_levels()
        .iter()
        .map(|row| row.join(",") + "\n")
        .collect();
    inline_spec["attributes"]["sex"]["hierarchy"] = json!({"arx": sex_arx, "delimiter": ","});
    let inline_path = case.write_spec("inline.json", &inline_spec);

    assert_success(&case.run_to(&input, &arx_path, "arx.csv"));
    assert_success(&case.run_to(&input, &json_path, "json.csv"));
    assert_success(&case.run_to(&input, &inline_path, "inline.csv"));
    let reference = std::fs::read(case.path("arx.csv")).unwrap();
    for other in ["json.csv", "inline.csv"] {
        assert!(
            std::fs::read(case.path(other)).unwrap() == reference,
            "{other} differs from the ARX-file run"
        );
        assert_eq!(
            case.report(other)["transformation"],
            case.report("arx.csv")["transformation"]
        );
    }
}

// ---------------------------------------------------------------------------------------------------------
// The CLI surface

#[test]
fn without_a_report_a_summary_goes_to_stderr() {
    let case = Case::new();
    let input = case.write("data.csv", TABLE);
    let spec = case.write_spec("spec.json", &base_spec());
    let output = Command::new(BIN)
        .arg("anonymize")
        .arg("--input")
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .arg("--output")
        .arg(case.path("out.csv"))
        .output()
        .unwrap();
    assert_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("transformation"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert!(case.path("out.csv").exists());
    assert_eq!(case.entries(), ["data.csv", "out.csv", "spec.json"]);
}

#[test]
fn a_quiet_run_with_a_report_prints_nothing() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(200));
    let spec = case.write_spec("spec.json", &people_spec(&case, "h"));
    let output = case.run(&input, &spec);
    assert_success(&output);
    assert!(
        output.stdout.is_empty() && output.stderr.is_empty(),
        "stdout {:?}, stderr {:?}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_quick_start_spec_is_valid() {
    // README's quick start runs examples/adult-k5.json; its hierarchy paths are relative to examples/
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("examples/adult-k5.json")).expect("examples/adult-k5.json");
    anonymizer::domain::JobSpec::from_json(&bytes).expect("the example spec parses");
    let spec: Value = serde_json::from_slice(&bytes).unwrap();
    let attributes = spec["attributes"].as_object().unwrap();
    let header = std::fs::read_to_string(data_dir("adult").join("adult.csv")).unwrap();
    let header: Vec<&str> = header.lines().next().unwrap().split(';').collect();
    assert_eq!(attributes.len(), header.len());
    for name in header {
        let attribute = &attributes[name];
        if let Some(path) = attribute["hierarchy"]["path"].as_str() {
            assert!(
                root.join("examples").join(path).is_file(),
                "{name}: {path} does not exist relative to examples/"
            );
        }
    }
}

/// `examples/adult-builders.json` builds every hierarchy from parameters: it runs on adult, its output is
/// 5-anonymous (checked here on the written CSV), and it finds the same transformation as the job with
/// the ARX hierarchy files it was derived from.
#[test]
fn the_builders_example_runs_and_is_k_anonymous() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let case = Case::new();
    let input = data_dir("adult").join("adult.csv");
    let built = root.join("examples/adult-builders.json");
    let text = std::fs::read_to_string(&built).expect("examples/adult-builders.json");
    assert!(
        !text.contains("\"path\"") && !text.contains("\"levels\": [[") && !text.contains("\"arx\""),
        "the example must use builders only"
    );
    assert_success(&case.run_to(&input, &built, "built.csv"));
    assert_success(&case.run_to(&input, &root.join("examples/adult-k5.json"), "files.csv"));
    assert_eq!(
        case.report("built.csv")["transformation"],
        case.report("files.csv")["transformation"]
    );
    // k-anonymity of the published rows, suppressed (all-`*`) rows aside, and the suppression limit
    let (header, records) = read_csv(&case.path("built.csv"));
    let columns: Vec<usize> = ADULT_COLUMNS
        .iter()
        .map(|c| header.iter().position(|h| h == c).expect("column"))
        .collect();
    let mut classes: HashMap<Vec<&[u8]>, usize> = HashMap::new();
    let mut suppressed = 0;
    for record in &records {
        let key: Vec<&[u8]> = columns.iter().map(|&c| record[c].as_slice()).collect();
        if key.iter().all(|v| *v == b"*") {
            suppressed += 1;
        } else {
            *classes.entry(key).or_default() += 1;
        }
    }
    assert!(classes.values().all(|&n| n >= 5), "a class below k = 5");
    assert!(
        suppressed * 100 <= records.len() * 4,
        "{suppressed} suppressed"
    );
    assert_eq!(records.len(), 30_162);
}

/// `hierarchy build` writes an ARX file for one column that a spec can then use by path; a builder
/// that cannot place some values fails with the code and without naming them.
#[test]
fn hierarchy_build_writes_an_arx_file() {
    let case = Case::new();
    let input = data_dir("adult").join("adult.csv");
    let build = |column: &str, builder: &str, output: &Path| {
        Command::new(BIN)
            .args(["hierarchy", "build", "--delimiter", ";", "--column", column])
            .arg("--input")
            .arg(&input)
            .args(["--builder", builder])
            .arg("--output")
            .arg(output)
            .output()
            .expect("run the anonymizer binary")
    };
    let file = case.path("age.csv");
    let output = build(
        "age",
        r#"{"type": "interval", "start": 1, "width": 5, "fanouts": [2, 2]}"#,
        &file,
    );
    assert_success(&output);
    let text = std::fs::read_to_string(&file).expect("the hierarchy file");
    assert!(text.lines().all(|l| l.split(';').count() == 5), "{text}");
    assert!(text
        .lines()
        .any(|l| l == "39;[36 .. 40];[31 .. 40];[21 .. 40];*"));
    let output = build(
        "sex",
        r#"{"type": "interval", "width": 5}"#,
        &case.path("sex.csv"),
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("uncovered_values"), "{stderr}");
    assert!(
        !stderr.contains("Male") && !stderr.contains("Female"),
        "{stderr}"
    );
    assert!(!case.path("sex.csv").exists());
}

/// An output or report path that is the input (as it is, through another spelling or a hard link) or
/// the spec is refused before anything is written, and the input is left intact.
#[test]
fn outputs_never_overwrite_the_inputs() {
    let case = Case::new();
    let input = case.write("people.csv", people_csv(60));
    let spec = case.write_spec("spec.json", &people_spec(&case, "h"));
    let original = std::fs::read(&input).unwrap();
    let link = case.path("link.csv");
    std::fs::hard_link(&input, &link).unwrap();
    let respelled = case.path("sub/../people.csv");
    std::fs::create_dir_all(case.path("sub")).unwrap();
    for (output, report) in [
        (input.clone(), None),
        (link.clone(), None),
        (respelled, None),
        (case.path("out.csv"), Some(spec.clone())),
        (case.path("out.csv"), Some(input.clone())),
    ] {
        let mut command = Command::new(BIN);
        command
            .arg("anonymize")
            .arg("--input")
            .arg(&input)
            .arg("--spec")
            .arg(&spec)
            .arg("--output")
            .arg(&output)
            .arg("--quiet");
        if let Some(report) = &report {
            command.arg("--report").arg(report);
        }
        let result = command.output().unwrap();
        assert!(!result.status.success(), "{output:?} {report:?}");
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains("would overwrite"), "{stderr}");
        assert_eq!(std::fs::read(&input).unwrap(), original);
    }
    assert!(!case.path("out.csv").exists());
}

/// Windows-1252 input (`csv.encoding`) is decoded: accented names come out as UTF-8. Without the
/// encoding the same bytes are refused as invalid UTF-8, and an unknown label is a spec problem.
#[test]
fn windows_1252_input_round_trips_to_utf8() {
    let case = Case::new();
    let input = case.write(
        "latin.csv",
        &b"name;sex\nJos\xe9;M\nM\xfcller;M\nRen\xe9e;F\nZo\xeb;F\n"[..],
    );
    let spec = |encoding: Option<&str>| {
        let mut spec = json!({
            "csv": {"delimiter": ";"},
            "attributes": {
                "name": {"role": "insensitive"},
                "sex": {"role": "quasi_identifier",
                        "hierarchy": {"builder": {"type": "categories", "levels": []}}},
            },
            "privacy_models": [{"type": "k_anonymity", "k": 2}],
        });
        if let Some(e) = encoding {
            spec["csv"]["encoding"] = json!(e);
        }
        spec
    };
    let decoded = case.write_spec("decoded.json", &spec(Some("windows-1252")));
    assert_success(&case.run(&input, &decoded));
    let output = std::fs::read_to_string(case.path("out.csv")).expect("UTF-8 output");
    for name in ["José", "Müller", "Renée", "Zoë"] {
        assert!(output.contains(name), "{name} missing from {output}");
    }
    // the published table is read back in the output encoding (UTF-8 here), the input in its own
    let assessed = Command::new(BIN)
        .args(["assess", "--input"])
        .arg(&input)
        .arg("--spec")
        .arg(&decoded)
        .arg("--published")
        .arg(case.path("out.csv"))
        .output()
        .expect("run assess");
    assert_success(&assessed);
    let a: Value = serde_json::from_slice(&assessed.stdout).expect("JSON on stdout");
    assert_eq!(
        (a["records"].clone(), a["pairing"].clone()),
        (json!(4), json!("order"))
    );
    let plain = case.write_spec("plain.json", &spec(None));
    let result = case.run_to(&input, &plain, "plain.csv");
    assert!(!result.status.success());
    assert!(String::from_utf8_lossy(&result.stderr).contains("invalid_utf8"));
    let unknown = case.write_spec("unknown.json", &spec(Some("klingon")));
    let result = case.run_to(&input, &unknown, "unknown.csv");
    assert!(String::from_utf8_lossy(&result.stderr).contains("invalid_encoding"));
}

#[test]
fn help_and_version() {
    let output = Command::new(BIN).arg("--version").output().unwrap();
    assert_success(&output);
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("anonymizer "));
    let output = Command::new(BIN)
        .args(["anonymize", "--help"])
        .output()
        .unwrap();
    assert_success(&output);
    let help = String::from_utf8_lossy(&output.stdout);
    for flag in ["--input", "--spec", "--output", "--report", "--quiet"] {
        assert!(help.contains(flag), "{flag} missing from help");
    }
}

/// `assess` prints the assessment of a table computed by hand: classes by zip {1301: flu, flu, cold;
/// 1302: flu, cold, cancer, cancer}, sizes 3 and 4.
#[test]
fn assess_prints_k_l_and_risk() {
    let case = Case::new();
    let input = case.write(
        "data.csv",
        "zip;diagnosis;name\n1301;flu;a\n1301;flu;b\n1301;cold;c\n1302;flu;d\n1302;cold;e\n1302;cancer;f\n1302;cancer;g\n",
    );
    let spec = case.write_spec(
        "assess.json",
        &json!({"csv": {"delimiter": ";"},
                "attributes": {"zip": {"role": "quasi_identifier"}, "diagnosis": {"role": "sensitive"},
                               "name": {"role": "identifying"}},
                "risk": {"population_size": 70}}),
    );
    let output = Command::new(BIN)
        .args(["assess", "--input"])
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .output()
        .expect("run assess");
    assert_success(&output);
    let a: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(a["records"], 7);
    assert_eq!(a["k"], 3);
    let d = &a["sensitive_attributes"]["diagnosis"];
    assert_eq!(d["distinct_l"], 2);
    // r1 / tail: 2/1 and 2/2
    assert_eq!(d["recursive_c_for_l2_must_exceed"], 2.0);
    // exp(H) of {2, 1}: 3 / 2^(2/3)
    let entropy_l = d["entropy_l"].as_f64().unwrap();
    assert!((entropy_l - 3.0 / 2f64.powf(2.0 / 3.0)).abs() < 1e-12);
    assert_eq!(a["risk"]["prosecutor"]["highest"], 1.0 / 3.0);
    assert_eq!(a["risk"]["prosecutor"]["average"], 2.0 / 7.0);
    assert_eq!(a["risk"]["population_uniques"]["population_size"], 70);
    assert_eq!(a["risk"]["population_uniques"]["dankar"]["model"], "none");

    // an unknown column is an error with its pointer
    let bad = case.write_spec(
        "bad.json",
        &json!({"attributes": {"zip": {"role": "quasi_identifier"}, "salary": {"role": "sensitive"}}}),
    );
    let output = Command::new(BIN)
        .args(["assess", "--input"])
        .arg(&input)
        .arg("--spec")
        .arg(&bad)
        .output()
        .expect("run assess");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/attributes/salary"), "{stderr}");
}

/// `assess --population`: journalist risk against a population table. The sample's classes 1301 (2)
/// and 1302 (1) have 4 and 10 records in the population: journalist highest 1/4, marketer
/// (2/4 + 1/10) / 3 = 0.2, population size 14.
#[test]
fn assess_against_a_population_table() {
    let case = Case::new();
    let input = case.write(
        "sample.csv",
        "zip,diagnosis\n1301,flu\n1301,cold\n1302,flu\n",
    );
    let mut population = String::from("zip,diagnosis\n");
    for _ in 0..4 {
        population.push_str("1301,x\n");
    }
    for _ in 0..10 {
        population.push_str("1302,x\n");
    }
    let population = case.write("population.csv", population);
    let spec = case.write_spec(
        "assess.json",
        &json!({"attributes": {"zip": {"role": "quasi_identifier"}, "diagnosis": {"role": "sensitive"}}}),
    );
    let output = Command::new(BIN)
        .args(["assess", "--input"])
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .arg("--population")
        .arg(&population)
        .output()
        .expect("run assess");
    assert_success(&output);
    let a: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(a["risk"]["journalist"]["highest"], 0.25);
    let marketer = a["risk"]["marketer"].as_f64().unwrap();
    assert!((marketer - 0.2).abs() < 1e-15, "{marketer}");
    assert_eq!(a["risk"]["prosecutor"]["highest"], 1.0);
    assert_eq!(a["risk"]["population_uniques"]["population_size"], 14);
}

/// `assess --published`: the loss measures of the output `anonymize` wrote, read back from the CSV,
/// are the report's; a published table with a cell that is no value, label or range of its column is a
/// coded error that does not repeat the cell.
#[test]
fn assess_published_reads_the_output_back_to_the_reports_measures() {
    let case = Case::new();
    let input = case.write(
        "input.csv",
        "age,zip,diagnosis\n25,1301,flu\n27,1302,cold\n31,1301,flu\n35,1402,flu\n38,1402,cold\n22,1301,flu\n",
    );
    let spec = case.write_spec(
        "job.json",
        &json!({
            "attributes": {
                "age": {"role": "quasi_identifier", "data_type": "numeric"},
                "zip": {"role": "quasi_identifier", "hierarchy": {"levels": [
                    ["1301", "130*", "*"], ["1302", "130*", "*"], ["1402", "140*", "*"]]}},
                "diagnosis": {"role": "sensitive"}
            },
            "privacy_models": [{"type": "k_anonymity", "k": 2}],
            "algorithm": {"type": "mondrian"}
        }),
    );
    assert_success(&case.run(&input, &spec));
    let report = case.report("out.csv");
    let output = Command::new(BIN)
        .args(["assess", "--input"])
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .arg("--published")
        .arg(case.path("out.csv"))
        .output()
        .expect("run assess");
    assert_success(&output);
    let a: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(a["records"], 6);
    assert_eq!(a["pairing"], "order");
    assert_eq!(a["classes"], report["equivalence_classes"]["count"]);
    let ours = &a["loss_measures"];
    let theirs = &report["loss_measures"];
    assert_eq!(ours["redactions"], theirs["redactions"]);
    for measure in ["entropy", "monotone_entropy", "non_uniform_entropy"] {
        let (x, y) = (
            ours[measure].as_f64().unwrap(),
            theirs[measure].as_f64().unwrap(),
        );
        assert!((x - y).abs() < 1e-9, "{measure}: {x} against {y}");
    }
    assert_eq!(ours["volume_inflation"], theirs["volume_inflation"]);

    let forged = case.write(
        "forged.csv",
        "age,zip,diagnosis\nforty-two,130*,flu\n[22 .. 27],130*,cold\n[31 .. 38],*,flu\n[31 .. 38],*,flu\n[31 .. 38],*,cold\n[22 .. 27],130*,flu\n",
    );
    let output = Command::new(BIN)
        .args(["assess", "--input"])
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .arg("--published")
        .arg(&forged)
        .output()
        .expect("run assess");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("published_unreadable"), "{stderr}");
    assert!(
        stderr.contains("'age'") && !stderr.contains("forty"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------------------------
// The CSV-reader battery (tests/support/csv_battery.rs) through `read_table` and through the binary.

fn battery_spec() -> Value {
    json!({
        "csv": {"delimiter": ";"},
        "attributes": {
            "q": {"role": "quasi_identifier", "hierarchy": {"levels": [["1", "*"]]}},
            "v": {"role": "insensitive"}
        },
        "privacy_models": [{"type": "k_anonymity", "k": 1}]
    })
}

#[test]
fn csv_battery_through_read_table() {
    use anonymizer::codec::{read_table, CsvOptions};
    use csv_battery::Expect;

    let options = CsvOptions::with_delimiter(";").expect("delimiter");
    for case in csv_battery::cases() {
        let result = read_table(case.input.as_slice(), &options);
        match (&case.expect, result) {
            (Expect::Records(values), Ok(table)) => {
                let v = table.column(1);
                let read: Vec<&[u8]> = v
                    .codes
                    .iter()
                    .map(|&code| v.dictionary.value(code).as_bytes())
                    .collect();
                let expected: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
                assert!(read == expected, "{}: other records", case.name);
            }
            (
                Expect::Error {
                    code,
                    line,
                    fragment,
                },
                Err(e),
            ) => {
                let message = e.to_string();
                assert_eq!(e.code(), *code, "{}: {message}", case.name);
                assert!(
                    message.starts_with(&format!("line {line}:"))
                        || message.starts_with(&format!("line {line},")),
                    "{}: {message}",
                    case.name
                );
                assert!(message.contains(fragment), "{}: {message}", case.name);
            }
            (expect, result) => panic!(
                "{}: expected {expect:?}, got {:?}",
                case.name,
                result.map(|t| t.row_count())
            ),
        }
    }
}

#[test]
fn csv_battery_through_the_binary() {
    use csv_battery::Expect;

    for case in csv_battery::cases() {
        let (dir, input, spec) = error_case(&case.input, &battery_spec());
        match &case.expect {
            Expect::Records(values) => {
                assert_success(&dir.run(&input, &spec));
                let (header, rows) = read_csv(&dir.path("out.csv"));
                let v = column(&header, "v");
                let written: Vec<&Vec<u8>> = rows.iter().map(|r| &r[v]).collect();
                let expected: Vec<&Vec<u8>> = values.iter().collect();
                assert!(written == expected, "{}: other records", case.name);
            }
            Expect::Error { line, fragment, .. } => {
                let line = format!("line {line}");
                assert_fails(&dir, &input, &spec, &["data.csv", &line, fragment]);
            }
        }
    }
}

#[test]
fn the_field_limit_is_a_flag() {
    let (case, input, spec) = error_case("q;v\n1;abcdef\n1;abcdefgh\n", &battery_spec());
    let output = Command::new(BIN)
        .arg("anonymize")
        .arg("--input")
        .arg(&input)
        .arg("--spec")
        .arg(&spec)
        .arg("--output")
        .arg(case.path("out.csv"))
        .arg("--quiet")
        .arg("--csv-field-limit")
        .arg("7")
        .output()
        .expect("run the anonymizer binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("line 3, column 2: the field is longer than the limit of 7 bytes"),
        "{stderr}"
    );
    assert!(!case.path("out.csv").exists());
}

/// `generate` writes a census-like table, its hierarchies and specs that run as they are: every
/// full-domain and Mondrian spec succeeds and publishes classes of at least k records, and the stage
/// times are printed on request.
#[test]
fn generated_census_tables_run_with_their_specs() {
    let case = Case::new();
    let dir = case.path("census");
    let output = Command::new(BIN)
        .args(["generate", "--records", "3000", "--seed", "5", "--output"])
        .arg(&dir)
        .output()
        .expect("run generate");
    assert_success(&output);
    let table = std::fs::read_to_string(dir.join("census.csv")).expect("table");
    assert_eq!(table.lines().count(), 3001);
    assert!(table.starts_with("zip,birth_date,sex,race,marital_status,education,diagnosis\n"));
    for spec in ["full-domain-k5", "full-domain-k5-l2", "mondrian-k5"] {
        let output = Command::new(BIN)
            .arg("anonymize")
            .arg("--input")
            .arg(dir.join("census.csv"))
            .arg("--spec")
            .arg(dir.join(format!("{spec}.json")))
            .arg("--output")
            .arg(case.path("out.csv"))
            .arg("--report")
            .arg(case.path("out.csv.report.json"))
            .args(["--quiet", "--timings"])
            .output()
            .expect("run anonymize");
        assert_success(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("stages: loading"), "{stderr}");
        assert!(stderr.contains("writing"), "{stderr}");
        let report = case.report("out.csv");
        assert_eq!(report["records"], 3000, "{spec}");
        assert!(
            report["equivalence_classes"]["min"].as_u64() >= Some(5),
            "{spec}: {report}"
        );
    }
    // the same seed gives the same table
    let again = case.path("again");
    assert_success(
        &Command::new(BIN)
            .args(["generate", "--records", "3000", "--seed", "5", "--output"])
            .arg(&again)
            .output()
            .expect("run generate"),
    );
    assert_eq!(
        std::fs::read(again.join("census.csv")).expect("table"),
        table.as_bytes()
    );
}

/// `strict` turns the run's warnings into an error: nothing is written, the error names the warning,
/// and the same spec without `strict` runs and warns.
#[test]
fn strict_runs_refuse_their_warnings_and_write_nothing() {
    // k = 2 over two cities and one that is suppressed: city becomes `*` everywhere
    let mut spec = base_spec();
    spec["privacy_models"][0]["k"] = json!(4);
    spec["suppression_limit"] = json!(0.0);
    spec["strict"] = json!(true);
    let (case, input, spec_path) = error_case(TABLE, &spec);
    let before = case.entries();
    let output = case.run(&input, &spec_path);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("strict_warnings"), "{stderr}");
    assert!(stderr.contains("fully_generalized"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert_eq!(case.entries(), before, "nothing written");
    spec["strict"] = json!(false);
    let spec_path = case.write_spec("lenient.json", &spec);
    assert_success(&case.run(&input, &spec_path));
    let codes: Vec<String> = case.report("out.csv")["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect();
    assert!(
        codes.contains(&"fully_generalized".to_string()),
        "{codes:?}"
    );
}

/// A `.json` hierarchy file may hold a builder, built against the column like an inline one.
#[test]
fn a_json_hierarchy_file_may_hold_a_builder() {
    let mut spec = base_spec();
    spec["attributes"]["age"]["hierarchy"] = json!({"path": "age.json"});
    // one class of six: 34 and 45 meet in the builder's second level, below `*`
    spec["privacy_models"][0]["k"] = json!(6);
    spec["suppression_limit"] = json!(0.0);
    let case = Case::new();
    case.write(
        "age.json",
        r#"{"builder": {"type": "interval", "width": 20, "fanouts": [2]}}"#,
    );
    let input = case.write("data.csv", TABLE);
    let spec_path = case.write_spec("spec.json", &spec);
    assert_success(&case.run(&input, &spec_path));
    let (header, rows) = read_csv(&case.path("out.csv"));
    let age = column(&header, "age");
    for row in rows {
        let cell = String::from_utf8(row[age].clone()).unwrap();
        assert_eq!(cell, "[20 .. 59]");
    }
}

/// The smallest class of an output separated by `delimiter` (no quoting needed) over `columns`,
/// all-`*` rows (suppressed records) left out.
fn smallest_output_class(path: &Path, delimiter: char, columns: &[&str]) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(delimiter).collect();
    let at: Vec<usize> = columns
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .expect("published column")
        })
        .collect();
    let mut classes: std::collections::HashMap<Vec<&str>, usize> = Default::default();
    for line in lines {
        assert!(!line.contains('"'), "a quoted field");
        let cells: Vec<&str> = line.split(delimiter).collect();
        let key: Vec<&str> = at.iter().map(|&i| cells[i]).collect();
        if key.iter().all(|c| *c == "*") {
            continue;
        }
        *classes.entry(key).or_default() += 1;
    }
    classes.values().copied().min().unwrap_or(usize::MAX)
}

/// `propose` prints a spec that `anonymize` runs as it is: on adult (sniffed `;`) and on a hospital
/// table whose record numbers and names are proposed identifying; both outputs are k-anonymous when
/// counted here.
#[test]
fn proposals_run_as_they_are_to_k_anonymous_outputs() {
    let case = Case::new();
    let hospital = crate::hospital::hospital_csv();
    let inputs = [
        (data_dir("adult").join("adult.csv"), "adult"),
        (case.write("hospital.csv", &hospital), "hospital"),
    ];
    for (input, name) in inputs {
        let proposed = Command::new(BIN)
            .arg("propose")
            .arg("--input")
            .arg(&input)
            .arg("--report")
            .arg(case.path(&format!("{name}-proposal.json")))
            .output()
            .unwrap();
        assert_success(&proposed);
        let stderr = String::from_utf8_lossy(&proposed.stderr);
        assert!(stderr.contains("as it is: k = 1"), "{stderr}");
        assert!(!stderr.contains("Patient 1"), "{stderr}");
        let spec: Value = serde_json::from_slice(&proposed.stdout).expect("a JSON spec on stdout");
        let spec_path = case.write(&format!("{name}.json"), &proposed.stdout);
        let output = format!("{name}-out.csv");
        assert_success(&case.run_to(&input, &spec_path, &output));
        let quasi: Vec<&str> = spec["attributes"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, a)| a["role"] == "quasi_identifier")
            .map(|(c, _)| c.as_str())
            .collect();
        let k = spec["privacy_models"][0]["k"].as_u64().unwrap() as usize;
        assert_eq!(k, 5);
        let delimiter = if name == "adult" { ';' } else { ',' };
        let smallest = smallest_output_class(&case.path(&output), delimiter, &quasi);
        assert!(smallest >= k, "{name}: a class of {smallest}");
        let proposal: Value = serde_json::from_slice(
            &std::fs::read(case.path(&format!("{name}-proposal.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(proposal["spec"], spec);
        if name == "hospital" {
            assert_eq!(spec["attributes"]["mrn"]["role"], "identifying");
            assert_eq!(spec["attributes"]["name"]["role"], "identifying");
            assert_eq!(spec["attributes"]["diagnosis"]["role"], "sensitive");
            assert_eq!(
                spec["attributes"]["birth_date"]["hierarchy"]["builder"]["type"],
                "date"
            );
        } else {
            assert_eq!(spec["csv"]["delimiter"], ";");
            assert_eq!(quasi.len(), 8);
        }
    }
}

/// `csv.output_encoding` writes the output in another encoding (the input here is Windows-1252 too);
/// a character the encoding cannot write fails the run and leaves no output.
#[test]
fn the_output_may_be_written_in_windows_1252() {
    let case = Case::new();
    let input = case.write(
        "latin.csv",
        &b"name;sex\nJos\xe9;M\nM\xfcller;M\nRen\xe9e;F\nZo\xeb;F\n"[..],
    );
    let spec = json!({
        "csv": {"delimiter": ";", "encoding": "windows-1252", "output_encoding": "windows-1252"},
        "attributes": {
            "name": {"role": "insensitive"},
            "sex": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "categories", "levels": []}}},
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}],
    });
    let spec_path = case.write_spec("latin.json", &spec);
    assert_success(&case.run(&input, &spec_path));
    let bytes = std::fs::read(case.path("out.csv")).unwrap();
    for name in [&b"Jos\xe9"[..], b"M\xfcller", b"Ren\xe9e", b"Zo\xeb"] {
        assert!(
            bytes.windows(name.len()).any(|w| w == name),
            "{:?} missing",
            String::from_utf8_lossy(name)
        );
    }
    assert!(std::str::from_utf8(&bytes).is_err(), "not UTF-8 any more");

    let wide = case.write("wide.csv", "name;sex\nWang 王;M\nAnn;M\nBea;F\nCid;F\n");
    let mut utf8_in = spec.clone();
    utf8_in["csv"].as_object_mut().unwrap().remove("encoding");
    let spec_path = case.write_spec("wide.json", &utf8_in);
    let result = case.run_to(&wide, &spec_path, "wide-out.csv");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(!stderr.contains('王'), "{stderr}");
    assert!(!case.path("wide-out.csv").exists());
}

/// A fragmentation job on the first 3,000 records of creditcard (23 features, binary class, `;`):
/// `--output out.csv` writes `out.fragment-1.csv` … `out.fragment-3.csv` and no `out.csv`; the features
/// partition exactly with the class last in each fragment, every fragment is 20-anonymous, and the
/// binary class needs no change under DGBE.
#[test]
fn fragmentation_writes_one_file_per_fragment() {
    let case = Case::new();
    let full = std::fs::read_to_string(data_dir("creditcard").join("creditcard_int.csv"))
        .expect("creditcard");
    let subset: String = full.lines().take(3001).map(|l| format!("{l}\n")).collect();
    let input = case.write("credit.csv", subset);
    let header: Vec<&str> = full.lines().next().unwrap().split(';').collect();
    let (class, features) = header.split_last().unwrap();
    let mut attributes = serde_json::Map::new();
    for feature in features {
        attributes.insert(feature.to_string(), json!({"role": "quasi_identifier"}));
    }
    attributes.insert(class.to_string(), json!({"role": "sensitive"}));
    let spec = case.write_spec(
        "fragmentation.json",
        &json!({
            "attributes": attributes,
            "privacy_models": [{"type": "k_anonymity", "k": 20}],
            "algorithm": {"type": "fragmentation", "class": class, "fragments": 3,
                          "strategy": "dgbe", "max_fragment_size": 9},
        }),
    );
    assert_success(&case.run(&input, &spec));
    let entries = case.entries();
    assert!(!entries.contains(&"out.csv".to_string()), "{entries:?}");
    let mut seen: Vec<String> = Vec::new();
    for i in 1..=3 {
        let (names, rows) = read_csv(&case.path(&format!("out.fragment-{i}.csv")));
        assert_eq!(names.last().map(String::as_str), Some(*class));
        assert!(names.len() - 1 <= 9, "{names:?}");
        assert_eq!(rows.len(), 3000);
        seen.extend(names[..names.len() - 1].iter().cloned());
        let mut classes: HashMap<Vec<Vec<u8>>, u64> = HashMap::new();
        for row in &rows {
            *classes.entry(row[..row.len() - 1].to_vec()).or_default() += 1;
        }
        assert!(classes.values().all(|&n| n >= 20));
    }
    seen.sort();
    let mut expected: Vec<String> = features.iter().map(|f| f.to_string()).collect();
    expected.sort();
    assert_eq!(seen, expected);
    let report = case.report("out.csv");
    let section = &report["fragmentation"];
    assert_eq!(section["fragments"].as_array().unwrap().len(), 3);
    assert_eq!(section["class_values_changed"], 0);
    assert_eq!(section["nested_class_sets"], true);
    assert!(section["smallest_join"].as_u64().unwrap() >= 20);
}

/// `--report-html`: the page beside the JSON report names the input file with its SHA-256 and size, shows
/// the achieved k, and holds no name, diagnosis or note of the input; a page path that is another output
/// is refused before anything is read.
#[test]
fn the_report_page_is_written_beside_the_report() {
    let case = Case::new();
    let table = people_csv(300);
    let input = case.write("people.csv", &table);
    let spec = case.write_spec("spec.json", &people_spec(&case, "h"));
    let page = case.path("report.html");
    let output = run_with(
        &case,
        &input,
        &spec,
        &["--report-html", page.to_str().unwrap()],
        &[],
    );
    assert_success(&output);
    let html = std::fs::read_to_string(&page).expect("the page");
    let report = case.report("out.csv");
    let digest = crate::tools::sha256_hex(table.as_bytes());
    assert!(html.contains(&format!(r#"<code id="dataset-sha256">{digest}</code>"#)));
    assert!(html.contains(&format!(
        r#"id="achieved-k">k = {}</span>"#,
        report["achieved"]["k"]
    )));
    assert!(html.contains("people.csv") && html.contains("local run of the command-line tool"));
    for r in 0..300 {
        assert!(!html.contains(&format!("Person {r:05}")));
    }
    // ("none" and "flu" are also English and CSS words; the distinctive values are checked)
    for value in ["asthma", "diabetes", "semi;colon", "Zürich"] {
        assert!(!html.contains(value), "the page shows a cell value");
    }
    // the page may not overwrite the output or the JSON report
    for clash in ["out.csv", "out.csv.report.json"] {
        let refused = run_with(
            &case,
            &input,
            &spec,
            &["--report-html", case.path(clash).to_str().unwrap()],
            &[],
        );
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("--report-html"), "{stderr}");
    }
}
