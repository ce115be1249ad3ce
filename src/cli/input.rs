//! The input table of the commands that read a local CSV (`anonymize`, `assess`): decoded from the
//! spec's `csv.encoding`, with its `csv.delimiter` or, without one, the delimiter of its header line (as
//! uploads do).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::codec::encoding::DecodingReader;
use crate::codec::sniff::read_table_sniffing;
use crate::codec::{read_table, CsvOptions};
use crate::core::data::Table;
use crate::domain::resolve::InputFormat;

/// The file at `path` as UTF-8: decoded from `format`'s encoding, or as it is without one. `what`
/// names the file in errors.
fn open(path: &Path, format: &InputFormat, what: &str) -> Result<Box<dyn Read + Send>, String> {
    let file = File::open(path)
        .map_err(|e| format!("cannot read {what} {}: {}", path.display(), e.kind()))?;
    let file = BufReader::with_capacity(1 << 16, file);
    Ok(match format.encoding {
        Some(encoding) => Box::new(DecodingReader::new(file, encoding)),
        None => Box::new(file),
    })
}

/// Reads the input table and the options it was read with (`max_field_bytes` per field).
pub fn read_input(
    path: &Path,
    format: &InputFormat,
    max_field_bytes: usize,
) -> Result<(Table, CsvOptions), String> {
    read_table_sniffing(
        open(path, format, "input")?,
        format.delimiter,
        max_field_bytes,
    )
    .map_err(|e| format!("input {}: {e} [{}]", path.display(), e.code()))
}

/// Reads another table of the same format with the options the input was read with.
pub fn read_like_input(
    path: &Path,
    format: &InputFormat,
    options: &CsvOptions,
    what: &str,
) -> Result<Table, String> {
    read_table(open(path, format, what)?, options)
        .map_err(|e| format!("{what} {}: {e} [{}]", path.display(), e.code()))
}
