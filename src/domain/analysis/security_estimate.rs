//! The ψ security estimate of a published table (Hsu 2008 §3.6; implementation note
//! `hsu-2008-sensitive-attribute-protection.md` §2.6 and §6.8), reported for every numeric sensitive
//! attribute that a linear model (δ-range control or (l,r)-linear diversity) protects. A diagnostic, not
//! a gate: the thesis gives ψ no pass/fail standard.
//!
//! ψ is computed class by class in cf-space (through the model's class function) with each value's
//! bump normalized to peak 1 ([`normalized_security_estimate`]), so ψ at a value counts the class's
//! values near it, itself included. σ, the similarity scale, is the `r` of the attribute's first
//! (l,r)-linear model, or else the `δ` of its first δ-range model. The report gives:
//! - `lowest`: the smallest ψ of any published value: the value an attacker most easily eliminates
//!   (1 means a value alone within about σ);
//! - `highest`: the largest ψ, the peak;
//! - `highest_share`: the largest ψ of a value divided by its class's size: near 1, a class whose values
//!   all lie within about σ of one value (the thesis's positive-disclosure risk).
//!
//! Figures are `null` when no record is published or σ is 0. No value of the table is reported.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::core::data::Table;
use crate::core::privacy::{normalized_security_estimate, ClassFunction};

/// What ψ says about one sensitive attribute of a published table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecurityEstimate {
    /// The similarity scale σ in cf-space.
    pub sigma: f64,
    /// The smallest ψ of a published value.
    pub lowest: Option<f64>,
    /// The largest ψ of a published value.
    pub highest: Option<f64>,
    /// The largest ψ of a value divided by the size of its class.
    pub highest_share: Option<f64>,
}

/// A numeric sensitive attribute to estimate: its column, each code's cf value (NaN for a value that is
/// not a number), and σ.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearDiagnostic {
    /// The sensitive column.
    pub column: usize,
    /// cf of every dictionary code.
    pub cf: Vec<f64>,
    /// The similarity scale.
    pub sigma: f64,
}

/// The similarity scale a linear model gives the ψ estimate of its attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearScale {
    /// The sensitive column's name.
    pub column: String,
    /// Whether the scale is the `r` of an (l,r)-linear model (else the `δ` of a δ-range model).
    pub from_cover: bool,
    /// The scale σ.
    pub sigma: f64,
    /// The model's class function.
    pub function: ClassFunction,
}

/// The attributes the linear models protect, one per column: σ from the first (l,r)-linear model on it,
/// else from the first δ-range model.
pub fn linear_diagnostics(table: &Table, scales: &[LinearScale]) -> Vec<LinearDiagnostic> {
    let mut chosen: BTreeMap<&str, (bool, f64, &ClassFunction)> = BTreeMap::new();
    for scale in scales {
        let column = scale.column.as_str();
        let from_cover = scale.from_cover;
        match chosen.get(column) {
            Some((true, _, _)) => {}
            Some((false, _, _)) if !from_cover => {}
            _ => {
                chosen.insert(column, (from_cover, scale.sigma, &scale.function));
            }
        }
    }
    chosen
        .into_iter()
        .filter_map(|(name, (_, sigma, function))| {
            let column = table.column_index(name)?;
            let cf = table
                .column(column)
                .dictionary
                .values()
                .map(|v| {
                    v.trim()
                        .parse::<f64>()
                        .map_or(f64::NAN, |x| function.apply(x))
                })
                .collect();
            Some(LinearDiagnostic { column, cf, sigma })
        })
        .collect()
}

/// ψ over the classes `keys` assigns (one key per record), leaving out records with `include(r)`
/// false.
pub fn estimate(
    keys: &[u32],
    codes: &[u32],
    include: impl Fn(usize) -> bool,
    diagnostic: &LinearDiagnostic,
) -> SecurityEstimate {
    let mut estimate = SecurityEstimate {
        sigma: diagnostic.sigma,
        lowest: None,
        highest: None,
        highest_share: None,
    };
    if diagnostic.sigma.is_nan() || diagnostic.sigma <= 0.0 {
        return estimate;
    }
    // (class, cf) of every published record with a numeric value, by class then cf
    let mut pairs: Vec<(u32, f64)> = keys
        .iter()
        .zip(codes)
        .enumerate()
        .filter(|&(r, _)| include(r))
        .map(|(_, (&k, &code))| (k, diagnostic.cf.get(code as usize).copied()))
        .filter_map(|(k, cf)| cf.filter(|x| x.is_finite()).map(|x| (k, x)))
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let (mut values, mut counts) = (Vec::new(), Vec::new());
    for class in pairs.chunk_by(|a, b| a.0 == b.0) {
        values.clear();
        counts.clear();
        for &(_, x) in class {
            match counts.last_mut() {
                Some(n) if values.last() == Some(&x) => *n += 1,
                _ => {
                    values.push(x);
                    counts.push(1u64);
                }
            }
        }
        let size = class.len() as f64;
        for psi in normalized_security_estimate(&values, &counts, diagnostic.sigma) {
            estimate.lowest = Some(estimate.lowest.map_or(psi, |m: f64| m.min(psi)));
            estimate.highest = Some(estimate.highest.map_or(psi, |m: f64| m.max(psi)));
            let share = psi / size;
            estimate.highest_share =
                Some(estimate.highest_share.map_or(share, |m: f64| m.max(share)));
        }
    }
    estimate
}

/// ψ of every diagnosed attribute over the classes `keys` assigns, without the records `suppressed`
/// marks, by column name.
pub fn estimates(
    table: &Table,
    keys: &[u32],
    suppressed: &[bool],
    diagnostics: &[LinearDiagnostic],
) -> BTreeMap<String, SecurityEstimate> {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let column = table.column(diagnostic.column);
            (
                column.name.clone(),
                estimate(keys, &column.codes, |r| !suppressed[r], diagnostic),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(cf: Vec<f64>, sigma: f64) -> LinearDiagnostic {
        LinearDiagnostic {
            column: 0,
            cf,
            sigma,
        }
    }

    /// Two classes by hand, σ = 1: {0, 0, 1} and {10, 20}.
    /// ψ(0) = 2 + e^−½ = 2.6065, ψ(1) = 1 + 2e^−½ = 2.2131; ψ(10) = ψ(20) = 1 (+ e^−50).
    #[test]
    fn summarises_classes_computed_by_hand() {
        // codes 0..4 have cf 0, 1, 10, 20, and code 4 is not a number
        let d = diagnostic(vec![0.0, 1.0, 10.0, 20.0, f64::NAN], 1.0);
        let keys = [7, 7, 7, 3, 3, 3];
        let codes = [0, 0, 1, 2, 3, 4];
        let e = estimate(&keys, &codes, |_| true, &d);
        let half = (-0.5f64).exp();
        assert!((e.lowest.unwrap() - 1.0).abs() < 1e-12);
        assert!((e.highest.unwrap() - (2.0 + half)).abs() < 1e-12);
        // largest share: ψ(0) / 3 in the first class (the second class's 1 / 2 is smaller)
        assert!((e.highest_share.unwrap() - (2.0 + half) / 3.0).abs() < 1e-12);
        // leaving the lone class out changes the lowest
        let first_only = estimate(&keys, &codes, |r| r < 3, &d);
        assert!((first_only.lowest.unwrap() - (1.0 + 2.0 * half)).abs() < 1e-12);
    }

    #[test]
    fn is_null_without_records_or_scale() {
        let d = diagnostic(vec![1.0], 1.0);
        let none = estimate(&[0], &[0], |_| false, &d);
        assert_eq!(
            (none.lowest, none.highest, none.highest_share),
            (None, None, None)
        );
        let flat = estimate(&[0], &[0], |_| true, &diagnostic(vec![1.0], 0.0));
        assert_eq!(flat.lowest, None);
        assert_eq!(flat.sigma, 0.0);
    }

    #[test]
    fn sigma_comes_from_r_before_delta() {
        let table = Table::from_rows(&["salary"], &[vec!["100"], vec!["x"]]);
        let requirement = |linear: bool, scale: f64| LinearScale {
            column: "salary".into(),
            from_cover: linear,
            sigma: scale,
            function: ClassFunction::Identity,
        };
        let found = linear_diagnostics(
            &table,
            &[
                requirement(false, 50.0),
                requirement(true, 5.0),
                requirement(true, 7.0),
            ],
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].sigma, 5.0);
        assert_eq!(found[0].cf[0], 100.0);
        assert!(found[0].cf[1].is_nan());
        let delta_only = linear_diagnostics(&table, &[requirement(false, 50.0)]);
        assert_eq!(delta_only[0].sigma, 50.0);
        assert!(linear_diagnostics(&table, &[]).is_empty());
    }
}
