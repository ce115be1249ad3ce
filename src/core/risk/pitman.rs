//! Pitman's model of population uniques (Hoshino, "Applying Pitman's sampling formula to microdata
//! disclosure risk assessment", Journal of Official Statistics 17(4), 2001; ARX's `ModelPitman`).
//!
//! The sample's partition into classes is read as a draw from Pitman's two-parameter sampling formula.
//! With `u` classes, `n` records and `c_j` classes of size `j`, the log-likelihood of `(θ, α)` is
//!
//! `L = Σ_{i=1}^{u−1} ln(θ + iα) − Σ_{i=1}^{n−1} ln(θ + i) + Σ_j c_j Σ_{k=1}^{j−1} ln(k − α)`,
//!
//! and the expected number of uniques in a population of `N` records is
//! `Γ(θ + 1) / Γ(θ + α) · N^α` (Hoshino 2001, §3).
//!
//! **Fit.** Both partial derivatives are written with the digamma function, so one evaluation costs
//! `O(distinct class sizes)`:
//! `∂L/∂θ = (ψ(θ/α + u) − ψ(θ/α + 1))/α − (ψ(θ + n) − ψ(θ + 1))` and
//! `∂L/∂α = (u − 1)/α − θ/α² · (ψ(θ/α + u) − ψ(θ/α + 1)) − Σ_j c_j (ψ(j − α) − ψ(1 − α))`.
//! For a fixed `α ∈ (0, 1)` the θ-equation has a root on `(−α, ∞)` whenever `1 < u < n` (the
//! derivative tends to +∞ at `−α` and is negative for large θ); it is bracketed by doubling and found
//! by bisection. The profile's derivative in `α` is `∂L/∂α` at that root (envelope theorem); it tends
//! to −∞ as `α → 1`, and its root is found by bisection on `[ALPHA_MIN, 1 − ALPHA_MIN]`. Each
//! bisection runs at most [`MAX_BISECTIONS`] steps and stops when the bracket is narrower than
//! [`TOLERANCE`] relative to the point. If the profile derivative is not positive at `ALPHA_MIN` the
//! likelihood is largest at `α = 0` (the Ewens case, where the formula does not estimate uniques), and
//! the model does not apply.
//!
//! Not applicable: no records; every record unique (`u = n`: the likelihood grows without bound in θ);
//! a single class; a fit at the boundary; an estimate that is not finite or outside `[0, N]`. With no
//! sample uniques the estimate is 0, as in ARX.

use super::classes::ClassSizes;
use super::special::{digamma, ln_gamma};

/// Smallest `α` the fit considers.
pub const ALPHA_MIN: f64 = 1e-6;
/// Relative width at which a bisection stops.
pub const TOLERANCE: f64 = 1e-12;
/// Most bisection steps per solve.
pub const MAX_BISECTIONS: usize = 200;
/// Largest θ the bracket search tries.
const THETA_MAX: f64 = 1e15;

/// The fitted parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PitmanFit {
    /// θ > −α.
    pub theta: f64,
    /// α ∈ (0, 1).
    pub alpha: f64,
}

struct Sample<'a> {
    classes: &'a [(u64, u64)],
    u: f64,
    n: f64,
}

impl Sample<'_> {
    /// `Σ_{i=1}^{u−1} 1/(θ + iα)`.
    fn class_sum(&self, theta: f64, alpha: f64) -> f64 {
        (digamma(theta / alpha + self.u) - digamma(theta / alpha + 1.0)) / alpha
    }

    fn d_theta(&self, theta: f64, alpha: f64) -> f64 {
        self.class_sum(theta, alpha) - (digamma(theta + self.n) - digamma(theta + 1.0))
    }

    fn d_alpha(&self, theta: f64, alpha: f64) -> f64 {
        let sizes: f64 = self
            .classes
            .iter()
            .filter(|&&(j, _)| j >= 2)
            .map(|&(j, c)| c as f64 * (digamma(j as f64 - alpha) - digamma(1.0 - alpha)))
            .sum();
        (self.u - 1.0) / alpha - theta / alpha * self.class_sum(theta, alpha) - sizes
    }

    /// The root of `∂L/∂θ` for this `α`.
    fn theta_for(&self, alpha: f64) -> Option<f64> {
        let mut lo = -alpha;
        let mut hi = 1.0f64;
        while self.d_theta(hi, alpha) > 0.0 {
            lo = hi;
            hi *= 2.0;
            if hi > THETA_MAX {
                return None;
            }
        }
        for _ in 0..MAX_BISECTIONS {
            let mid = 0.5 * (lo + hi);
            let d = self.d_theta(mid, alpha);
            if !d.is_finite() {
                return None;
            }
            if d > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo <= TOLERANCE * hi.abs().max(1.0) {
                break;
            }
        }
        Some(0.5 * (lo + hi))
    }

    fn profile_slope(&self, alpha: f64) -> Option<f64> {
        let theta = self.theta_for(alpha)?;
        let d = self.d_alpha(theta, alpha);
        d.is_finite().then_some(d)
    }
}

/// Maximum-likelihood fit of Pitman's parameters to the class sizes.
pub fn fit(classes: &ClassSizes) -> Result<PitmanFit, &'static str> {
    let n = classes.records();
    let u = classes.classes();
    if n == 0 {
        return Err("no records");
    }
    if u == n {
        return Err("every record is unique: the likelihood has no maximum");
    }
    if u == 1 {
        return Err("a single class: the likelihood has no maximum");
    }
    let sample = Sample {
        classes: classes.frequencies(),
        u: u as f64,
        n: n as f64,
    };
    let (mut lo, mut hi) = (ALPHA_MIN, 1.0 - ALPHA_MIN);
    match sample.profile_slope(lo) {
        Some(d) if d > 0.0 => {}
        Some(_) => {
            return Err(
                "the likelihood is largest at alpha = 0 or below, where uniques are not estimated",
            )
        }
        None => return Err("the fit did not converge"),
    }
    match sample.profile_slope(hi) {
        Some(d) if d < 0.0 => {}
        _ => return Err("the likelihood is largest at alpha = 1"),
    }
    for _ in 0..MAX_BISECTIONS {
        let mid = 0.5 * (lo + hi);
        match sample.profile_slope(mid) {
            Some(d) if d > 0.0 => lo = mid,
            Some(_) => hi = mid,
            None => return Err("the fit did not converge"),
        }
        if hi - lo <= TOLERANCE {
            break;
        }
    }
    let alpha = 0.5 * (lo + hi);
    let theta = sample.theta_for(alpha).ok_or("the fit did not converge")?;
    Ok(PitmanFit { theta, alpha })
}

/// Pitman's estimate of the number of uniques in a population of `population` records.
pub fn pitman_uniques(classes: &ClassSizes, population: u64) -> Result<f64, &'static str> {
    if classes.records() == 0 {
        return Err("no records");
    }
    if classes.classes_of_size(1) == 0 {
        return Ok(0.0);
    }
    let PitmanFit { theta, alpha } = fit(classes)?;
    let big = population as f64;
    let estimate = (ln_gamma(theta + 1.0) - ln_gamma(theta + alpha) + alpha * big.ln()).exp();
    if estimate.is_finite() && (0.0..=big).contains(&estimate) {
        Ok(estimate)
    } else {
        Err("the estimate is outside [0, population]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sample B of `scripts/risk_reference.py`: 30 uniques, 6 pairs, 2 triples, one class of 4 and one
    /// of 6 (n = 58, u = 40).
    fn sample_b() -> ClassSizes {
        let mut s = vec![1; 30];
        s.extend([2; 6]);
        s.extend([3; 2]);
        s.extend([4, 6]);
        ClassSizes::from_sizes(s)
    }

    /// Expected values from `python3 scripts/risk_reference.py` (mpmath, 50 digits: `findroot` on the
    /// two score equations written as explicit sums, then `Γ(θ+1)/Γ(θ+α)·N^α`):
    /// θ = 29.595019201598312, α = 0.38025398408017396, uniques 113.31181623203188 (N = 1000) and
    /// 271.97512487144431 (N = 10000).
    #[test]
    fn agrees_with_an_independent_fit() {
        let c = sample_b();
        let f = fit(&c).unwrap();
        assert!((f.theta - 29.595_019_201_598_312).abs() < 1e-6, "{f:?}");
        assert!((f.alpha - 0.380_253_984_080_173_96).abs() < 1e-8, "{f:?}");
        let u = pitman_uniques(&c, 1000).unwrap();
        assert!((u - 113.311_816_232_031_88).abs() < 1e-6, "{u}");
        let u = pitman_uniques(&c, 10_000).unwrap();
        assert!((u - 271.975_124_871_444_31).abs() < 1e-5, "{u}");
    }

    /// Sample A of the script (10 uniques, 5 pairs, 3 triples, two classes of 5, one of 10): the
    /// likelihood's maximum has α = −0.263 (θ = 19.02), outside the range where the model estimates
    /// uniques, so it does not apply.
    #[test]
    fn negative_alpha_is_not_applicable() {
        let mut s = vec![1; 10];
        s.extend([2; 5]);
        s.extend([3; 3]);
        s.extend([5, 5, 10]);
        let e = pitman_uniques(&ClassSizes::from_sizes(s), 1000).unwrap_err();
        assert!(e.contains("alpha = 0"), "{e}");
    }

    #[test]
    fn not_applicable_cases() {
        assert!(pitman_uniques(&ClassSizes::from_sizes([]), 10).is_err());
        assert!(pitman_uniques(&ClassSizes::from_sizes([1, 1, 1]), 10).is_err());
        assert!(pitman_uniques(&ClassSizes::from_sizes([1]), 10).is_err());
        assert_eq!(pitman_uniques(&ClassSizes::from_sizes([2, 3]), 10), Ok(0.0));
    }
}
