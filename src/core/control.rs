//! Cooperative cancellation and typed progress. The engine polls [`Control::is_cancelled`] between units of
//! work (one node check, one candidate evaluation) and reports [`Progress`]; callers decide how to show it.
//! Loops whose iterations are too cheap to poll each time count their work with a [`Pace`], which polls
//! once per [`Pace::BUDGET`] units, so no stretch between two polls grows with the input. The budget
//! belongs to the thread, not to one `Pace`: a search that makes a new pace for every call of a small
//! loop (a recursion level, one tag spread) still polls once per budget of all the work it does.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::CoreError;

/// Which part of a run is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Building the frequency set of the original table.
    Preparing,
    /// Walking the lattice; `done` counts checked nodes, `total` is the lattice size (a search with a
    /// time limit counts milliseconds spent out of the limit instead).
    Searching,
    /// Computing the loss of candidate solutions; `done`/`total` count candidates.
    Selecting,
    /// Writing the output table.
    Rendering,
    /// Splitting the table into groups (Mondrian); `done` counts groups settled, `total` is the records.
    Partitioning,
    /// Forming clusters of records (local recoding by clustering); `done` counts clustered records.
    Clustering,
    /// Relocating quasi-identifier cells (hybrid k-anonymization); `done` counts cells moved.
    Relocating,
}

/// Which part of a whole job is under way, as its caller reports it (the engine's own [`Phase`]s happen
/// inside `Searching` or `Recoding`). Stages only move forward, in declaration order; a job runs either
/// `Searching` (full-domain) or `Recoding` (local recoding), never both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Reading the dataset and the job's spec and hierarchies.
    Loading,
    /// A full-domain search of the generalization lattice.
    Searching,
    /// A local recoding (Mondrian, clustering, hybrid).
    Recoding,
    /// Checking the output against the privacy models, independently of the engine.
    Verifying,
    /// Computing the report: loss measures, risk, achieved privacy.
    Measuring,
    /// Writing (and, in the service, storing) the output.
    Writing,
    /// Finished.
    Done,
}

impl Stage {
    /// The stage's name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Loading => "loading",
            Stage::Searching => "searching",
            Stage::Recoding => "recoding",
            Stage::Verifying => "verifying",
            Stage::Measuring => "measuring",
            Stage::Writing => "writing",
            Stage::Done => "done",
        }
    }
}

/// A progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// Current phase.
    pub phase: Phase,
    /// Units done in this phase.
    pub done: u64,
    /// Units in this phase (an upper bound where the exact count is unknown).
    pub total: u64,
}

/// Passed into every engine run by its caller.
pub trait Control: Sync {
    /// True once the caller wants the run to stop; the engine then returns `CoreError::Cancelled`.
    fn is_cancelled(&self) -> bool;
    /// Receives progress; called often, so implementations must be cheap.
    fn report(&self, progress: Progress);
    /// Told when the caller's job moves to another stage; ignored unless the control shows progress.
    fn enter(&self, _stage: Stage) {}
    /// Milliseconds on the caller's monotonic clock, read by searches with a time limit (the engine has
    /// no clock of its own). `None`, the default, means no clock: time limits are then not enforced and
    /// those searches end by their other stopping rules.
    fn clock_ms(&self) -> Option<u64> {
        None
    }
    /// Told the loss of the best solution found so far by an anytime search, each time it improves.
    fn best_loss(&self, _loss: f64) {}
}

/// A control that never cancels and ignores progress.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoControl;

impl Control for NoControl {
    fn is_cancelled(&self) -> bool {
        false
    }
    fn report(&self, _progress: Progress) {}
}

/// A control backed by an atomic flag, for callers that cancel from another thread.
#[derive(Debug, Default)]
pub struct CancelFlag {
    cancelled: AtomicBool,
}

impl CancelFlag {
    /// Requests cancellation.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

impl Control for CancelFlag {
    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
    fn report(&self, _progress: Progress) {}
}

thread_local! {
    /// Units of work the thread may still do before its next poll, shared by every [`Pace`] on it.
    static LEFT: Cell<usize> = const { Cell::new(Pace::BUDGET) };
}

/// Polls a [`Control`] once per [`Pace::BUDGET`] units of work, for loops whose single iteration is too
/// cheap to poll (a record scanned, a pair compared, a lattice node visited). A unit is a small, bounded
/// piece of work (tens of nanoseconds); a caller that did `n` such pieces since its last call counts `n`.
///
/// The budget is the thread's: all paces of a thread count against one budget, so a loop that makes a
/// fresh pace each time it runs (and runs thousands of times between two checks) still polls on time.
/// A run's paces all poll the same control, so whichever pace spends the budget's last unit polls it.
pub struct Pace<'c> {
    control: &'c dyn Control,
}

impl<'c> Pace<'c> {
    /// Units of work between two polls: a poll then costs far less than the work it interrupts, and a
    /// budget of cheap units takes well under a millisecond.
    pub const BUDGET: usize = 4096;

    /// A pace on `control`; its first poll comes when the thread's budget is spent.
    pub fn new(control: &'c dyn Control) -> Self {
        Self { control }
    }

    /// Counts `units` of work done; polls the control once a budget of work has been done on this thread
    /// since the last poll. Returns [`CoreError::Cancelled`] when the caller wants the run to stop.
    #[inline]
    pub fn step(&mut self, units: usize) -> Result<(), CoreError> {
        let left = LEFT.with(Cell::get);
        match left.checked_sub(units) {
            Some(left) if left > 0 => {
                LEFT.with(|l| l.set(left));
                Ok(())
            }
            _ => self.check(),
        }
    }

    /// Forwards progress to the control.
    pub fn report(&self, progress: Progress) {
        self.control.report(progress);
    }

    /// Polls the control now and starts a new budget.
    pub fn check(&mut self) -> Result<(), CoreError> {
        LEFT.with(|l| l.set(Self::BUDGET));
        if self.control.is_cancelled() {
            Err(CoreError::Cancelled)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_names_are_their_serialized_names() {
        for stage in [
            Stage::Loading,
            Stage::Searching,
            Stage::Recoding,
            Stage::Verifying,
            Stage::Measuring,
            Stage::Writing,
            Stage::Done,
        ] {
            assert_eq!(serde_json::to_value(stage).unwrap(), stage.name());
        }
    }
    use std::sync::atomic::AtomicU64;

    /// Counts its polls; cancels from the given poll on.
    struct Counting {
        polls: AtomicU64,
        cancel_at: u64,
    }

    impl Control for Counting {
        fn is_cancelled(&self) -> bool {
            self.polls.fetch_add(1, Ordering::Relaxed) + 1 >= self.cancel_at
        }
        fn report(&self, _progress: Progress) {}
    }

    #[test]
    fn a_pace_polls_once_per_budget_of_work() {
        let control = Counting {
            polls: AtomicU64::new(0),
            cancel_at: u64::MAX,
        };
        let mut pace = Pace::new(&control);
        assert_eq!(pace.check(), Ok(()));
        for _ in 0..Pace::BUDGET - 1 {
            assert_eq!(pace.step(1), Ok(()));
        }
        assert_eq!(control.polls.load(Ordering::Relaxed), 1);
        assert_eq!(pace.step(1), Ok(()));
        assert_eq!(control.polls.load(Ordering::Relaxed), 2);
        // a large step polls at once, whatever was left of the budget
        assert_eq!(pace.step(3), Ok(()));
        assert_eq!(pace.step(1_000_000), Ok(()));
        assert_eq!(control.polls.load(Ordering::Relaxed), 3);
        for _ in 0..10 * Pace::BUDGET {
            assert_eq!(pace.step(1), Ok(()));
        }
        assert_eq!(control.polls.load(Ordering::Relaxed), 13);
    }

    #[test]
    fn fresh_paces_on_one_thread_share_the_budget() {
        let control = Counting {
            polls: AtomicU64::new(0),
            cancel_at: u64::MAX,
        };
        Pace::new(&control).check().expect("not cancelled");
        // a loop that makes a new pace for each unit of work still polls once per budget
        for _ in 0..2 * Pace::BUDGET {
            Pace::new(&control).step(1).expect("not cancelled");
        }
        assert_eq!(control.polls.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_pace_reports_the_cancellation_at_its_next_poll() {
        let control = Counting {
            polls: AtomicU64::new(0),
            cancel_at: 2,
        };
        let mut pace = Pace::new(&control);
        assert_eq!(pace.check(), Ok(()));
        let steps = (0..2 * Pace::BUDGET).position(|_| pace.step(1).is_err());
        assert_eq!(steps, Some(Pace::BUDGET - 1));
        assert_eq!(control.polls.load(Ordering::Relaxed), 2);
    }
}
