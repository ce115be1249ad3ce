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
    /// when `with_spans` (granularity needs it).
    pub fn new(
        input: &EngineInput<'_>,
        set: &FrequencySet,
        kept: &[bool],
        min_class_size: u64,
        with_spans: bool,
    ) -> Self {
        let mut s = NodeSummary {
            classes: set.len() as u64,
            suppressed_spans: vec![0; input.quasi_identifiers.len()],
            min_kept_class: u64::MAX,
            ..Default::default()
        };
        let levels = set.levels();
        for (i, &count) in set.counts().iter().enumerate() {
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
        if s.kept_classes == 0 {
            s.min_kept_class = 0;
        }
        s
    }
}
