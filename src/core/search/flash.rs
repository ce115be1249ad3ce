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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{candidates_from_tags, Evaluator, Tag, Tags};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};

/// Runs Flash and returns the candidates for selection.
pub fn search(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let mut flash = Flash {
        order: Order::new(&lattice),
        tags: Tags::for_search(ev),
        heap: BinaryHeap::new(),
        lattice,
    };
    flash.run(ev)?;
    let mut tags = flash.tags;
    candidates_from_tags(ev, &mut tags)
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

struct Flash {
    lattice: Lattice,
    order: Order,
    tags: Tags,
    heap: BinaryHeap<Reverse<(u64, NodeId)>>,
}

impl Flash {
    fn run(&mut self, ev: &mut Evaluator<'_>) -> Result<(), CoreError> {
        let bottom = vec![0u8; self.lattice.dimensions()];
        let top = self.lattice.max_levels().to_vec();
        // most nodes of a large lattice are tagged by the time their level comes: visiting them counts
        let mut pace = ev.pace();
        for height in 0..=self.lattice.top_height() {
            let mut level = Vec::new();
            Lattice::for_each_at_height(&bottom, &top, height, &mut |v| {
                level.push(self.lattice.id(v));
                true
            });
            level.sort_by_cached_key(|&id| self.order.key(&self.lattice, id));
            for id in level {
                pace.step(1)?;
                if self.tags.get(id) != Tag::Unknown {
                    continue;
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
        }
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
    fn find_path(&self, start: NodeId) -> Vec<NodeId> {
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

    /// Binary search for the lowest solution on `path`; non-solutions go to the heap.
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
                    self.tags.tag(node, solution, &mut ev.pace())?;
                    if !solution {
                        self.heap.push(Reverse(self.order.key(&self.lattice, node)));
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
