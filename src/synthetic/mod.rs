//! Synthetic tables for benchmarks and load tests: seeded, deterministic generators that build encoded
//! [`Table`]s directly (no text per cell): adult-shaped tables at any size, census-like tables with
//! realistic uniqueness, tables with planted functional dependencies, and high-dimensional tables with
//! planted mutual information; a CSV writer for small generated tables.

pub mod adult;
pub mod census;
pub mod correlated;
pub mod dependencies;

use std::io::{self, Write};

use crate::core::data::{Dictionary, Table};

pub use adult::{AdultShape, SyntheticError, ADULT_COLUMNS};

/// Renumbers `codes` (raw values below `domain`) in first-appearance order, as the CSV reader numbers
/// values, and returns their dictionary: `text` is called once per distinct value, not per cell.
pub(crate) fn renumber(
    codes: &mut [u32],
    domain: usize,
    mut text: impl FnMut(u32) -> String,
) -> Dictionary {
    let mut new_code = vec![u32::MAX; domain];
    let mut dictionary = Dictionary::new();
    for code in codes.iter_mut() {
        let slot = &mut new_code[*code as usize];
        if *slot == u32::MAX {
            *slot = dictionary.intern(&text(*code));
        }
        *code = *slot;
    }
    dictionary
}

/// Writes `table` as CSV: a header line, then one line per record, fields separated by `delimiter`;
/// a field holding the delimiter, a quote or a line break is quoted (inner quotes doubled).
///
/// # Errors
/// Any error of `out`.
pub fn write_csv(table: &Table, delimiter: u8, out: &mut impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let columns = table.columns();
    let write_field = |out: &mut io::BufWriter<_>, text: &str| -> io::Result<()> {
        let bytes = text.as_bytes();
        if bytes
            .iter()
            .any(|&b| b == delimiter || b == b'"' || b == b'\n' || b == b'\r')
        {
            out.write_all(b"\"")?;
            out.write_all(text.replace('"', "\"\"").as_bytes())?;
            out.write_all(b"\"")
        } else {
            out.write_all(bytes)
        }
    };
    for (j, column) in columns.iter().enumerate() {
        if j > 0 {
            out.write_all(&[delimiter])?;
        }
        write_field(&mut out, &column.name)?;
    }
    out.write_all(b"\n")?;
    for row in 0..table.row_count() {
        for (j, column) in columns.iter().enumerate() {
            if j > 0 {
                out.write_all(&[delimiter])?;
            }
            write_field(&mut out, column.dictionary.value(column.codes[row]))?;
        }
        out.write_all(b"\n")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_fields_that_need_it() {
        let table = Table::from_rows(&["a", "b;c"], &[vec!["x", "say \"hi\""], vec!["1;2", "y"]]);
        let mut out = Vec::new();
        write_csv(&table, b';', &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a;\"b;c\"\nx;\"say \"\"hi\"\"\"\n\"1;2\";y\n"
        );
    }
}
