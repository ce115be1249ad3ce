//! Integer aggregates of a classified frequency set: everything the metrics need.

use crate::core::groupify::FrequencySet;
use crate::core::input::EngineInput;

/// Aggregates of one node's classes after deciding which classes are suppressed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSummary {
    /// Classes before suppression.
    pub classes: u64,
    /// Classes that pass every privacy model.
    pub kept_classes: u64,
    /// Records in failing classes.
    pub suppressed_records: u64,
    /// `Σ |EC|²` over all classes.
    pub sum_squares_all: u128,
    /// `Σ |EC|²` over kept classes.
    pub sum_squares_kept: u128,
    /// `Σ |EC| · max(k, |EC|)` over all classes: a discernibility bound for every generalization.
    pub discernibility_bound: u128,
    /// Per quasi-identifier, `Σ_{suppressed records} (leaves under the label − 1)`.
    pub suppressed_spans: Vec<u64>,
    /// Smallest kept class (0 when none).
    pub min_kept_class: u64,
    /// Largest kept class (0 when none).
    pub max_kept_class: u64,
}

impl NodeSummary {
    /// Summarises `set` where `kept[i]` says whether class i passes. `suppressed_spans` is only filled
    /// when `with_spans` (granularity needs it). Large sets are summarised in blocks of classes on the
    /// caller's rayon pool; the sums are integers, so the result does not depend on the threads.
    pub fn new(
        input: &EngineInput<'_>,
        set: &FrequencySet,
        kept: &[bool],
        min_class_size: u64,
        with_spans: bool,
    ) -> Self {
        Self::in_blocks(input, set, kept, (min_class_size, with_spans), 1 << 15)
    }

    /// [`NodeSummary::new`] with blocks of `block` classes.
    fn in_blocks(
        input: &EngineInput<'_>,
        set: &FrequencySet,
        kept: &[bool],
        (min_class_size, with_spans): (u64, bool),
        block: usize,
    ) -> Self {
        let q = input.quasi_identifiers.len();
        let summarise = |start: usize| {
            let end = start.saturating_add(block).min(set.len());
            Self::of_classes(input, set, kept, min_class_size, with_spans, start..end)
        };
        let mut s = if set.len() > block {
            use rayon::prelude::*;
            (0..set.len())
                .into_par_iter()
                .step_by(block)
                .map(summarise)
                .reduce(|| Self::empty(q), Self::merge)
        } else {
            summarise(0)
        };
        s.classes = set.len() as u64;
        if s.kept_classes == 0 {
            s.min_kept_class = 0;
        }
        s
    }

    /// The summary of no class.
    fn empty(q: usize) -> Self {
        NodeSummary {
            suppressed_spans: vec![0; q],
            min_kept_class: u64::MAX,
            ..Default::default()
        }
    }

    /// Both summaries' classes together.
    fn merge(mut self, other: Self) -> Self {
        self.kept_classes += other.kept_classes;
        self.suppressed_records += other.suppressed_records;
        self.sum_squares_all += other.sum_squares_all;
        self.sum_squares_kept += other.sum_squares_kept;
        self.discernibility_bound += other.discernibility_bound;
        for (a, b) in self
            .suppressed_spans
            .iter_mut()
            .zip(&other.suppressed_spans)
        {
            *a += b;
        }
        self.min_kept_class = self.min_kept_class.min(other.min_kept_class);
        self.max_kept_class = self.max_kept_class.max(other.max_kept_class);
        self
    }

    /// The summary of the classes `range` of `set` (`classes` left 0, `min_kept_class` `u64::MAX`
    /// when none is kept).
    fn of_classes(
        input: &EngineInput<'_>,
        set: &FrequencySet,
        kept: &[bool],
        min_class_size: u64,
        with_spans: bool,
        range: std::ops::Range<usize>,
    ) -> Self {
        let mut s = Self::empty(input.quasi_identifiers.len());
        let levels = set.levels();
        let counts = &set.counts()[range.clone()];
        for (i, &count) in range.zip(counts) {
            let c = count as u64;
            let sq = (c as u128) * (c as u128);
            s.sum_squares_all += sq;
            s.discernibility_bound += c as u128 * c.max(min_class_size) as u128;
            if kept[i] {
                s.kept_classes += 1;
                s.sum_squares_kept += sq;
                s.min_kept_class = s.min_kept_class.min(c);
                s.max_kept_class = s.max_kept_class.max(c);
            } else {
                s.suppressed_records += c;
                if !with_spans {
                    continue;
                }
                let row = set.representative_rows()[i] as usize;
                for (j, q) in input.quasi_identifiers.iter().enumerate() {
                    let level = levels[j] as usize;
                    let label = q.hierarchy.codes(level)[q.codes[row] as usize];
                    s.suppressed_spans[j] +=
                        c * (q.hierarchy.hierarchy().leaves_under(level, label) - 1);
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::tests::{modulo_hierarchy, numeric_table, two_column_input};
    use crate::core::groupify::Grouper;

    proptest::proptest! {
        /// Summaries of blocks of classes on several threads, merged, equal the one-pass summary.
        #[test]
        fn summaries_in_blocks_equal_one_pass(
            records in proptest::collection::vec((0u32..9, 0u32..7), 1..200),
            k in 1u64..6,
            block in 1usize..20,
        ) {
            let table = numeric_table(records.iter().copied());
            let maps = [modulo_hierarchy(&table, 0, 3), modulo_hierarchy(&table, 1, 3)];
            let codes = vec![0u32; records.len()];
            let input = two_column_input(&table, &maps, &codes, 1);
            let set = Grouper::new(&input).group_rows(&input, &[0, 1], false);
            let kept: Vec<bool> = set.counts().iter().map(|&c| u64::from(c) >= k).collect();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let blocks = pool.install(|| NodeSummary::in_blocks(&input, &set, &kept, (k, true), block));
            let whole = NodeSummary::in_blocks(&input, &set, &kept, (k, true), usize::MAX);
            proptest::prop_assert_eq!(&blocks, &whole);
            proptest::prop_assert_eq!(whole.classes, set.len() as u64);
            let suppressed: u64 = set.counts().iter().filter(|&&c| u64::from(c) < k).map(|&c| u64::from(c)).sum();
            proptest::prop_assert_eq!(whole.suppressed_records, suppressed);
        }
    }
}
