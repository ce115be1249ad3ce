//! Groups of an explicit order (ARX's order-based hierarchy builder): the values are listed in their
//! order, level 1 groups `fanouts[0]` consecutive values, and each further level groups `fanouts[i]`
//! consecutive groups of the level below. A group is labelled by its first and last value, `[a .. b]`.

use std::collections::HashMap;

use serde::Deserialize;

use super::{check_fanouts, range_label, BuildError};

/// The `order` builder's parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderBuilder {
    /// Every value, in order (distinct).
    pub order: Vec<String>,
    /// How many values (level 1) or groups (further levels) each group holds, each at least 2.
    #[serde(default)]
    pub fanouts: Vec<u32>,
    /// Values that stand for a missing value (`[""]` when absent).
    pub missing: Option<Vec<String>>,
}

impl OrderBuilder {
    /// Rows without the top.
    pub(super) fn rows(&self, values: &[&str]) -> Result<Vec<Vec<String>>, BuildError> {
        check_fanouts(&self.fanouts)?;
        let mut place: HashMap<&str, usize> = HashMap::with_capacity(self.order.len());
        for (i, value) in self.order.iter().enumerate() {
            if place.insert(value, i).is_some() {
                return Err(BuildError::Invalid("the order lists a value twice".into()));
            }
        }
        let unplaced = values.iter().filter(|v| !place.contains_key(*v)).count();
        if unplaced > 0 {
            return Err(BuildError::Uncovered {
                count: unplaced,
                why: "are not in the order",
            });
        }
        Ok(values
            .iter()
            .map(|&value| {
                let at = place[value];
                let mut row = vec![value.to_string()];
                let mut size = 1usize;
                for &fanout in &self.fanouts {
                    size = size.saturating_mul(fanout as usize);
                    let first = at / size * size;
                    let last = (first + size - 1).min(self.order.len() - 1);
                    row.push(range_label(&self.order[first], &self.order[last]));
                }
                row
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::super::ErrorCode;

    #[test]
    fn consecutive_values_are_grouped_by_fanouts() {
        let builder = spec(
            r#"{"type": "order", "order": ["none", "primary", "secondary", "bachelor", "master"],
                "fanouts": [2, 2]}"#,
        );
        let rows = builder.build(&["master", "none", "bachelor"]).unwrap();
        assert_eq!(rows[0], ["master", "[master]", "[master]", "*"]);
        assert_eq!(
            rows[1],
            ["none", "[none .. primary]", "[none .. bachelor]", "*"]
        );
        assert_eq!(
            rows[2],
            [
                "bachelor",
                "[secondary .. bachelor]",
                "[none .. bachelor]",
                "*"
            ]
        );
        let e = builder.build(&["phd"]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UncoveredValues);
        let twice = spec(r#"{"type": "order", "order": ["a", "a"]}"#);
        assert_eq!(
            twice.build(&["a"]).unwrap_err().code(),
            ErrorCode::InvalidHierarchy
        );
    }
}
