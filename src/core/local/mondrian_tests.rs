//! Tests of Mondrian partitioning: hand-derived partitions of small tables (strict and relaxed, ordered
//! and hierarchical cuts, split preference, errors, progress) and property tests on random small tables.

use std::sync::Mutex;

use proptest::prelude::*;

use super::*;
use crate::core::control::{CancelFlag, NoControl};
use crate::core::data::{Hierarchy, Table};
use crate::core::input::SensitiveAttribute;
use crate::core::local::{LocalAttribute, OrderedDomain, RecodedCell};
use crate::core::privacy::{DistinctLDiversity, KAnonymity};

fn k(k: u64) -> Vec<Box<dyn PrivacyModel>> {
    vec![Box::new(KAnonymity { k })]
}

/// The numeric domain of a column whose values all parse as numbers.
pub(in crate::core::local) fn numeric(table: &Table, column: usize) -> OrderedDomain {
    OrderedDomain::numeric(
        table
            .column(column)
            .dictionary
            .values()
            .map(|v| v.parse::<f64>().unwrap())
            .collect(),
    )
}

/// Ten records: job (hierarchy Nurse, Doctor → Medical; Lawyer, Judge → Legal; → *) and age.
/// Distinct ages 21 22 23 25 30 31 33 35 40 have ranks 0..=8.
fn staff() -> (Table, GeneralizationMap, OrderedDomain) {
    let rows = [
        ("Nurse", "21"),
        ("Doctor", "22"),
        ("Nurse", "23"),
        ("Lawyer", "25"),
        ("Judge", "25"),
        ("Doctor", "30"),
        ("Lawyer", "31"),
        ("Judge", "33"),
        ("Nurse", "35"),
        ("Judge", "40"),
    ];
    let rows: Vec<Vec<&str>> = rows.iter().map(|&(j, a)| vec![j, a]).collect();
    let table = Table::from_rows(&["job", "age"], &rows);
    let hierarchy = Hierarchy::from_rows(&[
        vec!["Nurse", "Medical", "*"],
        vec!["Doctor", "Medical", "*"],
        vec!["Lawyer", "Legal", "*"],
        vec!["Judge", "Legal", "*"],
    ])
    .unwrap();
    let map = GeneralizationMap::bind(hierarchy, table.column(0)).unwrap();
    let order = numeric(&table, 1);
    (table, map, order)
}

fn staff_input<'a>(
    table: &'a Table,
    map: &'a GeneralizationMap,
    order: &'a OrderedDomain,
) -> LocalInput<'a> {
    LocalInput {
        rows: table.row_count(),
        quasi_identifiers: vec![
            LocalAttribute {
                name: "job",
                codes: &table.column(0).codes,
                distinct: table.column(0).dictionary.len(),
                domain: Domain::Hierarchy(map),
            },
            LocalAttribute {
                name: "age",
                codes: &table.column(1).codes,
                distinct: table.column(1).dictionary.len(),
                domain: Domain::Ordered(order),
            },
        ],
        sensitive: vec![],
    }
}

fn node(map: &GeneralizationMap, level: u8, label: &str) -> RecodedCell {
    RecodedCell::Node {
        level,
        label: map.hierarchy().labels(level as usize).code(label).unwrap(),
    }
}

fn range(low: u32, high: u32) -> RecodedCell {
    RecodedCell::Range { low, high }
}

/// A threshold on the whole table is refused, not ignored.
#[test]
fn table_level_models_are_refused() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let models: Vec<Box<dyn PrivacyModel>> = vec![
        Box::new(KAnonymity { k: 2 }),
        Box::new(crate::core::privacy::TableThreshold::average_risk(0.5)),
    ];
    let error = mondrian(&input, &models, &MondrianOptions::default(), &NoControl).unwrap_err();
    assert!(
        matches!(
            error,
            CoreError::InvalidParameter {
                name: "privacy_models",
                ..
            }
        ),
        "{error}"
    );
}

fn run(input: &LocalInput<'_>, k_min: u64, relaxed: bool, preference: Vec<usize>) -> Mondrian {
    let options = MondrianOptions {
        relaxed,
        split_preference: preference,
    };
    mondrian(input, &k(k_min), &options, &NoControl).unwrap()
}

// Strict, k = 2. Root: job and age both have extent 1 (4 leaves under *, ages 21..40 of 21..40); the tie
// goes to job (index 0): Medical {0,1,2,5,8} | Legal {3,4,6,7,9}. Medical: age extent 14/19 beats job
// 1/3; lower median of 21 22 23 30 35 is 23 → {0,1,2} | {5,8}; neither part can be cut again (every cut
// leaves a single record). Legal: age 15/19; median of 25 25 31 33 40 is 31 → {3,4,6} | {7,9}.
// Rejected: {0,1,2} job and age, {5,8} job and age, {3,4,6} job and age, {7,9} age (job is one value).
#[test]
fn strict_k2_cuts_the_hierarchy_then_ages_at_the_median() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let result = run(&input, 2, false, vec![]);
    let r = &result.recoding;
    assert_eq!(r.group_of(), &[0, 0, 0, 2, 2, 1, 2, 3, 1, 3]);
    assert_eq!(r.cell(0, 0), node(&map, 1, "Medical"));
    assert_eq!(r.cell(0, 1), range(0, 2));
    assert_eq!(r.cell(1, 0), node(&map, 1, "Medical"));
    assert_eq!(r.cell(1, 1), range(4, 7));
    assert_eq!(r.cell(2, 0), node(&map, 1, "Legal"));
    assert_eq!(r.cell(2, 1), range(3, 5));
    assert_eq!(r.cell(3, 0), node(&map, 0, "Judge"));
    assert_eq!(r.cell(3, 1), range(6, 8));
    assert_eq!(
        result.report,
        MondrianReport {
            relaxed: false,
            groups: 4,
            splits: 3,
            rejected_cuts: 7,
            max_depth: 2,
            smallest_group: 2,
            largest_group: 3,
        }
    );
}

// Relaxed, k = 2: the same root cut; Medical's 2 lowest ages {0,1} | {2,5,8}; Legal's 2 lowest
// {3,4} (both 25) | {6,7,9}. Rejected: {0,1} job, age; {2,5,8} age, job; {3,4} job (age is one value);
// {6,7,9} age, job.
#[test]
fn relaxed_k2_halves_every_ordered_cut() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let result = run(&input, 2, true, vec![]);
    let r = &result.recoding;
    assert_eq!(r.group_of(), &[0, 0, 1, 2, 2, 1, 3, 3, 1, 3]);
    assert_eq!(r.cell(0, 1), range(0, 1));
    assert_eq!(r.cell(1, 0), node(&map, 1, "Medical"));
    assert_eq!(r.cell(1, 1), range(2, 7));
    assert_eq!(r.cell(2, 0), node(&map, 1, "Legal"));
    assert_eq!(r.cell(2, 1), range(3, 3));
    assert_eq!(r.cell(3, 1), range(5, 8));
    assert_eq!(result.report.splits, 3);
    assert_eq!(result.report.rejected_cuts, 7);
    assert!(result.report.relaxed);
}

// k = 3: only the root cut on job is allowable (the strict median cuts leave 2 records on one side, the
// children of Medical and Legal have 2-record groups).
#[test]
fn strict_k3_stops_at_the_children_of_the_root() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let result = run(&input, 3, false, vec![]);
    let r = &result.recoding;
    assert_eq!(r.group_of(), &[0, 0, 0, 1, 1, 0, 1, 1, 0, 1]);
    assert_eq!(r.cell(0, 0), node(&map, 1, "Medical"));
    assert_eq!(r.cell(0, 1), range(0, 7));
    assert_eq!(r.cell(1, 0), node(&map, 1, "Legal"));
    assert_eq!(r.cell(1, 1), range(3, 8));
    assert_eq!(result.report.splits, 1);
    assert_eq!(result.report.rejected_cuts, 4);
    assert_eq!(result.report.max_depth, 1);
}

// Preference for age: root median of 21 22 23 25 25 30 31 33 35 40 is 25 → {0..=4} | {5..=9};
// {0..=4}: median 23 → {0,1,2} | {3,4}; {5..=9}: median 33 → {5,6,7} | {8,9}; nothing else cuts.
#[test]
fn split_preference_replaces_the_widest_extent() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let result = run(&input, 2, false, vec![1]);
    assert_eq!(result.recoding.group_of(), &[0, 0, 0, 1, 1, 2, 2, 2, 3, 3]);
    assert_eq!(result.recoding.cell(2, 0), node(&map, 2, "*"));
    assert_eq!(result.report.splits, 3);
}

fn ages(values: &[&str]) -> (Table, OrderedDomain) {
    let rows: Vec<Vec<&str>> = values.iter().map(|&v| vec![v]).collect();
    let table = Table::from_rows(&["age"], &rows);
    let order = numeric(&table, 0);
    (table, order)
}

fn single<'a>(table: &'a Table, domain: Domain<'a>) -> LocalInput<'a> {
    LocalInput {
        rows: table.row_count(),
        quasi_identifiers: vec![LocalAttribute {
            name: "a",
            codes: &table.column(0).codes,
            distinct: table.column(0).dictionary.len(),
            domain,
        }],
        sensitive: vec![],
    }
}

// Ages 1 2 2 2 3 4 (ranks 0..=3), k = 2. Strict: median (index 2) is 2 → {1,2,2,2} | {3,4}; in
// {1,2,2,2} the median 2 is the highest value, so the cut moves to 1 and leaves one record → no cut.
// Relaxed: the 3 lowest (1, 2, 2: the ties at 2 by record order) | {2,3,4}; no half cuts again.
#[test]
fn strict_keeps_ties_together_and_relaxed_splits_them() {
    let (table, order) = ages(&["1", "2", "2", "2", "3", "4"]);
    let input = single(&table, Domain::Ordered(&order));
    let strict = run(&input, 2, false, vec![]);
    assert_eq!(strict.recoding.group_of(), &[0, 0, 0, 0, 1, 1]);
    assert_eq!(strict.recoding.cell(0, 0), range(0, 1));
    assert_eq!(strict.recoding.cell(1, 0), range(2, 3));
    let relaxed = run(&input, 2, true, vec![]);
    assert_eq!(relaxed.recoding.group_of(), &[0, 0, 0, 1, 1, 1]);
    assert_eq!(relaxed.recoding.cell(0, 0), range(0, 1));
    assert_eq!(relaxed.recoding.cell(1, 0), range(1, 3));
}

// Regions a a a b c c under * (children in label order a, b, c), k = 2. The multiway cut fails (b has
// one record); binary prefixes: {a} | {b,c} is 3 | 3, taken. {b,c,c}: multiway b | c,c fails, and two
// children admit no other grouping. Rejected: the two multiway cuts.
#[test]
fn hierarchical_cut_falls_back_to_the_most_balanced_binary_grouping() {
    let rows: Vec<Vec<&str>> = ["a", "a", "a", "b", "c", "c"]
        .iter()
        .map(|&v| vec![v])
        .collect();
    let table = Table::from_rows(&["region"], &rows);
    let hierarchy =
        Hierarchy::from_rows(&[vec!["a", "*"], vec!["b", "*"], vec!["c", "*"]]).unwrap();
    let map = GeneralizationMap::bind(hierarchy, table.column(0)).unwrap();
    let input = single(&table, Domain::Hierarchy(&map));
    let result = run(&input, 2, false, vec![]);
    assert_eq!(result.recoding.group_of(), &[0, 0, 0, 1, 1, 1]);
    assert_eq!(result.recoding.cell(0, 0), node(&map, 0, "a"));
    assert_eq!(result.recoding.cell(1, 0), node(&map, 1, "*"));
    assert_eq!(result.report.splits, 1);
    assert_eq!(result.report.rejected_cuts, 2);
}

// Ages 1 2 3 4 with diagnoses x x y y, k = 2. k alone: median 2 → {1,2} | {3,4}. With distinct
// 2-diversity {1,2} holds only x, so the cut is rejected and the table stays one group.
#[test]
fn distinct_diversity_rejects_cuts_with_one_sensitive_value() {
    let (table, order) = ages(&["1", "2", "3", "4"]);
    let diagnosis = [0u32, 0, 1, 1];
    let mut input = single(&table, Domain::Ordered(&order));
    input.sensitive = vec![SensitiveAttribute {
        name: "diagnosis",
        codes: &diagnosis,
        distinct: 2,
    }];
    let k_only = run(&input, 2, false, vec![]);
    assert_eq!(k_only.recoding.group_of(), &[0, 0, 1, 1]);
    let models: Vec<Box<dyn PrivacyModel>> = vec![
        Box::new(KAnonymity { k: 2 }),
        Box::new(DistinctLDiversity {
            slot: 0,
            attribute: "diagnosis".into(),
            l: 2,
        }),
    ];
    let result = mondrian(&input, &models, &MondrianOptions::default(), &NoControl).unwrap();
    assert_eq!(result.recoding.group_of(), &[0, 0, 0, 0]);
    assert_eq!(result.recoding.cell(0, 0), range(0, 3));
    assert_eq!(result.report.rejected_cuts, 1);
    assert_eq!(result.report.splits, 0);
}

#[test]
fn errors_name_the_failing_model_and_bad_options() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let options = MondrianOptions::default();
    assert!(matches!(
        mondrian(&input, &k(11), &options, &NoControl),
        Err(CoreError::TooFewRecords {
            needed: 11,
            rows: 10,
            ..
        })
    ));
    let same = [0u32; 10];
    let mut one_value = staff_input(&table, &map, &order);
    one_value.sensitive = vec![SensitiveAttribute {
        name: "s",
        codes: &same,
        distinct: 1,
    }];
    let diverse: Vec<Box<dyn PrivacyModel>> = vec![Box::new(DistinctLDiversity {
        slot: 0,
        attribute: "s".into(),
        l: 2,
    })];
    assert!(matches!(
        mondrian(&one_value, &diverse, &options, &NoControl),
        Err(CoreError::NoSolution {
            top_failing: 10,
            top_classes: 1,
            ..
        })
    ));
    for preference in [vec![2], vec![1, 1]] {
        let bad = MondrianOptions {
            relaxed: false,
            split_preference: preference,
        };
        assert!(matches!(
            mondrian(&input, &k(2), &bad, &NoControl),
            Err(CoreError::InvalidParameter {
                name: "split_preference",
                ..
            })
        ));
    }
    let flag = CancelFlag::default();
    flag.cancel();
    assert_eq!(
        mondrian(&input, &k(2), &options, &flag),
        Err(CoreError::Cancelled)
    );
}

#[derive(Default)]
struct Recorder(Mutex<Vec<Progress>>);

impl Control for Recorder {
    fn is_cancelled(&self) -> bool {
        false
    }
    fn report(&self, progress: Progress) {
        self.0.lock().unwrap().push(progress);
    }
}

#[test]
fn progress_counts_settled_records_up_to_the_table() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let recorder = Recorder::default();
    mondrian(&input, &k(2), &MondrianOptions::default(), &recorder).unwrap();
    let seen = recorder.0.into_inner().unwrap();
    assert!(seen
        .iter()
        .all(|p| p.phase == Phase::Partitioning && p.total == 10));
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done));
    assert_eq!(seen.first().map(|p| p.done), Some(0));
    assert_eq!(seen.last().map(|p| p.done), Some(10));
}

#[test]
fn progress_of_parallel_parts_only_grows_up_to_the_table() {
    let (table, map, order) = staff();
    let input = staff_input(&table, &map, &order);
    let recorder = Recorder::default();
    let options = MondrianOptions::default();
    let parallel = pool()
        .install(|| mondrian_with(&input, &k(2), &options, &recorder, 2))
        .unwrap();
    assert_eq!(parallel, run(&input, 2, false, vec![]));
    let seen = recorder.0.into_inner().unwrap();
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done));
    assert_eq!(seen.last().map(|p| p.done), Some(10));
}

/// A pool of three threads, so that parts are partitioned on other threads even on one core.
fn pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
    })
}

/// A hierarchy over `0..8`: level 0 is `v`, a level 0 < l < top maps v to `v >> l`, the top is `*`.
pub(in crate::core::local) fn binary_hierarchy(top: usize) -> Hierarchy {
    let rows: Vec<Vec<String>> = (0..8u32)
        .map(|v| {
            (0..=top)
                .map(|l| match l {
                    0 => v.to_string(),
                    l if l == top => "*".to_string(),
                    l => format!("{}/{}", l, v >> l),
                })
                .collect()
        })
        .collect();
    Hierarchy::from_rows(&rows).unwrap()
}

/// Random tables: 1–3 quasi-identifiers with values in 0..8, each ordered (`None`) or with a hierarchy of
/// top level 1..=3; a sensitive value in 0..3; 1–40 records; k in 1..=4; distinct 2-diversity or not;
/// strict or relaxed.
#[allow(clippy::type_complexity)]
fn case() -> impl Strategy<Value = (Vec<Vec<u32>>, Vec<Option<usize>>, u64, bool, bool)> {
    (1usize..=3, 1usize..=40).prop_flat_map(|(q, n)| {
        (
            prop::collection::vec(prop::collection::vec(0u32..8, q + 1), n),
            prop::collection::vec(prop::option::of(1usize..=3), q),
            1u64..=4,
            any::<bool>(),
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn groups_are_private_cover_their_records_and_are_maximal(
        (records, kinds, k_min, diverse, relaxed) in case()
    ) {
        let q = kinds.len();
        let n = records.len();
        let header: Vec<String> = (0..=q).map(|j| format!("c{j}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let text: Vec<Vec<String>> = records
            .iter()
            .map(|r| r.iter().enumerate().map(|(j, &v)| if j == q { (v % 3).to_string() } else { v.to_string() }).collect())
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
            sensitive: vec![SensitiveAttribute {
                name: "s",
                codes: &table.column(q).codes,
                distinct: table.column(q).dictionary.len(),
            }],
        };
        let mut models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: k_min })];
        if diverse {
            models.push(Box::new(DistinctLDiversity { slot: 0, attribute: "s".into(), l: 2 }));
        }
        let options = MondrianOptions { relaxed, split_preference: vec![] };
        let sensitive_values = |rows: &[usize]| {
            let mut v: Vec<u32> = rows.iter().map(|&r| table.column(q).codes[r]).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        let all: Vec<usize> = (0..n).collect();
        let result = match mondrian(&input, &models, &options, &NoControl) {
            Ok(result) => result,
            Err(CoreError::TooFewRecords { .. }) => {
                prop_assert!((n as u64) < k_min || (diverse && n < 2));
                return Ok(());
            }
            Err(CoreError::NoSolution { .. }) => {
                prop_assert!(diverse && sensitive_values(&all) < 2);
                return Ok(());
            }
            Err(other) => return Err(TestCaseError::fail(format!("{other}"))),
        };
        let again = mondrian(&input, &models, &options, &NoControl).unwrap();
        prop_assert_eq!(&again, &result, "deterministic");
        // every cut partition's parts on the pool: the same groups, numbers and counters
        let parallel = pool().install(|| mondrian_with(&input, &models, &options, &NoControl, 2)).unwrap();
        prop_assert_eq!(&parallel, &result, "parallel parts");
        let r = &result.recoding;
        prop_assert_eq!(r.suppressed_records(), 0);
        let groups = r.groups();
        prop_assert_eq!(result.report.groups as usize, groups);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
        for (row, &g) in r.group_of().iter().enumerate() {
            prop_assert!((g as usize) < groups);
            members[g as usize].push(row);
        }
        let mut checker = GroupChecker::new(&input, &models);
        for group in &members {
            prop_assert!(group.len() as u64 >= k_min && !group.is_empty());
            if diverse {
                prop_assert!(sensitive_values(group) >= 2);
            }
        }
        for row in 0..n {
            for (j, attribute) in input.quasi_identifiers.iter().enumerate() {
                let cell = r.cell_of_record(row, j).unwrap();
                prop_assert!(cell.covers(attribute.domain, attribute.codes[row]));
            }
        }
        let private = |checker: &mut GroupChecker<'_>, rows: &[usize]| {
            let ids: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
            checker.is_private(&ids)
        };
        for group in &members {
            for attribute in &input.quasi_identifiers {
                match attribute.domain {
                    // No group admits an allowable multiway cut into the children of its common ancestor.
                    Domain::Hierarchy(map) => {
                        let level = (0..=map.max_level())
                            .find(|&l| group.iter().all(|&row| map.codes(l)[attribute.codes[row] as usize] == map.codes(l)[attribute.codes[group[0]] as usize]))
                            .unwrap();
                        if level > 0 {
                            let mut children: Vec<u32> = group.iter().map(|&row| map.codes(level - 1)[attribute.codes[row] as usize]).collect();
                            children.sort_unstable();
                            children.dedup();
                            let parts: Vec<Vec<usize>> = children
                                .iter()
                                .map(|&c| group.iter().copied().filter(|&row| map.codes(level - 1)[attribute.codes[row] as usize] == c).collect())
                                .collect();
                            prop_assert!(!parts.iter().all(|p| private(&mut checker, p)), "a multiway cut was left");
                        }
                    }
                    // No group admits an allowable median cut of its mode.
                    Domain::Ordered(order) => {
                        let rank = |row: usize| order.rank(attribute.codes[row]);
                        let mut sorted: Vec<(u32, usize)> = group.iter().map(|&row| (rank(row), row)).collect();
                        sorted.sort_unstable();
                        let size = sorted.len();
                        if sorted[0].0 == sorted[size - 1].0 {
                            continue;
                        }
                        let (left, right): (Vec<usize>, Vec<usize>) = if relaxed {
                            let rows: Vec<usize> = sorted.iter().map(|e| e.1).collect();
                            (rows[..size / 2].to_vec(), rows[size / 2..].to_vec())
                        } else {
                            let mut v = sorted[(size - 1) / 2].0;
                            if v == sorted[size - 1].0 {
                                v = sorted.iter().map(|e| e.0).filter(|&x| x < v).max().unwrap();
                            }
                            (
                                sorted.iter().filter(|e| e.0 <= v).map(|e| e.1).collect(),
                                sorted.iter().filter(|e| e.0 > v).map(|e| e.1).collect(),
                            )
                        };
                        prop_assert!(!(private(&mut checker, &left) && private(&mut checker, &right)), "a median cut was left");
                    }
                }
            }
        }
        if !relaxed {
            // Strict cuts never separate equal values: any two groups differ entirely on some attribute.
            for a in 0..groups {
                for b in a + 1..groups {
                    let disjoint = input.quasi_identifiers.iter().any(|attribute| {
                        members[a].iter().all(|&x| members[b].iter().all(|&y| attribute.codes[x] != attribute.codes[y]))
                    });
                    prop_assert!(disjoint, "groups {} and {} share a value on every attribute", a, b);
                }
            }
        } else if !diverse {
            // Relaxed k-anonymity halves any group of 2k records with a spread on an ordered attribute.
            for group in members.iter().filter(|g| g.len() as u64 >= 2 * k_min) {
                for attribute in &input.quasi_identifiers {
                    if let Domain::Ordered(_) = attribute.domain {
                        prop_assert!(group.iter().all(|&row| attribute.codes[row] == attribute.codes[group[0]]));
                    }
                }
            }
        }
    }
}
