//! Byte formats to and from the engine's encoded types: CSV tables and generalization hierarchies
//! (ARX's CSV layout and a JSON `levels` layout). Errors name lines, columns and counts, never cell values.

pub mod csv_table;
pub mod hierarchy;
pub mod profile;

pub use csv_table::{read_table, write_rendering, CsvOptions};
pub use hierarchy::{parse_arx_hierarchy, parse_json_hierarchy};

use crate::core::data::HierarchyError;

/// Why input bytes could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// Nothing at all, not even a header.
    #[error("the CSV input is empty; a header line is required")]
    Empty,
    /// A header but no records.
    #[error("the CSV input has a header but no records")]
    NoRecords,
    /// An empty column name.
    #[error("line 1: column {position} has an empty name")]
    EmptyColumnName {
        /// 1-based column position.
        position: usize,
    },
    /// Two columns with the same name.
    #[error("line 1: column name '{name}' appears twice (columns {first} and {second})")]
    DuplicateColumnName {
        /// The repeated name.
        name: String,
        /// 1-based position of the first occurrence.
        first: usize,
        /// 1-based position of the second occurrence.
        second: usize,
    },
    /// A record with a different number of fields than the header.
    #[error("line {line}: the record has {found} fields but the header has {expected}")]
    RaggedRow {
        /// 1-based line where the record starts.
        line: u64,
        /// Fields on that record.
        found: usize,
        /// Fields in the header.
        expected: usize,
    },
    /// Bytes that are not UTF-8.
    #[error("line {line}, column {column}: the field is not valid UTF-8")]
    InvalidUtf8 {
        /// 1-based line.
        line: u64,
        /// 1-based column position.
        column: usize,
    },
    /// Malformed CSV or an I/O failure while reading.
    #[error("line {line}: {problem}")]
    Malformed {
        /// 1-based line (0 when unknown).
        line: u64,
        /// What went wrong, without data.
        problem: String,
    },
    /// The delimiter is not a single ASCII character.
    #[error("the delimiter must be a single ASCII character other than a quote or line break")]
    BadDelimiter,
    /// A hierarchy whose structure is invalid.
    #[error(transparent)]
    Hierarchy(#[from] HierarchyError),
    /// A JSON hierarchy that does not parse.
    #[error("the JSON hierarchy is malformed: {0}")]
    HierarchyJson(String),
    /// Writing output failed.
    #[error("could not write output: {0}")]
    Write(String),
}

impl CsvOptions {
    /// Options with a delimiter given as text (`";"`, `","`, `"\t"`).
    pub fn with_delimiter(delimiter: &str) -> Result<Self, CodecError> {
        let bytes = delimiter.as_bytes();
        let d = match bytes {
            [b] => *b,
            b"\\t" => b'\t',
            _ => return Err(CodecError::BadDelimiter),
        };
        if !d.is_ascii() || matches!(d, b'"' | b'\n' | b'\r') {
            return Err(CodecError::BadDelimiter);
        }
        Ok(Self { delimiter: d })
    }
}
