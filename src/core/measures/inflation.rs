//! Volume inflation (Hsu 2008, Defs 4.4.4–4.4.5; `notes/hsu-2008-sensitive-attribute-protection.md`
//! §3.4): `Vi(q, q*) = Pr(q*)/Pr(q)` and its entropy form `Vi_e = log₂ Vi`, per record.
//!
//! Basis: the empirical joint distribution of the original table, not independent marginals. `Pr(q)` is
//! the share of records with exactly the record's original quasi-identifier values, and `Pr(q*)` the share
//! whose values all lie in the record's published cells (the box `q*`, counted by
//! [`super::classes::box_counts`]). A record's own values lie in its box, so `Vi ≥ 1` and `Vi_e ≥ 0`. (Under
//! independent marginals `Vi_e` would equal the record's `Π_ne`; the joint is exact for the table at hand.)

use serde::Serialize;

use super::classes::Classes;

/// The report's name for the basis.
pub const BASIS: &str = "empirical_joint";

/// Per-record volume inflation.
#[derive(Debug, Clone, Default)]
pub struct Inflation {
    /// `Vi_e(t) = log₂(Pr(q*)/Pr(q))` per record.
    pub entropy: Vec<f64>,
    /// `Vi(t) = Pr(q*)/Pr(q)` per record.
    pub ratio: Vec<f64>,
}

impl Inflation {
    /// The inflation of every record, from the published and original classes and the published classes'
    /// box counts.
    pub fn new(published: &Classes, original: &Classes, boxes: &[u64]) -> Self {
        let (entropy, ratio) = published
            .class_of
            .iter()
            .zip(&original.class_of)
            .map(|(&p, &o)| {
                let ratio = boxes[p as usize] as f64 / original.sizes[o as usize] as f64;
                (ratio.log2(), ratio)
            })
            .unzip();
        Self { entropy, ratio }
    }
}

/// Volume inflation as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumeInflation {
    /// How `Pr(q*)` is estimated: always `empirical_joint`.
    pub basis: &'static str,
    /// `Σ_t Vi_e(t)`, in bits.
    pub entropy_sum: f64,
    /// The mean of `Vi(t)` over records (1 when nothing is generalized; 0 for an empty table).
    pub mean: f64,
}

impl VolumeInflation {
    /// Sums the per-record values.
    pub fn of(inflation: &Inflation) -> Self {
        let n = inflation.ratio.len();
        Self {
            basis: BASIS,
            entropy_sum: inflation.entropy.iter().sum(),
            mean: if n == 0 {
                0.0
            } else {
                inflation.ratio.iter().sum::<f64>() / n as f64
            },
        }
    }
}
