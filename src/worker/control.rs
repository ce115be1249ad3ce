//! The engine [`Control`] of one running job: a stop flag with its reason (set by the heartbeat, the
//! deadline or the supervisor) and the latest progress, all in atomics so the engine's per-node calls
//! stay cheap.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use serde_json::json;

use crate::core::control::{Control, Phase, Progress};

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

const PHASES: [Phase; 7] = [
    Phase::Preparing,
    Phase::Searching,
    Phase::Selecting,
    Phase::Rendering,
    Phase::Partitioning,
    Phase::Clustering,
    Phase::Relocating,
];

/// The control handed to the engine for one job. The first stop reason wins.
#[derive(Debug)]
pub(crate) struct JobControl {
    stop: AtomicU8,
    deadline: Instant,
    phase: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
}

impl JobControl {
    /// A control that stops by itself at `deadline`.
    pub(crate) fn new(deadline: Instant) -> Self {
        JobControl {
            stop: AtomicU8::new(0),
            deadline,
            phase: AtomicU8::new(0),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
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

    /// The latest progress as stored in the job row: `{"phase", "done", "total", "fraction"}`, the
    /// fraction being `done / total` clamped to [0, 1] (0 while the total is unknown).
    pub(crate) fn progress_json(&self) -> String {
        let phase = PHASES
            .get(usize::from(self.phase.load(Ordering::Relaxed)))
            .copied()
            .unwrap_or(Phase::Preparing);
        let done = self.done.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        let fraction = if total == 0 {
            0.0
        } else {
            (done as f64 / total as f64).clamp(0.0, 1.0)
        };
        json!({"phase": phase, "done": done, "total": total, "fraction": fraction}).to_string()
    }
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
        let phase = PHASES
            .iter()
            .position(|p| *p == progress.phase)
            .unwrap_or(0);
        self.phase.store(phase as u8, Ordering::Relaxed);
        self.done.store(progress.done, Ordering::Relaxed);
        self.total.store(progress.total, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn progress_is_reported_as_json_with_a_clamped_fraction() {
        let control = JobControl::new(Instant::now() + Duration::from_secs(60));
        let parse = |c: &JobControl| -> serde_json::Value {
            serde_json::from_str(&c.progress_json()).expect("json")
        };
        assert_eq!(
            parse(&control),
            json!({"phase": "preparing", "done": 0, "total": 0, "fraction": 0.0})
        );
        control.report(Progress {
            phase: Phase::Searching,
            done: 25,
            total: 100,
        });
        assert_eq!(
            parse(&control),
            json!({"phase": "searching", "done": 25, "total": 100, "fraction": 0.25})
        );
        control.report(Progress {
            phase: Phase::Selecting,
            done: 7,
            total: 5,
        });
        assert_eq!(parse(&control)["fraction"], json!(1.0));
    }
}
