//! Best-first bounded search, the engine's own exact algorithm for metrics with a data-independent
//! lower bound that is monotone in the lattice.
//!
//! Nodes are enumerated in increasing order of the static bound (ties: lower height, then smaller id)
//! by expanding successors from the bottom, so a node comes only after all its enumerated
//! specializations. The enumeration stops once the bound exceeds the best loss found. An enumerated
//! node of unknown status is resolved with a probe: from it, a path climbs through unknown nodes, each
//! step taking the successor with the smallest bound that stays within the best loss, and the path is
//! searched for its lowest solution as in Flash, but starting where earlier paths had theirs (see
//! `probe`). A non-solution high on such a path tags a large down-set at once, so most nodes below
//! the optimum are never checked. Every solution enumerated within the bound is a candidate; for
//! data-dependent metrics its exact loss (one check) lowers the best loss further, and the bound a
//! check yields for all generalizations of the checked node (`bound_above`) is passed on to successors,
//! so whole up-sets whose bound exceeds the best loss are skipped without checks. Metrics that charge
//! suppressed records (discernibility, granularity) also bound every solution below a checked node by
//! what its failing records would cost; that bound is spread down the lattice, so regions that would
//! need too much suppression are never probed.
//!
//! Sound because the solution set is an up-set (monotone privacy models, checked by the caller) and the
//! bound never exceeds the loss of the node or of any generalization of it.
//!
//! Known non-solutions are neither enumerated nor expanded: the enumeration starts from the [`Border`]
//! (the lowest nodes not below a checked non-solution) and takes every node the border gains, so it
//! covers the solutions and the unknown nodes only. Tags are the checked nodes' [`KnownTags`], and the
//! enumeration's memory is hash sets of the nodes it met, so its cost follows the nodes enumerated and
//! checked, not the lattice.

use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use super::border::Border;
use super::frontier::Entry;
use super::known::KnownTags;
use super::ranking::TopLosses;
use super::{Evaluator, Tag};
use crate::core::control::{Pace, Phase, Progress};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};
use crate::core::loss::LossModel;

/// Largest lattice for which suppression bounds are spread downwards.
const DOWNWARD_LIMIT: u128 = 1 << 22;

/// Relative slack when comparing a bound with the best loss (bounds and losses are computed differently).
const SLACK: f64 = 1e-9;

/// Runs the best-first search and returns the candidates for selection.
pub fn search(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let metric = ev.metric();
    let exact_bound = metric.is_data_independent();
    ev.search_reports_progress();
    let mut tags = KnownTags::new(&lattice);
    let mut border = Border::new(&lattice);
    let mut seen: FxHashSet<NodeId> = FxHashSet::default();
    let mut heap = BinaryHeap::new();
    let mut levels = vec![0u8; lattice.dimensions()];
    // the best loss found, or with a ranking of N the N-th best: the search ends beyond it
    let mut top = TopLosses::new(ev.ranked());
    let mut best = f64::INFINITY;
    let mut candidates = Vec::new();
    // bounds inherited from checked specializations (data-dependent metrics only), until the node is taken
    let mut inherited: FxHashMap<NodeId, f64> = FxHashMap::default();
    let mut below = if LossModel::has_bound_below(metric) && lattice.size() <= DOWNWARD_LIMIT {
        Some(DownwardBounds::new(&lattice))
    } else {
        None
    };
    // most entries are settled already; taking them counts
    let mut pace = ev.pace();
    let mut progress = SearchProgress::new(ev);
    let mut aim = Aim::default();
    loop {
        for id in border.take_fresh() {
            if seen.insert(id) {
                lattice.levels_into(id, &mut levels);
                heap.push(Entry {
                    bound: ev.loss_model().static_bound(metric, &levels),
                    height: lattice.height_of(id),
                    id,
                });
            }
        }
        let Some(entry) = heap.pop() else { break };
        pace.step(levels.len())?;
        if entry.bound > best + best.abs() * SLACK {
            break;
        }
        progress.report(ev, entry.bound, best);
        // `up`: the best bound any checked specialization gives for all its generalizations
        let mut up = if exact_bound {
            f64::NEG_INFINITY
        } else {
            inherited.remove(&entry.id).unwrap_or(f64::NEG_INFINITY)
        };
        if let Some(c) = ev.cached(entry.id).filter(|_| !exact_bound) {
            up = up.max(c.bound_above);
        }
        let mut tag = tags.get(entry.id);
        if tag != Tag::NonSolution {
            let failing = below.as_ref().map_or(0, |b| b.get(entry.id));
            let model = ev.loss_model();
            let bound = entry
                .bound
                .max(up)
                .max(model.bound_below(metric, failing))
                .max(model.combined_bound(metric, up, failing, best));
            if bound <= best + best.abs() * SLACK {
                if tag == Tag::Unknown {
                    let before = ev.checks() as usize;
                    probe(ev, &mut tags, &mut border, &lattice, &mut aim, entry.id)?;
                    tag = tags.get(entry.id);
                    // with a data-dependent metric, every solution a probe checked bounds the optimum
                    // (with an exact bound, the enumeration order already finds the optimum first)
                    if !exact_bound {
                        for &id in &ev.check_order()[before..] {
                            if let Some(c) = ev.cached(id).filter(|c| c.is_solution) {
                                top.offer(id, c.loss);
                                best = top.threshold();
                                candidates.push(id);
                            }
                        }
                    }
                    if let Some(b) = below.as_mut() {
                        b.spread_from_checks(ev, &mut pace)?;
                    }
                }
                if tag == Tag::Solution {
                    let loss = if exact_bound {
                        entry.bound
                    } else {
                        ev.check(entry.id)?.loss
                    };
                    top.offer(entry.id, loss);
                    best = top.threshold();
                    candidates.push(entry.id);
                }
            }
        }
        if !exact_bound {
            if let Some(c) = ev.cached(entry.id) {
                up = up.max(c.bound_above);
            }
        }
        // every generalization is at least as costly as `max(bound, up)`: none can beat the best
        let hopeless = entry.bound.max(up) > best + best.abs() * SLACK;
        lattice.levels_into(entry.id, &mut levels);
        for j in 0..levels.len() {
            if levels[j] == lattice.max_levels()[j] {
                continue;
            }
            let next = entry.id + lattice.stride(j);
            if !exact_bound && up > f64::NEG_INFINITY {
                let slot = inherited.entry(next).or_insert(f64::NEG_INFINITY);
                *slot = slot.max(up);
            }
            // a non-solution's generalizations outside the down-sets come from the border
            if tag == Tag::NonSolution || hopeless || !seen.insert(next) {
                continue;
            }
            levels[j] += 1;
            heap.push(Entry {
                bound: ev.loss_model().static_bound(metric, &levels),
                height: entry.height + 1,
                id: next,
            });
            levels[j] -= 1;
        }
    }
    ev.report(Progress {
        phase: Phase::Searching,
        done: SearchProgress::SCALE,
        total: SearchProgress::SCALE,
    });
    candidates.sort_unstable();
    candidates.dedup();
    Ok(candidates)
}

/// The search's progress: the bound reached, as a share of where the search must end at the latest (the
/// best loss found, or before one is found the top's bound, which no node exceeds).
struct SearchProgress {
    ceiling: f64,
    reported: u64,
}

impl SearchProgress {
    const SCALE: u64 = 1000;

    fn new(ev: &Evaluator<'_>) -> Self {
        let top = ev.lattice().max_levels();
        Self {
            ceiling: ev.loss_model().static_bound(ev.metric(), top),
            reported: 0,
        }
    }

    fn report(&mut self, ev: &Evaluator<'_>, bound: f64, best: f64) {
        let end = best.min(self.ceiling);
        if !end.is_finite() || end <= 0.0 {
            return;
        }
        let done = ((bound / end).clamp(0.0, 1.0) * Self::SCALE as f64) as u64;
        if done > self.reported {
            self.reported = done;
            ev.report(Progress {
                phase: Phase::Searching,
                done,
                total: Self::SCALE,
            });
        }
    }
}

/// Where on a probe's path the lowest solution is expected: the running mean of where it was on the
/// earlier paths, as a share of the path. The path's first check goes there instead of to its middle.
struct Aim {
    share: f64,
}

impl Default for Aim {
    fn default() -> Self {
        // before any probe: the middle, as a plain binary search
        Self { share: 0.5 }
    }
}

impl Aim {
    /// Weight of the newest path in the running mean.
    const WEIGHT: f64 = 0.1;

    fn index(&self, len: usize) -> usize {
        ((self.share * (len - 1) as f64).round() as usize).min(len - 1)
    }

    /// Learns where a path of `len` nodes had its lowest solution (`len` when it had none: that counts
    /// as the top, where one check settles a path without solutions).
    fn learn(&mut self, lowest: usize, len: usize) {
        if len > 1 {
            let share = lowest.min(len - 1) as f64 / (len - 1) as f64;
            self.share += Self::WEIGHT * (share - self.share);
        }
    }
}

/// Resolves `start`: climbs through unknown nodes, then finds the path's lowest solution. Each step
/// takes the successor with the smallest static bound (ties: the first attribute), so the path stays as
/// cheap as possible for as long as possible. The lowest solution is searched from where `aim` expects
/// it, galloping away from there (1, 2, 4, … steps) until it is bracketed, then by bisection: with a good
/// aim two or three checks, never more than about twice a bisection's. Checked non-solutions move the
/// border.
fn probe(
    ev: &mut Evaluator<'_>,
    tags: &mut KnownTags,
    border: &mut Border,
    lattice: &Lattice,
    aim: &mut Aim,
    start: NodeId,
) -> Result<(), CoreError> {
    let metric = ev.metric();
    let mut path = vec![start];
    let mut levels = lattice.levels(start);
    loop {
        let current = *path.last().unwrap_or(&start);
        let mut step: Option<(f64, usize)> = None;
        for j in 0..levels.len() {
            if levels[j] == lattice.max_levels()[j] {
                continue;
            }
            levels[j] += 1;
            if tags.get_levels(&levels) == Tag::Unknown {
                let key = ev.loss_model().static_bound(metric, &levels);
                if step.is_none_or(|(k, _)| key < k) {
                    step = Some((key, j));
                }
            }
            levels[j] -= 1;
        }
        let Some((_, j)) = step else { break };
        levels[j] += 1;
        path.push(current + lattice.stride(j));
    }
    let is_solution = |i: usize| -> Result<bool, CoreError> {
        let node = path[i];
        Ok(match tags.get(node) {
            Tag::Solution => true,
            Tag::NonSolution => false,
            Tag::Unknown => {
                let s = ev.check(node)?.is_solution;
                tags.tag(node, s);
                if !s {
                    border.exclude_below(&lattice.levels(node));
                }
                s
            }
        })
    };
    let low = lowest_solution(path.len(), aim.index(path.len()), is_solution)?;
    aim.learn(low, path.len());
    debug_assert!(tags.get(start) != Tag::Unknown);
    Ok(())
}

/// The lowest index of `0..len` where the monotone predicate `is_solution` (false… then true…) holds,
/// or `len` when it holds nowhere: first at `first`, then galloping away from it (1, 2, 4, … steps)
/// until the change is bracketed, then by bisection. With `first` on the change it asks twice; it never
/// asks more than about twice a bisection, and only for indices below `len`.
fn lowest_solution<E>(
    len: usize,
    first: usize,
    mut is_solution: impl FnMut(usize) -> Result<bool, E>,
) -> Result<usize, E> {
    if len == 0 {
        return Ok(0);
    }
    let first = first.min(len - 1);
    // below `low` every index fails; from `high` on every index holds
    let (mut low, mut high) = (0usize, len);
    if is_solution(first)? {
        high = first;
        let mut step = 1;
        while step <= high - low {
            let i = high - step;
            if is_solution(i)? {
                high = i;
                step *= 2;
            } else {
                low = i + 1;
                break;
            }
        }
    } else {
        low = first + 1;
        let mut step = 1;
        while low + step - 1 < high {
            let i = low + step - 1;
            if is_solution(i)? {
                high = i;
                break;
            }
            low = i + 1;
            step *= 2;
        }
    }
    while low < high {
        let mid = low + (high - low) / 2;
        if is_solution(mid)? {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Ok(low)
}

/// Failing-record counts spread from checked nodes to their specializations: a solution below a node
/// suppresses at least as many records as fail there.
struct DownwardBounds {
    lattice: Lattice,
    failing: Vec<u64>,
    spread: usize,
    stack: Vec<NodeId>,
}

impl DownwardBounds {
    fn new(lattice: &Lattice) -> Self {
        Self {
            lattice: lattice.clone(),
            failing: vec![0; lattice.size() as usize],
            spread: 0,
            stack: Vec::new(),
        }
    }

    /// Records that every solution at or below `id` must suppress.
    fn get(&self, id: NodeId) -> u64 {
        self.failing[id as usize]
    }

    /// Spreads the counts of nodes checked since the last call; the nodes raised count on `pace`.
    fn spread_from_checks(
        &mut self,
        ev: &Evaluator<'_>,
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        let order = ev.check_order();
        for &id in &order[self.spread..] {
            if let Some(check) = ev.cached(id) {
                self.raise(id, check.failing_records, pace)?;
            }
        }
        self.spread = order.len();
        Ok(())
    }

    /// Raises the count of `id` and of everything below it to at least `f`.
    fn raise(&mut self, id: NodeId, f: u64, pace: &mut Pace<'_>) -> Result<(), CoreError> {
        if self.failing[id as usize] >= f {
            return Ok(());
        }
        self.failing[id as usize] = f;
        self.stack.clear();
        self.stack.push(id);
        while let Some(node) = self.stack.pop() {
            pace.step(self.lattice.dimensions())?;
            for j in 0..self.lattice.dimensions() {
                if self.lattice.level(node, j) == 0 {
                    continue;
                }
                let next = node - self.lattice.stride(j);
                if self.failing[next as usize] < f {
                    self.failing[next as usize] = f;
                    self.stack.push(next);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aimed_search_finds_the_lowest_solution_within_twice_a_bisection() {
        for len in 1..=24usize {
            let bisection = usize::BITS - len.leading_zeros();
            for boundary in 0..=len {
                for first in 0..len {
                    let mut asked = Vec::new();
                    let found = lowest_solution::<()>(len, first, |i| {
                        asked.push(i);
                        Ok(i >= boundary)
                    })
                    .unwrap();
                    assert_eq!(found, boundary, "len {len} first {first}");
                    assert!(asked.iter().all(|&i| i < len));
                    assert!(
                        asked.len() <= 2 * bisection as usize + 1,
                        "len {len} first {first} boundary {boundary}: {asked:?}"
                    );
                    if boundary < len && (first == boundary || first + 1 == boundary) {
                        assert!(asked.len() <= 2, "{asked:?}");
                    }
                }
            }
        }
        assert_eq!(lowest_solution::<()>(0, 0, |_| Ok(true)), Ok(0));
    }
}
