//! Categorical diversity and density control (Hsu 2008, §3.5, Defs 3.5.2–3.5.10); see
//! `notes/hsu-2008-sensitive-attribute-protection.md` §2.5, §2.7 and the errata in §8.
//!
//! The sensitive values are grouped into possibly overlapping *categories* S̄ = {S̄_1, …, S̄_n} plus a
//! *don't-care* set Y with Y ∩ S̄_i = ∅, and every value of the column lies in Y or in some category (the
//! caller validates both). [`Categories`] precomputes, per sensitive code, the bitmask of the categories
//! holding it (at most [`MAX_CATEGORIES`] = 64) and whether it is don't-care. Every check works on the
//! class's record counts, in integers, with the decimal parameters compared exactly ([`Decimal`]):
//! - l-categorical diversity (Def 3.5.3): the minimum cover of the class's distinct values by sets of
//!   {Y} ∪ S̄ has at least `l` sets. Cover means ⊆ (erratum 4). Y is in a cover exactly when the class
//!   holds a don't-care value (no category contains one), so the check asks whether the other values
//!   can be hit by at most `l − 1 − [Y present]` categories: an exact branching search (pick the value in
//!   the fewest categories, try each of its categories), whose depth is at most `l − 1`;
//! - d-density control (Def 3.5.5): every τ ∈ S̄ ∪ {Y} holds at most the fraction `d` of the class;
//!   with μ-dilution (Def 3.5.6) Y must hold at least `μ` and is exempt from the `d` bound (note §2.5:
//!   μ-dilution overrides d-density);
//! - μ-dilution alone: Y holds at least the fraction `μ` of the class;
//! - (c,l)-categorical recursive diversity (Def 3.5.8, non-strict): the largest category count is at
//!   most `c` times the records outside the best `l` categories (MC(l), Def 3.5.7, found by enumerating
//!   the `l`-subsets of the categories present in the class);
//! - (c,l)-density control (Def 3.5.10 with the sum from i = l, erratum 4): with the category counts of
//!   the class in descending order f_1 ≥ … ≥ f_n, f_1 ≤ c · (f_l + … + f_n).
//!
//! Monotonicity (note §2.7). All five are merge-monotone: a cover of a merged class covers each part;
//! frequencies of a merged class are weighted averages of the parts'; the largest category count and
//! MC / the top l − 1 category counts are sub-additive while the total is additive. With suppression only
//! l-categorical diversity stays monotone: a merge involving a passing class covers its values and
//! passes, and a merge of failing classes keeps the same records failing. The others let a passing class
//! fail when merged with a failing one (see the test `suppression_breaks_the_density_models`), so the
//! records in failing classes can grow, and they report no monotonicity with suppression.

use std::cmp::Ordering;

use super::{ClassView, Decimal, PrivacyModel};

/// Most categories a model accepts (one bit each in a `u64`).
pub const MAX_CATEGORIES: usize = 64;

/// The categories and don't-care set of one sensitive attribute, by dictionary code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Categories {
    /// Number of categories.
    count: usize,
    /// Per code: bitmask of the categories that hold the value.
    masks: Vec<u64>,
    /// Per code: whether the value is in the don't-care set Y.
    dont_care: Vec<bool>,
}

impl Categories {
    /// `count` categories over the codes of one column: `masks[code]` has bit `i` set when category `i`
    /// holds the value, `dont_care[code]` says whether it is in Y. `None` when there are more than
    /// [`MAX_CATEGORIES`] categories, a mask names a category beyond `count`, the two lists differ in
    /// length, or a value is both don't-care and in a category.
    pub fn new(count: usize, masks: Vec<u64>, dont_care: Vec<bool>) -> Option<Self> {
        if count > MAX_CATEGORIES || masks.len() != dont_care.len() {
            return None;
        }
        let allowed = if count == MAX_CATEGORIES {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        let consistent = masks
            .iter()
            .zip(&dont_care)
            .all(|(&m, &y)| m & !allowed == 0 && !(y && m != 0));
        consistent.then_some(Self {
            count,
            masks,
            dont_care,
        })
    }

    /// Number of categories (Y not included).
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of sensitive codes described.
    pub fn codes(&self) -> usize {
        self.masks.len()
    }

    /// The most categories any one value belongs to (the branching factor of the cover search).
    pub fn largest_overlap(&self) -> u64 {
        self.masks
            .iter()
            .map(|m| u64::from(m.count_ones()))
            .max()
            .unwrap_or(0)
    }

    /// The class's counts seen through the categories.
    fn profile(&self, histogram: &[(u32, u32)]) -> Profile {
        let mut profile = Profile::default();
        for &(code, n) in histogram {
            if n == 0 {
                continue;
            }
            let n = u64::from(n);
            profile.size += n;
            let code = code as usize;
            if self.dont_care.get(code).copied().unwrap_or(false) {
                profile.dont_care += n;
                continue;
            }
            let mask = self.masks.get(code).copied().unwrap_or(0);
            match profile.values.iter_mut().find(|(m, _)| *m == mask) {
                Some(entry) => entry.1 += n,
                None => profile.values.push((mask, n)),
            }
        }
        profile
    }
}

/// A class's records grouped by the set of categories their value belongs to.
#[derive(Debug, Default)]
struct Profile {
    /// Records in the class.
    size: u64,
    /// Records with a don't-care value.
    dont_care: u64,
    /// `(category mask, records)` of the other values, one entry per distinct mask.
    values: Vec<(u64, u64)>,
}

impl Profile {
    /// Records whose value lies in category `i`.
    fn category_count(&self, i: usize) -> u64 {
        self.values
            .iter()
            .filter(|&&(m, _)| m >> i & 1 == 1)
            .map(|&(_, n)| n)
            .sum()
    }

    /// Records per category (categories absent from the class count 0).
    fn category_counts(&self, count: usize) -> Vec<u64> {
        (0..count).map(|i| self.category_count(i)).collect()
    }

    /// Records covered by the best `l` categories (MC(l) as a count, Def 3.5.7).
    fn max_coverage(&self, count: usize, l: u64) -> u64 {
        let present: Vec<usize> = (0..count)
            .filter(|&i| self.values.iter().any(|&(m, _)| m >> i & 1 == 1))
            .collect();
        if l as usize >= present.len() {
            return self.values.iter().map(|&(_, n)| n).sum();
        }
        let mut best = 0;
        choose(&present, l as usize, 0, 0, &mut |union| {
            let covered: u64 = self
                .values
                .iter()
                .filter(|&&(m, _)| m & union != 0)
                .map(|&(_, n)| n)
                .sum();
            best = best.max(covered);
        });
        best
    }
}

/// Calls `visit` with the union mask of every `left`-subset of `items[start..]` (added to `union`).
fn choose(items: &[usize], left: usize, start: usize, union: u64, visit: &mut dyn FnMut(u64)) {
    if left == 0 {
        visit(union);
        return;
    }
    for (i, &item) in items.iter().enumerate().skip(start) {
        if items.len() - i < left {
            break;
        }
        choose(items, left - 1, i + 1, union | 1u64 << item, visit);
    }
}

/// Whether the values with these category masks can be covered by at most `budget` categories: exact
/// branching on the value with the fewest categories (some category of it is in every cover). A value
/// in no category can never be covered.
fn coverable(masks: &[u64], budget: u64) -> bool {
    let Some(&pivot) = masks.iter().min_by_key(|m| m.count_ones()) else {
        return true;
    };
    if budget == 0 || pivot == 0 {
        return false;
    }
    let mut bits = pivot;
    while bits != 0 {
        let bit = bits & bits.wrapping_neg();
        bits &= bits - 1;
        let rest: Vec<u64> = masks.iter().copied().filter(|m| m & bit == 0).collect();
        if coverable(&rest, budget - 1) {
            return true;
        }
    }
    false
}

/// The minimum number of sets of {Y} ∪ S̄ that cover the distinct values of a class, found by trying
/// budgets upwards (for tests and diagnostics; `None` when some value lies in no set).
fn min_cover(profile: &Profile) -> Option<u64> {
    let masks: Vec<u64> = profile.values.iter().map(|&(m, _)| m).collect();
    if masks.contains(&0) {
        return None;
    }
    let y = u64::from(profile.dont_care > 0);
    (0..=masks.len() as u64)
        .find(|&b| coverable(&masks, b))
        .map(|b| b + y)
}

/// Whether `left ≤ factor · right`, exactly.
fn at_most_scaled(factor: &Decimal, left: u64, right: u64) -> bool {
    factor.cmp_scaled(left, right) != Ordering::Greater
}

/// l-categorical diversity (Def 3.5.3): the minimum cover of every class's distinct sensitive values by
/// sets of {Y} ∪ S̄ has at least `l` sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LCategoricalDiversity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// Minimum cover size, at least 1.
    pub l: u64,
    /// The categories and Y.
    pub categories: Categories,
}

impl PrivacyModel for LCategoricalDiversity {
    fn describe(&self) -> String {
        format!("{}-categorical-diversity on '{}'", self.l, self.attribute)
    }
    fn min_class_size(&self) -> u64 {
        // a cover needs at most one set per distinct value
        self.l
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a cover of a merged class covers each part, so a merge with a passing class passes; merging
        // failing classes moves no record
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let profile = self.categories.profile(class.histogram(self.slot));
        let needed = u64::from(profile.dont_care > 0);
        // passes iff no cover of size ≤ l − 1 exists; Y takes one set when present
        let Some(budget) = self.l.saturating_sub(1).checked_sub(needed) else {
            return true;
        };
        let masks: Vec<u64> = profile.values.iter().map(|&(m, _)| m).collect();
        !coverable(&masks, budget)
    }
}

/// d-density control (Def 3.5.5), optionally with μ-dilution (Def 3.5.6): every category and Y hold at
/// most the fraction `d` of each class; with `mu`, Y holds at least `mu` and is exempt from `d`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DDensity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The density bound, in [0, 1].
    pub d: Decimal,
    /// The dilution bound μ, in [0, 1], when μ-dilution overrides the bound on Y.
    pub mu: Option<Decimal>,
    /// The categories and Y.
    pub categories: Categories,
}

impl PrivacyModel for DDensity {
    fn describe(&self) -> String {
        match &self.mu {
            None => format!("{}-density on '{}'", self.d, self.attribute),
            Some(mu) => format!(
                "{}-density with {}-dilution on '{}'",
                self.d, mu, self.attribute
            ),
        }
    }
    fn min_class_size(&self) -> u64 {
        // every record lies in some τ, so without the exemption a class of n records has a τ with at
        // least 1/n of it: n ≥ 1/d; with the exemption a class of don't-care values may be tiny
        if self.mu.is_some() {
            return 1;
        }
        // d = 0 passes no class at all; any size is a valid bound then
        self.d.min_scale_reaching(1).unwrap_or(1)
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a passing {x, y} merged with a failing {x × 6} fails at d = 1/2
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        // the merged frequencies are weighted averages of the parts'
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let profile = self.categories.profile(class.histogram(self.slot));
        let size = profile.size;
        let dont_care_ok = match &self.mu {
            Some(mu) => !mu.exceeds_when_scaled(profile.dont_care, size),
            None => at_most_scaled(&self.d, profile.dont_care, size),
        };
        dont_care_ok
            && (0..self.categories.count)
                .all(|i| at_most_scaled(&self.d, profile.category_count(i), size))
    }
}

/// μ-dilution (Def 3.5.6) on its own: Y holds at least the fraction `mu` of each class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MuDilution {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The dilution bound, in [0, 1].
    pub mu: Decimal,
    /// Per sensitive code: whether the value is in Y.
    pub dont_care: Vec<bool>,
}

impl PrivacyModel for MuDilution {
    fn describe(&self) -> String {
        format!("{}-dilution on '{}'", self.mu, self.attribute)
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a passing {y} merged with a failing {x} fails at μ = 1
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        // the merged share of Y is a weighted average of the parts'
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let (mut size, mut dont_care) = (0u64, 0u64);
        for &(code, n) in class.histogram(self.slot) {
            size += u64::from(n);
            if self.dont_care.get(code as usize).copied().unwrap_or(false) {
                dont_care += u64::from(n);
            }
        }
        !self.mu.exceeds_when_scaled(dont_care, size)
    }
}

/// (c,l)-categorical recursive diversity (Def 3.5.8), in counts: the largest category count is at most
/// `c` times the records outside the best `l`-covering (Y records are always outside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClCategoricalRecursiveDiversity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The constant c, positive.
    pub c: Decimal,
    /// Number of categories in the covering, at least 1.
    pub l: u64,
    /// The categories and Y.
    pub categories: Categories,
}

impl PrivacyModel for ClCategoricalRecursiveDiversity {
    fn describe(&self) -> String {
        format!(
            "({},{})-categorical-recursive-diversity on '{}'",
            self.c, self.l, self.attribute
        )
    }
    fn min_class_size(&self) -> u64 {
        // a class of one don't-care record passes
        1
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a passing {x, y} (x, y in different categories, l = 1, c = 1) merged with a failing {x × 6} fails
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        // the largest count and MC(l) are sub-additive, the size additive (note §2.7)
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let profile = self.categories.profile(class.histogram(self.slot));
        let count = self.categories.count;
        let largest = profile
            .category_counts(count)
            .into_iter()
            .max()
            .unwrap_or(0);
        let uncovered = profile.size - profile.max_coverage(count, self.l);
        at_most_scaled(&self.c, largest, uncovered)
    }
}

/// (c,l)-density control (Def 3.5.10, sum from i = l): with the category counts of a class in descending
/// order f_1 ≥ … ≥ f_n, f_1 ≤ c · (f_l + … + f_n).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClDensity {
    /// The sensitive slot in the engine input.
    pub slot: usize,
    /// Sensitive attribute name (for descriptions only).
    pub attribute: String,
    /// The constant c, positive.
    pub c: Decimal,
    /// Index of the first category in the tail, at least 1.
    pub l: u64,
    /// The categories and Y.
    pub categories: Categories,
}

impl PrivacyModel for ClDensity {
    fn describe(&self) -> String {
        format!("({},{})-density on '{}'", self.c, self.l, self.attribute)
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn sensitive_slot(&self) -> Option<usize> {
        Some(self.slot)
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // a passing {x, y} (two categories, l = 2, c = 1) merged with a failing {x × 6} fails
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        // the top count and the top l − 1 sum are sub-additive, the sum of all counts additive
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        let profile = self.categories.profile(class.histogram(self.slot));
        let mut counts = profile.category_counts(self.categories.count);
        counts.retain(|&n| n > 0);
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let skip = self.l.saturating_sub(1).min(counts.len() as u64) as usize;
        let tail: u64 = counts[skip..].iter().sum();
        at_most_scaled(&self.c, counts.first().copied().unwrap_or(0), tail)
    }
}

/// The minimum cover size of a class with these value counts (by code), for diagnostics and tests;
/// `None` when some value lies in no set.
pub fn minimum_cover(categories: &Categories, histogram: &[(u32, u32)]) -> Option<u64> {
    min_cover(&categories.profile(histogram))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::groupify::FrequencySet;

    // Note §7 "Categorical vectors": Y = {cold, flu, rash}, Terminal = {cancer, AIDS},
    // Infectious = {AIDS, TB, hepatitis}. Codes: cold 0, flu 1, rash 2, cancer 3, AIDS 4, TB 5,
    // hepatitis 6; Terminal is category 0, Infectious category 1.
    const COLD: u32 = 0;
    const FLU: u32 = 1;
    const CANCER: u32 = 3;
    const AIDS: u32 = 4;
    const TB: u32 = 5;
    const HEPATITIS: u32 = 6;

    fn illness() -> Categories {
        Categories::new(
            2,
            vec![0, 0, 0, 0b01, 0b11, 0b10, 0b10],
            vec![true, true, true, false, false, false, false],
        )
        .unwrap()
    }

    fn histogram(values: &[u32]) -> Vec<(u32, u32)> {
        let mut h: Vec<(u32, u32)> = Vec::new();
        for &v in values {
            match h.iter_mut().find(|(c, _)| *c == v) {
                Some(e) => e.1 += 1,
                None => h.push((v, 1)),
            }
        }
        h.sort_unstable();
        h
    }

    fn check(model: &dyn PrivacyModel, values: &[u32]) -> bool {
        let set = FrequencySet::single_class_for_tests(0, histogram(values));
        model.is_class_private(&ClassView::new(&set, 0))
    }

    fn decimal(x: f64) -> Decimal {
        Decimal::from_f64(x).unwrap()
    }

    fn l_categorical(l: u64) -> LCategoricalDiversity {
        LCategoricalDiversity {
            slot: 0,
            attribute: "diagnosis".into(),
            l,
            categories: illness(),
        }
    }
    fn density(d: f64, mu: Option<f64>) -> DDensity {
        DDensity {
            slot: 0,
            attribute: "diagnosis".into(),
            d: decimal(d),
            mu: mu.map(decimal),
            categories: illness(),
        }
    }
    fn dilution(mu: f64) -> MuDilution {
        MuDilution {
            slot: 0,
            attribute: "diagnosis".into(),
            mu: decimal(mu),
            dont_care: vec![true, true, true, false, false, false, false],
        }
    }
    fn cat_recursive(c: f64, l: u64) -> ClCategoricalRecursiveDiversity {
        ClCategoricalRecursiveDiversity {
            slot: 0,
            attribute: "diagnosis".into(),
            c: decimal(c),
            l,
            categories: illness(),
        }
    }
    fn cl_density(c: f64, l: u64) -> ClDensity {
        ClDensity {
            slot: 0,
            attribute: "diagnosis".into(),
            c: decimal(c),
            l,
            categories: illness(),
        }
    }

    fn cover(values: &[u32]) -> Option<u64> {
        minimum_cover(&illness(), &histogram(values))
    }

    /// Note §7: min cover {AIDS, AIDS, cold} = 2, {AIDS, cancer, TB} = 2, {cold, cancer, TB} = 3, and
    /// removing the Infectious values from the last leaves 2 (Theorem 3.5.4).
    #[test]
    fn minimum_covers_of_the_note() {
        assert_eq!(cover(&[AIDS, AIDS, COLD]), Some(2));
        assert_eq!(cover(&[AIDS, CANCER, TB]), Some(2));
        assert_eq!(cover(&[COLD, CANCER, TB]), Some(3));
        assert_eq!(cover(&[COLD, CANCER]), Some(2));
        for (values, cover) in [
            (&[AIDS, AIDS, COLD][..], 2),
            (&[AIDS, CANCER, TB][..], 2),
            (&[COLD, CANCER, TB][..], 3),
        ] {
            assert!(check(&l_categorical(cover), values), "{values:?}");
            assert!(!check(&l_categorical(cover + 1), values), "{values:?}");
        }
        assert!(check(&l_categorical(1), &[COLD]));
        assert!(!check(&l_categorical(2), &[COLD, FLU]));
    }

    /// Note §7: the block {cold, cancer, TB, hepatitis}.
    #[test]
    fn the_four_record_block() {
        let block = [COLD, CANCER, TB, HEPATITIS];
        assert_eq!(cover(&block), Some(3));
        // Y 1/4, Terminal 1/4, Infectious 2/4: d-density passes iff d ≥ 1/2
        assert!(check(&density(0.5, None), &block));
        assert!(!check(&density(0.49, None), &block));
        assert!(!check(&density(0.4999999, None), &block));
        // max = 2 records (Infectious), MC(2) covers 3 of 4, so 2 ≤ c · 1: passes at c = 2 exactly
        assert!(check(&cat_recursive(2.0, 2), &block));
        assert!(!check(&cat_recursive(1.99, 2), &block));
        // category counts [2, 1]: 2 ≤ c · 1 iff c ≥ 2
        assert!(check(&cl_density(2.0, 2), &block));
        assert!(!check(&cl_density(1.9, 2), &block));
        // l = 1 sums every category: 2 ≤ c · 3
        assert!(check(&cl_density(0.67, 1), &block));
        assert!(!check(&cl_density(0.66, 1), &block));
    }

    #[test]
    fn dilution_exempts_the_dont_care_set() {
        let block = [COLD, FLU, FLU, CANCER];
        // Y holds 3/4: above d = 1/2 unless μ-dilution exempts it
        assert!(!check(&density(0.5, None), &block));
        assert!(check(&density(0.5, Some(0.75)), &block));
        assert!(!check(&density(0.5, Some(0.76)), &block));
        assert!(check(&dilution(0.75), &block));
        assert!(!check(&dilution(0.8), &block));
        assert!(check(&dilution(0.0), &[CANCER]));
        assert!(!check(&dilution(0.01), &[CANCER]));
        // with the exemption a don't-care class passes d-density however small d is
        assert!(check(&density(0.1, Some(0.5)), &[COLD]));
        assert!(!check(&density(0.1, None), &[COLD]));
    }

    #[test]
    fn describes_and_bounds() {
        assert_eq!(
            l_categorical(3).describe(),
            "3-categorical-diversity on 'diagnosis'"
        );
        assert_eq!(density(0.5, None).describe(), "0.5-density on 'diagnosis'");
        assert_eq!(
            density(0.5, Some(0.2)).describe(),
            "0.5-density with 0.2-dilution on 'diagnosis'"
        );
        assert_eq!(dilution(0.25).describe(), "0.25-dilution on 'diagnosis'");
        assert_eq!(
            cat_recursive(2.0, 2).describe(),
            "(2,2)-categorical-recursive-diversity on 'diagnosis'"
        );
        assert_eq!(
            cl_density(1.5, 2).describe(),
            "(1.5,2)-density on 'diagnosis'"
        );
        assert_eq!(density(0.5, None).min_class_size(), 2);
        assert_eq!(density(0.3, None).min_class_size(), 4);
        assert_eq!(density(0.25, None).min_class_size(), 4);
        assert_eq!(density(1.0, None).min_class_size(), 1);
        assert_eq!(density(0.3, Some(0.1)).min_class_size(), 1);
        assert_eq!(l_categorical(3).min_class_size(), 3);
    }

    #[test]
    fn rejects_inconsistent_categories() {
        assert!(Categories::new(65, vec![], vec![]).is_none());
        assert!(Categories::new(1, vec![0b10], vec![false]).is_none());
        assert!(Categories::new(1, vec![0b1], vec![true]).is_none());
        assert!(Categories::new(1, vec![0b1], vec![]).is_none());
        assert!(Categories::new(64, vec![u64::MAX], vec![false]).is_some());
    }

    #[test]
    fn monotonicity_flags() {
        assert!(l_categorical(2).is_monotone_with_suppression());
        assert!(!density(0.5, None).is_monotone_with_suppression());
        assert!(!dilution(0.5).is_monotone_with_suppression());
        assert!(!cat_recursive(2.0, 2).is_monotone_with_suppression());
        assert!(!cl_density(2.0, 2).is_monotone_with_suppression());
        let models: [&dyn PrivacyModel; 5] = [
            &l_categorical(2),
            &density(0.5, None),
            &dilution(0.5),
            &cat_recursive(2.0, 2),
            &cl_density(2.0, 2),
        ];
        assert!(models.iter().all(|m| m.is_monotone_without_suppression()));
    }

    /// The counterexamples behind the flags: a passing class merged with a failing one fails.
    #[test]
    fn suppression_breaks_the_density_models() {
        let passing = [CANCER, TB];
        let failing = [CANCER; 6];
        let merged: Vec<u32> = passing.iter().chain(&failing).copied().collect();
        for model in [
            &density(0.5, None) as &dyn PrivacyModel,
            &cat_recursive(1.0, 1),
            &cl_density(1.0, 2),
        ] {
            assert!(check(model, &passing), "{}", model.describe());
            assert!(!check(model, &failing), "{}", model.describe());
            assert!(!check(model, &merged), "{}", model.describe());
        }
        assert!(check(&dilution(1.0), &[COLD]));
        assert!(!check(&dilution(1.0), &[COLD, CANCER]));
    }

    /// Random classes over 6 values in 4 overlapping categories plus Y, for the properties below.
    struct Random {
        state: u64,
    }
    impl Random {
        fn below(&mut self, n: u64) -> u64 {
            self.state = self
                .state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.state >> 33) % n
        }
        fn categories(&mut self) -> Categories {
            // codes 0, 1 don't-care; codes 2..8 in 1–3 of 4 categories each
            let mut masks = vec![0, 0];
            for _ in 2..8 {
                let mut m = 0;
                while m == 0 {
                    m = self.below(16);
                }
                masks.push(m);
            }
            Categories::new(
                4,
                masks,
                vec![true, true, false, false, false, false, false, false],
            )
            .unwrap()
        }
        fn class(&mut self) -> Vec<u32> {
            let n = 1 + self.below(8);
            (0..n).map(|_| self.below(8) as u32).collect()
        }
    }

    fn all_models(categories: &Categories) -> Vec<Box<dyn PrivacyModel>> {
        let dont_care: Vec<bool> = (0..8).map(|c| c < 2).collect();
        let mut models: Vec<Box<dyn PrivacyModel>> = Vec::new();
        for l in 1..=4 {
            models.push(Box::new(LCategoricalDiversity {
                slot: 0,
                attribute: "s".into(),
                l,
                categories: categories.clone(),
            }));
        }
        for d in [0.34, 0.5, 0.75] {
            for mu in [None, Some(0.2)] {
                models.push(Box::new(DDensity {
                    slot: 0,
                    attribute: "s".into(),
                    d: decimal(d),
                    mu: mu.map(decimal),
                    categories: categories.clone(),
                }));
            }
        }
        models.push(Box::new(MuDilution {
            slot: 0,
            attribute: "s".into(),
            mu: decimal(0.3),
            dont_care,
        }));
        for (c, l) in [(1.0, 1), (1.0, 2), (2.0, 2), (0.5, 3)] {
            models.push(Box::new(ClCategoricalRecursiveDiversity {
                slot: 0,
                attribute: "s".into(),
                c: decimal(c),
                l,
                categories: categories.clone(),
            }));
            models.push(Box::new(ClDensity {
                slot: 0,
                attribute: "s".into(),
                c: decimal(c),
                l,
                categories: categories.clone(),
            }));
        }
        models
    }

    /// Note §2.7: passing classes merge into a passing class; with suppression, the models that claim it
    /// also pass any merge that involves a passing class.
    #[test]
    fn merges_keep_passing_classes_passing() {
        let mut rng = Random { state: 7 };
        for _ in 0..3_000 {
            let categories = rng.categories();
            let models = all_models(&categories);
            let (a, b) = (rng.class(), rng.class());
            let merged: Vec<u32> = a.iter().chain(&b).copied().collect();
            for m in &models {
                let (pa, pb, pm) = (
                    check(m.as_ref(), &a),
                    check(m.as_ref(), &b),
                    check(m.as_ref(), &merged),
                );
                if pa && pb {
                    assert!(pm, "{}: {a:?} + {b:?}", m.describe());
                }
                if m.is_monotone_with_suppression() && (pa || pb) {
                    assert!(pm, "{} with suppression: {a:?} + {b:?}", m.describe());
                }
            }
        }
    }

    /// Theorems 3.5.4 and 3.5.9: deleting every record of one category leaves an l-categorically
    /// diverse class (l − 1)-categorically diverse, and a (c,l)-categorical recursive one
    /// (c,l − 1)-categorical recursive; and d-density implies a minimum cover of at least ⌈1/d⌉.
    #[test]
    fn removal_and_density_bounds() {
        let mut rng = Random { state: 11 };
        for _ in 0..5_000 {
            let categories = rng.categories();
            let class = rng.class();
            let category = rng.below(4) as usize;
            let rest: Vec<u32> = class
                .iter()
                .copied()
                .filter(|&v| categories.masks[v as usize] >> category & 1 == 0)
                .collect();
            let with = |l: u64| LCategoricalDiversity {
                slot: 0,
                attribute: "s".into(),
                l,
                categories: categories.clone(),
            };
            for l in 2..=4 {
                if check(&with(l), &class) && !rest.is_empty() {
                    assert!(check(&with(l - 1), &rest), "l = {l}: {class:?} → {rest:?}");
                }
            }
            let recursive = |c: f64, l: u64| ClCategoricalRecursiveDiversity {
                slot: 0,
                attribute: "s".into(),
                c: decimal(c),
                l,
                categories: categories.clone(),
            };
            for (c, l) in [(1.0, 2), (2.0, 2), (0.5, 3), (1.5, 3)] {
                if check(&recursive(c, l), &class) && !rest.is_empty() {
                    assert!(
                        check(&recursive(c, l - 1), &rest),
                        "({c},{l}): {class:?} → {rest:?}"
                    );
                }
            }
            let min_cover = minimum_cover(&categories, &histogram(&class)).unwrap();
            for (d, bound) in [(0.25, 4), (0.3, 4), (0.34, 3), (0.5, 2), (1.0, 1)] {
                let model = DDensity {
                    slot: 0,
                    attribute: "s".into(),
                    d: decimal(d),
                    mu: None,
                    categories: categories.clone(),
                };
                if check(&model, &class) {
                    assert!(
                        min_cover >= bound,
                        "d = {d}: {class:?} has cover {min_cover}"
                    );
                }
            }
        }
    }

    #[test]
    fn covers_agree_with_subset_enumeration() {
        let mut rng = Random { state: 3 };
        for _ in 0..2_000 {
            let categories = rng.categories();
            let class = rng.class();
            let profile = categories.profile(&histogram(&class));
            let masks: Vec<u64> = profile.values.iter().map(|&(m, _)| m).collect();
            let brute = (0u64..16)
                .filter(|u| masks.iter().all(|m| m & u != 0))
                .map(|u| u64::from(u.count_ones()))
                .min()
                .unwrap()
                + u64::from(profile.dont_care > 0);
            assert_eq!(min_cover(&profile), Some(brute), "{class:?}");
            for l in 0..=4u64 {
                let best = (0u64..16)
                    .filter(|u| u64::from(u.count_ones()) <= l)
                    .map(|u| {
                        profile
                            .values
                            .iter()
                            .filter(|&&(m, _)| m & u != 0)
                            .map(|&(_, n)| n)
                            .sum::<u64>()
                    })
                    .max()
                    .unwrap();
                assert_eq!(profile.max_coverage(4, l), best, "{class:?} l = {l}");
            }
        }
    }
}
