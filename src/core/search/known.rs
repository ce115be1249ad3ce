//! Predictive tagging without a per-node array (Samarati 2001; Issa 2009 §4.2.1): a node above a checked
//! solution is a solution, a node below a checked non-solution is a non-solution. The checked nodes are
//! kept in two [`Dominance`] indexes, so what tagging costs follows the nodes checked, not the lattice:
//! nothing is spread, and a query costs O(d · checks / 64) word operations.

use super::dominance::{Direction, Dominance};
use rustc_hash::FxHashMap;

use super::Tag;
use crate::core::lattice::{Lattice, NodeId};

/// What the checks so far imply about every node.
#[derive(Debug, Clone)]
pub struct KnownTags {
    lattice: Lattice,
    solutions: Dominance,
    non_solutions: Dominance,
    scratch: Vec<u8>,
    /// Nodes already found settled (a settled node stays settled).
    settled: FxHashMap<NodeId, Tag>,
}

impl KnownTags {
    /// Nothing known yet.
    pub fn new(lattice: &Lattice) -> Self {
        Self {
            lattice: lattice.clone(),
            solutions: Dominance::new(lattice.max_levels(), Direction::Below),
            non_solutions: Dominance::new(lattice.max_levels(), Direction::Above),
            scratch: vec![0; lattice.dimensions()],
            settled: FxHashMap::default(),
        }
    }

    /// What is known about the node with these levels.
    pub fn get_levels(&self, levels: &[u8]) -> Tag {
        if self.solutions.any(levels) {
            Tag::Solution
        } else if self.non_solutions.any(levels) {
            Tag::NonSolution
        } else {
            Tag::Unknown
        }
    }

    /// What is known about node `id`.
    pub fn get(&mut self, id: NodeId) -> Tag {
        if let Some(&tag) = self.settled.get(&id) {
            return tag;
        }
        let mut levels = std::mem::take(&mut self.scratch);
        self.lattice.levels_into(id, &mut levels);
        let tag = self.get_levels(&levels);
        self.scratch = levels;
        if tag != Tag::Unknown {
            self.settled.insert(id, tag);
        }
        tag
    }

    /// Records a checked node. A node already implied is not recorded again, and the nodes it implies
    /// leave the index (only the minimal solutions and the maximal non-solutions are kept).
    pub fn tag_levels(&mut self, levels: &[u8], is_solution: bool) {
        let (index, other) = if is_solution {
            (&mut self.solutions, &self.non_solutions)
        } else {
            (&mut self.non_solutions, &self.solutions)
        };
        if index.any(levels) {
            return;
        }
        debug_assert!(!other.any(levels), "tags contradicted");
        let mut implied = Vec::new();
        index.for_each_dominated(levels, |m| implied.push(m));
        for m in implied {
            index.remove(m);
        }
        index.push(levels);
        if index.is_sparse() {
            index.compact();
        }
    }

    /// Records checked node `id`.
    pub fn tag(&mut self, id: NodeId, is_solution: bool) {
        let mut levels = std::mem::take(&mut self.scratch);
        self.lattice.levels_into(id, &mut levels);
        self.tag_levels(&levels, is_solution);
        self.scratch = levels;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::control::{NoControl, Pace};
    use crate::core::search::Tags;

    #[test]
    fn issa_figure_9_as_the_dense_tags() {
        let lattice = Lattice::new(vec![1, 6, 1, 2]);
        let mut known = KnownTags::new(&lattice);
        let mut dense = Tags::new(&lattice);
        let mut pace = Pace::new(&NoControl);
        for (levels, solution) in [([1, 1, 1, 2], false), ([0, 4, 0, 1], true)] {
            let id = lattice.id(&levels);
            known.tag(id, solution);
            dense.tag(id, solution, &mut pace).unwrap();
        }
        for id in 0..lattice.size() as u64 {
            assert_eq!(
                known.get(id),
                dense.get(id),
                "node {:?}",
                lattice.levels(id)
            );
        }
    }
}
