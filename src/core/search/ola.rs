//! OLA, Optimal Lattice Anonymization (Issa 2009, Chapter 4, Table 11; El Emam et al., JAMIA 2009).
//!
//! `get_osc(bottom, top)` binary-searches all generalization strategies of a sub-lattice at once: every
//! node on the middle height is resolved (from tags or by a check) and the search recurses below a solution
//! or above a non-solution. Tags are written to the whole lattice, so later recursions reuse them.
//!
//! The pseudo-code as printed never terminates on two-node sub-lattices and adds the top without checking
//! it. Following the note's corrected reading (the JAMIA version): split only when the sub-lattice has
//! height > 1, at `floor(height / 2)`; with height 1 the candidate is the bottom if it is a solution and
//! the top otherwise; with height 0 it is the bottom; a candidate enters the result only if it is a
//! solution, and the result is kept an antichain (CleanUp). The result is the set of minimal solutions
//! (OSC); unresolved nodes, if any, are checked afterwards so that every node ends up tagged.

use super::{candidates_from_tags, Evaluator, Tag, Tags};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};

/// Runs OLA and returns the candidates for selection.
pub fn search(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let mut ola = Ola {
        lattice: lattice.clone(),
        tags: Tags::for_search(ev),
        osc: Vec::new(),
    };
    let bottom = vec![0u8; lattice.dimensions()];
    let top = lattice.max_levels().to_vec();
    ola.get_osc(ev, &bottom, &top)?;
    let mut tags = ola.tags;
    if ev.metric().is_monotone(ev.suppression_possible()) {
        // OSC must equal the minimal solutions; the tags give the same set and catch any gap.
        let from_tags = candidates_from_tags(ev, &mut tags)?;
        debug_assert_eq!(
            {
                let mut o: Vec<NodeId> = ola.osc.iter().map(|v| lattice.id(v)).collect();
                o.sort_unstable();
                o
            },
            from_tags
        );
        return Ok(from_tags);
    }
    candidates_from_tags(ev, &mut tags)
}

struct Ola {
    lattice: Lattice,
    tags: Tags,
    osc: Vec<Vec<u8>>,
}

impl Ola {
    /// Resolves a node from its tag or by a check (tagging the result).
    fn is_solution(&mut self, ev: &mut Evaluator<'_>, node: &[u8]) -> Result<bool, CoreError> {
        let id = self.lattice.id(node);
        match self.tags.get(id) {
            Tag::Solution => Ok(true),
            Tag::NonSolution => Ok(false),
            Tag::Unknown => {
                let solution = ev.check(id)?.is_solution;
                self.tags.tag(id, solution, &mut ev.pace())?;
                Ok(solution)
            }
        }
    }

    fn get_osc(
        &mut self,
        ev: &mut Evaluator<'_>,
        bottom: &[u8],
        top: &[u8],
    ) -> Result<(), CoreError> {
        let base = Lattice::height(bottom);
        let height = Lattice::height(top) - base;
        if height > 1 {
            let mut middle = Vec::new();
            let mut pace = ev.pace();
            let mut listed = Ok(());
            Lattice::for_each_at_height(bottom, top, base + height / 2, &mut |v| {
                middle.push(v.to_vec());
                listed = pace.step(v.len());
                listed.is_ok()
            });
            listed?;
            for v in middle {
                pace.step(1)?;
                if self.is_solution(ev, &v)? {
                    self.get_osc(ev, bottom, &v)?;
                } else {
                    self.get_osc(ev, &v, top)?;
                }
            }
            return Ok(());
        }
        let candidate = if height == 0 || self.is_solution(ev, bottom)? {
            bottom
        } else {
            top
        };
        if self.is_solution(ev, candidate)? {
            // the antichain grows with the lattice, and each addition compares with all of it
            ev.pace().step(self.osc.len())?;
            self.add(candidate);
        }
        Ok(())
    }

    /// Adds a local minimum and keeps the set an antichain (CleanUp).
    fn add(&mut self, node: &[u8]) {
        if self.osc.iter().any(|s| Lattice::le(s, node)) {
            return;
        }
        self.osc.retain(|s| !Lattice::le(node, s));
        self.osc.push(node.to_vec());
    }
}
