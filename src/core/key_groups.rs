//! Records grouped by a few small codes per record, numbered densely in order of first appearance (so no
//! result depends on hashing). The report groups the same table several ways (original classes,
//! published classes, risk before and after, achieved privacy); this is the one grouping they share.
//!
//! When the codes fit one `u64` in mixed radix (the sum of the columns' bit widths is at most 64, as for
//! nine columns of a few thousand values each), a record's key is packed and numbered through one hash
//! lookup, with no allocation per record or per class. Otherwise the key is built one column at a time,
//! each step mapping the pair (ids so far, next code) to a dense id.

use rustc_hash::FxHashMap;

/// Dense ids of records grouped by their codes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyGroups {
    /// Group id per record, in order of first appearance.
    pub ids: Vec<u32>,
    /// Number of groups.
    pub groups: usize,
}

/// Groups `rows` records by `code(record, column)` over as many columns as `bounds` has; every code of
/// column `j` is below `bounds[j]`.
pub fn group_by_codes(
    rows: usize,
    bounds: &[u64],
    code: impl Fn(usize, usize) -> u32,
) -> KeyGroups {
    let widths: Vec<u32> = bounds.iter().map(|&b| bit_width(b)).collect();
    if widths.iter().sum::<u32>() <= 64 {
        packed(rows, &widths, code)
    } else {
        by_columns(rows, bounds.len(), code)
    }
}

/// Bits that hold every value below `bound`.
fn bit_width(bound: u64) -> u32 {
    u64::BITS - bound.saturating_sub(1).leading_zeros()
}

fn packed(rows: usize, widths: &[u32], code: impl Fn(usize, usize) -> u32) -> KeyGroups {
    let mut ids: FxHashMap<u64, u32> = FxHashMap::default();
    let mut out = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut key = 0u64;
        for (j, &width) in widths.iter().enumerate() {
            // a zero-width column has only code 0; shifting by 64 is avoided for a single wide column
            key = key.checked_shl(width).unwrap_or(0) | u64::from(code(r, j));
        }
        let next = ids.len() as u32;
        out.push(*ids.entry(key).or_insert(next));
    }
    KeyGroups {
        groups: ids.len(),
        ids: out,
    }
}

fn by_columns(rows: usize, width: usize, code: impl Fn(usize, usize) -> u32) -> KeyGroups {
    let mut keys = vec![0u32; rows];
    let mut groups = usize::from(rows > 0);
    for j in 0..width {
        let mut ids: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        for (r, key) in keys.iter_mut().enumerate() {
            let next = ids.len() as u32;
            *key = *ids.entry((*key, code(r, j))).or_insert(next);
        }
        groups = ids.len();
    }
    KeyGroups { ids: keys, groups }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::SplitMix64;

    #[test]
    fn packed_and_column_by_column_number_alike() {
        let mut generator = SplitMix64(3);
        for round in 0..40 {
            let width = round % 5;
            let rows = generator.below(80) as usize;
            let bounds: Vec<u64> = (0..width).map(|_| 1 + generator.below(9)).collect();
            let codes: Vec<Vec<u32>> = bounds
                .iter()
                .map(|&b| (0..rows).map(|_| generator.below(b) as u32).collect())
                .collect();
            let code = |r: usize, j: usize| codes[j][r];
            let fast = group_by_codes(rows, &bounds, code);
            let slow = by_columns(rows, width, code);
            assert_eq!(fast, slow);
            // the same codes, the same id; first appearance order
            for a in 0..rows {
                for b in 0..rows {
                    let same = (0..width).all(|j| codes[j][a] == codes[j][b]);
                    assert_eq!(same, fast.ids[a] == fast.ids[b]);
                }
            }
            let mut seen = 0;
            for &id in &fast.ids {
                assert!(id as usize <= seen);
                seen = seen.max(id as usize + 1);
            }
            assert_eq!(seen, fast.groups);
        }
    }

    #[test]
    fn wide_keys_fall_back_to_columns() {
        // five columns of 2^20 values do not pack into 64 bits
        let bounds = [1u64 << 20; 5];
        let rows = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 4, 5]];
        let groups = group_by_codes(3, &bounds, |r, j| rows[r][j]);
        assert_eq!(groups.ids, [0, 1, 0]);
        assert_eq!(groups.groups, 2);
        assert_eq!(bit_width(1), 0);
        assert_eq!(bit_width(2), 1);
        assert_eq!(bit_width(1 << 20), 20);
        assert_eq!(bit_width(u64::MAX), 64);
    }
}
