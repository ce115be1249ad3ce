//! Byte formats to and from the engine's encoded types: CSV tables and generalization hierarchies
//! (ARX's CSV layout and a JSON `levels` layout). Errors name lines, columns and counts, never cell values.

pub mod archive;
pub mod csv_guard;
pub mod csv_table;
pub mod encoding;
pub mod hierarchy;
pub mod profile;
pub mod sniff;

pub use csv_table::{read_table, write_rendering, CsvOptions, DEFAULT_MAX_FIELD_BYTES};
pub use hierarchy::{check_labels, parse_arx_hierarchy, parse_json_hierarchy};

use crate::core::data::HierarchyError;
use crate::error_code::ErrorCode;

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
    /// A quoted field still open at the end of the input.
    #[error("line {line}: a quoted field opens on this line and is never closed")]
    UnterminatedQuote {
        /// 1-based line of the opening quote.
        line: u64,
    },
    /// Text between the closing quote of a field and the next delimiter or line end.
    #[error(
        "line {line}: text follows the closing quote of a field that opened on line {opened} \
         (a quote inside a quoted field must be doubled)"
    )]
    TextAfterQuote {
        /// 1-based line of the field's opening quote.
        opened: u64,
        /// 1-based line of the text after its closing quote.
        line: u64,
    },
    /// A carriage return outside quotes that does not end a line (CRLF).
    #[error(
        "line {line}: a carriage return outside quotes is not followed by a line feed \
         (lines end in LF or CRLF; quote a value that contains one)"
    )]
    StrayCarriageReturn {
        /// 1-based line.
        line: u64,
    },
    /// A field longer than the limit.
    #[error("line {line}, column {column}: the field is longer than the limit of {limit} bytes")]
    FieldTooLong {
        /// 1-based line where the field starts.
        line: u64,
        /// 1-based column position.
        column: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A character a field, a column name or a label may not contain (NUL; control characters in
    /// names).
    #[error("line {line}, column {column}: {what}")]
    InvalidCharacters {
        /// 1-based line (row of a JSON hierarchy).
        line: u64,
        /// 1-based column position (level + 1 in a hierarchy).
        column: usize,
        /// What is not allowed, without the value.
        what: &'static str,
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
    #[error(
        "the delimiter must be a single ASCII character other than a quote, a line break or \
         another control character (tab is allowed)"
    )]
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
    /// The table reads as one column whose name holds another delimiter.
    #[error(
        "the table reads as a single column whose name contains '{found}': the file is probably \
         '{found}'-separated, not '{used}'-separated; give the delimiter '{found}'"
    )]
    DelimiterMismatch {
        /// The delimiter the name holds, as written in a query or spec.
        found: String,
        /// The delimiter the file was read with.
        used: String,
    },
}

impl CodecError {
    /// The stable snake_case code of this error (the API's problem `code`).
    pub fn code(&self) -> ErrorCode {
        match self {
            CodecError::Empty => ErrorCode::EmptyBody,
            CodecError::NoRecords => ErrorCode::NoRecords,
            CodecError::EmptyColumnName { .. } => ErrorCode::EmptyColumnName,
            CodecError::DuplicateColumnName { .. } => ErrorCode::DuplicateColumn,
            CodecError::RaggedRow { .. } => ErrorCode::RaggedRow,
            CodecError::InvalidUtf8 { .. } => ErrorCode::InvalidUtf8,
            CodecError::UnterminatedQuote { .. } => ErrorCode::UnterminatedQuote,
            CodecError::TextAfterQuote { .. } => ErrorCode::TextAfterQuote,
            CodecError::StrayCarriageReturn { .. } => ErrorCode::StrayCarriageReturn,
            CodecError::FieldTooLong { .. } => ErrorCode::FieldTooLong,
            CodecError::InvalidCharacters { .. } => ErrorCode::InvalidCharacters,
            CodecError::Malformed { .. } => ErrorCode::MalformedCsv,
            CodecError::BadDelimiter => ErrorCode::InvalidDelimiter,
            CodecError::Hierarchy(_) | CodecError::HierarchyJson(_) => ErrorCode::InvalidHierarchy,
            CodecError::Write(_) => ErrorCode::WriteFailed,
            CodecError::DelimiterMismatch { .. } => ErrorCode::DelimiterMismatch,
        }
    }
}

impl CsvOptions {
    /// Options with a delimiter given as text (`";"`, `","`, `"\t"`) and the default field limit.
    pub fn with_delimiter(delimiter: &str) -> Result<Self, CodecError> {
        let bytes = delimiter.as_bytes();
        let d = match bytes {
            [b] => *b,
            b"\\t" => b'\t',
            _ => return Err(CodecError::BadDelimiter),
        };
        if !d.is_ascii() || d == b'"' || (d.is_ascii_control() && d != b'\t') {
            return Err(CodecError::BadDelimiter);
        }
        Ok(Self {
            delimiter: d,
            ..Self::default()
        })
    }

    /// The same options with another field limit, in bytes.
    pub fn with_max_field_bytes(self, max_field_bytes: usize) -> Self {
        Self {
            max_field_bytes,
            ..self
        }
    }
}
