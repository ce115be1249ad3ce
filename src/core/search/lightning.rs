//! A best-effort bottom-up search after Lightning (Prasser, Bild, Eicher, Spengler & Kuhn 2016,
//! "Lightning: Utility-Driven Anonymization of High-Dimensional Data", Transactions on Data Privacy 9(2)),
//! for lattices too large for the exact searches.
//!
//! The search opens with a cheap first solution: the path from the bottom to the top that always raises
//! the attribute whose raise costs least by the metric's static bound, bisected for its lowest solution
//! as Flash does, then improved as below. Then checked nodes wait in a queue ordered by their loss (ties:
//! lower height, then smaller id). The search
//! repeatedly takes the first and expands it: every successor not yet expanded is checked and queued.
//! The first and every `top height`-th expansion is a greedy dive instead: from the node, the search keeps expanding the
//! successor with the least loss until it reaches a node whose successors cannot do better, which finds
//! a solution early on lattices with many levels. From the first solution on that climb the search then
//! walks to better solutions nearby, an extension of ours: to the predecessor that is a solution of least
//! loss while one lowers the loss (the climb overshoots the lowest solutions), then along the lowest
//! solutions by moving one attribute a level up and another a level down, while that lowers the loss. A node is never expanded twice, and a node whose
//! `bound_above` (a lower bound of the loss of every generalization) exceeds the incumbent's loss, or
//! equals it at a height no lower than the incumbent's (a generalization would lose the tie-break), is
//! neither expanded nor queued.
//!
//! Every node is a generalization of the bottom, so a node never reached lies above a pruned node and
//! cannot beat the incumbent: when the queue runs empty the incumbent is the optimum the exact searches
//! designate (least loss, then lower height, then smaller id), for any privacy model (the search needs no
//! monotonicity, only sound bounds). When the time limit comes first the incumbent is
//! the best solution checked (or, when none was, the most general transformation). The search keeps hash sets of the nodes it touched, never an array over the
//! lattice, so its memory follows the nodes it checks.

use std::collections::BinaryHeap;

use rustc_hash::FxHashSet;

use super::anytime::{self, AnytimeResult, Incumbent, TimeLimit};
use super::frontier::Entry;
use super::Evaluator;
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};

/// The search's state between expansions.
struct Walk<'l> {
    lattice: &'l Lattice,
    incumbent: Incumbent,
    queue: BinaryHeap<Entry>,
    queued: FxHashSet<NodeId>,
    expanded: FxHashSet<NodeId>,
    levels: Vec<u8>,
}

impl Walk<'_> {
    /// Whether nothing above `id` can beat the incumbent.
    fn hopeless(&self, ev: &Evaluator<'_>, id: NodeId) -> bool {
        ev.cached(id).is_some_and(|c| {
            self.incumbent
                .excludes_above(c.bound_above, self.lattice.height_of(id))
        })
    }

    /// Checks the successors of `id` not yet expanded and queues those that may still beat the
    /// incumbent; returns the one with the least loss.
    fn expand(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        id: NodeId,
    ) -> Result<Option<Entry>, CoreError> {
        self.expanded.insert(id);
        self.lattice.levels_into(id, &mut self.levels);
        let height = Lattice::height(&self.levels);
        let mut cheapest: Option<Entry> = None;
        for j in 0..self.lattice.dimensions() {
            if self.levels[j] == self.lattice.max_levels()[j] {
                continue;
            }
            let next = id + self.lattice.stride(j);
            if self.expanded.contains(&next) {
                continue;
            }
            let check = anytime::check(ev, &mut self.incumbent, next)?;
            let entry = Entry {
                bound: check.loss,
                height: height + 1,
                id: next,
            };
            if !self.hopeless(ev, next) && self.queued.insert(next) {
                self.queue.push(entry);
            }
            if cheapest.is_none_or(|c| entry > c) {
                // `Entry` orders for a max-heap: greater means a smaller key
                cheapest = Some(entry);
            }
            if limit.expired() {
                break;
            }
        }
        Ok(cheapest)
    }

    /// Expands `id`, then keeps expanding the cheapest successor while it may still beat the incumbent;
    /// from the first solution on that path, improves.
    fn dive(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        id: NodeId,
    ) -> Result<(), CoreError> {
        let mut at = id;
        let mut first_solution = None;
        loop {
            let cheapest = self.expand(ev, limit, at)?;
            if limit.passed() {
                return Ok(());
            }
            match cheapest {
                Some(next) => {
                    if first_solution.is_none() && ev.cached(next.id).is_some_and(|c| c.is_solution)
                    {
                        first_solution = Some(next.id);
                    }
                    if self.hopeless(ev, next.id) {
                        break;
                    }
                    at = next.id;
                }
                None => break,
            }
        }
        match first_solution {
            Some(solution) => self.improve(ev, limit, solution),
            None => Ok(()),
        }
    }

    /// From solution `id`, walks to better solutions while there are any among its neighbours: first
    /// the predecessors (one attribute a level lower; the climb overshoots the lowest solutions), then,
    /// at a solution none of whose predecessors is one, the nodes with one attribute a level higher and
    /// another a level lower (a step along the lowest solutions). Each step takes the neighbour that is a
    /// solution of least loss, if it has less loss than the node it leaves.
    fn improve(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        id: NodeId,
    ) -> Result<(), CoreError> {
        let dims = self.lattice.dimensions();
        let mut at = id;
        let mut at_loss = ev.cached(id).map_or(f64::INFINITY, |c| c.loss);
        loop {
            self.lattice.levels_into(at, &mut self.levels);
            let levels = self.levels.clone();
            let mut best: Option<(f64, NodeId)> = None;
            for j in (0..dims).filter(|&j| levels[j] > 0) {
                let next = at - self.lattice.stride(j);
                if self.consider(ev, limit, next, (at_loss, &mut best))? {
                    return Ok(());
                }
            }
            if best.is_none() {
                for i in (0..dims).filter(|&i| levels[i] < self.lattice.max_levels()[i]) {
                    for j in (0..dims).filter(|&j| j != i && levels[j] > 0) {
                        let next = at + self.lattice.stride(i) - self.lattice.stride(j);
                        if self.consider(ev, limit, next, (at_loss, &mut best))? {
                            return Ok(());
                        }
                    }
                }
            }
            match best {
                Some((loss, next)) => (at, at_loss) = (next, loss),
                None => return Ok(()),
            }
        }
    }

    /// A first solution within a few checks: the path from the bottom to the top that always raises the
    /// attribute whose raise costs least by the metric's static bound (no check needed), searched for its
    /// lowest solution by bisection as Flash does (Kohlmayer et al. 2012), then improved. With
    /// monotone models the bisection finds the path's lowest solution; otherwise some solution on it.
    fn opening(&mut self, ev: &mut Evaluator<'_>, limit: &TimeLimit<'_>) -> Result<(), CoreError> {
        let metric = ev.metric();
        let dims = self.lattice.dimensions();
        let mut levels = vec![0u8; dims];
        let mut path = vec![0 as NodeId];
        loop {
            let mut cheapest: Option<(f64, usize)> = None;
            for j in 0..dims {
                if levels[j] == self.lattice.max_levels()[j] {
                    continue;
                }
                levels[j] += 1;
                let bound = ev.loss_model().static_bound(metric, &levels);
                levels[j] -= 1;
                if cheapest.is_none_or(|(b, _)| bound < b) {
                    cheapest = Some((bound, j));
                }
            }
            let Some((_, j)) = cheapest else { break };
            levels[j] += 1;
            path.push(self.lattice.id(&levels));
        }
        let (mut low, mut high) = (0, path.len() - 1);
        let top = anytime::check(ev, &mut self.incumbent, path[high])?;
        if limit.expired() || !top.is_solution {
            return Ok(());
        }
        while low < high {
            let mid = (low + high) / 2;
            let check = anytime::check(ev, &mut self.incumbent, path[mid])?;
            if limit.expired() {
                return Ok(());
            }
            if check.is_solution {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        self.improve(ev, limit, path[high])
    }

    /// Checks neighbour `next`; keeps it in `best` when it is a solution with less loss than `best`, or
    /// than `at_loss` while `best` is empty. Returns whether the time is up.
    fn consider(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        next: NodeId,
        (at_loss, best): (f64, &mut Option<(f64, NodeId)>),
    ) -> Result<bool, CoreError> {
        let check = anytime::check(ev, &mut self.incumbent, next)?;
        if check.is_solution && check.loss < best.map_or(at_loss, |b| b.0) {
            *best = Some((check.loss, next));
        }
        Ok(limit.expired())
    }
}

/// Runs the search for at most `time_limit_ms` on the caller's clock.
pub fn search(ev: &mut Evaluator<'_>, time_limit_ms: u64) -> Result<AnytimeResult, CoreError> {
    let lattice = ev.lattice().clone();
    ev.search_reports_progress();
    let limit = TimeLimit::start(ev.control(), time_limit_ms);
    let mut walk = Walk {
        lattice: &lattice,
        incumbent: Incumbent::default(),
        queue: BinaryHeap::new(),
        queued: FxHashSet::default(),
        expanded: FxHashSet::default(),
        levels: vec![0; lattice.dimensions()],
    };
    let bottom = anytime::check(ev, &mut walk.incumbent, 0)?;
    walk.queue.push(Entry {
        bound: bottom.loss,
        height: 0,
        id: 0,
    });
    walk.queued.insert(0);
    walk.opening(ev, &limit)?;
    if limit.passed() {
        return Ok(AnytimeResult {
            best: walk.incumbent.node(),
            proven: false,
        });
    }
    let stepping = lattice.top_height().max(1);
    let mut step = 0usize;
    while let Some(entry) = walk.queue.pop() {
        if walk.expanded.contains(&entry.id) || walk.hopeless(ev, entry.id) {
            continue;
        }
        // the first expansion dives, so that a solution is known early
        if step % stepping == 0 {
            walk.dive(ev, &limit, entry.id)?;
        } else {
            walk.expand(ev, &limit, entry.id)?;
        }
        step += 1;
        if limit.passed() {
            return Ok(AnytimeResult {
                best: walk.incumbent.node(),
                proven: false,
            });
        }
    }
    Ok(AnytimeResult {
        best: walk.incumbent.node(),
        proven: true,
    })
}
