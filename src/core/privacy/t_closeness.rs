//! t-closeness (Li, Li & Venkatasubramanian, ICDE 2007; Hsu 2008, §3.4, Def 3.4.3): the earth mover's
//! distance between every class's distribution of a sensitive attribute and the attribute's distribution
//! over the whole table is at most `t`. The distance is exact ([`EarthMovers`]) and compared with `t` as a
//! decimal fraction, so `EMD = t` passes whatever the binary rounding of `t`.
//!
//! Monotonicity (note §2.7, Lemma 2.4.5): the EMD is convex in the class distribution, and a merged
//! class's distribution is the size-weighted mix of its parts, so merging passing classes yields a
//! passing class. With suppression the records of failing classes can grow (a passing class merged with a
//! failing one may fail), so pruning is off when records may be suppressed.

use super::coverage::ValueCoverage;
use super::emd::EarthMovers;
use super::{ClassView, Decimal, PrivacyModel};

/// The ground distance, for descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroundDistanceKind {
    /// Every pair of distinct values at distance 1.
    Equal,
    /// Rank difference over `m − 1`.
    Ordered,
    /// Height of the lowest common ancestor over the hierarchy's height.
    Hierarchical,
}

impl GroundDistanceKind {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            GroundDistanceKind::Equal => "equal",
            GroundDistanceKind::Ordered => "ordered",
            GroundDistanceKind::Hierarchical => "hierarchical",
        }
    }
}

/// t-closeness of one sensitive attribute.
#[derive(Debug, Clone)]
pub struct TCloseness {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// The attribute's name (for descriptions).
    pub attribute: String,
    /// The largest distance allowed.
    pub t: Decimal,
    /// Which ground distance `distance` uses (for descriptions).
    pub kind: GroundDistanceKind,
    /// The distance to the table's distribution.
    pub distance: EarthMovers,
}

impl PrivacyModel for TCloseness {
    fn describe(&self) -> String {
        format!(
            "{}-closeness ({} distance) on '{}'",
            self.t,
            self.kind.name(),
            self.attribute
        )
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

    fn monotone_relaxation(&self) -> Option<Box<dyn PrivacyModel>> {
        Some(Box::new(ValueCoverage {
            slot: self.slot,
            attribute: self.attribute.clone(),
            t: self.t,
            distance: self.distance.clone(),
        }))
    }

    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        self.distance
            .distance(class.histogram(self.slot))
            .is_at_most(self.t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::FrequencySet;
    use crate::core::privacy::emd::Ratio;

    fn fraction(r: Ratio) -> (u128, u128) {
        fn gcd(a: u128, b: u128) -> u128 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let g = gcd(r.numerator, r.denominator).max(1);
        (r.numerator / g, r.denominator / g)
    }

    fn histogram(counts: &[u32]) -> Vec<(u32, u32)> {
        counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(code, &n)| (code as u32, n))
            .collect()
    }

    /// Note §6.1: D_T = {HD 3, VI 4, C 5} of 12; the three blocks of Table 2.1-2.
    #[test]
    fn table_2_1_2_equal_distance() {
        let emd = EarthMovers::equal(vec![3, 4, 5]);
        assert_eq!(fraction(emd.distance(&histogram(&[2, 2, 0]))), (5, 12));
        assert_eq!(fraction(emd.distance(&histogram(&[1, 2, 1]))), (1, 6));
        assert_eq!(fraction(emd.distance(&histogram(&[0, 0, 4]))), (7, 12));
        // singleton shortcut (§1.4): a point mass on s is 1 − D_T(s) away
        assert_eq!(fraction(emd.distance(&histogram(&[0, 1, 0]))), (2, 3));
    }

    /// Li et al.'s salary example: values 3k..11k (m = 9), the table uniform.
    #[test]
    fn li_et_al_ordered_distance() {
        let emd = EarthMovers::ordered(vec![1; 9], (0..9).collect());
        // P1 = {3k, 4k, 5k}
        assert_eq!(
            fraction(emd.distance(&histogram(&[1, 1, 1, 0, 0, 0, 0, 0, 0]))),
            (3, 8)
        );
        // P2 = {6k, 8k, 11k}
        assert_eq!(
            fraction(emd.distance(&histogram(&[0, 0, 0, 1, 0, 1, 0, 0, 1]))),
            (1, 6)
        );
        // the rank, not the code, orders the values: reversing both changes nothing
        let reversed = EarthMovers::ordered(vec![1; 9], (0..9).rev().collect());
        assert_eq!(
            fraction(reversed.distance(&histogram(&[0, 0, 0, 0, 0, 0, 1, 1, 1]))),
            (3, 8)
        );
    }

    /// Note §7: * → {A: {a1, a2}, B: {b1, b2}} (H = 2), P = {a1: 1}, Q uniform → 5/8.
    #[test]
    fn hierarchical_distance_example() {
        let emd = EarthMovers::hierarchical(vec![1; 4], vec![vec![0, 0, 1, 1], vec![0; 4]]);
        assert_eq!(fraction(emd.distance(&histogram(&[1, 0, 0, 0]))), (5, 8));
        // a class with the table's distribution is at distance 0
        assert_eq!(fraction(emd.distance(&histogram(&[2, 2, 2, 2]))).0, 0);
        // without the root level, a root is added above A and B: same tree, same distance
        let rootless = EarthMovers::hierarchical(vec![1; 4], vec![vec![0, 0, 1, 1]]);
        assert_eq!(
            fraction(rootless.distance(&histogram(&[1, 0, 0, 0]))),
            (5, 8)
        );
    }

    fn model(t: f64, distance: EarthMovers) -> TCloseness {
        TCloseness {
            slot: 0,
            attribute: "diagnosis".into(),
            t: Decimal::from_f64(t).unwrap(),
            kind: GroundDistanceKind::Equal,
            distance,
        }
    }

    fn passes(model: &TCloseness, counts: &[u32]) -> bool {
        let set = FrequencySet::single_class_for_tests(0, histogram(counts));
        model.is_class_private(&ClassView::new(&set, 0))
    }

    /// EMD = t passes and anything above fails, exactly (7/12 = 0.58333…).
    #[test]
    fn boundaries_are_exact() {
        let close = model(0.4, EarthMovers::equal(vec![3, 4, 5]));
        // 5/12 = 0.41666… > 0.4
        assert!(!passes(&close, &[2, 2, 0]));
        assert!(passes(&close, &[1, 2, 1]));
        // ordered 3/8 = 0.375 exactly
        let at = model(0.375, EarthMovers::ordered(vec![1; 9], (0..9).collect()));
        assert!(passes(&at, &[1, 1, 1, 0, 0, 0, 0, 0, 0]));
        let below = model(
            0.374_999_999,
            EarthMovers::ordered(vec![1; 9], (0..9).collect()),
        );
        assert!(!passes(&below, &[1, 1, 1, 0, 0, 0, 0, 0, 0]));
        assert_eq!(
            close.describe(),
            "0.4-closeness (equal distance) on 'diagnosis'"
        );
    }

    #[test]
    fn wide_comparison_handles_large_fractions() {
        let big = Ratio {
            numerator: u128::MAX / 3,
            denominator: u128::MAX / 2,
        };
        // 2/3 within rounding of the halves
        assert!(big.is_at_most(Decimal::from_f64(0.667).unwrap()));
        assert!(!big.is_at_most(Decimal::from_f64(0.666).unwrap()));
    }
}
