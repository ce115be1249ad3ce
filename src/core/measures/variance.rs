//! Tuple-wise variance loss and the hybrid measure (Hsu 2008, Defs 4.4.1, 4.4.2 and 4.4.6;
//! `notes/hsu-2008-sensitive-attribute-protection.md` §3.4, §6.4 and §6.7).
//!
//! For a sensitive attribute S, `Var_t` is the EMD between the whole table's distribution of S and the
//! distribution of S in t's class (a [`ClassDistance`]); `Var_T(Q) = Σ_t Var_t` over the original
//! q-blocks and `Var_T*(Q*)` over the published q*-blocks. Then:
//! - `Π_tv = Var_T(Q) − Var_T*(Q*)`. It is ≥ 0 when every original q-block lies inside one published
//!   block (a coarsening, Lemma 4.4.3 with the note's correction), but negative when local recoding splits
//!   original blocks (Table 4.3-2(1): −2).
//! - the hybrid `Π' = Σ_t (Var_t − Var_t*)·Vi_e(t)`, and the same weighted by `Vi(t)`. Lemma 4.4.7 claims
//!   it is monotone; it is not, and it can be negative even for a coarsening (note §6.7: −2/3, and −1 with
//!   `Vi`).
//!
//! Every value is reported raw, never clamped.

use serde::Serialize;

use super::classes::Classes;
use super::distance::ClassDistance;
use super::inflation::Inflation;

/// A sensitive attribute and the distance its variance is measured with.
#[derive(Debug, Clone, Copy)]
pub struct SensitiveColumn<'a> {
    /// Column name (for reports only).
    pub name: &'a str,
    /// One code per record.
    pub codes: &'a [u32],
    /// The EMD between a class's distribution and the table's.
    pub distance: &'a dyn ClassDistance,
}

/// The variance measures of one sensitive attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarianceLoss {
    /// The sensitive attribute.
    pub attribute: String,
    /// The ground distance of the EMD.
    pub ground_distance: String,
    /// `Var_T(Q)`: over the original table's classes.
    pub original: f64,
    /// `Var_T*(Q*)`: over the published classes.
    pub anonymized: f64,
    /// `Π_tv = original − anonymized` (may be negative).
    pub loss: f64,
    /// `Π'` weighted by `Vi_e` (may be negative).
    pub hybrid: f64,
    /// `Π'` weighted by `Vi` (may be negative).
    pub hybrid_ratio: f64,
}

/// `Var_t` of each class of `classes`.
fn class_variance(classes: &Classes, sensitive: &SensitiveColumn<'_>) -> Vec<f64> {
    let mut variance = Vec::with_capacity(classes.len());
    classes.for_each_histogram(sensitive.codes, |class, histogram| {
        variance.push(sensitive.distance.distance(histogram, classes.sizes[class]))
    });
    variance
}

impl VarianceLoss {
    /// The measures of `sensitive` between the original and the published classes.
    pub fn of(
        sensitive: &SensitiveColumn<'_>,
        original: &Classes,
        published: &Classes,
        inflation: &Inflation<'_>,
    ) -> Self {
        let before = class_variance(original, sensitive);
        let after = class_variance(published, sensitive);
        let total = |classes: &Classes, var: &[f64]| -> f64 {
            classes
                .sizes
                .iter()
                .zip(var)
                .map(|(&n, &v)| n as f64 * v)
                .sum()
        };
        let var_original = total(original, &before);
        let var_anonymized = total(published, &after);
        let (mut hybrid, mut hybrid_ratio) = (0.0, 0.0);
        for (r, (&o, &p)) in original
            .class_of
            .iter()
            .zip(&published.class_of)
            .enumerate()
        {
            let change = before[o as usize] - after[p as usize];
            hybrid += change * inflation.entropy(r);
            hybrid_ratio += change * inflation.ratio(r);
        }
        Self {
            attribute: sensitive.name.to_string(),
            ground_distance: sensitive.distance.name().to_string(),
            original: var_original,
            anonymized: var_anonymized,
            loss: var_original - var_anonymized,
            hybrid,
            hybrid_ratio,
        }
    }
}
