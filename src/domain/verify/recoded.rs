//! Checks of a locally recoded table before it is published, beside the class checks every output gets
//! ([`super::verify`]): every input record is written exactly once, and every published
//! quasi-identifier cell covers the record's original value, except for the relocated cells an algorithm
//! declares (hybrid k-anonymization). Coverage is decided from texts alone: a hierarchy label must be one
//! of the value's ancestors in the spec's hierarchy; a range `[low .. high]` must hold the value by number
//! (numeric attributes) or by position in the order (ordinal, date and date-time attributes).

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::core::render::{Rendering, SUPPRESSED};

use super::error::VerificationError;

/// How the cells of one published quasi-identifier column are checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Coverage<'a> {
    /// By hierarchy: every original value's ancestor labels (the value itself may be among them).
    Labels(FxHashMap<&'a str, Vec<&'a str>>),
    /// By number.
    Numeric,
    /// By position in the order of every value.
    Ordinal(FxHashMap<&'a str, usize>),
}

/// A published quasi-identifier column and how its cells are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnCoverage<'a> {
    /// Output column index.
    pub column: usize,
    /// The check.
    pub coverage: Coverage<'a>,
}

/// Checks that the output lists every record once (`records` of them, or those not suppressed when
/// suppressed records are removed: `expected`) and that at most `allowed_uncovered` cells do not cover
/// their record's original value.
pub fn verify_recoded(
    rendering: &Rendering<'_>,
    columns: &[ColumnCoverage<'_>],
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
    let mut uncovered = 0u64;
    for check in columns {
        let source = rendering.source(check.column);
        let labels = LabelIds::new(&check.coverage);
        // each original value resolved once, each published text once per block of records (keyed by
        // where the text lives and its length); blocks on the caller's pool
        let originals: Vec<Original> = source
            .dictionary
            .values()
            .map(|value| Original::new(&check.coverage, &labels, value))
            .collect();
        uncovered += rows
            .par_chunks(COVERAGE_BLOCK)
            .map(|block| {
                let mut cells: FxHashMap<(usize, usize), Cell> = FxHashMap::default();
                let mut uncovered = 0u64;
                for &row in block {
                    let published = rendering.cell(row, check.column);
                    let code = source.codes[row];
                    let cell = cells
                        .entry((published.as_ptr() as usize, published.len()))
                        .or_insert_with(|| Cell::new(&check.coverage, &labels, published));
                    let original = source.dictionary.value(code);
                    if !covered(published, cell, original, &originals[code as usize]) {
                        uncovered += 1;
                    }
                }
                uncovered
            })
            .sum::<u64>();
    }
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
#[cfg(test)]
fn covers(coverage: &Coverage<'_>, published: &str, original: &str) -> bool {
    let labels = LabelIds::new(coverage);
    covered(
        published,
        &Cell::new(coverage, &labels, published),
        original,
        &Original::new(coverage, &labels, original),
    )
}

/// Whether `published` (resolved as `cell`) covers `original` (resolved as `value`): equal texts and `*`
/// cover everything; otherwise a label must be one of the value's ancestors, a range must hold its
/// number or position.
fn covered(published: &str, cell: &Cell, original: &str, value: &Original) -> bool {
    if published == original || published == SUPPRESSED {
        return true;
    }
    match (cell, value) {
        (Cell::Label(Some(id)), Original::Ancestors(ids)) => ids.contains(id),
        (Cell::Numbers(ranges), Original::Number(Some(v))) => {
            ranges.iter().any(|&(low, high)| low <= *v && *v <= high)
        }
        (Cell::Positions(ranges), Original::Position(Some(p))) => {
            ranges.iter().any(|&(low, high)| low <= *p && *p <= high)
        }
        _ => false,
    }
}

/// Numbers for every ancestor label of a hierarchical column (none for ranges).
struct LabelIds<'c>(FxHashMap<&'c str, u32>);

impl<'c> LabelIds<'c> {
    fn new(coverage: &Coverage<'c>) -> Self {
        let mut ids: FxHashMap<&'c str, u32> = FxHashMap::default();
        if let Coverage::Labels(ancestors) = coverage {
            for &label in ancestors.values().flatten() {
                let next = ids.len() as u32;
                ids.entry(label).or_insert(next);
            }
        }
        Self(ids)
    }
}

/// An original value as the coverage check reads it.
enum Original {
    /// The numbers of its ancestor labels (none when the hierarchy lacks the value).
    Ancestors(Vec<u32>),
    /// Its number, when it parses.
    Number(Option<f64>),
    /// Its position in the order, when it has one.
    Position(Option<usize>),
}

impl Original {
    fn new(coverage: &Coverage<'_>, labels: &LabelIds<'_>, original: &str) -> Self {
        match coverage {
            Coverage::Labels(ancestors) => Original::Ancestors(
                ancestors
                    .get(original)
                    .map(|set| {
                        set.iter()
                            .filter_map(|l| labels.0.get(l).copied())
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            Coverage::Numeric => Original::Number(original.trim().parse::<f64>().ok()),
            Coverage::Ordinal(position) => Original::Position(position.get(original).copied()),
        }
    }
}

/// A published text as the coverage check reads it.
enum Cell {
    /// The number of the label it names (none when it names no ancestor of any value).
    Label(Option<u32>),
    /// Every numeric reading of `[low .. high]`.
    Numbers(Vec<(f64, f64)>),
    /// Every reading of `[low .. high]` by positions.
    Positions(Vec<(usize, usize)>),
}

impl Cell {
    fn new(coverage: &Coverage<'_>, labels: &LabelIds<'_>, published: &str) -> Self {
        match coverage {
            Coverage::Labels(_) => Cell::Label(labels.0.get(published).copied()),
            Coverage::Numeric => Cell::Numbers(
                range_splits(published)
                    .filter_map(|(low, high)| {
                        Some((
                            low.trim().parse::<f64>().ok()?,
                            high.trim().parse::<f64>().ok()?,
                        ))
                    })
                    .collect(),
            ),
            Coverage::Ordinal(position) => Cell::Positions(
                range_splits(published)
                    .filter_map(|(low, high)| Some((*position.get(low)?, *position.get(high)?)))
                    .collect(),
            ),
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
        let order: FxHashMap<&str, usize> = ["Preschool", "Some-college", "Bachelors", "Masters"]
            .into_iter()
            .enumerate()
            .map(|(i, v)| (v, i))
            .collect();
        let ordinal = Coverage::Ordinal(order);
        assert!(covers(&ordinal, "[Some-college .. Masters]", "Bachelors"));
        assert!(covers(
            &ordinal,
            "[Preschool .. Some-college]",
            "Some-college"
        ));
        assert!(!covers(&ordinal, "[Some-college .. Bachelors]", "Masters"));
        let labels = Coverage::Labels(FxHashMap::from_iter([("47677", vec!["4767*", "*"])]));
        assert!(covers(&labels, "4767*", "47677"));
        assert!(!covers(&labels, "4790*", "47677"));
    }
}
