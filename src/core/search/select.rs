//! Picks the optimum among candidate solutions.
//!
//! Data-independent metrics are computed from the node alone. Otherwise each candidate gets a lower bound
//! (the metric's static bound, and the best `bound_above` of any checked node below it), candidates are
//! visited in bound order and checked until the next bound exceeds the best loss found. Ties are broken by
//! lower height, then by the lexicographically smaller node, so results are deterministic.

use super::dominance::{Direction, Dominance};
use super::Evaluator;
use crate::core::control::{Phase, Progress};
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

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

/// Lower bounds of the metric for each candidate: its static bound, and the best `bound_above` of the
/// checked nodes below it, found with one [`Dominance`] query per candidate over the checked nodes in
/// decreasing order of that bound (the first one below the candidate gives the best).
pub(super) fn inherited_bounds(
    ev: &Evaluator<'_>,
    candidates: &[NodeId],
) -> Result<Vec<f64>, CoreError> {
    let mut pace = ev.pace();
    let lattice = ev.lattice();
    let metric = ev.metric();
    let model = ev.loss_model();
    let mut known: Vec<(f64, NodeId)> = ev
        .known()
        .iter()
        .map(|(&id, c)| (c.bound_above, id))
        .collect();
    known.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut index = Dominance::new(lattice.max_levels(), Direction::Below);
    let mut levels = vec![0u8; lattice.dimensions()];
    for &(_, id) in &known {
        lattice.levels_into(id, &mut levels);
        index.push(&levels);
    }
    candidates
        .iter()
        .map(|&id| {
            pace.step(1 + known.len() / 64)?;
            lattice.levels_into(id, &mut levels);
            let own = model.static_bound(metric, &levels);
            Ok(index
                .first(&levels)
                .map_or(own, |first| own.max(known[first].0)))
        })
        .collect()
}
