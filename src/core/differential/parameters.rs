//! The parameters of "safe k-anonymization" (Li, Qardaji & Su 2012, "On sampling, anonymization, and
//! differential privacy or, k-anonymization meets differential privacy", ASIACCS, Theorem 5), as SafePub
//! uses them (Bild, Kuhn & Prasser 2018, "SafePub: A truthful data anonymization algorithm with strong
//! privacy guarantees", PoPETs 2018(1):67–87, §3): drawing every record with probability β and then
//! suppressing every class below k under a generalization chosen independently of the data is
//! (ε, δ)-differentially private when β = 1 − e^(−ε) and
//!
//! δ(k) = max over n ≥ n_m of Σ_{j > ⌊nγ⌋} Binom(j; n, β), with γ = (e^ε − 1 + β) / e^ε and
//! n_m = ⌈k/γ − 1⌉.
//!
//! The maximum is found by walking n upwards until the Chernoff bound
//! c(n) = exp(−n (γ ln(γ/β) − (γ − β))) of every later term falls to the largest term seen. k is then
//! chosen as ARX does: one more than the smallest k whose δ(k) is below the requested δ (a class size
//! with a little margin: δ(k) only falls as k grows).

use crate::core::error::CoreError;
use crate::core::risk::special::ln_gamma;

/// The largest k tried before a δ is declared unreachable.
pub const MAX_K: u64 = 100_000;

/// The sampling probability and class size that give (ε, δ)-differential privacy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SafeParameters {
    /// The probability with which each record is drawn.
    pub sampling_probability: f64,
    /// The smallest published class.
    pub k: u64,
    /// δ(k) of the chosen k (at most the requested δ).
    pub delta_at_k: f64,
}

/// β = 1 − e^(−ε), the sampling probability of the anonymization's ε.
pub fn sampling_probability(epsilon: f64) -> f64 {
    -(-epsilon).exp_m1()
}

/// γ = (e^ε − 1 + β) / e^ε.
fn gamma(epsilon: f64, beta: f64) -> f64 {
    let power = epsilon.exp();
    (power - 1.0 + beta) / power
}

/// The most values of n one computation of k may visit before the parameters are declared out of
/// reach (a very large ε makes the Chernoff bound fall very slowly).
const MAX_WORK: u64 = 5_000_000;

/// `P[Binom(n, β) > ⌊nγ⌋]`, summed from the logarithms of the terms. Above the mean the terms fall at
/// least geometrically, so the sum stops once a term no longer changes it.
fn upper_tail(n: u64, beta: f64, gamma: f64) -> f64 {
    let from = (n as f64 * gamma).floor() as u64 + 1;
    if from > n {
        return 0.0;
    }
    let (ln_b, ln_rest) = (beta.ln(), (-beta).ln_1p());
    let ln_n = ln_gamma(n as f64 + 1.0);
    let mut sum = 0.0;
    for j in from..=n {
        let ln_choose = ln_n - ln_gamma(j as f64 + 1.0) - ln_gamma((n - j) as f64 + 1.0);
        let term = (ln_choose + j as f64 * ln_b + (n - j) as f64 * ln_rest).exp();
        sum += term;
        if term <= sum * 1e-18 {
            break;
        }
    }
    sum
}

/// The terms of δ(k) for every n, computed once and shared by every k tried.
struct Terms {
    beta: f64,
    gamma: f64,
    exponent: f64,
    tails: Vec<f64>,
    work: u64,
}

impl Terms {
    fn new(epsilon: f64, beta: f64) -> Self {
        let gamma = gamma(epsilon, beta);
        Self {
            beta,
            gamma,
            exponent: gamma * (gamma / beta).ln() - (gamma - beta),
            tails: Vec::new(),
            work: 0,
        }
    }

    fn tail(&mut self, n: u64) -> f64 {
        while self.tails.len() as u64 <= n {
            let next = self.tails.len() as u64;
            self.tails.push(upper_tail(next, self.beta, self.gamma));
        }
        self.tails[n as usize]
    }

    /// δ(k), or `None` once the computation has visited [`MAX_WORK`] values of n.
    fn delta(&mut self, k: u64) -> Option<f64> {
        let first = (k as f64 / self.gamma - 1.0).ceil().max(0.0) as u64;
        let mut largest = f64::NEG_INFINITY;
        let mut n = first;
        loop {
            self.work += 1;
            if self.work > MAX_WORK || self.exponent.is_nan() || self.exponent <= 0.0 {
                return None;
            }
            largest = largest.max(self.tail(n));
            let bound = (-(n as f64) * self.exponent).exp();
            if largest >= bound {
                return Some(largest);
            }
            n += 1;
        }
    }
}

/// δ(k) for an anonymization budget `epsilon` and sampling probability `beta` (`None` when out of
/// reach, see [`safe_parameters`]).
pub fn delta_of(k: u64, epsilon: f64, beta: f64) -> Option<f64> {
    Terms::new(epsilon, beta).delta(k)
}

/// The sampling probability and k of an anonymization budget `epsilon` and a δ. Errors when the
/// parameters are out of range or δ needs classes above [`MAX_K`].
pub fn safe_parameters(epsilon: f64, delta: f64) -> Result<SafeParameters, CoreError> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(CoreError::InvalidParameter {
            name: "epsilon",
            problem: "the anonymization's ε must be a positive number".into(),
        });
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(CoreError::InvalidParameter {
            name: "delta",
            problem: "δ must be strictly between 0 and 1".into(),
        });
    }
    let beta = sampling_probability(epsilon);
    let mut terms = Terms::new(epsilon, beta);
    let out_of_reach = || CoreError::InvalidParameter {
        name: "epsilon",
        problem: "ε is too large for the class size to be computed: use a smaller ε".into(),
    };
    for k in 1..=MAX_K {
        if terms.delta(k).ok_or_else(out_of_reach)? < delta {
            let k = k + 1;
            return Ok(SafeParameters {
                sampling_probability: beta,
                k,
                delta_at_k: terms.delta(k).ok_or_else(out_of_reach)?,
            });
        }
    }
    Err(CoreError::InvalidParameter {
        name: "delta",
        problem: format!("δ is so small that classes above {MAX_K} records would be needed"),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// δ(k) from its definition with the binomial terms built by the recurrence
    /// `P(j+1) = P(j) · (n−j)/(j+1) · β/(1−β)` and the maximum taken over a fixed, generous range of n
    /// (no stopping rule): an independent oracle.
    pub(crate) fn delta_by_definition(k: u64, epsilon: f64, beta: f64, up_to: u64) -> f64 {
        let power = epsilon.exp();
        let gamma = (power - 1.0 + beta) / power;
        let first = (k as f64 / gamma - 1.0).ceil().max(0.0) as u64;
        let mut largest: f64 = 0.0;
        for n in first..=up_to {
            let mut p = (1.0 - beta).powi(n as i32);
            let mut tail = 0.0;
            let cut = (n as f64 * gamma).floor() as u64;
            for j in 0..=n {
                if j > cut {
                    tail += p;
                }
                p *= (n - j) as f64 / (j + 1) as f64 * beta / (1.0 - beta);
            }
            largest = largest.max(tail);
        }
        largest
    }

    #[test]
    fn sampling_probability_is_one_minus_e_to_minus_epsilon() {
        assert!((sampling_probability(1.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-15);
        assert!((sampling_probability(0.9) - 0.593_430_340_259_400_9).abs() < 1e-12);
    }

    #[test]
    fn delta_matches_the_definition_summed_independently() {
        for &(epsilon, k) in &[(0.9, 5u64), (0.9, 20), (2.0, 3), (0.5, 30), (1.5, 10)] {
            let beta = sampling_probability(epsilon);
            let fast = delta_of(k, epsilon, beta).expect("δ");
            let slow = delta_by_definition(k, epsilon, beta, 900);
            assert!(
                (fast - slow).abs() <= 1e-9 * slow.max(1e-300),
                "ε {epsilon}, k {k}: {fast} vs {slow}"
            );
        }
    }

    #[test]
    fn delta_falls_as_k_grows() {
        let beta = sampling_probability(1.0);
        let deltas: Vec<f64> = (1..40)
            .map(|k| delta_of(k, 1.0, beta).expect("δ"))
            .collect();
        assert!(deltas.windows(2).all(|w| w[1] <= w[0]), "{deltas:?}");
        assert!(deltas[38] < 1e-3);
    }

    #[test]
    fn k_is_one_above_the_smallest_k_meeting_delta() {
        let p = safe_parameters(0.9, 1e-5).expect("parameters");
        let beta = sampling_probability(0.9);
        assert_eq!(p.sampling_probability, beta);
        let delta = |k| delta_of(k, 0.9, beta).expect("δ");
        assert!(delta(p.k - 1) < 1e-5);
        assert!(delta(p.k - 2) >= 1e-5);
        assert!(p.delta_at_k <= delta(p.k - 1));
        // a larger δ needs smaller classes; a larger ε samples more records, so it needs larger ones
        assert!(safe_parameters(0.9, 1e-3).expect("parameters").k < p.k);
        assert!(safe_parameters(2.0, 1e-5).expect("parameters").k > p.k);
        // the same figures from a separate script of the definition (ε 0.9: 59, ε 2: 114)
        assert_eq!(p.k, 59);
        assert_eq!(safe_parameters(2.0, 1e-5).expect("parameters").k, 114);
    }

    #[test]
    fn refuses_parameters_out_of_range() {
        assert!(safe_parameters(0.0, 1e-5).is_err());
        assert!(safe_parameters(f64::NAN, 1e-5).is_err());
        assert!(safe_parameters(1.0, 0.0).is_err());
        assert!(safe_parameters(1.0, 1.0).is_err());
        // a huge ε: the bound falls too slowly to finish, so the work cap refuses it (β and γ are
        // still below 1 at ε 6, so the cap is what stops it)
        assert!(sampling_probability(6.0) < 1.0);
        assert!(safe_parameters(6.0, 1e-12).is_err());
        // β rounds to 1 at ε 40: refused as well
        assert!(safe_parameters(40.0, 1e-5).is_err());
    }
}
