//! CSV ⇄ encoded table. Reads any `Read` in one streaming pass: a header line is required, fields may be
//! quoted, lines may end in CRLF, a UTF-8 byte-order mark is skipped. Every record must have as many fields
//! as the header. Values are interned per column as they arrive, so no per-cell string survives loading.
//!
//! The input passes through a [`CsvGuard`] on its way to the parser, so quoting that would lose or invent
//! records (a quote never closed, text after a closing quote, a stray carriage return), NUL bytes and
//! fields over [`CsvOptions::max_field_bytes`] are errors naming their line. Blank lines are skipped.
//! Column names may not contain control characters.

use std::io::{Read, Write};

use rayon::prelude::*;

use super::csv_guard::{codec_error, CsvGuard};
use super::CodecError;
use crate::core::data::{Column, Dictionary, Table};
use crate::core::render::Rendering;

/// Default longest field: 1 MiB.
pub const DEFAULT_MAX_FIELD_BYTES: usize = 1 << 20;

/// How to read and write CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    /// Field delimiter.
    pub delimiter: u8,
    /// Longest field value the reader accepts, in bytes (quotes around it not counted).
    pub max_field_bytes: usize,
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self {
            delimiter: b',',
            max_field_bytes: DEFAULT_MAX_FIELD_BYTES,
        }
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads a whole table. Parsing and interning overlap: while one batch of records is interned (each
/// column on its own thread of the caller's rayon pool), the next batch is parsed.
pub fn read_table<R: Read + Send>(input: R, options: &CsvOptions) -> Result<Table, CodecError> {
    let guarded = CsvGuard::new(input, options.delimiter, options.max_field_bytes);
    let table = read_records(csv_reader(guarded, options.delimiter))?;
    // one column named with another delimiter: the file was read with the wrong one
    if let [column] = table.columns() {
        if let Some(found) = super::sniff::other_delimiter_in(&column.name, options.delimiter) {
            return Err(CodecError::DelimiterMismatch {
                found: super::sniff::delimiter_text(found),
                used: super::sniff::delimiter_text(options.delimiter),
            });
        }
    }
    Ok(table)
}

fn csv_reader<R: Read>(input: R, delimiter: u8) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(input)
}

/// Records parsed per batch.
const BATCH_RECORDS: usize = 1 << 14;

/// Parsed records waiting to be interned: their fields' bytes back to back.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    /// End of each field in `bytes`, record by record (`width` per record).
    ends: Vec<usize>,
    /// Line of each record.
    lines: Vec<u64>,
}

impl Batch {
    fn records(&self) -> usize {
        self.lines.len()
    }

    /// Fills the batch with the next records of `reader` (none at the end of the input).
    fn fill<R: Read>(
        &mut self,
        reader: &mut csv::Reader<R>,
        record: &mut csv::ByteRecord,
        width: usize,
    ) -> Result<(), CodecError> {
        self.bytes.clear();
        self.ends.clear();
        self.lines.clear();
        while self.records() < BATCH_RECORDS && next(reader, record)? {
            let line = record.position().map_or(0, |p| p.line());
            if record.len() != width {
                return Err(CodecError::RaggedRow {
                    line,
                    found: record.len(),
                    expected: width,
                });
            }
            for field in record.iter() {
                self.bytes.extend_from_slice(field);
                self.ends.push(self.bytes.len());
            }
            self.lines.push(line);
        }
        Ok(())
    }

    /// Interns the batch's fields column by column, in parallel; the first invalid field (by line, then
    /// column) is the error.
    fn intern(&self, columns: &mut [Column]) -> Result<(), CodecError> {
        let width = columns.len();
        let failures: Vec<(u64, usize)> = columns
            .par_iter_mut()
            .enumerate()
            .filter_map(|(j, column)| {
                column.codes.reserve(self.records());
                for (i, &line) in self.lines.iter().enumerate() {
                    let at = i * width + j;
                    let start = if at == 0 { 0 } else { self.ends[at - 1] };
                    let Ok(text) = std::str::from_utf8(&self.bytes[start..self.ends[at]]) else {
                        return Some((line, j + 1));
                    };
                    let code = column.dictionary.intern(text);
                    column.codes.push(code);
                }
                None
            })
            .collect();
        match failures.into_iter().min() {
            Some((line, column)) => Err(CodecError::InvalidUtf8 { line, column }),
            None => Ok(()),
        }
    }
}

/// The header and the records of `reader`, interned column by column.
fn read_records<R: Read + Send>(mut reader: csv::Reader<R>) -> Result<Table, CodecError> {
    let mut record = csv::ByteRecord::new();
    if !next(&mut reader, &mut record)? {
        return Err(CodecError::Empty);
    }
    let mut columns = header(&record)?;
    let width = columns.len();
    let mut current = Batch::default();
    current.fill(&mut reader, &mut record, width)?;
    let mut spare = Batch::default();
    let mut rows = 0usize;
    while current.records() > 0 {
        let (parsed, interned) = rayon::join(
            || spare.fill(&mut reader, &mut record, width),
            || current.intern(&mut columns),
        );
        // the earlier batch's error first: the input is reported in order
        interned?;
        parsed?;
        rows += current.records();
        std::mem::swap(&mut current, &mut spare);
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
        match e.into_kind() {
            csv::ErrorKind::Io(io) => match codec_error(io) {
                Ok(guarded) => guarded,
                Err(io) => CodecError::Malformed {
                    line,
                    problem: format!("read failed: {}", io.kind()),
                },
            },
            _ => CodecError::Malformed {
                line,
                problem: "malformed CSV (check quoting and the delimiter)".to_string(),
            },
        }
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
        if name.chars().any(char::is_control) {
            return Err(CodecError::InvalidCharacters {
                line: 1,
                column: index + 1,
                what: "the column name contains a control character",
            });
        }
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

/// Writes a rendering as CSV with a header line. Blocks of rows are rendered into buffers side by side
/// on the caller's rayon pool and written in order (a few blocks per thread at a time, so the memory
/// stays small whatever the table's size).
pub fn write_rendering<W: Write>(
    mut output: W,
    rendering: &Rendering<'_>,
    options: &CsvOptions,
) -> Result<(), CodecError> {
    const BLOCK: usize = 1 << 14;
    let fail = |e: csv::Error| CodecError::Write(e.to_string());
    let writer = |capacity: usize| {
        csv::WriterBuilder::new()
            .delimiter(options.delimiter)
            .from_writer(Vec::with_capacity(capacity))
    };
    let render = |rows: &[usize]| -> Result<Vec<u8>, csv::Error> {
        let mut writer = writer(rows.len() * 64);
        let width = rendering.header().len();
        for &row in rows {
            for column in 0..width {
                writer.write_field(rendering.cell(row, column))?;
            }
            writer.write_record(None::<&[u8]>)?;
        }
        writer.into_inner().map_err(|e| e.into_error().into())
    };
    let mut header = writer(0);
    header.write_record(rendering.header()).map_err(fail)?;
    let header = header
        .into_inner()
        .map_err(|e| fail(e.into_error().into()))?;
    output.write_all(&header).map_err(write_error)?;
    // two blocks per thread, for at most eight threads: a few megabytes whatever the pool
    let batch = BLOCK * 2 * rayon::current_num_threads().clamp(1, 8);
    let mut rows = rendering.rows();
    let mut pending: Vec<usize> = Vec::with_capacity(batch);
    loop {
        pending.clear();
        pending.extend(rows.by_ref().take(batch));
        if pending.is_empty() {
            break;
        }
        let blocks: Vec<Vec<u8>> = pending
            .par_chunks(BLOCK)
            .map(render)
            .collect::<Result<_, _>>()
            .map_err(fail)?;
        for block in &blocks {
            output.write_all(block).map_err(write_error)?;
        }
    }
    output.flush().map_err(write_error)
}

/// A write error without values: an encoding writer's own (value-free) message, otherwise the kind.
fn write_error(e: std::io::Error) -> CodecError {
    CodecError::Write(if e.kind() == std::io::ErrorKind::InvalidData {
        e.to_string()
    } else {
        e.kind().to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More records than one block and one batch of blocks: the blocks are written in order, with the
    /// quoting of a single writer, and the output reads back as the table.
    #[test]
    fn writes_many_blocks_in_record_order() {
        use crate::core::render::{OutputColumn, Rendering};
        let records = 3 * (1 << 14) * 2 * rayon::current_num_threads().clamp(1, 8) + 17;
        let mut text = String::from("n;quoted\n");
        for i in 0..records {
            text.push_str(&format!("{i};\"a;{}\"\n", i % 7));
        }
        let table = read(text.as_bytes()).unwrap();
        let suppressed = vec![false; records];
        let rendering = Rendering::new(
            vec![
                OutputColumn::Verbatim(table.column(0)),
                OutputColumn::Verbatim(table.column(1)),
            ],
            &suppressed,
            false,
        );
        let mut bytes = Vec::new();
        write_rendering(
            &mut bytes,
            &rendering,
            &CsvOptions::with_delimiter(";").unwrap(),
        )
        .unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), text);
    }

    fn read(bytes: &[u8]) -> Result<Table, CodecError> {
        read_table(bytes, &CsvOptions::with_delimiter(";").unwrap())
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
    fn reader_errors_come_from_the_guard() {
        assert!(matches!(
            read(b"a;b\nx;\"abc\nx;2\n"),
            Err(CodecError::UnterminatedQuote { line: 2 })
        ));
        assert!(matches!(
            read(b"a;b\n1;2\n3;4\r5;6\n"),
            Err(CodecError::StrayCarriageReturn { line: 3 })
        ));
        let options = CsvOptions::with_delimiter(";")
            .unwrap()
            .with_max_field_bytes(3);
        assert!(read_table(&b"a;b\n1;abc\n"[..], &options).is_ok());
        assert!(matches!(
            read_table(&b"a;b\n1;abc\n1;abcd\n"[..], &options),
            Err(CodecError::FieldTooLong {
                line: 3,
                column: 2,
                limit: 3
            })
        ));
        assert!(matches!(
            read(b"a;\"b\x07\"\n1;2\n"),
            Err(CodecError::InvalidCharacters {
                line: 1,
                column: 2,
                ..
            })
        ));
    }

    /// Throughput of the reader with and without the guard, in CPU time of the reading thread, on adult
    /// repeated to about 100 MB and on a synthetic table of about 100 MB with two quoted fields per line.
    /// `cargo test --lib read_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn read_throughput() {
        let adult = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/adult/adult.csv"
        ))
        .unwrap();
        let body = &adult[adult.iter().position(|&b| b == b'\n').unwrap() + 1..];
        let mut repeated = adult.clone();
        while repeated.len() < 100_000_000 {
            repeated.extend_from_slice(body);
        }
        let mut quoted = b"age;sex;zip;education;occupation;note;salary\n".to_vec();
        let mut i: u64 = 0;
        while quoted.len() < 100_000_000 {
            i += 1;
            let line = format!(
                "{};{};{};{};\"occ {}, grade {}\";note {} \"\"q\"\";{}\n",
                17 + i % 73,
                if i % 3 == 0 { "Female" } else { "Male" },
                80_000 + (i * 7919) % 9000,
                ["Bachelors", "HS-grad", "Masters", "Doctorate"][(i % 4) as usize],
                i % 14,
                i % 5,
                i % 1000,
                if i % 4 == 0 { ">50K" } else { "<=50K" }
            );
            quoted.extend_from_slice(line.as_bytes());
        }
        // CPU time of this thread: steadier than wall time while other builds share the machine
        let cpu = || {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `t` is a valid timespec for the call to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
        };
        let seconds = |f: &dyn Fn() -> usize| {
            let start = cpu();
            assert!(f() > 0);
            cpu() - start
        };
        let options = CsvOptions::with_delimiter(";").unwrap();
        for (name, csv) in [("adult x40", &repeated), ("quoted", &quoted)] {
            let mb = csv.len() as f64 / 1e6;
            let unguarded = || {
                read_records(csv_reader(csv.as_slice(), b';'))
                    .unwrap()
                    .row_count()
            };
            let guarded = || read_table(csv.as_slice(), &options).unwrap().row_count();
            let guard_alone = || {
                let mut guard = CsvGuard::new(csv.as_slice(), b';', options.max_field_bytes);
                std::io::copy(&mut guard, &mut std::io::sink()).unwrap() as usize
            };
            let mut best = [f64::MAX; 3];
            for _ in 0..3 {
                best[0] = best[0].min(seconds(&unguarded));
                best[1] = best[1].min(seconds(&guarded));
                best[2] = best[2].min(seconds(&guard_alone));
            }
            println!(
                "{name}, {mb:.0} MB: read_table without guard {:.0} MB/s, with guard {:.0} MB/s, \
                 guard alone {:.0} MB/s",
                mb / best[0],
                mb / best[1],
                mb / best[2]
            );
        }
    }

    #[test]
    fn delimiter_is_validated() {
        assert_eq!(CsvOptions::with_delimiter("\\t").unwrap().delimiter, b'\t');
        assert!(CsvOptions::with_delimiter(";;").is_err());
        assert!(CsvOptions::with_delimiter("\"").is_err());
        assert!(CsvOptions::with_delimiter("é").is_err());
        for control in ["\0", "\u{1}", "\n", "\r", "\u{1f}", "\u{7f}"] {
            assert!(CsvOptions::with_delimiter(control).is_err(), "{control:?}");
        }
        assert_eq!(CsvOptions::with_delimiter("\t").unwrap().delimiter, b'\t');
    }
}
