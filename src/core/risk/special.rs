//! Special functions the population models need, for positive real arguments: `ln Γ(x)` (Lanczos
//! approximation, g = 7, nine coefficients; relative error about 1e-15) and the digamma function `ψ(x)`
//! (recurrence up to `x ≥ 10`, then its asymptotic series, as in Abramowitz & Stegun §6.3.18; absolute
//! error below 1e-12).
//!
//! Every function returns NaN for arguments that are not finite and positive; callers check the
//! results and turn a non-finite value into a "not applicable" estimate.

/// Lanczos coefficients for g = 7, n = 9 (the widely published set).
const LANCZOS: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];

/// `ln Γ(x)` for `x > 0`.
pub fn ln_gamma(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return f64::NAN;
    }
    if x < 0.5 {
        // reflection: Γ(x)Γ(1−x) = π / sin(πx), and sin(πx) > 0 on (0, 0.5)
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = LANCZOS[0];
    for (i, &c) in LANCZOS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The digamma function `ψ(x) = d/dx ln Γ(x)` for `x > 0`.
pub fn digamma(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return f64::NAN;
    }
    let mut x = x;
    let mut result = 0.0;
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    result + x.ln()
        - 0.5 * inv
        - inv2
            * (1.0 / 12.0
                - inv2 * (1.0 / 120.0 - inv2 * (1.0 / 252.0 - inv2 * (1.0 / 240.0 - inv2 / 132.0))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_gamma_matches_factorials_and_half_integers() {
        // Γ(n) = (n − 1)!
        assert!((ln_gamma(1.0)).abs() < 1e-14);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-13);
        assert!((ln_gamma(11.0) - 3_628_800f64.ln()).abs() < 1e-12);
        // Γ(1/2) = √π
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
        // Γ(0.1) = 9.513507698668731836… (A&S table 6.1 via Γ(1.1)/0.1)
        assert!((ln_gamma(0.1) - 9.513_507_698_668_732f64.ln()).abs() < 1e-12);
        assert!(ln_gamma(0.0).is_nan() && ln_gamma(-1.0).is_nan() && ln_gamma(f64::NAN).is_nan());
    }

    #[test]
    fn digamma_matches_known_values() {
        // ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2
        let gamma = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + gamma).abs() < 1e-12);
        assert!((digamma(0.5) + gamma + 2.0 * 2f64.ln()).abs() < 1e-12);
        // recurrence: ψ(x + 1) = ψ(x) + 1/x
        for x in [0.3, 2.5, 7.25, 1000.0] {
            assert!(
                (digamma(x + 1.0) - digamma(x) - 1.0 / x).abs() < 1e-12,
                "{x}"
            );
        }
    }
}
