//! The independent output checks of the categorical and linear models (Hsu 2008, §3.5–3.6; note
//! `notes/hsu-2008-sensitive-attribute-protection.md` §2.5–2.6, §5), written again from the definitions
//! on the rendered strings of one class's sensitive column, without the engine's bitmasks, codes or
//! class-function tables:
//! - covers and coverings are found by brute force over subsets of the sets the spec names (only sets
//!   that hold a value of the class can matter, so only those are enumerated);
//! - densities compare integer counts with the decimal parameters exactly ([`crate::core::privacy::Decimal`]);
//! - the linear checks parse each rendered value as a number, apply the class function by scanning its
//!   breakpoints, and allow the same absolute tolerance the engine used (carried in the requirement).

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use crate::core::privacy::{ClassFunction, Decimal};

use super::requirement::CategorySets;

/// l-categorical diversity (Def 3.5.3): no cover of the class's values by fewer than `l` sets of
/// `{Y} ∪ categories`.
pub(crate) fn l_categorical(counts: &HashMap<&str, u64>, l: u64, sets: &CategorySets) -> bool {
    let family: Vec<&BTreeSet<String>> = std::iter::once(&sets.dont_care)
        .chain(&sets.categories)
        .collect();
    !has_cover_within(counts, &family, l.saturating_sub(1))
}

/// d-density control (Def 3.5.5): every category and Y hold at most `d` of the class; with `mu`, Y
/// holds at least `mu` instead.
pub(crate) fn d_density(
    counts: &HashMap<&str, u64>,
    d: Decimal,
    mu: Option<Decimal>,
    sets: &CategorySets,
) -> bool {
    let size: u64 = counts.values().sum();
    let y = records_in(counts, &sets.dont_care);
    let y_ok = match mu {
        Some(mu) => mu.cmp_scaled(y, size) != Ordering::Less,
        None => d.cmp_scaled(y, size) != Ordering::Greater,
    };
    y_ok && sets
        .categories
        .iter()
        .all(|set| d.cmp_scaled(records_in(counts, set), size) != Ordering::Greater)
}

/// μ-dilution (Def 3.5.6): the don't-care values hold at least `mu` of the class.
pub(crate) fn mu_dilution(
    counts: &HashMap<&str, u64>,
    mu: Decimal,
    dont_care: &BTreeSet<String>,
) -> bool {
    let size: u64 = counts.values().sum();
    mu.cmp_scaled(records_in(counts, dont_care), size) != Ordering::Less
}

/// (c,l)-categorical recursive diversity (Def 3.5.8, non-strict, in counts): the largest category
/// count is at most `c` times the records outside the best `l` categories.
pub(crate) fn cl_categorical_recursive(
    counts: &HashMap<&str, u64>,
    c: Decimal,
    l: u64,
    sets: &CategorySets,
) -> bool {
    let size: u64 = counts.values().sum();
    let largest = sets
        .categories
        .iter()
        .map(|set| records_in(counts, set))
        .max()
        .unwrap_or(0);
    let uncovered = size - best_coverage(counts, &sets.categories, l);
    c.cmp_scaled(largest, uncovered) != Ordering::Greater
}

/// (c,l)-density control (Def 3.5.10): with the category counts sorted f1 ≥ f2 ≥ …,
/// f1 ≤ c · (f_l + … + f_n).
pub(crate) fn cl_density(
    counts: &HashMap<&str, u64>,
    c: Decimal,
    l: u64,
    sets: &CategorySets,
) -> bool {
    let mut per_category: Vec<u64> = sets
        .categories
        .iter()
        .map(|set| records_in(counts, set))
        .filter(|&n| n > 0)
        .collect();
    per_category.sort_unstable_by(|a, b| b.cmp(a));
    let largest = per_category.first().copied().unwrap_or(0);
    let tail: u64 = per_category.iter().skip(l.saturating_sub(1) as usize).sum();
    c.cmp_scaled(largest, tail) != Ordering::Greater
}

/// δ-range control (Def 3.6.2): `cf(max) − cf(min) ≥ delta` (within `tolerance`); a value that is not a
/// number fails the class.
pub(crate) fn delta_range(
    counts: &HashMap<&str, u64>,
    delta: f64,
    function: &ClassFunction,
    tolerance: f64,
) -> bool {
    match class_points(counts, function) {
        Some(points) if !points.is_empty() => {
            points[points.len() - 1] - points[0] >= delta - tolerance
        }
        _ => false,
    }
}

/// (l,r)-linear diversity (Def 3.6.4): the class's cf values need at least `l` intervals of width `r`
/// (widened by `tolerance`) to be covered; a value that is not a number fails the class.
pub(crate) fn lr_linear(
    counts: &HashMap<&str, u64>,
    l: u64,
    r: f64,
    function: &ClassFunction,
    tolerance: f64,
) -> bool {
    match class_points(counts, function) {
        Some(points) => {
            let mut covers = 0u64;
            let mut reach = f64::NEG_INFINITY;
            for &x in &points {
                if x > reach {
                    covers += 1;
                    reach = x + r + tolerance;
                }
            }
            covers >= l
        }
        None => false,
    }
}

/// Records of the class whose value is in `set`.
fn records_in(counts: &HashMap<&str, u64>, set: &BTreeSet<String>) -> u64 {
    counts
        .iter()
        .filter(|(v, _)| set.contains(**v))
        .map(|(_, &n)| n)
        .sum()
}

/// Whether at most `budget` sets of `family` cover every value of the class: pick a value no chosen set
/// covers yet, and branch on every set holding it (some set of any cover must hold it), at most
/// `budget` deep. Exact, and bounded by the branching prepare already limits for the engine.
fn has_cover_within(
    counts: &HashMap<&str, u64>,
    family: &[&BTreeSet<String>],
    budget: u64,
) -> bool {
    fn search(uncovered: &[&str], family: &[&BTreeSet<String>], budget: u64) -> bool {
        let Some(first) = uncovered.first() else {
            return true;
        };
        budget > 0
            && family.iter().filter(|set| set.contains(*first)).any(|set| {
                let rest: Vec<&str> = uncovered
                    .iter()
                    .copied()
                    .filter(|v| !set.contains(*v))
                    .collect();
                search(&rest, family, budget - 1)
            })
    }
    let values: Vec<&str> = counts.keys().copied().collect();
    search(&values, family, budget)
}

/// Records covered by the best `l` categories (all of them when there are at most `l`).
fn best_coverage(counts: &HashMap<&str, u64>, categories: &[BTreeSet<String>], l: u64) -> u64 {
    // categories holding none of the class's values cover nothing
    let categories: Vec<&BTreeSet<String>> = categories
        .iter()
        .filter(|set| counts.keys().any(|v| set.contains(*v)))
        .collect();
    let size = (l as usize).min(categories.len());
    let mut best = 0;
    subsets(categories.len(), size, &mut |chosen| {
        let covered: u64 = counts
            .iter()
            .filter(|(v, _)| chosen.iter().any(|&i| categories[i].contains(**v)))
            .map(|(_, &n)| n)
            .sum();
        best = best.max(covered);
    });
    best
}

/// Calls `visit` with every `size`-subset of `0..n`, as ascending indices.
fn subsets(n: usize, size: usize, visit: &mut dyn FnMut(&[usize])) {
    fn walk(
        n: usize,
        size: usize,
        start: usize,
        chosen: &mut Vec<usize>,
        visit: &mut dyn FnMut(&[usize]),
    ) {
        if chosen.len() == size {
            visit(chosen);
            return;
        }
        for i in start..n {
            chosen.push(i);
            walk(n, size, i + 1, chosen, visit);
            chosen.pop();
        }
    }
    walk(n, size, 0, &mut Vec::with_capacity(size), visit);
}

/// The class-function values of the class's distinct values, ascending; `None` if one is not a number.
fn class_points(counts: &HashMap<&str, u64>, function: &ClassFunction) -> Option<Vec<f64>> {
    let mut points = Vec::with_capacity(counts.len());
    for value in counts.keys() {
        let x: f64 = value.trim().parse().ok().filter(|x: &f64| x.is_finite())?;
        points.push(evaluate(function, x));
    }
    points.sort_unstable_by(f64::total_cmp);
    Some(points)
}

/// cf(x), by scanning the breakpoints for the segment that holds `x`.
fn evaluate(function: &ClassFunction, x: f64) -> f64 {
    let ClassFunction::PiecewiseLinear(points) = function else {
        return x;
    };
    let (Some(&(first_x, first_y)), Some(&(last_x, last_y))) = (points.first(), points.last())
    else {
        return x;
    };
    if x <= first_x {
        return first_y;
    }
    if x >= last_x {
        return last_y;
    }
    for pair in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        if x0 <= x && x <= x1 {
            return y0 + (x - x0) / (x1 - x0) * (y1 - y0);
        }
    }
    last_y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts<'a>(values: &[&'a str]) -> HashMap<&'a str, u64> {
        let mut h = HashMap::new();
        for v in values {
            *h.entry(*v).or_insert(0) += 1;
        }
        h
    }

    fn set(values: &[&str]) -> BTreeSet<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    /// Note §7 "Categorical vectors": Y = {cold, flu, rash}, Terminal = {cancer, AIDS},
    /// Infectious = {AIDS, TB, hepatitis}.
    fn illness() -> CategorySets {
        CategorySets {
            categories: vec![set(&["cancer", "AIDS"]), set(&["AIDS", "TB", "hepatitis"])],
            dont_care: set(&["cold", "flu", "rash"]),
        }
    }

    fn decimal(x: f64) -> Decimal {
        Decimal::from_f64(x).unwrap()
    }

    #[test]
    fn categorical_vectors_of_the_note() {
        for (values, cover) in [
            (&["AIDS", "AIDS", "cold"][..], 2),
            (&["AIDS", "cancer", "TB"][..], 2),
            (&["cold", "cancer", "TB"][..], 3),
            (&["cold", "cancer"][..], 2),
        ] {
            assert!(
                l_categorical(&counts(values), cover, &illness()),
                "{values:?}"
            );
            assert!(
                !l_categorical(&counts(values), cover + 1, &illness()),
                "{values:?}"
            );
        }
        let block = counts(&["cold", "cancer", "TB", "hepatitis"]);
        let density = |d: f64| d_density(&block, decimal(d), None, &illness());
        assert!(density(0.5));
        assert!(!density(0.49));
        let recursive = |c: f64| cl_categorical_recursive(&block, decimal(c), 2, &illness());
        assert!(recursive(2.0));
        assert!(!recursive(1.99));
        let density_from_l = |c: f64| cl_density(&block, decimal(c), 2, &illness());
        assert!(density_from_l(2.0));
        assert!(!density_from_l(1.9));
    }

    #[test]
    fn dilution() {
        let class = counts(&["cold", "flu", "flu", "cancer"]);
        let with_mu = |mu: f64| d_density(&class, decimal(0.5), Some(decimal(mu)), &illness());
        assert!(with_mu(0.75));
        assert!(!with_mu(0.8));
        let alone = |mu: f64| mu_dilution(&class, decimal(mu), &set(&["cold", "flu"]));
        assert!(alone(0.75));
        assert!(!alone(0.76));
    }

    /// Note §6.8: range 9; r = 1 needs 5 covers, r = 2 needs 4.
    #[test]
    fn linear_vectors_of_the_note() {
        let class = counts(&["0", "1", "2", "2", "2.5", "4", "5", "6", "8", "9", "9"]);
        let range = |class: &HashMap<&str, u64>, delta: f64| {
            delta_range(class, delta, &ClassFunction::Identity, 1e-9)
        };
        assert!(range(&class, 9.0));
        assert!(!range(&class, 9.5));
        let linear = |l: u64, r: f64| lr_linear(&class, l, r, &ClassFunction::Identity, 1e-9);
        assert!(linear(5, 1.0));
        assert!(!linear(6, 1.0));
        assert!(linear(4, 2.0));
        assert!(!linear(5, 2.0));
        // a value that is not a number fails the class
        assert!(!range(&counts(&["1", "n/a"]), 0.0));
        // piecewise: 4000 → 0.5, 16500 → 1.5, beyond the last point constant
        let income =
            ClassFunction::PiecewiseLinear(vec![(0.0, 0.0), (8000.0, 1.0), (25000.0, 2.0)]);
        assert_eq!(evaluate(&income, 4000.0), 0.5);
        assert_eq!(evaluate(&income, 16500.0), 1.5);
        assert_eq!(evaluate(&income, 90000.0), 2.0);
        assert_eq!(evaluate(&income, -1.0), 0.0);
    }
}
