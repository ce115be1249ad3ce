//! Explicit groups per level (the grouping an ARX hierarchy file spells out): level 1 maps each value to
//! its group, and each further level maps every group of the level below to its parent.

use std::collections::HashMap;

use serde::Deserialize;

use super::{BuildError, MAX_LEVELS};

/// The `categories` builder's parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoriesBuilder {
    /// Per level, the parent of every label of the level below (the values for level 1).
    pub levels: Vec<HashMap<String, String>>,
    /// Values that stand for a missing value (`[""]` when absent).
    pub missing: Option<Vec<String>>,
}

impl CategoriesBuilder {
    /// Rows without the top.
    pub(super) fn rows(&self, values: &[&str]) -> Result<Vec<Vec<String>>, BuildError> {
        if self.levels.len() + 1 > MAX_LEVELS {
            return Err(BuildError::Invalid(format!(
                "a built hierarchy has at most {MAX_LEVELS} levels"
            )));
        }
        if let Some(first) = self.levels.first() {
            let unplaced = values.iter().filter(|v| !first.contains_key(**v)).count();
            if unplaced > 0 {
                return Err(BuildError::Uncovered {
                    count: unplaced,
                    why: "have no group at level 1",
                });
            }
        }
        let mut rows = Vec::with_capacity(values.len());
        for &value in values {
            let mut row = vec![value.to_string()];
            for (level, parents) in self.levels.iter().enumerate() {
                let below = row.last().map_or("", String::as_str);
                let Some(parent) = parents.get(below) else {
                    // a group of the spec's own level, not a value of the data
                    return Err(BuildError::Invalid(format!(
                        "level {} gives no parent to a group of level {level}",
                        level + 1
                    )));
                };
                row.push(parent.clone());
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::super::ErrorCode;

    #[test]
    fn maps_values_then_groups() {
        let builder = spec(
            r#"{"type": "categories", "levels": [
                {"Bachelors": "Undergraduate", "Masters": "Graduate", "9th": "High School"},
                {"Undergraduate": "Higher education", "Graduate": "Higher education",
                 "High School": "Secondary education"}]}"#,
        );
        let rows = builder.build(&["Masters", "9th"]).unwrap();
        assert_eq!(rows[0], ["Masters", "Graduate", "Higher education", "*"]);
        assert_eq!(rows[1], ["9th", "High School", "Secondary education", "*"]);
        assert_eq!(
            builder.build(&["Doctorate"]).unwrap_err().code(),
            ErrorCode::UncoveredValues
        );
        let gap = spec(r#"{"type": "categories", "levels": [{"a": "g"}, {"h": "top"}]}"#);
        assert_eq!(
            gap.build(&["a"]).unwrap_err().code(),
            ErrorCode::InvalidHierarchy
        );
    }
}
