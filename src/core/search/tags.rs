//! Predictive tagging (Issa 2009 §4.2.1, after Samarati 2001): a solution makes every generalization a
//! solution, a non-solution makes every specialization a non-solution. One byte per node; tagging walks
//! the up-set or down-set and stops at nodes already tagged, so all tagging in a run costs O(|lattice| · q).

use super::Evaluator;
use crate::core::control::{Pace, Phase, Progress};
use crate::core::error::CoreError;
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
    /// Tags for the lattice of `ev`'s search, all unknown; the search's progress is then the tagged share
    /// of the lattice. The caller checks the size against [`MAX_TAGGED_NODES`].
    pub fn for_search(ev: &mut Evaluator<'_>) -> Self {
        ev.search_reports_progress();
        Self::new(ev.lattice())
    }

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

    /// Tags `id` and all its generalizations as solutions. One call may tag most of a large lattice, so
    /// the nodes tagged count on `pace`; a cancelled run leaves the up-set partly tagged (and stops).
    pub fn tag_solution(&mut self, id: NodeId, pace: &mut Pace<'_>) -> Result<(), CoreError> {
        self.spread(id, 1, true, pace)
    }

    /// Tags `id` and all its specializations as non-solutions (counted on `pace` as above).
    pub fn tag_non_solution(&mut self, id: NodeId, pace: &mut Pace<'_>) -> Result<(), CoreError> {
        self.spread(id, 2, false, pace)
    }

    /// Tags according to `is_solution`.
    pub fn tag(
        &mut self,
        id: NodeId,
        is_solution: bool,
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        if is_solution {
            self.tag_solution(id, pace)
        } else {
            self.tag_non_solution(id, pace)
        }
    }

    fn spread(
        &mut self,
        id: NodeId,
        value: u8,
        upward: bool,
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        let current = self.state[id as usize];
        if current == value {
            return Ok(());
        }
        debug_assert!(current == 0, "tags must never be contradicted");
        self.state[id as usize] = value;
        self.tagged += 1;
        self.stack.clear();
        self.stack.push(id);
        let dims = self.lattice.dimensions();
        while let Some(node) = self.stack.pop() {
            pace.step(dims)?;
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
        // a node is settled once tagged or checked (and checked nodes are tagged), so the tagged share
        // estimates the work done better than the checks over the lattice size
        pace.report(Progress {
            phase: Phase::Searching,
            done: self.tagged,
            total: self.state.len() as u64,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::control::{CancelFlag, NoControl};

    #[test]
    fn issa_figure_9_two_checks_tag_48_of_84_nodes() {
        let lattice = Lattice::new(vec![1, 6, 1, 2]);
        let mut tags = Tags::new(&lattice);
        let mut pace = Pace::new(&NoControl);
        tags.tag_non_solution(lattice.id(&[1, 1, 1, 2]), &mut pace)
            .unwrap();
        tags.tag_solution(lattice.id(&[0, 4, 0, 1]), &mut pace)
            .unwrap();
        assert_eq!(tags.tagged(), 48);
        for v in [[0, 1, 1, 2], [1, 0, 1, 2], [1, 1, 0, 2], [1, 1, 1, 1]] {
            assert_eq!(tags.get(lattice.id(&v)), Tag::NonSolution);
        }
        for v in [[0, 4, 0, 2], [0, 4, 1, 1], [0, 5, 0, 1], [1, 4, 0, 1]] {
            assert_eq!(tags.get(lattice.id(&v)), Tag::Solution);
        }
        assert_eq!(tags.get(lattice.id(&[0, 3, 0, 0])), Tag::Unknown);
    }

    #[test]
    fn tagging_a_large_up_set_stops_when_cancelled() {
        // 11^6 ≈ 1.8 M nodes: tagging the bottom as a solution visits every one of them
        let lattice = Lattice::new(vec![10; 6]);
        let flag = CancelFlag::default();
        let mut tags = Tags::new(&lattice);
        flag.cancel();
        assert_eq!(
            tags.tag_solution(0, &mut Pace::new(&flag)),
            Err(CoreError::Cancelled)
        );
        assert!(tags.tagged() < lattice.size() as u64 / 100);
        let mut tags = Tags::new(&lattice);
        assert_eq!(tags.tag_solution(0, &mut Pace::new(&NoControl)), Ok(()));
        assert_eq!(u128::from(tags.tagged()), lattice.size());
    }
}
