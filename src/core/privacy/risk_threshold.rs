//! Risk thresholds on the whole published table, as ARX offers them (Prasser et al., "Flexible data
//! anonymization using ARX", 2020; the risk measures of El Emam's "Guide to the De-Identification of
//! Personal Health Information", 2013): a [`TableThreshold`] on
//! - [`TableMeasure::AverageRisk`]: the average prosecutor re-identification risk of the published
//!   records, the mean of 1 / |class| over them (= classes / records);
//! - [`TableMeasure::SampleUniques`]: the share of published records alone in their class;
//! - [`TableMeasure::PopulationUniques`]: the estimated share of population records unique in the
//!   population (Pitman, Zayatz, SNB, or Dankar et al.'s rule among them; see
//!   [`crate::core::risk::uniqueness`]), for a population of a given size.
//!
//! All judge the classes kept after the class-level models' suppression; none restricts a class on its
//! own. Generalizing merges classes, so without suppression the average risk and the sample uniques
//! never grow from a node to a coarser one (monotone); with suppression the kept records change between
//! nodes and neither is monotone, so the searches do not prune with them. The population estimates are
//! not monotone even without suppression (a model fitted to coarser classes may estimate more uniques;
//! ARX treats its population-uniqueness model the same way), so searches check every node with them.

use super::{ClassView, PrivacyModel, TableView};
use crate::core::risk::{population_unique_share, UniquenessModel};

/// What a table threshold bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableMeasure {
    /// The average prosecutor risk of the published records.
    AverageRisk,
    /// The share of published records unique in their class.
    SampleUniques,
    /// The estimated share of population records unique in the population.
    PopulationUniques {
        /// The estimator.
        model: UniquenessModel,
        /// Records in the population (at least the table's).
        population: u64,
    },
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

    /// Estimated share of population uniques at most `threshold`, for a population of `population`
    /// records.
    pub fn population_uniqueness(threshold: f64, model: UniquenessModel, population: u64) -> Self {
        Self {
            measure: TableMeasure::PopulationUniques { model, population },
            threshold,
        }
    }

    /// The measured figure of `table`; `None` when a population model does not apply to its classes
    /// (the table then fails the threshold).
    pub fn value(&self, table: &TableView) -> Option<f64> {
        match self.measure {
            TableMeasure::AverageRisk => Some(table.average_risk()),
            TableMeasure::SampleUniques => Some(table.unique_share()),
            TableMeasure::PopulationUniques { model, population } => {
                let sizes = table.sizes.as_ref()?;
                population_unique_share(sizes, population, model)
            }
        }
    }
}

impl PrivacyModel for TableThreshold {
    fn describe(&self) -> String {
        match self.measure {
            TableMeasure::AverageRisk => format!("average prosecutor risk ≤ {}", self.threshold),
            TableMeasure::SampleUniques => format!("sample uniques ≤ {}", self.threshold),
            TableMeasure::PopulationUniques { model, population } => format!(
                "population uniques ({}, population {population}) ≤ {}",
                model.name(),
                self.threshold
            ),
        }
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn is_monotone_with_suppression(&self) -> bool {
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        !matches!(self.measure, TableMeasure::PopulationUniques { .. })
    }
    fn is_size_only(&self) -> bool {
        // every class passes, and the class size asked for is 1
        true
    }
    fn is_class_private(&self, _class: &ClassView<'_>) -> bool {
        true
    }
    fn is_table_private(&self, table: &TableView) -> bool {
        self.value(table).is_some_and(|v| v <= self.threshold)
    }
    fn is_table_level(&self) -> bool {
        true
    }
    fn needs_class_sizes(&self) -> bool {
        matches!(self.measure, TableMeasure::PopulationUniques { .. })
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
            sizes: None,
            levels: None,
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
            sizes: None,
            levels: None,
        };
        assert!(TableThreshold::average_risk(0.01).is_table_private(&empty));
        assert!(TableThreshold::sample_uniqueness(0.0).is_table_private(&empty));
    }

    /// Classes of sizes 1 ×30, 2 ×6, 3 ×2, 4, 6 (58 records) from a population of 1,000: Pitman's
    /// estimate is 113.31181623203188 uniques (`scripts/risk_reference.py`), a share of 0.1133.
    #[test]
    fn population_threshold_compares_the_estimated_share() {
        let mut sizes = vec![1u64; 30];
        sizes.extend([2; 6]);
        sizes.extend([3, 3, 4, 6]);
        let classes = crate::core::risk::ClassSizes::from_sizes(sizes);
        let table = TableView {
            records: 58,
            classes: 40,
            uniques: 30,
            sizes: Some(classes),
            levels: None,
        };
        let at = |t| TableThreshold::population_uniqueness(t, UniquenessModel::Pitman, 1000);
        assert!(at(0.114).is_table_private(&table));
        assert!(!at(0.113).is_table_private(&table));
        assert!((at(0.5).value(&table).unwrap() - 0.113_311_816_232_031_88).abs() < 1e-9);
        assert!(at(0.5).needs_class_sizes() && !at(0.5).is_monotone_without_suppression());
        // without the sizes (a caller that did not count them) the threshold fails, never passes
        let blind = TableView {
            sizes: None,
            ..table
        };
        assert!(!at(1.0).is_table_private(&blind));
        assert!(!TableThreshold::average_risk(1.0).needs_class_sizes());
    }
}
