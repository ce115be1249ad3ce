//! Picks the optimum among candidate solutions.
//!
//! Data-independent metrics are computed from the node alone. Otherwise each candidate gets a lower bound
//! (the metric's static bound, and the best `bound_above` of any checked node below it), candidates are
//! visited in bound order and checked until the next bound exceeds the best loss found. Ties are broken by
//! lower height, then by the lexicographically smaller node, so results are deterministic.

use super::Evaluator;
use crate::core::control::{Phase, Progress};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};

/// Returns the best candidate and its loss.
pub fn select(
    ev: &mut Evaluator<'_>,
    candidates: &[NodeId],
) -> Result<Option<(NodeId, f64)>, CoreError> {
    let lattice = ev.lattice().clone();
    let metric = ev.metric();
    let key = |loss: f64, id: NodeId| (loss, lattice.height_of(id), id);
    let better = |a: (f64, usize, NodeId), b: (f64, usize, NodeId)| {
        a.0 < b.0 || (a.0 == b.0 && (a.1, a.2) < (b.1, b.2))
    };
    if metric.is_data_independent() {
        let mut pace = ev.pace();
        let mut best: Option<(f64, usize, NodeId)> = None;
        for &id in candidates {
            pace.step(1)?;
            let k = key(
                ev.loss_model().static_bound(metric, &lattice.levels(id)),
                id,
            );
            if best.is_none_or(|b| better(k, b)) {
                best = Some(k);
            }
        }
        return Ok(best.map(|(loss, _, id)| (id, loss)));
    }
    let bounds = inherited_bounds(ev, candidates)?;
    let mut order: Vec<(f64, usize, NodeId)> = candidates
        .iter()
        .zip(bounds)
        .map(|(&id, b)| key(b, id))
        .collect();
    order.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let mut best: Option<(f64, usize, NodeId)> = None;
    for (done, &(bound, _, id)) in order.iter().enumerate() {
        if let Some(b) = best {
            if bound > b.0 + b.0.abs() * 1e-9 + 1e-12 {
                break;
            }
        }
        let check = ev.check(id)?;
        debug_assert!(check.is_solution, "candidates are solutions");
        let k = key(check.loss, id);
        if best.is_none_or(|b| better(k, b)) {
            best = Some(k);
        }
        if done % 64 == 0 {
            ev.report(Progress {
                phase: Phase::Selecting,
                done: done as u64,
                total: order.len() as u64,
            });
        }
    }
    Ok(best.map(|(loss, _, id)| (id, loss)))
}

/// Lower bounds of the metric for each candidate.
fn inherited_bounds(ev: &Evaluator<'_>, candidates: &[NodeId]) -> Result<Vec<f64>, CoreError> {
    let mut pace = ev.pace();
    let lattice = ev.lattice();
    let metric = ev.metric();
    let model = ev.loss_model();
    let known: Vec<(Vec<u8>, f64)> = ev
        .known()
        .iter()
        .map(|(&id, c)| (lattice.levels(id), c.bound_above))
        .collect();
    let static_bound = |levels: &[u8]| model.static_bound(metric, levels);
    // pairwise dominance tests, or one sweep over the lattice when that is cheaper
    if (known.len() as u128) * (candidates.len() as u128) <= lattice.size() {
        return candidates
            .iter()
            .map(|&id| {
                pace.step(known.len())?;
                let levels = lattice.levels(id);
                Ok(known
                    .iter()
                    .filter(|(k, _)| Lattice::le(k, &levels))
                    .fold(static_bound(&levels), |acc, (_, b)| acc.max(*b)))
            })
            .collect();
    }
    // sweep in id order, which is topological: bound(v) = max(own, bound(v - e_j))
    let size = lattice.size() as usize;
    let mut bound = vec![f64::NEG_INFINITY; size];
    for (&id, c) in ev.known() {
        bound[id as usize] = c.bound_above;
    }
    let dims = lattice.dimensions();
    let mut levels = vec![0u8; dims];
    for id in 0..size as u64 {
        pace.step(1)?;
        lattice.levels_into(id, &mut levels);
        let mut b = bound[id as usize];
        for (j, &level) in levels.iter().enumerate() {
            if level > 0 {
                b = b.max(bound[(id - lattice.stride(j)) as usize]);
            }
        }
        bound[id as usize] = b;
    }
    Ok(candidates
        .iter()
        .map(|&id| bound[id as usize].max(static_bound(&lattice.levels(id))))
        .collect())
}
