//! Generalization hierarchies built from a few parameters instead of written by hand, as ARX's hierarchy
//! builders, ARXaaS and Amnesia offer them: numeric intervals ([`interval`]), groups of an explicit order
//! ([`order`]), character masking of codes ([`mask`]), date granularities ([`date`]) and explicit
//! groupings ([`categories`]). A spec gives one as `"hierarchy": {"builder": {"type": ..., ...}}`.
//!
//! A builder turns the distinct values of the column it generalizes into hierarchy rows (the value,
//! then one label per level, then `*`). Every value must find its place: values a builder cannot place
//! are counted and refused with `uncovered_values`, and no value is ever echoed in a message. Missing
//! values (the empty value by default, or the builder's `missing` list) get their own leaf, generalized
//! to `*` from the first level on.

pub mod categories;
pub mod date;
pub mod interval;
pub mod mask;
pub mod order;

use serde::Deserialize;

use crate::error_code::ErrorCode;

/// The label of the top level of every built hierarchy.
pub const TOP: &str = "*";

/// A hierarchy builder, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BuilderSpec {
    /// Numeric intervals.
    Interval(interval::IntervalBuilder),
    /// Groups of consecutive values of an explicit order.
    Order(order::OrderBuilder),
    /// Characters masked from one end.
    Mask(mask::MaskBuilder),
    /// Date and time granularities.
    Date(date::DateBuilder),
    /// Explicit groups per level.
    Categories(categories::CategoriesBuilder),
}

/// Why a builder could not build.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The builder's parameters are invalid (`invalid_hierarchy`).
    #[error("{0}")]
    Invalid(String),
    /// Some values of the column cannot be placed (`uncovered_values`); `why` says what they lack.
    #[error("{count} distinct value(s) of the column {why}")]
    Uncovered {
        /// Distinct values that cannot be placed.
        count: usize,
        /// What the values lack, e.g. "are not numbers".
        why: &'static str,
    },
}

impl BuildError {
    /// The stable code of the error.
    pub fn code(&self) -> ErrorCode {
        match self {
            BuildError::Invalid(_) => ErrorCode::InvalidHierarchy,
            BuildError::Uncovered { .. } => ErrorCode::UncoveredValues,
        }
    }
}

/// The most levels a built hierarchy may have below its top.
pub const MAX_LEVELS: usize = 64;

impl BuilderSpec {
    /// The hierarchy rows for the distinct `values` of a column: one row per value, the value first and
    /// `*` last, all of one height.
    pub fn build(&self, values: &[&str]) -> Result<Vec<Vec<String>>, BuildError> {
        let missing = self.missing();
        let (present, absent): (Vec<&str>, Vec<&str>) = values
            .iter()
            .partition(|v| !missing.iter().any(|m| m == *v));
        let mut rows = match self {
            BuilderSpec::Interval(b) => b.rows(&present)?,
            BuilderSpec::Order(b) => b.rows(&present)?,
            BuilderSpec::Mask(b) => b.rows(&present)?,
            BuilderSpec::Date(b) => b.rows(&present)?,
            BuilderSpec::Categories(b) => b.rows(&present)?,
        };
        // every row ends with the top; the height is the builder's, even when no value is present
        for row in &mut rows {
            row.push(TOP.to_string());
        }
        let height = rows.first().map_or(1 + self.levels() + 1, Vec::len);
        rows.extend(absent.iter().map(|&value| {
            let mut row = vec![value.to_string()];
            row.resize(height, TOP.to_string());
            row
        }));
        Ok(rows)
    }

    /// Values that stand for a missing value (`[""]` unless the builder lists its own).
    fn missing(&self) -> Vec<String> {
        let listed = match self {
            BuilderSpec::Interval(b) => &b.missing,
            BuilderSpec::Order(b) => &b.missing,
            BuilderSpec::Mask(b) => &b.missing,
            BuilderSpec::Date(b) => &b.missing,
            BuilderSpec::Categories(b) => &b.missing,
        };
        listed.clone().unwrap_or_else(|| vec![String::new()])
    }

    /// Levels of the hierarchies it builds, the values and the top included; `None` when they depend
    /// on the column (a mask without `levels` masks as many characters as the longest value has).
    pub fn level_count(&self) -> Option<usize> {
        match self {
            BuilderSpec::Mask(b) if b.levels.is_none() => None,
            _ => Some(self.levels() + 2),
        }
    }

    /// Levels between the values and the top.
    fn levels(&self) -> usize {
        match self {
            BuilderSpec::Interval(b) => 1 + b.fanouts.len(),
            BuilderSpec::Order(b) => b.fanouts.len(),
            BuilderSpec::Mask(b) => b.levels.unwrap_or(0) as usize,
            BuilderSpec::Date(b) => b.granularities().map_or(0, |g| g.len()),
            BuilderSpec::Categories(b) => b.levels.len(),
        }
    }
}

/// Checks the fan-outs of grouping builders: each at least 2, and not too many levels.
pub(crate) fn check_fanouts(fanouts: &[u32]) -> Result<(), BuildError> {
    if fanouts.len() + 1 > MAX_LEVELS {
        return Err(BuildError::Invalid(format!(
            "a built hierarchy has at most {MAX_LEVELS} levels"
        )));
    }
    if fanouts.iter().any(|&f| f < 2) {
        return Err(BuildError::Invalid(
            "every fan-out groups at least 2 labels of the level below".into(),
        ));
    }
    Ok(())
}

/// A closed range label, the one syntax of every built range: `[low .. high]` (`[low]` for a single
/// value).
pub(crate) fn range_label(low: &str, high: &str) -> String {
    if low == high {
        format!("[{low}]")
    } else {
        format!("[{low} .. {high}]")
    }
}

#[cfg(test)]
mod reference_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Hierarchy;

    pub(crate) fn spec(json: &str) -> BuilderSpec {
        serde_json::from_str(json).expect("a valid builder")
    }

    #[test]
    fn missing_values_get_their_own_leaf_under_the_top() {
        let builder = spec(r#"{"type": "interval", "width": 10, "fanouts": [2]}"#);
        let rows = builder.build(&["3", "", "17", "25"]).unwrap();
        assert_eq!(
            rows,
            [
                vec!["3", "[0 .. 9]", "[0 .. 19]", "*"],
                vec!["17", "[10 .. 19]", "[0 .. 19]", "*"],
                vec!["25", "[20 .. 29]", "[20 .. 39]", "*"],
                vec!["", "*", "*", "*"],
            ]
        );
        Hierarchy::from_rows(&rows).expect("a valid hierarchy");
        // a listed marker instead of the empty value
        let builder = spec(r#"{"type": "mask", "missing": ["?"]}"#);
        let rows = builder.build(&["12", "?"]).unwrap();
        assert_eq!(rows, [vec!["12", "1*", "*"], vec!["?", "*", "*"]]);
        // only missing values
        let rows = spec(r#"{"type": "interval", "width": 5}"#)
            .build(&[""])
            .unwrap();
        assert_eq!(rows, [vec!["", "*", "*"]]);
    }

    #[test]
    fn errors_carry_codes_and_no_values() {
        let e = spec(r#"{"type": "interval", "width": 5}"#)
            .build(&["1", "secret-a", "secret-b"])
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::UncoveredValues);
        assert_eq!(
            e.to_string(),
            "2 distinct value(s) of the column are not numbers"
        );
        let e = spec(r#"{"type": "interval", "width": 0}"#)
            .build(&["1"])
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidHierarchy);
        assert!(serde_json::from_str::<BuilderSpec>(r#"{"type": "nope"}"#).is_err());
        assert!(serde_json::from_str::<BuilderSpec>(r#"{"type": "mask", "colour": 1}"#).is_err());
    }
}
