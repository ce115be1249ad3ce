//! Tests of PAIR-ENUM's neighbour lists: the kept rankings (the counted first rankings, the offers to
//! open clusters, the compact open index, the cut-offs) agree with a brute-force ranking, on the thesis's
//! example and on random tables across merges; the published rows measure as the entropy distance.

use proptest::prelude::*;

use super::super::example::{prepared, Example};
use super::super::properties::Random;
use super::neighbours::{by_key, Near, Rows};
use super::*;
use crate::core::control::NoControl;

/// The `q` nearest open clusters of `c` by brute force: every open cluster but `c`, by (δ, first
/// record).
fn brute_nearest(run: &Run<'_, '_>, c: u32, q: usize) -> Vec<u32> {
    let mut all: Vec<Near> = (0..run.clusters.len() as u32)
        .filter(|&id| {
            id != c && run.clusters[id as usize].alive && !run.clusters[id as usize].sealed
        })
        .map(|id| {
            (
                run.neighbours.rows.distance(c as usize, id as usize),
                run.first(id),
                id,
            )
        })
        .collect();
    all.sort_unstable_by(by_key);
    all.into_iter().take(q).map(|(_, _, id)| id).collect()
}

/// A run over single records with every list ranked for `q` neighbours.
fn ranked<'p, 'a>(prep: &'p Prepared<'a>, options: &'p PairEnumOptions, q: usize) -> Run<'p, 'a> {
    let mut pace = Pace::new(&NoControl);
    let clusters = Cluster::singletons(prep, false, &mut pace).unwrap();
    let mut run = Run::new(prep, options, clusters, None);
    run.neighbours.rank_all(q, &mut pace).unwrap();
    run
}

/// Ranks every record's neighbours, then merges the open pairs `picks` selects (as indexes into the
/// open clusters) one after the other, checking every open cluster's list against brute force first
/// and after each merge. Returns the number of lists checked.
fn check_lists(prep: &Prepared<'_>, k: usize, q: usize, picks: &[(usize, usize)]) -> usize {
    let options = PairEnumOptions {
        k,
        ..PairEnumOptions::default()
    };
    let mut run = ranked(prep, &options, q);
    let mut pace = Pace::new(&NoControl);
    let mut checked = 0;
    let mut check = |run: &mut Run<'_, '_>, round: usize| {
        for c in run.unsealed() {
            let expected = brute_nearest(run, c, q);
            assert_eq!(
                run.neighbours.nearest(c),
                expected,
                "q {q}, round {round}, cluster {c}"
            );
            checked += 1;
        }
    };
    check(&mut run, 0);
    for (round, &(x, y)) in picks.iter().enumerate() {
        let open = run.unsealed();
        if open.len() < 2 {
            break;
        }
        let (x, y) = (x % open.len(), y % open.len());
        if x == y {
            continue;
        }
        let (a, b) = run.canonical(open[x], open[y]);
        run.commit(a, b, &mut pace).unwrap();
        check(&mut run, round + 1);
    }
    checked
}

// The thesis's example: the lists agree with brute force for q = 1, 2, 3, first and after merges.
#[test]
fn neighbour_lists_agree_with_brute_force() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    for q in [1, 2, 3] {
        let checked = check_lists(&prep, 2, q, &[(0, 1), (0, 1), (0, 1)]);
        assert!(checked >= 8, "q {q}: {checked} lists checked");
    }
}

// A rescanned record ranking must know its bound: with depth 3, records 0–6 equal and 7–9 another
// value, record 0's first ranking {1, 2, 3} closes, its rescan keeps {4, 5, 6} and must bound them (7
// counts one difference more), so once those close too a further rescan finds 7.
#[test]
fn a_rescanned_ranking_keeps_its_bound() {
    let records: Vec<Vec<u32>> = (0..10u32).map(|r| vec![u32::from(r >= 7), 0]).collect();
    let t = Random::new(&records, &[1]);
    let input = t.input();
    let fds = t.fds();
    let prep = Prepared::new(&input, &fds, 2, PreserveMode::Continuous).unwrap();
    let options = PairEnumOptions {
        k: 2,
        ..PairEnumOptions::default()
    };
    let mut run = ranked(&prep, &options, 1);
    let mut pace = Pace::new(&NoControl);
    for (round, pair) in [(1, 2), (3, 8), (4, 5), (6, 9)].into_iter().enumerate() {
        let (a, b) = run.canonical(pair.0, pair.1);
        run.commit(a, b, &mut pace).unwrap();
        assert_eq!(
            run.neighbours.nearest(0),
            brute_nearest(&run, 0, 1),
            "after merge {round}"
        );
    }
}

// Forgotten rankings are ranked again by scans and still agree with brute force.
#[test]
fn forgotten_rankings_are_ranked_again() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    let options = PairEnumOptions {
        k: 2,
        ..PairEnumOptions::default()
    };
    let mut run = ranked(&prep, &options, 2);
    let mut pace = Pace::new(&NoControl);
    let (a, b) = run.canonical(0, 1);
    run.commit(a, b, &mut pace).unwrap();
    run.neighbours.forget_rankings();
    for c in run.unsealed() {
        assert_eq!(
            run.neighbours.nearest(c),
            brute_nearest(&run, c, 2),
            "cluster {c}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    // Random tables with many duplicate rows (shared first rankings, ties by first record), merges of
    // clusters of every size (sealed, open, and splits into k plus a rest): every open cluster's list
    // equals the brute-force ranking after every merge.
    #[test]
    fn neighbour_lists_agree_with_brute_force_on_random_tables(
        (records, tops) in (1usize..=3, 2usize..=40).prop_flat_map(|(q, n)| (
            prop::collection::vec(prop::collection::vec(0u32..4, q + 1), n),
            prop::collection::vec(1usize..=3, q),
        )),
        k in 2usize..=4,
        q in 1usize..=4,
        picks in prop::collection::vec((0usize..64, 0usize..64), 0..30),
    ) {
        let t = Random::new(&records, &tops);
        let input = t.input();
        let fds = t.fds();
        let prep = Prepared::new(&input, &fds, k, PreserveMode::Continuous).unwrap();
        check_lists(&prep, k, q, &picks);
    }
}

#[test]
fn published_rows_measure_as_the_entropy_distance() {
    let ex = Example::new();
    let input = ex.input();
    let prep = prepared(&ex, &input, PreserveMode::Continuous);
    // every cluster of one or two of the example's records, and all eight
    let mut clusters: Vec<Vec<u32>> = (0..8u32)
        .flat_map(|a| (a..8).map(move |b| if a == b { vec![a] } else { vec![a, b] }))
        .collect();
    clusters.push((0..8).collect());
    let nodes = prep.lca_of(&clusters);
    let mut rows = Rows::new(&prep);
    for n in &nodes {
        rows.push(&prep, n);
    }
    for (a, x) in nodes.iter().enumerate() {
        for (b, y) in nodes.iter().enumerate() {
            let expected: f64 = prep
                .maps
                .iter()
                .enumerate()
                .map(|(j, map)| prep.entropy.between(j, map, x[j], y[j]))
                .sum();
            assert_eq!(rows.distance(a, b), expected, "clusters {a} and {b}");
        }
    }
}
