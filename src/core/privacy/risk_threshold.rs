//! Risk thresholds on the whole published table, as ARX offers them (Prasser et al., "Flexible data
//! anonymization using ARX", 2020; the risk measures of El Emam's "Guide to the De-Identification of
//! Personal Health Information", 2013):
//! - [`AverageRisk`]: the average prosecutor re-identification risk of the published records, the mean
//!   of 1 / |class| over them (= classes / records), at most the threshold;
//! - [`SampleUniqueness`]: the share of published records alone in their class at most the threshold.
//!
//! Both judge the classes kept after the class-level models' suppression; neither restricts a class on
//! its own. Generalizing merges classes, so without suppression both figures never grow from a node to
//! a coarser one (monotone); with suppression the kept records change between nodes and neither is
//! monotone, so the searches do not prune with them.

use super::{ClassView, PrivacyModel, TableView};

/// Average prosecutor risk of the published records at most `threshold`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AverageRisk {
    /// The largest average risk allowed, in (0, 1].
    pub threshold: f64,
}

impl PrivacyModel for AverageRisk {
    fn describe(&self) -> String {
        format!("average prosecutor risk ≤ {}", self.threshold)
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn is_monotone_with_suppression(&self) -> bool {
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_size_only(&self) -> bool {
        // every class passes, and the class size asked for is 1
        true
    }
    fn is_class_private(&self, _class: &ClassView<'_>) -> bool {
        true
    }
    fn is_table_private(&self, table: &TableView) -> bool {
        table.average_risk() <= self.threshold
    }
    fn is_table_level(&self) -> bool {
        true
    }
}

/// Share of published records unique in their class at most `threshold`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleUniqueness {
    /// The largest share allowed, in [0, 1].
    pub threshold: f64,
}

impl PrivacyModel for SampleUniqueness {
    fn describe(&self) -> String {
        format!("sample uniques ≤ {}", self.threshold)
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn is_monotone_with_suppression(&self) -> bool {
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_size_only(&self) -> bool {
        // every class passes, and the class size asked for is 1
        true
    }
    fn is_class_private(&self, _class: &ClassView<'_>) -> bool {
        true
    }
    fn is_table_private(&self, table: &TableView) -> bool {
        table.unique_share() <= self.threshold
    }
    fn is_table_level(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Classes of sizes 1, 1, 2, 4 (8 records): average risk 4 / 8 = 0.5, uniques 2 / 8 = 0.25.
    #[test]
    fn thresholds_compare_with_the_hand_computed_figures() {
        let table = TableView {
            records: 8,
            classes: 4,
            uniques: 2,
        };
        assert_eq!(table.average_risk(), 0.5);
        assert_eq!(table.unique_share(), 0.25);
        assert!(AverageRisk { threshold: 0.5 }.is_table_private(&table));
        assert!(!AverageRisk { threshold: 0.49 }.is_table_private(&table));
        assert!(SampleUniqueness { threshold: 0.25 }.is_table_private(&table));
        assert!(!SampleUniqueness { threshold: 0.2 }.is_table_private(&table));
        let empty = TableView {
            records: 0,
            classes: 0,
            uniques: 0,
        };
        assert!(AverageRisk { threshold: 0.01 }.is_table_private(&empty));
        assert!(SampleUniqueness { threshold: 0.0 }.is_table_private(&empty));
    }
}
