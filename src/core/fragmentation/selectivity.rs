//! Equijoin selectivity and δ-selective repair (Zakerzadeh et al., §4.2, Def. 4.2–4.5 and Algorithm 4;
//! note §2.6 and §3.8, gap A7).
//!
//! When each equivalence class publishes only the set of its class values, a reader sees
//! C(|EQ| − 1, |C| − 1) versions of it (count vectors with every value at least once). η(EQ₁, EQ₂) is the
//! share of version pairs whose join on the common values CLS holds at least k tuples, every pair
//! weighted alike (Def. 4.4). It is computed exactly: a dynamic program over the common values, with
//! state (Σa, Σb, min(k, Σ a·b)), weighs each common-value vector by the number of ways to complete it
//! to a whole version (the note's correction of Appendix C.II). When one class set contains the other,
//! η = 1 (the subset lemma) for classes of at least k records.
//!
//! [`delta_selective`] is Algorithm 4: the walk of DGBE ([`super::repair::dgbe`]) with the test
//! η(cur, un) ≥ δ, and a change that removes the least frequent value of `un` (by the true counts; its
//! records join the majority value, so every record of the value is distorted).

use super::reconstruction::ClassCounts;
use super::repair::{least_and_majority, walk, Change};

/// C(n, r) as a float (0 when r > n).
fn binomial(n: u64, r: u64) -> f64 {
    if r > n {
        return 0.0;
    }
    let r = r.min(n - r);
    (0..r).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Versions of an equivalence class of `size` records and `values` distinct class values.
pub fn versions(size: u64, values: usize) -> f64 {
    if values == 0 || size < values as u64 {
        return 0.0;
    }
    binomial(size - 1, values as u64 - 1)
}

/// Ways to complete a common-value vector summing to `taken` into a version of a class of `size`
/// records whose `others` further values each need at least one record.
fn completions(size: u64, taken: u64, others: usize) -> f64 {
    if taken > size {
        return 0.0;
    }
    if others == 0 {
        return if taken == size { 1.0 } else { 0.0 };
    }
    versions(size - taken, others)
}

/// η of two equivalence classes (sizes and sorted class-value sets) for `k`; `None` when they share no
/// class value (not joinable).
pub fn eta(size1: u64, values1: &[u32], size2: u64, values2: &[u32], k: u64) -> Option<f64> {
    let common: Vec<u32> = values1
        .iter()
        .copied()
        .filter(|c| values2.contains(c))
        .collect();
    if common.is_empty() {
        return None;
    }
    let p = common.len();
    // the subset lemma: the smaller set's records all join at least once
    if (p == values1.len() && size1 >= k) || (p == values2.len() && size2 >= k) {
        return Some(1.0);
    }
    let (others1, others2) = (values1.len() - p, values2.len() - p);
    let (max_a, max_b) = (
        size1.saturating_sub(others1 as u64),
        size2.saturating_sub(others2 as u64),
    );
    let (na, nb, nk) = (max_a as usize + 1, max_b as usize + 1, k as usize + 1);
    let at = |sa: usize, sb: usize, j: usize| (sa * nb + sb) * nk + j;
    let mut dp = vec![0.0f64; na * nb * nk];
    dp[at(0, 0, 0)] = 1.0;
    for _ in 0..p {
        let mut next = vec![0.0f64; na * nb * nk];
        for sa in 0..na {
            for sb in 0..nb {
                for j in 0..nk {
                    let ways = dp[at(sa, sb, j)];
                    if ways == 0.0 {
                        continue;
                    }
                    for a in 1..na - sa {
                        for b in 1..nb - sb {
                            let joined = (j + a * b).min(k as usize);
                            next[at(sa + a, sb + b, joined)] += ways;
                        }
                    }
                }
            }
        }
        dp = next;
    }
    let mut good = 0.0;
    for sa in 0..na {
        let w1 = completions(size1, sa as u64, others1);
        if w1 == 0.0 {
            continue;
        }
        for sb in 0..nb {
            let w2 = completions(size2, sb as u64, others2);
            good += dp[at(sa, sb, k as usize)] * w1 * w2;
        }
    }
    let total = versions(size1, values1.len()) * versions(size2, values2.len());
    Some(if total > 0.0 { good / total } else { 1.0 })
}

/// η of two equivalence classes given by their counts.
fn eta_of(a: &ClassCounts, b: &ClassCounts, k: u64) -> Option<f64> {
    let size = |eq: &ClassCounts| eq.iter().map(|&(_, n)| n).sum::<u64>();
    let values = |eq: &ClassCounts| {
        let mut v: Vec<u32> = eq.iter().map(|&(c, _)| c).collect();
        v.sort_unstable();
        v
    };
    eta(size(a), &values(a), size(b), &values(b), k)
}

/// Removes the least frequent value of `eq` (the smallest among equals, never the majority), moving
/// its records to the majority value; the value and its records, or `None` for a class of one value.
fn remove_one(eq: &mut ClassCounts) -> Option<(u32, u32, u64)> {
    let (low, n, top) = least_and_majority(eq)?;
    for entry in eq.iter_mut() {
        if entry.0 == top {
            entry.1 += n;
        }
    }
    eq.retain(|&(c, _)| c != low);
    Some((low, top, n))
}

/// Algorithm 4 over every pair of fragments: each joinable pair ends with η ≥ `delta`. Returns the
/// changes, one removed value each.
pub fn delta_selective(fragments: &mut [Vec<ClassCounts>], k: u64, delta: f64) -> Vec<Change> {
    walk(
        fragments,
        |a, b| eta_of(a, b, k).is_some_and(|e| e < delta),
        remove_one,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FLU: u32 = 0;
    const PNEU: u32 = 1;
    const DYS: u32 = 2;
    const BRONCH: u32 = 3;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn version_counts_match_table_4() {
        // 5 records over flu, pneumonia, dyspepsia: 6 versions
        assert_eq!(versions(5, 3), 6.0);
        assert_eq!(versions(40, 2), 39.0);
        assert_eq!(versions(2, 3), 0.0);
    }

    #[test]
    fn eta_reference_values_of_the_note() {
        let all = [FLU, PNEU, DYS];
        assert_eq!(eta(5, &all, 5, &[FLU, PNEU], 5), Some(1.0));
        assert_eq!(eta(5, &all, 5, &all, 5), Some(1.0));
        assert_eq!(eta(5, &all, 6, &[FLU], 5), Some(1.0));
        assert!(close(
            eta(5, &all, 5, &[FLU, BRONCH], 5).unwrap(),
            7.0 / 24.0
        ));
        assert!(close(
            eta(5, &[FLU, PNEU], 5, &[FLU, BRONCH], 5).unwrap(),
            0.5
        ));
        assert_eq!(eta(40, &[0, 1], 40, &[0, 1], 40), Some(1.0));
        assert_eq!(eta(5, &[PNEU], 5, &[FLU], 5), None);
    }

    #[test]
    fn algorithm_4_removes_the_least_frequent_value() {
        // EQ₁ (flu 2, pneu 2, dys 1) against EQ₂ (flu 3, bronchitis 2): η = 7/24 < 0.5
        let mut first = vec![vec![(FLU, 2), (PNEU, 2), (DYS, 1)]];
        let mut second = vec![vec![(FLU, 3), (BRONCH, 2)]];
        let mut fragments = vec![first.clone(), second.clone()];
        let changes = delta_selective(&mut fragments, 5, 0.5);
        // the walk starts at EQ₁, so EQ₂ is `un`: bronchitis goes, 2 records
        assert_eq!(changes.len(), 1);
        assert_eq!((changes[0].from, changes[0].records), (BRONCH, 2));
        assert_eq!(fragments[1][0], vec![(FLU, 5)]);
        // with EQ₁ as `un`, dyspepsia goes (1 record) and η becomes 0.5
        assert_eq!(remove_one(&mut first[0]), Some((DYS, FLU, 1)));
        assert!(close(eta_of(&first[0], &second[0], 5).unwrap(), 0.5));
        assert_eq!(remove_one(&mut second[0]), Some((BRONCH, FLU, 2)));
    }

    /// Def. 4.4 by listing every version of both classes.
    fn brute_force(size1: u64, values1: &[u32], size2: u64, values2: &[u32], k: u64) -> f64 {
        fn all(size: u64, parts: usize) -> Vec<Vec<u64>> {
            if parts == 1 {
                return vec![vec![size]];
            }
            let mut out = Vec::new();
            for first in 1..=size.saturating_sub(parts as u64 - 1) {
                for mut rest in all(size - first, parts - 1) {
                    rest.insert(0, first);
                    out.push(rest);
                }
            }
            out
        }
        let (v1, v2) = (all(size1, values1.len()), all(size2, values2.len()));
        let mut good = 0u64;
        for x in &v1 {
            for y in &v2 {
                let j: u64 = values1
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| values2.iter().position(|d| d == c).map(|p| x[i] * y[p]))
                    .sum();
                good += u64::from(j >= k);
            }
        }
        good as f64 / (v1.len() * v2.len()) as f64
    }

    fn class_set() -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(0u32..5, 1..4).prop_map(|s| s.into_iter().collect())
    }

    proptest! {
        /// The dynamic program equals Def. 4.4 counted version pair by version pair.
        #[test]
        fn eta_equals_the_brute_force_count(
            size1 in 3u64..9, values1 in class_set(),
            size2 in 3u64..9, values2 in class_set(),
            k in 2u64..8,
        ) {
            prop_assume!(size1 >= values1.len() as u64 && size2 >= values2.len() as u64);
            prop_assume!(size1 >= k && size2 >= k);
            let exact = eta(size1, &values1, size2, &values2, k);
            if values1.iter().any(|c| values2.contains(c)) {
                let expected = brute_force(size1, &values1, size2, &values2, k);
                prop_assert!((exact.unwrap() - expected).abs() < 1e-9, "{:?} vs {}", exact, expected);
            } else {
                prop_assert_eq!(exact, None);
            }
        }
    }
}
