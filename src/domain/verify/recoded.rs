//! Checks of a locally recoded table before it is published, beside the class checks every output gets
//! ([`super::verify`]): every input record is written exactly once, and every published
//! quasi-identifier cell covers the record's original value, except for the relocated cells an algorithm
//! declares (hybrid k-anonymization). Coverage is decided from texts alone: a hierarchy label must be one
//! of the value's ancestors in the spec's hierarchy; a range `[low .. high]` must hold the value by number
//! (numeric attributes) or by position in the order (ordinal, date and date-time attributes).

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::core::render::{Rendering, SUPPRESSED};

use super::error::VerificationError;

/// How the cells of one published quasi-identifier column are checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Coverage {
    /// By hierarchy: every original value's ancestor labels (the value itself included).
    Labels(HashMap<String, HashSet<String>>),
    /// By number.
    Numeric,
    /// By position in the order of every value.
    Ordinal(HashMap<String, usize>),
}

/// A published quasi-identifier column and how its cells are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnCoverage {
    /// Output column index.
    pub column: usize,
    /// The check.
    pub coverage: Coverage,
}

/// Checks that the output lists every record once (`records` of them, or those not suppressed when
/// suppressed records are removed: `expected`) and that at most `allowed_uncovered` cells do not cover
/// their record's original value.
pub fn verify_recoded(
    rendering: &Rendering<'_>,
    columns: &[ColumnCoverage],
    expected: usize,
    allowed_uncovered: u64,
) -> Result<(), VerificationError> {
    let rows: Vec<usize> = rendering.rows().collect();
    let mut seen: Vec<bool> = vec![false; rows.iter().max().map_or(0, |&r| r + 1)];
    for (listed, &row) in rows.iter().enumerate() {
        if std::mem::replace(&mut seen[row], true) {
            return Err(VerificationError::RecordsNotPreserved {
                expected: expected as u64,
                found: listed as u64 + 1,
            });
        }
    }
    let listed = rows.len();
    // blocks of records on the caller's pool; within a block, the same published text and original
    // value recur in many records, so each pair is checked once per column (keyed by where the text
    // lives, its length and the value's code)
    let uncovered: u64 = rows
        .par_chunks(COVERAGE_BLOCK)
        .map(|block| {
            let mut uncovered = 0u64;
            for check in columns {
                let source = rendering.source(check.column);
                let mut memo: FxHashMap<(usize, usize, u32), bool> = FxHashMap::default();
                for &row in block {
                    let published = rendering.cell(row, check.column);
                    let code = source.codes[row];
                    let key = (published.as_ptr() as usize, published.len(), code);
                    let covered = *memo.entry(key).or_insert_with(|| {
                        covers(&check.coverage, published, source.dictionary.value(code))
                    });
                    uncovered += u64::from(!covered);
                }
            }
            uncovered
        })
        .sum();
    if listed != expected {
        return Err(VerificationError::RecordsNotPreserved {
            expected: expected as u64,
            found: listed as u64,
        });
    }
    if uncovered > allowed_uncovered {
        return Err(VerificationError::CellsNotCovering {
            cells: uncovered,
            allowed: allowed_uncovered,
        });
    }
    Ok(())
}

/// Records whose cells are checked together on one thread.
const COVERAGE_BLOCK: usize = 1 << 16;

/// Whether the published text covers the original value.
fn covers(coverage: &Coverage, published: &str, original: &str) -> bool {
    if published == original || published == SUPPRESSED {
        return true;
    }
    match coverage {
        Coverage::Labels(ancestors) => ancestors
            .get(original)
            .is_some_and(|labels| labels.contains(published)),
        Coverage::Numeric => {
            let Ok(value) = original.trim().parse::<f64>() else {
                return false;
            };
            range_splits(published).any(|(low, high)| {
                match (low.trim().parse::<f64>(), high.trim().parse::<f64>()) {
                    (Ok(low), Ok(high)) => low <= value && value <= high,
                    _ => false,
                }
            })
        }
        Coverage::Ordinal(position) => {
            let Some(&value) = position.get(original) else {
                return false;
            };
            range_splits(published).any(|(low, high)| {
                match (position.get(low), position.get(high)) {
                    (Some(&low), Some(&high)) => low <= value && value <= high,
                    _ => false,
                }
            })
        }
    }
}

/// Every way to read `[low .. high]` (ordinal values may contain ` .. ` themselves).
fn range_splits(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or("");
    inner
        .match_indices(" .. ")
        .map(move |(i, _)| (&inner[..i], &inner[i + 4..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Table;
    use crate::core::render::{CellTexts, OutputColumn};

    /// Ages 25, 25, 31, 31, 40 in groups 0, 0, 1, 1, 1 publishing `[20 .. 29]` and `[30 .. 39]`: the last
    /// record's cell does not cover 40, and each repeated (text, value) pair counts every time.
    #[test]
    fn counts_every_uncovered_cell_and_every_listed_record() {
        let table = Table::from_rows(
            &["age"],
            &[vec!["25"], vec!["25"], vec!["31"], vec!["31"], vec!["40"]],
        );
        let texts =
            CellTexts::from_parts(vec!["[20 .. 29]".into(), "[30 .. 39]".into()], vec![0, 1]);
        let group_of = [0u32, 0, 1, 1, 1];
        let column = || OutputColumn::Recoded {
            column: table.column(0),
            group_of: &group_of,
            texts: &texts,
        };
        let none = [false; 5];
        let numeric = [ColumnCoverage {
            column: 0,
            coverage: Coverage::Numeric,
        }];
        let rendering = Rendering::new(vec![column()], &none, false);
        assert_eq!(
            verify_recoded(&rendering, &numeric, 5, 0),
            Err(VerificationError::CellsNotCovering {
                cells: 1,
                allowed: 0
            })
        );
        assert_eq!(verify_recoded(&rendering, &numeric, 5, 1), Ok(()));
        // the record of age 40 listed twice (and one record missing)
        let order = [0u32, 1, 2, 4, 4];
        let twice = Rendering::new(vec![column()], &none, false).with_order(&order);
        assert_eq!(
            verify_recoded(&twice, &numeric, 5, 5),
            Err(VerificationError::RecordsNotPreserved {
                expected: 5,
                found: 5
            })
        );
        let short = [0u32, 1, 2, 3];
        let missing = Rendering::new(vec![column()], &none, false).with_order(&short);
        assert_eq!(
            verify_recoded(&missing, &numeric, 5, 5),
            Err(VerificationError::RecordsNotPreserved {
                expected: 5,
                found: 4
            })
        );
    }

    #[test]
    fn ranges_cover_by_number_or_position() {
        assert!(covers(&Coverage::Numeric, "[20 .. 29]", "25"));
        assert!(covers(&Coverage::Numeric, "[-5 .. -1]", "-3"));
        assert!(!covers(&Coverage::Numeric, "[20 .. 29]", "30"));
        assert!(!covers(&Coverage::Numeric, "20-29", "25"));
        assert!(covers(&Coverage::Numeric, "25", "25"));
        assert!(covers(&Coverage::Numeric, "*", "25"));
        let order: HashMap<String, usize> = ["Preschool", "Some-college", "Bachelors", "Masters"]
            .iter()
            .enumerate()
            .map(|(i, v)| (v.to_string(), i))
            .collect();
        let ordinal = Coverage::Ordinal(order);
        assert!(covers(&ordinal, "[Some-college .. Masters]", "Bachelors"));
        assert!(covers(
            &ordinal,
            "[Preschool .. Some-college]",
            "Some-college"
        ));
        assert!(!covers(&ordinal, "[Some-college .. Bachelors]", "Masters"));
        let labels = Coverage::Labels(HashMap::from([(
            "47677".to_string(),
            HashSet::from(["4767*".to_string(), "*".to_string()]),
        )]));
        assert!(covers(&labels, "4767*", "47677"));
        assert!(!covers(&labels, "4790*", "47677"));
    }
}
