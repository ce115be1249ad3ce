//! The class-size distribution of a table in fixed, roughly logarithmic bins (1, 2, 3–4, 5–9, 10–19,
//! 20–49, 50–99, 100–999, 1000 and more), so that the distributions before and after anonymization share
//! one axis. Computed from the class-size frequencies: `O(distinct sizes)`.

use serde::Serialize;

use super::classes::ClassSizes;

/// The smallest class size of each bin; a bin ends where the next begins, the last is open.
const BIN_STARTS: [u64; 9] = [1, 2, 3, 5, 10, 20, 50, 100, 1000];

/// Classes whose size lies in `[smallest, largest]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClassSizeBin {
    /// The smallest size of the bin.
    pub smallest: u64,
    /// The largest size of the bin; null for the last, open bin.
    pub largest: Option<u64>,
    /// Classes of a size in the bin.
    pub classes: u64,
    /// Records in those classes.
    pub records: u64,
}

/// Every bin of `classes`' sizes, empty ones included.
pub fn class_size_bins(classes: &ClassSizes) -> Vec<ClassSizeBin> {
    let mut bins: Vec<ClassSizeBin> = BIN_STARTS
        .iter()
        .enumerate()
        .map(|(i, &smallest)| ClassSizeBin {
            smallest,
            largest: BIN_STARTS.get(i + 1).map(|next| next - 1),
            classes: 0,
            records: 0,
        })
        .collect();
    for &(size, count) in classes.frequencies() {
        if size == 0 {
            continue;
        }
        let bin = BIN_STARTS.partition_point(|&start| start <= size) - 1;
        bins[bin].classes += count;
        bins[bin].records += size * count;
    }
    bins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_into_their_bins() {
        // sizes 1, 1, 2, 4, 5, 9, 10, 99, 100, 1000, 5000
        let c = ClassSizes::from_sizes([1, 1, 2, 4, 5, 9, 10, 99, 100, 1000, 5000]);
        let bins = class_size_bins(&c);
        let counts: Vec<(u64, Option<u64>, u64, u64)> = bins
            .iter()
            .map(|b| (b.smallest, b.largest, b.classes, b.records))
            .collect();
        assert_eq!(
            counts,
            vec![
                (1, Some(1), 2, 2),
                (2, Some(2), 1, 2),
                (3, Some(4), 1, 4),
                (5, Some(9), 2, 14),
                (10, Some(19), 1, 10),
                (20, Some(49), 0, 0),
                (50, Some(99), 1, 99),
                (100, Some(999), 1, 100),
                (1000, None, 2, 6000),
            ]
        );
        let records: u64 = bins.iter().map(|b| b.records).sum();
        assert_eq!(records, c.records());
    }

    #[test]
    fn an_empty_table_has_empty_bins() {
        let bins = class_size_bins(&ClassSizes::from_sizes(Vec::<u64>::new()));
        assert_eq!(bins.len(), 9);
        assert!(bins.iter().all(|b| b.classes == 0 && b.records == 0));
    }
}
