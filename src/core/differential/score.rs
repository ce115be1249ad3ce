//! SafePub's score functions (Bild, Kuhn & Prasser 2018, §5): a node's utility on the sampled table
//! after every class below k is suppressed, divided by its sensitivity (the most one record added or
//! removed can change it), higher is better. The forms and sensitivities are the paper's and ARX's;
//! records left out by sampling count as suppressed, which shifts every node's score by the same amount
//! (the exponential mechanism ignores that shift) except where the metric weighs suppression by the
//! input's size (discernibility).
//!
//! - discernibility: −(n · suppressed + Σ kept |EC|²) / (n · (k²/(k−1) + 1)), n the input's records
//!   (5 in place of the fraction when k = 1);
//! - average class size: the kept classes plus one for the suppressed records (sensitivity 1);
//! - precision: −Σ_quasi-identifiers (kept · level/height + suppressed) / (q · (k − 1));
//! - granularity (ARX's loss): −(Σ_kept records Σ_q share + q · suppressed) / (q · (k − 1)).
//!
//! The other metrics have no score function: non-uniform entropy's is not implemented, DM* and height
//! are not a utility SafePub defines.

use crate::core::loss::MetricKind;

/// What a score needs to know about the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreContext {
    /// The metric whose score guides the search.
    pub metric: MetricKind,
    /// The smallest published class.
    pub k: u64,
    /// Records before sampling.
    pub input_rows: u64,
    /// Records drawn by sampling (the searched table).
    pub sample_rows: u64,
}

/// What a score needs to know about one node of the sampled table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeFacts<'a> {
    /// The node's generalization levels.
    pub levels: &'a [u8],
    /// The height of every quasi-identifier's hierarchy.
    pub heights: &'a [u8],
    /// The metric's loss at the node (the engine's definition).
    pub loss: f64,
    /// Records in classes below k.
    pub suppressed: u64,
    /// Classes of at least k records.
    pub kept_classes: u64,
}

/// Whether `metric` has a score function.
pub fn has_score(metric: MetricKind) -> bool {
    matches!(
        metric,
        MetricKind::Discernibility
            | MetricKind::Aecs
            | MetricKind::Precision
            | MetricKind::Granularity
    )
}

/// The score of a node, or `None` for a metric without a score function.
pub fn score(context: &ScoreContext, node: &NodeFacts<'_>) -> Option<f64> {
    let k = context.k.max(1) as f64;
    let q = node.levels.len().max(1) as f64;
    let suppressed = node.suppressed as f64;
    let kept_records = context.sample_rows.saturating_sub(node.suppressed) as f64;
    let above_one = if context.k > 1 { k - 1.0 } else { 1.0 };
    Some(match context.metric {
        MetricKind::Discernibility => {
            let n = context.input_rows.max(1) as f64;
            // the engine's discernibility counts suppressed records with the sample's size
            let squares = node.loss - context.sample_rows as f64 * suppressed;
            let sensitivity = if context.k == 1 {
                5.0
            } else {
                k * k / (k - 1.0) + 1.0
            };
            -(n * suppressed + squares) / (n * sensitivity)
        }
        MetricKind::Aecs => {
            let left_out = node.suppressed > 0 || context.input_rows > context.sample_rows;
            node.kept_classes as f64 + f64::from(u8::from(left_out))
        }
        MetricKind::Precision => {
            let total: f64 = node
                .levels
                .iter()
                .zip(node.heights)
                .map(|(&level, &height)| {
                    let share = if height == 0 {
                        0.0
                    } else {
                        f64::from(level) / f64::from(height)
                    };
                    kept_records * share + suppressed
                })
                .sum();
            -total / (q * above_one)
        }
        MetricKind::Granularity => {
            // the engine's granularity is that sum over (records · q)
            let total = node.loss * context.sample_rows as f64 * q;
            -total / (q * above_one)
        }
        MetricKind::DmStar
        | MetricKind::Height
        | MetricKind::NuEntropy
        | MetricKind::ArxEntropy
        | MetricKind::ArxLoss
        | MetricKind::ArxPrecision => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(metric: MetricKind) -> ScoreContext {
        ScoreContext {
            metric,
            k: 3,
            input_rows: 20,
            sample_rows: 12,
        }
    }

    #[test]
    fn discernibility_weighs_suppression_by_the_input_size() {
        // sample of 12: classes 5 and 4 kept, 3 records suppressed; the engine's loss is 25 + 16 + 12·3
        let node = NodeFacts {
            levels: &[1, 0],
            heights: &[2, 1],
            loss: 25.0 + 16.0 + 36.0,
            suppressed: 3,
            kept_classes: 2,
        };
        let s = score(&context(MetricKind::Discernibility), &node).expect("score");
        // −(20·3 + 41) / (20 · (9/2 + 1))
        assert!((s - (-101.0 / 110.0)).abs() < 1e-12, "{s}");
    }

    #[test]
    fn aecs_counts_kept_classes_and_one_for_the_left_out() {
        let node = NodeFacts {
            levels: &[1],
            heights: &[1],
            loss: 0.0,
            suppressed: 0,
            kept_classes: 4,
        };
        assert_eq!(score(&context(MetricKind::Aecs), &node), Some(5.0));
        let everyone = ScoreContext {
            input_rows: 12,
            ..context(MetricKind::Aecs)
        };
        assert_eq!(score(&everyone, &node), Some(4.0));
    }

    #[test]
    fn precision_and_granularity_divide_by_q_times_k_minus_one() {
        let node = NodeFacts {
            levels: &[1, 0],
            heights: &[2, 1],
            loss: 0.25,
            suppressed: 2,
            kept_classes: 2,
        };
        // kept 10: (10·½ + 2) + (0 + 2) = 9, over 2·2
        let p = score(&context(MetricKind::Precision), &node).expect("score");
        assert!((p - (-9.0 / 4.0)).abs() < 1e-12, "{p}");
        // granularity loss 0.25 over 12 records and 2 columns: sum 6, over 2·2
        let g = score(&context(MetricKind::Granularity), &node).expect("score");
        assert!((g - (-6.0 / 4.0)).abs() < 1e-12, "{g}");
        assert_eq!(score(&context(MetricKind::Height), &node), None);
        assert!(!has_score(MetricKind::NuEntropy));
    }
}
