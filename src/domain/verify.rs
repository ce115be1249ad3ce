//! Verifies an anonymized table before it is published, independently of the engine: the rendered
//! quasi-identifier texts of every output record are counted with a hash map (no dictionaries, no
//! hierarchies, no lattice), and every class must meet the requested privacy models. Records whose
//! quasi-identifiers are all `*` reveal nothing and are exempt (they are the suppressed records, or the
//! single class of the most general transformation).

use std::collections::HashMap;

use crate::core::render::{Rendering, SUPPRESSED};

/// The output breaks a privacy model: a bug in the engine, never expected. No values are included.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the output failed verification: a published class has {size} records, fewer than the {needed} required")]
pub struct VerificationError {
    /// Records in the smallest offending class.
    pub size: u64,
    /// Records required.
    pub needed: u64,
}

/// Checks that every published class has at least `min_class_size` records.
pub fn verify_min_class_size(
    rendering: &Rendering<'_>,
    min_class_size: u64,
) -> Result<(), VerificationError> {
    let width = rendering.header().len();
    let quasi: Vec<usize> = (0..width)
        .filter(|&c| rendering.is_generalized(c))
        .collect();
    let mut classes: HashMap<Vec<&str>, u64> = HashMap::new();
    for row in rendering.rows() {
        let key: Vec<&str> = quasi.iter().map(|&c| rendering.cell(row, c)).collect();
        if key.iter().all(|&v| v == SUPPRESSED) {
            continue;
        }
        *classes.entry(key).or_insert(0) += 1;
    }
    match classes
        .values()
        .copied()
        .filter(|&n| n < min_class_size)
        .min()
    {
        Some(size) => Err(VerificationError {
            size,
            needed: min_class_size,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::render::OutputColumn;

    #[test]
    fn counts_rendered_classes_and_exempts_suppressed_records() {
        let table = Table::from_rows(&["zip"], &[vec!["1"], vec!["1"], vec!["2"], vec!["3"]]);
        let rows: Vec<Vec<&str>> = vec![
            vec!["1", "1x", "*"],
            vec!["2", "2x", "*"],
            vec!["3", "3x", "*"],
        ];
        let map =
            GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(0)).unwrap();
        let column = |level| OutputColumn::Generalized {
            column: table.column(0),
            hierarchy: &map,
            level,
        };
        let none = [false; 4];
        // level 0: classes of sizes 2, 1, 1
        let r = Rendering::new(vec![column(0)], &none, false);
        assert_eq!(
            verify_min_class_size(&r, 2),
            Err(VerificationError { size: 1, needed: 2 })
        );
        assert!(verify_min_class_size(&r, 1).is_ok());
        // suppressing the two singletons leaves one class of 2 plus exempt `*` records
        let suppressed = [false, false, true, true];
        let r = Rendering::new(vec![column(0)], &suppressed, false);
        assert!(verify_min_class_size(&r, 2).is_ok());
        // the top level is exempt as a whole
        let r = Rendering::new(vec![column(2)], &none, false);
        assert!(verify_min_class_size(&r, 5).is_ok());
    }
}
