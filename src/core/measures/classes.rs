//! Records grouped into classes, and the box counts behind volume inflation (Hsu 2008, Defs 2.3.8 and
//! 4.4.4–4.4.5; note §1.2 and §3.4).
//!
//! Two groupings are used: the original table's q-blocks (records with equal original quasi-identifier
//! codes) and the published q*-blocks (records with equal cell ids in every column). Class ids follow the
//! first appearance of a record, so no result depends on hashing.
//!
//! The box count of a published class is the number of original records whose quasi-identifier values
//! all lie in the class's cells (the empirical joint behind `Pr(q*)`). When, in every column, the cells
//! that publish something and do not cover the whole domain are pairwise disjoint (full-domain
//! generalization, and local recoding that picks one cell per value apart from `*`), each original value
//! has at most one such cell, and a hash count per pattern of whole-domain columns answers every class at
//! once in `O(patterns · combinations · q)`. Otherwise, when every column orders its codes so that each
//! cell is a run of consecutive places (ordered domains, tree hierarchies), a k-d tree counts each box
//! ([`super::box_tree`]); only cells that are no such run fall back to checking each class against each
//! original combination, `O(classes · combinations · q · log)`, which is also the tests' oracle.

use rustc_hash::FxHashMap;

use super::cells::CellColumn;
use crate::core::key_groups::group_by_codes;

/// A grouping of the records.
#[derive(Debug, Clone, Default)]
pub struct Classes {
    /// Class id per record.
    pub class_of: Vec<u32>,
    /// Records per class.
    pub sizes: Vec<u64>,
    /// The first record of each class.
    pub representative: Vec<u32>,
}

impl Classes {
    /// Groups `rows` records by the key `key(record, column)`; column j's keys are below `bounds[j]`.
    pub fn group(rows: usize, bounds: &[u64], key: impl Fn(usize, usize) -> u32) -> Self {
        let groups = group_by_codes(rows, bounds, key);
        let mut sizes = vec![0u64; groups.groups];
        let mut representative = vec![u32::MAX; groups.groups];
        for (r, &id) in groups.ids.iter().enumerate() {
            sizes[id as usize] += 1;
            if representative[id as usize] == u32::MAX {
                representative[id as usize] = r as u32;
            }
        }
        Classes {
            class_of: groups.ids,
            sizes,
            representative,
        }
    }

    /// The original table's q-blocks.
    pub fn original(columns: &[CellColumn<'_>], rows: usize) -> Self {
        let bounds: Vec<u64> = columns.iter().map(|c| c.domain as u64).collect();
        Self::group(rows, &bounds, |r, j| columns[j].codes[r])
    }

    /// The published q*-blocks.
    pub fn published(columns: &[CellColumn<'_>], rows: usize) -> Self {
        let bounds: Vec<u64> = columns.iter().map(|c| c.cells.len() as u64).collect();
        Self::group(rows, &bounds, |r, j| columns[j].cell_of.get(r))
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether there are no classes (an empty table).
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Where each class starts when records are listed class by class in id order: `starts[c]..starts[c
    /// + 1]` are class c's positions (`classes + 1` entries).
    pub fn starts(&self) -> Vec<u32> {
        let classes = self.len();
        let mut starts = vec![0u32; classes + 1];
        for &c in &self.class_of {
            starts[c as usize + 1] += 1;
        }
        for c in 0..classes {
            starts[c + 1] += starts[c];
        }
        starts
    }

    /// The records of every class, listed class by class in id order (positions from [`Self::starts`]).
    pub fn members(&self, starts: &[u32]) -> Vec<u32> {
        let mut cursor = starts.to_vec();
        let mut members = vec![0u32; self.class_of.len()];
        for (r, &c) in self.class_of.iter().enumerate() {
            members[cursor[c as usize] as usize] = r as u32;
            cursor[c as usize] += 1;
        }
        members
    }

    /// Calls `visit(class, histogram)` for every class in id order, with the class's sorted
    /// `(code, count)` histogram of `codes` (one code per record). The records are bucketed by class
    /// with a counting sort and one histogram buffer is reused, so the cost is `O(records)` plus the
    /// sorting of each class's few codes, with no allocation per class.
    pub fn for_each_histogram(&self, codes: &[u32], mut visit: impl FnMut(usize, &[(u32, u32)])) {
        let classes = self.len();
        let starts = self.starts();
        let mut cursor = starts.clone();
        let mut bucketed = vec![0u32; self.class_of.len()];
        for (&c, &code) in self.class_of.iter().zip(codes) {
            let at = &mut cursor[c as usize];
            bucketed[*at as usize] = code;
            *at += 1;
        }
        drop(cursor);
        let mut histogram: Vec<(u32, u32)> = Vec::new();
        for class in 0..classes {
            let members = &mut bucketed[starts[class] as usize..starts[class + 1] as usize];
            members.sort_unstable();
            histogram.clear();
            for &code in members.iter() {
                match histogram.last_mut() {
                    Some((last, n)) if *last == code => *n += 1,
                    _ => histogram.push((code, 1)),
                }
            }
            visit(class, &histogram);
        }
    }

    /// Sorted `(code, count)` histograms of `codes` per class (tests; the report streams them with
    /// [`Classes::for_each_histogram`]).
    #[cfg(test)]
    pub fn histograms(&self, codes: &[u32]) -> Vec<Vec<(u32, u32)>> {
        let mut out = Vec::with_capacity(self.len());
        self.for_each_histogram(codes, |_, h| out.push(h.to_vec()));
        out
    }
}

const NONE: u32 = u32::MAX;

/// Patterns with at most this many distinct class keys are counted in a table per thread.
const FEW_KEYS: usize = 1 << 12;

/// Per published class, the number of original records inside its box (the product of its cells).
pub fn box_counts(columns: &[CellColumn<'_>], published: &Classes, original: &Classes) -> Vec<u64> {
    if let Some(slots) = disjoint_slots(columns, published) {
        return by_patterns(columns, published, original, &slots);
    }
    match super::box_tree::by_ranges(columns, published, original) {
        Some(counts) => counts,
        None => by_scanning(columns, published, original),
    }
}

/// Per column and original code, the one published cell other than a whole-domain cell that covers it
/// (`NONE` if there is none); `None` when some code has two.
fn disjoint_slots(columns: &[CellColumn<'_>], published: &Classes) -> Option<Vec<Vec<u32>>> {
    let mut slots = Vec::with_capacity(columns.len());
    for column in columns {
        let mut used = vec![false; column.cells.len()];
        for &r in &published.representative {
            used[column.cell_of.get(r as usize) as usize] = true;
        }
        let mut slot = vec![NONE; column.domain];
        for (id, cell) in column.cells.iter().enumerate() {
            if !used[id] || column.covers_all(id as u32) {
                continue;
            }
            for &code in &cell.covers {
                let s = &mut slot[code as usize];
                if *s != NONE {
                    return None;
                }
                *s = id as u32;
            }
        }
        slots.push(slot);
    }
    Some(slots)
}

fn by_patterns(
    columns: &[CellColumn<'_>],
    published: &Classes,
    original: &Classes,
    slots: &[Vec<u32>],
) -> Vec<u64> {
    by_patterns_packing(columns, published, original, slots, (u64::BITS, FEW_KEYS))
}

/// [`by_patterns`], packing a key's cells into one integer when they need at most `packed_bits` bits,
/// and counting patterns of at most `few_keys` keys in a table per thread (tests lower both to reach
/// the list keys and the shared counters).
fn by_patterns_packing(
    columns: &[CellColumn<'_>],
    published: &Classes,
    original: &Classes,
    slots: &[Vec<u32>],
    (packed_bits, few_keys): (u32, usize),
) -> Vec<u64> {
    let mut out = vec![0u64; published.len()];
    // classes by the set of columns in which their cell covers the whole domain
    let mut patterns: Vec<(Vec<bool>, Vec<usize>)> = Vec::new();
    let mut pattern_of: FxHashMap<Vec<bool>, usize> = FxHashMap::default();
    for (p, &r) in published.representative.iter().enumerate() {
        let pattern: Vec<bool> = columns
            .iter()
            .map(|c| c.covers_all(c.cell_of.get(r as usize)))
            .collect();
        let index = *pattern_of.entry(pattern.clone()).or_insert_with(|| {
            patterns.push((pattern, Vec::new()));
            patterns.len() - 1
        });
        patterns[index].1.push(p);
    }
    for (pattern, classes) in patterns {
        let free: Vec<usize> = (0..columns.len()).filter(|&j| !pattern[j]).collect();
        // a class's key: its cell in every free column; an original combination's: the one cell of
        // each free column that covers its value (none: it lies in no class of the pattern)
        let class_key = |p: usize| {
            let r = published.representative[p] as usize;
            free.iter().map(move |&j| columns[j].cell_of.get(r))
        };
        let original_key = |o: usize| {
            let r = original.representative[o] as usize;
            free.iter()
                .map(move |&j| slots[j][columns[j].codes[r] as usize])
        };
        let bits: Vec<u32> = free
            .iter()
            .map(|&j| u32::BITS - (columns[j].cells.len() as u32).leading_zeros())
            .collect();
        let counts = if bits.iter().sum::<u32>() <= packed_bits {
            // the cells pack into one integer: no allocation per combination
            let pack = |cells: &mut dyn Iterator<Item = u32>| -> Option<u64> {
                let mut key = 0u64;
                for (cell, &width) in cells.zip(&bits) {
                    if cell == NONE {
                        return None;
                    }
                    key = (key << width) | u64::from(cell);
                }
                Some(key)
            };
            count_by_key(
                &classes,
                original,
                few_keys,
                |p| pack(&mut class_key(p)),
                |o| pack(&mut original_key(o)),
            )
        } else {
            let list = |cells: &mut dyn Iterator<Item = u32>| -> Option<Vec<u32>> {
                cells.map(|cell| (cell != NONE).then_some(cell)).collect()
            };
            count_by_key(
                &classes,
                original,
                few_keys,
                |p| list(&mut class_key(p)),
                |o| list(&mut original_key(o)),
            )
        };
        for (&p, count) in classes.iter().zip(counts) {
            out[p] = count;
        }
    }
    out
}

/// The records of the original combinations whose key equals each class's key (`classes` lists class
/// numbers; `class_key(p)` and `original_key(o)` are `None` for what takes part in no match). The
/// classes' keys are numbered first, so the combinations, counted in parallel on the caller's rayon
/// pool, only look up a table as large as the classes.
fn count_by_key<K: std::hash::Hash + Eq + Send + Sync>(
    classes: &[usize],
    original: &Classes,
    few_keys: usize,
    class_key: impl Fn(usize) -> Option<K>,
    original_key: impl Fn(usize) -> Option<K> + Sync,
) -> Vec<u64> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    let mut number: FxHashMap<K, usize> = FxHashMap::default();
    let slots: Vec<Option<usize>> = classes
        .iter()
        .map(|&p| {
            class_key(p).map(|key| {
                let next = number.len();
                *number.entry(key).or_insert(next)
            })
        })
        .collect();
    let keys = number.len();
    let counted = (0..original.len()).into_par_iter().with_min_len(1 << 14);
    let totals: Vec<u64> = if keys <= few_keys {
        // few keys (a wildcard pattern has one): a table per thread, summed, instead of threads
        // adding to the same counters
        counted
            .fold(
                || vec![0u64; keys],
                |mut totals, o| {
                    if let Some(&slot) = original_key(o).and_then(|key| number.get(&key)) {
                        totals[slot] += original.sizes[o];
                    }
                    totals
                },
            )
            .reduce(
                || vec![0u64; keys],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    } else {
        let totals: Vec<AtomicU64> = (0..keys).map(|_| AtomicU64::new(0)).collect();
        counted.for_each(|o| {
            if let Some(&slot) = original_key(o).and_then(|key| number.get(&key)) {
                totals[slot].fetch_add(original.sizes[o], Ordering::Relaxed);
            }
        });
        totals.into_iter().map(AtomicU64::into_inner).collect()
    };
    slots
        .into_iter()
        .map(|slot| slot.map_or(0, |s| totals[s]))
        .collect()
}

/// The oracle: every class against every original combination.
pub(super) fn by_scanning(
    columns: &[CellColumn<'_>],
    published: &Classes,
    original: &Classes,
) -> Vec<u64> {
    published
        .representative
        .iter()
        .map(|&p| {
            let cells: Vec<&[u32]> = columns
                .iter()
                .map(|c| {
                    c.cells[c.cell_of.get(p as usize) as usize]
                        .covers
                        .as_slice()
                })
                .collect();
            original
                .representative
                .iter()
                .zip(&original.sizes)
                .filter(|&(&o, _)| {
                    columns
                        .iter()
                        .zip(&cells)
                        .all(|(c, cell)| cell.binary_search(&c.codes[o as usize]).is_ok())
                })
                .map(|(_, &n)| n)
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column<'a>(
        codes: &'a [u32],
        domain: usize,
        cell_of: &[u32],
        cells: &[&[u32]],
    ) -> CellColumn<'a> {
        CellColumn::from_cells("a", codes, domain, cell_of, cells)
    }

    #[test]
    fn grouping_follows_first_appearance_and_histograms_are_sorted() {
        let c = Classes::group(5, &[10], |r, _| [7, 3, 7, 3, 9][r]);
        assert_eq!(c.class_of, vec![0, 1, 0, 1, 2]);
        assert_eq!(c.sizes, vec![2, 2, 1]);
        assert_eq!(c.representative, vec![0, 1, 4]);
        let h = c.histograms(&[2, 0, 1, 0, 5]);
        assert_eq!(h, vec![vec![(1, 1), (2, 1)], vec![(0, 2)], vec![(5, 1)]]);
    }

    /// Values a, a, b, c (codes 0, 0, 1, 2) published as {a}, {a,b}, {a,b}, {c}: the box {a,b} holds 3
    /// original records, {a} 2 and {c} 1. The cells {a} and {a,b} overlap, so this takes the scan.
    #[test]
    fn overlapping_cells_are_counted_by_scanning() {
        let codes = [0, 0, 1, 2];
        let columns = [column(&codes, 3, &[0, 1, 1, 2], &[&[0], &[0, 1], &[2]])];
        let published = Classes::published(&columns, 4);
        let original = Classes::original(&columns, 4);
        assert!(disjoint_slots(&columns, &published).is_none());
        assert_eq!(box_counts(&columns, &published, &original), vec![2, 3, 1]);
    }

    /// Two columns, one record published as (*, x) next to records kept as they are: the wildcard pattern
    /// counts every record with the same second value.
    #[test]
    fn whole_domain_cells_act_as_wildcards() {
        let a = [0, 1, 0, 1];
        let b = [0, 0, 1, 1];
        let columns = [
            column(&a, 2, &[0, 2, 0, 1], &[&[0], &[1], &[0, 1]]),
            column(&b, 2, &[0, 0, 1, 1], &[&[0], &[1]]),
        ];
        let published = Classes::published(&columns, 4);
        let original = Classes::original(&columns, 4);
        // classes: (a0,b0), (*,b0), (a0,b1), (a1,b1)
        let fast = box_counts(&columns, &published, &original);
        assert_eq!(fast, vec![1, 2, 1, 1]);
        assert_eq!(by_scanning(&columns, &published, &original), fast);
    }

    proptest::proptest! {
        /// Full-domain-like publications (each column generalized to blocks of its codes, some records
        /// redacted to `*` per column): the pattern counts, with packed and with list keys, equal the
        /// scan's.
        #[test]
        fn pattern_counts_equal_the_scan(
            table in proptest::collection::vec(
                proptest::collection::vec((0u32..6, proptest::bool::weighted(0.2)), 3),
                1..60,
            ),
            blocks in proptest::collection::vec(1u32..4, 3),
        ) {
            let rows = table.len();
            let codes: Vec<Vec<u32>> = (0..3).map(|j| table.iter().map(|r| r[j].0).collect()).collect();
            // cells 0..: code / block; the last cell is `*`
            let cells: Vec<Vec<Vec<u32>>> = blocks
                .iter()
                .map(|&b| {
                    let mut cells: Vec<Vec<u32>> =
                        (0..6u32.div_ceil(b)).map(|c| (c * b..((c + 1) * b).min(6)).collect()).collect();
                    cells.push((0..6).collect());
                    cells
                })
                .collect();
            let cell_of: Vec<Vec<u32>> = (0..3)
                .map(|j| {
                    table
                        .iter()
                        .map(|r| if r[j].1 { cells[j].len() as u32 - 1 } else { r[j].0 / blocks[j] })
                        .collect()
                })
                .collect();
            let columns: Vec<CellColumn<'_>> = (0..3)
                .map(|j| {
                    let list: Vec<&[u32]> = cells[j].iter().map(|c| c.as_slice()).collect();
                    CellColumn::from_cells("a", &codes[j], 6, &cell_of[j], &list)
                })
                .collect();
            let published = Classes::published(&columns, rows);
            let original = Classes::original(&columns, rows);
            let slots = disjoint_slots(&columns, &published);
            proptest::prop_assert!(slots.is_some());
            let slots = slots.unwrap();
            let scan = by_scanning(&columns, &published, &original);
            proptest::prop_assert_eq!(&box_counts(&columns, &published, &original), &scan);
            for limits in [(0, FEW_KEYS), (u64::BITS, 0), (0, 0)] {
                proptest::prop_assert_eq!(
                    &by_patterns_packing(&columns, &published, &original, &slots, limits),
                    &scan
                );
            }
        }
    }
}
