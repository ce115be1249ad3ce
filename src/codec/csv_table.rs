//! CSV ⇄ encoded table. Reads any `Read` in one streaming pass: a header line is required, fields may be
//! quoted, lines may end in CRLF, a UTF-8 byte-order mark is skipped. Every record must have as many fields
//! as the header. Values are interned per column as they arrive, so no per-cell string survives loading.

use std::io::{Read, Write};

use super::CodecError;
use crate::core::data::{Column, Dictionary, Table};
use crate::core::render::Rendering;

/// How to read and write CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    /// Field delimiter.
    pub delimiter: u8,
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self { delimiter: b',' }
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads a whole table.
pub fn read_table<R: Read>(input: R, options: &CsvOptions) -> Result<Table, CodecError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(options.delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut record = csv::ByteRecord::new();
    if !next(&mut reader, &mut record)? {
        return Err(CodecError::Empty);
    }
    let mut columns = header(&record)?;
    let width = columns.len();
    let mut rows = 0usize;
    while next(&mut reader, &mut record)? {
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != width {
            return Err(CodecError::RaggedRow {
                line,
                found: record.len(),
                expected: width,
            });
        }
        for (index, (field, column)) in record.iter().zip(columns.iter_mut()).enumerate() {
            let text = std::str::from_utf8(field).map_err(|_| CodecError::InvalidUtf8 {
                line,
                column: index + 1,
            })?;
            let code = column.dictionary.intern(text);
            column.codes.push(code);
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(CodecError::NoRecords);
    }
    Ok(Table::new(columns, rows))
}

fn next<R: Read>(
    reader: &mut csv::Reader<R>,
    record: &mut csv::ByteRecord,
) -> Result<bool, CodecError> {
    reader.read_byte_record(record).map_err(|e| {
        let line = e.position().map_or(0, |p| p.line());
        let problem = match e.kind() {
            csv::ErrorKind::Io(io) => format!("read failed: {}", io.kind()),
            _ => "malformed CSV (check quoting and the delimiter)".to_string(),
        };
        CodecError::Malformed { line, problem }
    })
}

fn header(record: &csv::ByteRecord) -> Result<Vec<Column>, CodecError> {
    let mut columns: Vec<Column> = Vec::with_capacity(record.len());
    for (index, field) in record.iter().enumerate() {
        let field = if index == 0 {
            field.strip_prefix(BOM).unwrap_or(field)
        } else {
            field
        };
        let name = std::str::from_utf8(field)
            .map_err(|_| CodecError::InvalidUtf8 {
                line: 1,
                column: index + 1,
            })?
            .trim();
        if name.is_empty() {
            return Err(CodecError::EmptyColumnName {
                position: index + 1,
            });
        }
        if let Some(first) = columns.iter().position(|c| c.name == name) {
            return Err(CodecError::DuplicateColumnName {
                name: name.to_string(),
                first: first + 1,
                second: index + 1,
            });
        }
        columns.push(Column {
            name: name.to_string(),
            dictionary: Dictionary::new(),
            codes: Vec::new(),
        });
    }
    Ok(columns)
}

/// Writes a rendering as CSV with a header line.
pub fn write_rendering<W: Write>(
    output: W,
    rendering: &Rendering<'_>,
    options: &CsvOptions,
) -> Result<(), CodecError> {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(options.delimiter)
        .from_writer(output);
    let fail = |e: csv::Error| CodecError::Write(e.to_string());
    writer.write_record(rendering.header()).map_err(fail)?;
    let width = rendering.header().len();
    for row in rendering.rows() {
        for column in 0..width {
            writer
                .write_field(rendering.cell(row, column))
                .map_err(fail)?;
        }
        writer.write_record(None::<&[u8]>).map_err(fail)?;
    }
    writer
        .flush()
        .map_err(|e| CodecError::Write(e.kind().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Table, CodecError> {
        read_table(bytes, &CsvOptions { delimiter: b';' })
    }

    #[test]
    fn reads_quotes_crlf_and_bom() {
        let t = read(b"\xEF\xBB\xBFage;\"city; town\"\r\n39;\"Bern; \"\"old\"\"\"\r\n40;Basel\r\n")
            .unwrap();
        assert_eq!(t.row_count(), 2);
        assert_eq!(t.column(0).name, "age");
        assert_eq!(t.column(1).name, "city; town");
        assert_eq!(
            t.column(1).dictionary.value(t.column(1).codes[0]),
            "Bern; \"old\""
        );
    }

    #[test]
    fn specific_errors_name_the_line() {
        assert!(matches!(read(b""), Err(CodecError::Empty)));
        assert!(matches!(read(b"a;b\n"), Err(CodecError::NoRecords)));
        assert!(matches!(
            read(b"a;b\n1;2\n3\n"),
            Err(CodecError::RaggedRow {
                line: 3,
                found: 1,
                expected: 2
            })
        ));
        assert!(matches!(
            read(b"a;b\n1;2\n3;\xff\n"),
            Err(CodecError::InvalidUtf8 { line: 3, column: 2 })
        ));
        assert!(matches!(
            read(b"a;;b\n1;2;3\n"),
            Err(CodecError::EmptyColumnName { position: 2 })
        ));
        assert!(matches!(
            read(b"a;b;a\n1;2;3\n"),
            Err(CodecError::DuplicateColumnName {
                first: 1,
                second: 3,
                ..
            })
        ));
        let err = read(b"a;b\n1;secret-value;3\n").unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
    }

    #[test]
    fn delimiter_is_validated() {
        assert_eq!(CsvOptions::with_delimiter("\\t").unwrap().delimiter, b'\t');
        assert!(CsvOptions::with_delimiter(";;").is_err());
        assert!(CsvOptions::with_delimiter("\"").is_err());
        assert!(CsvOptions::with_delimiter("é").is_err());
    }
}
