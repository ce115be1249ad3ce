//! JSON hierarchy documents, as the service stores them and as the CLI reads `.json` hierarchy files:
//! either `{"levels": [[value, level1, ..., top], ...]}` (a complete hierarchy) or
//! `{"builder": {"type": ..., ...}}` (parameters built against the column at each job, see
//! [`crate::domain::builders`]). Messages give positions and kinds, never a value of the document.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::codec::parse_json_hierarchy;
use crate::domain::builders::BuilderSpec;
use crate::domain::resolve::Resolved;

/// Whether a document holds a builder; the rest is skipped unread.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    builder: Option<IgnoredAny>,
}

/// A builder document.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuilderDocument {
    builder: BuilderSpec,
}

/// Parses a JSON hierarchy document: levels or a builder.
pub fn parse_hierarchy_document(bytes: &[u8]) -> Result<Resolved, String> {
    let is_builder = serde_json::from_slice::<Probe>(bytes)
        .map(|probe| probe.builder.is_some())
        .unwrap_or(false);
    if !is_builder {
        return parse_json_hierarchy(bytes)
            .map(Resolved::Hierarchy)
            .map_err(|e| e.to_string());
    }
    serde_json::from_slice::<BuilderDocument>(bytes)
        .map(|doc| Resolved::Builder(doc.builder))
        .map_err(|e| builder_error(&e))
}

/// Checks a builder's parameters (what can be checked without a column) and returns it.
pub fn parse_builder(value: &serde_json::Value) -> Result<BuilderSpec, String> {
    let builder = BuilderSpec::deserialize(value).map_err(|e| builder_error(&e))?;
    builder.build(&[]).map_err(|e| e.to_string())?;
    Ok(builder)
}

/// A value-free message for a builder that does not deserialize: serde names fields and variants,
/// which are the builder's own vocabulary, but quotes values too, so only the kind of problem is kept.
fn builder_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let kept = if text.contains("unknown variant") {
        "unknown builder type; one of interval, order, mask, date, categories"
    } else if text.contains("missing field") || text.contains("unknown field") {
        let start = text.find('`').unwrap_or(0);
        let end = text[start + 1..]
            .find('`')
            .map_or(text.len(), |i| start + 2 + i);
        return format!(
            "the builder {} {}",
            if text.contains("missing field") {
                "lacks the field"
            } else {
                "has no field"
            },
            &text[start..end]
        );
    } else if matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    ) {
        "not valid JSON"
    } else {
        "a builder field has the wrong type"
    };
    kept.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_builders_are_told_apart() {
        let levels = parse_hierarchy_document(br#"{"levels": [["a", "*"], ["b", "*"]]}"#).unwrap();
        assert!(matches!(levels, Resolved::Hierarchy(h) if h.leaf_count() == 2));
        let builder = parse_hierarchy_document(
            br#"{"builder": {"type": "interval", "width": 10, "fanouts": [2]}}"#,
        )
        .unwrap();
        assert!(matches!(
            builder,
            Resolved::Builder(BuilderSpec::Interval(_))
        ));
    }

    #[test]
    fn errors_name_the_problem_and_no_value() {
        let e = parse_hierarchy_document(br#"{"builder": {"type": "secret-type"}}"#).unwrap_err();
        assert!(e.contains("unknown builder type"), "{e}");
        assert!(!e.contains("secret"), "{e}");
        let e = parse_hierarchy_document(br#"{"builder": {"type": "interval"}}"#).unwrap_err();
        assert!(e.contains("`width`"), "{e}");
        let e = parse_hierarchy_document(br#"{"builder": {"type": "mask", "secret-field": 1}}"#)
            .unwrap_err();
        assert!(e.contains("has no field"), "{e}");
        let e = parse_hierarchy_document(br#"{"levels": [["secret-value"], 5]}"#).unwrap_err();
        assert!(!e.contains("secret"), "{e}");
        let e = parse_builder(&serde_json::json!({"type": "interval", "width": -1})).unwrap_err();
        assert!(e.contains("positive"), "{e}");
        let e = parse_builder(&serde_json::json!({"type": "order", "order": "secret-value"}))
            .unwrap_err();
        assert!(!e.contains("secret"), "{e}");
    }
}
