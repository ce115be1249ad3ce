//! `anonymizer hierarchy build`: a hierarchy built from a builder (`domain::builders`) for one column of a
//! local CSV file, written as an ARX hierarchy file that `{"path": ...}` or `POST /v1/hierarchies` take.

use std::fs::File;
use std::io::{BufReader, Write};

use super::HierarchyBuildArgs;
use crate::codec::{read_table, CsvOptions};
use crate::core::data::Hierarchy;
use crate::domain::builders::BuilderSpec;

/// Runs the command; errors are one-line messages that name no value of the data.
pub fn build(args: &HierarchyBuildArgs) -> Result<(), String> {
    let json = match args.builder.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read builder {path}: {}", e.kind()))?,
        None => args.builder.clone(),
    };
    let builder: BuilderSpec = serde_json::from_str(&json).map_err(|e| format!("builder: {e}"))?;
    let options =
        CsvOptions::with_delimiter(&args.delimiter).map_err(|e| format!("--delimiter: {e}"))?;
    let file = File::open(&args.input)
        .map_err(|e| format!("cannot read input {}: {}", args.input.display(), e.kind()))?;
    let table = read_table(BufReader::with_capacity(1 << 16, file), &options)
        .map_err(|e| format!("input {}: {e}", args.input.display()))?;
    let index = table
        .column_index(&args.column)
        .ok_or_else(|| format!("the input has no column named {:?}", args.column))?;
    let values: Vec<&str> = table.column(index).dictionary.values().collect();
    let rows = builder
        .build(&values)
        .map_err(|e| format!("builder: {e} [{}]", e.code()))?;
    Hierarchy::from_rows(&rows).map_err(|e| format!("builder: {e} [invalid_hierarchy]"))?;
    let write = |out: &mut dyn Write| -> Result<(), String> {
        let mut writer = csv::WriterBuilder::new()
            .delimiter(b';')
            .has_headers(false)
            .flexible(false)
            .from_writer(out);
        for row in &rows {
            writer
                .write_record(row)
                .map_err(|e| format!("cannot write the hierarchy: {e}"))?;
        }
        writer
            .flush()
            .map_err(|e| format!("cannot write the hierarchy: {}", e.kind()))
    };
    match &args.output {
        Some(path) => super::anonymize::write_atomically(path, |w| write(w)),
        None => write(&mut std::io::stdout().lock()),
    }
}
