//! Brute force (Issa 2009 §3.1): check every node. The oracle the exact algorithms are tested against.
//!
//! [`search_bounded`] is the exact search for privacy models that are not monotone (no predictive
//! tagging is sound): it still has to consider every node, but visits them in increasing order of the
//! metric's static lower bound (ties: lower height, then smaller id) and stops once the bound exceeds the
//! best loss found, so nodes that could not beat the optimum are never grouped.

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

/// Checks nodes in increasing static-bound order until the bound exceeds the best loss; returns the
/// solutions found, among which is every node whose loss equals the optimum.
pub fn search_bounded(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let metric = ev.metric();
    let size = lattice.size() as u64;
    let mut levels = vec![0u8; lattice.dimensions()];
    let mut order: Vec<(f64, usize, NodeId)> = (0..size)
        .map(|id| {
            lattice.levels_into(id, &mut levels);
            let bound = ev.loss_model().static_bound(metric, &levels);
            (bound, lattice.height_of(id), id)
        })
        .collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut best = f64::INFINITY;
    let mut solutions = Vec::new();
    for (bound, _, id) in order {
        if bound > best + SLACK * best.abs().max(1.0) {
            break;
        }
        let check = ev.check(id)?;
        if check.is_solution {
            solutions.push(id);
            best = best.min(check.loss);
        }
    }
    Ok(solutions)
}
