//! l-diversity (Machanavajjhala et al., "l-Diversity: Privacy Beyond k-Anonymity", TKDD 2007), in the
//! three variants Hsu (2008, §3.3, Defs 3.3.1–3.3.3) restates; see
//! `notes/hsu-2008-sensitive-attribute-protection.md` §2.3 and §2.7.
//!
//! Every variant reads the class's histogram of one sensitive attribute:
//! - distinct l-diversity: at least `l` distinct sensitive values;
//! - entropy l-diversity: `−Σ p·ln p ≥ ln l`, with a documented tolerance so that exact equality (for
//!   example `l` equally frequent values) passes despite floating-point rounding;
//! - recursive (c,l)-diversity: with the counts sorted in descending order `r_1 ≥ … ≥ r_m`,
//!   `r_1 < c·(r_l + … + r_m)` (strict), computed exactly with integers and `c` as a decimal fraction.
//!
//! Monotonicity (note §2.7): all three are merge-monotone, so without suppression a generalization of a
//! solution is a solution. With suppression the question is whether the records in failing classes can
//! grow when classes merge. For distinct l-diversity they cannot: a merge that involves a passing class
//! contains its `l` values and passes, and a merge of failing classes keeps the same records failing. For
//! the entropy and recursive variants they can: a passing `{x, y}` merged with a failing `{x × 6}` fails
//! (entropy below ln 2; `7 < c·1` fails for c = 3), so those two report no monotonicity with suppression.

use super::{grassberger, ClassView, PrivacyModel};

/// Absolute tolerance (in nats) of the entropy comparison: a class passes entropy l-diversity when its
/// entropy is at least `ln l − ENTROPY_TOLERANCE`. The rounding error of the computation is around 1e-15
/// for the class sizes the engine handles, so equality (for example `l` equally frequent values, whose
/// entropy is exactly `ln l`) never flips; a class whose true entropy is below `ln l` by less than this
/// tolerance would be accepted, which needs classes of millions of records.
pub const ENTROPY_TOLERANCE: f64 = 1e-9;

/// A non-negative decimal number as an exact fraction `numerator / 10^scale`, for comparing integer
/// counts against a decimal parameter without rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    numerator: u128,
    denominator: u128,
}

/// Most fractional digits kept by [`Decimal::from_f64`]; further digits are dropped.
const MAX_SCALE: usize = 18;
/// Largest integer part kept by [`Decimal::from_f64`]; larger values are capped.
const MAX_INTEGER: u128 = 1_000_000_000_000_000_000;

impl Decimal {
    /// The decimal the JSON number most likely was: the shortest decimal text that round-trips to `value`
    /// (so `1.1` is exactly 11/10, not the binary double next to it). Digits beyond the 18th after the
    /// point are dropped and integer parts above 10^18 are capped at 10^18; both can only make a
    /// comparison `count < c·tail` stricter, and neither matters for record counts. Returns `None` for
    /// negative, infinite or NaN values.
    pub fn from_f64(value: f64) -> Option<Self> {
        if !value.is_finite() || value < 0.0 {
            return None;
        }
        // `{}` prints the shortest round-trip representation without an exponent.
        let text = format!("{value}");
        let (integer, fraction) = match text.split_once('.') {
            Some((i, f)) => (i, f),
            None => (text.as_str(), ""),
        };
        let fraction = &fraction[..fraction.len().min(MAX_SCALE)];
        let mut integer_value: u128 = 0;
        for b in integer.bytes() {
            integer_value = integer_value
                .saturating_mul(10)
                .saturating_add(u128::from(b.checked_sub(b'0')?));
            if integer_value > MAX_INTEGER {
                return Some(Self {
                    numerator: MAX_INTEGER,
                    denominator: 1,
                });
            }
        }
        let mut numerator = integer_value;
        let mut denominator: u128 = 1;
        for b in fraction.bytes() {
            numerator = numerator * 10 + u128::from(b.checked_sub(b'0')?);
            denominator *= 10;
        }
        Some(Self {
            numerator,
            denominator,
        })
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.numerator == 0
    }

    /// Whether `left < self · right`, exactly.
    pub fn exceeds_when_scaled(&self, left: u64, right: u64) -> bool {
        self.cmp_scaled(left, right) == std::cmp::Ordering::Less
    }

    /// The exact value as `(numerator, denominator)`; the denominator is a power of ten.
    pub fn as_fraction(&self) -> (u128, u128) {
        (self.numerator, self.denominator)
    }

    /// How `left` compares with `self · right`, exactly.
    pub fn cmp_scaled(&self, left: u64, right: u64) -> std::cmp::Ordering {
        let lhs = u128::from(left) * self.denominator;
        match self.numerator.checked_mul(u128::from(right)) {
            Some(rhs) => lhs.cmp(&rhs),
            // the right side exceeds 2^128 > lhs
            None => std::cmp::Ordering::Less,
        }
    }

    /// The smallest `right` with `left ≤ self · right` (saturating at `u64::MAX`); `None` when the value
    /// is zero and `left` is positive.
    pub fn min_scale_reaching(&self, left: u64) -> Option<u64> {
        if left == 0 {
            return Some(0);
        }
        if self.numerator == 0 {
            return None;
        }
        // ⌈left · denominator / numerator⌉
        let lhs = u128::from(left) * self.denominator;
        let right = lhs.div_ceil(self.numerator);
        Some(u64::try_from(right).unwrap_or(u64::MAX))
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let integer = self.numerator / self.denominator;
        let mut fraction = self.numerator % self.denominator;
        write!(f, "{integer}")?;
        if fraction != 0 {
            let mut digits = String::new();
            let mut d = self.denominator;
            while d > 1 {
                d /= 10;
                let digit = fraction / d;
                fraction %= d;
                digits.push(char::from(b'0' + digit as u8));
            }
            write!(f, ".{}", digits.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

/// Distinct l-diversity (Def 3.3.1): every class holds at least `l` distinct sensitive values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistinctLDiversity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// Minimum number of distinct values, at least 1.
    pub l: u64,
}

impl PrivacyModel for DistinctLDiversity {
    fn describe(&self) -> String {
        format!("distinct-{}-diversity on '{}'", self.l, self.attribute)
    }
    fn min_class_size(&self) -> u64 {
        self.l
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a merge involving a passing class keeps its l values; merging failing classes moves no record
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn reads_value_sets_only(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        class.distinct_values(self.slot) >= self.l
    }
}

/// Entropy l-diversity (Def 3.3.2): the entropy of every class's sensitive distribution is at least
/// `ln l` (up to [`ENTROPY_TOLERANCE`]), estimated with the plug-in (Shannon) formula or with
/// Grassberger's estimator; either way the class also needs at least l distinct values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntropyLDiversity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The diversity parameter, at least 1.
    pub l: u64,
    /// How a class's entropy is estimated.
    pub estimator: EntropyEstimator,
}

/// How entropy l-diversity estimates a class's entropy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntropyEstimator {
    /// The plug-in estimate `−Σ p·ln p` of Machanavajjhala et al.'s definition.
    #[default]
    Shannon,
    /// Grassberger's bias-corrected estimate (see `grassberger.rs`); accepts more small classes and is
    /// not preserved by merging.
    Grassberger,
}

impl PrivacyModel for EntropyLDiversity {
    fn describe(&self) -> String {
        match self.estimator {
            EntropyEstimator::Shannon => {
                format!("entropy-{}-diversity on '{}'", self.l, self.attribute)
            }
            EntropyEstimator::Grassberger => format!(
                "entropy-{}-diversity (Grassberger) on '{}'",
                self.l, self.attribute
            ),
        }
    }
    fn min_class_size(&self) -> u64 {
        self.l
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a passing class merged with a failing one may fail, so failing records can grow
        false
    }
    fn monotone_relaxation(&self) -> Option<Box<dyn PrivacyModel>> {
        // a class with fewer than l distinct values fails
        Some(Box::new(DistinctLDiversity {
            slot: self.slot,
            attribute: self.attribute.clone(),
            l: self.l,
        }))
    }
    fn is_monotone_without_suppression(&self) -> bool {
        match self.estimator {
            // entropy is concave: merging passing classes passes (note §2.3)
            EntropyEstimator::Shannon => true,
            // {a, b} and {a, b} pass with l = 7 (Ĥ = 2), their union {a × 2, b × 2} has Ĥ = 2/3
            EntropyEstimator::Grassberger => false,
        }
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let histogram = class.histogram(self.slot);
        // a class with fewer than l distinct values has Shannon entropy at most ln(distinct) < ln l;
        // Grassberger's estimate can exceed that, and the class is refused all the same (as in ARX)
        if distinct_values(histogram) < self.l {
            return false;
        }
        let estimate = match self.estimator {
            EntropyEstimator::Shannon => entropy(histogram),
            EntropyEstimator::Grassberger => {
                grassberger::entropy(histogram.iter().map(|&(_, n)| u64::from(n)))
            }
        };
        estimate >= (self.l as f64).ln() - ENTROPY_TOLERANCE
    }
}

/// Recursive (c,l)-diversity (Def 3.3.3): with the class's counts in descending order
/// `r_1 ≥ … ≥ r_m`, `r_1 < c·(r_l + … + r_m)`. The inequality is strict (Example 3.5.1's block iii,
/// `6 < 1.5·4`, fails); (c,1)-diversity always holds, and a class with fewer than `l` values fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecursiveCLDiversity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The constant c, positive.
    pub c: Decimal,
    /// The diversity parameter, at least 1.
    pub l: u64,
}

impl PrivacyModel for RecursiveCLDiversity {
    fn describe(&self) -> String {
        format!(
            "recursive-({},{})-diversity on '{}'",
            self.c, self.l, self.attribute
        )
    }
    fn min_class_size(&self) -> u64 {
        self.l
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a passing class merged with a failing one may fail, so failing records can grow
        false
    }
    fn monotone_relaxation(&self) -> Option<Box<dyn PrivacyModel>> {
        // a class with fewer than l distinct values fails
        Some(Box::new(DistinctLDiversity {
            slot: self.slot,
            attribute: self.attribute.clone(),
            l: self.l,
        }))
    }
    fn is_monotone_without_suppression(&self) -> bool {
        // r_1 is sub-additive and the tail super-additive under merging (note §2.7)
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        if self.l <= 1 {
            return true;
        }
        let mut counts: Vec<u64> = class
            .histogram(self.slot)
            .iter()
            .filter(|&&(_, n)| n > 0)
            .map(|&(_, n)| u64::from(n))
            .collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let skip = (self.l - 1).min(counts.len() as u64) as usize;
        let tail: u64 = counts[skip..].iter().sum();
        match counts.first() {
            Some(&r1) => self.c.exceeds_when_scaled(r1, tail),
            None => false,
        }
    }
}

/// Number of values with a positive count.
fn distinct_values(histogram: &[(u32, u32)]) -> u64 {
    histogram.iter().filter(|&&(_, n)| n > 0).count() as u64
}

/// Shannon entropy in nats, computed as `ln N − (Σ n·ln n)/N` (every term non-negative, so no
/// cancellation of small differences).
fn entropy(histogram: &[(u32, u32)]) -> f64 {
    let total: u64 = histogram.iter().map(|&(_, n)| u64::from(n)).sum();
    if total == 0 {
        return 0.0;
    }
    let total = total as f64;
    let weighted: f64 = histogram
        .iter()
        .filter(|&&(_, n)| n > 1)
        .map(|&(_, n)| f64::from(n) * f64::from(n).ln())
        .sum();
    total.ln() - weighted / total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::FrequencySet;

    /// One class per histogram (counts per value).
    fn check(model: &dyn PrivacyModel, counts: &[u32]) -> bool {
        let histogram: Vec<(u32, u32)> = counts
            .iter()
            .enumerate()
            .map(|(code, &n)| (code as u32, n))
            .collect();
        let set = FrequencySet::single_class_for_tests(0, histogram);
        model.is_class_private(&ClassView::new(&set, 0))
    }

    fn distinct(l: u64) -> DistinctLDiversity {
        DistinctLDiversity {
            slot: 0,
            attribute: "diagnosis".into(),
            l,
        }
    }
    fn entropy_l(l: u64) -> EntropyLDiversity {
        EntropyLDiversity {
            slot: 0,
            attribute: "diagnosis".into(),
            l,
            estimator: EntropyEstimator::Shannon,
        }
    }
    fn grassberger_l(l: u64) -> EntropyLDiversity {
        EntropyLDiversity {
            estimator: EntropyEstimator::Grassberger,
            ..entropy_l(l)
        }
    }

    #[test]
    fn grassberger_accepts_small_classes_shannon_refuses_and_is_not_monotone() {
        // {a, b, c}: Shannon ln 3 = 1.0986 < ln 4 but distinct values 3 < 4 refuse either way
        assert!(!check(&grassberger_l(4), &[1, 1, 1]));
        // {a × 3, b}: Shannon 0.5623 < ln 2; Grassberger G(4) − (3·G(3) + G(1))/4 = 7/6 ≥ ln 2
        assert!(!check(&entropy_l(2), &[3, 1]));
        assert!(check(&grassberger_l(2), &[3, 1]));
        // {a × 2, b}: 2/3 < ln 2 for both
        assert!(!check(&grassberger_l(2), &[2, 1]));
        // {a, b} passes 7-diversity by the estimate (Ĥ = 2 ≥ ln 7 = 1.946) but has 2 < 7 values
        assert!(!check(&grassberger_l(7), &[1, 1]));
        // merging two passing classes can fail: {a, b} (Ĥ = 2) twice gives {a × 2, b × 2} (Ĥ = 2/3)
        assert!(check(&grassberger_l(2), &[1, 1]));
        assert!(!check(&grassberger_l(2), &[2, 2]));
        assert!(!grassberger_l(2).is_monotone_without_suppression());
        assert!(!grassberger_l(2).is_monotone_with_suppression());
        assert_eq!(
            grassberger_l(2).describe(),
            "entropy-2-diversity (Grassberger) on 'diagnosis'"
        );
    }
    fn recursive(c: f64, l: u64) -> RecursiveCLDiversity {
        RecursiveCLDiversity {
            slot: 0,
            attribute: "diagnosis".into(),
            c: Decimal::from_f64(c).unwrap(),
            l,
        }
    }

    proptest::proptest! {
        /// The relaxations the exact searches prune with pass every class the models pass.
        #[test]
        fn relaxations_pass_what_the_models_pass(
            counts in proptest::collection::vec(0u32..6, 1..7),
            l in 1u64..6,
            c in 1u32..8,
        ) {
            // every class of a grouping has a record
            proptest::prop_assume!(counts.iter().any(|&n| n > 0));
            let models: [Box<dyn PrivacyModel>; 3] = [
                Box::new(entropy_l(l)),
                Box::new(grassberger_l(l)),
                Box::new(recursive(f64::from(c) / 2.0, l)),
            ];
            for model in models {
                let relaxed = model.monotone_relaxation().unwrap();
                proptest::prop_assert!(relaxed.is_monotone_with_suppression());
                if check(model.as_ref(), &counts) {
                    proptest::prop_assert!(check(relaxed.as_ref(), &counts));
                }
            }
        }
    }

    #[test]
    fn describes_with_the_attribute_name() {
        assert_eq!(
            distinct(2).describe(),
            "distinct-2-diversity on 'diagnosis'"
        );
        assert_eq!(
            entropy_l(3).describe(),
            "entropy-3-diversity on 'diagnosis'"
        );
        assert_eq!(
            recursive(1.5, 2).describe(),
            "recursive-(1.5,2)-diversity on 'diagnosis'"
        );
        assert_eq!(recursive(3.0, 2).min_class_size(), 2);
    }

    /// Example 3.5.1 (note §6.3): blocks (i) 10 × one value, (ii) 9 + 1, (iii) 6 + 2 + 2.
    #[test]
    fn example_3_5_1() {
        let (i, ii, iii) = (&[10][..], &[9, 1][..], &[6, 2, 2][..]);
        // 2-diversity: i fails
        assert!(!check(&distinct(2), i));
        assert!(check(&distinct(2), ii));
        assert!(check(&distinct(2), iii));
        // (1.5,2)-recursive: i and ii fail, and iii sits exactly on the strict boundary 6 < 6
        assert!(!check(&recursive(1.5, 2), i));
        assert!(!check(&recursive(1.5, 2), ii));
        assert!(!check(&recursive(1.5, 2), iii));
        assert!(check(&recursive(1.51, 2), iii));
        // entropy (bits): i 0, ii 0.469, iii 1.371; entropy 2-diversity passes only iii
        assert!(!check(&entropy_l(2), i));
        assert!(!check(&entropy_l(2), ii));
        assert!(check(&entropy_l(2), iii));
    }

    /// Note §6.2: the age-50 block {cancer 2, flu 1, cold 2}: 3 distinct values, recursive (c,2) passes
    /// iff 2 < 3c.
    #[test]
    fn age_50_block() {
        let block = [2, 1, 2];
        assert!(check(&distinct(3), &block));
        assert!(!check(&distinct(4), &block));
        // 1.52193 bits ≥ log2 2 but < log2 3
        assert!(check(&entropy_l(2), &block));
        assert!(!check(&entropy_l(3), &block));
        assert!(!check(&recursive(2.0 / 3.0, 2), &block)); // 2 < 3 · 0.666…: the decimal is below 2/3
        assert!(check(&recursive(0.67, 2), &block));
        assert!(!check(&recursive(0.6, 2), &block));
    }

    #[test]
    fn entropy_equality_passes() {
        for l in 1..=12u32 {
            let uniform = vec![7u32; l as usize];
            assert!(check(&entropy_l(u64::from(l)), &uniform), "l = {l}");
            assert!(!check(&entropy_l(u64::from(l) + 1), &uniform), "l = {l}");
        }
        // almost uniform stays below ln 3
        assert!(!check(&entropy_l(3), &[1000, 1000, 999]));
    }

    #[test]
    fn recursive_edge_cases() {
        // (c,1) always holds, even for an empty histogram
        assert!(check(&recursive(0.001, 1), &[5]));
        // fewer than l values: the tail is 0 and the class fails
        assert!(!check(&recursive(1000.0, 3), &[1, 1]));
        // r1 == c · tail with a decimal c: 11 < 1.1 · 10 is false
        assert!(!check(&recursive(1.1, 2), &[11, 10]));
        assert!(check(&recursive(1.1, 2), &[11, 6, 5, 0])); // 11 < 12.1
        assert!(check(&recursive(1.2, 2), &[11, 10]));
        // l = 3: tail from the third value
        assert!(check(&recursive(2.0, 3), &[3, 3, 1, 1])); // 3 < 2 · 2
        assert!(!check(&recursive(1.5, 3), &[3, 3, 1, 1])); // 3 < 3 fails
    }

    #[test]
    fn decimal_is_exact() {
        assert_eq!(Decimal::from_f64(1.1).unwrap().to_string(), "1.1");
        assert_eq!(Decimal::from_f64(3.0).unwrap().to_string(), "3");
        assert_eq!(Decimal::from_f64(0.25).unwrap().to_string(), "0.25");
        assert!(Decimal::from_f64(-1.0).is_none());
        assert!(Decimal::from_f64(f64::NAN).is_none());
        assert!(Decimal::from_f64(0.0).unwrap().is_zero());
        let big = Decimal::from_f64(1e300).unwrap();
        assert!(big.exceeds_when_scaled(u64::from(u32::MAX), 1));
        assert!(!big.exceeds_when_scaled(1, 0));
        let tiny = Decimal::from_f64(1e-30).unwrap();
        assert!(tiny.is_zero());
        let third = Decimal::from_f64(0.3).unwrap();
        assert_eq!(third.cmp_scaled(3, 10), std::cmp::Ordering::Equal);
        assert_eq!(third.cmp_scaled(3, 11), std::cmp::Ordering::Less);
        assert_eq!(third.cmp_scaled(4, 10), std::cmp::Ordering::Greater);
        assert_eq!(big.cmp_scaled(u64::MAX, u64::MAX), std::cmp::Ordering::Less);
        assert_eq!(third.min_scale_reaching(1), Some(4));
        assert_eq!(third.min_scale_reaching(3), Some(10));
        assert_eq!(third.min_scale_reaching(0), Some(0));
        assert_eq!(tiny.min_scale_reaching(1), None);
        assert_eq!(
            Decimal::from_f64(1e-18).unwrap().min_scale_reaching(1),
            Some(1_000_000_000_000_000_000)
        );
        let tenth = Decimal::from_f64(0.1).unwrap();
        assert!(!tenth.exceeds_when_scaled(1, 10));
        assert!(tenth.exceeds_when_scaled(1, 11));
    }

    #[test]
    fn monotonicity_flags_follow_the_note() {
        assert!(distinct(2).is_monotone_with_suppression());
        assert!(!entropy_l(2).is_monotone_with_suppression());
        assert!(!recursive(3.0, 2).is_monotone_with_suppression());
        assert!(distinct(2).is_monotone_without_suppression());
        assert!(entropy_l(2).is_monotone_without_suppression());
        assert!(recursive(3.0, 2).is_monotone_without_suppression());
        assert!(!distinct(2).is_size_only());
    }

    /// Note §2.7: every variant is merge-monotone (two passing classes merge into a passing class), on
    /// random pairs of histograms over 4 values.
    #[test]
    fn passing_classes_merge_into_passing_classes() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u32| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % u64::from(n)) as u32
        };
        let models: Vec<Box<dyn PrivacyModel>> = vec![
            Box::new(distinct(2)),
            Box::new(distinct(3)),
            Box::new(entropy_l(2)),
            Box::new(entropy_l(3)),
            Box::new(recursive(1.5, 2)),
            Box::new(recursive(3.0, 3)),
            Box::new(recursive(0.7, 2)),
        ];
        for _ in 0..20_000 {
            let a: Vec<u32> = (0..4).map(|_| next(6)).collect();
            let b: Vec<u32> = (0..4).map(|_| next(6)).collect();
            let merged: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
            for m in &models {
                if check(m.as_ref(), &a) && check(m.as_ref(), &b) {
                    assert!(
                        check(m.as_ref(), &merged),
                        "{}: {a:?} + {b:?}",
                        m.describe()
                    );
                }
            }
        }
    }
}
