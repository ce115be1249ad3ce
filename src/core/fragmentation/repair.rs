//! Repairs that make joins of fragments on the class non-reconstructible (Zakerzadeh et al., §4.1;
//! note §3.6–§3.7, resolved semantics), by changing class values of records within their equivalence
//! class:
//! - [`naive`]: every equivalence class takes its majority class value (ties to the smallest value).
//!   Classes then join to nothing or to |EQ₁|·|EQ₂| ≥ k² tuples.
//! - [`dgbe`] (dependency-graph-based enforcement, Algorithm 3): a breadth-first walk over the graph of
//!   equivalence classes of different fragments that share a class value; for each edge that fails
//!   Theorem 4.1 the not-yet-visited endpoint changes one record at a time from its least frequent value
//!   to its majority value until the edge, and every edge to an already visited class, passes.
//!
//! Both work on class counts and return the changes; applying them to records (the smallest row ids of
//! the changed value first) is the caller's. Each fragment's copy of the class column changes on its own.

use super::reconstruction::{join_size, ClassCounts};

/// Records of one equivalence class whose class value changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The fragment.
    pub fragment: usize,
    /// The equivalence class, by index in its fragment.
    pub class: usize,
    /// The value changed.
    pub from: u32,
    /// The value it became.
    pub to: u32,
    /// How many records changed.
    pub records: u64,
}

/// The majority value of an equivalence class (the smallest among equals).
fn majority(eq: &ClassCounts) -> Option<u32> {
    eq.iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|&(c, _)| c)
}

/// Sets every equivalence class to its majority value; returns one change per value moved.
pub fn naive(fragments: &mut [Vec<ClassCounts>]) -> Vec<Change> {
    let mut changes = Vec::new();
    for (t, eqs) in fragments.iter_mut().enumerate() {
        for (i, eq) in eqs.iter_mut().enumerate() {
            let Some(top) = majority(eq) else {
                continue;
            };
            let size: u64 = eq.iter().map(|&(_, n)| n).sum();
            for &(c, n) in eq.iter().filter(|&&(c, _)| c != top) {
                changes.push(Change {
                    fragment: t,
                    class: i,
                    from: c,
                    to: top,
                    records: n,
                });
            }
            *eq = vec![(top, size)];
        }
    }
    changes
}

/// The least frequent value of `eq` with its records (the smallest among equals, the majority
/// excluded) and the majority value; `None` for a class with one value.
pub(crate) fn least_and_majority(eq: &ClassCounts) -> Option<(u32, u64, u32)> {
    let top = majority(eq)?;
    let (low, n) = eq
        .iter()
        .filter(|&&(c, _)| c != top)
        .min_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
        .copied()?;
    Some((low, n, top))
}

/// Moves one record of `eq` from its least frequent value to its majority value
/// ([`least_and_majority`]); `None` for a class with one value.
fn change_one(eq: &mut ClassCounts) -> Option<(u32, u32)> {
    let (low, _, top) = least_and_majority(eq)?;
    for entry in eq.iter_mut() {
        if entry.0 == low {
            entry.1 -= 1;
        } else if entry.0 == top {
            entry.1 += 1;
        }
    }
    eq.retain(|&(_, n)| n > 0);
    Some((low, top))
}

/// Whether two equivalence classes share a class value.
fn linked(a: &ClassCounts, b: &ClassCounts) -> bool {
    a.iter().any(|(c, _)| b.iter().any(|(d, _)| c == d))
}

/// Dependency-graph-based enforcement over every pair of fragments; `k` of the fragments' k-anonymity
/// (every equivalence class holds at least k records, so a class with one value passes every edge).
/// Returns the changes, one record each, in the order made.
pub fn dgbe(fragments: &mut [Vec<ClassCounts>], k: u64) -> Vec<Change> {
    walk(
        fragments,
        |a, b| {
            let j = join_size(&[a, b]);
            j > 0 && j < k
        },
        |eq| change_one(eq).map(|(from, to)| (from, to, 1)),
    )
}

/// The breadth-first walk of Algorithms 3 and 4 over the graph of equivalence classes of different
/// fragments that share a class value, components in node order (fragment, then class index), each
/// from its first node. For each not yet visited neighbour `un` of `cur`, `change` is applied to `un`
/// while the edge fails, and, once `un` changed, while an edge from `un` to a visited class fails; `cur`
/// is visited after all its neighbours. `change` returns (from, to, records) or `None` when `un` has one
/// value left.
pub(crate) fn walk(
    fragments: &mut [Vec<ClassCounts>],
    fails: impl Fn(&ClassCounts, &ClassCounts) -> bool,
    mut change: impl FnMut(&mut ClassCounts) -> Option<(u32, u32, u64)>,
) -> Vec<Change> {
    // node ids: fragment offsets plus the class index
    let offsets: Vec<usize> = fragments
        .iter()
        .scan(0, |next, eqs| {
            let at = *next;
            *next += eqs.len();
            Some(at)
        })
        .collect();
    let total: usize = fragments.iter().map(Vec::len).sum();
    let node_of = |id: usize| {
        let t = offsets.partition_point(|&o| o <= id) - 1;
        (t, id - offsets[t])
    };
    // class value → nodes holding it (kept as built: edges only disappear, and stale entries are
    // filtered by checking the current values)
    let mut holders: std::collections::HashMap<u32, Vec<usize>> = std::collections::HashMap::new();
    for (t, eqs) in fragments.iter().enumerate() {
        for (i, eq) in eqs.iter().enumerate() {
            for &(c, _) in eq {
                holders.entry(c).or_default().push(offsets[t] + i);
            }
        }
    }
    let neighbors = |fragments: &[Vec<ClassCounts>], id: usize| -> Vec<usize> {
        let (t, i) = node_of(id);
        let mut out: Vec<usize> = fragments[t][i]
            .iter()
            .flat_map(|(c, _)| holders.get(c).into_iter().flatten().copied())
            .filter(|&other| {
                let (u, j) = node_of(other);
                u != t && linked(&fragments[u][j], &fragments[t][i])
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let mut visited = vec![false; total];
    let mut enqueued = vec![false; total];
    let mut changes = Vec::new();
    for start in 0..total {
        if enqueued[start] {
            continue;
        }
        enqueued[start] = true;
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(cur) = queue.pop_front() {
            let (ct, ci) = node_of(cur);
            for un in neighbors(fragments, cur) {
                if visited[un] {
                    continue;
                }
                let (ut, ui) = node_of(un);
                let mut changed = false;
                loop {
                    let failing = fails(&fragments[ct][ci], &fragments[ut][ui])
                        || (changed
                            && neighbors(fragments, un).into_iter().any(|vn| {
                                let (vt, vi) = node_of(vn);
                                visited[vn] && fails(&fragments[vt][vi], &fragments[ut][ui])
                            }));
                    if !failing {
                        break;
                    }
                    let Some((from, to, records)) = change(&mut fragments[ut][ui]) else {
                        break;
                    };
                    changed = true;
                    changes.push(Change {
                        fragment: ut,
                        class: ui,
                        from,
                        to,
                        records,
                    });
                }
                if !enqueued[un] {
                    enqueued[un] = true;
                    queue.push_back(un);
                }
            }
            visited[cur] = true;
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::super::reconstruction::first_violation;
    use super::*;
    use proptest::prelude::*;

    const X: u32 = 0;
    const Y: u32 = 1;
    const Z: u32 = 2;

    /// The note's §6.4 fragments (k = 3).
    fn example() -> Vec<Vec<ClassCounts>> {
        vec![
            vec![vec![(X, 2), (Y, 1)], vec![(Y, 3)], vec![(Y, 1), (Z, 2)]],
            vec![
                vec![(X, 1), (Y, 2)],
                vec![(X, 1), (Y, 1), (Z, 1)],
                vec![(Y, 2), (Z, 1)],
            ],
        ]
    }

    fn records(changes: &[Change]) -> u64 {
        changes.iter().map(|c| c.records).sum()
    }

    #[test]
    fn naive_changes_six_records_of_the_example() {
        let mut fragments = example();
        let changes = naive(&mut fragments);
        assert_eq!(records(&changes), 6);
        assert_eq!(
            fragments,
            vec![
                vec![vec![(X, 3)], vec![(Y, 3)], vec![(Z, 3)]],
                vec![vec![(Y, 3)], vec![(X, 3)], vec![(Y, 3)]],
            ]
        );
        assert_eq!(first_violation(&fragments, 3), None);
    }

    #[test]
    fn dgbe_changes_two_records_of_the_example() {
        let mut fragments = example();
        let changes = dgbe(&mut fragments, 3);
        assert_eq!(
            changes,
            vec![
                Change {
                    fragment: 1,
                    class: 2,
                    from: Z,
                    to: Y,
                    records: 1
                },
                Change {
                    fragment: 0,
                    class: 2,
                    from: Y,
                    to: Z,
                    records: 1
                },
            ]
        );
        assert_eq!(fragments[1][2], vec![(Y, 3)]);
        assert_eq!(fragments[0][2], vec![(Z, 3)]);
        assert_eq!(first_violation(&fragments, 3), None);
    }

    /// Two fragments over `classes` values: equivalence classes of 3 to 8 records each.
    fn fragments(classes: u32) -> impl Strategy<Value = Vec<Vec<ClassCounts>>> {
        let eq = proptest::collection::vec(0..classes, 3..9).prop_map(|values| {
            let mut counts: Vec<(u32, u64)> = Vec::new();
            for v in values {
                match counts.iter_mut().find(|(c, _)| *c == v) {
                    Some(entry) => entry.1 += 1,
                    None => counts.push((v, 1)),
                }
            }
            counts.sort_unstable();
            counts
        });
        proptest::collection::vec(proptest::collection::vec(eq, 1..6), 2..=2)
    }

    proptest! {
        /// After either repair every join passes, and DGBE never changes more records than Naive.
        #[test]
        fn repairs_leave_no_violation_and_dgbe_distorts_no_more_than_naive(f in fragments(4)) {
            let mut by_naive = f.clone();
            let naive_changes = records(&naive(&mut by_naive));
            prop_assert_eq!(first_violation(&by_naive, 3), None);
            let mut by_dgbe = f.clone();
            let dgbe_changes = records(&dgbe(&mut by_dgbe, 3));
            prop_assert_eq!(first_violation(&by_dgbe, 3), None);
            prop_assert!(dgbe_changes <= naive_changes, "{} > {}", dgbe_changes, naive_changes);
        }

        /// A binary class needs no change at all, by DGBE or by δ-selectivity at any δ.
        #[test]
        fn a_binary_class_needs_no_change(f in fragments(2), delta in 0.01f64..=1.0) {
            let mut fragments = f.clone();
            prop_assert!(dgbe(&mut fragments, 3).is_empty());
            let mut fragments = f;
            prop_assert!(
                crate::core::fragmentation::selectivity::delta_selective(&mut fragments, 3, delta)
                    .is_empty()
            );
        }
    }
}
