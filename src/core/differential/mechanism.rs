//! The exponential mechanism (McSherry & Talwar 2007, "Mechanism design via differential privacy",
//! FOCS): a candidate is drawn with probability proportional to exp(ε · score / 2), where the scores
//! are already divided by their sensitivity, so the draw is ε-differentially private. SafePub selects
//! its pivots this way (Bild, Kuhn & Prasser 2018, §4.3).
//!
//! The weights are shifted by the largest exponent before exponentiation, which leaves the distribution
//! unchanged and keeps every weight in (0, 1]. The uniform number comes from the caller's secret stream.

use crate::core::secret_rng::SecretStream;

/// A uniform number in [0, 1) with 53 random bits.
pub fn uniform(stream: &mut SecretStream) -> f64 {
    (stream.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The probability of each candidate under the mechanism with budget `epsilon`.
pub fn probabilities(scores: &[f64], epsilon: f64) -> Vec<f64> {
    let exponents: Vec<f64> = scores.iter().map(|s| 0.5 * epsilon * s).collect();
    let shift = exponents.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = exponents.iter().map(|e| (e - shift).exp()).collect();
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

/// Draws the index of one candidate (`scores` must not be empty; 0 when it is).
pub fn select(scores: &[f64], epsilon: f64, stream: &mut SecretStream) -> usize {
    debug_assert!(!scores.is_empty(), "a draw needs candidates");
    let probabilities = probabilities(scores, epsilon);
    let mut point = uniform(stream);
    for (i, p) in probabilities.iter().enumerate() {
        if point < *p {
            return i;
        }
        point -= p;
    }
    // rounding left the point past the last weight: the last candidate
    scores.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::secret_rng::SecretKey;

    #[test]
    fn probabilities_follow_the_exponentials_of_the_scores() {
        let p = probabilities(&[0.0, 2.0, 4.0], 1.0);
        let e = std::f64::consts::E;
        let total = 1.0 + e + e * e;
        assert!((p[0] - 1.0 / total).abs() < 1e-12);
        assert!((p[2] - e * e / total).abs() < 1e-12);
        // shifting every score changes nothing; huge scores do not overflow
        let q = probabilities(&[1e6, 1e6 + 2.0, 1e6 + 4.0], 1.0);
        assert!(p.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    #[test]
    fn uniform_numbers_stay_in_the_unit_interval() {
        let mut s = SecretStream::new(&SecretKey::from_u64(3), 0);
        let draws: Vec<f64> = (0..10_000).map(|_| uniform(&mut s)).collect();
        assert!(draws.iter().all(|&u| (0.0..1.0).contains(&u)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }

    #[test]
    fn selection_frequencies_match_the_probabilities() {
        let scores = [-3.0, 0.0, 1.0, 1.5];
        let epsilon = 1.2;
        let expected = probabilities(&scores, epsilon);
        let mut s = SecretStream::new(&SecretKey::from_u64(5), 0);
        let draws = 40_000;
        let mut counts = [0u32; 4];
        for _ in 0..draws {
            counts[select(&scores, epsilon, &mut s)] += 1;
        }
        // each count is binomial: 5 standard deviations either side
        for (c, p) in counts.iter().zip(&expected) {
            let mean = p * draws as f64;
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (*c as f64 - mean).abs() <= 5.0 * sd,
                "{counts:?} vs {expected:?}"
            );
        }
    }
}
