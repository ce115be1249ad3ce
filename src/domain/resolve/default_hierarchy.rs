//! The hierarchy a quasi-identifier gets from its `data_type` when the spec gives none and the algorithm
//! generalizes along hierarchies (the full-domain searches, the clustering algorithms, hybrid; Mondrian
//! ranges ordered values itself): ordered ranges of a fixed grid, written `[low .. high]` like every range.
//! - `numeric`: [`IntervalBuilder::automatic`], about 16 intervals of a round width, joined in pairs.
//! - `date` (ISO `YYYY-MM-DD`): month, year, decade (the `date` builder's defaults).
//! - `datetime` (ISO `YYYY-MM-DDTHH:MM[:SS]`, or a space): hour, day, month, year, decade.
//!
//! Values are read as strictly as Mondrian reads them, so a column fits its type for every algorithm or
//! for none (`not_numeric`, `not_date`).

use crate::core::calendar::civil_from_days;
use crate::core::data::{Column, GeneralizationMap, Hierarchy};
use crate::domain::builders::date::DateBuilder;
use crate::domain::builders::interval::IntervalBuilder;
use crate::domain::builders::{BuilderSpec, TOP};
use crate::domain::dates::{date_seconds, datetime_seconds};
use crate::domain::spec::{DataType, SpecError};
use crate::error_code::ErrorCode;

/// The default hierarchy of `column` for `data_type`, or `None` when the type has none (categorical,
/// ordinal: they need a hierarchy given).
pub fn default_hierarchy(
    column: &Column,
    data_type: DataType,
    pointer: &str,
) -> Option<Result<GeneralizationMap, SpecError>> {
    let rows = match data_type {
        DataType::Numeric => numeric_rows(column, pointer),
        DataType::Date => date_rows(column, pointer),
        DataType::Datetime => datetime_rows(column, pointer),
        DataType::Categorical | DataType::Ordinal => return None,
    };
    Some(rows.and_then(|rows| {
        let hierarchy = Hierarchy::from_rows(&rows)
            .map_err(|e| SpecError::new(pointer, ErrorCode::InvalidHierarchy, e.to_string()))?;
        GeneralizationMap::bind(hierarchy, column)
            .map_err(|e| SpecError::new(pointer, ErrorCode::UncoveredValues, e.to_string()))
    }))
}

/// The error of values that do not fit the type.
fn misfit(column: &Column, pointer: &str, code: ErrorCode, what: &str, bad: usize) -> SpecError {
    SpecError::new(
        pointer,
        code,
        format!(
            "column '{}' holds {what} but {bad} of its {} distinct values are not",
            column.name,
            column.dictionary.len()
        ),
    )
}

/// Built rows, errors at `pointer`.
fn built(
    builder: &BuilderSpec,
    values: &[&str],
    pointer: &str,
) -> Result<Vec<Vec<String>>, SpecError> {
    builder
        .build(values)
        .map_err(|e| SpecError::new(pointer, e.code(), e.to_string()))
}

fn numeric_rows(column: &Column, pointer: &str) -> Result<Vec<Vec<String>>, SpecError> {
    let values: Vec<&str> = column.dictionary.values().collect();
    let numbers: Vec<f64> = values
        .iter()
        .filter_map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    if numbers.len() < values.len() {
        let bad = values.len() - numbers.len();
        return Err(misfit(
            column,
            pointer,
            ErrorCode::NotNumeric,
            "numbers",
            bad,
        ));
    }
    let integer = values.iter().all(|v| v.trim().parse::<i64>().is_ok());
    match IntervalBuilder::automatic(&numbers, integer) {
        Some(builder) => built(&BuilderSpec::Interval(builder), &values, pointer),
        // one number: the value or `*`
        None => Ok(values
            .iter()
            .map(|v| vec![v.to_string(), TOP.to_string()])
            .collect()),
    }
}

fn date_rows(column: &Column, pointer: &str) -> Result<Vec<Vec<String>>, SpecError> {
    let values: Vec<&str> = column.dictionary.values().collect();
    let bad = values.iter().filter(|v| date_seconds(v).is_none()).count();
    if bad > 0 {
        return Err(misfit(
            column,
            pointer,
            ErrorCode::NotDate,
            "ISO dates (YYYY-MM-DD)",
            bad,
        ));
    }
    let builder = BuilderSpec::Date(DateBuilder {
        format: None,
        levels: None,
        missing: Some(Vec::new()),
    });
    built(&builder, &values, pointer)
}

fn datetime_rows(column: &Column, pointer: &str) -> Result<Vec<Vec<String>>, SpecError> {
    let mut rows = Vec::with_capacity(column.dictionary.len());
    let mut bad = 0;
    for value in column.dictionary.values() {
        let Some(seconds) = datetime_seconds(value) else {
            bad += 1;
            continue;
        };
        let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
        let hour = seconds.rem_euclid(86_400) / 3600;
        let decade = year - year.rem_euclid(10);
        rows.push(vec![
            value.to_string(),
            format!("{year:04}-{month:02}-{day:02} {hour:02}h"),
            format!("{year:04}-{month:02}-{day:02}"),
            format!("{year:04}-{month:02}"),
            format!("{year:04}"),
            format!("[{decade:04} .. {:04}]", decade + 9),
            TOP.to_string(),
        ]);
    }
    if bad > 0 {
        return Err(misfit(
            column,
            pointer,
            ErrorCode::NotDate,
            "ISO date-times (YYYY-MM-DDTHH:MM[:SS])",
            bad,
        ));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Table;

    fn labels(map: &GeneralizationMap, code: u32) -> Vec<String> {
        (0..=map.max_level())
            .map(|level| map.label(level, code).to_string())
            .collect()
    }

    #[test]
    fn each_ordered_type_gets_ranges() {
        let table = Table::from_rows(
            &["age", "born", "seen", "sex"],
            &[
                vec!["17", "1933-10-15", "2026-03-01T13:05", "F"],
                vec!["90", "1945-04-05", "2026-03-02 00:00:59", "M"],
            ],
        );
        let age = default_hierarchy(table.column(0), DataType::Numeric, "/a")
            .unwrap()
            .unwrap();
        assert_eq!(
            labels(&age, 0),
            [
                "17",
                "[15 .. 19]",
                "[15 .. 24]",
                "[15 .. 34]",
                "[15 .. 54]",
                "*"
            ]
        );
        let born = default_hierarchy(table.column(1), DataType::Date, "/b")
            .unwrap()
            .unwrap();
        assert_eq!(
            labels(&born, 0),
            ["1933-10-15", "1933-10", "1933", "[1930 .. 1939]", "*"]
        );
        let seen = default_hierarchy(table.column(2), DataType::Datetime, "/c")
            .unwrap()
            .unwrap();
        assert_eq!(
            labels(&seen, 0),
            [
                "2026-03-01T13:05",
                "2026-03-01 13h",
                "2026-03-01",
                "2026-03",
                "2026",
                "[2020 .. 2029]",
                "*"
            ]
        );
        assert!(default_hierarchy(table.column(3), DataType::Categorical, "/d").is_none());
        let e = default_hierarchy(table.column(3), DataType::Numeric, "/d")
            .unwrap()
            .unwrap_err();
        assert_eq!((e.code, e.pointer.as_str()), (ErrorCode::NotNumeric, "/d"));
        let e = default_hierarchy(table.column(0), DataType::Datetime, "/a")
            .unwrap()
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NotDate);
        assert!(!e.message.contains("17"), "{}", e.message);
    }
}
