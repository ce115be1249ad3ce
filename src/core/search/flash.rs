//! Flash (Kohlmayer, Prasser, Eckert, Kemper, Kuhn: "Flash: Efficient, Stable and Optimal K-Anonymity",
//! IEEE PASSAT 2012), the search of ARX.
//!
//! Levels are visited bottom-up; within a level, nodes are taken in a fixed order (ascending generalization
//! degree `Σ v_j / H_j`, then node id), which makes the traversal stable. From each untagged node a path
//! is built greedily upwards through untagged successors (in the same order) and binary-searched for its
//! lowest solution; every check tags the node's up-set or down-set. Non-solutions met on a path go into a
//! min-heap (same order) whose successors start further paths, so the search spreads along the border
//! between solutions and non-solutions before moving on. With monotone models every node ends up tagged
//! and the minimal solutions are known.
//!
//! Neither the levels nor the tags are kept for the whole lattice. The next node of the level-wise pass
//! is the first unknown node of the [`Border`] in the same order (every unknown node whose
//! specializations are all settled lies on it, so the pass visits the same nodes in the same order as
//! one listing each height), tags are the checked nodes' [`KnownTags`], and the candidates are the border
//! itself once everything is settled: the search costs what its checks cost, on any lattice size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::border::Border;
use super::known::KnownTags;
use super::{Evaluator, Tag};
use crate::core::control::{Phase, Progress};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};

/// Runs Flash and returns the candidates for selection: the minimal solutions when the metric is
/// monotone, every solution otherwise.
pub fn search(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let minimal = minimal_solutions(ev)?;
    if ev.metric().is_monotone(ev.suppression_possible()) {
        return Ok(minimal);
    }
    every_solution_above(ev, minimal)
}

/// Runs Flash and returns the minimal solutions, in id order.
pub fn minimal_solutions(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    ev.search_reports_progress();
    let mut flash = Flash {
        order: Order::new(&lattice),
        tags: KnownTags::new(&lattice),
        border: Border::new(&lattice),
        heap: BinaryHeap::new(),
        pass: BinaryHeap::new(),
        below_height: nodes_below_each_height(&lattice),
        lattice,
    };
    flash.run(ev)?;
    let minimal = flash.border.members();
    debug_assert!(minimal
        .iter()
        .all(|&id| flash.tags.get(id) == Tag::Solution));
    Ok(minimal)
}

/// Every node above one of `minimal` (all solutions), found upwards from them. The caller keeps this to
/// lattices of at most [`super::MAX_TAGGED_NODES`] nodes: one bit per node marks those met.
fn every_solution_above(
    ev: &Evaluator<'_>,
    minimal: Vec<NodeId>,
) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice();
    let mut pace = ev.pace();
    let mut seen = vec![0u64; (lattice.size() as usize).div_ceil(64)];
    let mut mark = |id: NodeId| {
        let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
        let fresh = seen[word] & bit == 0;
        seen[word] |= bit;
        fresh
    };
    let mut stack: Vec<NodeId> = minimal.into_iter().filter(|&id| mark(id)).collect();
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        pace.step(lattice.dimensions())?;
        out.push(id);
        for j in 0..lattice.dimensions() {
            if lattice.level(id, j) < lattice.max_levels()[j] {
                let next = id + lattice.stride(j);
                if mark(next) {
                    stack.push(next);
                }
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Nodes of height below `h`, for every height `h` up to the top (saturating at `u64::MAX`): the pass
/// has settled them when it reaches height `h`, which is its progress.
fn nodes_below_each_height(lattice: &Lattice) -> Vec<u64> {
    let mut at: Vec<u128> = vec![1];
    for &h in lattice.max_levels() {
        let mut next = vec![0u128; at.len() + h as usize];
        for (height, &count) in at.iter().enumerate() {
            for level in 0..=h as usize {
                next[height + level] = next[height + level].saturating_add(count);
            }
        }
        at = next;
    }
    let mut below = Vec::with_capacity(at.len());
    let mut sum = 0u128;
    for count in at {
        below.push(sum.min(u64::MAX as u128) as u64);
        sum = sum.saturating_add(count);
    }
    below
}

/// The stable node order: generalization degree in fixed point, then id.
struct Order {
    weights: Vec<u64>,
}

impl Order {
    fn new(lattice: &Lattice) -> Self {
        // Σ v_j / H_j scaled by the product of the H_j keeps the comparison exact for small lattices; a
        // common large scale is used otherwise.
        const SCALE: u64 = 1 << 32;
        let weights = lattice
            .max_levels()
            .iter()
            .map(|&h| if h == 0 { 0 } else { SCALE / h as u64 })
            .collect();
        Self { weights }
    }

    fn key(&self, lattice: &Lattice, id: NodeId) -> (u64, NodeId) {
        let degree = self
            .weights
            .iter()
            .enumerate()
            .map(|(j, &w)| lattice.level(id, j) as u64 * w)
            .sum();
        (degree, id)
    }
}

/// A border node waiting for the level-wise pass: height, then the stable order.
type PassEntry = Reverse<(usize, (u64, NodeId))>;

struct Flash {
    lattice: Lattice,
    order: Order,
    tags: KnownTags,
    border: Border,
    heap: BinaryHeap<Reverse<(u64, NodeId)>>,
    pass: BinaryHeap<PassEntry>,
    below_height: Vec<u64>,
}

impl Flash {
    fn run(&mut self, ev: &mut Evaluator<'_>) -> Result<(), CoreError> {
        let total = self.lattice.size().min(u64::MAX as u128) as u64;
        let mut pace = ev.pace();
        pace.check()?;
        let mut reached = None;
        loop {
            for id in self.border.take_fresh() {
                let height = self.lattice.height_of(id);
                self.pass
                    .push(Reverse((height, self.order.key(&self.lattice, id))));
            }
            let Some(Reverse((height, (_, id)))) = self.pass.pop() else {
                break;
            };
            pace.step(1)?;
            if !self.border.contains(id) || self.tags.get(id) != Tag::Unknown {
                continue;
            }
            if reached.is_none_or(|r| height > r) {
                reached = Some(height);
                ev.report(Progress {
                    phase: Phase::Searching,
                    done: self.below_height[height],
                    total,
                });
            }
            let path = self.find_path(id);
            self.check_path(ev, &path)?;
            while let Some(Reverse((_, node))) = self.heap.pop() {
                for successor in self.successors(node) {
                    pace.step(1)?;
                    if self.tags.get(successor) == Tag::Unknown {
                        let path = self.find_path(successor);
                        self.check_path(ev, &path)?;
                    }
                }
            }
        }
        ev.report(Progress {
            phase: Phase::Searching,
            done: total,
            total,
        });
        Ok(())
    }

    /// Direct generalizations of `id` in the stable order.
    fn successors(&self, id: NodeId) -> Vec<NodeId> {
        let lattice = &self.lattice;
        let mut out: Vec<NodeId> = (0..lattice.dimensions())
            .filter(|&j| lattice.level(id, j) < lattice.max_levels()[j])
            .map(|j| id + lattice.stride(j))
            .collect();
        out.sort_by_cached_key(|&s| self.order.key(lattice, s));
        out
    }

    /// Greedy upward path through untagged nodes, starting at `start`.
    fn find_path(&mut self, start: NodeId) -> Vec<NodeId> {
        let mut path = vec![start];
        let mut current = start;
        while let Some(next) = self
            .successors(current)
            .into_iter()
            .find(|&s| self.tags.get(s) == Tag::Unknown)
        {
            path.push(next);
            current = next;
        }
        path
    }

    /// Binary search for the lowest solution on `path`; non-solutions go to the heap and move the border.
    fn check_path(&mut self, ev: &mut Evaluator<'_>, path: &[NodeId]) -> Result<(), CoreError> {
        let (mut low, mut high) = (0isize, path.len() as isize - 1);
        while low <= high {
            let mid = ((low + high) / 2) as usize;
            let node = path[mid];
            let solution = match self.tags.get(node) {
                Tag::Solution => true,
                Tag::NonSolution => false,
                Tag::Unknown => {
                    let solution = ev.check(node)?.is_solution;
                    self.tags.tag(node, solution);
                    if !solution {
                        self.heap.push(Reverse(self.order.key(&self.lattice, node)));
                        self.border.exclude_below(&self.lattice.levels(node));
                    }
                    solution
                }
            };
            if solution {
                high = mid as isize - 1;
            } else {
                low = mid as isize + 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_nodes_below_each_height() {
        // levels 0..=2 and 0..=1: heights 0 1 1 2 2 3 → 1, 2, 2, 1 nodes
        assert_eq!(
            nodes_below_each_height(&Lattice::new(vec![2, 1])),
            vec![0, 1, 3, 5]
        );
    }
}
