//! The α-hybrid test of Nergiz, Gök & Özkanlı (2013, "Preservation of Utility through Hybrid
//! k-Anonymization", TrustBus, §3 Definition 9; implementation note
//! `nergiz-2013-hybrid-k-anonymization.md` §1.7): Pearson's chi-square statistic of the relocated group
//! sizes against the sizes before relocation, `X² = Σ (|Ĝ_i| − |G_i|)² / |G_i|` over every group of the
//! generalization (emptied groups included), with `n − 1` degrees of freedom. A relocation passes at
//! level α when its p-value is at least α, i.e. `X² ≤ χ²_{1−α}(n − 1)`; a lower α allows more
//! relocation. The chi-square approximation is poor when groups hold fewer than five records, which is
//! exactly where relocation happens; the test is still the paper's.

use crate::core::risk::special::ln_gamma;

/// Relative accuracy of the incomplete-gamma evaluations.
const EPSILON: f64 = 1e-14;
/// Iteration cap of the series and the continued fraction.
const MAX_ITERATIONS: usize = 10_000;

/// The regularized upper incomplete gamma function `Q(a, x) = Γ(a, x) / Γ(a)` for `a > 0`, `x ≥ 0`: a
/// power series for `x < a + 1`, a continued fraction (modified Lentz) otherwise.
fn upper_gamma_regularized(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let log_prefix = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // P(a, x) = e^{-x} x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n))
        let mut term = 1.0 / a;
        let mut sum = term;
        let mut denominator = a;
        for _ in 0..MAX_ITERATIONS {
            denominator += 1.0;
            term *= x / denominator;
            sum += term;
            if term.abs() < sum.abs() * EPSILON {
                break;
            }
        }
        (1.0 - sum * log_prefix.exp()).clamp(0.0, 1.0)
    } else {
        // Q(a, x) = e^{-x} x^a / Γ(a) · 1 / (x + 1 − a − 1·(1−a) / (x + 3 − a − …))
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..MAX_ITERATIONS {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < EPSILON {
                break;
            }
        }
        (log_prefix.exp() * h).clamp(0.0, 1.0)
    }
}

/// The probability that a chi-square variable with `df` degrees of freedom exceeds `statistic` (the
/// p-value of the test); 1 when `df` is 0 (a single group cannot be distorted).
pub fn p_value(statistic: f64, df: u64) -> f64 {
    if df == 0 {
        return 1.0;
    }
    upper_gamma_regularized(df as f64 / 2.0, statistic.max(0.0) / 2.0)
}

/// The critical value `χ²_{1−α}(df)`: the statistic whose p-value is `alpha` (bisection to a relative
/// width of 1e-12). Infinite when `df` is 0.
pub fn critical_value(alpha: f64, df: u64) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    let mut low = 0.0;
    let mut high = (df as f64).max(1.0);
    while p_value(high, df) > alpha {
        low = high;
        high *= 2.0;
    }
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if p_value(middle, df) > alpha {
            low = middle;
        } else {
            high = middle;
        }
        if high - low <= 1e-12 * high {
            break;
        }
    }
    high
}

/// Pearson's statistic `Σ (observed_i − expected_i)² / expected_i` over groups with positive expected
/// size (every group of a generalization has at least one record).
pub fn pearson(observed: &[u32], expected: &[u32]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .filter(|(_, &e)| e > 0)
        .map(|(&o, &e)| term(o, e))
        .sum()
}

/// One group's term of Pearson's statistic.
pub(super) fn term(observed: u32, expected: u32) -> f64 {
    let difference = f64::from(observed) - f64::from(expected);
    difference * difference / f64::from(expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_and_critical_values_match_tables() {
        // df 2: the survival function is e^{-x/2} exactly
        for x in [0.5, 1.0, 3.0, 10.0] {
            assert!((p_value(x, 2) - (-x / 2.0_f64).exp()).abs() < 1e-12);
        }
        // df 1 at 3.841459 (the 5% point of the standard tables)
        assert!((p_value(3.841_459, 1) - 0.05).abs() < 1e-6);
        // tables: χ²_{0.95}(3) = 7.815, χ²_{0.99}(10) = 23.209, χ²_{0.95}(100) = 124.342
        assert!((critical_value(0.05, 3) - 7.8147).abs() < 1e-3);
        assert!((critical_value(0.01, 10) - 23.2093).abs() < 1e-3);
        assert!((critical_value(0.05, 100) - 124.3421).abs() < 1e-3);
        // a lower α allows a larger statistic
        assert!(critical_value(0.01, 3) > critical_value(0.05, 3));
        assert_eq!(p_value(0.0, 4), 1.0);
        assert_eq!(p_value(5.0, 0), 1.0);
    }

    #[test]
    fn pearson_of_the_paper_example() {
        // note §1.7: Table 1 at [1,1,3], expected (3,1,2,3), observed (3,0,3,3): 0 + 1 + 1/2 + 0
        let x = pearson(&[3, 0, 3, 3], &[3, 1, 2, 3]);
        assert!((x - 1.5).abs() < 1e-12);
        // P(χ²_3 > 1.5) = 0.6823 (tables); passes at 5%
        assert!((p_value(x, 3) - 0.6823).abs() < 1e-4);
        assert_eq!(pearson(&[3, 1, 2], &[3, 1, 2]), 0.0);
    }
}
