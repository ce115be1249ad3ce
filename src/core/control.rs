//! Cooperative cancellation and typed progress. The engine polls [`Control::is_cancelled`] between units of
//! work (one node check, one candidate evaluation) and reports [`Progress`]; callers decide how to show it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Which part of a run is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Building the frequency set of the original table.
    Preparing,
    /// Walking the lattice; `done` counts checked nodes, `total` is the lattice size.
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
