//! Tests on the running example of Gorla 2019 (Tables 3–5, 18–23; note §4) and the note's edge cases.
//! Expected values are computed by hand from the definitions (note §4.3).

use super::dependencies::Gamma;
use super::k_assemble::assemble;
use super::utility::{measure, naive_utility, Cluster, Scores};
use super::*;
use crate::core::control::{NoControl, Pace};
use crate::core::data::{GeneralizationMap, Hierarchy, Table};
use crate::core::local::{LocalAttribute, RecodedCell};

/// The private table R (Table 3) with hierarchies following note §4.2.
pub(crate) struct Example {
    pub table: Table,
    pub maps: Vec<GeneralizationMap>,
}

const NAMES: [&str; 3] = ["pc", "prv", "med"];

impl Example {
    pub fn new() -> Self {
        let rows: Vec<Vec<&str>> = [
            ["V6J", "BC", "ibuprofen", "osteoarthritis"],
            ["V6J", "BC", "ibuprofen", "osteoarthritis"],
            ["J5B", "QC", "ibuprofen", "osteoarthritis"],
            ["K2H", "ON", "ibuprofen", "osteoarthritis"],
            ["K2H", "ON", "diazepam", "seizure"],
            ["J5B", "QC", "diazepam", "seizure"],
            ["R7A", "MB", "diazepam", "seizure"],
            ["R7A", "MB", "diazepam", "seizure"],
        ]
        .iter()
        .map(|r| r.to_vec())
        .collect();
        let table = Table::from_rows(&["pc", "prv", "med", "diag"], &rows);
        let pc = Hierarchy::from_rows(&[
            vec!["V6J", "[V]", "*"],
            vec!["J5B", "[J,K,L]", "*"],
            vec!["K2H", "[J,K,L]", "*"],
            vec!["L4M", "[J,K,L]", "*"],
            vec!["R7A", "[R]", "*"],
        ])
        .unwrap();
        let prv = Hierarchy::from_rows(&[
            vec!["QC", "Central Canada", "*"],
            vec!["ON", "Central Canada", "*"],
            vec!["AB", "Prairies", "*"],
            vec!["MB", "Prairies", "*"],
            vec!["NS", "Atlantic", "*"],
            vec!["NB", "Atlantic", "*"],
            vec!["BC", "West Coast", "*"],
        ])
        .unwrap();
        let med = Hierarchy::from_rows(&[
            vec!["ibuprofen", "NSAID", "analgesic", "*"],
            vec!["addaprin", "NSAID", "analgesic", "*"],
            vec!["naproxen", "NSAID", "analgesic", "*"],
            vec!["codeine", "opioid", "analgesic", "*"],
            vec!["morphine", "opioid", "analgesic", "*"],
            vec!["diazepam", "benzodiazepine", "sedative", "*"],
            vec!["lorazepam", "benzodiazepine", "sedative", "*"],
            vec!["zolpidem", "hypnotic", "sedative", "*"],
        ])
        .unwrap();
        let maps = [pc, prv, med]
            .into_iter()
            .enumerate()
            .map(|(j, h)| GeneralizationMap::bind(h, table.column(j)).unwrap())
            .collect();
        Self { table, maps }
    }

    pub fn input(&self) -> LocalInput<'_> {
        LocalInput {
            rows: 8,
            quasi_identifiers: (0..3)
                .map(|j| LocalAttribute {
                    name: NAMES[j],
                    codes: &self.table.column(j).codes,
                    distinct: self.table.column(j).dictionary.len(),
                    domain: Domain::Hierarchy(&self.maps[j]),
                })
                .collect(),
            sensitive: vec![],
        }
    }

    /// Σ = {φ1: PC → PRV, φ2: DIAG → MED}.
    pub fn fds(&self) -> Vec<FunctionalDependency<'_>> {
        vec![
            FunctionalDependency {
                lhs: vec![FdAttribute::QuasiIdentifier(0)],
                rhs: vec![FdAttribute::QuasiIdentifier(1)],
            },
            FunctionalDependency {
                lhs: vec![FdAttribute::Column(&self.table.column(3).codes)],
                rhs: vec![FdAttribute::QuasiIdentifier(2)],
            },
        ]
    }

    fn label(&self, j: usize, level: usize, text: &str) -> u32 {
        self.maps[j].hierarchy().labels(level).code(text).unwrap()
    }
}

pub(crate) fn prepared<'a>(
    ex: &'a Example,
    input: &LocalInput<'a>,
    mode: PreserveMode,
) -> Prepared<'a> {
    Prepared::new(input, &ex.fds(), 2, mode).unwrap()
}

/// Utility of a clustering given by 1-based record lists (records in none stay single).
fn utility_of(prep: &Prepared<'_>, groups: &[&[u32]]) -> f64 {
    let mut clusters: Vec<Vec<u32>> = groups
        .iter()
        .map(|g| g.iter().map(|r| r - 1).collect())
        .collect();
    for r in 0..8u32 {
        if !clusters.iter().any(|c| c.contains(&r)) {
            clusters.push(vec![r]);
        }
    }
    let nodes = prep.lca_of(&clusters);
    naive_utility(
        prep,
        clusters
            .iter()
            .zip(&nodes)
            .map(|(c, n)| (c.as_slice(), n.as_slice())),
    )
    .0
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn entropy_penalties_and_value_distances_match_the_thesis() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    let e = &prep.entropy;
    let cc = ex.label(1, 1, "Central Canada");
    // E(CC) = P(CC) · H(X|CC) = 0.5 · log10 2
    assert!(close(e.raw(1, 1, cc), 0.5 * 2f64.log10()));
    assert!(close(e.h(1), 4f64.log10()));
    assert!(close(e.h(0), 4f64.log10()));
    assert!(close(e.h(2), 2f64.log10()));
    assert!(close(e.raw(1, 1, ex.label(1, 1, "Prairies")), 0.0));
    let code = |j: usize, v: &str| ex.table.column(j).dictionary.code(v).unwrap();
    let (qc, on, bc, mb) = (code(1, "QC"), code(1, "ON"), code(1, "BC"), code(1, "MB"));
    let prv = &ex.maps[1];
    let m = PreserveMode::Continuous;
    assert!(close(e.leaf_to_value(1, prv, m, qc, 1, on), 0.25)); // δ(QC, Central Canada)
    assert!(close(e.leaf_to_value(1, prv, m, bc, 1, qc), 1.0)); // δ(BC, Central Canada)
    assert!(close(e.leaf_to_value(1, prv, m, mb, 1, mb), 0.0)); // δ(MB, Prairies)
    assert!(close(e.leaf_to_value(1, prv, m, qc, 2, mb), 1.0)); // δ(QC, *)
    assert!(close(e.leaf_to_value(1, prv, m, qc, 0, qc), 0.0)); // δ(v, v)
    assert!(close(e.leaf_to_value(1, prv, m, qc, 0, on), 1.0)); // distinct ground values
    let (j5b, k2h) = (code(0, "J5B"), code(0, "K2H"));
    assert!(close(e.leaf_to_value(0, &ex.maps[0], m, j5b, 1, k2h), 0.25)); // δ(J5B, [J,K,L])
    let (ibu, dia) = (code(2, "ibuprofen"), code(2, "diazepam"));
    assert!(close(e.leaf_to_value(2, &ex.maps[2], m, ibu, 1, ibu), 0.0)); // δ(ibuprofen, NSAID)
    assert!(close(e.leaf_to_value(2, &ex.maps[2], m, ibu, 3, dia), 1.0)); // δ(ibuprofen, *)
                                                                          // between hierarchy values: δ(QC, CC) + δ(CC, ON) = 0.5 < δ(QC, ON) = 1 (no triangle inequality)
    assert!(close(e.between(1, prv, (0, qc), (1, on)), 0.25));
    assert!(close(e.between(1, prv, (1, on), (0, on)), 0.25));
    assert!(close(e.between(1, prv, (0, qc), (0, on)), 1.0));
    // exact mode: only the value itself is free
    assert!(close(
        e.leaf_to_value(1, prv, PreserveMode::Exact, qc, 1, on),
        1.0
    ));
}

#[test]
fn distance_does_not_depend_on_the_log_base() {
    // δ(QC, CC) = E(CC)/H: both scale with the base, so any base gives 0.25; checked in ln
    let e_cc = 0.5 * 2f64.ln();
    let h = 4f64.ln();
    assert!(close(e_cc / h, 0.25));
}

#[test]
fn instances_of_the_running_example_are_p1_to_p6() {
    let ex = Example::new();
    let input = ex.input();
    let gamma = Gamma::new(&input, &ex.fds()).unwrap();
    assert_eq!(gamma.len(), 6);
    let text = |p: usize| -> Vec<String> {
        let fd = gamma.fd_of(p);
        gamma
            .values(p)
            .iter()
            .zip(&fd.attrs)
            .map(|(&v, attr)| match attr {
                super::dependencies::Attr::Qi(j) => {
                    ex.table.column(*j).dictionary.value(v).to_string()
                }
                super::dependencies::Attr::Col(_) => {
                    ex.table.column(3).dictionary.value(v).to_string()
                }
            })
            .collect()
    };
    let expected = [
        ["V6J", "BC"],
        ["J5B", "QC"],
        ["K2H", "ON"],
        ["R7A", "MB"],
        ["osteoarthritis", "ibuprofen"],
        ["seizure", "diazepam"],
    ];
    for (p, e) in expected.iter().enumerate() {
        assert_eq!(text(p), e.to_vec(), "instance {p}");
    }
    assert_eq!(
        gamma
            .input_violations(&mut Pace::new(&NoControl))
            .expect("not cancelled"),
        0
    );
}

#[test]
fn table_6_has_three_instances_and_a_violation_adds_one() {
    let rows: Vec<Vec<&str>> = vec![
        vec!["J5B", "QC"],
        vec!["R7A", "AB"],
        vec!["R7A", "AB"],
        vec!["K2H", "ON"],
        vec!["K2H", "ON"],
    ];
    let table = Table::from_rows(&["pc", "prv"], &rows);
    let h = Hierarchy::from_rows(&[vec!["J5B", "*"], vec!["R7A", "*"], vec!["K2H", "*"]]).unwrap();
    let map = GeneralizationMap::bind(h, table.column(0)).unwrap();
    let input = LocalInput {
        rows: 5,
        quasi_identifiers: vec![LocalAttribute {
            name: "pc",
            codes: &table.column(0).codes,
            distinct: 3,
            domain: Domain::Hierarchy(&map),
        }],
        sensitive: vec![],
    };
    let fd = vec![FunctionalDependency {
        lhs: vec![FdAttribute::QuasiIdentifier(0)],
        rhs: vec![FdAttribute::Column(&table.column(1).codes)],
    }];
    let gamma = Gamma::new(&input, &fd).unwrap();
    assert_eq!(gamma.len(), 3);
    assert_eq!(
        gamma
            .input_violations(&mut Pace::new(&NoControl))
            .expect("not cancelled"),
        0
    );
    // K2H also with QC: a fourth instance and one violated left-hand value
    let mut rows = rows;
    rows.push(vec!["K2H", "QC"]);
    let table = Table::from_rows(&["pc", "prv"], &rows);
    let h = Hierarchy::from_rows(&[vec!["J5B", "*"], vec!["R7A", "*"], vec!["K2H", "*"]]).unwrap();
    let map = GeneralizationMap::bind(h, table.column(0)).unwrap();
    let input = LocalInput {
        rows: 6,
        quasi_identifiers: vec![LocalAttribute {
            name: "pc",
            codes: &table.column(0).codes,
            distinct: 3,
            domain: Domain::Hierarchy(&map),
        }],
        sensitive: vec![],
    };
    let fd = vec![FunctionalDependency {
        lhs: vec![FdAttribute::QuasiIdentifier(0)],
        rhs: vec![FdAttribute::Column(&table.column(1).codes)],
    }];
    let gamma = Gamma::new(&input, &fd).unwrap();
    assert_eq!(gamma.len(), 4);
    assert_eq!(
        gamma
            .input_violations(&mut Pace::new(&NoControl))
            .expect("not cancelled"),
        1
    );
}

#[test]
fn tuple_distances_match_the_note_matrix() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    // note §1.7, in thirds
    let expected: [[u32; 8]; 8] = [
        [0, 0, 2, 2, 3, 3, 3, 3],
        [0, 0, 2, 2, 3, 3, 3, 3],
        [2, 2, 0, 2, 3, 1, 3, 3],
        [2, 2, 2, 0, 1, 3, 3, 3],
        [3, 3, 3, 1, 0, 2, 2, 2],
        [3, 3, 1, 3, 2, 0, 2, 2],
        [3, 3, 3, 3, 2, 2, 0, 0],
        [3, 3, 3, 3, 2, 2, 0, 0],
    ];
    for a in 0..8 {
        for b in 0..8 {
            assert_eq!(
                prep.mismatches(a, b),
                expected[a as usize][b as usize],
                "t{} t{}",
                a + 1,
                b + 1
            );
        }
    }
}

#[test]
fn utilities_of_the_intermediate_clusterings() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    assert!(close(utility_of(&prep, &[]), 3.0));
    assert!(close(utility_of(&prep, &[&[1, 2]]), 4.0));
    assert!(close(utility_of(&prep, &[&[7, 8]]), 4.0));
    assert!(close(utility_of(&prep, &[&[4, 5]]), 3.5));
    assert!(close(utility_of(&prep, &[&[3, 4]]), 4.0)); // continuous mode [GAP-1]
    assert!(close(
        utility_of(&prep, &[&[1, 2], &[3, 4], &[5, 6], &[7, 8]]),
        5.5
    )); // R'
    assert!(close(
        utility_of(&prep, &[&[1, 2], &[3, 6], &[4, 5], &[7, 8]]),
        6.0
    )); // R''
    let exact = prepared(&ex, &input, PreserveMode::Exact);
    assert!(close(utility_of(&exact, &[&[3, 4]]), 3.5));
    assert!(close(utility_of(&exact, &[&[1, 2]]), 4.0));
}

#[test]
fn incremental_scores_equal_the_definitions_on_the_example() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    let mut nodes = Vec::new();
    let mut pace = Pace::new(&NoControl);
    let mut clusters = Cluster::singletons(&prep, false, &mut pace).expect("not cancelled");
    let mut scores = Scores::new(&prep, &clusters, &mut pace).expect("not cancelled");
    assert!(close(scores.total, 3.0));
    // candidate C_{3,4}: +1.0; candidate C_{4,5}: +0.5
    prep.lca(&[2, 3], &mut nodes);
    let (du, _) = scores.evaluate(&prep, &clusters, &[2, 3], &[(&[2, 3], &nodes)]);
    assert!(close(du, 1.0));
    prep.lca(&[3, 4], &mut nodes);
    let (du, _) = scores.evaluate(&prep, &clusters, &[3, 4], &[(&[3, 4], &nodes)]);
    assert!(close(du, 0.5));
    // commit an unsealed pair {3,4} under k = 2 would seal; commit {1,2} sealed, then {7,8}
    for pair in [[0u32, 1], [6, 7]] {
        prep.lca(&pair, &mut nodes);
        for &r in &pair {
            clusters[r as usize].alive = false;
        }
        clusters.push(Cluster {
            members: pair.to_vec(),
            nodes: nodes.clone(),
            sealed: true,
            alive: true,
        });
        let id = clusters.len() as u32 - 1;
        scores
            .apply(&prep, &clusters, &pair, &[id], &mut pace)
            .expect("not cancelled");
    }
    assert!(close(scores.total, 5.0));
    assert_eq!(scores.exact, 4);
    let (naive, exact) = naive_utility(
        &prep,
        clusters
            .iter()
            .filter(|c| c.alive)
            .map(|c| (c.members.as_slice(), c.nodes.as_slice())),
    );
    assert!(close(naive, scores.total));
    assert_eq!(exact, scores.exact);
}

fn published(ex: &Example, groups: &[&[u32]]) -> (f64, f64, usize) {
    let input = ex.input();
    let prep = prepared(ex, &input, PreserveMode::Continuous);
    let clusters: Vec<Vec<u32>> = groups
        .iter()
        .map(|g| g.iter().map(|r| r - 1).collect())
        .collect();
    let m = measure(&prep, &clusters, &mut Pace::new(&NoControl)).expect("not cancelled");
    (m.loss, m.utility, m.preserved)
}

#[test]
fn dependency_loss_of_the_example_tables() {
    let ex = Example::new();
    let identity: Vec<Vec<u32>> = (1..=8).map(|r| vec![r]).collect();
    let identity: Vec<&[u32]> = identity.iter().map(|v| v.as_slice()).collect();
    assert!(close(published(&ex, &identity).0, 0.0));
    let r1 = published(&ex, &[&[1, 2], &[3, 4], &[5, 6], &[7, 8]]);
    assert!(close(r1.0, 0.5) && close(r1.1, 5.5) && r1.2 == 4);
    let r2 = published(&ex, &[&[1, 2], &[3, 6], &[4, 5], &[7, 8]]);
    assert!(close(r2.0, 0.0) && close(r2.1, 6.0) && r2.2 == 6);
    // everything `*`: 4 PC→PRV instances cost 1, the 2 DIAG→MED instances 0.5
    assert!(close(published(&ex, &[&[1, 2, 3, 4, 5, 6, 7, 8]]).0, 5.0));
}

fn groups_of(result: &ClusteringResult) -> Vec<Vec<u32>> {
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); result.recoding.groups()];
    for (r, &g) in result.recoding.group_of().iter().enumerate() {
        if g != SUPPRESSED_GROUP {
            groups[g as usize].push(r as u32 + 1);
        }
    }
    groups.sort();
    groups
}

const TABLE_19: [[u32; 2]; 4] = [[1, 2], [3, 6], [4, 5], [7, 8]];

fn expect_table_19(result: &ClusteringResult) {
    assert_eq!(
        groups_of(result),
        TABLE_19.iter().map(|g| g.to_vec()).collect::<Vec<_>>()
    );
    let r = &result.report;
    assert!(close(r.utility, 6.0) && close(r.dependency_loss, 0.0));
    assert_eq!(
        (
            r.dependency_instances,
            r.instances_preserved,
            r.leftovers_suppressed
        ),
        (6, 6, 0)
    );
    // DIAG → MED on the published rows: osteoarthritis → {ibuprofen, *}, seizure → {*, diazepam}; `*`
    // covers the other value, so no published value contradicts another, as Δ = 0 says
    assert_eq!(
        (
            r.fd_violations_input,
            r.fd_violations_output,
            r.fd_violations_introduced
        ),
        (0, 0, 0)
    );
}

#[test]
fn pair_enum_reproduces_table_19() {
    let ex = Example::new();
    let base = PairEnumOptions {
        k: 2,
        neighbours: None,
        ..PairEnumOptions::default()
    };
    for incremental in [true, false] {
        let o = PairEnumOptions {
            incremental,
            ..base.clone()
        };
        expect_table_19(&pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap());
    }
    // exact-match mode reproduces it without the secondary tie-break
    let o = PairEnumOptions {
        mode: PreserveMode::Exact,
        prefer_exact: false,
        ..base.clone()
    };
    expect_table_19(&pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap());
    // with neighbour pruning (every cluster is a neighbour here)
    let o = PairEnumOptions {
        neighbours: Some(8),
        ..base.clone()
    };
    expect_table_19(&pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap());
    // continuous distance with first-wins ties alone ends at R' (note [GAP-1])
    let o = PairEnumOptions {
        prefer_exact: false,
        ..base
    };
    let result = pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap();
    assert_eq!(
        groups_of(&result),
        vec![vec![1, 2], vec![3, 4], vec![5, 6], vec![7, 8]]
    );
    assert!(close(result.report.utility, 5.5) && close(result.report.dependency_loss, 0.5));
}

#[test]
fn pair_enum_output_cells_are_the_final_table() {
    let ex = Example::new();
    let o = PairEnumOptions {
        k: 2,
        neighbours: None,
        ..PairEnumOptions::default()
    };
    let result = pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap();
    let rec = &result.recoding;
    // m3 = J5B QC * (t3 with t6): PC and PRV stay, MED is `*`
    let cell = |row: usize, j: usize| match rec.cell_of_record(row, j) {
        Some(RecodedCell::Node { level, label }) => ex.maps[j]
            .hierarchy()
            .labels(level as usize)
            .value(label)
            .to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!([cell(2, 0), cell(2, 1), cell(2, 2)], ["J5B", "QC", "*"]);
    assert_eq!(
        [cell(0, 0), cell(0, 1), cell(0, 2)],
        ["V6J", "BC", "ibuprofen"]
    );
    assert_eq!(
        [cell(6, 0), cell(6, 1), cell(6, 2)],
        ["R7A", "MB", "diazepam"]
    );
}

#[test]
fn k_assemble_follows_the_thesis_trace() {
    let ex = Example::new();
    let o = KAssembleOptions {
        k: 2,
        pool: 2,
        ..KAssembleOptions::default()
    };
    // seeds t1, t4 then t5, t7, then any
    let result = assemble(
        &ex.input(),
        &ex.fds(),
        &o,
        &NoControl,
        &[vec![0, 3], vec![4, 6]],
    )
    .unwrap();
    expect_table_19(&result);
    // C_1 beats C_4: utility 4 against 3.5
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    assert!(utility_of(&prep, &[&[1, 2]]) > utility_of(&prep, &[&[4, 5]]));
    // round 2: t5 + t4 gives 4.5, t7 + t8 gives 5.0
    assert!(close(utility_of(&prep, &[&[1, 2], &[4, 5]]), 4.5));
    assert!(close(utility_of(&prep, &[&[1, 2], &[7, 8]]), 5.0));
    // round 3: either remaining cluster gives 5.5
    assert!(close(utility_of(&prep, &[&[1, 2], &[7, 8], &[3, 6]]), 5.5));
    assert!(close(utility_of(&prep, &[&[1, 2], &[7, 8], &[4, 5]]), 5.5));
}

#[test]
fn k_assemble_keeps_every_instance_for_any_seed() {
    let ex = Example::new();
    for seed in 0..40 {
        for pool in 1..=4 {
            for mode in [PreserveMode::Continuous, PreserveMode::Exact] {
                let o = KAssembleOptions {
                    k: 2,
                    pool,
                    seed,
                    mode,
                    ..KAssembleOptions::default()
                };
                expect_table_19(&k_assemble(&ex.input(), &ex.fds(), &o, &NoControl).unwrap());
            }
        }
    }
}

#[test]
fn edge_cases_too_few_records_no_dependencies_k_one_and_remainders() {
    let ex = Example::new();
    // N < k: everything suppressed
    let o = PairEnumOptions {
        k: 9,
        neighbours: None,
        ..PairEnumOptions::default()
    };
    let r = pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap();
    assert_eq!((r.report.clusters, r.report.leftovers_suppressed), (0, 8));
    assert!(close(r.report.dependency_loss, 6.0));
    // no dependencies: still clusters (the first candidate is always taken, [GAP-7])
    let o = PairEnumOptions {
        k: 2,
        neighbours: None,
        ..PairEnumOptions::default()
    };
    let r = pair_enum(&ex.input(), &[], &o, &NoControl).unwrap();
    assert_eq!((r.report.clusters, r.report.dependency_instances), (4, 0));
    // k = 1: identity
    let o = KAssembleOptions {
        k: 1,
        ..KAssembleOptions::default()
    };
    let r = k_assemble(&ex.input(), &ex.fds(), &o, &NoControl).unwrap();
    assert_eq!(r.report.clusters, 8);
    assert!(close(r.report.dependency_loss, 0.0));
    // N mod k = 2 with k = 3: two records suppressed
    let o = KAssembleOptions {
        k: 3,
        ..KAssembleOptions::default()
    };
    let r = k_assemble(&ex.input(), &ex.fds(), &o, &NoControl).unwrap();
    assert_eq!((r.report.clusters, r.report.leftovers_suppressed), (2, 2));
    let o = PairEnumOptions {
        k: 3,
        ..PairEnumOptions::default()
    };
    let r = pair_enum(&ex.input(), &ex.fds(), &o, &NoControl).unwrap();
    assert_eq!((r.report.clusters, r.report.leftovers_suppressed), (2, 2));
    // k = 0 and ordered quasi-identifiers are refused
    let o = PairEnumOptions {
        k: 0,
        ..PairEnumOptions::default()
    };
    assert!(matches!(
        pair_enum(&ex.input(), &ex.fds(), &o, &NoControl),
        Err(CoreError::InvalidParameter { .. })
    ));
}

#[test]
fn a_constant_attribute_has_distance_zero_to_its_ancestors() {
    let rows: Vec<Vec<&str>> = vec![vec!["a"], vec!["a"], vec!["a"]];
    let table = Table::from_rows(&["c"], &rows);
    let h = Hierarchy::from_rows(&[vec!["a", "ab", "*"], vec!["b", "ab", "*"]]).unwrap();
    let map = GeneralizationMap::bind(h, table.column(0)).unwrap();
    let input = LocalInput {
        rows: 3,
        quasi_identifiers: vec![LocalAttribute {
            name: "c",
            codes: &table.column(0).codes,
            distinct: 1,
            domain: Domain::Hierarchy(&map),
        }],
        sensitive: vec![],
    };
    let prep = Prepared::new(&input, &[], 2, PreserveMode::Continuous).unwrap();
    assert!(close(
        prep.entropy
            .leaf_to_value(0, &map, PreserveMode::Continuous, 0, 2, 0),
        0.0
    ));
}

#[test]
fn ordered_quasi_identifiers_are_refused() {
    let ex = Example::new();
    let order = crate::core::local::OrderedDomain::numeric(vec![1.0, 2.0, 3.0, 4.0]);
    let mut input = ex.input();
    input.quasi_identifiers[0].domain = Domain::Ordered(&order);
    let err = k_member(&input, &[], &KMemberOptions::default(), &NoControl).unwrap_err();
    assert!(matches!(
        err,
        CoreError::InvalidParameter {
            name: "quasi_identifiers",
            ..
        }
    ));
}

#[test]
fn baselines_cluster_the_example_and_report_dependency_loss() {
    let ex = Example::new();
    let r = k_member(
        &ex.input(),
        &ex.fds(),
        &KMemberOptions { k: 2, seed: 1 },
        &NoControl,
    )
    .unwrap();
    assert!(r.recoding.group_sizes().iter().all(|&s| s >= 2));
    assert_eq!(r.report.leftovers_suppressed, 0);
    assert_eq!(r.report.dependency_instances, 6);
    let r = top_down(
        &ex.input(),
        &ex.fds(),
        &TopDownOptions { k: 3, seed: 1 },
        &NoControl,
    )
    .unwrap();
    assert!(r.recoding.group_sizes().iter().all(|&s| s >= 3));
    assert_eq!(r.report.leftovers_suppressed, 0);
    // R' as clusters introduces no violation: [J,K,L] → Central Canada only
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    let clusters = vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]];
    assert_eq!(
        prep.gamma
            .output_violations(&prep, &clusters, &mut Pace::new(&NoControl))
            .expect("not cancelled"),
        0
    );
    // one cluster {t1, t3}: PC `*` maps to BC and... the rest stay ground
    let clusters = vec![vec![0, 2], vec![1, 3], vec![4, 5, 6, 7]];
    // PC: * → {BC, QC, ON, MB...}: published PC `*` with PRV `*`; [J,K,L]? none
    // group {t1,t3}: PC *, PRV *; {t2,t4}: PC *, PRV *; {t5..t8}: PC *, PRV *: one LHS, one RHS
    assert_eq!(
        prep.gamma
            .output_violations(&prep, &clusters, &mut Pace::new(&NoControl))
            .expect("not cancelled"),
        0
    );
}

#[test]
fn output_violations_count_contradicting_right_values_only() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    // {t3, t5} publishes [J,K,L], Central Canada, *; {t4} K2H ON ibuprofen; {t6} J5B QC diazepam.
    // PC → PRV: [J,K,L] → CC, K2H → ON, J5B → QC. DIAG → MED: osteoarthritis → {*, ibuprofen} and
    // seizure → {*, diazepam}: `*` covers the other value, so nothing contradicts.
    for clusters in [
        vec![vec![2, 4], vec![3], vec![5]],
        vec![vec![0], vec![2, 4]],
    ] {
        assert_eq!(
            prep.gamma
                .output_violations(&prep, &clusters, &mut Pace::new(&NoControl))
                .expect("not cancelled"),
            0
        );
    }
    // pc → prv on two flat hierarchies: {J5B QC, Y1Y QC} and {K2H ON, X9Z ON} both publish pc `*`, with
    // QC and ON, which contradict; pairing the records across provinces generalizes prv too
    let rows: Vec<Vec<&str>> = vec![
        vec!["J5B", "QC"],
        vec!["Y1Y", "QC"],
        vec!["K2H", "ON"],
        vec!["X9Z", "ON"],
    ];
    let table = Table::from_rows(&["pc", "prv"], &rows);
    let flat = |values: &[&str]| {
        let rows: Vec<Vec<&str>> = values.iter().map(|v| vec![*v, "*"]).collect();
        Hierarchy::from_rows(&rows).unwrap()
    };
    let maps = [
        GeneralizationMap::bind(flat(&["J5B", "Y1Y", "K2H", "X9Z"]), table.column(0)).unwrap(),
        GeneralizationMap::bind(flat(&["QC", "ON"]), table.column(1)).unwrap(),
    ];
    let names = ["pc", "prv"];
    let input = LocalInput {
        rows: 4,
        quasi_identifiers: (0..2)
            .map(|j| LocalAttribute {
                name: names[j],
                codes: &table.column(j).codes,
                distinct: table.column(j).dictionary.len(),
                domain: Domain::Hierarchy(&maps[j]),
            })
            .collect(),
        sensitive: vec![],
    };
    let fd = vec![FunctionalDependency {
        lhs: vec![FdAttribute::QuasiIdentifier(0)],
        rhs: vec![FdAttribute::QuasiIdentifier(1)],
    }];
    let prep = Prepared::new(&input, &fd, 2, PreserveMode::Continuous).unwrap();
    let count = |clusters: &[Vec<u32>]| {
        prep.gamma
            .output_violations(&prep, clusters, &mut Pace::new(&NoControl))
            .expect("not cancelled")
    };
    assert_eq!(count(&[vec![0, 1], vec![2, 3]]), 1);
    assert_eq!(count(&[vec![0, 2], vec![1, 3]]), 0);
    assert_eq!(count(&[vec![0, 2], vec![1], vec![3]]), 0);
    assert_eq!(
        prep.gamma
            .input_violations(&mut Pace::new(&NoControl))
            .expect("not cancelled"),
        0
    );
}

#[test]
fn cancellation_stops_every_algorithm_and_progress_counts_clustered_records() {
    use crate::core::control::{CancelFlag, Control, Phase, Progress};
    use std::sync::Mutex;
    let ex = Example::new();
    let flag = CancelFlag::default();
    flag.cancel();
    let k = 2;
    assert_eq!(
        pair_enum(
            &ex.input(),
            &ex.fds(),
            &PairEnumOptions {
                k,
                ..Default::default()
            },
            &flag
        )
        .unwrap_err(),
        CoreError::Cancelled
    );
    assert_eq!(
        k_assemble(
            &ex.input(),
            &ex.fds(),
            &KAssembleOptions {
                k,
                ..Default::default()
            },
            &flag
        )
        .unwrap_err(),
        CoreError::Cancelled
    );
    assert_eq!(
        k_member(
            &ex.input(),
            &ex.fds(),
            &KMemberOptions { k, seed: 0 },
            &flag
        )
        .unwrap_err(),
        CoreError::Cancelled
    );
    assert_eq!(
        top_down(
            &ex.input(),
            &ex.fds(),
            &TopDownOptions { k, seed: 0 },
            &flag
        )
        .unwrap_err(),
        CoreError::Cancelled
    );
    struct Log(Mutex<Vec<Progress>>);
    impl Control for Log {
        fn is_cancelled(&self) -> bool {
            false
        }
        fn report(&self, p: Progress) {
            self.0.lock().unwrap().push(p);
        }
    }
    let log = Log(Mutex::new(Vec::new()));
    k_assemble(
        &ex.input(),
        &ex.fds(),
        &KAssembleOptions {
            k,
            ..Default::default()
        },
        &log,
    )
    .unwrap();
    let seen: Vec<u64> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!((p.phase, p.total), (Phase::Clustering, 8));
            p.done
        })
        .collect();
    assert_eq!(seen, vec![0, 2, 4, 6, 8]);
}
