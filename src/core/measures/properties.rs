//! Property tests of the measures' monotonicity claims (Hsu 2008, Lemmas 4.2.5, 4.2.7 and 4.4.3;
//! `notes/hsu-2008-sensitive-attribute-protection.md` §3 and §7 "Tests") on random small tables under
//! full-domain generalization without suppression, where every step up a lattice chain coarsens the
//! published partition.

use proptest::prelude::*;

use super::*;
use crate::core::data::{GeneralizationMap, Hierarchy, Table};

/// A hierarchy over the values `0..8` written as text: level 0 is `v`, a level 0 < l < top maps v to
/// `v >> l`, the top is `*`.
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

/// The measures of `table` with columns 0..q as quasi-identifiers at `levels` and the last column as
/// the sensitive attribute.
fn measures_at(table: &Table, maps: &[GeneralizationMap], levels: &[usize]) -> LossMeasures {
    let rows = table.row_count();
    let none = vec![false; rows];
    let columns: Vec<CellColumn<'_>> = maps
        .iter()
        .enumerate()
        .map(|(j, map)| {
            let c = table.column(j);
            CellColumn::full_domain(&c.name, &c.codes, map, levels[j], &none)
        })
        .collect();
    let s = table.column(maps.len());
    let distance = EmdDistance::equal(&s.codes, s.dictionary.len());
    let sensitive = [SensitiveColumn {
        name: &s.name,
        codes: &s.codes,
        distance: &distance,
    }];
    measure(rows, &columns, &sensitive, None)
}

fn table_strategy() -> impl Strategy<Value = (Vec<Vec<u32>>, Vec<usize>, Vec<usize>)> {
    // 1–3 quasi-identifiers with values in 0..8 and tops 1..=3, a sensitive value in 0..3, 1–30 records,
    // and a chain of up to 8 steps (column indices to raise)
    (1usize..=3, 1usize..=30).prop_flat_map(|(q, n)| {
        (
            prop::collection::vec(prop::collection::vec(0u32..8, q + 1), n),
            prop::collection::vec(1usize..=3, q),
            prop::collection::vec(0usize..q, 0..8),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn coarsening_chains(data in table_strategy()) {
        let (records, tops, steps) = data;
        let q = tops.len();
        let header: Vec<String> = (0..=q).map(|j| format!("c{j}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let text: Vec<Vec<String>> = records
            .iter()
            .map(|r| r.iter().enumerate().map(|(j, &v)| if j == q { format!("{}", v % 3) } else { format!("{v}") }).collect())
            .collect();
        let text: Vec<Vec<&str>> = text.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
        let table = Table::from_rows(&header, &text);
        let maps: Vec<GeneralizationMap> = tops
            .iter()
            .enumerate()
            .map(|(j, &top)| GeneralizationMap::bind(hierarchy(top), table.column(j)).unwrap())
            .collect();
        let mut levels = vec![0usize; q];
        let mut previous = measures_at(&table, &maps, &levels);
        prop_assert!(previous.variance[0].loss.abs() < 1e-9, "bottom node keeps all variance");
        for &j in &steps {
            if levels[j] == tops[j] {
                continue;
            }
            levels[j] += 1;
            let next = measures_at(&table, &maps, &levels);
            let eps = 1e-9;
            prop_assert!(next.monotone_entropy >= previous.monotone_entropy - eps, "Π_me fell at {levels:?}");
            prop_assert!(next.non_uniform_entropy >= previous.non_uniform_entropy - eps, "Π_ne fell at {levels:?}");
            prop_assert!(next.redactions >= previous.redactions);
            prop_assert!(next.tree.unwrap() >= previous.tree.unwrap() - eps);
            // a coarsening never raises the remaining variance (Lemma 4.4.3), so Π_tv ≥ 0 and grows
            prop_assert!(next.variance[0].loss >= -eps, "Π_tv < 0 at {levels:?}");
            prop_assert!(next.variance[0].anonymized <= previous.variance[0].anonymized + eps);
            prop_assert!(next.volume_inflation.entropy_sum >= previous.volume_inflation.entropy_sum - eps);
            previous = next;
        }
    }
}
