//! Grassberger's entropy estimator (P. Grassberger, "Entropy Estimates from Insufficient Samplings",
//! arXiv:physics/0307138, 2003), offered for entropy l-diversity as by Stammler, Katzenbeisser and
//! Hamacher ("Correcting Finite Sampling Issues in Entropy l-diversity", PSD 2016, LNCS 9867) and ARX.
//!
//! The plug-in (Shannon) entropy of a class is `ln N − (Σ n·ln n)/N`; Grassberger's estimate replaces the
//! logarithm by `G`: `Ĥ = G(N) − (Σ n·G(n))/N`, with `G(2m + 1) = G(2m) = −γ − ln 2 + Σ_{k=1..m} 2/(2k − 1)`
//! (equivalently `G(2m) = ψ(m + ½) + ln 2`, ψ the digamma function). Small classes underestimate entropy
//! with the plug-in formula; the estimate corrects that bias, so it accepts more classes.
//!
//! Unlike Shannon entropy the estimate is **not** preserved by merging: two classes `{a, b}` (Ĥ = 2) merge
//! into `{a × 2, b × 2}` (Ĥ = 2/3). The model built on it therefore declares no monotonicity, and the
//! exact searches stay exact without pruning on it (ARX's implementation declares it monotone without
//! suppression).

/// Euler–Mascheroni constant γ.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// Up to this `m`, `G(2m)` is summed directly; above, the asymptotic series of ψ is accurate to well
/// below 1e-15.
const DIRECT_LIMIT: u64 = 64;

/// Grassberger's `G(n)` for `n ≥ 1` (0 for `n = 0`, which never contributes).
pub fn g(n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let m = n / 2;
    if m <= DIRECT_LIMIT {
        let sum: f64 = (1..=m).map(|k| 2.0 / (2 * k - 1) as f64).sum();
        return -EULER_GAMMA - std::f64::consts::LN_2 + sum;
    }
    // ψ(x + ½) = ln x + 1/(24x²) − 7/(960x⁴) + 31/(8064x⁶) − …, with x = m
    let x = m as f64;
    let inv2 = 1.0 / (x * x);
    (2.0 * x).ln() + inv2 * (1.0 / 24.0 - inv2 * (7.0 / 960.0 - inv2 * (31.0 / 8064.0)))
}

/// Grassberger's entropy estimate (nats) of a class with the given value counts.
pub fn entropy(counts: impl Iterator<Item = u64> + Clone) -> f64 {
    let total: u64 = counts.clone().sum();
    if total == 0 {
        return 0.0;
    }
    let weighted: f64 = counts.filter(|&n| n > 0).map(|n| n as f64 * g(n)).sum();
    g(total) - weighted / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(counts: &[u64]) -> f64 {
        entropy(counts.iter().copied())
    }

    #[test]
    fn g_matches_the_closed_form_and_its_asymptotic_series() {
        // G(1) = −γ − ln 2, G(2) = G(3) = G(1) + 2, G(4) = G(2) + 2/3
        assert!((g(1) - (-1.270_362_845_461_478_2)).abs() < 1e-15);
        assert_eq!(g(2), g(3));
        assert!((g(2) - (g(1) + 2.0)).abs() < 1e-15);
        assert!((g(4) - (g(2) + 2.0 / 3.0)).abs() < 1e-15);
        // the series takes over above 2·64 without a visible step
        let direct = |n: u64| {
            let m = n / 2;
            -EULER_GAMMA - std::f64::consts::LN_2
                + (1..=m).map(|k| 2.0 / (2 * k - 1) as f64).sum::<f64>()
        };
        for n in [129u64, 130, 131, 200, 1001, 5000] {
            assert!((g(n) - direct(n)).abs() < 1e-12, "n = {n}");
        }
        // G(n) approaches ln n
        assert!((g(1_000_000) - (1_000_000f64).ln()).abs() < 1e-9);
    }

    #[test]
    fn estimates_exceed_the_plug_in_entropy_of_small_samples() {
        // {a, b}: Ĥ = G(2) − G(1) = 2, while the plug-in entropy is ln 2
        assert!((estimate(&[1, 1]) - 2.0).abs() < 1e-12);
        // {a × 2, b × 2}: G(4) − G(2) = 2/3
        assert!((estimate(&[2, 2]) - 2.0 / 3.0).abs() < 1e-12);
        // one value: G(n) − G(n) = 0
        assert!(estimate(&[7]).abs() < 1e-15);
        // large uniform samples approach ln(values)
        let uniform = estimate(&[100_000, 100_000, 100_000]);
        assert!((uniform - 3f64.ln()).abs() < 1e-4);
    }

    #[test]
    fn merging_can_lower_the_estimate() {
        // why the model built on it is not monotone
        let merged = estimate(&[2, 2]);
        assert!(merged < estimate(&[1, 1]));
        assert!(merged < 2f64.ln());
    }
}
