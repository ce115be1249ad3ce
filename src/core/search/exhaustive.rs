//! Brute force (Issa 2009 §3.1): check every node. The oracle the exact algorithms are tested against.

use super::Evaluator;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

/// Checks every node; returns every solution.
pub fn search(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let size = ev.lattice().size() as u64;
    let mut solutions = Vec::new();
    for id in 0..size {
        if ev.check(id)?.is_solution {
            solutions.push(id);
        }
    }
    Ok(solutions)
}
