//! The exact search for privacy models that are not monotone for the suppression setting, where no
//! predictive tagging is sound: every node above a floor (the minimal nodes of a monotone necessary
//! condition, such as the models' minimum class size within the suppression limit) may be a solution and
//! has to be considered.
//!
//! Nodes of that up-set are enumerated in increasing order of the metric's static lower bound (ties:
//! lower height, then smaller id) by expanding successors from the floor, which is sound because the
//! bound never decreases from a node to its generalizations. The enumeration stops once the bound exceeds
//! the best loss found, so nodes that could not beat the optimum are never grouped. When the bound is
//! the loss itself (data-independent metrics), the first solution met is the optimum, ties included: the
//! order is the selection's order, so the search stops there.

use std::collections::BinaryHeap;

use rustc_hash::FxHashSet;

use super::frontier::Entry;
use super::ranking::TopLosses;
use super::Evaluator;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

/// Relative slack when comparing a bound with a loss (they are computed differently).
const SLACK: f64 = 1e-9;

/// Checks the nodes at or above some node of `floor` in increasing order of the static bound until the
/// bound exceeds the best loss found (for data-independent metrics: until the first solution); returns
/// the solutions found, among which is every node whose loss equals the optimum (data-dependent
/// metrics) or the optimum the selection picks (data-independent metrics). A metric whose static bound
/// is not monotone ([`crate::core::loss::MetricKind::has_monotone_static_bound`]) gets every node of
/// the up-set checked, in order of height.
pub fn search(ev: &mut Evaluator<'_>, floor: &[Vec<u8>]) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let metric = ev.metric();
    let monotone = metric.has_monotone_static_bound();
    let stop_at_first = monotone && metric.is_data_independent();
    let bound_of = |ev: &Evaluator<'_>, levels: &[u8]| {
        if monotone {
            ev.loss_model().static_bound(metric, levels)
        } else {
            f64::NEG_INFINITY
        }
    };
    let mut levels = vec![0u8; lattice.dimensions()];
    let mut seen = FxHashSet::default();
    let mut heap = BinaryHeap::new();
    for minimal in floor {
        let id = lattice.id(minimal);
        if seen.insert(id) {
            heap.push(Entry {
                bound: bound_of(ev, minimal),
                height: lattice.height_of(id),
                id,
            });
        }
    }
    // the best loss found, or with a ranking of N the N-th best
    let mut top = TopLosses::new(ev.ranked());
    let mut best = f64::INFINITY;
    let mut solutions = Vec::new();
    while let Some(entry) = heap.pop() {
        if entry.bound > best + SLACK * best.abs().max(1.0) {
            break;
        }
        let check = ev.check(entry.id)?;
        if check.is_solution {
            solutions.push(entry.id);
            top.offer(entry.id, check.loss);
            best = top.threshold();
            // in bound order the first N solutions met are the N best
            if stop_at_first && top.is_full() {
                break;
            }
        }
        lattice.levels_into(entry.id, &mut levels);
        for j in 0..levels.len() {
            if levels[j] == lattice.max_levels()[j] {
                continue;
            }
            let next = entry.id + lattice.stride(j);
            if !seen.insert(next) {
                continue;
            }
            levels[j] += 1;
            heap.push(Entry {
                bound: bound_of(ev, &levels),
                height: entry.height + 1,
                id: next,
            });
            levels[j] -= 1;
        }
    }
    solutions.sort_unstable();
    Ok(solutions)
}
