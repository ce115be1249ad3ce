//! Predictive tagging (Issa 2009 §4.2.1, after Samarati 2001): a solution makes every generalization a
//! solution, a non-solution makes every specialization a non-solution. One byte per node; tagging walks
//! the up-set or down-set and stops at nodes already tagged, so all tagging in a run costs O(|lattice| · q).

use crate::core::lattice::{Lattice, NodeId};

/// What is known about a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// Not known yet.
    Unknown,
    /// Satisfies the privacy models within the suppression limit.
    Solution,
    /// Does not.
    NonSolution,
}

/// Largest lattice a tag array is allocated for.
pub const MAX_TAGGED_NODES: u128 = 1 << 28;

/// Tags for every node of a lattice.
#[derive(Debug)]
pub struct Tags {
    lattice: Lattice,
    state: Vec<u8>,
    stack: Vec<NodeId>,
    tagged: u64,
}

impl Tags {
    /// All nodes unknown. The caller checks the size against [`MAX_TAGGED_NODES`].
    pub fn new(lattice: &Lattice) -> Self {
        Self {
            lattice: lattice.clone(),
            state: vec![0; lattice.size() as usize],
            stack: Vec::new(),
            tagged: 0,
        }
    }

    /// The tag of a node.
    pub fn get(&self, id: NodeId) -> Tag {
        match self.state[id as usize] {
            0 => Tag::Unknown,
            1 => Tag::Solution,
            _ => Tag::NonSolution,
        }
    }

    /// Number of tagged nodes.
    pub fn tagged(&self) -> u64 {
        self.tagged
    }

    /// Tags `id` and all its generalizations as solutions.
    pub fn tag_solution(&mut self, id: NodeId) {
        self.spread(id, 1, true);
    }

    /// Tags `id` and all its specializations as non-solutions.
    pub fn tag_non_solution(&mut self, id: NodeId) {
        self.spread(id, 2, false);
    }

    /// Tags according to `is_solution`.
    pub fn tag(&mut self, id: NodeId, is_solution: bool) {
        if is_solution {
            self.tag_solution(id)
        } else {
            self.tag_non_solution(id)
        }
    }

    fn spread(&mut self, id: NodeId, value: u8, upward: bool) {
        let current = self.state[id as usize];
        if current == value {
            return;
        }
        debug_assert!(current == 0, "tags must never be contradicted");
        self.state[id as usize] = value;
        self.tagged += 1;
        self.stack.clear();
        self.stack.push(id);
        let dims = self.lattice.dimensions();
        while let Some(node) = self.stack.pop() {
            for j in 0..dims {
                let stride = self.lattice.stride(j);
                let level = (node / stride) % (self.lattice.max_levels()[j] as u64 + 1);
                let next = if upward {
                    if level == self.lattice.max_levels()[j] as u64 {
                        continue;
                    }
                    node + stride
                } else {
                    if level == 0 {
                        continue;
                    }
                    node - stride
                };
                let slot = &mut self.state[next as usize];
                if *slot != value {
                    debug_assert!(*slot == 0, "tags must never be contradicted");
                    *slot = value;
                    self.tagged += 1;
                    self.stack.push(next);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issa_figure_9_two_checks_tag_48_of_84_nodes() {
        let lattice = Lattice::new(vec![1, 6, 1, 2]);
        let mut tags = Tags::new(&lattice);
        tags.tag_non_solution(lattice.id(&[1, 1, 1, 2]));
        tags.tag_solution(lattice.id(&[0, 4, 0, 1]));
        assert_eq!(tags.tagged(), 48);
        for v in [[0, 1, 1, 2], [1, 0, 1, 2], [1, 1, 0, 2], [1, 1, 1, 1]] {
            assert_eq!(tags.get(lattice.id(&v)), Tag::NonSolution);
        }
        for v in [[0, 4, 0, 2], [0, 4, 1, 1], [0, 5, 0, 1], [1, 4, 0, 1]] {
            assert_eq!(tags.get(lattice.id(&v)), Tag::Solution);
        }
        assert_eq!(tags.get(lattice.id(&[0, 3, 0, 0])), Tag::Unknown);
    }
}
