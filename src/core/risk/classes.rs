//! Class-size frequencies: how many equivalence classes of each size a table has, when its records are
//! grouped by their quasi-identifier values. Every risk measure in this module reads only these
//! frequencies (as ARX's `RiskModelHistogram` does), so the original table, an anonymized output and a
//! population table are all summarised the same way.
//!
//! Suppressed records are left out before grouping, as ARX does (its risk models skip "outlier"
//! records): a suppressed record carries no quasi-identifier value an attacker could link, and counting
//! the `*` rows as one large class would understate the risk of the published classes.
//!
//! Grouping is `O(records × quasi-identifiers)` through [`crate::core::key_groups`]: a record's codes
//! are packed into one word (or, when too wide, numbered one column at a time), so no per-record key is
//! allocated.

use std::collections::BTreeMap;

use crate::core::key_groups::group_by_codes;

/// One column of a grouping key: record `r` has the code `translate[codes[r]]` (or `codes[r]` when
/// there is no translation, for example original values rather than generalized labels).
#[derive(Debug, Clone, Copy)]
pub struct KeyColumn<'a> {
    /// Per-record codes.
    pub codes: &'a [u32],
    /// Optional code → code map (a generalization level: column code → label code).
    pub translate: Option<&'a [u32]>,
}

/// Class sizes with their frequencies: `(size, number of classes of that size)`, ascending by size,
/// sizes ≥ 1 only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassSizes {
    frequencies: Vec<(u64, u64)>,
}

impl ClassSizes {
    /// The frequencies of the given class sizes; empty classes (size 0) are ignored.
    pub fn from_sizes(sizes: impl IntoIterator<Item = u64>) -> Self {
        let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
        for size in sizes.into_iter().filter(|&s| s > 0) {
            *counts.entry(size).or_default() += 1;
        }
        Self {
            frequencies: counts.into_iter().collect(),
        }
    }

    /// Groups the records `r < rows` with `include(r)` by their key over `columns` (no columns: one
    /// class holding every included record).
    pub fn group(columns: &[KeyColumn<'_>], rows: usize, include: impl Fn(usize) -> bool) -> Self {
        let keys = group_keys(columns, rows);
        let mut sizes: Vec<u64> = Vec::new();
        for (r, &key) in keys.iter().enumerate() {
            if include(r) {
                let key = key as usize;
                if key >= sizes.len() {
                    sizes.resize(key + 1, 0);
                }
                sizes[key] += 1;
            }
        }
        Self::from_sizes(sizes)
    }

    /// `(size, classes)` pairs, ascending by size.
    pub fn frequencies(&self) -> &[(u64, u64)] {
        &self.frequencies
    }

    /// Records in all classes.
    pub fn records(&self) -> u64 {
        self.frequencies.iter().map(|&(s, c)| s * c).sum()
    }

    /// Number of classes.
    pub fn classes(&self) -> u64 {
        self.frequencies.iter().map(|&(_, c)| c).sum()
    }

    /// Number of classes of exactly `size` records.
    pub fn classes_of_size(&self, size: u64) -> u64 {
        self.frequencies
            .iter()
            .find(|&&(s, _)| s == size)
            .map_or(0, |&(_, c)| c)
    }

    /// The smallest class size, if there is a class.
    pub fn min_size(&self) -> Option<u64> {
        self.frequencies.first().map(|&(s, _)| s)
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.frequencies.is_empty()
    }
}

/// A dense class id per record (ids in order of first appearance).
pub fn group_keys(columns: &[KeyColumn<'_>], rows: usize) -> Vec<u32> {
    let code = |r: usize, j: usize| {
        let column = &columns[j];
        let code = column.codes[r];
        match column.translate {
            Some(t) => t[code as usize],
            None => code,
        }
    };
    // the codes' bounds: the largest label a translation yields, else the largest code present
    let bounds: Vec<u64> = columns
        .iter()
        .map(|column| {
            let largest = match column.translate {
                Some(t) => t.iter().copied().max(),
                None => column.codes[..rows].iter().copied().max(),
            };
            largest.map_or(1, |m| u64::from(m) + 1)
        })
        .collect();
    group_by_codes(rows, &bounds, code).ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_of_sizes() {
        let c = ClassSizes::from_sizes([4, 1, 2, 1, 0]);
        assert_eq!(c.frequencies(), &[(1, 2), (2, 1), (4, 1)]);
        assert_eq!((c.records(), c.classes()), (8, 4));
        assert_eq!((c.classes_of_size(1), c.classes_of_size(3)), (2, 0));
        assert_eq!(c.min_size(), Some(1));
        assert!(ClassSizes::from_sizes([]).is_empty());
    }

    #[test]
    fn groups_by_every_column_and_skips_excluded_records() {
        // rows: (a,x) (a,x) (a,y) (b,x) (b,x) (b,x)
        let first = [0, 0, 0, 1, 1, 1];
        let second = [0, 0, 1, 0, 0, 0];
        let columns = [
            KeyColumn {
                codes: &first,
                translate: None,
            },
            KeyColumn {
                codes: &second,
                translate: None,
            },
        ];
        assert_eq!(group_keys(&columns, 6), [0, 0, 1, 2, 2, 2]);
        let all = ClassSizes::group(&columns, 6, |_| true);
        assert_eq!(all.frequencies(), &[(1, 1), (2, 1), (3, 1)]);
        // the second column generalized to one label: classes by the first column only
        let top = [0, 0];
        let generalized = [
            columns[0],
            KeyColumn {
                codes: &second,
                translate: Some(&top),
            },
        ];
        let g = ClassSizes::group(&generalized, 6, |_| true);
        assert_eq!(g.frequencies(), &[(3, 2)]);
        // record 2 suppressed
        let s = ClassSizes::group(&columns, 6, |r| r != 2);
        assert_eq!(s.frequencies(), &[(2, 1), (3, 1)]);
        assert_eq!(ClassSizes::group(&[], 3, |_| true).frequencies(), &[(3, 1)]);
    }
}
