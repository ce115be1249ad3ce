//! δ-disclosure privacy and β-likeness of a published class, recomputed from value texts for
//! verification (Brickell & Shmatikov 2008; Cao & Karras 2012; ARX's conventions: only the values the
//! class holds are checked, δ in bits). The β bound is compared exactly as a fraction; the logarithmic
//! bounds in floating point with the engine's documented [`LOG_TOLERANCE`].

use std::collections::HashMap;

use crate::core::privacy::{Decimal, LOG_TOLERANCE};

/// Frequencies `(class, table)` of every value the class holds, as `(n, s, N_v, N)`.
fn frequencies<'a>(
    values: &'a HashMap<&str, u64>,
    global: &'a HashMap<String, u64>,
) -> impl Iterator<Item = (u64, u64, u64, u64)> + 'a {
    let size: u64 = values.values().sum();
    let total: u64 = global.values().sum();
    values.iter().map(move |(value, &n)| {
        let table_count = global.get(*value).copied().unwrap_or(0);
        (n, size, table_count, total)
    })
}

/// Whether `|log₂(p/q)| < δ` for every value the class holds.
pub(crate) fn is_delta_disclosure_private(
    values: &HashMap<&str, u64>,
    global: &HashMap<String, u64>,
    delta: f64,
) -> bool {
    frequencies(values, global).all(|(n, s, big_n, total)| {
        if big_n == 0 {
            return false;
        }
        // ln(p/q) = ln(n·N) − ln(N_v·s)
        let bits = ((n as f64 * total as f64).ln() - (big_n as f64 * s as f64).ln())
            / std::f64::consts::LN_2;
        bits.abs() < delta - LOG_TOLERANCE
    })
}

/// Whether `(p − q)/q ≤ β` (and `≤ −ln q` when enhanced) for every value the class holds.
pub(crate) fn is_beta_like(
    values: &HashMap<&str, u64>,
    global: &HashMap<String, u64>,
    beta: Decimal,
    enhanced: bool,
) -> bool {
    let (num, den) = beta.as_fraction();
    frequencies(values, global).all(|(n, s, big_n, total)| {
        if big_n == 0 {
            return false;
        }
        // p/q − 1 ≤ num/den  ⇔  den·n·N ≤ (num + den)·N_v·s, in 256-bit-safe u128 pieces
        let gain_ok = {
            let left = primitive_product(&[den, u128::from(n), u128::from(total)]);
            let right = primitive_product(&[num + den, u128::from(big_n), u128::from(s)]);
            match (left, right) {
                (Some(l), Some(r)) => l <= r,
                (None, Some(_)) => false,
                (_, None) => {
                    (den as f64) * (n as f64) * (total as f64)
                        <= ((num + den) as f64) * (big_n as f64) * (s as f64)
                }
            }
        };
        if !gain_ok {
            return false;
        }
        if !enhanced {
            return true;
        }
        let q = big_n as f64 / total as f64;
        let gain = (n as f64 * total as f64 - big_n as f64 * s as f64) / (big_n as f64 * s as f64);
        gain <= -q.ln() + LOG_TOLERANCE
    })
}

/// The product of `factors`, or `None` when it overflows 128 bits.
fn primitive_product(factors: &[u128]) -> Option<u128> {
    factors.iter().try_fold(1u128, |acc, &f| acc.checked_mul(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> HashMap<String, u64> {
        [("HD", 3), ("VI", 4), ("C", 5)]
            .into_iter()
            .map(|(v, n)| (v.to_string(), n))
            .collect()
    }

    /// The values of Table 2.1-2 (note §6.1), as the engine's tests state them.
    #[test]
    fn agrees_with_hand_computed_bounds() {
        let block: HashMap<&str, u64> = [("HD", 2), ("VI", 2)].into();
        assert!(!is_delta_disclosure_private(&block, &table(), 1.0));
        assert!(is_delta_disclosure_private(&block, &table(), 1.01));
        let beta = |b: f64| Decimal::from_f64(b).unwrap();
        assert!(is_beta_like(&block, &table(), beta(1.0), false));
        assert!(!is_beta_like(&block, &table(), beta(0.999), false));
        let cancer: HashMap<&str, u64> = [("C", 4)].into();
        assert!(is_beta_like(&cancer, &table(), beta(1.4), false));
        assert!(!is_beta_like(&cancer, &table(), beta(1.4), true));
    }
}
