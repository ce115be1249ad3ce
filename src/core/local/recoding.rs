//! The result of a local recoding: a group per record and the generalized cells of every group.

use super::{Domain, LocalInput};

/// The group of a suppressed record.
pub use crate::core::render::SUPPRESSED_GROUP;

/// One generalized quasi-identifier cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecodedCell {
    /// A hierarchy value: label code `label` at level `level` (level 0 is the original value).
    Node {
        /// The hierarchy level.
        level: u8,
        /// The label's code at that level.
        label: u32,
    },
    /// The ranks `low..=high` of an ordered domain (`low == high` is the original value).
    Range {
        /// Lowest rank covered.
        low: u32,
        /// Highest rank covered.
        high: u32,
    },
}

impl RecodedCell {
    /// Whether the cell covers column code `code` of an attribute with domain `domain`.
    pub fn covers(self, domain: Domain<'_>, code: u32) -> bool {
        match (self, domain) {
            (RecodedCell::Node { level, label }, Domain::Hierarchy(map)) => {
                (level as usize) <= map.max_level()
                    && map.codes(level as usize)[code as usize] == label
            }
            (RecodedCell::Range { low, high }, Domain::Ordered(order)) => {
                (low..=high).contains(&order.rank(code))
            }
            _ => false,
        }
    }
}

/// Groups and their cells. Records of one group publish the same cells; suppressed records publish `*`.
#[derive(Debug, Clone, PartialEq)]
pub struct Recoding {
    quasi_identifiers: usize,
    group_of: Vec<u32>,
    cells: Vec<RecodedCell>,
    order: Vec<u32>,
}

impl Recoding {
    /// A recoding from explicit cells: `cells[g * quasi_identifiers + j]` is group `g`'s cell of
    /// quasi-identifier `j`; records are written in input order.
    ///
    /// # Panics
    /// When `cells` is not a whole number of groups or a record names a group that has no cells.
    pub fn new(quasi_identifiers: usize, group_of: Vec<u32>, cells: Vec<RecodedCell>) -> Self {
        let groups = cells.len().checked_div(quasi_identifiers).unwrap_or(0);
        assert!(
            cells.len() == groups * quasi_identifiers,
            "whole groups of cells"
        );
        assert!(
            group_of
                .iter()
                .all(|&g| g == SUPPRESSED_GROUP || (g as usize) < groups || quasi_identifiers == 0),
            "every group has cells"
        );
        let order = (0..group_of.len() as u32).collect();
        Self {
            quasi_identifiers,
            group_of,
            cells,
            order,
        }
    }

    /// The recoding of a partition: every group's cell is the lowest common hierarchy value of its
    /// records' values, or the range from their lowest to their highest rank. Group ids are
    /// `0..groups`; [`SUPPRESSED_GROUP`] marks suppressed records.
    pub fn from_partition(input: &LocalInput<'_>, group_of: Vec<u32>, groups: usize) -> Self {
        let qis = input.quasi_identifiers.len();
        let mut cells = Vec::with_capacity(groups * qis);
        for attribute in &input.quasi_identifiers {
            let column = match attribute.domain {
                Domain::Hierarchy(map) => {
                    let mut anchor = vec![u32::MAX; groups];
                    let mut level = vec![0u8; groups];
                    for (&g, &code) in group_of.iter().zip(attribute.codes) {
                        if g == SUPPRESSED_GROUP {
                            continue;
                        }
                        let g = g as usize;
                        if anchor[g] == u32::MAX {
                            anchor[g] = code;
                            continue;
                        }
                        let mut l = level[g] as usize;
                        while l < map.max_level()
                            && map.codes(l)[code as usize] != map.codes(l)[anchor[g] as usize]
                        {
                            l += 1;
                        }
                        level[g] = l as u8;
                    }
                    (0..groups)
                        .map(|g| {
                            let l = level[g] as usize;
                            let label = if anchor[g] == u32::MAX {
                                map.codes(map.max_level()).first().copied().unwrap_or(0)
                            } else {
                                map.codes(l)[anchor[g] as usize]
                            };
                            let level = if anchor[g] == u32::MAX {
                                map.max_level() as u8
                            } else {
                                l as u8
                            };
                            RecodedCell::Node { level, label }
                        })
                        .collect::<Vec<_>>()
                }
                Domain::Ordered(order) => {
                    let mut low = vec![u32::MAX; groups];
                    let mut high = vec![0u32; groups];
                    for (&g, &code) in group_of.iter().zip(attribute.codes) {
                        if g == SUPPRESSED_GROUP {
                            continue;
                        }
                        let rank = order.rank(code);
                        let g = g as usize;
                        low[g] = low[g].min(rank);
                        high[g] = high[g].max(rank);
                    }
                    (0..groups)
                        .map(|g| {
                            if low[g] == u32::MAX {
                                RecodedCell::Range {
                                    low: 0,
                                    high: order.len().saturating_sub(1) as u32,
                                }
                            } else {
                                RecodedCell::Range {
                                    low: low[g],
                                    high: high[g],
                                }
                            }
                        })
                        .collect()
                }
            };
            cells.push(column);
        }
        let mut flat = Vec::with_capacity(groups * qis);
        for g in 0..groups {
            for column in &cells {
                flat.push(column[g]);
            }
        }
        Self::new(qis, group_of, flat)
    }

    /// Writes records in `order` (a permutation of the records), e.g. to hide which records moved.
    ///
    /// # Panics
    /// When `order` is not a permutation of the records.
    pub fn with_order(mut self, order: Vec<u32>) -> Self {
        let mut seen = vec![false; self.group_of.len()];
        assert_eq!(order.len(), seen.len(), "one position per record");
        for &r in &order {
            assert!(
                !std::mem::replace(&mut seen[r as usize], true),
                "a permutation"
            );
        }
        self.order = order;
        self
    }

    /// Number of records.
    pub fn rows(&self) -> usize {
        self.group_of.len()
    }

    /// Number of quasi-identifiers.
    pub fn quasi_identifiers(&self) -> usize {
        self.quasi_identifiers
    }

    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.cells
            .len()
            .checked_div(self.quasi_identifiers)
            .unwrap_or(0)
    }

    /// The group of each record ([`SUPPRESSED_GROUP`] when suppressed).
    pub fn group_of(&self) -> &[u32] {
        &self.group_of
    }

    /// The cell group `group` publishes for quasi-identifier `qi`.
    pub fn cell(&self, group: u32, qi: usize) -> RecodedCell {
        self.cells[group as usize * self.quasi_identifiers + qi]
    }

    /// The cell record `row` publishes for quasi-identifier `qi`, `None` when the record is suppressed.
    pub fn cell_of_record(&self, row: usize, qi: usize) -> Option<RecodedCell> {
        match self.group_of[row] {
            SUPPRESSED_GROUP => None,
            g => Some(self.cell(g, qi)),
        }
    }

    /// The order records are written in.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Whether each record is suppressed.
    pub fn suppressed(&self) -> Vec<bool> {
        self.group_of
            .iter()
            .map(|&g| g == SUPPRESSED_GROUP)
            .collect()
    }

    /// Number of suppressed records.
    pub fn suppressed_records(&self) -> u64 {
        self.group_of
            .iter()
            .filter(|&&g| g == SUPPRESSED_GROUP)
            .count() as u64
    }

    /// Records per group.
    pub fn group_sizes(&self) -> Vec<u64> {
        let mut sizes = vec![0u64; self.groups()];
        for &g in &self.group_of {
            if g != SUPPRESSED_GROUP {
                sizes[g as usize] += 1;
            }
        }
        sizes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::local::{LocalAttribute, OrderedDomain};

    #[test]
    fn partition_cells_are_lowest_common_values_and_rank_ranges() {
        let table = Table::from_rows(
            &["zip", "age"],
            &[
                vec!["47677", "29"],
                vec!["47602", "22"],
                vec!["47678", "27"],
                vec!["47905", "43"],
            ],
        );
        let hierarchy = Hierarchy::from_rows(&[
            vec!["47677", "4767*", "476**", "*"],
            vec!["47602", "4760*", "476**", "*"],
            vec!["47678", "4767*", "476**", "*"],
            vec!["47905", "4790*", "479**", "*"],
        ])
        .unwrap();
        let map = GeneralizationMap::bind(hierarchy, table.column(0)).unwrap();
        let ages = table.column(1);
        let numbers = ages
            .dictionary
            .values()
            .map(|v| v.parse::<f64>().unwrap())
            .collect();
        let order = OrderedDomain::numeric(numbers);
        let input = LocalInput {
            rows: 4,
            quasi_identifiers: vec![
                LocalAttribute {
                    name: "zip",
                    codes: &table.column(0).codes,
                    distinct: 4,
                    domain: Domain::Hierarchy(&map),
                },
                LocalAttribute {
                    name: "age",
                    codes: &ages.codes,
                    distinct: 4,
                    domain: Domain::Ordered(&order),
                },
            ],
            sensitive: vec![],
        };
        let recoding = Recoding::from_partition(&input, vec![0, 0, 0, SUPPRESSED_GROUP], 1);
        assert_eq!(recoding.groups(), 1);
        let zip = recoding.cell(0, 0);
        assert_eq!(
            map.hierarchy().labels(2).value(match zip {
                RecodedCell::Node { level: 2, label } => label,
                other => panic!("{other:?}"),
            }),
            "476**"
        );
        // ages 22, 27, 29 have ranks 0, 1, 2 (43 is rank 3)
        assert_eq!(recoding.cell(0, 1), RecodedCell::Range { low: 0, high: 2 });
        assert!(recoding
            .cell(0, 1)
            .covers(Domain::Ordered(&order), ages.codes[0]));
        assert!(!recoding
            .cell(0, 1)
            .covers(Domain::Ordered(&order), ages.codes[3]));
        assert!(zip.covers(Domain::Hierarchy(&map), table.column(0).codes[1]));
        assert!(!zip.covers(Domain::Hierarchy(&map), table.column(0).codes[3]));
        assert_eq!(recoding.suppressed(), vec![false, false, false, true]);
        assert_eq!(recoding.group_sizes(), vec![3]);
        let singleton = Recoding::from_partition(&input, vec![0, 1, 2, 3], 4);
        assert_eq!(
            singleton.cell(3, 0),
            RecodedCell::Node {
                level: 0,
                label: map.codes(0)[3]
            }
        );
        assert_eq!(singleton.cell(3, 1), RecodedCell::Range { low: 3, high: 3 });
    }
}
