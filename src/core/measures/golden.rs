//! Golden tests: the worked examples of `notes/hsu-2008-sensitive-attribute-protection.md` (§6.1, §6.4,
//! §6.7) through the whole measure set. Every expected value is quoted from the note (its [D] values were
//! computed there with exact fractions), or hand-derived here from the definitions where marked.

use super::*;

/// A column whose record r is published as the cell `published[r]` (a set of original codes); equal sets
/// share an id. With `top = Some(l)`, a cell covering the whole domain is the root (level l) and any other
/// cell a leaf (level 0) — the shape of a suppression-only hierarchy when `l = 1`.
fn column<'a>(
    name: &'a str,
    codes: &'a [u32],
    domain: usize,
    published: &[&[u32]],
    top: Option<u32>,
) -> CellColumn<'a> {
    let mut cells: Vec<CellCover> = Vec::new();
    let mut cell_of = Vec::new();
    for set in published {
        let id = match cells.iter().position(|c| c.covers == *set) {
            Some(id) => id,
            None => {
                cells.push(CellCover {
                    covers: set.to_vec(),
                    tree: top.map(|top| TreePosition {
                        level: if set.len() == domain { top } else { 0 },
                        top,
                    }),
                });
                cells.len() - 1
            }
        };
        cell_of.push(id as u32);
    }
    CellColumn {
        name,
        codes,
        domain,
        cell_of: cell_of.into(),
        cells,
        position: Vec::new(),
    }
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

// Table 2.1-1 → 2.1-2 (note §6.1). ZIP 13053, 13068, 14853, 14850 = 0..3; ages in row order = 0..11;
// nationality Russian, American, Japanese, Indian = 0..3; condition heart disease, viral infection,
// cancer = 0..2.
const ZIP: [u32; 12] = [0, 1, 1, 0, 2, 2, 3, 3, 0, 0, 1, 1];
const AGE: [u32; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
const NATIONALITY: [u32; 12] = [0, 1, 2, 1, 3, 0, 1, 1, 1, 3, 2, 1];
const CONDITION: [u32; 12] = [0, 0, 1, 1, 2, 0, 1, 1, 2, 2, 2, 2];

fn table_2_1_2() -> Vec<CellColumn<'static>> {
    let zip_130: &[u32] = &[0, 1];
    let zip_1485: &[u32] = &[2, 3];
    let zip: Vec<&[u32]> = (0..12)
        .map(|r| {
            if (4..8).contains(&r) {
                zip_1485
            } else {
                zip_130
            }
        })
        .collect();
    let (young, old, thirties): (&[u32], &[u32], &[u32]) =
        (&[0, 1, 2, 3], &[4, 5, 6, 7], &[8, 9, 10, 11]);
    let age: Vec<&[u32]> = (0..12).map(|r| [young, old, thirties][r / 4]).collect();
    let all: &[u32] = &[0, 1, 2, 3];
    vec![
        column("zip", &ZIP, 4, &zip, None),
        column("age", &AGE, 12, &age, None),
        column("nationality", &NATIONALITY, 4, &[all; 12], None),
    ]
}

#[test]
fn table_2_1_2_volume_measures() {
    let columns = table_2_1_2();
    let distance = EmdDistance::equal(&CONDITION, 3);
    let sensitive = [SensitiveColumn {
        name: "condition",
        codes: &CONDITION,
        distance: &distance,
    }];
    let m = measure(12, &columns, &sensitive, None);
    assert_eq!(m.redactions, 12);
    assert_eq!(m.attributes[2].redactions, 12, "all in nationality");
    assert!(close(m.entropy, 57.50978, 5e-6), "{}", m.entropy);
    assert!(
        close(m.monotone_entropy, 36.17644, 5e-6),
        "{}",
        m.monotone_entropy
    );
    assert!(close(m.non_uniform_entropy, 57.50978, 5e-6));
    assert_eq!(m.tree, None, "the cells are not given as hierarchy nodes");
    // per-tuple Π_ne: 1 + 2 + log2 6 for Russian, Japanese and Indian rows, 1 + 2 + 1 for American rows
    let tables: Vec<ColumnEntropy> = columns.iter().map(ColumnEntropy::new).collect();
    for (r, &nationality) in NATIONALITY.iter().enumerate() {
        let expected = if nationality == 1 { 4.0 } else { 5.58496 };
        let got = record_non_uniform_entropy(&columns, &tables, r);
        assert!(close(got, expected, 5e-6), "row {}: {got}", r + 1);
    }
}

#[test]
fn table_2_1_2_variance() {
    let columns = table_2_1_2();
    let distance = EmdDistance::equal(&CONDITION, 3);
    let sensitive = [SensitiveColumn {
        name: "condition",
        codes: &CONDITION,
        distance: &distance,
    }];
    let m = measure(12, &columns, &sensitive, None);
    let v = &m.variance[0];
    assert_eq!(
        (v.attribute.as_str(), v.ground_distance.as_str()),
        ("condition", "equal")
    );
    assert!(close(v.original, 47.0 / 6.0, 1e-12), "{}", v.original);
    assert!(close(v.anonymized, 14.0 / 3.0, 1e-12), "{}", v.anonymized);
    assert!(close(v.loss, 19.0 / 6.0, 1e-12), "{}", v.loss);
}

// Example 4.3.1 (note §6.4): gender M, F = 0, 1; nationality U.S., Canada = 0, 1; disease flu, cold =
// 0, 1.
const GENDER: [u32; 8] = [0, 0, 1, 1, 0, 0, 1, 1];
const NATION: [u32; 8] = [0, 1, 0, 1, 0, 1, 0, 1];
const DISEASE: [u32; 8] = [0, 1, 0, 1, 0, 0, 1, 1];

/// Table 4.3-2(1) when `first_half_gender_hidden`, else 4.3-2(2): one half of the rows publishes `*` for
/// gender, the other half `*` for nationality.
fn table_4_3_2(first_half_gender_hidden: bool) -> Vec<CellColumn<'static>> {
    let singletons: [&[u32]; 2] = [&[0], &[1]];
    let star: &[u32] = &[0, 1];
    let gender: Vec<&[u32]> = (0..8)
        .map(|r| {
            if (r < 4) == first_half_gender_hidden {
                star
            } else {
                singletons[GENDER[r] as usize]
            }
        })
        .collect();
    let nation: Vec<&[u32]> = (0..8)
        .map(|r| {
            if (r < 4) == first_half_gender_hidden {
                singletons[NATION[r] as usize]
            } else {
                star
            }
        })
        .collect();
    vec![
        column("gender", &GENDER, 2, &gender, Some(1)),
        column("nationality", &NATION, 2, &nation, Some(1)),
    ]
}

#[test]
fn table_4_3_2_local_recodings() {
    let distance = EmdDistance::equal(&DISEASE, 2);
    let sensitive = [SensitiveColumn {
        name: "disease",
        codes: &DISEASE,
        distance: &distance,
    }];
    for (first, expected_tv) in [(true, -2.0), (false, 2.0)] {
        let columns = table_4_3_2(first);
        let m = measure(8, &columns, &sensitive, None);
        assert_eq!(m.redactions, 8);
        // each `*` hides one bit, and the tree measure with l = 1 is redaction counting
        assert!(close(m.entropy, 8.0, 1e-12));
        assert!(close(m.monotone_entropy, 8.0, 1e-12));
        assert!(close(m.non_uniform_entropy, 8.0, 1e-12));
        assert!(close(m.tree.unwrap(), 8.0, 1e-12));
        let v = &m.variance[0];
        assert!(close(v.original, 2.0, 1e-12), "{}", v.original);
        assert!(close(v.loss, expected_tv, 1e-12), "{}", v.loss);
    }
}

/// Note §6.7: A ∈ {a1, a2, a3}, S ∈ {x, y}; a1 = {x, y}, a2 = {x ×4}, a3 = {y ×4}; a1 and a2 generalized
/// to {a1, a2}. Π_tv = 0 but Π' = −2/3 with Vi_e and −1 with Vi. The volume inflation (hand-derived):
/// Vi is 6/2 for a1 rows, 6/4 for a2 rows and 1 for a3 rows, so Σ Vi_e = 2·log2 3 + 4·log2 1.5 and the
/// mean Vi is 16/10.
#[test]
fn hybrid_counterexample() {
    const A: [u32; 10] = [0, 0, 1, 1, 1, 1, 2, 2, 2, 2];
    const S: [u32; 10] = [0, 1, 0, 0, 0, 0, 1, 1, 1, 1];
    let merged: &[u32] = &[0, 1];
    let alone: &[u32] = &[2];
    let published: Vec<&[u32]> = A
        .iter()
        .map(|&a| if a < 2 { merged } else { alone })
        .collect();
    let columns = [column("a", &A, 3, &published, None)];
    let distance = EmdDistance::equal(&S, 2);
    let sensitive = [SensitiveColumn {
        name: "s",
        codes: &S,
        distance: &distance,
    }];
    let m = measure(10, &columns, &sensitive, None);
    let v = &m.variance[0];
    assert!(close(v.original, 4.0, 1e-12) && close(v.anonymized, 4.0, 1e-12));
    assert!(close(v.loss, 0.0, 1e-12), "{}", v.loss);
    assert!(close(v.hybrid, -2.0 / 3.0, 1e-12), "{}", v.hybrid);
    assert!(close(v.hybrid_ratio, -1.0, 1e-12), "{}", v.hybrid_ratio);
    assert_eq!(m.volume_inflation.basis, "empirical_joint");
    let sum = 2.0 * 3f64.log2() + 4.0 * 1.5f64.log2();
    assert!(close(m.volume_inflation.entropy_sum, sum, 1e-12));
    assert!(close(m.volume_inflation.mean, 1.6, 1e-12));
}

/// Hand-derived: a suppressed record is `*` in every quasi-identifier. Two columns with values
/// (a, x), (a, y), (b, x), (b, y) at their original level, the last record suppressed: 2 redactions,
/// tree 2 (both roots of one-step hierarchies), and its Π_ne is log2(4/2) per column, so 2 bits.
#[test]
fn suppressed_records_count_in_every_column() {
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    let table = Table::from_rows(
        &["p", "q"],
        &[
            vec!["a", "x"],
            vec!["a", "y"],
            vec!["b", "x"],
            vec!["b", "y"],
        ],
    );
    let suppressed = [false, false, false, true];
    let maps: Vec<GeneralizationMap> = [["a", "b"], ["x", "y"]]
        .iter()
        .enumerate()
        .map(|(j, values)| {
            let rows: Vec<Vec<&str>> = values.iter().map(|v| vec![*v, "*"]).collect();
            GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(j)).unwrap()
        })
        .collect();
    let columns: Vec<CellColumn<'_>> = maps
        .iter()
        .enumerate()
        .map(|(j, map)| {
            let c = table.column(j);
            CellColumn::full_domain(&c.name, &c.codes, map, 0, &suppressed)
        })
        .collect();
    let m = measure(4, &columns, &[], None);
    assert_eq!(m.redactions, 2);
    assert!(close(m.tree.unwrap(), 2.0, 1e-12));
    assert!(close(m.non_uniform_entropy, 2.0, 1e-12));
    // Π_e: H(X|*) = 1 bit per column; Π_me: Pr(*) = 1
    assert!(close(m.entropy, 2.0, 1e-12) && close(m.monotone_entropy, 2.0, 1e-12));
    // the suppressed record's box holds all 4 records against 1 with its values: Vi = 4
    assert!(close(m.volume_inflation.entropy_sum, 2.0, 1e-12));
    assert!(close(m.volume_inflation.mean, 7.0 / 4.0, 1e-12));
    // a column suppressed whole loses N·H(X) = 4 bits: one bit of four is a quarter
    for attribute in &m.attributes {
        assert!(close(attribute.information_loss.unwrap(), 0.25, 1e-12));
    }
}

/// Hand-derived: the relative information loss is 0 for a column published as it is, 1 for one
/// suppressed whole, and null for a column of one value (nothing to lose).
#[test]
fn information_loss_runs_from_kept_to_suppressed() {
    let codes: &[u32] = &[0, 1, 1, 2];
    let everything: &[u32] = &[0, 1, 2];
    let kept = column("kept", codes, 3, &[&[0], &[1], &[1], &[2]], Some(1));
    let gone = column("gone", codes, 3, &[everything; 4], Some(1));
    let one: &[u32] = &[0];
    let single = column("single", &[0, 0, 0, 0], 1, &[one; 4], Some(1));
    let m = measure(4, &[kept, gone, single], &[], None);
    let losses: Vec<Option<f64>> = m.attributes.iter().map(|a| a.information_loss).collect();
    assert_eq!(losses, vec![Some(0.0), Some(1.0), None]);
}
