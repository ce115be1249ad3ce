//! `anonymizer generate`: writes a synthetic census-like table (see `synthetic::census`), a generalization
//! hierarchy per quasi-identifier and ready-to-run job specs into a directory, for benchmarks and demos at
//! any size. Files are written through temporary names and renamed, so an interrupted run leaves no
//! partial file under a final name.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{json, Value};

use super::GenerateArgs;
use crate::synthetic::census::{census_hierarchies, census_table, CENSUS_QUASI_IDENTIFIERS};
use crate::synthetic::write_csv;

/// The table's file name inside the output directory.
pub const TABLE_FILE: &str = "census.csv";

/// Runs the command; errors are one-line messages.
pub fn run(args: &GenerateArgs) -> Result<(), String> {
    let dir = &args.output;
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create {}: {}", dir.display(), e.kind()))?;
    let table = census_table(args.records, args.seed);
    write_file(&dir.join(TABLE_FILE), |w| write_csv(&table, b',', w))?;
    for (name, text) in census_hierarchies(&table) {
        write_file(&dir.join(hierarchy_file(name)), |w| {
            w.write_all(text.as_bytes())
        })?;
    }
    let specs = specs();
    for (name, spec) in &specs {
        write_file(&dir.join(format!("{name}.json")), |w| {
            serde_json::to_writer_pretty(&mut *w, spec)?;
            w.write_all(b"\n")
        })?;
    }
    eprintln!(
        "{} records written to {} with {} hierarchies and {} specs",
        args.records,
        dir.join(TABLE_FILE).display(),
        CENSUS_QUASI_IDENTIFIERS.len(),
        specs.len()
    );
    Ok(())
}

fn hierarchy_file(column: &str) -> String {
    format!("hierarchy_{column}.csv")
}

/// The benchmark specs: full-domain k = 5 at 0 % and 2 % suppression, with distinct 2-diversity of the
/// diagnosis, and each local-recoding algorithm.
pub fn specs() -> Vec<(&'static str, Value)> {
    let k5 = json!([{"type": "k_anonymity", "k": 5}]);
    let k5_l2 = json!([
        {"type": "k_anonymity", "k": 5},
        {"type": "distinct_l_diversity", "attribute": "diagnosis", "l": 2}
    ]);
    let k10 = json!([{"type": "k_anonymity", "k": 10}]);
    vec![
        ("full-domain-k5", spec(&k5, 0.0, json!({"type": "flash"}))),
        (
            "full-domain-k5-s2",
            spec(&k5, 0.02, json!({"type": "flash"})),
        ),
        (
            "full-domain-k5-l2",
            spec(&k5_l2, 0.02, json!({"type": "flash"})),
        ),
        ("mondrian-k5", spec(&k5, 0.0, json!({"type": "mondrian"}))),
        (
            "hybrid-k10",
            spec(
                &k10,
                0.0,
                json!({"type": "hybrid", "relocation_limit": 0.01}),
            ),
        ),
        (
            "m-hybrid-k5",
            spec(
                &k5,
                0.0,
                json!({"type": "hybrid", "multidimensional": true, "relocation_limit": 0.01}),
            ),
        ),
        ("k-member-k5", spec(&k5, 0.0, json!({"type": "k_member"}))),
        ("top-down-k5", spec(&k5, 0.0, json!({"type": "top_down"}))),
        ("pair-enum-k5", spec(&k5, 0.0, json!({"type": "pair_enum"}))),
        (
            "k-assemble-k5",
            spec(&k5, 0.0, json!({"type": "k_assemble"})),
        ),
    ]
}

fn spec(models: &Value, suppression_limit: f64, algorithm: Value) -> Value {
    let mut attributes = serde_json::Map::new();
    for &name in CENSUS_QUASI_IDENTIFIERS {
        attributes.insert(
            name.to_string(),
            json!({"role": "quasi_identifier", "hierarchy": {"path": hierarchy_file(name)}}),
        );
    }
    attributes.insert("diagnosis".into(), json!({"role": "sensitive"}));
    json!({
        "csv": {"delimiter": ","},
        "attributes": attributes,
        "privacy_models": models,
        "suppression_limit": suppression_limit,
        "algorithm": algorithm,
    })
}

/// Writes `path` through a temporary file in the same directory, renamed on success.
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), String> {
    let temporary = path.with_extension("partial");
    let failed = |e: std::io::Error| format!("cannot write {}: {}", path.display(), e.kind());
    let file = File::create(&temporary).map_err(failed)?;
    let mut writer = BufWriter::with_capacity(1 << 16, file);
    write(&mut writer).map_err(failed)?;
    writer.flush().map_err(failed)?;
    drop(writer);
    std::fs::rename(&temporary, path).map_err(failed)
}
