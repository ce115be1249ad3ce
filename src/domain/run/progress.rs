//! A whole job's progress, as users see it: the [`Stage`] under way, the engine's step inside it, and two
//! fractions that only grow — the stage's and the job's. The job's fraction gives each stage a fixed
//! share of [0, 1] (the search or recoding the largest) and is exactly 1 once the job is done, so a
//! dashboard's bar never moves back and an estimate of the time left can be read from it.
//!
//! The engine reports its own units (nodes checked or tagged out of the lattice, records settled,
//! candidates measured); [`engine_fraction`] turns each into a share of the stage. Reports arrive from
//! several threads and out of order, so every fraction is the largest seen so far in its stage.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::core::control::{Phase, Progress, Stage};

/// Where each stage's share of the job begins, in stage order (`Searching` and `Recoding` share one
/// slot: a job runs one of them). The shares follow where whole jobs spend their time.
fn stage_span(stage: Stage) -> (f64, f64) {
    match stage {
        Stage::Loading => (0.0, 0.10),
        Stage::Searching | Stage::Recoding => (0.10, 0.60),
        Stage::Verifying => (0.70, 0.08),
        Stage::Measuring => (0.78, 0.12),
        Stage::Writing => (0.90, 0.10),
        Stage::Done => (1.0, 0.0),
    }
}

/// The share of its stage an engine report stands for. A full-domain search first prepares (nothing
/// counted), then checks nodes (90 % of the stage), then measures its candidate solutions (the rest).
pub fn engine_fraction(progress: &Progress) -> f64 {
    let part = if progress.total == 0 {
        0.0
    } else {
        (progress.done as f64 / progress.total as f64).clamp(0.0, 1.0)
    };
    match progress.phase {
        Phase::Preparing => 0.0,
        Phase::Searching => 0.9 * part,
        Phase::Selecting => 0.9 + 0.1 * part,
        Phase::Rendering | Phase::Partitioning | Phase::Clustering | Phase::Relocating => part,
    }
}

/// What a progress display shows: the stored job's `progress` object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProgressView {
    /// The stage under way.
    pub phase: Stage,
    /// The engine's step inside the stage, once the engine has reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<Phase>,
    /// The engine's units done in its step.
    pub done: u64,
    /// The engine's units in its step (an upper bound where the exact count is unknown).
    pub total: u64,
    /// The share of the stage done, in [0, 1], never decreasing within the stage.
    pub phase_fraction: f64,
    /// The share of the whole job done, in [0, 1], never decreasing, exactly 1 when done.
    pub fraction: f64,
    /// The loss of the best solution an anytime search (Lightning, genetic) has found so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_loss: Option<f64>,
}

/// Progress of one job, fed by the caller's stages and the engine's reports; cheap enough for the
/// engine's frequent calls (one uncontended lock).
#[derive(Debug)]
pub struct JobProgress {
    state: Mutex<State>,
    started: Instant,
}

#[derive(Debug)]
struct State {
    view: ProgressView,
    /// When each stage after the first was entered, in order.
    entered: Vec<(Stage, Instant)>,
}

impl Default for JobProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl JobProgress {
    /// A job that is loading.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State {
                view: ProgressView {
                    phase: Stage::Loading,
                    step: None,
                    done: 0,
                    total: 0,
                    phase_fraction: 0.0,
                    fraction: 0.0,
                    best_loss: None,
                },
                entered: Vec::new(),
            }),
            started: Instant::now(),
        }
    }

    /// Moves to `stage`; a stage at or before the current one is ignored (stages only move forward).
    pub fn enter(&self, stage: Stage) {
        let mut state = self.lock();
        if stage <= state.view.phase {
            return;
        }
        let (start, _) = stage_span(stage);
        state.entered.push((stage, Instant::now()));
        let view = &mut state.view;
        *view = ProgressView {
            phase: stage,
            step: None,
            done: 0,
            total: 0,
            phase_fraction: if stage == Stage::Done { 1.0 } else { 0.0 },
            fraction: view.fraction.max(start),
            best_loss: view.best_loss,
        };
    }

    /// Records an engine report in the current stage.
    pub fn report(&self, progress: Progress) {
        let mut state = self.lock();
        let view = &mut state.view;
        if view.phase == Stage::Done {
            return;
        }
        view.step = Some(progress.phase);
        view.done = progress.done;
        view.total = progress.total;
        view.phase_fraction = view.phase_fraction.max(engine_fraction(&progress));
        let (start, width) = stage_span(view.phase);
        view.fraction = view.fraction.max(start + width * view.phase_fraction);
    }

    /// Records the loss of the best solution an anytime search has found so far.
    pub fn best_loss(&self, loss: f64) {
        self.lock().view.best_loss = Some(loss);
    }

    /// Milliseconds since the job started: the clock of the engine's time limits.
    pub fn clock_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The progress now.
    pub fn view(&self) -> ProgressView {
        self.lock().view
    }

    /// Time since the job started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// How long each stage took so far, in order (the current one until now).
    pub fn stage_times(&self) -> Vec<(Stage, Duration)> {
        let entered = self.lock().entered.clone();
        let mut times = Vec::with_capacity(entered.len() + 1);
        let mut current = (Stage::Loading, self.started);
        for (stage, at) in entered {
            times.push((current.0, at.duration_since(current.1)));
            current = (stage, at);
        }
        if current.0 != Stage::Done {
            times.push((current.0, current.1.elapsed()));
        }
        times
    }

    /// The time left if the rest goes at the pace so far; none before 2 % of the job is done.
    pub fn eta(&self) -> Option<Duration> {
        let fraction = self.view().fraction;
        if !(0.02..1.0).contains(&fraction) {
            return None;
        }
        Some(self.elapsed().mul_f64((1.0 - fraction) / fraction))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // a panic while holding the lock leaves a consistent state (every update is a plain assignment)
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The stored progress of a finished job.
pub fn done_view() -> ProgressView {
    let progress = JobProgress::new();
    progress.enter(Stage::Done);
    progress.view()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(p: &JobProgress, phase: Phase, done: u64, total: u64) {
        p.report(Progress { phase, done, total });
    }

    #[test]
    fn a_full_domain_job_moves_through_its_stages_to_one() {
        let p = JobProgress::new();
        assert_eq!(p.view().phase, Stage::Loading);
        assert_eq!(p.view().fraction, 0.0);
        p.enter(Stage::Searching);
        assert_eq!(p.view().fraction, 0.10);
        report(&p, Phase::Searching, 50, 100);
        let view = p.view();
        assert_eq!(view.step, Some(Phase::Searching));
        assert!((view.phase_fraction - 0.45).abs() < 1e-12);
        assert!((view.fraction - (0.10 + 0.60 * 0.45)).abs() < 1e-12);
        report(&p, Phase::Selecting, 1, 2);
        assert!((p.view().phase_fraction - 0.95).abs() < 1e-12);
        for stage in [Stage::Verifying, Stage::Measuring, Stage::Writing] {
            let before = p.view().fraction;
            p.enter(stage);
            assert_eq!(p.view().phase, stage);
            assert_eq!(p.view().phase_fraction, 0.0);
            assert!(p.view().fraction > before);
        }
        p.enter(Stage::Done);
        assert_eq!(p.view().fraction, 1.0);
        assert_eq!(p.view().phase_fraction, 1.0);
        assert_eq!(p.view(), done_view());
    }

    #[test]
    fn fractions_never_decrease_whatever_the_reports_say() {
        let p = JobProgress::new();
        p.enter(Stage::Recoding);
        report(&p, Phase::Partitioning, 80, 100);
        let high = p.view();
        // a late report of another thread, and a step whose units restart at zero
        report(&p, Phase::Partitioning, 10, 100);
        report(&p, Phase::Relocating, 0, 5);
        assert_eq!(p.view().phase_fraction, high.phase_fraction);
        assert_eq!(p.view().fraction, high.fraction);
        // going back a stage is ignored
        p.enter(Stage::Loading);
        assert_eq!(p.view().phase, Stage::Recoding);
        // reports after the end change nothing
        p.enter(Stage::Done);
        report(&p, Phase::Partitioning, 1, 100);
        assert_eq!(p.view().fraction, 1.0);
        assert_eq!(p.view().phase, Stage::Done);
    }

    #[test]
    fn the_best_loss_so_far_is_shown_and_kept_through_the_stages() {
        let p = JobProgress::new();
        p.enter(Stage::Searching);
        assert_eq!(
            serde_json::to_value(p.view()).unwrap().get("best_loss"),
            None
        );
        p.best_loss(0.5);
        p.best_loss(0.25);
        p.enter(Stage::Verifying);
        assert_eq!(serde_json::to_value(p.view()).unwrap()["best_loss"], 0.25);
    }

    #[test]
    fn the_stored_form_names_the_stage_and_the_step() {
        let p = JobProgress::new();
        p.enter(Stage::Searching);
        report(&p, Phase::Searching, 1, 4);
        let json = serde_json::to_value(p.view()).unwrap();
        assert_eq!(json["phase"], "searching");
        assert_eq!(json["step"], "searching");
        assert_eq!(json["done"], 1);
        assert_eq!(json["total"], 4);
        let loading = serde_json::to_value(JobProgress::new().view()).unwrap();
        assert_eq!(
            loading,
            serde_json::json!({"phase": "loading", "done": 0, "total": 0, "phase_fraction": 0.0, "fraction": 0.0})
        );
    }

    #[test]
    fn stage_times_follow_the_stages_entered() {
        let p = JobProgress::new();
        p.enter(Stage::Searching);
        p.enter(Stage::Writing);
        let stages: Vec<Stage> = p.stage_times().iter().map(|t| t.0).collect();
        assert_eq!(stages, [Stage::Loading, Stage::Searching, Stage::Writing]);
        p.enter(Stage::Done);
        let times = p.stage_times();
        assert_eq!(times.len(), 3);
        assert!(times.iter().map(|t| t.1).sum::<Duration>() <= p.elapsed());
    }

    #[test]
    fn no_estimate_of_the_time_left_before_a_share_is_done() {
        let p = JobProgress::new();
        assert_eq!(p.eta(), None);
        p.enter(Stage::Verifying);
        assert!(p.eta().is_some());
        p.enter(Stage::Done);
        assert_eq!(p.eta(), None);
    }
}
