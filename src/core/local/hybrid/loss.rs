//! Iyengar's loss metric LM as Nergiz, Gök & Özkanlı (2013, "Preservation of Utility through Hybrid
//! k-Anonymization", TrustBus, §5) use it (implementation note `nergiz-2013-hybrid-k-anonymization.md`
//! §1.9): the mean over published quasi-identifier cells of `(leaves under the value − 1) / (leaves of the
//! hierarchy − 1)`, leaf counts taken from the declared hierarchies (a one-leaf hierarchy costs 0). It is
//! computed on the published groups, so it ignores the damage relocation does (the paper says so).
//!
//! Per attribute the weighted penalty `Σ_g |g| · (leaves − 1)` is an exact integer; only the final
//! combination of the attributes is floating point. Costs of two nodes are compared with an absolute
//! tolerance of [`COST_TOLERANCE`] (LM lies in [0, 1]; the rounding error of the combination is around
//! 1e-16), so nodes whose LM is mathematically equal tie and go to the tie-break.

use crate::core::data::GeneralizationMap;

/// Absolute tolerance under which two LM values count as equal.
pub const COST_TOLERANCE: f64 = 1e-12;

/// `leaves − 1` of every label at every level, per quasi-identifier.
#[derive(Debug, Clone)]
pub(super) struct Penalties {
    by_level: Vec<Vec<Vec<u64>>>,
    denominators: Vec<u64>,
}

impl Penalties {
    /// The penalties of `maps`.
    pub(super) fn new(maps: &[&GeneralizationMap]) -> Self {
        let by_level = maps
            .iter()
            .map(|map| {
                (0..=map.max_level())
                    .map(|level| {
                        (0..map.label_count(level) as u32)
                            .map(|label| {
                                map.hierarchy().leaves_under(level, label).saturating_sub(1)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let denominators = maps
            .iter()
            .map(|map| (map.hierarchy().leaf_count() as u64).saturating_sub(1))
            .collect();
        Self {
            by_level,
            denominators,
        }
    }

    /// LM of groups with `keys` (`q` labels each, at `levels`) holding `sizes` records, out of `rows`.
    pub(super) fn loss(&self, keys: &[u32], sizes: &[u32], levels: &[u8], rows: usize) -> f64 {
        let q = levels.len();
        if q == 0 || rows == 0 {
            return 0.0;
        }
        let mut total = 0.0;
        for j in 0..q {
            if self.denominators[j] == 0 {
                continue;
            }
            let penalties = &self.by_level[j][levels[j] as usize];
            let weighted: u64 = sizes
                .iter()
                .enumerate()
                .map(|(g, &s)| u64::from(s) * penalties[keys[g * q + j] as usize])
                .sum();
            total += weighted as f64 / self.denominators[j] as f64;
        }
        total / (rows as f64 * q as f64)
    }
}
