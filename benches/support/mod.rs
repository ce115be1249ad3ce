//! What the bench binaries share: their command line (a case-name filter, `--runs N`, and the quick smoke
//! mode `cargo test --all-targets` runs them in) and the median, minimum and maximum of repeated timings.

/// A bench binary's arguments.
pub struct Args {
    /// Cases whose name contains this run (empty: every case).
    pub filter: String,
    /// Repetitions per case.
    pub runs: usize,
}

impl Args {
    /// Reads `[filter] [--runs N]`. `cargo bench` passes `--bench`; without it (as `cargo test
    /// --all-targets` runs bench binaries) only the case named `smoke` runs, once.
    pub fn parse(default_runs: usize, smoke: &str) -> Self {
        let mut args = std::env::args().skip(1);
        let mut filter = String::new();
        let mut runs = default_runs;
        let mut benchmarking = false;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--runs" => {
                    runs = args
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(runs)
                        .max(1)
                }
                "--bench" => benchmarking = true,
                other if !other.starts_with('-') => filter = other.to_string(),
                _ => {}
            }
        }
        if benchmarking {
            Self { filter, runs }
        } else {
            Self {
                filter: smoke.to_string(),
                runs: 1,
            }
        }
    }

    /// Whether the case named `name` runs.
    pub fn selects(&self, name: &str) -> bool {
        name.contains(&self.filter)
    }
}

/// Median, minimum and maximum of repeated timings.
pub struct Timing {
    /// The median (the upper one of an even count).
    pub median: f64,
    /// The fastest.
    pub min: f64,
    /// The slowest.
    pub max: f64,
}

impl Timing {
    /// The summary of `times` (at least one).
    pub fn of(times: &[f64]) -> Self {
        let mut sorted = times.to_vec();
        sorted.sort_by(|a, b| a.total_cmp(b));
        Self {
            median: sorted[sorted.len() / 2],
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        }
    }
}
