//! The non-reconstructability condition (Zakerzadeh et al., Theorem 4.1; note §2.4 and gap A15): joining
//! published fragments on the class must not single out fewer than k records. For one equivalence class
//! per fragment of a subset s of fragments, J_s = Σ_c Π_{t∈s} freq(c, EQ_t) counts the joined tuples that
//! share one generalized box; it must be 0 or at least k. Two fragments give the paper's J; for three or
//! more, every subset is checked (the pairs alone do not suffice: the note's §6.5 counterexample).
//!
//! The check walks, per subset, one fragment after another and only to classes of equivalence that share
//! a class value with the combination so far, so combinations that join to nothing are never listed.

use std::collections::HashMap;

/// The class values of one equivalence class: `(class code, records)`, one entry per class present.
pub type ClassCounts = Vec<(u32, u64)>;

/// A combination whose join is neither empty nor k-anonymous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The fragments joined (indices, increasing).
    pub fragments: Vec<usize>,
    /// The equivalence class of each of those fragments (indices in its fragment).
    pub classes: Vec<usize>,
    /// The tuples the join produces, 0 < j < k.
    pub j: u64,
}

/// J of one equivalence class per fragment: Σ over shared class values of the product of their counts.
pub fn join_size(classes: &[&ClassCounts]) -> u64 {
    let Some((first, rest)) = classes.split_first() else {
        return 0;
    };
    first
        .iter()
        .map(|&(c, count)| {
            rest.iter().fold(count, |product, eq| {
                let other = eq.iter().find(|(d, _)| *d == c).map_or(0, |&(_, n)| n);
                product.saturating_mul(other)
            })
        })
        .sum()
}

/// Whether no join can fail, by the note's subset lemma generalised: when every equivalence class
/// holds at least `k` records and the class-value sets of classes of different fragments are each
/// nested or disjoint (a laminar family), every non-empty join of one class per fragment of a subset
/// shares exactly the values of the smallest set among them, so J is at least that class's size. A
/// binary class always qualifies. `false` means only that the lemma does not apply.
pub fn nested_or_disjoint(fragments: &[Vec<ClassCounts>], k: u64) -> bool {
    const MOST_SETS: usize = 4096;
    let mut sets: Vec<(usize, Vec<u32>)> = Vec::new();
    for (t, eqs) in fragments.iter().enumerate() {
        let mut own: Vec<Vec<u32>> = Vec::new();
        for eq in eqs {
            if eq.iter().map(|&(_, n)| n).sum::<u64>() < k {
                return false;
            }
            let mut values: Vec<u32> = eq.iter().map(|&(c, _)| c).collect();
            values.sort_unstable();
            own.push(values);
        }
        own.sort_unstable();
        own.dedup();
        sets.extend(own.into_iter().map(|v| (t, v)));
        if sets.len() > MOST_SETS {
            return false;
        }
    }
    let subset = |a: &[u32], b: &[u32]| a.iter().all(|c| b.binary_search(c).is_ok());
    sets.iter().enumerate().all(|(x, (t, a))| {
        sets[x + 1..].iter().all(|(u, b)| {
            t == u || !a.iter().any(|c| b.binary_search(c).is_ok()) || subset(a, b) || subset(b, a)
        })
    })
}

/// The first combination of equivalence classes (over every subset of at least two fragments, in
/// increasing subset order) whose join size is positive and below `k`; `None` when the fragmentation is
/// non-reconstructible. `fragments[t][i]` lists the class values of fragment t's i-th equivalence class.
pub fn first_violation(fragments: &[Vec<ClassCounts>], k: u64) -> Option<Violation> {
    let m = fragments.len();
    // per fragment: class value → the equivalence classes holding it
    let holders: Vec<HashMap<u32, Vec<usize>>> = fragments
        .iter()
        .map(|eqs| {
            let mut by_class: HashMap<u32, Vec<usize>> = HashMap::new();
            for (i, eq) in eqs.iter().enumerate() {
                for &(c, _) in eq {
                    by_class.entry(c).or_default().push(i);
                }
            }
            by_class
        })
        .collect();
    let mut subsets: Vec<Vec<usize>> = (1u32..(1u32 << m.min(31)))
        .filter(|mask| mask.count_ones() >= 2)
        .map(|mask| (0..m).filter(|t| mask >> t & 1 == 1).collect())
        .collect();
    subsets.sort_by_key(|s| (s.len(), s.clone()));
    for subset in subsets {
        let first = subset[0];
        for (i, eq) in fragments[first].iter().enumerate() {
            let state: Vec<(u32, u64)> = eq.clone();
            let mut chosen = vec![i];
            if let Some(v) = walk(fragments, &holders, &subset, 1, &state, &mut chosen, k) {
                return Some(v);
            }
        }
    }
    None
}

/// Extends the combination `chosen` (one class per fragment of `subset` so far, with the products of
/// the shared class values in `state`) by fragment `subset[depth]`.
fn walk(
    fragments: &[Vec<ClassCounts>],
    holders: &[HashMap<u32, Vec<usize>>],
    subset: &[usize],
    depth: usize,
    state: &[(u32, u64)],
    chosen: &mut Vec<usize>,
    k: u64,
) -> Option<Violation> {
    if depth == subset.len() {
        let j: u64 = state.iter().map(|&(_, n)| n).sum();
        return (j > 0 && j < k).then(|| Violation {
            fragments: subset.to_vec(),
            classes: chosen.clone(),
            j,
        });
    }
    let t = subset[depth];
    let mut candidates: Vec<usize> = state
        .iter()
        .flat_map(|(c, _)| holders[t].get(c).into_iter().flatten().copied())
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    for i in candidates {
        let eq = &fragments[t][i];
        let next: Vec<(u32, u64)> = state
            .iter()
            .filter_map(|&(c, n)| {
                eq.iter()
                    .find(|(d, _)| *d == c)
                    .map(|&(_, m)| (c, n.saturating_mul(m)))
            })
            .collect();
        chosen.push(i);
        let found = walk(fragments, holders, subset, depth + 1, &next, chosen, k);
        chosen.pop();
        if found.is_some() {
            return found;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const X: u32 = 0;
    const Y: u32 = 1;
    const Z: u32 = 2;

    /// The note's §6.4 fragments (k = 3): F₁ = A, B, C and F₂ = P, Q, R.
    fn example() -> (Vec<ClassCounts>, Vec<ClassCounts>) {
        (
            vec![vec![(X, 2), (Y, 1)], vec![(Y, 3)], vec![(Y, 1), (Z, 2)]],
            vec![
                vec![(X, 1), (Y, 2)],
                vec![(X, 1), (Y, 1), (Z, 1)],
                vec![(Y, 2), (Z, 1)],
            ],
        )
    }

    #[test]
    fn the_j_table_of_the_example() {
        let (f1, f2) = example();
        let j = |a: usize, b: usize| join_size(&[&f1[a], &f2[b]]);
        // rows A, B, C; columns P, Q, R
        let table: Vec<Vec<u64>> = (0..3).map(|a| (0..3).map(|b| j(a, b)).collect()).collect();
        assert_eq!(table, vec![vec![4, 3, 2], vec![6, 3, 6], vec![2, 3, 4]]);
        let v = first_violation(&[f1.clone(), f2.clone()], 3).unwrap();
        assert_eq!((v.fragments, v.classes, v.j), (vec![0, 1], vec![0, 2], 2));
        // {x, y} and {y, z} overlap without nesting: the shortcut does not apply
        assert!(!nested_or_disjoint(&[f1.clone(), f2.clone()], 3));
        // after the note's DGBE repair (R → {y:3}, C → {z:3}) every join passes
        let mut f1 = f1;
        let mut f2 = f2;
        f2[2] = vec![(Y, 3)];
        f1[2] = vec![(Z, 3)];
        assert_eq!(first_violation(&[f1.clone(), f2.clone()], 3), None);
        assert_eq!(join_size(&[&f1[1], &f2[2]]), 9);
        assert_eq!(join_size(&[&f1[2], &f2[0]]), 0);
    }

    #[test]
    fn three_fragments_are_checked_as_a_whole() {
        let (a, b, c, d) = (0, 1, 2, 3);
        let f1 = vec![vec![(a, 1), (b, 3), (c, 3)]];
        let f2 = vec![vec![(a, 1), (b, 3), (d, 3)]];
        let f3 = vec![vec![(a, 1), (c, 3), (d, 3)]];
        for pair in [[&f1, &f2], [&f1, &f3], [&f2, &f3]] {
            assert_eq!(join_size(&[&pair[0][0], &pair[1][0]]), 10);
        }
        let v = first_violation(&[f1, f2, f3], 3).unwrap();
        assert_eq!((v.fragments, v.j), (vec![0, 1, 2], 1));
    }

    fn binary_fragment() -> impl Strategy<Value = Vec<ClassCounts>> {
        proptest::collection::vec((0u64..6, 0u64..6), 1..6).prop_map(|eqs| {
            eqs.into_iter()
                .map(|(zeros, ones)| {
                    // every class of at least k = 3 records
                    let (zeros, ones) = if zeros + ones < 3 {
                        (zeros + 3, ones)
                    } else {
                        (zeros, ones)
                    };
                    [(0, zeros), (1, ones)]
                        .into_iter()
                        .filter(|&(_, n)| n > 0)
                        .collect()
                })
                .collect()
        })
    }

    proptest! {
        /// With a binary class one class set always contains the other or they are disjoint, so no join
        /// of k-anonymous fragments is ever below k (the note's subset lemma).
        #[test]
        fn a_binary_class_never_reconstructs(f1 in binary_fragment(), f2 in binary_fragment()) {
            prop_assert!(nested_or_disjoint(&[f1.clone(), f2.clone()], 3));
            prop_assert_eq!(first_violation(&[f1, f2], 3), None);
        }

        /// Whenever the laminar shortcut says no join can fail, the full check over every subset
        /// agrees (three fragments of four class values).
        #[test]
        fn the_shortcut_agrees_with_the_full_check(
            fragments in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::collection::btree_map(0u32..4, 1u64..5, 1..4),
                    1..5,
                ),
                2..4,
            ),
        ) {
            let fragments: Vec<Vec<ClassCounts>> = fragments
                .into_iter()
                .map(|eqs| eqs.into_iter().map(|m| m.into_iter().collect()).collect())
                .collect();
            if nested_or_disjoint(&fragments, 3) {
                prop_assert_eq!(first_violation(&fragments, 3), None);
            }
        }
    }
}
