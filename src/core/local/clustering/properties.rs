//! Property tests of the clustering algorithms on random small tables and hierarchies (note §5 "Tests
//! that would prove it"): groups of at least k records, fewer than k leftovers, cells covering their
//! records' values, utility = |Γ| − Δ when every cluster has exactly k records, exact incremental
//! evaluation equal to the definitions, and determinism for a fixed seed.

use proptest::prelude::*;

use super::*;
use crate::core::control::NoControl;
use crate::core::data::{GeneralizationMap, Hierarchy, Table};
use crate::core::local::LocalAttribute;

/// A hierarchy over the values `0..8`: level 0 is `v`, a level 0 < l < top maps v to `v >> l`, the top
/// is `*`.
fn hierarchy(top: usize) -> Hierarchy {
    let rows: Vec<Vec<String>> = (0..8u32)
        .map(|v| {
            (0..=top)
                .map(|l| {
                    if l == top {
                        "*".to_string()
                    } else if l == 0 {
                        v.to_string()
                    } else {
                        format!("{}/{}", l, v >> l)
                    }
                })
                .collect()
        })
        .collect();
    Hierarchy::from_rows(&rows).unwrap()
}

pub(super) struct Random {
    table: Table,
    maps: Vec<GeneralizationMap>,
    q: usize,
}

impl Random {
    pub(super) fn new(records: &[Vec<u32>], tops: &[usize]) -> Self {
        let q = tops.len();
        let header: Vec<String> = (0..=q).map(|j| format!("c{j}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let text: Vec<Vec<String>> = records
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(j, &v)| {
                        if j == q {
                            format!("{}", v % 3)
                        } else {
                            v.to_string()
                        }
                    })
                    .collect()
            })
            .collect();
        let text: Vec<Vec<&str>> = text
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&header, &text);
        let maps = tops
            .iter()
            .enumerate()
            .map(|(j, &top)| GeneralizationMap::bind(hierarchy(top), table.column(j)).unwrap())
            .collect();
        Self { table, maps, q }
    }

    pub(super) fn input(&self) -> LocalInput<'_> {
        LocalInput {
            rows: self.table.row_count(),
            quasi_identifiers: (0..self.q)
                .map(|j| LocalAttribute {
                    name: "c",
                    codes: &self.table.column(j).codes,
                    distinct: self.table.column(j).dictionary.len(),
                    domain: Domain::Hierarchy(&self.maps[j]),
                })
                .collect(),
            sensitive: vec![],
        }
    }

    /// c0 → c_last (a column), and c0 → c1 when there are two quasi-identifiers.
    pub(super) fn fds(&self) -> Vec<FunctionalDependency<'_>> {
        let mut fds = vec![FunctionalDependency {
            lhs: vec![FdAttribute::QuasiIdentifier(0)],
            rhs: vec![FdAttribute::Column(&self.table.column(self.q).codes)],
        }];
        if self.q > 1 {
            fds.push(FunctionalDependency {
                lhs: vec![FdAttribute::QuasiIdentifier(0)],
                rhs: vec![FdAttribute::QuasiIdentifier(1)],
            });
        }
        fds
    }
}

fn table_strategy() -> impl Strategy<Value = (Vec<Vec<u32>>, Vec<usize>, usize, u64)> {
    (1usize..=3, 1usize..=24).prop_flat_map(|(q, n)| {
        (
            prop::collection::vec(prop::collection::vec(0u32..8, q + 1), n),
            prop::collection::vec(1usize..=3, q),
            1usize..=4,
            any::<u64>(),
        )
    })
}

/// Checks the invariants every algorithm's result must meet; `exactly_k` for PAIR-ENUM and
/// k-ASSEMBLE, whose clusters all have k records and whose leftovers are suppressed.
fn check(
    input: &LocalInput<'_>,
    result: &ClusteringResult,
    k: usize,
    exactly_k: bool,
) -> Result<(), TestCaseError> {
    let rec = &result.recoding;
    let n = input.rows;
    let sizes = rec.group_sizes();
    prop_assert!(
        sizes.iter().all(|&s| s as usize >= k),
        "a group smaller than k: {sizes:?}"
    );
    let suppressed = rec.suppressed_records() as usize;
    prop_assert_eq!(suppressed, result.report.leftovers_suppressed);
    if exactly_k {
        prop_assert!(sizes.iter().all(|&s| s as usize == k));
        prop_assert!(suppressed < k.max(1) || n < k);
        prop_assert_eq!(suppressed, if n < k { n } else { n % k });
        let r = &result.report;
        prop_assert!(
            (r.utility - (r.dependency_instances as f64 - r.dependency_loss)).abs() < 1e-6,
            "utility {} ≠ |Γ| {} − Δ {}",
            r.utility,
            r.dependency_instances,
            r.dependency_loss
        );
    } else if n >= k {
        prop_assert_eq!(suppressed, 0);
    }
    for row in 0..n {
        for (j, a) in input.quasi_identifiers.iter().enumerate() {
            if let Some(cell) = rec.cell_of_record(row, j) {
                prop_assert!(
                    cell.covers(a.domain, a.codes[row]),
                    "cell of record {row} misses its value"
                );
            }
        }
    }
    let r = &result.report;
    prop_assert!(
        r.dependency_loss >= -1e-9 && r.dependency_loss <= r.dependency_instances as f64 + 1e-9
    );
    Ok(())
}

fn same(a: &ClusteringResult, b: &ClusteringResult) -> bool {
    a.recoding.group_of() == b.recoding.group_of() && a.report == b.report
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn pair_enum_invariants_and_exact_incremental_evaluation(data in table_strategy()) {
        let (records, tops, k, _) = data;
        let t = Random::new(&records, &tops);
        let input = t.input();
        let fds = t.fds();
        let all = PairEnumOptions { k, neighbours: None, ..PairEnumOptions::default() };
        let fast = pair_enum(&input, &fds, &all, &NoControl).unwrap();
        check(&input, &fast, k, true)?;
        let naive = pair_enum(&input, &fds, &PairEnumOptions { incremental: false, ..all.clone() }, &NoControl).unwrap();
        prop_assert!(same(&fast, &naive), "incremental and naive evaluation chose differently");
        // with Opt-1 on (the default), Opt-2 must choose exactly as evaluation from the definitions does
        let pruned_options = PairEnumOptions { k, neighbours: Some(2), ..PairEnumOptions::default() };
        let pruned = pair_enum(&input, &fds, &pruned_options, &NoControl).unwrap();
        check(&input, &pruned, k, true)?;
        let pruned_naive = pair_enum(&input, &fds, &PairEnumOptions { incremental: false, ..pruned_options }, &NoControl).unwrap();
        prop_assert!(same(&pruned, &pruned_naive), "with pruning, incremental and naive evaluation chose differently");
        let exact = pair_enum(&input, &fds, &PairEnumOptions { mode: PreserveMode::Exact, ..all }, &NoControl).unwrap();
        check(&input, &exact, k, true)?;
    }

    #[test]
    fn k_assemble_invariants_determinism_and_exact_incremental_evaluation(data in table_strategy()) {
        let (records, tops, k, seed) = data;
        let t = Random::new(&records, &tops);
        let input = t.input();
        let fds = t.fds();
        let options = KAssembleOptions { k, seed, pool: 2, ..KAssembleOptions::default() };
        let a = k_assemble(&input, &fds, &options, &NoControl).unwrap();
        check(&input, &a, k, true)?;
        let b = k_assemble(&input, &fds, &options, &NoControl).unwrap();
        prop_assert!(same(&a, &b), "same seed, different result");
        let naive = k_assemble(&input, &fds, &KAssembleOptions { incremental: false, ..options }, &NoControl).unwrap();
        prop_assert!(same(&a, &naive), "incremental and naive evaluation chose differently");
    }

    #[test]
    fn baselines_invariants_and_determinism(data in table_strategy()) {
        let (records, tops, k, seed) = data;
        let t = Random::new(&records, &tops);
        let input = t.input();
        let fds = t.fds();
        let m = k_member(&input, &fds, &KMemberOptions { k, seed }, &NoControl).unwrap();
        check(&input, &m, k, false)?;
        let again = k_member(&input, &fds, &KMemberOptions { k, seed }, &NoControl).unwrap();
        prop_assert!(same(&m, &again), "same seed, different k-member result");
        let d = top_down(&input, &fds, &TopDownOptions { k, seed }, &NoControl).unwrap();
        check(&input, &d, k, false)?;
        let again = top_down(&input, &fds, &TopDownOptions { k, seed }, &NoControl).unwrap();
        prop_assert!(same(&d, &again), "same seed, different top-down result");
    }
}
