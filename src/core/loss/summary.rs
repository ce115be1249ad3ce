//! Integer aggregates of a classified frequency set: everything the metrics need.

use rustc_hash::FxHashMap;

use crate::core::data::Hierarchy;
use crate::core::groupify::FrequencySet;
use crate::core::input::EngineInput;

/// Aggregates of one node's classes after deciding which classes are suppressed.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Per quasi-identifier, `Σ_v c(v) · log2(S / c(v))` over the generalized values v of the S
    /// suppressed records, `c(v)` of them showing v: the penalty of ARX's non-monotonic entropy
    /// (empty when not collected or when no record is suppressed: no penalty).
    pub suppressed_entropy: Vec<f64>,
    /// Smallest kept class (0 when none).
    pub min_kept_class: u64,
    /// Largest kept class (0 when none).
    pub max_kept_class: u64,
    /// Kept classes of a single record (sample uniques).
    pub kept_uniques: u64,
}

impl NodeSummary {
    /// The kept classes as table-level models see them, for a table of `rows` records.
    pub fn table_view(&self, rows: u64) -> crate::core::privacy::TableView {
        crate::core::privacy::TableView {
            records: rows - self.suppressed_records,
            classes: self.kept_classes,
            uniques: self.kept_uniques,
            sizes: None,
            levels: None,
        }
    }

    /// Summarises `set` where `kept[i]` says whether class i passes. `suppressed_spans` is only filled
    /// when `spans` gives the reader of a record's codes (`spans(row, column)`; granularity and ARX's
    /// Loss need them), and `suppressed_entropy` only when `value_counts` is set too (ARX's entropy).
    pub fn new(
        input: &EngineInput<'_>,
        set: &FrequencySet,
        kept: &[bool],
        min_class_size: u64,
        spans: Option<impl Fn(u32, usize) -> u32>,
        value_counts: bool,
    ) -> Self {
        let mut s = NodeSummary {
            classes: set.len() as u64,
            suppressed_spans: vec![0; input.quasi_identifiers.len()],
            min_kept_class: u64::MAX,
            ..Default::default()
        };
        debug_assert_eq!(kept.len(), set.len());
        // one branch-free pass over the sizes (whether a class is kept does not follow a pattern the
        // processor could predict); a size is below 2^32, so its square fits a u64
        for (&count, &keep) in set.counts().iter().zip(kept) {
            let c = u64::from(count);
            let sq = c * c;
            let kept_mask = u64::from(keep).wrapping_neg();
            s.sum_squares_all += u128::from(sq);
            s.discernibility_bound += u128::from(c) * u128::from(c.max(min_class_size));
            s.kept_classes += u64::from(keep);
            s.sum_squares_kept += u128::from(sq & kept_mask);
            s.min_kept_class = s.min_kept_class.min(c | !kept_mask);
            s.max_kept_class = s.max_kept_class.max(c & kept_mask);
            s.suppressed_records += c & !kept_mask;
            s.kept_uniques += u64::from(keep & (c == 1));
        }
        if let Some(code_of) = spans.filter(|_| s.suppressed_records > 0) {
            let levels = set.levels();
            let columns: Vec<(&[u32], &Hierarchy, usize)> = input
                .quasi_identifiers
                .iter()
                .zip(levels)
                .map(|(q, &level)| {
                    let level = level as usize;
                    (q.hierarchy.codes(level), q.hierarchy.hierarchy(), level)
                })
                .collect();
            let suppressed = set.counts().iter().zip(kept).zip(set.representative_rows());
            // the suppressed records per generalized value, per column
            let mut by_value: Vec<FxHashMap<u32, u64>> = if value_counts {
                vec![FxHashMap::default(); columns.len()]
            } else {
                Vec::new()
            };
            for ((&count, _), &row) in suppressed.filter(|((_, &keep), _)| !keep) {
                for (j, &(labels, hierarchy, level)) in columns.iter().enumerate() {
                    let label = labels[code_of(row, j) as usize];
                    s.suppressed_spans[j] +=
                        u64::from(count) * (hierarchy.leaves_under(level, label) - 1);
                    if let Some(counts) = by_value.get_mut(j) {
                        *counts.entry(label).or_default() += u64::from(count);
                    }
                }
            }
            let total = s.suppressed_records as f64;
            s.suppressed_entropy = by_value
                .iter()
                .map(|counts| {
                    // a fixed order, so that the same node always sums to the same value
                    let mut counts: Vec<(u32, u64)> =
                        counts.iter().map(|(&v, &c)| (v, c)).collect();
                    counts.sort_unstable();
                    counts
                        .iter()
                        .map(|&(_, c)| c as f64 * (total / c as f64).log2())
                        .sum()
                })
                .collect();
        }
        if s.kept_classes == 0 {
            s.min_kept_class = 0;
        }
        s
    }
}
