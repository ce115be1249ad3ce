//! A terminal progress bar fed by the run's stages and the engine's [`Control`] reports: the stage (and
//! the engine's step inside it), the job's fraction, which only grows, and an estimate of the time left.
//! Hidden when stderr is not a terminal or with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::core::control::{Control, Phase, Progress, Stage};
use crate::domain::run::progress::{JobProgress, ProgressView};

/// Positions of the bar: the job's fraction in thousandths.
const BAR_LENGTH: u64 = 1000;

/// Shows a job's progress on stderr.
pub struct TerminalProgress {
    bar: ProgressBar,
    progress: JobProgress,
}

impl TerminalProgress {
    /// A bar on stderr, or a hidden one when `quiet`; the job is loading.
    pub fn new(quiet: bool) -> Self {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(BAR_LENGTH), target);
        if let Ok(style) =
            ProgressStyle::with_template("{prefix:>22} [{bar:30}] {percent:>3}% {elapsed} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        let shown = Self {
            bar,
            progress: JobProgress::new(),
        };
        shown.show();
        shown
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.progress.enter(Stage::Done);
        self.bar.finish_and_clear();
    }

    /// One line with the time of each stage: `stages: loading 0.41 s (38 %), searching …`.
    pub fn stage_summary(&self) -> String {
        let times = self.progress.stage_times();
        let total: f64 = times.iter().map(|t| t.1.as_secs_f64()).sum();
        let parts: Vec<String> = times
            .iter()
            .map(|(stage, time)| {
                let seconds = time.as_secs_f64();
                let share = if total > 0.0 {
                    100.0 * seconds / total
                } else {
                    0.0
                };
                format!("{} {seconds:.3} s ({share:.0} %)", stage.name())
            })
            .collect();
        format!("stages: {} (total {total:.3} s)", parts.join(", "))
    }

    fn show(&self) {
        let view = self.progress.view();
        self.bar.set_prefix(label(&view));
        self.bar
            .set_position((view.fraction * BAR_LENGTH as f64).round() as u64);
        let best = view
            .best_loss
            .map(|loss| format!(" best loss {loss:.6}"))
            .unwrap_or_default();
        match self.progress.eta() {
            Some(eta) => self
                .bar
                .set_message(format!("eta {}s{best}", eta.as_secs())),
            None => self.bar.set_message(best.trim_start().to_string()),
        }
    }
}

/// "searching (selecting)", "recoding (partitioning)", "writing"...
fn label(view: &ProgressView) -> String {
    let stage = view.phase.name();
    let step = view.step.map(|step| match step {
        Phase::Preparing => "preparing",
        Phase::Searching => "checking nodes",
        Phase::Selecting => "selecting",
        Phase::Rendering => "rendering",
        Phase::Partitioning => "partitioning",
        Phase::Clustering => "clustering",
        Phase::Relocating => "relocating",
    });
    match step {
        Some(step) => format!("{stage} ({step})"),
        None => stage.to_string(),
    }
}

impl Drop for TerminalProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Control for TerminalProgress {
    fn is_cancelled(&self) -> bool {
        false
    }

    fn report(&self, progress: Progress) {
        self.progress.report(progress);
        self.show();
    }

    fn enter(&self, stage: Stage) {
        self.progress.enter(stage);
        self.show();
    }

    fn clock_ms(&self) -> Option<u64> {
        Some(self.progress.clock_ms())
    }

    fn best_loss(&self, loss: f64) {
        self.progress.best_loss(loss);
        self.show();
    }
}
