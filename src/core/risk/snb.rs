//! The shifted negative binomial (SNB) model of population uniques (Chen & McNulty, "Estimation of
//! the number of low frequency cells in the population", Proc. Survey Research Methods Section, ASA,
//! 1998; used in Dankar et al., "Estimating the re-identification risk of clinical data sets", BMC
//! Medical Informatics and Decision Making 12:66, 2012; ARX's `ModelSNB`).
//!
//! Population class sizes are `1 + Y` with `Y ~ NegBin(α, β)`, `P(Y = y) = C(y + α − 1, y)·β^α·(1 − β)^y`,
//! over `K` non-empty population classes, and the sample takes each record with probability `f`.
//! With `d = (1 − f)(1 − β)` the expected numbers of sample classes of size 1 and 2 are
//!
//! - `E[c_1] = K·f·(β / (1 − d))^α·(1 + α·d / (1 − d))`,
//! - `E[c_2] = K·f²/2·α·(1 − β)·β^α·(1 − d)^(−α−2)·(2 − (1 − α)·d)`,
//!
//! (derived from the probability generating function `E[r^Y] = (β / (1 − (1 − β)·r))^α`; ARX writes the
//! factor `(1 − d)^(α+2)` of the second equation as a product rather than a quotient, we follow the
//! derivation). `α` and `β` solve `E[c_1] = c_1`, `E[c_2] = c_2`; the population uniques are `K·β^α`.
//!
//! `K` is estimated from the sample with the refinement of Shlosser's estimator that ARX uses (Haas,
//! Naughton, Seshadri & Stokes, VLDB 1995); we write its second sum as `Σ (1 − f)^i((1 + f)^i − 1)·c_i`,
//! where ARX's code subtracts the 1 once per class size instead:
//! `K = u + c_1·(Σ_i i·f²(1 − f²)^(i−1)·c_i / Σ_i (1 − f)^i((1 + f)^i − 1)·c_i)·(Σ_i (1 − f)^i·c_i / Σ_i i·f(1 − f)^(i−1)·c_i)²`.
//!
//! **Solver.** Newton's method on the logarithms of both equations, in the unconstrained variables
//! `(ln α, logit β)`, with a central-difference Jacobian and step halving until the residual shrinks.
//! At most [`MAX_ITERATIONS`] steps from each of a few starting points (α ∈ {1, 0.1, 10}, β from the
//! mean class size `N/K = 1 + α(1 − β)/β`); converged when both log-residuals are below
//! [`TOLERANCE`].
//!
//! Not applicable: no records, sampling fraction 1, no classes of size 2 (the parameters are not
//! identified), no convergence, an estimate that is not finite or outside `[0, N]`. No sample
//! uniques give 0, as in ARX.

use super::classes::ClassSizes;

/// Largest absolute log-residual accepted as a solution.
pub const TOLERANCE: f64 = 1e-10;
/// Most Newton steps from one starting point.
pub const MAX_ITERATIONS: usize = 200;

/// Haas et al.'s refinement of Shlosser's estimate of the number of non-empty population classes.
pub fn population_classes(classes: &ClassSizes, f: f64) -> f64 {
    let (mut s1, mut s2, mut s3, mut s4) = (0.0, 0.0, 0.0, 0.0);
    for &(i, c) in classes.frequencies() {
        let (i, c) = (i as f64, c as f64);
        s1 += i * f * f * (1.0 - f * f).powf(i - 1.0) * c;
        s2 += (1.0 - f).powf(i) * ((1.0 + f).powf(i) - 1.0) * c;
        s3 += (1.0 - f).powf(i) * c;
        s4 += i * f * (1.0 - f).powf(i - 1.0) * c;
    }
    let c1 = classes.classes_of_size(1) as f64;
    classes.classes() as f64 + c1 * (s1 / s2) * (s3 / s4) * (s3 / s4)
}

struct Equations {
    k: f64,
    f: f64,
    ln_c1: f64,
    ln_c2: f64,
}

impl Equations {
    /// Log-residuals at `x = ln α`, `y = logit β`.
    fn residuals(&self, x: f64, y: f64) -> [f64; 2] {
        let a = x.exp();
        let b = 1.0 / (1.0 + (-y).exp());
        let (k, f) = (self.k, self.f);
        let d = (1.0 - f) * (1.0 - b);
        let e1 = k.ln() + f.ln() + a * (b.ln() - (1.0 - d).ln()) + (1.0 + a * d / (1.0 - d)).ln();
        let e2 = k.ln() + 2.0 * f.ln() - 2f64.ln() + a.ln() + (1.0 - b).ln() + a * b.ln()
            - (a + 2.0) * (1.0 - d).ln()
            + (2.0 - (1.0 - a) * d).ln();
        [e1 - self.ln_c1, e2 - self.ln_c2]
    }

    fn norm(r: [f64; 2]) -> f64 {
        if r[0].is_finite() && r[1].is_finite() {
            r[0].abs().max(r[1].abs())
        } else {
            f64::INFINITY
        }
    }

    /// Newton from `(x, y)`; the solution `(α, β)` when converged.
    fn solve(&self, mut x: f64, mut y: f64) -> Option<(f64, f64)> {
        let mut r = self.residuals(x, y);
        for _ in 0..MAX_ITERATIONS {
            if Self::norm(r) < TOLERANCE {
                return Some((x.exp(), 1.0 / (1.0 + (-y).exp())));
            }
            let h = 1e-6;
            let rx = self.residuals(x + h, y);
            let lx = self.residuals(x - h, y);
            let ry = self.residuals(x, y + h);
            let ly = self.residuals(x, y - h);
            let j = [
                [(rx[0] - lx[0]) / (2.0 * h), (ry[0] - ly[0]) / (2.0 * h)],
                [(rx[1] - lx[1]) / (2.0 * h), (ry[1] - ly[1]) / (2.0 * h)],
            ];
            let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
            if !det.is_finite() || det == 0.0 {
                return None;
            }
            let dx = (j[1][1] * r[0] - j[0][1] * r[1]) / det;
            let dy = (j[0][0] * r[1] - j[1][0] * r[0]) / det;
            let mut step = 1.0;
            let before = Self::norm(r);
            loop {
                let (nx, ny) = (x - step * dx, y - step * dy);
                let nr = self.residuals(nx, ny);
                if Self::norm(nr) < before {
                    (x, y, r) = (nx, ny, nr);
                    break;
                }
                step *= 0.5;
                if step < 1e-10 {
                    return None;
                }
            }
        }
        (Self::norm(r) < TOLERANCE).then(|| (x.exp(), 1.0 / (1.0 + (-y).exp())))
    }
}

/// The SNB estimate of the number of uniques in a population of `population` records.
pub fn snb_uniques(classes: &ClassSizes, population: u64) -> Result<f64, &'static str> {
    let n = classes.records();
    if n == 0 {
        return Err("no records");
    }
    if population < n {
        return Err("the population is smaller than the sample");
    }
    let c1 = classes.classes_of_size(1);
    if c1 == 0 {
        return Ok(0.0);
    }
    if population == n {
        return Err("the sampling fraction is 1");
    }
    let c2 = classes.classes_of_size(2);
    if c2 == 0 {
        return Err("no classes of size 2: the model's parameters are not identified");
    }
    let big = population as f64;
    let f = n as f64 / big;
    let k = population_classes(classes, f);
    if !(k.is_finite() && k > 0.0) {
        return Err("the number of population classes could not be estimated");
    }
    let equations = Equations {
        k,
        f,
        ln_c1: (c1 as f64).ln(),
        ln_c2: (c2 as f64).ln(),
    };
    let mean = (big / k).max(1.0 + 1e-9);
    for a in [1.0f64, 0.1, 10.0] {
        // mean population class size N/K = 1 + α(1 − β)/β  ⇒  β = α / (α + N/K − 1)
        let b = (a / (a + mean - 1.0)).clamp(1e-9, 1.0 - 1e-9);
        if let Some((alpha, beta)) = equations.solve(a.ln(), (b / (1.0 - b)).ln()) {
            let estimate = k * beta.powf(alpha);
            return if estimate.is_finite() && (0.0..=big).contains(&estimate) {
                Ok(estimate)
            } else {
                Err("the estimate is outside [0, population]")
            };
        }
    }
    Err("the fit did not converge")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_b() -> ClassSizes {
        let mut s = vec![1; 30];
        s.extend([2; 6]);
        s.extend([3; 2]);
        s.extend([4, 6]);
        ClassSizes::from_sizes(s)
    }

    /// Expected values from `python3 scripts/risk_reference.py` (mpmath, 50 digits: the estimator of K
    /// and both moment equations written out, solved with `findroot`), sample B (n = 58):
    /// N = 100: K = 59.211526774908841, α = 0.33397978723825073, β = 0.33315118667770701, uniques
    /// 41.018344101827818; N = 1000: K = 297.92785941037401, uniques 221.25732926637391.
    #[test]
    fn agrees_with_an_independent_fit() {
        let c = sample_b();
        assert!((population_classes(&c, 0.58) - 59.211_526_774_908_84).abs() < 1e-9);
        let u = snb_uniques(&c, 100).unwrap();
        assert!((u - 41.018_344_101_827_818).abs() < 1e-6, "{u}");
        assert!((population_classes(&c, 0.058) - 297.927_859_410_374).abs() < 1e-8);
        let u = snb_uniques(&c, 1000).unwrap();
        assert!((u - 221.257_329_266_373_91).abs() < 1e-5, "{u}");
    }

    #[test]
    fn not_applicable_cases() {
        let c = sample_b();
        assert!(snb_uniques(&c, 58).is_err());
        assert!(snb_uniques(&c, 57).is_err());
        assert!(snb_uniques(&ClassSizes::from_sizes([1, 1, 3]), 100).is_err());
        assert_eq!(snb_uniques(&ClassSizes::from_sizes([2, 3]), 100), Ok(0.0));
        assert!(snb_uniques(&ClassSizes::from_sizes([]), 100).is_err());
    }
}
