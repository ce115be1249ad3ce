//! Exact range counts over a few columns with a dense prefix-sum cube (summed-area table, Crow 1984;
//! Ho et al. 1997, "Range queries in OLAP data cubes"): the weighted points are added into a cube of the
//! columns' ranks, every dimension is turned into running sums, and the weight inside any box is then an
//! inclusion–exclusion over its `2^d` corners. Building costs `O(points + cells · d)`, a query `O(2^d)`,
//! so a cube pays off when its cells are few next to the points times the queries it answers. The query
//! workload ([`super::workload`]) builds one per set of columns its queries constrain.

/// Largest cube built, in cells (16 MiB of counts).
pub const MAX_CELLS: usize = 1 << 22;

/// Running sums of weights over the ranks of a few columns.
pub struct RangeCube {
    /// Places per dimension.
    extents: Vec<usize>,
    /// Distance between neighbours along each dimension (the last dimension is contiguous).
    strides: Vec<usize>,
    /// `sums[i]`: the weight of the points at or below cell `i` in every dimension.
    sums: Vec<u32>,
}

impl RangeCube {
    /// Whether a cube of `extents` places per dimension has at most `max_cells` cells and its counters
    /// hold `total_weight`.
    pub fn fits(extents: &[usize], total_weight: u64, max_cells: usize) -> bool {
        let cells = extents
            .iter()
            .try_fold(1usize, |cells, &e| cells.checked_mul(e.max(1)));
        matches!(cells, Some(c) if c <= max_cells) && total_weight <= u64::from(u32::MAX)
    }

    /// Builds the cube of `points` (each `extents.len()` ranks, row-major, every rank below its
    /// extent) with `weights`; the caller checked [`RangeCube::fits`].
    pub fn new(extents: &[usize], points: impl Iterator<Item = (usize, u64)>) -> Self {
        let d = extents.len();
        let mut strides = vec![1usize; d];
        for k in (0..d.saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * extents[k + 1].max(1);
        }
        let cells = extents.iter().map(|&e| e.max(1)).product::<usize>();
        let mut sums = vec![0u32; cells];
        for (cell, weight) in points {
            // the total weight fits in u32 (checked by `fits`), so no cell overflows
            sums[cell] += weight as u32;
        }
        for k in 0..d {
            let (stride, extent) = (strides[k], extents[k].max(1));
            let block = stride * extent;
            for base in (0..cells).step_by(block) {
                for c in 1..extent {
                    let (before, here) = sums[base..base + block].split_at_mut(c * stride);
                    let previous = &before[(c - 1) * stride..];
                    for (h, p) in here[..stride].iter_mut().zip(previous) {
                        *h += *p;
                    }
                }
            }
        }
        Self {
            extents: extents.to_vec(),
            strides,
            sums,
        }
    }

    /// The cell of a point with `ranks` (one per dimension).
    pub fn cell_of(extents: &[usize], ranks: impl Iterator<Item = usize>) -> usize {
        let mut cell = 0usize;
        for (rank, &extent) in ranks.zip(extents) {
            cell = cell * extent.max(1) + rank;
        }
        cell
    }

    /// The weight of the points whose rank lies in `lo[k]..=hi[k]` in every dimension k. Only the
    /// dimensions whose range starts above 0 add corners, so a dimension left whole costs nothing.
    pub fn count(&self, lo: &[u32], hi: &[u32]) -> u64 {
        let mut top = 0usize;
        let mut steps: Vec<usize> = Vec::new();
        for k in 0..self.extents.len() {
            let high = (hi[k] as usize).min(self.extents[k].saturating_sub(1));
            top += high * self.strides[k];
            if lo[k] > 0 && lo[k] as usize <= high {
                // moving this corner from `high` to `lo - 1`
                steps.push((high + 1 - lo[k] as usize) * self.strides[k]);
            } else if lo[k] as usize > high {
                return 0;
            }
        }
        let mut total: i64 = 0;
        for mask in 0u32..(1 << steps.len()) {
            let mut cell = top;
            for (k, step) in steps.iter().enumerate() {
                if mask & (1 << k) != 0 {
                    cell -= step;
                }
            }
            let value = i64::from(self.sums[cell]);
            if mask.count_ones() % 2 == 0 {
                total += value;
            } else {
                total -= value;
            }
        }
        total.max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::SplitMix64;

    #[test]
    fn counts_match_a_scan_of_the_points() {
        let mut generator = SplitMix64(11);
        for round in 0..40 {
            let d = 1 + round % 4;
            let extents: Vec<usize> = (0..d).map(|_| 1 + generator.below(6) as usize).collect();
            let points: Vec<(Vec<u32>, u64)> = (0..generator.below(60))
                .map(|_| {
                    let ranks = extents
                        .iter()
                        .map(|&e| generator.below(e as u64) as u32)
                        .collect();
                    (ranks, 1 + generator.below(4))
                })
                .collect();
            let total: u64 = points.iter().map(|p| p.1).sum();
            assert!(RangeCube::fits(&extents, total, MAX_CELLS));
            let cube = RangeCube::new(
                &extents,
                points.iter().map(|(ranks, w)| {
                    (
                        RangeCube::cell_of(&extents, ranks.iter().map(|&r| r as usize)),
                        *w,
                    )
                }),
            );
            for _ in 0..30 {
                let (lo, hi): (Vec<u32>, Vec<u32>) = extents
                    .iter()
                    .map(|&e| {
                        let (a, b) = (
                            generator.below(e as u64) as u32,
                            generator.below(e as u64) as u32,
                        );
                        (a.min(b), a.max(b))
                    })
                    .unzip();
                let scanned: u64 = points
                    .iter()
                    .filter(|(r, _)| (0..d).all(|k| lo[k] <= r[k] && r[k] <= hi[k]))
                    .map(|p| p.1)
                    .sum();
                assert_eq!(cube.count(&lo, &hi), scanned, "{extents:?} {lo:?} {hi:?}");
            }
        }
    }

    #[test]
    fn large_or_heavy_cubes_do_not_fit() {
        assert!(!RangeCube::fits(&[1 << 12, 1 << 11], 10, MAX_CELLS));
        assert!(RangeCube::fits(&[1 << 11, 1 << 11], 10, MAX_CELLS));
        assert!(!RangeCube::fits(&[4], u64::from(u32::MAX) + 1, MAX_CELLS));
        assert!(!RangeCube::fits(&[usize::MAX, 3], 1, MAX_CELLS));
    }
}
