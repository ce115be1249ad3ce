//! The builders against hierarchies made by other means: ARX-built files shipped with the bundled data
//! sets (adult's and FARS's age intervals, the ARX test set's ZIP masking) must group the values the same
//! way at every level, and the census generator's hand-written ZIP and date hierarchies must come out
//! label for label.

use std::collections::HashMap;
use std::path::Path;

use super::BuilderSpec;
use crate::core::data::Table;
use crate::synthetic::census::{census_hierarchies, census_table};

/// The rows of an ARX hierarchy file of `tests/data`.
fn arx_rows(file: &str) -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect()
}

/// Builds over the leaves of `reference` and checks that both group the leaves alike at every level.
fn assert_same_groups(builder: &str, reference: &[Vec<String>]) {
    let builder: BuilderSpec = serde_json::from_str(builder).expect("builder");
    let leaves: Vec<&str> = reference.iter().map(|r| r[0].as_str()).collect();
    let built = builder.build(&leaves).expect("builds");
    let built: HashMap<&str, &Vec<String>> = built.iter().map(|r| (r[0].as_str(), r)).collect();
    let height = reference[0].len();
    for level in 1..height {
        // a bijection between the reference's labels and the builder's at this level
        let mut forward: HashMap<&str, &str> = HashMap::new();
        let mut backward: HashMap<&str, &str> = HashMap::new();
        for row in reference {
            let ours = built[row[0].as_str()];
            assert_eq!(ours.len(), height, "heights differ");
            let (theirs, mine) = (row[level].as_str(), ours[level].as_str());
            assert_eq!(
                *forward.entry(theirs).or_insert(mine),
                mine,
                "level {level}"
            );
            assert_eq!(
                *backward.entry(mine).or_insert(theirs),
                theirs,
                "level {level}"
            );
        }
    }
}

#[test]
fn adult_age_intervals() {
    // ARX's file puts 1–5 under "0-4", 6–10 under "5-9": intervals of 5 from 1, joined by 2 and 2
    assert_same_groups(
        r#"{"type": "interval", "start": 1, "width": 5, "fanouts": [2, 2]}"#,
        &arx_rows("adult/adult_hierarchy_age.csv"),
    );
}

#[test]
fn fars_age_intervals() {
    // [0,4] → [0,9] → [0,19] → [0,39] → [0,99], the last level covering every age
    assert_same_groups(
        r#"{"type": "interval", "start": 0, "width": 5, "fanouts": [2, 2, 2]}"#,
        &arx_rows("fars/fars_int_hierarchy_iage.csv"),
    );
}

#[test]
fn arx_test_zip_masking() {
    assert_same_groups(
        r#"{"type": "mask"}"#,
        &arx_rows("arx_test/test_hierarchy_zipcode.csv"),
    );
}

#[test]
fn census_zip_and_birth_date_label_for_label() {
    let table: Table = census_table(3_000, 7);
    let hierarchies = census_hierarchies(&table);
    for (column, builder) in [
        ("zip", r#"{"type": "mask"}"#),
        (
            "birth_date",
            r#"{"type": "date", "levels": ["month", "year", "5 years", "decade"]}"#,
        ),
    ] {
        let (_, text) = hierarchies
            .iter()
            .find(|(name, _)| *name == column)
            .expect("generated hierarchy");
        let expected: Vec<Vec<String>> = text
            .lines()
            .map(|l| l.split(';').map(str::to_string).collect())
            .collect();
        let values: Vec<&str> = expected.iter().map(|r| r[0].as_str()).collect();
        let builder: BuilderSpec = serde_json::from_str(builder).expect("builder");
        assert_eq!(
            builder.build(&values).expect("builds"),
            expected,
            "{column}"
        );
    }
}
