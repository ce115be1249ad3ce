//! The first check of every spec that declares column roles (jobs and assessments alike): every named
//! column exists, every column of the table has a role, and some column is a quasi-identifier. One
//! implementation, so that a job and an assessment of the same table and roles can never disagree.

use std::collections::BTreeMap;

use crate::core::data::Table;
use crate::domain::spec::{pointer_segment, AttributeSpec, Problems, Role, SpecError};
use crate::error_code::ErrorCode;

/// The table's columns that `attributes` declares, in table order, with their declarations. Problems go
/// to `problems`: `unknown_column` for each named column the table lacks (with a hint when the header
/// was read as one column), `undeclared_column` for each column without a role, and
/// `no_quasi_identifier` when no declaration is a quasi-identifier (a misspelt one is reported once, as
/// unknown).
pub fn declared_columns<'s>(
    table: &Table,
    attributes: &'s BTreeMap<String, AttributeSpec>,
    problems: &mut Problems,
) -> Vec<(usize, &'s AttributeSpec)> {
    for name in attributes.keys() {
        if table.column_index(name).is_none() {
            let hint = match table.columns() {
                [only] if only.name.contains([';', ',', '\t', '|']) => {
                    " (the header was read as a single column: is csv.delimiter right?)"
                }
                _ => "",
            };
            problems.push(SpecError::new(
                format!("/attributes/{}", pointer_segment(name)),
                ErrorCode::UnknownColumn,
                format!("the dataset has no column '{name}'{hint}"),
            ));
        }
    }
    let mut declared = Vec::with_capacity(table.columns().len());
    for (index, column) in table.columns().iter().enumerate() {
        match attributes.get(&column.name) {
            Some(attribute) => declared.push((index, attribute)),
            None => problems.push(SpecError::new(
                "/attributes",
                ErrorCode::UndeclaredColumn,
                format!(
                    "column '{}' has no role; declare it as quasi_identifier, sensitive, insensitive or identifying",
                    column.name
                ),
            )),
        }
    }
    if !attributes.values().any(|a| a.role == Role::QuasiIdentifier) {
        problems.push(SpecError::new(
            "/attributes",
            ErrorCode::NoQuasiIdentifier,
            "declare at least one column as quasi_identifier",
        ));
    }
    declared
}
