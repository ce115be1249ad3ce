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

/// Per-record volume inflation, computed on demand from the classes and box counts (at 10M records two
/// per-record arrays of floats would cost 160 MB).
#[derive(Debug, Clone, Copy)]
pub struct Inflation<'a> {
    published: &'a Classes,
    original: &'a Classes,
    boxes: &'a [u64],
}

impl<'a> Inflation<'a> {
    /// The inflation of every record, from the published and original classes and the published classes'
    /// box counts.
    pub fn new(published: &'a Classes, original: &'a Classes, boxes: &'a [u64]) -> Self {
        Self {
            published,
            original,
            boxes,
        }
    }

    /// Number of records.
    pub fn records(&self) -> usize {
        self.published.class_of.len()
    }

    /// `Vi(t) = Pr(q*)/Pr(q)` of record `r`.
    pub fn ratio(&self, r: usize) -> f64 {
        let p = self.published.class_of[r] as usize;
        let o = self.original.class_of[r] as usize;
        self.boxes[p] as f64 / self.original.sizes[o] as f64
    }

    /// `Vi_e(t) = log₂(Pr(q*)/Pr(q))` of record `r`.
    pub fn entropy(&self, r: usize) -> f64 {
        self.ratio(r).log2()
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
    pub fn of(inflation: &Inflation<'_>) -> Self {
        let n = inflation.records();
        Self {
            basis: BASIS,
            entropy_sum: (0..n).map(|r| inflation.entropy(r)).sum(),
            mean: if n == 0 {
                0.0
            } else {
                (0..n).map(|r| inflation.ratio(r)).sum::<f64>() / n as f64
            },
        }
    }
}
