//! A best-effort bottom-up search after Lightning (Prasser, Bild, Eicher, Spengler & Kuhn 2016,
//! "Lightning: Utility-Driven Anonymization of High-Dimensional Data", Transactions on Data Privacy 9(2)),
//! for lattices too large for the exact searches.
//!
//! Checked nodes wait in a queue ordered by their loss (ties: lower height, then smaller id). The search
//! repeatedly takes the first and expands it: every successor not yet expanded is checked and queued.
//! The first and every `top height`-th expansion is a greedy dive instead: from the node, the search keeps expanding the
//! successor with the least loss until it reaches a node whose successors cannot do better, which finds
//! a solution early on lattices with many levels. A node is never expanded twice, and a node whose
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

/// Whether the search ran out of time.
struct OutOfTime;

impl Walk<'_> {
    /// Whether nothing above `id` can beat the incumbent.
    fn hopeless(&self, ev: &Evaluator<'_>, id: NodeId) -> bool {
        ev.cached(id).is_some_and(|c| {
            self.incumbent
                .excludes_above(c.bound_above, self.lattice.height_of(id))
        })
    }

    /// Checks and queues the successors of `id` not yet expanded; returns the one with the least loss.
    fn expand(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        id: NodeId,
    ) -> Result<Result<Option<Entry>, OutOfTime>, CoreError> {
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
            if !self.hopeless(ev, next) {
                if self.queued.insert(next) {
                    self.queue.push(entry);
                }
                if cheapest.is_none_or(|c| entry > c) {
                    // `Entry` orders for a max-heap: greater means a smaller key
                    cheapest = Some(entry);
                }
            }
            if limit.expired() {
                return Ok(Err(OutOfTime));
            }
        }
        Ok(Ok(cheapest))
    }

    /// Expands `id`, then keeps expanding the cheapest successor while it may still beat the incumbent.
    fn dive(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        id: NodeId,
    ) -> Result<Result<(), OutOfTime>, CoreError> {
        let mut at = id;
        loop {
            match self.expand(ev, limit, at)? {
                Err(out) => return Ok(Err(out)),
                Ok(Some(next)) if !self.hopeless(ev, next.id) => at = next.id,
                Ok(_) => return Ok(Ok(())),
            }
        }
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
    let stepping = lattice.top_height().max(1);
    let mut step = 0usize;
    while let Some(entry) = walk.queue.pop() {
        if walk.expanded.contains(&entry.id) || walk.hopeless(ev, entry.id) {
            continue;
        }
        // the first expansion dives, so that a solution is known early
        let done = if step % stepping == 0 {
            walk.dive(ev, &limit, entry.id)?
        } else {
            walk.expand(ev, &limit, entry.id)?.map(|_| ())
        };
        step += 1;
        if done.is_err() {
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
