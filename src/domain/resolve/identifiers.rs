//! The spec's identifier operators (`"operator"` on an identifying column) checked against the table, and
//! applied when the job runs: the pseudonym key is only needed then, so a spec can be validated (by the
//! service before it queues a job, by `assess`) without it.

use serde::Serialize;

use crate::core::data::Table;
use crate::core::identifiers::{
    IdentifierOperator, MaskEnd, OperatedTexts, PseudonymKey, MAX_MASK_KEEP,
};
use crate::domain::spec::{
    pointer_segment, AttributeSpec, MaskFrom, OperatorSpec, Problems, Role, SpecError,
};
use crate::error_code::ErrorCode;

/// Characters a mask keeps when the spec does not say.
pub const DEFAULT_MASK_KEEP: usize = 4;

/// Longest replacement text, in bytes.
pub const MAX_REPLACEMENT_BYTES: usize = 1024;

/// An operator as the spec chose it, before any key is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorChoice {
    /// Left out of the output.
    Drop,
    /// Keyed pseudonyms.
    Pseudonym,
    /// A mask.
    Mask {
        /// Characters kept.
        keep: usize,
        /// Where.
        end: MaskEnd,
        /// Fill character.
        fill: char,
    },
    /// A constant.
    Replace(String),
}

impl OperatorChoice {
    /// The operator's name as the spec and the report write it.
    pub fn name(&self) -> &'static str {
        match self {
            OperatorChoice::Drop => "drop",
            OperatorChoice::Pseudonym => "pseudonym",
            OperatorChoice::Mask { .. } => "mask",
            OperatorChoice::Replace(_) => "replace",
        }
    }
}

/// One identifying column and its operator.
#[derive(Debug, Clone)]
pub struct IdentifierColumn {
    /// Table index.
    pub column: usize,
    /// The operator.
    pub choice: OperatorChoice,
}

/// Records in `problems` every identifying column of `identifiers` published through an operator,
/// with `why` a job of this kind can only drop them.
pub fn refuse_operators(
    table: &Table,
    identifiers: &[IdentifierColumn],
    why: &'static str,
    problems: &mut Problems,
) {
    for identifier in identifiers {
        if identifier.choice != OperatorChoice::Drop {
            problems.push(SpecError::new(
                format!(
                    "/attributes/{}/operator",
                    pointer_segment(&table.column(identifier.column).name)
                ),
                ErrorCode::UnsupportedOption,
                why,
            ));
        }
    }
}

/// What the report says about one identifying column: its operator and, for pseudonyms, the key's
/// public fingerprint (never the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentifierReport {
    /// The column.
    pub column: String,
    /// `drop`, `pseudonym`, `mask` or `replace`.
    pub operator: &'static str,
    /// For a pseudonym: the fingerprint of the key (releases with the same fingerprint link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_fingerprint: Option<String>,
}

/// Resolves the `operator` of a column declared with `role` at `pointer` (`None` when it has none). An
/// operator on any other role than `identifying` is an error.
pub fn resolve_operator(
    attribute: &AttributeSpec,
    pointer: &str,
) -> Result<Option<OperatorChoice>, SpecError> {
    let Some(spec) = &attribute.operator else {
        return Ok(None);
    };
    let at = format!("{pointer}/operator");
    if attribute.role != Role::Identifying {
        return Err(SpecError::new(
            at,
            ErrorCode::InvalidParameter,
            "an operator applies to identifying columns only (pseudonym, mask, replace or drop)",
        ));
    }
    Ok(Some(match spec {
        OperatorSpec::Drop {} => OperatorChoice::Drop,
        OperatorSpec::Pseudonym {} => OperatorChoice::Pseudonym,
        OperatorSpec::Mask { keep, from, fill } => {
            let keep = keep.map_or(DEFAULT_MASK_KEEP as u64, |k| k);
            if keep > MAX_MASK_KEEP as u64 {
                return Err(SpecError::new(
                    format!("{at}/keep"),
                    ErrorCode::InvalidParameter,
                    format!("a mask keeps at most {MAX_MASK_KEEP} characters"),
                ));
            }
            let fill = match fill.as_deref() {
                None => '*',
                Some(text) => {
                    let mut chars = text.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) if !c.is_control() => c,
                        _ => {
                            return Err(SpecError::new(
                                format!("{at}/fill"),
                                ErrorCode::InvalidParameter,
                                "the fill is one character that is not a control character",
                            ))
                        }
                    }
                }
            };
            OperatorChoice::Mask {
                keep: keep as usize,
                end: match from.unwrap_or(MaskFrom::End) {
                    MaskFrom::Start => MaskEnd::Start,
                    MaskFrom::End => MaskEnd::End,
                },
                fill,
            }
        }
        OperatorSpec::Replace { value } => {
            if value.len() > MAX_REPLACEMENT_BYTES || value.chars().any(char::is_control) {
                return Err(SpecError::new(
                    format!("{at}/value"),
                    ErrorCode::InvalidParameter,
                    format!(
                        "the replacement is at most {MAX_REPLACEMENT_BYTES} bytes without control \
                         characters"
                    ),
                ));
            }
            OperatorChoice::Replace(value.clone())
        }
    }))
}

/// `pseudonym_key_missing` for the pseudonym operator of column `column`.
pub fn missing_key(column: &str) -> SpecError {
    SpecError::new(
        format!("/attributes/{}/operator", pointer_segment(column)),
        ErrorCode::PseudonymKeyMissing,
        "a pseudonym needs a key: give the CLI --pseudonym-key-file FILE or set \
         ANONYMIZER_PSEUDONYM_KEY (at least 32 bytes of secret)",
    )
}

/// The texts of the identifying columns a job publishes, by table index, and the report's section.
#[derive(Debug, Clone, Default)]
pub struct Operated {
    /// Published identifying columns and their texts, in table order.
    pub texts: Vec<(usize, OperatedTexts)>,
    /// Every identifying column's operator.
    pub report: Vec<IdentifierReport>,
}

/// Applies the operators of `identifiers` to `table`. A pseudonym needs `key`; without one the error is
/// `pseudonym_key_missing`.
pub fn operate(
    table: &Table,
    identifiers: &[IdentifierColumn],
    key: Option<&PseudonymKey>,
) -> Result<Operated, SpecError> {
    let mut operated = Operated::default();
    for identifier in identifiers {
        let column = table.column(identifier.column);
        let operator = match &identifier.choice {
            OperatorChoice::Drop => None,
            OperatorChoice::Pseudonym => match key {
                Some(key) => Some(IdentifierOperator::Pseudonym(key.clone())),
                None => return Err(missing_key(&column.name)),
            },
            OperatorChoice::Mask { keep, end, fill } => Some(IdentifierOperator::Mask {
                keep: *keep,
                end: *end,
                fill: *fill,
            }),
            OperatorChoice::Replace(text) => Some(IdentifierOperator::Replace(text.clone())),
        };
        operated.report.push(IdentifierReport {
            column: column.name.clone(),
            operator: identifier.choice.name(),
            key_fingerprint: match (&identifier.choice, key) {
                (OperatorChoice::Pseudonym, Some(key)) => Some(key.fingerprint()),
                _ => None,
            },
        });
        if let Some(operator) = operator {
            operated.texts.push((
                identifier.column,
                OperatedTexts::new(&column.dictionary, &operator),
            ));
        }
    }
    Ok(operated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attribute(role: Role, operator: serde_json::Value) -> AttributeSpec {
        let mut spec = serde_json::json!({"role": match role {
            Role::Identifying => "identifying",
            Role::Insensitive => "insensitive",
            _ => "sensitive",
        }});
        spec["operator"] = operator;
        serde_json::from_value(spec).unwrap()
    }

    fn resolved(operator: serde_json::Value) -> Result<Option<OperatorChoice>, SpecError> {
        resolve_operator(&attribute(Role::Identifying, operator), "/attributes/mrn")
    }

    #[test]
    fn operators_resolve_with_their_defaults() {
        assert_eq!(
            resolved(serde_json::json!({"type": "pseudonym"})).unwrap(),
            Some(OperatorChoice::Pseudonym)
        );
        assert_eq!(
            resolved(serde_json::json!({"type": "mask"})).unwrap(),
            Some(OperatorChoice::Mask {
                keep: 4,
                end: MaskEnd::End,
                fill: '*'
            })
        );
        assert_eq!(
            resolved(serde_json::json!({"type": "mask", "keep": 2, "from": "start", "fill": "#"}))
                .unwrap(),
            Some(OperatorChoice::Mask {
                keep: 2,
                end: MaskEnd::Start,
                fill: '#'
            })
        );
        assert_eq!(
            resolved(serde_json::json!({"type": "replace", "value": "REDACTED"})).unwrap(),
            Some(OperatorChoice::Replace("REDACTED".into()))
        );
        assert_eq!(
            resolved(serde_json::json!({"type": "drop"})).unwrap(),
            Some(OperatorChoice::Drop)
        );
    }

    #[test]
    fn bad_operators_name_their_field() {
        let pointer = |operator| resolved(operator).unwrap_err().pointer;
        assert_eq!(
            pointer(serde_json::json!({"type": "mask", "keep": 65})),
            "/attributes/mrn/operator/keep"
        );
        assert_eq!(
            pointer(serde_json::json!({"type": "mask", "fill": "ab"})),
            "/attributes/mrn/operator/fill"
        );
        assert_eq!(
            pointer(serde_json::json!({"type": "replace", "value": "a\nb"})),
            "/attributes/mrn/operator/value"
        );
        let other = resolve_operator(
            &attribute(Role::Insensitive, serde_json::json!({"type": "pseudonym"})),
            "/attributes/x",
        )
        .unwrap_err();
        assert_eq!(other.pointer, "/attributes/x/operator");
        assert!(serde_json::from_value::<AttributeSpec>(serde_json::json!({
            "role": "identifying", "operator": {"type": "pseudonym", "length": 8}
        }))
        .is_err());
    }

    #[test]
    fn operating_without_a_key_names_the_column_and_never_the_values() {
        let table = Table::from_rows(&["mrn"], &[vec!["SECRET-1"], vec!["SECRET-2"]]);
        let pseudonym = [IdentifierColumn {
            column: 0,
            choice: OperatorChoice::Pseudonym,
        }];
        let error = operate(&table, &pseudonym, None).unwrap_err();
        assert_eq!(error.code, ErrorCode::PseudonymKeyMissing);
        assert!(!error.to_string().contains("SECRET"));
        let key = PseudonymKey::new(&[3; 32]).unwrap();
        let operated = operate(&table, &pseudonym, Some(&key)).unwrap();
        assert_eq!(operated.texts[0].1.text(1), key.pseudonym("SECRET-2"));
        assert_eq!(
            operated.report,
            vec![IdentifierReport {
                column: "mrn".into(),
                operator: "pseudonym",
                key_fingerprint: Some(key.fingerprint()),
            }]
        );
        let dropped = operate(
            &table,
            &[IdentifierColumn {
                column: 0,
                choice: OperatorChoice::Drop,
            }],
            None,
        )
        .unwrap();
        assert!(dropped.texts.is_empty());
        assert_eq!(dropped.report[0].operator, "drop");
    }
}
