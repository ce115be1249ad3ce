//! Brute force (Issa 2009 §3.1): check every node. The oracle the exact algorithms are tested against.
//!
//! [`search_bounded`] is the exact search for privacy models that are not monotone (no predictive
//! tagging is sound): it still has to consider every node, but skips those whose static lower bound of
//! the metric exceeds the best loss found so far, so nodes that could not beat the optimum are not
//! grouped once a good solution is known.

use super::Evaluator;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

/// Relative slack when comparing a bound with a loss (they are computed differently).
const SLACK: f64 = 1e-9;

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

/// Checks every node whose static bound does not exceed the best loss found so far and that
/// `may_be_solution` admits (a necessary condition), in id order (each node right after its neighbours,
/// so groupings roll up from a close cached set); returns the solutions found, among which is every
/// node whose loss equals the optimum.
pub fn search_bounded(
    ev: &mut Evaluator<'_>,
    may_be_solution: impl Fn(&[u8]) -> bool,
) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let metric = ev.metric();
    let size = lattice.size() as u64;
    let mut levels = vec![0u8; lattice.dimensions()];
    let mut best = f64::INFINITY;
    let mut solutions = Vec::new();
    for id in 0..size {
        lattice.levels_into(id, &mut levels);
        let bound = ev.loss_model().static_bound(metric, &levels);
        if bound > best + SLACK * best.abs().max(1.0) || !may_be_solution(&levels) {
            continue;
        }
        let check = ev.check(id)?;
        if check.is_solution {
            solutions.push(id);
            best = best.min(check.loss);
        }
    }
    Ok(solutions)
}
