//! A terminal progress bar fed by the engine's [`Control`] reports. Hidden when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::core::control::{Control, Phase, Progress};

/// Shows engine progress on stderr.
pub struct TerminalProgress {
    bar: ProgressBar,
}

impl TerminalProgress {
    /// A bar on stderr, or a hidden one when `quiet`.
    pub fn new(quiet: bool) -> Self {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) =
            ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {elapsed}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        Self { bar }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Control for TerminalProgress {
    fn is_cancelled(&self) -> bool {
        false
    }

    fn report(&self, progress: Progress) {
        let prefix = match progress.phase {
            Phase::Preparing => "preparing",
            Phase::Searching => "searching",
            Phase::Selecting => "selecting",
            Phase::Rendering => "writing",
            Phase::Partitioning => "partitioning",
            Phase::Clustering => "clustering",
            Phase::Relocating => "relocating",
        };
        self.bar.set_prefix(prefix);
        self.bar.set_length(progress.total);
        self.bar.set_position(progress.done);
    }
}
