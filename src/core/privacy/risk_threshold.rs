//! Risk thresholds on the whole published table, as ARX offers them (Prasser et al., "Flexible data
//! anonymization using ARX", 2020; the risk measures of El Emam's "Guide to the De-Identification of
//! Personal Health Information", 2013): a [`TableThreshold`] on
//! - [`TableMeasure::AverageRisk`]: the average prosecutor re-identification risk of the published
//!   records, the mean of 1 / |class| over them (= classes / records);
//! - [`TableMeasure::SampleUniques`]: the share of published records alone in their class.
//!
//! Both judge the classes kept after the class-level models' suppression; neither restricts a class on
//! its own. Generalizing merges classes, so without suppression both figures never grow from a node to
//! a coarser one (monotone); with suppression the kept records change between nodes and neither is
//! monotone, so the searches do not prune with them.

use super::{ClassView, PrivacyModel, TableView};

/// What a table threshold bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableMeasure {
    /// The average prosecutor risk of the published records.
    AverageRisk,
    /// The share of published records unique in their class.
    SampleUniques,
}

/// A figure of the whole published table at most `threshold`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableThreshold {
    /// The figure.
    pub measure: TableMeasure,
    /// Its largest allowed value.
    pub threshold: f64,
}

impl TableThreshold {
    /// Average prosecutor risk at most `threshold`.
    pub fn average_risk(threshold: f64) -> Self {
        Self {
            measure: TableMeasure::AverageRisk,
            threshold,
        }
    }

    /// Share of sample uniques at most `threshold`.
    pub fn sample_uniqueness(threshold: f64) -> Self {
        Self {
            measure: TableMeasure::SampleUniques,
            threshold,
        }
    }
}

impl PrivacyModel for TableThreshold {
    fn describe(&self) -> String {
        match self.measure {
            TableMeasure::AverageRisk => format!("average prosecutor risk ≤ {}", self.threshold),
            TableMeasure::SampleUniques => format!("sample uniques ≤ {}", self.threshold),
        }
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
        let value = match self.measure {
            TableMeasure::AverageRisk => table.average_risk(),
            TableMeasure::SampleUniques => table.unique_share(),
        };
        value <= self.threshold
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
        assert!(TableThreshold::average_risk(0.5).is_table_private(&table));
        assert!(!TableThreshold::average_risk(0.49).is_table_private(&table));
        assert!(TableThreshold::sample_uniqueness(0.25).is_table_private(&table));
        assert!(!TableThreshold::sample_uniqueness(0.2).is_table_private(&table));
        let empty = TableView {
            records: 0,
            classes: 0,
            uniques: 0,
        };
        assert!(TableThreshold::average_risk(0.01).is_table_private(&empty));
        assert!(TableThreshold::sample_uniqueness(0.0).is_table_private(&empty));
    }
}
