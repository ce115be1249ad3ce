//! Tests of hybrid k-anonymization: the worked example of Nergiz et al. (2013) Table 1 with the values
//! the implementation note (§4) derives by hand, node-level CreateHybrid cases T1–T8, and properties on
//! random small tables against an independent exhaustive search.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::search::{projection_mask, Projections};
use super::*;
use crate::core::control::{CancelFlag, NoControl};
use crate::core::data::{Hierarchy, Table};
use crate::core::local::{LocalAttribute, OrderedDomain, RecodedCell};

/// A table with hierarchies for every column but the last (the sensitive one).
struct Fixture {
    table: Table,
    maps: Vec<GeneralizationMap>,
}

impl Fixture {
    fn new(header: &[&str], rows: &[Vec<&str>], hierarchies: Vec<Vec<Vec<String>>>) -> Self {
        let table = Table::from_rows(header, rows);
        let maps = hierarchies
            .into_iter()
            .enumerate()
            .map(|(j, rows)| {
                GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(j))
                    .unwrap()
            })
            .collect();
        Self { table, maps }
    }

    fn input(&self) -> LocalInput<'_> {
        LocalInput {
            rows: self.table.row_count(),
            quasi_identifiers: self
                .maps
                .iter()
                .enumerate()
                .map(|(j, map)| LocalAttribute {
                    name: "qi",
                    codes: &self.table.column(j).codes,
                    distinct: self.table.column(j).dictionary.len(),
                    domain: Domain::Hierarchy(map),
                })
                .collect(),
            sensitive: vec![],
        }
    }

    /// The published label text of record `row`, quasi-identifier `j`.
    fn published(&self, result: &HybridResult, row: usize, j: usize) -> String {
        match result.recoding.cell_of_record(row, j) {
            Some(RecodedCell::Node { level, label }) => self.maps[j]
                .hierarchy()
                .labels(level as usize)
                .value(label)
                .to_string(),
            other => panic!("{other:?}"),
        }
    }
}

/// Table 1 of the paper with the note's DGH-A (§4): ages 11..50 in 10- and 20-year bands, the seven
/// nations of the table under regions and continents, the six zips under 4790*/479**/47*** etc.
fn paper_table() -> Fixture {
    let rows = vec![
        vec!["12", "Greece", "47906", "13K"],
        vec!["19", "Turkey", "47907", "15K"],
        vec!["17", "Greece", "47907", "28K"],
        vec!["23", "Spain", "49703", "14K"],
        vec!["38", "Brazil", "49705", "18K"],
        vec!["33", "Peru", "49812", "35K"],
        vec!["41", "USA", "49001", "14K"],
        vec!["43", "Canada", "49001", "25K"],
        vec!["48", "Canada", "49001", "29K"],
    ];
    let ages = (11..=50)
        .map(|a: u32| {
            let band = (a - 1) / 10;
            let wide = if a <= 30 { "11-30" } else { "31-50" };
            vec![
                a.to_string(),
                format!("{}-{}", band * 10 + 1, band * 10 + 10),
                wide.to_string(),
                "*".to_string(),
            ]
        })
        .collect();
    let nation = |n: &str, r: &str, c: &str| vec![n.into(), r.into(), c.into(), "*".into()];
    let nations = vec![
        nation("Greece", "E. EU", "EU"),
        nation("Turkey", "E. EU", "EU"),
        nation("Spain", "W. EU", "EU"),
        nation("Brazil", "S. AM", "AM"),
        nation("Peru", "S. AM", "AM"),
        nation("USA", "N. AM", "AM"),
        nation("Canada", "N. AM", "AM"),
    ];
    let zip = |z: &str| {
        vec![
            z.to_string(),
            format!("{}*", &z[..4]),
            format!("{}**", &z[..3]),
            format!("{}***", &z[..2]),
            "4****".to_string(),
            "*****".to_string(),
        ]
    };
    let zips = ["47906", "47907", "49703", "49705", "49812", "49001"]
        .iter()
        .map(|z| zip(z))
        .collect();
    Fixture::new(
        &["age", "nation", "zip", "sal"],
        &rows,
        vec![ages, nations, zips],
    )
}

fn deterministic(p: f64) -> HybridOptions {
    HybridOptions {
        relocation_limit: p,
        mode: HybridMode::Deterministic,
        key: SecretKey::from_u64(11),
        ..HybridOptions::default()
    }
}

/// Groups and repair of one node of the paper table, as (sizes per canonical group, changed cells).
fn node(k: u64, p: f64, levels: &[u8]) -> Option<(Vec<u32>, u64)> {
    let fixture = paper_table();
    let input = fixture.input();
    let prepared = Prepared::new(&input, k, &deterministic(p)).unwrap();
    let (_, relocation) = prepared.evaluate(&prepared.base, levels, 0, None, &mut Vec::new());
    relocation.map(|r| (r.sizes, r.changed))
}

/// Cells published with a value that does not cover the record's original value.
fn non_covering(input: &LocalInput<'_>, result: &HybridResult) -> (u64, u64) {
    let mut cells = 0;
    let mut rows = 0;
    for r in 0..input.rows {
        let moved = (0..input.quasi_identifiers.len())
            .filter(|&j| {
                let a = &input.quasi_identifiers[j];
                !result
                    .recoding
                    .cell_of_record(r, j)
                    .is_some_and(|c| c.covers(a.domain, a.codes[r]))
            })
            .count() as u64;
        cells += moved;
        rows += u64::from(moved > 0);
    }
    (cells, rows)
}

#[test]
fn paper_example_relocates_q4_into_the_south_american_group() {
    let fixture = paper_table();
    let input = fixture.input();
    let result = hybrid(&input, 3, &deterministic(0.10), &NoControl).unwrap();
    // note §4: S-Hybrid(k=3, p=10%) picks [1,1,3] and moves q4 (2 of 27 cells)
    assert_eq!(result.levels, vec![1, 1, 3]);
    let report = &result.report;
    assert_eq!(report.budget, 2); // floor(0.1 · 9 · 3)
    assert_eq!(report.cells_total, 27);
    assert_eq!(report.cells_changed, 2);
    assert_eq!(report.rows_relocated, 1);
    assert_eq!(report.groups, 3);
    assert!(!report.truthful);
    assert!(report.statistic.is_none());
    // LM by hand: ages 9 · 9/39, nations 9 · 1/6 (all regions of two nations), zips 3 · 1/5 + 6 · 3/5
    let expected = (81.0 / 39.0 + 9.0 / 6.0 + 4.2) / 27.0;
    assert!((report.loss - expected).abs() < 1e-12);
    assert!((report.loss - 0.288_034).abs() < 1e-6);
    // q4 publishes the cells of {q5, q6}
    let groups = result.recoding.group_of();
    assert_eq!(groups[3], groups[4]);
    assert_eq!(groups[4], groups[5]);
    assert_eq!(groups[0], groups[1]);
    assert_eq!(groups[6], groups[8]);
    assert_eq!(result.recoding.group_sizes(), vec![3, 3, 3]);
    let q4: Vec<String> = (0..3).map(|j| fixture.published(&result, 3, j)).collect();
    assert_eq!(q4, vec!["31-40", "S. AM", "49***"]);
    assert_eq!(fixture.published(&result, 0, 1), "E. EU");
    assert_eq!(non_covering(&input, &result), (2, 1));
    // Sal is not part of the recoding; the output order is a permutation
    let mut order = result.recoding.order().to_vec();
    order.sort_unstable();
    assert_eq!(order, (0..9).collect::<Vec<u32>>());
}

#[test]
fn paper_example_statistic_is_one_and_a_half_at_three_degrees() {
    let fixture = paper_table();
    let input = fixture.input();
    let options = HybridOptions {
        alpha: Some(0.05),
        ..deterministic(0.10)
    };
    let result = hybrid(&input, 3, &options, &NoControl).unwrap();
    assert_eq!(result.levels, vec![1, 1, 3]);
    let statistic = result.report.statistic.unwrap();
    // note §1.7: expected (3,1,2,3), observed (3,0,3,3): X² = 1 + 1/2
    assert!((statistic.statistic - 1.5).abs() < 1e-12);
    assert_eq!(statistic.degrees_of_freedom, 3);
    assert!((statistic.critical_value - 7.815).abs() < 1e-3);
    assert!(statistic.p_value >= 0.05);
}

#[test]
fn without_relocation_the_paper_example_is_the_plain_optimum() {
    let fixture = paper_table();
    let input = fixture.input();
    let result = hybrid(&input, 3, &deterministic(0.0), &NoControl).unwrap();
    // note §4: Incognito gives [2,2,4] (ties with [2,2,5]); LM 17.217949/27
    assert_eq!(result.levels, vec![2, 2, 4]);
    let expected = (9.0 * 19.0 / 39.0 + 4.0 * 2.0 / 6.0 + 5.0 * 3.0 / 6.0 + 9.0) / 27.0;
    assert!((result.report.loss - expected).abs() < 1e-12);
    assert_eq!(result.report.cells_changed, 0);
    assert!(result.report.truthful);
    assert_eq!(non_covering(&input, &result), (0, 0));
}

#[test]
fn node_repairs_of_the_note() {
    // T1 [1,1,3]: q4 (21-30, W. EU) joins C; groups A, B, C, D in canonical order
    assert_eq!(node(3, 0.10, &[1, 1, 3]), Some((vec![3, 0, 3, 3], 2)));
    // T2 [2,2,4]: already 3-anonymous
    assert_eq!(node(3, 0.10, &[2, 2, 4]), Some((vec![4, 5], 0)));
    // T3 [2,2,3]: no nearly-full group, q4 joins the closer k-anonymous 47*** group (1 cell)
    // canonical groups: <11-30,EU,47***>, <11-30,EU,49***>, <31-50,AM,49***>
    assert_eq!(node(3, 0.10, &[2, 2, 3]), Some((vec![4, 0, 5], 1)));
    // T4 [1,2,4]: the nearly-full {q5,q6} wins over the closer k-anonymous {q1,q2,q3}
    assert_eq!(node(3, 0.10, &[1, 2, 4]), Some((vec![3, 0, 3, 3], 2)));
    // T5: 100 · 2 > 7.4 · 27, so the same move is over budget; at 7.5 % it fits
    assert_eq!(node(3, 0.074, &[1, 2, 4]), None);
    assert_eq!(node(3, 0.075, &[1, 2, 4]), Some((vec![3, 0, 3, 3], 2)));
    // T6: singletons only, nothing to join
    assert_eq!(node(3, 0.10, &[0, 3, 5]), None);
    // T7 k=4: B (q4) joins D (2 cells), then C joins A (2 · 3 cells): 8 cells, budget 8 at 30 %
    assert_eq!(node(4, 0.30, &[1, 1, 3]), Some((vec![5, 0, 0, 4], 8)));
    assert_eq!(node(4, 0.29, &[1, 1, 3]), None);
    // T8 [3,3,3] k=4: the 47*** group (3) takes one record from the 49*** group (6 > 2·4 − 3)
    assert_eq!(node(4, 0.10, &[3, 3, 3]), Some((vec![4, 5], 1)));
    // with k=5 the source would need more than 7 records
    assert_eq!(node(5, 0.10, &[3, 3, 3]), None);
}

#[test]
fn completion_returns_guests_before_moving_natives() {
    // [3,3,3] k=4 then the move is of a 49*** record; with k=3 the 47*** group (3) is already
    // 3-anonymous, so nothing moves
    assert_eq!(node(3, 0.10, &[3, 3, 3]), Some((vec![3, 6], 0)));
    // the exact-k completion rule lets a source of exactly 2k − |g| records give
    let fixture = paper_table();
    let input = fixture.input();
    let options = HybridOptions {
        completion: Completion::AtLeast,
        ..deterministic(0.10)
    };
    // k=5, [3,3,3]: 47*** (3) needs 2 records; the 49*** group has 6 < 7, still not enough
    let prepared = Prepared::new(&input, 5, &options).unwrap();
    assert!(prepared
        .evaluate(&prepared.base, &[3, 3, 3], 0, None, &mut Vec::new())
        .1
        .is_none());
    // k=4, [3,3,3]: 6 ≥ 5 either way
    let prepared = Prepared::new(&input, 4, &options).unwrap();
    let relocation = prepared
        .evaluate(&prepared.base, &[3, 3, 3], 0, None, &mut Vec::new())
        .1
        .unwrap();
    assert_eq!((relocation.sizes, relocation.changed), (vec![4, 5], 1));
}

#[test]
fn budget_is_exact_decimal_arithmetic() {
    // 50 records × 2 quasi-identifiers = 100 cells; 0.29 · 100 is 29 exactly (28.999… in binary)
    let rows: Vec<Vec<String>> = (0..50)
        .map(|i| vec![format!("{}", i % 5), "x".into()])
        .collect();
    let rows: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    let h = |values: &[&str]| -> Vec<Vec<String>> {
        values
            .iter()
            .map(|v| vec![v.to_string(), "*".to_string()])
            .collect()
    };
    let fixture = Fixture::new(
        &["a", "b"],
        &rows,
        vec![h(&["0", "1", "2", "3", "4"]), h(&["x"])],
    );
    let input = fixture.input();
    let prepared = Prepared::new(&input, 2, &deterministic(0.29)).unwrap();
    assert_eq!(prepared.limits.budget, 29);
    let prepared = Prepared::new(&input, 2, &deterministic(0.0)).unwrap();
    assert_eq!(prepared.limits.budget, 0);
}

#[test]
fn rejects_bad_parameters_and_ordered_domains() {
    let fixture = paper_table();
    let input = fixture.input();
    let invalid = |k: u64, options: HybridOptions| {
        matches!(
            hybrid(&input, k, &options, &NoControl),
            Err(CoreError::InvalidParameter { .. })
        )
    };
    assert!(invalid(0, deterministic(0.1)));
    assert!(invalid(3, deterministic(1.5)));
    assert!(invalid(3, deterministic(-0.1)));
    assert!(invalid(
        3,
        HybridOptions {
            alpha: Some(1.0),
            ..deterministic(0.1)
        }
    ));
    assert!(matches!(
        hybrid(&input, 10, &deterministic(0.1), &NoControl),
        Err(CoreError::TooFewRecords {
            needed: 10,
            rows: 9,
            ..
        })
    ));
    let order = OrderedDomain::new((0..9).collect(), None);
    let mut ordered = input.clone();
    ordered.quasi_identifiers[0].domain = Domain::Ordered(&order);
    assert!(matches!(
        hybrid(&ordered, 3, &deterministic(0.1), &NoControl),
        Err(CoreError::InvalidParameter {
            name: "quasi_identifiers",
            ..
        })
    ));
    let cancel = CancelFlag::default();
    cancel.cancel();
    assert_eq!(
        hybrid(&input, 3, &deterministic(0.1), &cancel),
        Err(CoreError::Cancelled)
    );
}

// ---- properties on random small tables ----

/// A random table: per quasi-identifier a domain size and the fan-in of every hierarchy level, then
/// records as value indices.
#[derive(Debug, Clone)]
struct Random {
    domains: Vec<(u32, Vec<u32>)>,
    records: Vec<Vec<u32>>,
}

fn random_table() -> impl Strategy<Value = Random> {
    prop::collection::vec((2u32..6, prop::collection::vec(2u32..4, 0..3)), 1..4)
        .prop_flat_map(|domains| {
            let sizes: Vec<u32> = domains.iter().map(|d| d.0).collect();
            let record = sizes.iter().map(|&s| 0..s).collect::<Vec<_>>();
            (Just(domains), prop::collection::vec(record, 4..30))
        })
        .prop_map(|(domains, records)| Random { domains, records })
}

impl Random {
    /// Value `i` of a column is `v{i}`; level l ≥ 1 groups it as `l{l}_{i / Π fan}`, the top is `*`.
    fn fixture(&self) -> Fixture {
        let q = self.domains.len();
        let mut header: Vec<String> = (0..q).map(|j| format!("c{j}")).collect();
        header.push("s".into());
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let rows: Vec<Vec<String>> = self
            .records
            .iter()
            .enumerate()
            .map(|(r, rec)| {
                let mut row: Vec<String> = rec.iter().map(|v| format!("v{v}")).collect();
                row.push(format!("s{}", r % 3));
                row
            })
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let hierarchies = self
            .domains
            .iter()
            .map(|(size, fans)| {
                (0..*size)
                    .map(|i| {
                        let mut row = vec![format!("v{i}")];
                        let mut divisor = 1;
                        for (l, fan) in fans.iter().enumerate() {
                            divisor *= fan;
                            row.push(format!("l{}_{}", l + 1, i / divisor));
                        }
                        row.push("*".to_string());
                        row
                    })
                    .collect()
            })
            .collect();
        Fixture::new(&header, &rows, hierarchies)
    }
}

/// LM of full-domain node `levels` without relocation, from label texts (not the engine's grouping),
/// or `None` when some group is smaller than k.
fn plain_loss(fixture: &Fixture, levels: &[u8], k: u64) -> Option<f64> {
    let q = fixture.maps.len();
    let n = fixture.table.row_count();
    let mut groups: BTreeMap<Vec<&str>, u64> = BTreeMap::new();
    for r in 0..n {
        let key = (0..q)
            .map(|j| fixture.maps[j].label(levels[j] as usize, fixture.table.column(j).codes[r]))
            .collect();
        *groups.entry(key).or_default() += 1;
    }
    if groups.values().any(|&s| s < k) {
        return None;
    }
    let mut total = 0.0;
    for r in 0..n {
        for (j, &level) in levels.iter().enumerate() {
            let h = fixture.maps[j].hierarchy();
            let level = level as usize;
            let label = h
                .labels(level)
                .code(fixture.maps[j].label(level, fixture.table.column(j).codes[r]));
            let all = h.leaf_count() as f64;
            if all > 1.0 {
                total += (h.leaves_under(level, label.unwrap()) as f64 - 1.0) / (all - 1.0);
            }
        }
    }
    Some(total / (n as f64 * q as f64))
}

/// The lowest plain LM over every node of the lattice.
fn exhaustive_optimum(fixture: &Fixture, k: u64) -> Option<f64> {
    let max: Vec<u8> = fixture.maps.iter().map(|m| m.max_level() as u8).collect();
    let mut best: Option<f64> = None;
    let mut levels = vec![0u8; max.len()];
    loop {
        if let Some(loss) = plain_loss(fixture, &levels, k) {
            best = Some(best.map_or(loss, |b: f64| b.min(loss)));
        }
        let mut j = 0;
        while j < max.len() && levels[j] == max[j] {
            levels[j] = 0;
            j += 1;
        }
        if j == max.len() {
            return best;
        }
        levels[j] += 1;
    }
}

/// LM of a result recomputed from its cells.
fn published_loss(fixture: &Fixture, result: &HybridResult) -> f64 {
    let q = fixture.maps.len();
    let n = fixture.table.row_count();
    let mut total = 0.0;
    for r in 0..n {
        for j in 0..q {
            let Some(RecodedCell::Node { level, label }) = result.recoding.cell_of_record(r, j)
            else {
                panic!("a hierarchy cell");
            };
            let h = fixture.maps[j].hierarchy();
            let all = h.leaf_count() as f64;
            if all > 1.0 {
                total += (h.leaves_under(level as usize, label) as f64 - 1.0) / (all - 1.0);
            }
        }
    }
    total / (n as f64 * q as f64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// With p = 0 nothing moves and the loss is the exhaustive optimum of plain generalization.
    #[test]
    fn without_relocation_equals_the_exhaustive_optimum(table in random_table(), k in 1u64..6) {
        let fixture = table.fixture();
        let input = fixture.input();
        let k = k.min(input.rows as u64);
        let result = hybrid(&input, k, &deterministic(0.0), &NoControl).unwrap();
        let optimum = exhaustive_optimum(&fixture, k).unwrap();
        prop_assert!((result.report.loss - optimum).abs() < 1e-9, "{} vs {}", result.report.loss, optimum);
        prop_assert_eq!(plain_loss(&fixture, &result.levels, k).map(|l| (l - optimum).abs() < 1e-9), Some(true));
        prop_assert_eq!(result.report.cells_changed, 0);
        prop_assert!(result.report.truthful);
    }

    /// Deterministic LM never increases as p grows, and never exceeds the p = 0 optimum.
    #[test]
    fn loss_never_worse_as_p_grows(table in random_table(), k in 2u64..6) {
        let fixture = table.fixture();
        let input = fixture.input();
        let k = k.min(input.rows as u64);
        let mut previous = f64::INFINITY;
        for p in [0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0] {
            let result = hybrid(&input, k, &deterministic(p), &NoControl).unwrap();
            prop_assert!(result.report.loss <= previous + 1e-12, "p {}: {} after {}", p, result.report.loss, previous);
            previous = result.report.loss;
        }
    }

    /// Every published group has at least k records, changes stay within the budget, the cells that
    /// do not cover their record are exactly the changed cells, the reported loss is the loss of the
    /// cells, and a fixed seed reproduces the run.
    #[test]
    fn outputs_are_k_anonymous_within_budget(
        table in random_table(),
        k in 1u64..6,
        p in prop::sample::select(vec![0.0, 0.05, 0.1, 0.3, 1.0]),
        alpha in prop::sample::select(vec![None, Some(0.01), Some(0.5)]),
        randomized in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let fixture = table.fixture();
        let input = fixture.input();
        let k = k.min(input.rows as u64);
        let options = HybridOptions {
            relocation_limit: p,
            alpha,
            mode: if randomized { HybridMode::Randomized } else { HybridMode::Deterministic },
            key: SecretKey::from_u64(seed),
            completion: Completion::MoreThan,
        };
        let result = hybrid(&input, k, &options, &NoControl).unwrap();
        let report = &result.report;
        prop_assert!(result.recoding.group_sizes().iter().all(|&s| s >= k));
        prop_assert_eq!(result.recoding.group_sizes().iter().sum::<u64>(), input.rows as u64);
        prop_assert!(report.cells_changed <= report.budget);
        prop_assert!(100 * report.cells_changed as u128 <= (p * 100.0).round() as u128 * report.cells_total as u128);
        prop_assert_eq!(non_covering(&input, &result), (report.cells_changed, report.rows_relocated));
        prop_assert_eq!(report.truthful, report.cells_changed == 0);
        prop_assert!((published_loss(&fixture, &result) - report.loss).abs() < 1e-9);
        for g in 0..result.recoding.groups() as u32 {
            for (j, &level) in result.levels.iter().enumerate() {
                let at_level = matches!(result.recoding.cell(g, j), RecodedCell::Node { level: l, .. } if l == level);
                prop_assert!(at_level);
            }
        }
        if let Some(statistic) = report.statistic {
            prop_assert!(statistic.statistic <= statistic.critical_value + 1e-9);
        }
        let again = hybrid(&input, k, &options, &NoControl).unwrap();
        prop_assert_eq!(&again, &result);
    }
}

/// The groups of node `levels` as [`BaseTuples::group`] makes them and as rolled up from every direct
/// generalization (numbered canonically or not), with the repair of each; all must agree.
fn check_rollups(prepared: &Prepared<'_>, levels: &[u8], id: u64, max: &[u8]) {
    let mut scratch = Vec::new();
    let plain = prepared.base.group(&prepared.maps, levels, &mut scratch);
    let (_, repaired) = prepared.evaluate(&prepared.base, levels, id, None, &mut scratch);
    for j in (0..levels.len()).filter(|&j| levels[j] < max[j]) {
        let mut up = levels.to_vec();
        up[j] += 1;
        let mut parent = prepared.base.group(&prepared.maps, &up, &mut scratch);
        if j % 2 == 1 {
            parent.canonicalize(&prepared.maps, &up);
        }
        let rolled = prepared.base.refine_from(
            &prepared.maps,
            levels,
            &parent.group_of_tuple,
            parent.len(),
            j,
            &mut scratch,
        );
        assert_eq!(rolled.keys, plain.keys);
        assert_eq!(rolled.sizes, plain.sizes);
        assert_eq!(rolled.group_of_tuple, plain.group_of_tuple);
        assert!(!rolled.canonical);
        let from = Parent {
            group_of_tuple: &parent.group_of_tuple,
            groups: parent.len(),
            attribute: j,
        };
        let (_, same) = prepared.evaluate(&prepared.base, levels, id, Some(from), &mut scratch);
        let summary = |r: &Option<create::Relocation>| {
            r.as_ref()
                .map(|r| (r.sizes.clone(), r.flows.clone(), r.changed))
        };
        assert_eq!(summary(&same), summary(&repaired));
    }
    check_projection(prepared, levels, id, max, &plain, &repaired);
}

/// The node `levels` grouped from the projection its mask uses, from scratch and rolled up from every
/// direct generalization that uses the same projection: the same groups as from the base tuples (in
/// canonical order; first-appearance numbers differ) and the same repair.
fn check_projection(
    prepared: &Prepared<'_>,
    levels: &[u8],
    id: u64,
    max: &[u8],
    plain: &NodeGroups,
    repaired: &Option<create::Relocation>,
) {
    let mut scratch = Vec::new();
    let mut projections = Projections::default();
    let mask = projection_mask(levels, max);
    projections
        .extend_for(prepared, std::iter::once(mask), &NoControl)
        .expect("not cancelled");
    let base = projections.base(prepared, mask);
    let mut expected = plain.clone();
    expected.canonicalize(&prepared.maps, levels);
    let canonical = |mut groups: NodeGroups| {
        groups.canonicalize(&prepared.maps, levels);
        (groups.keys, groups.sizes)
    };
    let from_scratch = base.group(&prepared.maps, levels, &mut scratch);
    assert_eq!(
        canonical(from_scratch),
        (expected.keys.clone(), expected.sizes.clone())
    );
    // a repair numbers groups canonically; a node left as it is keeps first-appearance sizes
    let summary = |r: &Option<create::Relocation>| {
        r.as_ref().map(|r| {
            let mut sizes = r.sizes.clone();
            if r.flows.is_empty() {
                sizes.sort_unstable();
            }
            (sizes, r.flows.clone(), r.changed)
        })
    };
    let (_, projected) = prepared.evaluate(base, levels, id, None, &mut scratch);
    assert_eq!(summary(&projected), summary(repaired));
    for j in (0..levels.len()).filter(|&j| levels[j] + 1 < max[j]) {
        let mut up = levels.to_vec();
        up[j] += 1;
        assert_eq!(projection_mask(&up, max), mask);
        let parent = base.group(&prepared.maps, &up, &mut scratch);
        let rolled = base.refine_from(
            &prepared.maps,
            levels,
            &parent.group_of_tuple,
            parent.len(),
            j,
            &mut scratch,
        );
        assert_eq!(
            canonical(rolled),
            (expected.keys.clone(), expected.sizes.clone())
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Rolling a node's groups up from any direct generalization gives the same groups, numbering and
    /// repair as grouping the base tuples, at every node of the lattice; so does grouping it from the
    /// projection the walk uses for it (up to numbering).
    #[test]
    fn rolled_up_groups_equal_grouping_from_scratch(
        table in random_table(),
        k in 1u64..6,
        p in prop::sample::select(vec![0.05, 0.3, 1.0]),
        randomized in any::<bool>(),
    ) {
        let fixture = table.fixture();
        let input = fixture.input();
        let k = k.min(input.rows as u64);
        let options = HybridOptions {
            relocation_limit: p,
            mode: if randomized { HybridMode::Randomized } else { HybridMode::Deterministic },
            key: SecretKey::from_u64(7),
            ..HybridOptions::default()
        };
        let prepared = Prepared::new(&input, k, &options).unwrap();
        let max: Vec<u8> = prepared.maps.iter().map(|m| m.max_level() as u8).collect();
        let lattice = crate::core::lattice::Lattice::new(max.clone());
        let bottom = vec![0u8; max.len()];
        for height in 0..=lattice.top_height() {
            crate::core::lattice::Lattice::for_each_at_height(&bottom, &max, height, &mut |levels| {
                check_rollups(&prepared, levels, lattice.id(levels), &max);
                true
            });
        }
    }
}
