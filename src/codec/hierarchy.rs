//! Hierarchy files: ARX's CSV layout (no header, one line per original value, `value;level1;…;top`) and
//! JSON (`{"levels": [["39", "30-39", "*"], …]}`), both validated into a [`Hierarchy`].

use super::CodecError;
use crate::core::data::Hierarchy;

/// Parses an ARX-style hierarchy.
pub fn parse_arx_hierarchy(bytes: &[u8], delimiter: u8) -> Result<Hierarchy, CodecError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| CodecError::Malformed {
            line: e.position().map_or(0, |p| p.line()),
            problem: "malformed hierarchy CSV".into(),
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let mut row = Vec::with_capacity(record.len());
        for (index, field) in record.iter().enumerate() {
            let text = std::str::from_utf8(field).map_err(|_| CodecError::InvalidUtf8 {
                line,
                column: index + 1,
            })?;
            row.push(text.to_string());
        }
        rows.push(row);
    }
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
    Ok(Hierarchy::from_rows(&doc.levels)?)
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
        let message = parse_json_hierarchy(br#"{"levels": "SECRET-VALUE-123"}"#)
            .unwrap_err()
            .to_string();
        assert!(!message.contains("SECRET"), "{message}");
    }
}
