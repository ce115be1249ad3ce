//! The N best solutions of a search, for a user who wants to compare transformations before publishing
//! one (ARX's lattice view). Ordered as the selection orders them: by loss, then lower height, then the
//! smaller node.
//!
//! An exact search that ranks N keeps enumerating until its bound exceeds the N-th best loss found
//! ([`TopLosses::threshold`] in place of the best loss), so its candidates hold every solution within
//! the N best. When the candidates are only the minimal solutions (a monotone metric with predictive
//! tagging), the N best may lie above them: [`rank`] then expands the solutions it ranks to their direct
//! generalizations, which are solutions (monotone models) no better than them (monotone metric), so
//! every solution is reached from a better one before it is needed. Candidates are checked lazily, in
//! the order of a lower bound, as [`super::select`] does.

use std::collections::BinaryHeap;

use rustc_hash::FxHashSet;

use super::frontier::Entry;
use super::Evaluator;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

/// Relative slack when comparing a bound with a loss (they are computed differently), as in selection.
const SLACK: f64 = 1e-9;

/// The losses of the N best distinct solutions offered so far.
#[derive(Debug)]
pub struct TopLosses {
    n: usize,
    offered: FxHashSet<NodeId>,
    /// The up-to-N smallest losses, largest on top.
    kept: BinaryHeap<Loss>,
}

/// An `f64` ordered totally, for the heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Loss(f64);

impl Eq for Loss {}

impl Ord for Loss {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl PartialOrd for Loss {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl TopLosses {
    /// Keeps the `n` best (at least one).
    pub fn new(n: usize) -> Self {
        Self {
            n: n.max(1),
            offered: FxHashSet::default(),
            kept: BinaryHeap::new(),
        }
    }

    /// Records solution `id` with `loss`; a node offered again is ignored.
    pub fn offer(&mut self, id: NodeId, loss: f64) {
        if self.n > 1 && !self.offered.insert(id) {
            return;
        }
        self.kept.push(Loss(loss));
        if self.kept.len() > self.n {
            self.kept.pop();
        }
    }

    /// The N-th best loss, or infinity while fewer than N solutions are known: no node whose loss
    /// exceeds it can be among the N best.
    pub fn threshold(&self) -> f64 {
        if self.kept.len() < self.n {
            f64::INFINITY
        } else {
            self.kept.peek().map_or(f64::INFINITY, |l| l.0)
        }
    }

    /// Whether N solutions are known.
    pub fn is_full(&self) -> bool {
        self.kept.len() >= self.n
    }
}

/// Ranks the `n` best solutions among `candidates` (and, with `expand`, their generalizations), best
/// first, with their losses. The first is the node [`super::select::select`] picks.
pub fn rank(
    ev: &mut Evaluator<'_>,
    candidates: &[NodeId],
    n: usize,
    expand: bool,
) -> Result<Vec<(NodeId, f64)>, CoreError> {
    let lattice = ev.lattice().clone();
    let metric = ev.metric();
    let exact_bound = metric.is_data_independent();
    let mut pace = ev.pace();
    let mut levels = vec![0u8; lattice.dimensions()];
    let mut seen: FxHashSet<NodeId> = candidates.iter().copied().collect();
    // `pending`: keyed by a lower bound, not checked yet; `ready`: keyed by the loss
    let mut pending = BinaryHeap::new();
    let mut ready = BinaryHeap::new();
    if exact_bound {
        // the static bound is the loss itself
        for &id in candidates {
            pace.step(1)?;
            ready.push(Entry {
                bound: ev.loss_model().static_bound(metric, &lattice.levels(id)),
                height: lattice.height_of(id),
                id,
            });
        }
    } else {
        let inherited = super::select::inherited_bounds(ev, candidates)?;
        for (&id, bound) in candidates.iter().zip(inherited) {
            pending.push(Entry {
                bound,
                height: lattice.height_of(id),
                id,
            });
        }
    }
    let mut ranked = Vec::with_capacity(n);
    while ranked.len() < n {
        // check every pending node that could tie with or beat the best checked one
        while let Some(&next) = pending.peek() {
            let best = ready.peek().map_or(f64::INFINITY, |e: &Entry| e.bound);
            if next.bound > best + best.abs() * SLACK + 1e-12 {
                break;
            }
            pending.pop();
            pace.step(1)?;
            let check = ev.check(next.id)?;
            if check.is_solution {
                ready.push(Entry {
                    bound: check.loss,
                    ..next
                });
            }
        }
        let Some(best) = ready.pop() else { break };
        ranked.push((best.id, best.bound));
        if !expand {
            continue;
        }
        lattice.levels_into(best.id, &mut levels);
        for j in 0..levels.len() {
            if levels[j] == lattice.max_levels()[j] {
                continue;
            }
            let next = best.id + lattice.stride(j);
            if !seen.insert(next) {
                continue;
            }
            levels[j] += 1;
            let own = ev.loss_model().static_bound(metric, &levels);
            levels[j] -= 1;
            let entry = Entry {
                bound: own,
                height: best.height + 1,
                id: next,
            };
            if exact_bound {
                ready.push(entry);
            } else {
                // no generalization beats the node it generalizes (monotone metric)
                pending.push(Entry {
                    bound: own.max(best.bound),
                    ..entry
                });
            }
        }
    }
    Ok(ranked)
}

/// The best solutions a heuristic search checked, `chosen` first: what it saw, not a proven ranking.
pub fn best_seen(ev: &Evaluator<'_>, chosen: (NodeId, f64), n: usize) -> Vec<(NodeId, f64)> {
    if n <= 1 {
        return vec![chosen];
    }
    let lattice = ev.lattice();
    let mut seen: Vec<(f64, usize, NodeId)> = ev
        .known()
        .iter()
        .filter(|&(&id, c)| c.is_solution && id != chosen.0)
        .map(|(&id, c)| (c.loss, lattice.height_of(id), id))
        .collect();
    seen.sort_by(|a, b| a.0.total_cmp(&b.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    std::iter::once(chosen)
        .chain(seen.into_iter().map(|(loss, _, id)| (id, loss)))
        .take(n.max(1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_losses_keep_the_n_smallest_of_distinct_nodes() {
        let mut top = TopLosses::new(3);
        assert_eq!(top.threshold(), f64::INFINITY);
        top.offer(1, 5.0);
        top.offer(2, 7.0);
        assert_eq!(top.threshold(), f64::INFINITY);
        top.offer(2, 7.0); // the same node again: still two
        assert!(!top.is_full());
        top.offer(3, 6.0);
        assert_eq!(top.threshold(), 7.0);
        top.offer(4, 1.0);
        assert_eq!(top.threshold(), 6.0);
        top.offer(5, 9.0);
        assert_eq!(top.threshold(), 6.0);
    }

    #[test]
    fn one_best_is_the_smallest_loss() {
        let mut top = TopLosses::new(1);
        top.offer(1, 5.0);
        top.offer(1, 4.0);
        assert_eq!(top.threshold(), 4.0);
    }
}
