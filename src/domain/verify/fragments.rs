//! Verifies the published fragments of a fragmentation job as a whole, from their rendered texts only
//! (no engine groups, no class codes): the features partition exactly (every feature in exactly one
//! fragment, the class in every fragment and nothing else), no two fragments list the records in the same
//! order (nor in input order), and, for the hard repairs, every join of one published class per fragment
//! of any subset of at least two fragments on the class holds no tuple or at least k tuples
//! (Zakerzadeh et al., Theorem 4.1, generalized to subsets as in the implementation note).

use std::collections::{BTreeSet, HashMap};

use rustc_hash::FxHashMap;

use super::VerificationError;
use crate::core::render::Rendering;

/// Below this many records a random order may equal the input order by chance; input order is then
/// allowed.
const ORDER_CHECK_MIN_ROWS: usize = 13;

/// What the check observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentCheck {
    /// The smallest non-empty join of one published class per fragment (of every subset of at least
    /// two fragments); `None` when nothing joins or the joins were not checked.
    pub smallest_join: Option<u64>,
}

/// Checks `fragments` (the published tables, each with the column `class`), whose quasi-identifiers
/// together must be exactly `features`. With `hard_joins`, every join must be empty or hold at least
/// `k` tuples of at least `l` distinct class values (1 without ℓ-diversity); otherwise (δ-selectivity,
/// which publishes class sets) the joins are not checked.
pub fn verify_fragments(
    fragments: &[Rendering<'_>],
    class: &str,
    features: &[&str],
    k: u64,
    l: u64,
    hard_joins: bool,
) -> Result<FragmentCheck, VerificationError> {
    check_partition(fragments, class, features)?;
    check_orders(fragments)?;
    if !hard_joins {
        return Ok(FragmentCheck {
            smallest_join: None,
        });
    }
    let mut values: FxHashMap<&str, u32> = FxHashMap::default();
    let published: Vec<Vec<Vec<(u32, u64)>>> = fragments
        .iter()
        .map(|f| published_classes(f, class, &mut values))
        .collect::<Result<_, _>>()?;
    let smallest = smallest_join(&published, k, l)?;
    Ok(FragmentCheck {
        smallest_join: smallest,
    })
}

fn layout(problem: impl Into<String>) -> VerificationError {
    VerificationError::FragmentLayout(problem.into())
}

/// Every fragment has the class once and only generalized features besides, and the features of all
/// fragments are `features`, each once.
fn check_partition(
    fragments: &[Rendering<'_>],
    class: &str,
    features: &[&str],
) -> Result<(), VerificationError> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (t, fragment) in fragments.iter().enumerate() {
        let header = fragment.header();
        if header.iter().filter(|&&h| h == class).count() != 1 {
            return Err(layout(format!(
                "fragment {} does not hold the class column once",
                t + 1
            )));
        }
        for (c, &name) in header.iter().enumerate() {
            if name == class {
                continue;
            }
            if !fragment.is_generalized(c) || !seen.insert(name) {
                return Err(layout(format!(
                    "column '{name}' of fragment {} is not a feature of that fragment alone",
                    t + 1
                )));
            }
        }
    }
    let expected: BTreeSet<&str> = features.iter().copied().collect();
    if seen != expected {
        return Err(layout(format!(
            "the fragments hold {} features, the job has {}",
            seen.len(),
            expected.len()
        )));
    }
    Ok(())
}

/// No two fragments share their row order, and none keeps the input order (from 13 records on).
fn check_orders(fragments: &[Rendering<'_>]) -> Result<(), VerificationError> {
    let orders: Vec<Vec<usize>> = fragments.iter().map(|f| f.rows().collect()).collect();
    for (t, order) in orders.iter().enumerate() {
        if order.len() >= ORDER_CHECK_MIN_ROWS && order.iter().enumerate().all(|(i, &r)| i == r) {
            return Err(layout(format!("fragment {} keeps the input order", t + 1)));
        }
        if order.len() > 1 && orders[..t].iter().any(|o| o == order) {
            return Err(layout(format!(
                "fragment {} lists the records in the order of another fragment",
                t + 1
            )));
        }
    }
    Ok(())
}

/// The class-value counts of every published class of `fragment` (records grouped by the texts of its
/// generalized cells; every record counts, fully generalized ones too). Class texts are numbered in
/// `values`, shared by all fragments.
fn published_classes<'a>(
    fragment: &Rendering<'a>,
    class: &str,
    values: &mut FxHashMap<&'a str, u32>,
) -> Result<Vec<Vec<(u32, u64)>>, VerificationError> {
    let header = fragment.header();
    let class_column = header
        .iter()
        .position(|&h| h == class)
        .ok_or_else(|| VerificationError::MissingColumn(class.to_string()))?;
    let quasi: Vec<usize> = (0..header.len())
        .filter(|&c| fragment.is_generalized(c))
        .collect();
    let mut by_key: HashMap<Vec<&'a str>, usize> = HashMap::new();
    let mut classes: Vec<HashMap<u32, u64>> = Vec::new();
    for row in fragment.rows() {
        let key: Vec<&'a str> = quasi.iter().map(|&c| fragment.cell(row, c)).collect();
        let next = classes.len();
        let index = *by_key.entry(key).or_insert(next);
        if index == next {
            classes.push(HashMap::new());
        }
        let text = fragment.cell(row, class_column);
        let next_value = values.len() as u32;
        let value = *values.entry(text).or_insert(next_value);
        *classes[index].entry(value).or_insert(0) += 1;
    }
    Ok(classes
        .into_iter()
        .map(|counts| {
            let mut counts: Vec<(u32, u64)> = counts.into_iter().collect();
            counts.sort_unstable();
            counts
        })
        .collect())
}

/// The smallest non-empty join over every subset of at least two fragments; an error at the first join
/// of fewer than `k` tuples. Classes are dense count vectors over the class values, and the joins of a
/// subset are built fragment by fragment as products of those vectors (combinations that share no
/// value are dropped).
fn smallest_join(
    fragments: &[Vec<Vec<(u32, u64)>>],
    k: u64,
    l: u64,
) -> Result<Option<u64>, VerificationError> {
    let values = fragments
        .iter()
        .flatten()
        .flatten()
        .map(|&(c, _)| c as usize + 1)
        .max()
        .unwrap_or(0);
    let dense: Vec<Vec<Vec<u64>>> = fragments
        .iter()
        .map(|classes| {
            classes
                .iter()
                .map(|counts| {
                    let mut row = vec![0u64; values];
                    for &(c, n) in counts {
                        row[c as usize] = n;
                    }
                    row
                })
                .collect()
        })
        .collect();
    let m = fragments.len();
    let mut smallest: Option<u64> = None;
    let mut note = |j: u64, distinct: u64| -> Result<(), VerificationError> {
        if j > 0 && j < k {
            return Err(VerificationError::Reconstructible { tuples: j, k });
        }
        if j > 0 && distinct < l {
            return Err(VerificationError::JoinNotDiverse { distinct, l });
        }
        if j > 0 {
            smallest = Some(smallest.map_or(j, |s| s.min(j)));
        }
        Ok(())
    };
    for mask in 1u64..(1u64 << m.min(20)) {
        if mask.count_ones() < 2 {
            continue;
        }
        let members: Vec<usize> = (0..m).filter(|t| mask >> t & 1 == 1).collect();
        if let [a, b] = members[..] {
            // two fragments: a dot product per pair of classes
            for x in &dense[a] {
                for y in &dense[b] {
                    let (mut j, mut distinct) = (0, 0);
                    for (p, q) in x.iter().zip(y) {
                        j += p * q;
                        distinct += u64::from(p * q > 0);
                    }
                    note(j, distinct)?;
                }
            }
            continue;
        }
        let mut frontier: Vec<Vec<u64>> = dense[members[0]].clone();
        for &t in &members[1..] {
            let mut next = Vec::new();
            for products in &frontier {
                for eq in &dense[t] {
                    let joined: Vec<u64> = products
                        .iter()
                        .zip(eq)
                        .map(|(p, q)| p.saturating_mul(*q))
                        .collect();
                    if joined.iter().any(|&n| n > 0) {
                        next.push(joined);
                    }
                }
            }
            frontier = next;
        }
        for joined in &frontier {
            let distinct = joined.iter().filter(|&&n| n > 0).count() as u64;
            note(joined.iter().sum(), distinct)?;
        }
    }
    Ok(smallest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Table;
    use crate::core::local::CellTexts;
    use crate::core::render::OutputColumn;

    /// The note's §6.4 fragments as published tables (k = 3): fragment 1 has classes A {x2 y1},
    /// B {y3}, C {y1 z2} over feature `a`; fragment 2 has P {x1 y2}, Q {x1 y1 z1}, R {y2 z1} over
    /// feature `b`. A ⋈ R holds 2 tuples.
    fn example(repaired: bool) -> (Table, Table, Vec<u32>, Vec<u32>, CellTexts, CellTexts) {
        // DGBE's repair of the note: C becomes {z3}, R becomes {y3}
        let class1 = [
            "x",
            "x",
            "y",
            "y",
            "y",
            "y",
            if repaired { "z" } else { "y" },
            "z",
            "z",
        ];
        let class2 = [
            "x",
            "y",
            "y",
            "x",
            "y",
            "z",
            "y",
            "y",
            if repaired { "y" } else { "z" },
        ];
        let rows1: Vec<Vec<&str>> = class1.iter().map(|c| vec!["0", *c]).collect();
        let rows2: Vec<Vec<&str>> = class2.iter().map(|c| vec!["0", *c]).collect();
        let t1 = Table::from_rows(&["a", "class"], &rows1);
        let t2 = Table::from_rows(&["b", "class"], &rows2);
        let groups1 = vec![0, 0, 0, 1, 1, 1, 2, 2, 2];
        let groups2 = vec![0, 0, 0, 1, 1, 1, 2, 2, 2];
        let texts1 = CellTexts::from_parts(vec!["A".into(), "B".into(), "C".into()], vec![0, 1, 2]);
        let texts2 = CellTexts::from_parts(vec!["P".into(), "Q".into(), "R".into()], vec![0, 1, 2]);
        (t1, t2, groups1, groups2, texts1, texts2)
    }

    fn render<'a>(
        table: &'a Table,
        groups: &'a [u32],
        texts: &'a CellTexts,
        suppressed: &'a [bool],
        order: &'a [u32],
    ) -> Rendering<'a> {
        Rendering::new(
            vec![
                OutputColumn::Recoded {
                    column: table.column(0),
                    group_of: groups,
                    texts,
                },
                OutputColumn::Verbatim(table.column(1)),
            ],
            suppressed,
            false,
        )
        .with_order(order)
    }

    #[test]
    fn the_example_fails_before_and_passes_after_the_repair() {
        let suppressed = [false; 9];
        let order1: Vec<u32> = vec![8, 7, 6, 5, 4, 3, 2, 1, 0];
        let order2: Vec<u32> = vec![1, 0, 2, 3, 4, 5, 6, 7, 8];
        for repaired in [false, true] {
            let (t1, t2, g1, g2, x1, x2) = example(repaired);
            let fragments = [
                render(&t1, &g1, &x1, &suppressed, &order1),
                render(&t2, &g2, &x2, &suppressed, &order2),
            ];
            let result = verify_fragments(&fragments, "class", &["a", "b"], 3, 1, true);
            if repaired {
                // B ⋈ Q = 3 is now the smallest join
                assert_eq!(result.unwrap().smallest_join, Some(3));
            } else {
                assert_eq!(
                    result.unwrap_err(),
                    VerificationError::Reconstructible { tuples: 2, k: 3 }
                );
            }
        }
    }

    #[test]
    fn layouts_and_orders_are_checked() {
        let suppressed = [false; 9];
        let order: Vec<u32> = vec![8, 7, 6, 5, 4, 3, 2, 1, 0];
        let (t1, t2, g1, g2, x1, x2) = example(true);
        let same = [
            render(&t1, &g1, &x1, &suppressed, &order),
            render(&t2, &g2, &x2, &suppressed, &order),
        ];
        assert!(matches!(
            verify_fragments(&same, "class", &["a", "b"], 3, 1, true),
            Err(VerificationError::FragmentLayout(_))
        ));
        let other: Vec<u32> = vec![0, 8, 7, 6, 5, 4, 3, 2, 1];
        let fine = [
            render(&t1, &g1, &x1, &suppressed, &order),
            render(&t2, &g2, &x2, &suppressed, &other),
        ];
        assert!(verify_fragments(&fine, "class", &["a", "b"], 3, 1, true).is_ok());
        // B ⋈ Q joins {y} alone: one class value, not 2-diverse
        assert_eq!(
            verify_fragments(&fine, "class", &["a", "b"], 3, 2, true).unwrap_err(),
            VerificationError::JoinNotDiverse { distinct: 1, l: 2 }
        );
        // a feature missing from the fragments, or the class named wrongly
        assert!(verify_fragments(&fine, "class", &["a", "b", "c"], 3, 1, true).is_err());
        assert!(verify_fragments(&fine, "label", &["a", "b"], 3, 1, true).is_err());
    }
}
