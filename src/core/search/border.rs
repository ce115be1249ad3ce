//! The lowest nodes not known to be non-solutions: the minimal elements of the lattice minus the down-sets
//! of the checked non-solutions.
//!
//! With monotone privacy models every solution lies above one of these nodes, every unknown node whose
//! specializations are all settled is one of them, and once every node is settled they are exactly the
//! minimal solutions. So an exact search can take its next lowest unknown node from here instead of
//! listing a whole height of the lattice, and its candidates are the border itself: the cost follows the
//! checks and the border, not the lattice.
//!
//! Kept incrementally, as the negative border in level-wise pattern mining: when a non-solution `n` is
//! checked, every member `b ≤ n` leaves, and its replacements are `b` with one level `j` raised to
//! `n_j + 1`, kept when no other member lies below them.

use rustc_hash::FxHashSet;

use super::dominance::{Direction, Dominance};
use crate::core::lattice::{Lattice, NodeId};

/// The border, with the members added since the caller last took them.
#[derive(Debug, Clone)]
pub struct Border {
    lattice: Lattice,
    index: Dominance,
    alive: FxHashSet<NodeId>,
    fresh: Vec<NodeId>,
}

impl Border {
    /// The border of a lattice with nothing checked: the bottom.
    pub fn new(lattice: &Lattice) -> Self {
        let mut border = Self {
            lattice: lattice.clone(),
            index: Dominance::new(lattice.max_levels(), Direction::Below),
            alive: FxHashSet::default(),
            fresh: Vec::new(),
        };
        border.add(&vec![0; lattice.dimensions()]);
        border
    }

    fn add(&mut self, levels: &[u8]) {
        self.index.push(levels);
        let id = self.lattice.id(levels);
        self.alive.insert(id);
        self.fresh.push(id);
    }

    /// Whether node `id` is on the border.
    pub fn contains(&self, id: NodeId) -> bool {
        self.alive.contains(&id)
    }

    /// The nodes added since the last call (the caller queues them). Some may have left the border
    /// again since: the caller checks [`Border::contains`] or the tags when it takes them.
    pub fn take_fresh(&mut self) -> Vec<NodeId> {
        std::mem::take(&mut self.fresh)
    }

    /// The nodes on the border, in id order.
    pub fn members(&self) -> Vec<NodeId> {
        let mut out: Vec<NodeId> = self.alive.iter().copied().collect();
        out.sort_unstable();
        out
    }

    /// Moves the border above a checked non-solution with these levels.
    pub fn exclude_below(&mut self, non_solution: &[u8]) {
        let mut covered = Vec::new();
        self.index.for_each(non_solution, |m| covered.push(m));
        if covered.is_empty() {
            return;
        }
        let dims = self.lattice.dimensions();
        let mut raised: Vec<u8> = Vec::with_capacity(covered.len() * dims * dims);
        for &m in &covered {
            let levels = self.index.levels(m);
            self.alive.remove(&self.lattice.id(levels));
            for j in 0..dims {
                if non_solution[j] < self.lattice.max_levels()[j] {
                    let start = raised.len();
                    raised.extend_from_slice(levels);
                    raised[start + j] = non_solution[j] + 1;
                }
            }
        }
        for &m in &covered {
            self.index.remove(m);
        }
        let mut candidates: Vec<&[u8]> = raised
            .chunks_exact(dims)
            .filter(|c| !self.index.any(c))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        // a candidate stays when nothing left on the border, and no other candidate, lies below it
        let mut among = Dominance::new(self.lattice.max_levels(), Direction::Below);
        for c in &candidates {
            among.push(c);
        }
        let kept: Vec<Vec<u8>> = candidates
            .iter()
            .filter(|c| {
                let mut below = 0;
                among.for_each(c, |_| below += 1);
                below == 1
            })
            .map(|c| c.to_vec())
            .collect();
        for c in kept {
            self.add(&c);
        }
        if self.index.is_sparse() {
            self.index.compact();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::SplitMix64;

    /// The minimal nodes not below any of `non_solutions`, by listing the lattice.
    fn brute(lattice: &Lattice, non_solutions: &[Vec<u8>]) -> Vec<NodeId> {
        let outside = |v: &[u8]| !non_solutions.iter().any(|n| Lattice::le(v, n));
        let mut out: Vec<NodeId> = (0..lattice.size() as u64)
            .filter(|&id| {
                let v = lattice.levels(id);
                outside(&v)
                    && (0..v.len()).all(|j| {
                        let mut below = v.clone();
                        v[j] == 0 || {
                            below[j] -= 1;
                            !outside(&below)
                        }
                    })
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn follows_the_minimal_nodes_outside_the_down_sets() {
        let mut rng = SplitMix64(11);
        for round in 0..40 {
            let max: Vec<u8> = (0..2 + round % 4).map(|_| rng.below(4) as u8).collect();
            let lattice = Lattice::new(max.clone());
            let mut border = Border::new(&lattice);
            let mut non_solutions = Vec::new();
            for _ in 0..12 {
                let n: Vec<u8> = max.iter().map(|&h| rng.below(h as u64 + 1) as u8).collect();
                border.exclude_below(&n);
                non_solutions.push(n);
                assert_eq!(
                    border.members(),
                    brute(&lattice, &non_solutions),
                    "lattice {max:?}"
                );
            }
        }
    }

    #[test]
    fn fresh_members_are_handed_out_once() {
        let lattice = Lattice::new(vec![2, 2]);
        let mut border = Border::new(&lattice);
        assert_eq!(border.take_fresh(), vec![0]);
        border.exclude_below(&[0, 1]);
        let fresh: Vec<Vec<u8>> = border
            .take_fresh()
            .iter()
            .map(|&id| lattice.levels(id))
            .collect();
        assert_eq!(fresh, vec![vec![0, 2], vec![1, 0]]);
        assert!(!border.contains(0) && border.contains(lattice.id(&[1, 0])));
        assert!(border.take_fresh().is_empty());
    }
}
