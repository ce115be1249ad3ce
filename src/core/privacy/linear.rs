//! Linear density control for numeric sensitive attributes (Hsu 2008, §3.6, Defs 3.6.1–3.6.4); see
//! `notes/hsu-2008-sensitive-attribute-protection.md` §2.6, §5 and §6.8.
//!
//! A *class function* cf maps each sensitive value to a real number, increasing, so that
//! `|cf(s1) − cf(s2)|` says how similar two values are: the identity, or a piecewise-linear function
//! through increasing breakpoints (for example one unit per income band). The caller parses the values
//! and evaluates cf once per sensitive code; the models only read the per-code results.
//! - δ-range control (Def 3.6.2): in every class, `cf(max) − cf(min) ≥ δ`.
//! - (l,r)-linear diversity (Def 3.6.4): the fewest r-covers (intervals `[b, b + r]` in cf-space, Def
//!   3.6.3) that hold the class's values number at least `l`. Greedy from the smallest value is optimal
//!   for points on a line (note §5, MIN_R_COVERS).
//! - [`security_estimate`] is the ψ diagnostic of §3.6 (a sum of Gaussian bumps around each value); the
//!   thesis gives it no pass/fail standard, so it is not a model.
//!
//! cf values are `f64`. Comparisons allow an absolute tolerance of [`LINEAR_TOLERANCE`] times the
//! largest `|cf|` of the attribute (at least 1), fixed per model, so decimal data such as 0.1 and 0.3
//! are 0.2 apart despite binary rounding; a range short of δ by less than that is accepted.
//!
//! Monotonicity (note §2.7): both models depend only on the set of values in a class, and a superset
//! has at least the range and needs at least as many covers. So a merge involving a passing class
//! passes, and merging failing classes moves no record: monotone with and without suppression.

use super::{ClassView, PrivacyModel};

/// Relative tolerance of the cf comparisons (see the module documentation).
pub const LINEAR_TOLERANCE: f64 = 1e-9;

/// A class function: increasing map from numeric sensitive values to cf-space.
#[derive(Debug, Clone, PartialEq)]
pub enum ClassFunction {
    /// cf(x) = x.
    Identity,
    /// Linear interpolation between breakpoints `(x, y)` with strictly increasing `x` and
    /// non-decreasing `y`; constant (the first or last `y`) outside the breakpoints.
    PiecewiseLinear(Vec<(f64, f64)>),
}

impl ClassFunction {
    /// A piecewise-linear function, or `None` unless there are at least two finite breakpoints with
    /// strictly increasing `x` and non-decreasing `y`.
    pub fn piecewise_linear(points: Vec<(f64, f64)>) -> Option<Self> {
        let finite = points.iter().all(|(x, y)| x.is_finite() && y.is_finite());
        let increasing = points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
        (points.len() >= 2 && finite && increasing).then_some(Self::PiecewiseLinear(points))
    }

    /// cf(x).
    pub fn apply(&self, x: f64) -> f64 {
        match self {
            ClassFunction::Identity => x,
            ClassFunction::PiecewiseLinear(points) => {
                let i = points.partition_point(|&(px, _)| px <= x);
                match (i.checked_sub(1).map(|j| points[j]), points.get(i)) {
                    (None, Some(&(_, y))) | (Some((_, y)), None) => y,
                    (Some((x0, y0)), Some(&(x1, y1))) => y0 + (y1 - y0) * (x - x0) / (x1 - x0),
                    (None, None) => x,
                }
            }
        }
    }
}

/// The absolute tolerance for cf values `values`: [`LINEAR_TOLERANCE`] times the largest magnitude
/// (at least 1).
pub fn tolerance_for(values: &[f64]) -> f64 {
    LINEAR_TOLERANCE * values.iter().fold(1.0f64, |m, v| m.max(v.abs()))
}

/// The fewest intervals `[b, b + r]` (widened by `tolerance`) that hold every value of `sorted`
/// (ascending): greedy from the smallest uncovered value.
pub fn min_r_covers(sorted: &[f64], r: f64, tolerance: f64) -> u64 {
    let mut covers = 0;
    let mut i = 0;
    while i < sorted.len() {
        let base = sorted[i];
        covers += 1;
        while i < sorted.len() && sorted[i] <= base + r + tolerance {
            i += 1;
        }
    }
    covers
}

/// The security estimate ψ of §3.6 at every value of a class: for each cf value x of the multiset,
/// `ψ(x) = Σ_{s} κ · φ(x; cf(s), σ)` over the whole multiset, φ the normal density. Larger means
/// harder to eliminate; a high peak signals positive-disclosure risk. A diagnostic, not a gate.
pub fn security_estimate(values: &[f64], kappa: f64, sigma: f64) -> Vec<f64> {
    let norm = kappa / (sigma * (2.0 * std::f64::consts::PI).sqrt());
    values
        .iter()
        .map(|&x| {
            values
                .iter()
                .map(|&m| {
                    let z = (x - m) / sigma;
                    norm * (-0.5 * z * z).exp()
                })
                .sum()
        })
        .collect()
}

/// Bumps further than this many σ away are left out of [`normalized_security_estimate`]
/// (`exp(−50)` < 2e-22 of a record).
const PSI_WINDOW_SIGMAS: f64 = 10.0;

/// ψ of §3.6 with every bump normalized to peak 1 (κ = σ·√(2π)), at each distinct value of a class:
/// for distinct cf values `values` (ascending) held `counts` times,
/// `ψ(x) = Σ_s n_s · exp(−(x − s)² / (2σ²))`, so ψ at a value counts the class's values near it,
/// itself included (at least its own count). Terms beyond [`PSI_WINDOW_SIGMAS`]·σ are skipped, so a
/// class costs time in the pairs of values that close, not in its size squared. `σ > 0`.
pub fn normalized_security_estimate(values: &[f64], counts: &[u64], sigma: f64) -> Vec<f64> {
    let reach = PSI_WINDOW_SIGMAS * sigma;
    let mut low = 0;
    values
        .iter()
        .map(|&x| {
            while values[low] < x - reach {
                low += 1;
            }
            values[low..]
                .iter()
                .zip(&counts[low..])
                .take_while(|&(&s, _)| s <= x + reach)
                .map(|(&s, &n)| {
                    let z = (x - s) / sigma;
                    n as f64 * (-0.5 * z * z).exp()
                })
                .sum()
        })
        .collect()
}

/// cf values of the codes present in a class, sorted ascending.
fn class_values(cf: &[f64], histogram: &[(u32, u32)]) -> Vec<f64> {
    let mut values: Vec<f64> = histogram
        .iter()
        .filter(|&&(_, n)| n > 0)
        .filter_map(|&(code, _)| cf.get(code as usize).copied())
        .collect();
    values.sort_unstable_by(f64::total_cmp);
    values
}

/// δ-range control (Def 3.6.2): the cf-range of every class is at least `delta`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaRange {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The minimum range, ≥ 0.
    pub delta: f64,
    /// cf per sensitive code.
    pub cf: Vec<f64>,
    /// Absolute tolerance of the comparison ([`tolerance_for`] the cf values).
    pub tolerance: f64,
}

impl PrivacyModel for DeltaRange {
    fn describe(&self) -> String {
        format!("{}-range on '{}'", self.delta, self.attribute)
    }
    fn min_class_size(&self) -> u64 {
        if self.delta > self.tolerance {
            2
        } else {
            1
        }
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // the range of a superset is at least the range of each part
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let values = class_values(&self.cf, class.histogram(self.slot));
        match (values.first(), values.last()) {
            (Some(lo), Some(hi)) => hi - lo >= self.delta - self.tolerance,
            _ => false,
        }
    }
}

/// (l,r)-linear diversity (Def 3.6.4): every class needs at least `l` r-covers.
#[derive(Debug, Clone, PartialEq)]
pub struct LrLinearDiversity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// Minimum number of covers, ≥ 1.
    pub l: u64,
    /// Width of a cover in cf-space, ≥ 0.
    pub r: f64,
    /// cf per sensitive code.
    pub cf: Vec<f64>,
    /// Absolute tolerance of the comparison ([`tolerance_for`] the cf values).
    pub tolerance: f64,
}

impl PrivacyModel for LrLinearDiversity {
    fn describe(&self) -> String {
        format!(
            "({},{})-linear-diversity on '{}'",
            self.l, self.r, self.attribute
        )
    }
    fn min_class_size(&self) -> u64 {
        // each cover holds at least one distinct value
        self.l
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // covers of a superset cover each part
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let values = class_values(&self.cf, class.histogram(self.slot));
        min_r_covers(&values, self.r, self.tolerance) >= self.l
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::FrequencySet;

    /// Note §6.8: cf values of s0..s8, with s2 and s8 twice.
    const BLOCK: [f64; 11] = [0.0, 1.0, 2.0, 2.0, 2.5, 4.0, 5.0, 6.0, 8.0, 9.0, 9.0];

    /// A class holding codes 0..n once each (`counts` overrides), with cf per code.
    fn check(model: &dyn PrivacyModel, codes: &[(u32, u32)]) -> bool {
        let set = FrequencySet::single_class_for_tests(0, codes.to_vec());
        model.is_class_private(&ClassView::new(&set, 0))
    }

    /// The §6.8 block: codes 0..9 for s0..s8, s2 and s8 with count 2.
    fn block() -> (Vec<f64>, Vec<(u32, u32)>) {
        let cf = vec![0.0, 1.0, 2.0, 2.5, 4.0, 5.0, 6.0, 8.0, 9.0];
        let counts = vec![
            (0, 1),
            (1, 1),
            (2, 2),
            (3, 1),
            (4, 1),
            (5, 1),
            (6, 1),
            (7, 1),
            (8, 2),
        ];
        (cf, counts)
    }

    fn range(delta: f64, cf: &[f64]) -> DeltaRange {
        DeltaRange {
            slot: 0,
            attribute: "salary".into(),
            delta,
            cf: cf.to_vec(),
            tolerance: tolerance_for(cf),
        }
    }
    fn linear(l: u64, r: f64, cf: &[f64]) -> LrLinearDiversity {
        LrLinearDiversity {
            slot: 0,
            attribute: "salary".into(),
            l,
            r,
            cf: cf.to_vec(),
            tolerance: tolerance_for(cf),
        }
    }

    /// Note §6.8: range 9, MIN_R_COVERS(r = 1) = 5, MIN_R_COVERS(r = 2) = 4.
    #[test]
    fn linear_vectors_of_the_note() {
        let mut sorted = BLOCK.to_vec();
        sorted.dedup();
        assert_eq!(min_r_covers(&sorted, 1.0, 0.0), 5);
        assert_eq!(min_r_covers(&sorted, 2.0, 0.0), 4);
        let (cf, counts) = block();
        assert!(check(&range(9.0, &cf), &counts));
        assert!(!check(&range(9.01, &cf), &counts));
        assert!(check(&linear(5, 1.0, &cf), &counts));
        assert!(!check(&linear(6, 1.0, &cf), &counts));
        assert!(check(&linear(4, 2.0, &cf), &counts));
        assert!(!check(&linear(5, 2.0, &cf), &counts));
        assert!(check(&linear(1, 100.0, &cf), &counts));
        assert!(!check(&linear(2, 9.0, &cf), &counts));
    }

    /// Note §6.8, κ = 1, σ = 1: ψ(s0..s8) = .767, 1.259, 1.504, 1.398, .937, .914, .759, .941, 1.044.
    #[test]
    fn normalized_estimate_equals_the_definition_with_kappa_sigma_root_two_pi() {
        // the note's block with its repeated values grouped: 2 and 9 appear twice
        let values = [0.0, 1.0, 2.0, 2.5, 4.0, 5.0, 6.0, 8.0, 9.0];
        let counts = [1, 1, 2, 1, 1, 1, 1, 1, 2];
        for sigma in [0.5, 1.0, 3.0] {
            let kappa = sigma * (2.0 * std::f64::consts::PI).sqrt();
            let plain = security_estimate(&BLOCK, kappa, sigma);
            let grouped = normalized_security_estimate(&values, &counts, sigma);
            for (value, psi) in values.iter().zip(&grouped) {
                let i = BLOCK.iter().position(|v| v == value).unwrap();
                assert!((plain[i] - psi).abs() < 1e-12, "σ {sigma}, value {value}");
            }
        }
        // a lone value counts itself; far-apart values do not see each other
        assert_eq!(normalized_security_estimate(&[3.0], &[4], 1.0), vec![4.0]);
        let apart = normalized_security_estimate(&[0.0, 100.0], &[1, 1], 1.0);
        assert_eq!(apart, vec![1.0, 1.0]);
    }

    #[test]
    fn security_estimate_of_the_note() {
        let psi = security_estimate(&BLOCK, 1.0, 1.0);
        let expected = [
            0.767, 1.259, 1.504, 1.504, 1.398, 0.937, 0.914, 0.759, 0.941, 1.044, 1.044,
        ];
        for (i, (&got, &want)) in psi.iter().zip(&expected).enumerate() {
            assert!((got - want).abs() < 5e-4, "value {i}: {got} vs {want}");
        }
        // κ scales, σ widens
        let scaled = security_estimate(&BLOCK, 2.0, 1.0);
        assert!((scaled[0] - 2.0 * psi[0]).abs() < 1e-12);
        assert!(security_estimate(&[0.0], 1.0, 2.0)[0] < psi[0]);
    }

    #[test]
    fn decimal_data_meets_its_range() {
        // 0.3 − 0.1 is 0.19999999999999998 in binary
        let cf = [0.1, 0.3];
        let counts = [(0, 1), (1, 1)];
        assert!(check(&range(0.2, &cf), &counts));
        assert!(!check(&range(0.2000001, &cf), &counts));
        assert!(!check(&linear(2, 0.2, &cf), &counts));
        assert!(check(&linear(2, 0.1999, &cf), &counts));
        assert!(!check(&range(0.1, &cf), &[(0, 5)]));
        assert!(check(&range(0.0, &cf), &[(0, 5)]));
    }

    #[test]
    fn piecewise_linear_class_function() {
        let income =
            ClassFunction::piecewise_linear(vec![(0.0, 0.0), (8_000.0, 1.0), (25_000.0, 2.0)])
                .unwrap();
        assert_eq!(income.apply(0.0), 0.0);
        assert_eq!(income.apply(4_000.0), 0.5);
        assert_eq!(income.apply(8_000.0), 1.0);
        assert_eq!(income.apply(16_500.0), 1.5);
        assert_eq!(income.apply(25_000.0), 2.0);
        assert_eq!(income.apply(1_000_000.0), 2.0);
        assert_eq!(income.apply(-5.0), 0.0);
        assert_eq!(ClassFunction::Identity.apply(-3.5), -3.5);
        assert!(ClassFunction::piecewise_linear(vec![(0.0, 0.0)]).is_none());
        assert!(ClassFunction::piecewise_linear(vec![(0.0, 0.0), (0.0, 1.0)]).is_none());
        assert!(ClassFunction::piecewise_linear(vec![(0.0, 1.0), (1.0, 0.0)]).is_none());
        assert!(ClassFunction::piecewise_linear(vec![(0.0, 0.0), (f64::NAN, 1.0)]).is_none());
        assert!(ClassFunction::piecewise_linear(vec![(0.0, 1.0), (1.0, 1.0)]).is_some());
    }

    #[test]
    fn describes_and_flags() {
        let cf = [1.0, 2.0];
        assert_eq!(range(2.5, &cf).describe(), "2.5-range on 'salary'");
        assert_eq!(
            linear(3, 1.5, &cf).describe(),
            "(3,1.5)-linear-diversity on 'salary'"
        );
        assert_eq!(range(2.5, &cf).min_class_size(), 2);
        assert_eq!(range(0.0, &cf).min_class_size(), 1);
        assert_eq!(linear(3, 1.5, &cf).min_class_size(), 3);
        for m in [&range(1.0, &cf) as &dyn PrivacyModel, &linear(2, 1.0, &cf)] {
            assert!(m.is_monotone_with_suppression() && m.is_monotone_without_suppression());
        }
    }

    /// Note §2.7: the value set of a merge is a union, so a merge involving a passing class passes.
    #[test]
    fn merges_with_a_passing_class_pass() {
        let cf: Vec<f64> = (0..8).map(|i| f64::from(i) * 0.7).collect();
        let mut state: u64 = 5;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        let models: Vec<Box<dyn PrivacyModel>> = vec![
            Box::new(range(1.4, &cf)),
            Box::new(range(3.0, &cf)),
            Box::new(linear(2, 0.7, &cf)),
            Box::new(linear(3, 1.0, &cf)),
        ];
        for _ in 0..5_000 {
            let mut class = || {
                let mut h: Vec<(u32, u32)> = (0..8).map(|c| (c, 0)).collect();
                for _ in 0..=next(5) {
                    h[next(8) as usize].1 += 1;
                }
                h
            };
            let (a, b) = (class(), class());
            let merged: Vec<(u32, u32)> = a
                .iter()
                .zip(&b)
                .map(|(&(c, x), &(_, y))| (c, x + y))
                .collect();
            for m in &models {
                if check(m.as_ref(), &a) || check(m.as_ref(), &b) {
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
