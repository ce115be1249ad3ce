//! Hierarchy files: ARX's CSV layout (no header, one line per original value, `value;level1;…;top`) and
//! JSON (`{"levels": [["39", "30-39", "*"], …]}`), both validated into a [`Hierarchy`]. The CSV layout is
//! read through the same [`CsvGuard`] as tables (quoting, stray carriage returns, NUL bytes); labels of
//! either layout may not contain NUL.

use super::csv_guard::{codec_error, CsvGuard};
use super::CodecError;
use crate::core::data::Hierarchy;

/// Longest label of a hierarchy file, in bytes. A hierarchy body is limited in size anyway; this only
/// keeps one label from taking all of it unnoticed.
const MAX_LABEL_BYTES: usize = 1 << 20;

/// Parses an ARX-style hierarchy.
pub fn parse_arx_hierarchy(bytes: &[u8], delimiter: u8) -> Result<Hierarchy, CodecError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(CsvGuard::new(bytes, delimiter, MAX_LABEL_BYTES));
    // every label's text back to back, and each row's label ends: one allocation for all labels
    let mut text = String::with_capacity(bytes.len());
    let mut ends: Vec<usize> = Vec::new();
    let mut widths: Vec<usize> = Vec::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            let malformed = CodecError::Malformed {
                line,
                problem: "malformed hierarchy CSV".into(),
            };
            match e.into_kind() {
                csv::ErrorKind::Io(io) => codec_error(io).unwrap_or(malformed),
                _ => malformed,
            }
        })?;
        let line = record.position().map_or(0, |p| p.line());
        for (index, field) in record.iter().enumerate() {
            let label = std::str::from_utf8(field).map_err(|_| CodecError::InvalidUtf8 {
                line,
                column: index + 1,
            })?;
            text.push_str(label);
            ends.push(text.len());
        }
        widths.push(record.len());
    }
    let mut start = 0;
    let mut at = 0;
    let rows: Vec<Vec<&str>> = widths
        .iter()
        .map(|&width| {
            let row = ends[at..at + width]
                .iter()
                .map(|&end| {
                    let label = &text[start..end];
                    start = end;
                    label
                })
                .collect();
            at += width;
            row
        })
        .collect();
    Ok(Hierarchy::from_rows(&rows)?)
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonHierarchy {
    levels: Vec<Vec<String>>,
}

/// Parses a JSON hierarchy document.
pub fn parse_json_hierarchy(bytes: &[u8]) -> Result<Hierarchy, CodecError> {
    // serde's messages quote the offending value, which may be a data value: report position and kind only
    let doc: JsonHierarchy = serde_json::from_slice(bytes).map_err(|e| {
        let kind = match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                "not valid JSON"
            }
            _ => "expected {\"levels\": [[value, level1, ..., top], ...]}",
        };
        CodecError::HierarchyJson(format!("{kind} (line {}, column {})", e.line(), e.column()))
    })?;
    check_labels(&doc.levels)?;
    Ok(Hierarchy::from_rows(&doc.levels)?)
}

/// Checks that no label of JSON hierarchy rows contains NUL (a dataset value never does); the error
/// names the row as its line and the level + 1 as its column.
pub fn check_labels(rows: &[Vec<String>]) -> Result<(), CodecError> {
    for (row, labels) in rows.iter().enumerate() {
        if let Some(level) = labels.iter().position(|label| label.contains('\0')) {
            return Err(CodecError::InvalidCharacters {
                line: row as u64 + 1,
                column: level + 1,
                what: "the label contains a NUL character",
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::HierarchyError;

    #[test]
    fn arx_and_json_layouts_agree() {
        let a = parse_arx_hierarchy(b"39;30-39;*\r\n41;40-49;*\n", b';').unwrap();
        let j = parse_json_hierarchy(br#"{"levels": [["39","30-39","*"], ["41","40-49","*"]]}"#)
            .unwrap();
        assert_eq!(a.height(), 3);
        assert_eq!(j.height(), 3);
        assert_eq!(a.labels(1).len(), j.labels(1).len());
    }

    #[test]
    fn structural_errors_pass_through() {
        assert!(matches!(
            parse_arx_hierarchy(b"a;x;*\nb;*\n", b';'),
            Err(CodecError::Hierarchy(HierarchyError::RaggedRow {
                line: 2,
                ..
            }))
        ));
        assert!(matches!(
            parse_json_hierarchy(b"{\"levels\": 3}"),
            Err(CodecError::HierarchyJson(_))
        ));
        assert!(matches!(
            parse_arx_hierarchy(b"a;x;*\nb;\"x;*\n", b';'),
            Err(CodecError::UnterminatedQuote { line: 2 })
        ));
        assert!(matches!(
            parse_arx_hierarchy(b"a;x;*\nb;x\0;*\n", b';'),
            Err(CodecError::InvalidCharacters {
                line: 2,
                column: 2,
                ..
            })
        ));
        assert!(matches!(
            parse_json_hierarchy(br#"{"levels": [["a", "*"], ["b\u0000", "*"]]}"#),
            Err(CodecError::InvalidCharacters {
                line: 2,
                column: 1,
                ..
            })
        ));
        let message = parse_json_hierarchy(br#"{"levels": "SECRET-VALUE-123"}"#)
            .unwrap_err()
            .to_string();
        assert!(!message.contains("SECRET"), "{message}");
    }
}
