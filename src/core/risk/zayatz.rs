//! Zayatz's estimate of population uniques (Zayatz, "Estimation of the number of unique population
//! elements using a sample", Proc. Survey Research Methods Section, ASA, 1991; as ARX's `ModelZayatz`
//! uses it).
//!
//! The population's class sizes are assumed to be distributed like the sample's: a share `c_j / u` of
//! the classes has `j` records. A population class of `j` records shows up as a sample unique with the
//! hypergeometric probability `P_j = P(X = 1 | population N, j marked, n drawn)`, so by Bayes the chance
//! that a sample unique is a population unique is `c_1·P_1 / Σ_j c_j·P_j`, and the estimate of the
//! population uniques is `c_1 · that chance / f` with the sampling fraction `f = n / N`.
//!
//! `P_j = j·C(N − j, n − 1) / C(N, n) = (j·n / N) · Π_{i=1}^{j−1} (N − n − i + 1) / (N − i)`, summed in
//! logarithms; the product is empty for `j = 1` and zero once `N − n − i + 1 ≤ 0`. The work is at most
//! `Σ_j j ≤ n` factors over the distinct sizes, so `O(n)`.
//!
//! At `N = n` every `P_j` with `j ≥ 2` is 0, the chance is 1 and the estimate is exactly `c_1`: the
//! sample uniques.

use super::classes::ClassSizes;

/// Hypergeometric probability of exactly one marked record in a draw of `n` from `population`
/// records of which `marked` are marked.
pub fn one_marked(population: u64, marked: u64, n: u64) -> f64 {
    if marked == 0 || n == 0 || marked > population || n > population {
        return 0.0;
    }
    let big = population as f64;
    let mut log = (marked as f64).ln() + (n as f64).ln() - big.ln();
    for i in 1..marked {
        // (N − n − i + 1) / (N − i)
        let numerator = population - n + 1;
        if numerator <= i {
            return 0.0;
        }
        log += ((numerator - i) as f64).ln() - ((population - i) as f64).ln();
    }
    log.exp()
}

/// Zayatz's estimate of the number of population uniques; `Err` says why it does not apply.
pub fn zayatz_uniques(classes: &ClassSizes, population: u64) -> Result<f64, &'static str> {
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
    let p1 = one_marked(population, 1, n);
    let total: f64 = classes
        .frequencies()
        .iter()
        .map(|&(j, c)| c as f64 * one_marked(population, j, n))
        .sum();
    if total.is_nan() || total <= 0.0 {
        return Err("no class could have produced a sample unique");
    }
    let chance = c1 as f64 * p1 / total;
    let estimate = c1 as f64 * chance * population as f64 / n as f64;
    if estimate.is_finite() && estimate >= 0.0 {
        Ok(estimate.min(population as f64))
    } else {
        Err("the estimate is not a finite number")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypergeometric_by_hand() {
        // N = 10, 2 marked, 3 drawn: 2·C(8,2)/C(10,3) = 2·28/120
        assert!((one_marked(10, 2, 3) - 56.0 / 120.0).abs() < 1e-15);
        // N = 10, 1 marked, 3 drawn: 3/10
        assert!((one_marked(10, 1, 3) - 0.3).abs() < 1e-15);
        // N = n: one marked of size ≥ 2 can never be drawn alone
        assert_eq!(one_marked(5, 2, 5), 0.0);
        assert_eq!(one_marked(5, 0, 5), 0.0);
    }

    /// Sizes {1, 1, 2, 4} (n = 8) in a population of 16: P_1 = 1/2, P_2 = 2·8·8/(16·15) = 8/15,
    /// P_4 = 4·C(12,7)/C(16,8) = 4·792/12870; chance = 2·(1/2) / (2·(1/2) + 8/15 + 3168/12870), estimate
    /// = 2·chance·2.
    #[test]
    fn hand_computed_estimate() {
        let c = ClassSizes::from_sizes([1, 1, 2, 4]);
        let p4 = 4.0 * 792.0 / 12870.0;
        let chance = 1.0 / (1.0 + 8.0 / 15.0 + p4);
        let expected = 2.0 * chance * 2.0;
        let got = zayatz_uniques(&c, 16).unwrap();
        assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
    }

    #[test]
    fn whole_population_gives_sample_uniques() {
        let c = ClassSizes::from_sizes([1, 1, 2, 4]);
        assert!((zayatz_uniques(&c, 8).unwrap() - 2.0).abs() < 1e-12);
        // a nearly complete sample is close to it
        let near = zayatz_uniques(&c, 9).unwrap();
        assert!((near - 2.0).abs() < 0.5, "{near}");
        assert_eq!(
            zayatz_uniques(&ClassSizes::from_sizes([2, 3]), 100),
            Ok(0.0)
        );
        assert!(zayatz_uniques(&ClassSizes::from_sizes([]), 100).is_err());
        assert!(zayatz_uniques(&c, 7).is_err());
    }
}
