//! The l-diversity checks of a published class, written again from the definitions (Machanavajjhala et
//! al. 2007, as restated by Hsu 2008, Defs 3.3.1–3.3.3) on the rendered texts of the sensitive column,
//! without the engine's models: distinct values are counted as strings, the entropy is `−Σ p·ln p` in
//! `f64` (with the same documented tolerance, [`ENTROPY_TOLERANCE`], so that exact equality passes), and
//! the recursive check compares integers with `c` as an exact decimal.

use std::collections::HashMap;

use crate::core::privacy::{Decimal, EntropyEstimator, ENTROPY_TOLERANCE};

/// Distinct l-diversity: at least `l` distinct values.
pub(crate) fn distinct_l(values: &HashMap<&str, u64>, l: u64) -> bool {
    values.len() as u64 >= l
}

/// Entropy l-diversity: at least `l` distinct values and an entropy of at least `ln l`.
pub(crate) fn entropy_l(values: &HashMap<&str, u64>, l: u64, estimator: EntropyEstimator) -> bool {
    let counts = || values.values().copied();
    let total = counts().sum::<u64>();
    let entropy: f64 = match estimator {
        EntropyEstimator::Shannon => counts()
            .map(|n| {
                let p = n as f64 / total as f64;
                -p * p.ln()
            })
            .sum(),
        EntropyEstimator::Grassberger => grassberger_entropy(total, &counts().collect::<Vec<_>>()),
    };
    values.len() as u64 >= l && entropy >= (l as f64).ln() - ENTROPY_TOLERANCE
}

/// Recursive (c,l)-diversity: the most frequent value's count is below `c` times the sum of the counts
/// from the `l`-th most frequent on (strict).
pub(crate) fn recursive_cl(values: &HashMap<&str, u64>, c: Decimal, l: u64) -> bool {
    if l <= 1 {
        return true;
    }
    let mut sorted: Vec<u64> = values.values().copied().collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let most = sorted.first().copied().unwrap_or(0);
    let tail: u64 = sorted.iter().skip(l as usize - 1).sum();
    most > 0 && c.exceeds_when_scaled(most, tail)
}

/// Grassberger's entropy estimate `G(N) − Σ n·G(n) / N` with `G(2m) = G(2m + 1) = −γ − ln 2 +
/// Σ_{k=1..m} 2/(2k − 1)`, summed directly (the engine uses an asymptotic series for large counts).
fn grassberger_entropy(total: u64, counts: &[u64]) -> f64 {
    // the partial sums of 2/(2k − 1), computed once up to the largest m needed
    let mut partial = vec![0.0f64; (total / 2) as usize + 1];
    for m in 1..partial.len() {
        partial[m] = partial[m - 1] + 2.0 / (2 * m - 1) as f64;
    }
    let g = |n: u64| -0.577_215_664_901_532_9 - std::f64::consts::LN_2 + partial[(n / 2) as usize];
    let weighted: f64 = counts.iter().map(|&n| n as f64 * g(n)).sum();
    g(total) - weighted / total.max(1) as f64
}
