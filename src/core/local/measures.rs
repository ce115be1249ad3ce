//! Information-loss measures of a local recoding (the report's recoding measures), cell by cell: the
//! normalized certainty penalty (NCP) and global certainty penalty (GCP) of Xu et al. (2006,
//! "Utility-based anonymization using local recoding", KDD, §3) and Ghinita et al. (2007), ARX's discernibility, the average equivalence class size, and
//! non-uniform entropy with each record's own cell in place of a column-wide level.

use serde::Serialize;

use super::{Domain, LocalInput, RecodedCell, Recoding, SUPPRESSED_GROUP};

/// The metrics of one local recoding.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocalMetrics {
    /// NCP summed over every quasi-identifier cell of every record. A cell's NCP is 0 for one original
    /// value and otherwise: the width of its range over the width of the attribute's numbers (numeric);
    /// ranks covered minus one over values minus one (ordinal); hierarchy leaves under it over all
    /// leaves (categorical). A suppressed record's cells count 1 each.
    pub ncp: f64,
    /// GCP: `ncp` over records × quasi-identifiers, in [0, 1].
    pub gcp: f64,
    /// Sum of squared published class sizes, plus the number of records for every suppressed record.
    pub discernibility: f64,
    /// Published records per published class.
    pub aecs: f64,
    /// Σ over records and quasi-identifiers of log2(records whose value the record's cell covers /
    /// records with the record's value); suppressed records count as covered by the whole domain.
    pub nu_entropy: f64,
}

/// The metrics of `recoding` on `input`. `class_sizes` are the sizes of the published classes, suppressed
/// records left out: groups whose cells publish the same texts are one class of the published table, so
/// the class-based measures (discernibility, AECS) count classes, not the algorithm's groups.
pub fn local_metrics(
    input: &LocalInput<'_>,
    recoding: &Recoding,
    class_sizes: &[u64],
) -> LocalMetrics {
    let rows = input.rows;
    let qis = input.quasi_identifiers.len();
    let groups = recoding.groups();
    let sizes = recoding.group_sizes();
    let suppressed = recoding.suppressed_records();
    let mut ncp = suppressed as f64 * qis as f64;
    let mut nu_entropy = 0.0;
    for (j, attribute) in input.quasi_identifiers.iter().enumerate() {
        let mut value_counts = vec![0u64; attribute.distinct];
        for &code in attribute.codes {
            value_counts[code as usize] += 1;
        }
        let covered = CoveredRecords::new(attribute.domain, &value_counts);
        let cell_ncp: Vec<f64> = (0..groups as u32)
            .map(|g| cell_penalty(recoding.cell(g, j), attribute.domain))
            .collect();
        let cell_cover: Vec<u64> = (0..groups as u32)
            .map(|g| covered.records(recoding.cell(g, j)))
            .collect();
        for (g, &size) in sizes.iter().enumerate() {
            ncp += cell_ncp[g] * size as f64;
        }
        for (&g, &code) in recoding.group_of().iter().zip(attribute.codes) {
            let cover = if g == SUPPRESSED_GROUP {
                rows as u64
            } else {
                cell_cover[g as usize]
            };
            nu_entropy += (cover as f64 / value_counts[code as usize] as f64).log2();
        }
    }
    let kept = rows as u64 - suppressed;
    LocalMetrics {
        ncp,
        gcp: if rows == 0 || qis == 0 {
            0.0
        } else {
            ncp / (rows as f64 * qis as f64)
        },
        discernibility: class_sizes.iter().map(|&s| (s * s) as f64).sum::<f64>()
            + suppressed as f64 * rows as f64,
        aecs: if class_sizes.is_empty() {
            0.0
        } else {
            kept as f64 / class_sizes.len() as f64
        },
        nu_entropy,
    }
}

/// The NCP of one cell.
fn cell_penalty(cell: RecodedCell, domain: Domain<'_>) -> f64 {
    match (cell, domain) {
        (RecodedCell::Node { level: 0, .. }, _) => 0.0,
        (RecodedCell::Node { level, label }, Domain::Hierarchy(map)) => {
            let h = map.hierarchy();
            h.leaves_under(level as usize, label) as f64 / h.leaf_count().max(1) as f64
        }
        (RecodedCell::Range { low, high }, _) if low == high => 0.0,
        (RecodedCell::Range { low, high }, Domain::Ordered(order)) => {
            match (
                order.number(order.code_at(low)),
                order.number(order.code_at(high)),
            ) {
                (Some(a), Some(b)) => {
                    let min = order.number(order.code_at(0)).unwrap_or(a);
                    let max = order
                        .number(order.code_at(order.len() as u32 - 1))
                        .unwrap_or(b);
                    if max > min {
                        (b - a) / (max - min)
                    } else {
                        0.0
                    }
                }
                _ => (high - low) as f64 / (order.len().max(2) - 1) as f64,
            }
        }
        _ => 1.0,
    }
}

/// Records whose original value a cell covers, from per-level label counts or rank prefix sums.
enum CoveredRecords {
    Levels(Vec<Vec<u64>>),
    Prefix(Vec<u64>),
}

impl CoveredRecords {
    fn new(domain: Domain<'_>, value_counts: &[u64]) -> Self {
        match domain {
            Domain::Hierarchy(map) => CoveredRecords::Levels(
                (0..=map.max_level())
                    .map(|level| {
                        let mut counts = vec![0u64; map.label_count(level)];
                        for (code, &n) in value_counts.iter().enumerate() {
                            counts[map.codes(level)[code] as usize] += n;
                        }
                        counts
                    })
                    .collect(),
            ),
            Domain::Ordered(order) => {
                let mut prefix = vec![0u64; order.len() + 1];
                for rank in 0..order.len() {
                    prefix[rank + 1] =
                        prefix[rank] + value_counts[order.code_at(rank as u32) as usize];
                }
                CoveredRecords::Prefix(prefix)
            }
        }
    }

    fn records(&self, cell: RecodedCell) -> u64 {
        match (self, cell) {
            (CoveredRecords::Levels(levels), RecodedCell::Node { level, label }) => levels
                .get(level as usize)
                .and_then(|c| c.get(label as usize))
                .copied()
                .unwrap_or(0),
            (CoveredRecords::Prefix(prefix), RecodedCell::Range { low, high }) => {
                prefix[high as usize + 1] - prefix[low as usize]
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::local::{LocalAttribute, OrderedDomain};

    /// Ages 20, 25, 30, 40 and sexes M, F, M, F in groups {0, 1} and {2, 3}:
    /// age cells [20 .. 25] (NCP 5/20) and [30 .. 40] (10/20); sex cells * (2 leaves of 2: 1) twice.
    #[test]
    fn hand_computed_metrics() {
        let table = Table::from_rows(
            &["age", "sex"],
            &[
                vec!["20", "M"],
                vec!["25", "F"],
                vec!["30", "M"],
                vec!["40", "F"],
            ],
        );
        let order = OrderedDomain::numeric(vec![20.0, 25.0, 30.0, 40.0]);
        let map = GeneralizationMap::bind(
            Hierarchy::from_rows(&[vec!["M", "*"], vec!["F", "*"]]).unwrap(),
            table.column(1),
        )
        .unwrap();
        let input = LocalInput {
            rows: 4,
            quasi_identifiers: vec![
                LocalAttribute {
                    name: "age",
                    codes: &table.column(0).codes,
                    distinct: 4,
                    domain: Domain::Ordered(&order),
                },
                LocalAttribute {
                    name: "sex",
                    codes: &table.column(1).codes,
                    distinct: 2,
                    domain: Domain::Hierarchy(&map),
                },
            ],
            sensitive: vec![],
        };
        let recoding = Recoding::from_partition(&input, vec![0, 0, 1, 1], 2);
        let m = local_metrics(&input, &recoding, &recoding.group_sizes());
        // age: 2 × 0.25 + 2 × 0.5; sex: 4 × 1
        assert!((m.ncp - 5.5).abs() < 1e-12, "{}", m.ncp);
        assert!((m.gcp - 5.5 / 8.0).abs() < 1e-12);
        assert_eq!(m.discernibility, 8.0);
        assert_eq!(m.aecs, 2.0);
        // age cells cover 2 records of values held by 1: 4 × log2 2; sex cells cover 4 records of
        // values held by 2: 4 × log2 2
        assert!((m.nu_entropy - 8.0).abs() < 1e-12, "{}", m.nu_entropy);
        // suppressing the second group: its cells count 1 each, and cover all 4 records
        let recoding =
            Recoding::from_partition(&input, vec![0, 0, SUPPRESSED_GROUP, SUPPRESSED_GROUP], 1);
        let m = local_metrics(&input, &recoding, &recoding.group_sizes());
        assert!(
            (m.ncp - (2.0 * 0.25 + 2.0 + 4.0)).abs() < 1e-12,
            "{}",
            m.ncp
        );
        assert_eq!(m.discernibility, 4.0 + 2.0 * 4.0);
        // age: 2 × log2 2 + 2 × log2 4; sex: 4 × log2(4/2)
        assert!(
            (m.nu_entropy - (2.0 + 4.0 + 4.0)).abs() < 1e-12,
            "{}",
            m.nu_entropy
        );
        // two groups whose cells publish the same texts are one class of 4
        let recoding = Recoding::from_partition(&input, vec![0, 0, 1, 1], 2);
        let m = local_metrics(&input, &recoding, &[4]);
        assert_eq!((m.discernibility, m.aecs), (16.0, 4.0));
    }
}
