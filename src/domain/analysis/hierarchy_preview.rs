//! What a hierarchy does to one column of a dataset, before any job uses it: per level, the labels the
//! column's values take, with how many distinct values and records each covers. A data steward reads it
//! to check that a builder's intervals or masks group the data as intended (a label covering one value
//! of three records is a re-identification risk; a level where one label covers everything is `*` in
//! all but name). The labels are the tenant's own data, returned to the tenant; nothing is logged.

use serde::Serialize;

use crate::core::data::{Column, GeneralizationMap};

/// The preview of one hierarchy on one column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HierarchyPreview {
    /// The column.
    pub column: String,
    /// Records of the dataset.
    pub records: u64,
    /// Distinct values of the column.
    pub value_count: u64,
    /// Levels of the hierarchy, original values (level 0) and top included.
    pub level_count: u64,
    /// One entry per level, level 0 first.
    pub levels: Vec<LevelPreview>,
}

/// One level of a preview.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelPreview {
    /// The level (0: original values).
    pub level: u64,
    /// Labels that cover at least one value of the column.
    pub label_count: u64,
    /// Records in the smallest label's group.
    pub min_records: u64,
    /// The labels, in the hierarchy's order, at most the preview's limit.
    pub labels: Vec<LabelPreview>,
    /// Whether labels were left out because of the limit.
    pub truncated: bool,
}

/// One label of a level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelPreview {
    /// The label's text.
    pub label: String,
    /// Distinct values of the column it covers.
    pub values: u64,
    /// Records it covers.
    pub records: u64,
}

/// Previews `map` (bound to `column`) with at most `max_labels` labels listed per level. Linear in
/// the records plus the labels per level.
pub fn preview(column: &Column, map: &GeneralizationMap, max_labels: usize) -> HierarchyPreview {
    let value_records = column.value_counts();
    let levels = (0..=map.max_level())
        .map(|level| {
            let codes = map.codes(level);
            let mut values = vec![0u64; map.label_count(level)];
            let mut records = vec![0u64; map.label_count(level)];
            for (value, &label) in codes.iter().enumerate() {
                values[label as usize] += 1;
                records[label as usize] += value_records[value];
            }
            let used: Vec<usize> = (0..values.len()).filter(|&l| values[l] > 0).collect();
            let labels = map.hierarchy().labels(level);
            LevelPreview {
                level: level as u64,
                label_count: used.len() as u64,
                min_records: used.iter().map(|&l| records[l]).min().unwrap_or(0),
                truncated: used.len() > max_labels,
                labels: used
                    .iter()
                    .take(max_labels)
                    .map(|&l| LabelPreview {
                        label: labels.value(l as u32).to_string(),
                        values: values[l],
                        records: records[l],
                    })
                    .collect(),
            }
        })
        .collect();
    HierarchyPreview {
        column: column.name.clone(),
        records: column.codes.len() as u64,
        value_count: column.dictionary.len() as u64,
        level_count: map.max_level() as u64 + 1,
        levels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{Hierarchy, Table};

    #[test]
    fn counts_values_and_records_per_label() {
        let table = Table::from_rows(
            &["age"],
            &[
                vec!["31"],
                vec!["35"],
                vec!["35"],
                vec!["42"],
                vec!["31"],
                vec!["35"],
            ],
        );
        let hierarchy = Hierarchy::from_rows(&[
            vec!["31", "30-39", "*"],
            vec!["35", "30-39", "*"],
            vec!["42", "40-49", "*"],
            vec!["57", "50-59", "*"],
        ])
        .unwrap();
        let column = table.column(0);
        let map = GeneralizationMap::bind(hierarchy, column).unwrap();
        let p = preview(column, &map, 10);
        assert_eq!((p.records, p.value_count, p.level_count), (6, 3, 3));
        let level1 = &p.levels[1];
        // 50-59 covers no value of the column: not listed
        assert_eq!(level1.label_count, 2);
        assert_eq!(
            level1.labels,
            vec![
                LabelPreview {
                    label: "30-39".into(),
                    values: 2,
                    records: 5
                },
                LabelPreview {
                    label: "40-49".into(),
                    values: 1,
                    records: 1
                },
            ]
        );
        assert_eq!(level1.min_records, 1);
        assert_eq!(p.levels[2].labels[0].records, 6);
        let short = preview(column, &map, 1);
        assert!(short.levels[0].truncated && short.levels[0].labels.len() == 1);
        assert!(!short.levels[2].truncated);
        assert_eq!(short.levels[0].label_count, 3);
    }
}
