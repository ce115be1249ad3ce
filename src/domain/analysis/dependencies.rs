//! How a published table keeps the functional dependencies a spec names, whatever algorithm produced it:
//! the dependency loss Δ, the instances kept, the utility and the violations of the input and of the
//! output (Gorla 2019, "Dependency-preserving generalization", Def. 8 and Def. 10; note §1.2, §1.8 and
//! §1.9). The clustering algorithms optimise these figures; Mondrian, hybrid and the full-domain searches
//! are measured the same way, so the thesis's comparison "loss against Mondrian" can be made.
//!
//! Cells are read as sets of original values ([`CellColumn`]), so a hierarchy value, a range and `*` are
//! measured alike. The entropy penalty of a cell is E(v) = P(v) · H(X | v) over the original column (the
//! thesis's Eq. 3.1 with base(v) the values the cell covers), and δ(x, v) = E(v) / H(X) when v covers
//! x, else 1; a column published as it is costs 0 for its own value and 1 otherwise. An instance's loss
//! is its smallest average δ over the published rows; Δ sums them. Every published class has at least
//! k records, so the thesis's utility (its cluster-size factor capped at 1) is |Γ| − Δ.
//!
//! Cost: per dependency, the distinct published tuples of its columns are indexed by the cells that
//! cover each value; an instance is compared with the tuples covering its value in the column where
//! they are fewest, and with the others only when none of those comes within 1 / (columns) (a tuple
//! covering none of its values is at distance 1).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::core::data::Table;
use crate::core::measures::CellColumn;

/// The columns of one functional dependency X → Y, as table column indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyColumns {
    /// Determining columns X.
    pub lhs: Vec<usize>,
    /// Determined columns Y.
    pub rhs: Vec<usize>,
}

/// The report's `dependencies` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DependencyReport {
    /// Instances |Γ|: distinct original values of every dependency's columns, summed over dependencies.
    pub instances: u64,
    /// Instances some published row keeps undistorted.
    pub instances_preserved: u64,
    /// Dependency loss Δ: over every instance, the smallest average distance to a published row.
    pub dependency_loss: f64,
    /// Utility, |Γ| − Δ.
    pub utility: f64,
    /// Left-hand values of the input with more than one right-hand value, summed over dependencies.
    pub fd_violations_input: u64,
    /// Published left-hand values whose published right-hand values contradict each other (neither
    /// covers the other).
    pub fd_violations_output: u64,
    /// `fd_violations_output − fd_violations_input` when positive, else 0.
    pub fd_violations_introduced: u64,
}

/// Distance below which an instance counts as kept.
const EPSILON: f64 = 1e-9;

/// One column of a dependency as published.
enum Published<'c> {
    /// A quasi-identifier: each record's cell, the cells' covers and their entropy penalties.
    Cells {
        column: &'c CellColumn<'c>,
        penalty: Vec<f64>,
        /// `covering[code]`: the cells that cover the code.
        covering: Vec<Vec<u32>>,
    },
    /// A column published as it is: its codes.
    Values(&'c [u32]),
}

impl<'c> Published<'c> {
    fn cells(column: &'c CellColumn<'c>) -> Self {
        let n = column.codes.len() as f64;
        let mut counts = vec![0f64; column.domain];
        for &code in column.codes {
            counts[code as usize] += 1.0;
        }
        let plogp = |c: f64| if c > 0.0 { c * c.ln() } else { 0.0 };
        let entropy = |covers: &[u32]| {
            let total: f64 = covers.iter().map(|&c| counts[c as usize]).sum();
            let inner: f64 = covers.iter().map(|&c| plogp(counts[c as usize])).sum();
            if n > 0.0 {
                ((plogp(total) - inner) / n).max(0.0)
            } else {
                0.0
            }
        };
        let whole = (plogp(n) - counts.iter().map(|&c| plogp(c)).sum::<f64>()) / n.max(1.0);
        let penalty = column
            .cells
            .iter()
            .map(|cell| {
                if whole > 0.0 {
                    (entropy(&cell.covers) / whole).min(1.0)
                } else {
                    0.0
                }
            })
            .collect();
        Published::Cells {
            column,
            penalty,
            covering: column.covering(),
        }
    }

    /// The published id of record `r`: its cell, or its own code.
    fn id(&self, r: usize) -> u32 {
        match self {
            Published::Cells { column, .. } => column.cell_of.get(r),
            Published::Values(codes) => codes[r],
        }
    }

    /// δ between original value `value` and published id `id`.
    fn distance(&self, value: u32, id: u32) -> f64 {
        match self {
            Published::Cells {
                column, penalty, ..
            } => {
                if column.cells[id as usize]
                    .covers
                    .binary_search(&value)
                    .is_ok()
                {
                    penalty[id as usize]
                } else {
                    1.0
                }
            }
            Published::Values(_) => f64::from(u8::from(value != id)),
        }
    }

    /// Whether every published id of `ids` lies on one root-to-leaf path (no two contradict).
    fn agree(&self, ids: &mut dyn Iterator<Item = u32>) -> bool {
        match self {
            Published::Cells { column, .. } => {
                let ids: Vec<u32> = ids.collect();
                let Some(&smallest) = ids
                    .iter()
                    .min_by_key(|&&id| column.cells[id as usize].covers.len())
                else {
                    return true;
                };
                let inner = &column.cells[smallest as usize].covers;
                ids.iter().all(|&id| {
                    let outer = &column.cells[id as usize].covers;
                    inner.iter().all(|c| outer.binary_search(c).is_ok())
                })
            }
            Published::Values(_) => {
                let mut ids = ids.peekable();
                let first = ids.peek().copied();
                ids.all(|id| Some(id) == first)
            }
        }
    }
}

/// The distinct published tuples of one dependency's columns, indexed by the ids that publish each
/// column.
struct Index {
    columns: usize,
    /// `tuples[t * columns + i]`: published id of column i in tuple t.
    tuples: Vec<u32>,
    /// Per column: published id → tuples publishing it.
    by_id: Vec<FxHashMap<u32, Vec<u32>>>,
}

impl Index {
    fn tuple(&self, t: u32) -> &[u32] {
        let a = self.columns;
        &self.tuples[t as usize * a..(t as usize + 1) * a]
    }

    /// Calls `visit` with the tuples whose column-i id covers `value`, list by list.
    fn candidates(
        &self,
        published: &Published<'_>,
        i: usize,
        value: u32,
        mut visit: impl FnMut(&[u32]),
    ) {
        match published {
            Published::Cells { covering, .. } => {
                for id in &covering[value as usize] {
                    if let Some(list) = self.by_id[i].get(id) {
                        visit(list);
                    }
                }
            }
            Published::Values(_) => {
                if let Some(list) = self.by_id[i].get(&value) {
                    visit(list);
                }
            }
        }
    }

    fn count(&self, published: &Published<'_>, i: usize, value: u32) -> usize {
        let mut n = 0;
        self.candidates(published, i, value, |list| n += list.len());
        n
    }
}

/// Measures `dependencies` on a published table: `cells` are the published quasi-identifier columns of
/// the table columns `quasi_identifiers`; other columns are published as they are; `published[r]` tells
/// whether record r is in the output.
pub fn dependency_report(
    table: &Table,
    dependencies: &[DependencyColumns],
    quasi_identifiers: &[usize],
    cells: &[CellColumn<'_>],
    published: &[bool],
) -> DependencyReport {
    let mut report = DependencyReport {
        instances: 0,
        instances_preserved: 0,
        dependency_loss: 0.0,
        utility: 0.0,
        fd_violations_input: 0,
        fd_violations_output: 0,
        fd_violations_introduced: 0,
    };
    let mut prepared: FxHashMap<usize, Published<'_>> = FxHashMap::default();
    for fd in dependencies {
        let mut columns: Vec<usize> = Vec::new();
        for &c in fd.lhs.iter().chain(&fd.rhs) {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
        for &c in &columns {
            prepared.entry(c).or_insert_with(|| {
                match quasi_identifiers.iter().position(|&q| q == c) {
                    Some(j) => Published::cells(&cells[j]),
                    None => Published::Values(&table.column(c).codes),
                }
            });
        }
        let publisheds: Vec<&Published<'_>> = columns.iter().map(|c| &prepared[c]).collect();
        let measured = measure(table, &columns, fd, &publisheds, published);
        report.instances += measured.instances;
        report.instances_preserved += measured.preserved;
        report.dependency_loss += measured.loss;
        report.fd_violations_input += measured.violations_input;
        report.fd_violations_output += measured.violations_output;
    }
    report.utility = report.instances as f64 - report.dependency_loss;
    report.fd_violations_introduced = report
        .fd_violations_output
        .saturating_sub(report.fd_violations_input);
    report
}

/// One dependency's figures.
struct Measured {
    instances: u64,
    preserved: u64,
    loss: f64,
    violations_input: u64,
    violations_output: u64,
}

fn measure(
    table: &Table,
    columns: &[usize],
    fd: &DependencyColumns,
    publisheds: &[&Published<'_>],
    published: &[bool],
) -> Measured {
    let a = columns.len();
    let rows = table.row_count();
    let originals: Vec<&[u32]> = columns
        .iter()
        .map(|&c| &table.column(c).codes[..])
        .collect();
    // Γ: distinct original tuples; the published tuples: distinct tuples of published ids
    let mut instances: FxHashSet<Vec<u32>> = FxHashSet::default();
    let mut tuples: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
    let mut index = Index {
        columns: a,
        tuples: Vec::new(),
        by_id: vec![FxHashMap::default(); a],
    };
    let mut key = Vec::with_capacity(a);
    for (r, &shown) in published.iter().enumerate().take(rows) {
        key.clear();
        key.extend(originals.iter().map(|codes| codes[r]));
        if !instances.contains(&key) {
            instances.insert(key.clone());
        }
        if shown {
            key.clear();
            key.extend(publisheds.iter().map(|p| p.id(r)));
            if !tuples.contains_key(&key) {
                let t = tuples.len() as u32;
                tuples.insert(key.clone(), t);
                index.tuples.extend_from_slice(&key);
                for (i, &id) in key.iter().enumerate() {
                    index.by_id[i].entry(id).or_default().push(t);
                }
            }
        }
    }
    let distance = |instance: &[u32], tuple: &[u32]| -> f64 {
        instance
            .iter()
            .zip(tuple)
            .zip(publisheds)
            .map(|((&x, &id), p)| p.distance(x, id))
            .sum::<f64>()
            / a as f64
    };
    let mut loss = 0.0;
    let mut preserved = 0;
    for instance in &instances {
        // columns by how few tuples cover the instance's value there
        let mut order: Vec<(usize, usize)> = (0..a)
            .map(|i| (index.count(publisheds[i], i, instance[i]), i))
            .collect();
        order.sort_unstable();
        let mut best = 1.0f64;
        for (step, &(_, i)) in order.iter().enumerate() {
            // a tuple missed by the columns already scanned is at distance ≥ step / a
            if step as f64 / a as f64 >= best {
                break;
            }
            index.candidates(publisheds[i], i, instance[i], |list| {
                for &t in list {
                    best = best.min(distance(instance, index.tuple(t)));
                }
            });
        }
        loss += best;
        preserved += u64::from(best <= EPSILON);
    }
    // violations: left-hand values with more than one distinct instance (input), and published
    // left-hand tuples whose right-hand ids contradict (output)
    let lhs_positions: Vec<usize> = fd
        .lhs
        .iter()
        .filter_map(|c| columns.iter().position(|x| x == c))
        .collect();
    let rhs_positions: Vec<usize> = fd
        .rhs
        .iter()
        .filter_map(|c| columns.iter().position(|x| x == c))
        .collect();
    let project = |tuple: &[u32]| -> Vec<u32> { lhs_positions.iter().map(|&i| tuple[i]).collect() };
    let mut lhs_instances: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
    for instance in &instances {
        *lhs_instances.entry(project(instance)).or_default() += 1;
    }
    let violations_input = lhs_instances.values().filter(|&&n| n > 1).count() as u64;
    let mut groups: FxHashMap<Vec<u32>, Vec<u32>> = FxHashMap::default();
    for t in 0..tuples.len() as u32 {
        groups.entry(project(index.tuple(t))).or_default().push(t);
    }
    let violations_output = groups
        .values()
        .filter(|members| {
            members.len() > 1
                && !rhs_positions
                    .iter()
                    .all(|&i| publisheds[i].agree(&mut members.iter().map(|&t| index.tuple(t)[i])))
        })
        .count() as u64;
    Measured {
        instances: instances.len() as u64,
        preserved,
        loss,
        violations_input,
        violations_output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thesis's running example (Gorla 2019, Table 3; note §4.1): pc, prv, med, diag.
    fn example() -> Table {
        let rows: Vec<Vec<&str>> = vec![
            vec!["V6J", "BC", "ibuprofen", "osteoarthritis"],
            vec!["V6J", "BC", "ibuprofen", "osteoarthritis"],
            vec!["J5B", "QC", "ibuprofen", "osteoarthritis"],
            vec!["K2H", "ON", "ibuprofen", "osteoarthritis"],
            vec!["K2H", "ON", "diazepam", "seizure"],
            vec!["J5B", "QC", "diazepam", "seizure"],
            vec!["R7A", "MB", "diazepam", "seizure"],
            vec!["R7A", "MB", "diazepam", "seizure"],
        ];
        Table::from_rows(&["pc", "prv", "med", "diag"], &rows)
    }

    /// A published column: each record's cell id and the codes each cell covers.
    fn column<'t>(table: &'t Table, c: usize, ids: Vec<u32>, covers: &[&[u32]]) -> CellColumn<'t> {
        let column = table.column(c);
        CellColumn::from_cells(
            &column.name,
            &column.codes,
            column.dictionary.len(),
            &ids,
            covers,
        )
    }

    fn dependencies() -> Vec<DependencyColumns> {
        // pc → prv and diag → med
        vec![
            DependencyColumns {
                lhs: vec![0],
                rhs: vec![1],
            },
            DependencyColumns {
                lhs: vec![3],
                rhs: vec![2],
            },
        ]
    }

    #[test]
    fn tables_4_and_5_lose_one_half_and_nothing() {
        let table = example();
        // codes: pc V6J 0, J5B 1, K2H 2, R7A 3; prv BC 0, QC 1, ON 2, MB 3; med ibuprofen 0, diazepam 1
        // R' (Table 4): [J,K,L] and Central Canada for t3..t6
        let cells = vec![
            column(
                &table,
                0,
                vec![0, 0, 4, 4, 4, 4, 3, 3],
                &[&[0], &[1], &[2], &[3], &[1, 2]],
            ),
            column(
                &table,
                1,
                vec![0, 0, 4, 4, 4, 4, 3, 3],
                &[&[0], &[1], &[2], &[3], &[1, 2]],
            ),
            column(&table, 2, vec![0, 0, 0, 0, 1, 1, 1, 1], &[&[0], &[1]]),
        ];
        let all = vec![true; 8];
        let r = dependency_report(&table, &dependencies(), &[0, 1, 2], &cells, &all);
        // p2 and p3 each (δ(J5B, [J,K,L]) + δ(QC, Central Canada)) / 2 = (0.25 + 0.25) / 2
        assert_eq!((r.instances, r.instances_preserved), (6, 4));
        assert!((r.dependency_loss - 0.5).abs() < 1e-12, "{r:?}");
        assert!((r.utility - 5.5).abs() < 1e-12);
        assert_eq!((r.fd_violations_input, r.fd_violations_output), (0, 0));
        // R'' (Table 5): MED `*` for t3..t6 keeps every instance, and `*` beside ibuprofen contradicts
        // nothing
        let cells = vec![
            column(
                &table,
                0,
                vec![0, 0, 1, 2, 2, 1, 3, 3],
                &[&[0], &[1], &[2], &[3]],
            ),
            column(
                &table,
                1,
                vec![0, 0, 1, 2, 2, 1, 3, 3],
                &[&[0], &[1], &[2], &[3]],
            ),
            column(
                &table,
                2,
                vec![0, 0, 2, 2, 2, 2, 1, 1],
                &[&[0], &[1], &[0, 1]],
            ),
        ];
        let r = dependency_report(&table, &dependencies(), &[0, 1, 2], &cells, &all);
        assert_eq!((r.instances, r.instances_preserved), (6, 6));
        assert!(r.dependency_loss.abs() < 1e-12 && (r.utility - 6.0).abs() < 1e-12);
        assert_eq!(r.fd_violations_output, 0);
        // everything `*` except the columns published as they are: pc → prv instances cost 1 each,
        // diag → med ones (diag kept, med `*`) one half (the note's Δ = 5)
        let cells = vec![
            column(&table, 0, vec![0; 8], &[&[0, 1, 2, 3]]),
            column(&table, 1, vec![0; 8], &[&[0, 1, 2, 3]]),
            column(&table, 2, vec![0; 8], &[&[0, 1]]),
        ];
        let r = dependency_report(&table, &dependencies(), &[0, 1, 2], &cells, &all);
        assert!((r.dependency_loss - 5.0).abs() < 1e-12, "{r:?}");
        // rows left out of the output keep nothing
        let none = vec![false; 8];
        let r = dependency_report(&table, &dependencies(), &[0, 1, 2], &cells, &none);
        assert!((r.dependency_loss - 6.0).abs() < 1e-12 && r.instances_preserved == 0);
    }

    #[test]
    fn contradicting_right_values_are_violations() {
        let table = example();
        // pc published `*` for t1 and t3 (BC and QC kept): one left value, two contradicting right values
        let cells = vec![
            column(
                &table,
                0,
                vec![4, 0, 4, 2, 2, 1, 3, 3],
                &[&[0], &[1], &[2], &[3], &[0, 1, 2, 3]],
            ),
            column(
                &table,
                1,
                vec![0, 0, 1, 2, 2, 1, 3, 3],
                &[&[0], &[1], &[2], &[3]],
            ),
            column(&table, 2, vec![0, 0, 0, 0, 1, 1, 1, 1], &[&[0], &[1]]),
        ];
        let r = dependency_report(&table, &dependencies(), &[0, 1, 2], &cells, &[true; 8]);
        assert_eq!((r.fd_violations_output, r.fd_violations_introduced), (1, 1));
    }
}
