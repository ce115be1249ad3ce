//! Reading published cells, pairing rows with records, and the maximum flow behind content pairing.

use proptest::prelude::*;

use super::pairing::transport;
use super::*;
use crate::core::data::{GeneralizationMap, Hierarchy};
use crate::core::local::OrderedDomain;
use crate::domain::resolve::prepare;
use crate::domain::JobSpec;

fn ages() -> Table {
    Table::from_rows(&["age"], &[vec!["25"], vec!["31"], vec!["40"]])
}

/// The original codes of `texts` in `table`'s first column.
fn codes(table: &Table, texts: &[&str]) -> Vec<u32> {
    let mut codes: Vec<u32> = texts
        .iter()
        .map(|t| table.column(0).dictionary.code(t).unwrap())
        .collect();
    codes.sort_unstable();
    codes
}

#[test]
fn hierarchy_cells_read_as_their_leaves_at_the_lowest_level_that_has_them() {
    let table = ages();
    let hierarchy = Hierarchy::from_rows(&[
        vec!["25", "20-29", "*"],
        vec!["31", "30-49", "*"],
        vec!["40", "30-49", "*"],
    ])
    .unwrap();
    let map = GeneralizationMap::bind(hierarchy, table.column(0)).unwrap();
    let reader = CellReader::new(table.column(0), Domain::Hierarchy(&map));
    let read = |text: &str| {
        reader
            .read(text)
            .map(|c| (c.covers, c.tree.map(|t| t.level)))
    };
    assert_eq!(read("25"), Some((codes(&table, &["25"]), Some(0))));
    assert_eq!(read("30-49"), Some((codes(&table, &["31", "40"]), Some(1))));
    assert_eq!(
        read("*"),
        Some((codes(&table, &["25", "31", "40"]), Some(2)))
    );
    // a range is not a label of this column
    assert_eq!(read("[25 .. 31]"), None);
    assert_eq!(read("26"), None);
}

/// A text a hierarchy repeats on several levels is read at the one level every published text belongs
/// to (a full-domain output); when the texts mix levels (a local recoding) it covers all its labels.
/// `*` is the root unless that level is a single `*`.
#[test]
fn repeated_labels_are_read_at_the_settled_level() {
    let table = ages();
    let hierarchy = Hierarchy::from_rows(&[
        vec!["25", "20-29", "0-49", "*"],
        vec!["31", "30-39", "0-49", "*"],
        vec!["40", "40-49", "40-49", "*"],
    ])
    .unwrap();
    let map = GeneralizationMap::bind(hierarchy, table.column(0)).unwrap();
    let reading = |texts: &[&str], text: &str| {
        let mut reader = CellReader::new(table.column(0), Domain::Hierarchy(&map));
        reader.settle(texts.iter().copied());
        reader
            .read(text)
            .map(|c| (c.covers, c.tree.map(|t| t.level)))
    };
    let forty = codes(&table, &["40"]);
    // level 2 holds both texts, level 1 does not hold 0-49
    assert_eq!(
        reading(&["0-49", "40-49"], "40-49"),
        Some((forty.clone(), Some(2)))
    );
    // level 1 holds both
    assert_eq!(
        reading(&["20-29", "40-49"], "40-49"),
        Some((forty.clone(), Some(1)))
    );
    // mixed levels: the lowest level, the union of the covers
    assert_eq!(
        reading(&["25", "30-39", "40-49"], "40-49"),
        Some((forty, Some(1)))
    );
    // `*` beside level-2 labels is the root (suppressed records)
    assert_eq!(
        reading(&["0-49", "*"], "*"),
        Some((codes(&table, &["25", "31", "40"]), Some(3)))
    );
}

#[test]
fn ranges_read_by_position_or_by_number() {
    let table = ages();
    let numbers: Vec<f64> = table
        .column(0)
        .dictionary
        .values()
        .map(|v| v.parse().unwrap())
        .collect();
    let order = OrderedDomain::numeric(numbers);
    let reader = CellReader::new(table.column(0), Domain::Ordered(&order));
    let read = |text: &str| reader.read(text).map(|c| c.covers);
    assert_eq!(read("31"), Some(codes(&table, &["31"])));
    assert_eq!(read("[25 .. 31]"), Some(codes(&table, &["25", "31"])));
    // ends that are not values: by number
    assert_eq!(read("[20 .. 35]"), Some(codes(&table, &["25", "31"])));
    assert_eq!(
        read("[-5 .. 100]"),
        Some(codes(&table, &["25", "31", "40"]))
    );
    assert_eq!(read("*"), Some(codes(&table, &["25", "31", "40"])));
    // nothing in the range, reversed ends, not a range
    assert_eq!(read("[41 .. 50]"), None);
    assert_eq!(read("[40 .. 25]"), None);
    assert_eq!(read("20-29"), None);
    assert_eq!(read("[a .. b]"), None);
}

#[test]
fn ordinal_ranges_try_every_split_of_values_holding_the_separator() {
    let table = Table::from_rows(&["grade"], &[vec!["a .. b"], vec!["c"], vec!["d"]]);
    // the order a .. b < c < d, codes in that order
    let order = OrderedDomain::new(vec![0, 1, 2], None);
    let reader = CellReader::new(table.column(0), Domain::Ordered(&order));
    let read = |text: &str| reader.read(text).map(|c| c.covers);
    assert_eq!(read("[a .. b .. c]"), Some(vec![0, 1]));
    assert_eq!(read("[c .. d]"), Some(vec![1, 2]));
    // not numeric: ends that are not values read as nothing
    assert_eq!(read("[a .. d]"), None);
}

/// Ages and a diagnosis published as it is, generalized by a two-level hierarchy.
fn job(suppressed_records: &str) -> (Table, Prepared) {
    let table = Table::from_rows(
        &["age", "diagnosis"],
        &[
            vec!["25", "flu"],
            vec!["27", "cold"],
            vec!["31", "flu"],
            vec!["35", "flu"],
        ],
    );
    let spec = format!(
        r#"{{"attributes": {{
            "age": {{"role": "quasi_identifier", "hierarchy": {{"levels": [
                ["25", "20-29", "*"], ["27", "20-29", "*"], ["31", "30-39", "*"], ["35", "30-39", "*"]]}}}},
            "diagnosis": {{"role": "sensitive"}}}},
          "privacy_models": [{{"type": "k_anonymity", "k": 2}}],
          "suppressed_records": "{suppressed_records}"}}"#
    );
    let spec = JobSpec::from_json(spec.as_bytes()).unwrap();
    let prepared = prepare(&table, &spec, &|_| Err("inline only".into())).unwrap();
    (table, prepared)
}

fn published(rows: &[[&str; 2]]) -> Table {
    let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.to_vec()).collect();
    Table::from_rows(&["age", "diagnosis"], &rows)
}

#[test]
fn rows_in_record_order_pair_by_order_and_measure_the_classes() {
    let (table, prepared) = job("mask");
    let out = published(&[
        ["20-29", "flu"],
        ["20-29", "cold"],
        ["30-39", "flu"],
        ["30-39", "flu"],
    ]);
    let a = assess_published(&table, &out, &prepared).unwrap();
    assert_eq!(a.pairing, Pairing::Order);
    assert_eq!(
        (a.records, a.published_records, a.removed_records),
        (4, 4, 0)
    );
    assert_eq!((a.classes, a.k), (2, 2));
    assert_eq!(a.loss_measures.redactions, 0);
    // every cell one level below the root of a three-level hierarchy: 1/2 per cell
    assert_eq!(a.loss_measures.tree, Some(2.0));
    // each cell covers two values of one record each: −log₂(1/2) per record
    assert!((a.loss_measures.entropy - 4.0).abs() < 1e-12, "{a:?}");
    // the same rows in another order pair by content, with the same measures
    let shuffled = published(&[
        ["30-39", "flu"],
        ["20-29", "cold"],
        ["30-39", "flu"],
        ["20-29", "flu"],
    ]);
    let b = assess_published(&table, &shuffled, &prepared).unwrap();
    assert_eq!(b.pairing, Pairing::Content);
    assert_eq!(b.loss_measures, a.loss_measures);
}

#[test]
fn removed_records_are_measured_as_suppressed() {
    let (table, prepared) = job("remove");
    let out = published(&[["20-29", "flu"], ["20-29", "cold"], ["30-39", "flu"]]);
    let a = assess_published(&table, &out, &prepared).unwrap();
    assert_eq!((a.published_records, a.removed_records), (3, 1));
    assert_eq!(a.loss_measures.redactions, 1);
    // a masked record counts the same
    let (table, masked) = job("mask");
    let out = published(&[
        ["20-29", "flu"],
        ["20-29", "cold"],
        ["30-39", "flu"],
        ["*", "flu"],
    ]);
    let b = assess_published(&table, &out, &masked).unwrap();
    assert_eq!(b.loss_measures.redactions, 1);
    assert_eq!(b.loss_measures.entropy, a.loss_measures.entropy);
    // the class of `*` rows is not counted
    assert_eq!((b.classes, b.k, b.fully_generalized_records), (2, 1, 1));
}

#[test]
fn a_table_that_does_not_match_its_original_is_a_coded_error_without_values() {
    let (table, prepared) = job("mask");
    let code = |out: &Table| assess_published(&table, out, &prepared).unwrap_err();
    let unknown = code(&published(&[
        ["20-29", "flu"],
        ["twenty-something", "cold"],
        ["30-39", "flu"],
        ["30-39", "flu"],
    ]));
    assert_eq!(unknown.code, ErrorCode::PublishedUnreadable);
    assert!(!unknown.message.contains("twenty"), "{}", unknown.message);
    let missing = code(&Table::from_rows(&["age"], &[vec!["20-29"]]));
    assert_eq!(missing.code, ErrorCode::PublishedUnreadable);
    assert!(missing.message.contains("diagnosis"), "{}", missing.message);
    // three rows cover 31 and 35, only two such records exist
    let unpaired = code(&published(&[
        ["20-29", "flu"],
        ["30-39", "cold"],
        ["30-39", "flu"],
        ["30-39", "flu"],
    ]));
    assert_eq!(unpaired.code, ErrorCode::PublishedUnpaired);
    // a missing row where suppressed records are kept
    let short = code(&published(&[
        ["20-29", "flu"],
        ["20-29", "cold"],
        ["30-39", "flu"],
    ]));
    assert_eq!(short.code, ErrorCode::PublishedUnreadable);
}

/// The largest number of units that can be paired, by unit-by-unit augmenting paths (Kuhn's
/// algorithm on the expanded graph): the oracle of [`transport`].
fn most_paired(supply: &[u64], capacity: &[u64], candidates: &[Vec<u32>]) -> u64 {
    let units: Vec<usize> = supply
        .iter()
        .enumerate()
        .flat_map(|(g, &s)| std::iter::repeat_n(g, s as usize))
        .collect();
    let slots: Vec<usize> = capacity
        .iter()
        .enumerate()
        .flat_map(|(c, &k)| std::iter::repeat_n(c, k as usize))
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; slots.len()];
    fn augment(
        unit: usize,
        units: &[usize],
        slots: &[usize],
        candidates: &[Vec<u32>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for s in 0..slots.len() {
            if seen[s] || !candidates[units[unit]].contains(&(slots[s] as u32)) {
                continue;
            }
            seen[s] = true;
            if owner[s].is_none_or(|o| augment(o, units, slots, candidates, owner, seen)) {
                owner[s] = Some(unit);
                return true;
            }
        }
        false
    }
    (0..units.len())
        .filter(|&u| {
            let mut seen = vec![false; slots.len()];
            augment(u, &units, &slots, candidates, &mut owner, &mut seen)
        })
        .count() as u64
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The flow pairs as many units as the oracle, within supplies, capacities and candidates.
    #[test]
    fn transport_pairs_as_many_units_as_possible(
        supply in prop::collection::vec(0u64..4, 1..6),
        capacity in prop::collection::vec(0u64..4, 1..6),
        edges in prop::collection::vec(any::<u8>(), 36),
    ) {
        let candidates: Vec<Vec<u32>> = (0..supply.len())
            .map(|g| {
                (0..capacity.len() as u32)
                    .filter(|&c| edges[g * 6 + c as usize] % 3 == 0)
                    .collect()
            })
            .collect();
        let (given, unpaired) = transport(&supply, &capacity, &candidates);
        let total: u64 = supply.iter().sum();
        prop_assert_eq!(total - unpaired, most_paired(&supply, &capacity, &candidates));
        let mut used = vec![0u64; capacity.len()];
        for (g, shares) in given.iter().enumerate() {
            let sent: u64 = shares.iter().map(|&(_, u)| u).sum();
            prop_assert!(sent <= supply[g]);
            for &(c, u) in shares {
                prop_assert!(candidates[g].contains(&c));
                used[c as usize] += u;
            }
        }
        for (c, &u) in used.iter().enumerate() {
            prop_assert!(u <= capacity[c]);
        }
    }
}
