//! Models bounding how far a class's sensitive frequencies may move from the table's, value by value:
//! δ-disclosure privacy (Brickell & Shmatikov, "The Cost of Privacy", KDD 2008) and basic and enhanced
//! β-likeness (Cao & Karras, "Publishing Microdata with a Robust Privacy Guarantee", VLDB 2012), with the
//! conventions of ARX, the reference implementation (its `DDisclosurePrivacy`, `BasicBLikeness` and
//! `EnhancedBLikeness` criteria): only the values present in the class are checked, δ is measured in bits.
//!
//! With `p` the value's frequency in the class and `q` its frequency in the whole table:
//! - δ-disclosure: `|log₂(p / q)| < δ` (strict);
//! - basic β-likeness: `(p − q) / q ≤ β`, i.e. `n·N ≤ (1 + β)·N_v·s` in integers, exact;
//! - enhanced β-likeness: `(p − q) / q ≤ min(β, −ln q)`; the `β` side is exact, the `−ln q` side is
//!   compared in floating point with [`LOG_TOLERANCE`].
//!
//! Monotonicity: β-likeness bounds a frequency from above, and a merged class's frequency is the
//! size-weighted mean of its parts' frequencies (absent values count 0), so merging passing classes
//! passes. δ-disclosure also bounds frequencies from below for the values a class holds; a value that is
//! rare in one part becomes present, and rare, in the merge, so it is not merge-monotone (ARX also treats
//! it as non-monotone). With suppression none of them is monotone: a passing class merged with a failing
//! one can fail.

use super::{ClassView, Decimal, PrivacyModel};

/// Absolute tolerance of the logarithmic comparisons: δ-disclosure fails a value within this distance
/// of δ (the bound is strict), enhanced β-likeness passes a gain within it of `−ln q`.
pub const LOG_TOLERANCE: f64 = 1e-9;

/// A sensitive attribute's distribution over the whole table.
#[derive(Debug, Clone)]
pub struct TableDistribution {
    counts: Vec<u64>,
    total: u64,
}

impl TableDistribution {
    /// The distribution with records per value code `counts`.
    pub fn new(counts: Vec<u64>) -> Self {
        let total = counts.iter().sum();
        Self { counts, total }
    }

    /// Records of value `code` and records in the table.
    fn count(&self, code: u32) -> (u64, u64) {
        (
            self.counts.get(code as usize).copied().unwrap_or(0),
            self.total,
        )
    }
}

/// δ-disclosure privacy of one sensitive attribute.
#[derive(Debug, Clone)]
pub struct DeltaDisclosure {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// The attribute's name (for descriptions).
    pub attribute: String,
    /// The bound δ, in bits.
    pub delta: f64,
    /// The table distribution.
    pub table: TableDistribution,
}

impl PrivacyModel for DeltaDisclosure {
    fn describe(&self) -> String {
        format!("{}-disclosure privacy on '{}'", self.delta, self.attribute)
    }

    fn min_class_size(&self) -> u64 {
        1
    }

    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }

    fn is_monotone_with_suppression(&self) -> bool {
        false
    }

    fn is_monotone_without_suppression(&self) -> bool {
        false
    }

    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let size = class.size() as f64;
        class.histogram(self.slot).iter().all(|&(code, n)| {
            let (big_n, total) = self.table.count(code);
            let ratio = (f64::from(n) / size) / (big_n as f64 / total as f64);
            ratio.log2().abs() < self.delta - LOG_TOLERANCE
        })
    }
}

/// Which β-likeness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Likeness {
    /// Relative gain at most β.
    Basic,
    /// Relative gain at most `min(β, −ln q)`.
    Enhanced,
}

/// β-likeness of one sensitive attribute.
#[derive(Debug, Clone)]
pub struct BetaLikeness {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// The attribute's name (for descriptions).
    pub attribute: String,
    /// The bound β on the relative gain of a value's frequency.
    pub beta: Decimal,
    /// Basic or enhanced.
    pub variant: Likeness,
    /// The table distribution.
    pub table: TableDistribution,
}

impl BetaLikeness {
    /// Whether a value with `n` of the class's `size` records passes.
    fn value_passes(&self, code: u32, n: u64, size: u64) -> bool {
        let (big_n, total) = self.table.count(code);
        if big_n == 0 {
            return false;
        }
        // (p − q)/q ≤ β  ⇔  n·N·den ≤ (den + num)·N_v·s
        let (num, den) = self.beta.as_fraction();
        let left = u128::from(n) * u128::from(total);
        let right = u128::from(big_n) * u128::from(size);
        let within_beta = match (left.checked_mul(den), right.checked_mul(den + num)) {
            (Some(l), Some(r)) => l <= r,
            _ => (left as f64) * (den as f64) <= (right as f64) * ((den + num) as f64),
        };
        match self.variant {
            Likeness::Basic => within_beta,
            Likeness::Enhanced => {
                let q = big_n as f64 / total as f64;
                let gain = (n as f64 / size as f64 - q) / q;
                within_beta && gain <= -q.ln() + LOG_TOLERANCE
            }
        }
    }
}

impl PrivacyModel for BetaLikeness {
    fn describe(&self) -> String {
        let variant = match self.variant {
            Likeness::Basic => "basic",
            Likeness::Enhanced => "enhanced",
        };
        format!("{variant}-{}-likeness on '{}'", self.beta, self.attribute)
    }

    fn min_class_size(&self) -> u64 {
        1
    }

    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }

    fn is_monotone_with_suppression(&self) -> bool {
        false
    }

    fn is_monotone_without_suppression(&self) -> bool {
        true
    }

    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let size = class.size();
        class
            .histogram(self.slot)
            .iter()
            .all(|&(code, n)| self.value_passes(code, u64::from(n), size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::FrequencySet;

    fn passes(model: &dyn PrivacyModel, counts: &[u32]) -> bool {
        let histogram: Vec<(u32, u32)> = counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(code, &n)| (code as u32, n))
            .collect();
        let set = FrequencySet::single_class_for_tests(0, histogram);
        model.is_class_private(&ClassView::new(&set, 0))
    }

    /// Table 2.1-1's conditions (note §6.1): HD 3, VI 4, C 5 of 12.
    fn table() -> TableDistribution {
        TableDistribution::new(vec![3, 4, 5])
    }

    fn delta(d: f64) -> DeltaDisclosure {
        DeltaDisclosure {
            slot: 0,
            attribute: "condition".into(),
            delta: d,
            table: table(),
        }
    }

    fn beta(b: f64, variant: Likeness) -> BetaLikeness {
        BetaLikeness {
            slot: 0,
            attribute: "condition".into(),
            beta: Decimal::from_f64(b).unwrap(),
            variant,
            table: table(),
        }
    }

    #[test]
    fn delta_disclosure_on_table_2_1_2() {
        // block 1–4 {HD 2, VI 2}: HD 1/2 vs 1/4 → log₂ 2 = 1; VI 1/2 vs 1/3 → log₂ 1.5 = 0.585
        assert!(!passes(&delta(1.0), &[2, 2, 0]), "1 < 1 is false");
        assert!(passes(&delta(1.01), &[2, 2, 0]));
        // block 9–12 {C 4}: 1 vs 5/12 → log₂ 2.4 = 1.263; absent values are not checked
        assert!(!passes(&delta(1.26), &[0, 0, 4]));
        assert!(passes(&delta(1.27), &[0, 0, 4]));
        // block 5–8 {VI 2, HD 1, C 1}: HD 1/4 vs 1/4 → 0; VI 1/2 vs 1/3 → 0.585; C 1/4 vs 5/12 → −0.737
        assert!(passes(&delta(0.74), &[1, 2, 1]));
        assert!(!passes(&delta(0.73), &[1, 2, 1]));
        assert_eq!(delta(1.0).describe(), "1-disclosure privacy on 'condition'");
    }

    #[test]
    fn basic_likeness_is_exact_at_the_boundary() {
        // block 1–4: HD gains (1/2 − 1/4)/(1/4) = 1 exactly; VI gains 1/2
        assert!(passes(&beta(1.0, Likeness::Basic), &[2, 2, 0]));
        assert!(!passes(&beta(0.999_999_999, Likeness::Basic), &[2, 2, 0]));
        // block 9–12: C gains (1 − 5/12)/(5/12) = 7/5
        assert!(passes(&beta(1.4, Likeness::Basic), &[0, 0, 4]));
        assert!(!passes(&beta(1.39, Likeness::Basic), &[0, 0, 4]));
        // losses never fail: block 5–8 only gains on VI, by 1/2
        assert!(passes(&beta(0.5, Likeness::Basic), &[1, 2, 1]));
    }

    #[test]
    fn enhanced_likeness_caps_beta_by_the_log_frequency() {
        // C: −ln(5/12) = 0.875 < 7/5, so enhanced fails where basic with β = 1.4 passes
        assert!(!passes(&beta(1.4, Likeness::Enhanced), &[0, 0, 4]));
        // VI: gain 1/2 ≤ min(0.6, −ln(1/3) = 1.0986); HD is equal to the table
        assert!(passes(&beta(0.6, Likeness::Enhanced), &[1, 2, 1]));
        // HD in block 1–4 gains 1 ≤ −ln(1/4) = 1.386: the β side decides
        assert!(passes(&beta(1.0, Likeness::Enhanced), &[2, 2, 0]));
        assert!(!passes(&beta(0.99, Likeness::Enhanced), &[2, 2, 0]));
        assert_eq!(
            beta(0.5, Likeness::Enhanced).describe(),
            "enhanced-0.5-likeness on 'condition'"
        );
    }
}
