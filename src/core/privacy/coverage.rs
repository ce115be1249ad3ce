//! Value coverage, the monotone relaxation of t-closeness that the exact searches use to skip nodes
//! before checking t-closeness itself.
//!
//! A class whose values hold too small a share of the table cannot be within `t` of the table's
//! distribution, whatever its counts: the uncovered share has to be moved at least the smallest ground
//! distance ([`EarthMovers::coverage_bound`]). Every class that passes t-closeness passes coverage. A
//! merged class holds the union of its parts' values, so it fails coverage only if every part fails:
//! records in failing classes never grow under generalization, and coverage is monotone with and
//! without suppression (like distinct l-diversity, its special case for a uniform table).

use super::emd::EarthMovers;
use super::{ClassView, Decimal, PrivacyModel};

/// The coverage condition t-closeness implies on one sensitive attribute.
#[derive(Debug, Clone)]
pub struct ValueCoverage {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// The attribute's name (for descriptions).
    pub attribute: String,
    /// The t of the t-closeness model relaxed.
    pub t: Decimal,
    /// That model's distance, whose [`EarthMovers::coverage_bound`] is compared with `t`.
    pub distance: EarthMovers,
}

impl PrivacyModel for ValueCoverage {
    fn describe(&self) -> String {
        format!(
            "value coverage of {}-closeness on '{}'",
            self.t, self.attribute
        )
    }

    fn min_class_size(&self) -> u64 {
        1
    }

    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }

    fn is_monotone_with_suppression(&self) -> bool {
        true
    }

    fn is_monotone_without_suppression(&self) -> bool {
        true
    }

    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        self.distance
            .coverage_bound(class.histogram(self.slot))
            .is_at_most(self.t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::FrequencySet;

    fn coverage(t: f64, global: Vec<u64>) -> ValueCoverage {
        ValueCoverage {
            slot: 0,
            attribute: "salary".into(),
            t: Decimal::from_f64(t).unwrap(),
            distance: EarthMovers::equal(global),
        }
    }

    fn passes(model: &ValueCoverage, histogram: Vec<(u32, u32)>) -> bool {
        let set = FrequencySet::single_class_for_tests(0, histogram);
        model.is_class_private(&ClassView::new(&set, 0))
    }

    /// A table of 76 and 24: a class holding one value is at least 0.24 away; with both it may pass.
    #[test]
    fn needs_enough_of_the_table_covered() {
        let model = coverage(0.2, vec![76, 24]);
        assert!(!passes(&model, vec![(0, 5)]));
        assert!(!passes(&model, vec![(1, 5)]));
        assert!(passes(&model, vec![(0, 1), (1, 9)]));
        // the bound is reached exactly: 0.24 ≤ 0.24
        assert!(passes(&coverage(0.24, vec![76, 24]), vec![(0, 5)]));
    }

    #[test]
    fn is_monotone() {
        let model = coverage(0.2, vec![1, 1]);
        assert!(model.is_monotone_with_suppression());
        assert!(model.is_monotone_without_suppression());
        assert!(model.describe().contains("salary"));
    }
}
