//! The entropy-based penalty of a hierarchy value and the distance between values (Gorla 2019, Eq. 3.1
//! and Def. 6, after Gionis & Tassa; note §1.5–1.6, [GAP-4]).
//!
//! E(v) = P(v) · H(X_A | v), computed over the original table with 0·log 0 = 0, in log10 as the thesis's
//! numbers are (distances do not depend on the base). For values on one root-to-leaf branch
//! δ(v, v') = |E(v') − E(v)| / H(X_A), and 1 for incomparable values; when H(X_A) = 0 (a constant
//! attribute) comparable values are at distance 0. Leaves have E = 0, so a record value's distance to a
//! covering hierarchy value v is E(v)/H(X_A), precomputed per value.
//! δ is not a metric (the triangle inequality fails), so no metric index is used.

use super::PreserveMode;
use crate::core::data::GeneralizationMap;
use crate::core::local::LocalInput;

/// Entropy penalties of every hierarchy value of every quasi-identifier.
pub(crate) struct Entropy {
    /// `raw[j][level][label]` = E(v) in log10 (read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    raw: Vec<Vec<Vec<f64>>>,
    /// `norm[j][level][label]` = E(v) / H(X_A) (0 when H(X_A) = 0).
    norm: Vec<Vec<Vec<f64>>>,
}

impl Entropy {
    /// Computes E(v) bottom-up from the record counts of every leaf.
    pub fn new(maps: &[&GeneralizationMap], input: &LocalInput<'_>) -> Self {
        let n = input.rows.max(1) as f64;
        let mut raw = Vec::with_capacity(maps.len());
        let mut norm = Vec::with_capacity(maps.len());
        for (map, attribute) in maps.iter().zip(&input.quasi_identifiers) {
            let distinct = map.codes(0).len();
            let mut counts = vec![0u64; distinct];
            for &c in attribute.codes {
                counts[c as usize] += 1;
            }
            let mut levels = Vec::with_capacity(map.max_level() + 1);
            for level in 0..=map.max_level() {
                let labels = map.label_count(level);
                let mut count = vec![0f64; labels];
                let mut sum = vec![0f64; labels];
                for (code, &c) in counts.iter().enumerate() {
                    if c > 0 {
                        let label = map.codes(level)[code] as usize;
                        let c = c as f64;
                        count[label] += c;
                        sum[label] += c * c.log10();
                    }
                }
                let e: Vec<f64> = count
                    .iter()
                    .zip(&sum)
                    .map(|(&c, &s)| {
                        if c > 0.0 {
                            ((c * c.log10() - s) / n).max(0.0)
                        } else {
                            0.0
                        }
                    })
                    .collect();
                levels.push(e);
            }
            let h = levels
                .last()
                .and_then(|top| top.iter().copied().reduce(f64::max))
                .unwrap_or(0.0);
            let normalized = levels
                .iter()
                .map(|l| {
                    l.iter()
                        .map(|&e| if h > 0.0 { (e / h).min(1.0) } else { 0.0 })
                        .collect()
                })
                .collect();
            raw.push(levels);
            norm.push(normalized);
        }
        Self { raw, norm }
    }

    /// E(v) (log10) of label `label` at `level` of quasi-identifier `j`.
    #[cfg(test)]
    pub fn raw(&self, j: usize, level: usize, label: u32) -> f64 {
        self.raw[j][level][label as usize]
    }

    /// H(X_A) (log10) of quasi-identifier `j`: E of the top value.
    #[cfg(test)]
    pub fn h(&self, j: usize) -> f64 {
        self.raw[j]
            .last()
            .map_or(0.0, |top| top.iter().copied().fold(0.0, f64::max))
    }

    /// δ(x, v) between record value `leaf` (a column code) and the hierarchy value at `level` whose
    /// label is that of column code `anchor`.
    #[inline]
    pub fn leaf_to_value(
        &self,
        j: usize,
        map: &GeneralizationMap,
        mode: PreserveMode,
        leaf: u32,
        level: u8,
        anchor: u32,
    ) -> f64 {
        if level == 0 {
            return if leaf == anchor { 0.0 } else { 1.0 };
        }
        if mode == PreserveMode::Exact {
            return 1.0;
        }
        let codes = map.codes(level as usize);
        let label = codes[anchor as usize];
        if codes[leaf as usize] == label {
            self.norm[j][level as usize][label as usize]
        } else {
            1.0
        }
    }

    /// E(v) / H(X_A) of the hierarchy value at `level` whose label is that of column code `anchor`: the
    /// normalized penalty of publishing it for one record (0 for a record value, 1 for the top).
    #[inline]
    pub fn penalty(&self, j: usize, map: &GeneralizationMap, (level, anchor): (u8, u32)) -> f64 {
        self.norm[j][level as usize][map.codes(level as usize)[anchor as usize] as usize]
    }

    /// δ(v, v') between two hierarchy values given as `(level, anchor)` (the oracle of PAIR-ENUM's row
    /// distances).
    #[cfg(test)]
    pub fn between(&self, j: usize, map: &GeneralizationMap, a: (u8, u32), b: (u8, u32)) -> f64 {
        let (low, high) = if a.0 <= b.0 { (a, b) } else { (b, a) };
        let codes = map.codes(high.0 as usize);
        if codes[low.1 as usize] != codes[high.1 as usize] {
            return 1.0;
        }
        let e_low =
            self.norm[j][low.0 as usize][map.codes(low.0 as usize)[low.1 as usize] as usize];
        let e_high = self.norm[j][high.0 as usize][codes[high.1 as usize] as usize];
        (e_high - e_low).abs()
    }
}
