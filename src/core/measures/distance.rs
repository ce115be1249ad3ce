//! The distance between a class's sensitive distribution and the whole table's, used by the tuple-wise
//! variance (Hsu 2008, Def 4.4.1: `Var_t = EMD(D_T, D_{t[Q]})`; note §1.4 and §3.4).
//!
//! The measures take the distance as a [`ClassDistance`], so any ground distance (ordered, hierarchical,
//! a general transport solver) plugs in. The equal distance is the default: under the equal ground distance
//! (every two distinct values are 1 apart) the EMD is the total variation `½ Σ_s |p_s − q_s|` (Li et al.
//! 2007, as the note states it in §1.4 [X]). [`EmdDistance`] wraps the engine's exact EMD.

use crate::core::privacy::EarthMovers;

/// The EMD between one class's distribution of a sensitive attribute and the table's distribution.
pub trait ClassDistance: std::fmt::Debug + Sync {
    /// The ground distance's name, for the report (e.g. `equal`).
    fn name(&self) -> &str;

    /// The distance for a class of `size` records whose sensitive values are the sorted `(code, count)`
    /// pairs of `histogram` (counts sum to `size`).
    fn distance(&self, histogram: &[(u32, u32)], size: u64) -> f64;
}

/// The engine's exact EMD ([`EarthMovers`], any of its ground distances) as a class distance.
#[derive(Debug, Clone)]
pub struct EmdDistance {
    name: &'static str,
    emd: EarthMovers,
}

impl EmdDistance {
    /// `emd`, reported under the ground distance's `name`.
    pub fn new(name: &'static str, emd: EarthMovers) -> Self {
        Self { name, emd }
    }

    /// The equal ground distance to the distribution of `codes` (codes are `0..distinct`).
    pub fn equal(codes: &[u32], distinct: usize) -> Self {
        let mut global = vec![0u64; distinct];
        for &c in codes {
            global[c as usize] += 1;
        }
        Self::new("equal", EarthMovers::equal(global))
    }
}

impl ClassDistance for EmdDistance {
    fn name(&self) -> &str {
        self.name
    }

    fn distance(&self, histogram: &[(u32, u32)], _size: u64) -> f64 {
        self.emd.distance(histogram).to_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Note §6.1: D_T = {HD 1/4, VI 1/3, C 5/12} (codes 0, 1, 2).
    fn table_2_1_1() -> EmdDistance {
        let codes = [0, 0, 1, 1, 2, 0, 1, 1, 2, 2, 2, 2];
        EmdDistance::equal(&codes, 3)
    }

    #[test]
    fn equal_distance_matches_the_note_blocks() {
        let d = table_2_1_1();
        // block 1–4 {HD 2, VI 2}: 5/12; block 5–8 {VI 2, HD 1, C 1}: 1/6; block 9–12 {C 4}: 7/12
        assert!((d.distance(&[(0, 2), (1, 2)], 4) - 5.0 / 12.0).abs() < 1e-15);
        assert!((d.distance(&[(0, 1), (1, 2), (2, 1)], 4) - 1.0 / 6.0).abs() < 1e-15);
        assert!((d.distance(&[(2, 4)], 4) - 7.0 / 12.0).abs() < 1e-15);
        // singleton shortcut (note §1.4): a point mass on s is 1 − D_T(s) away
        assert!((d.distance(&[(1, 1)], 1) - 2.0 / 3.0).abs() < 1e-15);
        // the whole table is at distance 0
        assert_eq!(d.distance(&[(0, 3), (1, 4), (2, 5)], 12), 0.0);
    }
}
