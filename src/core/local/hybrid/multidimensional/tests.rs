//! Tests of M-Hybrid: hand-computed tables for distribution and completion cuts and the budget, and
//! property tests on random tables against invariants checked independently of the cut search (every
//! group k-anonymous, uncovered cells recounted within the budget, every cell inside Mondrian's, p = 0
//! is Mondrian).

use proptest::prelude::*;

use super::*;
use crate::core::control::{CancelFlag, NoControl};
use crate::core::data::{GeneralizationMap, Table};
use crate::core::local::hybrid::Completion;
use crate::core::local::mondrian::tests::{binary_hierarchy, numeric};
use crate::core::local::{Domain, LocalAttribute, OrderedDomain, RecodedCell};
use crate::core::secret_rng::SecretKey;

fn ages(values: &[&str]) -> Table {
    let rows: Vec<Vec<&str>> = values.iter().map(|&v| vec![v]).collect();
    Table::from_rows(&["age"], &rows)
}

fn one_column<'a>(table: &'a Table, order: &'a OrderedDomain) -> LocalInput<'a> {
    LocalInput {
        rows: table.row_count(),
        quasi_identifiers: vec![LocalAttribute {
            name: "age",
            codes: &table.column(0).codes,
            distinct: table.column(0).dictionary.len(),
            domain: Domain::Ordered(order),
        }],
        sensitive: vec![],
    }
}

/// M-Hybrid on a table of ages (an ordered numeric quasi-identifier).
fn run_ages(values: &[&str], k: u64, options: &HybridOptions) -> MHybridResult {
    let table = ages(values);
    let order = numeric(&table, 0);
    m_hybrid(&one_column(&table, &order), k, options, &NoControl).unwrap()
}

fn options(limit: f64, mode: HybridMode, completion: Completion) -> HybridOptions {
    HybridOptions {
        relocation_limit: limit,
        alpha: None,
        mode,
        key: SecretKey::from_u64(7),
        completion,
    }
}

fn deterministic(limit: f64) -> HybridOptions {
    options(limit, HybridMode::Deterministic, Completion::MoreThan)
}

/// The rank range published for every record, in record order.
fn ranges(result: &MHybridResult, rows: usize) -> Vec<(u32, u32)> {
    (0..rows)
        .map(|r| match result.recoding.cell_of_record(r, 0) {
            Some(RecodedCell::Range { low, high }) => (low, high),
            other => panic!("record {r}: {other:?}"),
        })
        .collect()
}

// Ages 20 21 22 40 41 42 43 90 (ranks 0..=7), k = 3; the domain is 70 wide. Strict Mondrian cuts at the
// lower median 40 into {20 21 22 40} [20, 40] and {41 42 43 90} [41, 90] and can cut neither again (every
// median cut leaves 2 records), so its loss is (4·20 + 4·49) / (8·70) = 276/560.
// Hybrid cuts (a side of 1 record moves into the other 3): {40} into [20, 22] gains (80 − 8)/70 for 1
// cell, {20} into [21, 40] gains 4/70, {90} into [41, 43] gains (196 − 8)/70, {41} into [42, 90] 4/70.
// With one cell (p = 1/8) the best gain per cell wins: 90 publishes [41, 43]; loss (80 + 8)/560. With two
// cells 40 also publishes [20, 22]: loss (8 + 8)/560.
const SPREAD: [&str; 8] = ["20", "21", "22", "40", "41", "42", "43", "90"];

#[test]
fn without_budget_the_output_is_mondrian() {
    let result = run_ages(&SPREAD, 3, &deterministic(0.0));
    assert_eq!(
        ranges(&result, 8),
        [
            (0, 3),
            (0, 3),
            (0, 3),
            (0, 3),
            (4, 7),
            (4, 7),
            (4, 7),
            (4, 7)
        ]
    );
    let report = &result.report;
    assert!((report.loss - 276.0 / 560.0).abs() < 1e-12);
    assert!((report.base_loss - 276.0 / 560.0).abs() < 1e-12);
    assert_eq!(report.cells_changed, 0);
    assert_eq!(report.budget, 0);
    assert!(report.truthful);
    assert_eq!((report.groups, report.base_groups), (2, 2));
}

#[test]
fn one_cell_goes_to_the_cut_of_best_gain_per_cell() {
    let result = run_ages(&SPREAD, 3, &deterministic(0.125));
    assert_eq!(
        ranges(&result, 8),
        [
            (0, 3),
            (0, 3),
            (0, 3),
            (0, 3),
            (4, 6),
            (4, 6),
            (4, 6),
            (4, 6)
        ]
    );
    let report = &result.report;
    assert_eq!(report.budget, 1);
    assert_eq!(report.cells_changed, 1);
    assert_eq!(report.rows_relocated, 1);
    assert_eq!((report.distributions, report.completions), (1, 0));
    assert!((report.loss - 88.0 / 560.0).abs() < 1e-12);
    assert!(!report.truthful);
}

#[test]
fn two_cells_move_both_outliers() {
    let result = run_ages(&SPREAD, 3, &deterministic(0.25));
    assert_eq!(
        ranges(&result, 8),
        [
            (0, 2),
            (0, 2),
            (0, 2),
            (0, 2),
            (4, 6),
            (4, 6),
            (4, 6),
            (4, 6)
        ]
    );
    assert_eq!(result.report.cells_changed, 2);
    assert!((result.report.loss - 16.0 / 560.0).abs() < 1e-12);
}

// Ages 10 10 10 20 20 20 20 20 20, k = 4: Mondrian's median cut leaves {10 10 10} below k, so one group
// [10, 20] of loss 1. Completion: the three 10s take one 20 (the lowest record index among equally cheap
// records), publishing [10, 10]; the five other 20s publish [20, 20]. Loss 0 for one changed cell.
const TIED: [&str; 9] = ["10", "10", "10", "20", "20", "20", "20", "20", "20"];

#[test]
fn completion_gives_a_nearly_full_side_the_records_it_lacks() {
    let result = run_ages(&TIED, 4, &deterministic(0.2));
    assert_eq!(
        ranges(&result, 9),
        [
            (0, 0),
            (0, 0),
            (0, 0),
            (0, 0),
            (1, 1),
            (1, 1),
            (1, 1),
            (1, 1),
            (1, 1)
        ]
    );
    let report = &result.report;
    assert!((report.base_loss - 1.0).abs() < 1e-12);
    assert!(report.loss.abs() < 1e-12);
    assert_eq!((report.cells_changed, report.rows_relocated), (1, 1));
    assert_eq!((report.distributions, report.completions), (0, 1));
    assert_eq!(result.recoding.group_sizes(), vec![5, 4]);
}

// With five 20s the source would keep exactly k = 4: the paper's rule (more than 2k − |g| = 5 records)
// refuses, the `at_least` rule allows it.
#[test]
fn completion_sources_follow_the_completion_rule() {
    let strict = run_ages(&TIED[..8], 4, &deterministic(0.5));
    assert_eq!(strict.report.completions, 0);
    assert!((strict.report.loss - 1.0).abs() < 1e-12);
    let loose = options(0.5, HybridMode::Deterministic, Completion::AtLeast);
    let loose = run_ages(&TIED[..8], 4, &loose);
    assert_eq!(loose.report.completions, 1);
    assert_eq!(loose.recoding.group_sizes(), vec![4, 4]);
}

#[test]
fn errors_are_specific() {
    let table = ages(&SPREAD);
    let order = numeric(&table, 0);
    let input = one_column(&table, &order);
    let mut with_alpha = deterministic(0.1);
    with_alpha.alpha = Some(0.05);
    assert!(matches!(
        m_hybrid(&input, 3, &with_alpha, &NoControl),
        Err(CoreError::InvalidParameter { name: "alpha", .. })
    ));
    assert!(matches!(
        m_hybrid(&input, 3, &deterministic(1.5), &NoControl),
        Err(CoreError::InvalidParameter {
            name: "relocation_limit",
            ..
        })
    ));
    assert!(matches!(
        m_hybrid(&input, 9, &deterministic(0.1), &NoControl),
        Err(CoreError::TooFewRecords { .. })
    ));
    let flag = CancelFlag::default();
    flag.cancel();
    assert_eq!(
        m_hybrid(&input, 3, &deterministic(0.1), &flag),
        Err(CoreError::Cancelled)
    );
}

/// Whether `inner` lies inside `outer` on one quasi-identifier.
fn nested(inner: RecodedCell, outer: RecodedCell, domain: Domain<'_>) -> bool {
    match (inner, outer, domain) {
        (
            RecodedCell::Range { low, high },
            RecodedCell::Range {
                low: outer_low,
                high: outer_high,
            },
            _,
        ) => outer_low <= low && high <= outer_high,
        (
            RecodedCell::Node { level, label },
            RecodedCell::Node {
                level: outer_level,
                label: outer_label,
            },
            Domain::Hierarchy(map),
        ) => {
            level <= outer_level
                && (0..map.codes(0).len()).any(|code| {
                    map.codes(level as usize)[code] == label
                        && map.codes(outer_level as usize)[code] == outer_label
                })
        }
        _ => false,
    }
}

/// Random tables: 1–3 quasi-identifiers with values in 0..8 (skewed towards 0 so ties and outliers
/// occur), each ordered or with a hierarchy of top level 1..=3; 1–60 records; k in 2..=5; a limit of
/// 0, 5 %, 20 % or 100 %; either mode and completion rule.
#[allow(clippy::type_complexity)]
fn case() -> impl Strategy<Value = (Vec<Vec<u32>>, Vec<Option<usize>>, u64, f64, bool, bool)> {
    (1usize..=3, 1usize..=60).prop_flat_map(|(q, n)| {
        (
            prop::collection::vec(
                prop::collection::vec(prop_oneof![3 => Just(0u32), 5 => 0u32..8], q),
                n,
            ),
            prop::collection::vec(prop::option::of(1usize..=3), q),
            2u64..=5,
            prop_oneof![Just(0.0), Just(0.05), Just(0.2), Just(1.0)],
            any::<bool>(),
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn outputs_are_k_anonymous_within_budget_and_inside_mondrian(
        (records, kinds, k, limit, randomized, at_least) in case()
    ) {
        let q = kinds.len();
        let n = records.len();
        let header: Vec<String> = (0..q).map(|j| format!("c{j}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let text: Vec<Vec<String>> = records
            .iter()
            .map(|r| r.iter().map(|v| v.to_string()).collect())
            .collect();
        let text: Vec<Vec<&str>> = text.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
        let table = Table::from_rows(&header, &text);
        let maps: Vec<Option<GeneralizationMap>> = kinds
            .iter()
            .enumerate()
            .map(|(j, kind)| kind.map(|top| GeneralizationMap::bind(binary_hierarchy(top), table.column(j)).unwrap()))
            .collect();
        let orders: Vec<OrderedDomain> = (0..q).map(|j| numeric(&table, j)).collect();
        let input = LocalInput {
            rows: n,
            quasi_identifiers: (0..q)
                .map(|j| LocalAttribute {
                    name: "qi",
                    codes: &table.column(j).codes,
                    distinct: table.column(j).dictionary.len(),
                    domain: match &maps[j] {
                        Some(map) => Domain::Hierarchy(map),
                        None => Domain::Ordered(&orders[j]),
                    },
                })
                .collect(),
            sensitive: vec![],
        };
        let mode = if randomized { HybridMode::Randomized } else { HybridMode::Deterministic };
        let completion = if at_least { Completion::AtLeast } else { Completion::MoreThan };
        let run = m_hybrid(&input, k, &options(limit, mode, completion), &NoControl);
        if (n as u64) < k {
            let too_few = matches!(run, Err(CoreError::TooFewRecords { .. }));
            prop_assert!(too_few);
            return Ok(());
        }
        let result = run.unwrap();
        let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
        let base = mondrian(&input, &models, &MondrianOptions::default(), &NoControl).unwrap();
        let recoding = &result.recoding;
        let report = &result.report;
        // every record once, in a group of at least k
        prop_assert_eq!(recoding.group_of().len(), n);
        prop_assert!(recoding.group_sizes().iter().all(|&s| s >= k));
        let mut order = recoding.order().to_vec();
        order.sort_unstable();
        prop_assert_eq!(order, (0..n as u32).collect::<Vec<_>>());
        // uncovered cells recounted from the published cells
        let mut uncovered = 0u64;
        let mut moved_rows = 0u64;
        for r in 0..n {
            let mut missed = false;
            for (j, attribute) in input.quasi_identifiers.iter().enumerate() {
                let cell = recoding.cell_of_record(r, j).unwrap();
                if !cell.covers(attribute.domain, attribute.codes[r]) {
                    uncovered += 1;
                    missed = true;
                }
                // never more general than Mondrian's cell
                let outer = base.recoding.cell_of_record(r, j).unwrap();
                prop_assert!(nested(cell, outer, attribute.domain), "record {} qi {}", r, j);
            }
            moved_rows += u64::from(missed);
        }
        prop_assert_eq!(uncovered, report.cells_changed);
        prop_assert!(report.cells_changed <= report.budget);
        prop_assert_eq!(report.budget, (limit * (n * q) as f64 + 1e-9).floor() as u64);
        prop_assert!(moved_rows <= report.rows_relocated);
        prop_assert!(report.loss <= report.base_loss + 1e-12);
        prop_assert_eq!(report.truthful, uncovered == 0);
        if report.budget == 0 {
            prop_assert_eq!(recoding.group_of(), base.recoding.group_of());
            for g in 0..recoding.groups() as u32 {
                for j in 0..q {
                    prop_assert_eq!(recoding.cell(g, j), base.recoding.cell(g, j));
                }
            }
        }
        // deterministic runs repeat
        if !randomized {
            let again = m_hybrid(&input, k, &options(limit, mode, completion), &NoControl).unwrap();
            prop_assert_eq!(&again, &result);
        }
    }
}
