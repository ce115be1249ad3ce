//! The engine [`Control`] of one running job: a stop flag with its reason (set by the heartbeat, the
//! deadline or the supervisor), in an atomic so the engine's frequent polls stay cheap, and the job's
//! [`JobProgress`] (stage, engine step, fractions that only grow).

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use crate::core::control::{Control, Progress, Stage};
use crate::domain::run::progress::{done_view, JobProgress};

/// Why a running job was told to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The client asked for the job's cancellation.
    CancelRequested,
    /// Another worker owns the job now; its output must be dropped.
    LeaseLost,
    /// The job ran longer than the deadline.
    Deadline,
    /// The process is shutting down; the job goes back to the queue.
    Shutdown,
}

impl StopReason {
    fn code(self) -> u8 {
        match self {
            StopReason::CancelRequested => 1,
            StopReason::LeaseLost => 2,
            StopReason::Deadline => 3,
            StopReason::Shutdown => 4,
        }
    }

    fn from_code(code: u8) -> Option<StopReason> {
        match code {
            1 => Some(StopReason::CancelRequested),
            2 => Some(StopReason::LeaseLost),
            3 => Some(StopReason::Deadline),
            4 => Some(StopReason::Shutdown),
            _ => None,
        }
    }
}

/// The control handed to the engine for one job. The first stop reason wins.
#[derive(Debug)]
pub(crate) struct JobControl {
    stop: AtomicU8,
    deadline: Instant,
    progress: JobProgress,
}

impl JobControl {
    /// A control that stops by itself at `deadline`.
    pub(crate) fn new(deadline: Instant) -> Self {
        JobControl {
            stop: AtomicU8::new(0),
            deadline,
            progress: JobProgress::new(),
        }
    }

    /// Asks the job to stop; ignored when it was already told to stop for another reason.
    pub(crate) fn stop(&self, reason: StopReason) {
        let _ = self
            .stop
            .compare_exchange(0, reason.code(), Ordering::AcqRel, Ordering::Acquire);
    }

    /// Why the job was told to stop, if it was.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        StopReason::from_code(self.stop.load(Ordering::Acquire))
    }

    /// The latest progress as stored in the job row (a [`ProgressView`](crate::domain::run::progress::ProgressView)).
    pub(crate) fn progress_json(&self) -> String {
        view_json(&self.progress.view())
    }
}

/// The progress stored with a succeeded job: stage `done`, fraction 1.
pub(crate) fn done_progress_json() -> String {
    view_json(&done_view())
}

fn view_json(view: &crate::domain::run::progress::ProgressView) -> String {
    // a struct of numbers and enum names always serializes
    serde_json::to_string(view).unwrap_or_default()
}

impl Control for JobControl {
    fn is_cancelled(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) != 0 {
            return true;
        }
        if Instant::now() >= self.deadline {
            self.stop(StopReason::Deadline);
            return true;
        }
        false
    }

    fn report(&self, progress: Progress) {
        self.progress.report(progress);
    }

    fn enter(&self, stage: Stage) {
        self.progress.enter(stage);
    }

    fn clock_ms(&self) -> Option<u64> {
        Some(self.progress.clock_ms())
    }

    fn best_loss(&self, loss: f64) {
        self.progress.best_loss(loss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::control::Phase;
    use std::time::Duration;

    #[test]
    fn the_first_stop_reason_wins() {
        let control = JobControl::new(Instant::now() + Duration::from_secs(60));
        assert!(!control.is_cancelled());
        assert_eq!(control.stop_reason(), None);
        control.stop(StopReason::CancelRequested);
        control.stop(StopReason::Shutdown);
        assert!(control.is_cancelled());
        assert_eq!(control.stop_reason(), Some(StopReason::CancelRequested));
    }

    #[test]
    fn a_past_deadline_stops_the_job() {
        let control = JobControl::new(Instant::now());
        assert!(control.is_cancelled());
        assert_eq!(control.stop_reason(), Some(StopReason::Deadline));
    }

    #[test]
    fn progress_is_stored_as_the_job_progress_view() {
        let control = JobControl::new(Instant::now() + Duration::from_secs(60));
        let parse = |json: &str| -> serde_json::Value { serde_json::from_str(json).expect("json") };
        assert_eq!(parse(&control.progress_json())["phase"], "loading");
        control.enter(Stage::Searching);
        control.report(Progress {
            phase: Phase::Searching,
            done: 25,
            total: 100,
        });
        let json = parse(&control.progress_json());
        assert_eq!(json["phase"], "searching");
        assert_eq!(json["step"], "searching");
        assert_eq!(json["done"], 25);
        let done = parse(&done_progress_json());
        assert_eq!(done["phase"], "done");
        assert_eq!(done["fraction"], 1.0);
    }
}
