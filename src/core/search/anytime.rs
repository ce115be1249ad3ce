//! What the anytime searches (Lightning, the genetic search) share: a time limit read on the caller's
//! clock, and the incumbent, the best solution checked so far. Any node an anytime search has checked
//! may become the result, so every output is a solution that a check confirmed; ties are broken as
//! [`select`](super::select) breaks them (lower height, then the smaller node id), so a run that checks
//! the same nodes returns the same node.

use super::{Evaluator, NodeCheck};
use crate::core::control::{Control, Phase, Progress};
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

/// A time limit on the caller's clock ([`Control::clock_ms`]); without a clock it never expires.
pub struct TimeLimit<'c> {
    control: &'c dyn Control,
    started: Option<u64>,
    limit_ms: u64,
    /// Set once [`TimeLimit::expired`] has seen the limit pass (time only grows).
    passed: std::cell::Cell<bool>,
}

impl<'c> TimeLimit<'c> {
    /// A limit of `limit_ms` milliseconds from now.
    pub fn start(control: &'c dyn Control, limit_ms: u64) -> Self {
        Self {
            control,
            started: control.clock_ms(),
            limit_ms,
            passed: std::cell::Cell::new(false),
        }
    }

    /// Milliseconds spent since the start (0 without a clock).
    pub fn spent_ms(&self) -> u64 {
        match (self.started, self.control.clock_ms()) {
            (Some(start), Some(now)) => now.saturating_sub(start),
            _ => 0,
        }
    }

    /// Whether the limit has passed; reports the share of the limit spent as the search's progress.
    pub fn expired(&self) -> bool {
        let spent = self.spent_ms();
        self.control.report(Progress {
            phase: Phase::Searching,
            done: spent.min(self.limit_ms),
            total: self.limit_ms,
        });
        let passed = self.started.is_some() && spent >= self.limit_ms;
        self.passed.set(passed);
        passed
    }

    /// Whether an earlier [`TimeLimit::expired`] saw the limit pass, without reading the clock: searches
    /// read the clock once per check and ask this on their way out.
    pub fn passed(&self) -> bool {
        self.passed.get()
    }
}

/// The best solution checked so far: smallest loss, then lower height, then smaller id.
#[derive(Debug, Default, Clone, Copy)]
pub struct Incumbent {
    best: Option<(f64, usize, NodeId)>,
}

impl Incumbent {
    /// Offers a checked node; returns whether it became the incumbent (the control is told its loss).
    pub fn offer(&mut self, ev: &Evaluator<'_>, id: NodeId, check: &NodeCheck) -> bool {
        if !check.is_solution {
            return false;
        }
        let key = (check.loss, ev.lattice().height_of(id), id);
        let better = self
            .best
            .is_none_or(|b| key.0 < b.0 || (key.0 == b.0 && (key.1, key.2) < (b.1, b.2)));
        if better {
            self.best = Some(key);
            ev.control().best_loss(check.loss);
        }
        better
    }

    /// Whether no generalization of a node of `height` whose `bound_above` is `bound` can become the
    /// incumbent: its loss would be at least the incumbent's, and on a tie its height would be greater.
    /// Bounds and losses are computed by different formulas, so they are compared with a relative slack
    /// of 10⁻⁹ (as the exact searches do): a bound within it of the incumbent's loss counts as a tie.
    pub fn excludes_above(&self, bound: f64, height: usize) -> bool {
        self.best.is_some_and(|(loss, best_height, _)| {
            let slack = loss.abs() * 1e-9 + 1e-12;
            bound > loss + slack || (bound >= loss - slack && height >= best_height)
        })
    }

    /// The incumbent node, if a solution was found.
    pub fn node(&self) -> Option<NodeId> {
        self.best.map(|b| b.2)
    }
}

/// What an anytime search hands back: the incumbent, and whether the search proved it optimal.
#[derive(Debug, Clone, Copy)]
pub struct AnytimeResult {
    /// The best solution found.
    pub best: Option<NodeId>,
    /// Whether no better solution exists (the search ran to its end rather than to its time limit).
    pub proven: bool,
}

/// Checks node `id` and offers it to the incumbent.
pub fn check(
    ev: &mut Evaluator<'_>,
    incumbent: &mut Incumbent,
    id: NodeId,
) -> Result<NodeCheck, CoreError> {
    let c = ev.check(id)?;
    incumbent.offer(ev, id, &c);
    Ok(c)
}
