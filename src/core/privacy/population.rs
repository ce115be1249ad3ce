//! Models against a population table: the sample (the table being published) is a subset of a larger
//! population whose quasi-identifiers an attacker may know.
//! - **k-map** ([`KMap`]; Sweeney's k-map, in El Emam & Dankar, "Protecting privacy using k-anonymity",
//!   JAMIA 15(5), 2008): every published class matches at least k records of the population;
//! - **δ-presence** ([`DeltaPresence`]; Nergiz, Atzori & Clifton, "Hiding the presence of individuals
//!   from shared databases", SIGMOD 2007): for every population record, the probability that it is in
//!   the sample given the published table — |sample class| / |population class| of its class — lies in
//!   [δ_min, δ_max].
//!
//! Without a population table, k-map can be estimated from the sampling fraction alone, as ARX does
//! ([`derived_k`]): a class of the sample must hold at least a derived k' ≤ k records, chosen so that a
//! population class of k records would show more than k' − 1 … sample records with probability below
//! the significance level (sample counts Poisson or zero-truncated Poisson distributed).
//!
//! Both read, for a class of a lattice node, the number of population records that generalize to the
//! class's values: [`PopulationIndex`] groups the population at the node's levels (once per node, a few
//! nodes kept) and looks a class up by its representative record. Population and sample values are
//! leaves of the same hierarchies, so their labels share codes.
//!
//! Monotonicity: merging classes adds their population counts, so k-map is monotone with and without
//! suppression; a merged class's δ is a weighted mean of the merged ones', so δ-presence is monotone
//! without suppression only (a passing class merged with a failing one may fail). A population class
//! without any sample record has δ = 0: when δ_min > 0 no suppression can fix it, so δ-presence then
//! also judges the whole node ([`PrivacyModel::is_table_private`]).

use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

use super::{ClassView, PrivacyModel, TableView};

/// The distribution of a population class's sample count in estimated k-map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopulationEstimator {
    /// Poisson with mean f · k.
    Poisson,
    /// Poisson with mean f · k, conditioned on at least one sampled record.
    ZeroTruncatedPoisson,
}

/// Estimated k-map's class size, as ARX derives it (ARX's `KMap` with an estimator; El Emam & Dankar
/// 2008): with `f` the sampling fraction (records / population) and λ = f · k the expected sample count
/// of a population class of `k` records, c* is the smallest count whose cumulative probability reaches
/// 1 − `alpha` (for the zero-truncated distribution, counting from 1). The class size is c* + 2
/// (Poisson) or c* + 1 (zero-truncated), at most `k` and at most `records`. Also returns the type-1
/// error, 1 − the cumulative probability at c* (0 when k caps the size).
pub fn derived_k(
    k: u64,
    alpha: f64,
    fraction: f64,
    estimator: PopulationEstimator,
    records: u64,
) -> (u64, f64) {
    let cap = k.min(records.max(1));
    let lambda = fraction * k as f64;
    if lambda.is_nan() || lambda <= 0.0 {
        return (1, 0.0);
    }
    let target = 1.0 - alpha;
    let (first, offset, truncation) = match estimator {
        PopulationEstimator::Poisson => (0u64, 2u64, 1.0),
        PopulationEstimator::ZeroTruncatedPoisson => (1, 1, -(-lambda).exp_m1()),
    };
    // ln P(X = c), updated term by term (in logarithms: e^-λ underflows for λ above ~745)
    let mut ln_term = -lambda;
    let mut cumulative = 0.0;
    let mut c = 0u64;
    loop {
        if c >= first {
            cumulative += ln_term.exp() / truncation;
        }
        let size = c + offset;
        // as ARX: reaching k ends the search with no type-1 error
        if c + 1 >= k {
            return (size.min(cap), 0.0);
        }
        if c >= first && cumulative >= target {
            return (size.min(cap), (1.0 - cumulative).max(0.0));
        }
        if cap < k && size >= cap {
            // the table caps the size: the error is that of a class of `cap` records
            return (cap, (1.0 - cumulative).max(0.0));
        }
        c += 1;
        ln_term += lambda.ln() - (c as f64).ln();
    }
}

/// Cached node groupings hold at most this many times the population's distinct combinations of
/// leaves (coarse nodes are small, so many are kept; they are the cheapest sources to roll up from).
const CACHE_BUDGET: usize = 2;

/// One quasi-identifier as the population models see it.
#[derive(Debug, Clone)]
pub struct PopulationColumn {
    /// `ancestors[level][leaf]`: the label code of a hierarchy leaf at each level.
    pub ancestors: Vec<Vec<u32>>,
    /// The hierarchy leaf of every sample record.
    pub sample: Vec<u32>,
    /// The hierarchy leaf of every population record.
    pub population: Vec<u32>,
}

/// The population grouped at one node.
#[derive(Debug)]
struct NodeCounts {
    population: FxHashMap<u128, u32>,
}

/// The population's quasi-identifiers, in lattice order, grouped per node on demand.
#[derive(Debug)]
pub struct PopulationIndex {
    columns: Vec<PopulationColumn>,
    /// Bit offset of each column in a packed key.
    shifts: Vec<u32>,
    /// Bits of each column in a packed key.
    widths: Vec<u32>,
    /// `parents[column][level][label]`: the label's parent at `level + 1`.
    parents: Vec<Vec<Vec<u32>>>,
    /// The population's distinct combinations of leaves, with their records (kept: every node rolls
    /// up from it or from a finer cached node).
    bottom: Arc<NodeCounts>,
    population_rows: usize,
    cache: Mutex<Vec<(Vec<u8>, Arc<NodeCounts>)>>,
}

/// A population index cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PopulationError {
    /// The quasi-identifiers' labels do not fit a 128-bit key.
    #[error("the quasi-identifiers have too many distinct values to be matched against a population ({bits} bits, at most 128)")]
    TooWide {
        /// Bits the key would need.
        bits: u32,
    },
    /// Some combination of original values is more frequent in the sample than in the population.
    #[error("{classes} combinations of quasi-identifier values hold more sample records than population records: the population must contain the sample")]
    NotContained {
        /// Such combinations.
        classes: u64,
    },
}

impl PopulationIndex {
    /// An index over `columns` (lattice order); every sample combination of original values must occur
    /// at least as often in the population.
    pub fn new(columns: Vec<PopulationColumn>) -> Result<Self, PopulationError> {
        let mut shifts = Vec::with_capacity(columns.len());
        let mut widths = Vec::with_capacity(columns.len());
        let mut bits = 0u32;
        for column in &columns {
            shifts.push(bits);
            let labels = column.ancestors.first().map_or(0, Vec::len).max(1) as u64;
            let width = 64 - (labels - 1).leading_zeros();
            widths.push(width);
            bits += width;
        }
        if bits > 128 {
            return Err(PopulationError::TooWide { bits });
        }
        let population_rows = columns.first().map_or(0, |c| c.population.len());
        let parents = columns
            .iter()
            .map(|column| {
                let levels = &column.ancestors;
                (0..levels.len().saturating_sub(1))
                    .map(|level| {
                        let labels = levels[level].iter().max().map_or(0, |&m| m as usize + 1);
                        let mut parent = vec![0u32; labels];
                        for (leaf, &label) in levels[level].iter().enumerate() {
                            parent[label as usize] = levels[level + 1][leaf];
                        }
                        parent
                    })
                    .collect()
            })
            .collect();
        let mut index = Self {
            columns,
            shifts,
            widths,
            parents,
            population_rows,
            bottom: Arc::new(NodeCounts {
                population: FxHashMap::default(),
            }),
            cache: Mutex::new(Vec::new()),
        };
        let bottom = vec![0u8; index.columns.len()];
        let mut leaves: FxHashMap<u128, u32> = FxHashMap::default();
        for row in 0..index.population_rows {
            *leaves
                .entry(index.key(&bottom, |c| c.population[row]))
                .or_default() += 1;
        }
        index.bottom = Arc::new(NodeCounts { population: leaves });
        let counts = Arc::clone(&index.bottom);
        let mut sample: FxHashMap<u128, u32> = FxHashMap::default();
        for row in 0..index.sample_rows() {
            *sample.entry(index.sample_key(&bottom, row)).or_default() += 1;
        }
        let classes = sample
            .iter()
            .filter(|(key, &n)| counts.population.get(key).copied().unwrap_or(0) < n)
            .count() as u64;
        if classes > 0 {
            return Err(PopulationError::NotContained { classes });
        }
        Ok(index)
    }

    fn sample_rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.sample.len())
    }

    /// Records of the population.
    pub fn population_rows(&self) -> usize {
        self.population_rows
    }

    fn key(&self, levels: &[u8], leaf: impl Fn(&PopulationColumn) -> u32) -> u128 {
        let mut key = 0u128;
        let columns = self.columns.iter().zip(levels).zip(&self.shifts);
        for (((column, &level), &shift), &width) in columns.zip(&self.widths) {
            // a column of one value has no bits (and may sit at bit 128)
            if width > 0 {
                let label = column.ancestors[level as usize][leaf(column) as usize];
                key |= u128::from(label) << shift;
            }
        }
        key
    }

    fn sample_key(&self, levels: &[u8], row: usize) -> u128 {
        self.key(levels, |c| c.sample[row])
    }

    /// The population grouped at `levels`: from the cache, or rolled up from the cached node below it
    /// with the fewest classes (the distinct leaf combinations at least).
    fn counts(&self, levels: &[u8]) -> Arc<NodeCounts> {
        if levels.iter().all(|&l| l == 0) {
            return Arc::clone(&self.bottom);
        }
        let mut source = Arc::clone(&self.bottom);
        let mut source_levels = vec![0u8; levels.len()];
        if let Ok(cache) = self.cache.lock() {
            if let Some((_, counts)) = cache.iter().rev().find(|(l, _)| l == levels) {
                return Arc::clone(counts);
            }
            let below = cache
                .iter()
                .filter(|(l, _)| l.iter().zip(levels).all(|(a, b)| a <= b))
                .min_by_key(|(_, c)| c.population.len());
            if let Some((l, counts)) = below {
                if counts.population.len() < source.population.len() {
                    source = Arc::clone(counts);
                    source_levels.clone_from(l);
                }
            }
        }
        let mut population: FxHashMap<u128, u32> = FxHashMap::default();
        for (&key, &n) in &source.population {
            *population
                .entry(self.roll_up(key, &source_levels, levels))
                .or_default() += n;
        }
        let counts = Arc::new(NodeCounts { population });
        if let Ok(mut cache) = self.cache.lock() {
            let budget = CACHE_BUDGET * self.bottom.population.len() + 1024;
            let mut held: usize = cache.iter().map(|(_, c)| c.population.len()).sum();
            held += counts.population.len();
            while held > budget && !cache.is_empty() {
                held -= cache.remove(0).1.population.len();
            }
            cache.push((levels.to_vec(), Arc::clone(&counts)));
        }
        counts
    }

    /// A key at `from` generalized to `to` (each level of `to` at least that of `from`).
    fn roll_up(&self, key: u128, from: &[u8], to: &[u8]) -> u128 {
        let mut out = 0u128;
        for (j, ((&shift, &width), parents)) in self
            .shifts
            .iter()
            .zip(&self.widths)
            .zip(&self.parents)
            .enumerate()
        {
            if width == 0 {
                continue;
            }
            let mask = (1u128 << width) - 1;
            let mut label = ((key >> shift) & mask) as u32;
            for level in from[j]..to[j] {
                label = parents[level as usize][label as usize];
            }
            out |= u128::from(label) << shift;
        }
        out
    }

    /// Population records in `class`'s population class; `None` for a class that is not a lattice
    /// node's (a local recoding's group), which no population model can judge.
    pub fn population_count(&self, class: &ClassView<'_>) -> Option<u64> {
        let (row, levels) = class.representative()?;
        let counts = self.counts(levels);
        let key = self.sample_key(levels, row as usize);
        Some(u64::from(counts.population.get(&key).copied().unwrap_or(0)))
    }

    /// `(sample records, population records)` of every class at `levels` of the sample records `kept`
    /// says are published.
    pub fn published_classes(
        &self,
        levels: &[u8],
        kept: impl Fn(usize) -> bool,
    ) -> Vec<(u64, u64)> {
        let counts = self.counts(levels);
        let mut sample: FxHashMap<u128, u64> = FxHashMap::default();
        for row in (0..self.sample_rows()).filter(|&r| kept(r)) {
            *sample.entry(self.sample_key(levels, row)).or_default() += 1;
        }
        sample
            .into_iter()
            .map(|(key, n)| {
                let population = counts.population.get(&key).copied().unwrap_or(0);
                (n, u64::from(population))
            })
            .collect()
    }

    /// Population classes at `levels` that hold no sample record.
    pub fn population_only_classes(&self, levels: &[u8]) -> u64 {
        let counts = self.counts(levels);
        let sample: FxHashSet<u128> = (0..self.sample_rows())
            .map(|row| self.sample_key(levels, row))
            .collect();
        counts
            .population
            .keys()
            .filter(|k| !sample.contains(k))
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// λ = 0.1 · 10 = 1: Poisson F(3) = 0.981 ≥ 0.95 first, so 3 + 2 = 5 with type-1 error 0.019;
    /// zero-truncated (÷ 0.632): 0.582, 0.873, 0.970 at 3, so 3 + 1 = 4 with error 0.030. λ = 0.5, α =
    /// 0.01: F(3) = 0.99825 first, so 5 (error 0.00175); zero-truncated 0.9956 at 3, so 4. The same
    /// figures as ARX's KMap for these parameters.
    #[test]
    fn derived_k_follows_the_poisson_quantiles() {
        let (k, e) = derived_k(10, 0.05, 0.1, PopulationEstimator::Poisson, 1000);
        assert_eq!(k, 5);
        assert!((e - 0.018_988_156_876_153_7).abs() < 1e-9, "{e}");
        let (k, e) = derived_k(
            10,
            0.05,
            0.1,
            PopulationEstimator::ZeroTruncatedPoisson,
            1000,
        );
        assert_eq!(k, 4);
        assert!((e - 0.030_038_821_884_455_9).abs() < 1e-9, "{e}");
        let (k, e) = derived_k(5, 0.01, 0.1, PopulationEstimator::Poisson, 1000);
        assert_eq!(k, 5);
        assert!((e - 0.001_751_622_556_290_8).abs() < 1e-9, "{e}");
        assert_eq!(
            derived_k(
                5,
                0.01,
                0.1,
                PopulationEstimator::ZeroTruncatedPoisson,
                1000
            )
            .0,
            4
        );
        // k caps the size (no error), and so does the table
        assert_eq!(
            derived_k(3, 0.001, 0.5, PopulationEstimator::Poisson, 1000),
            (3, 0.0)
        );
        assert_eq!(
            derived_k(1, 0.05, 0.1, PopulationEstimator::Poisson, 1000),
            (1, 0.0)
        );
        assert_eq!(
            derived_k(10, 0.05, 0.1, PopulationEstimator::Poisson, 4).0,
            4
        );
    }

    fn column(ancestors: Vec<Vec<u32>>, sample: &[u32], population: &[u32]) -> PopulationColumn {
        PopulationColumn {
            ancestors,
            sample: sample.to_vec(),
            population: population.to_vec(),
        }
    }

    /// One quasi-identifier with leaves 0–3 under `a` (0, 1) and `b` (2, 3), then `*`. Sample: 0, 0,
    /// 2; population: 0, 0, 0, 1, 2, 3, 3, 3.
    #[test]
    fn population_counts_per_node_and_containment() {
        let ancestors = vec![vec![0, 1, 2, 3], vec![0, 0, 1, 1], vec![0, 0, 0, 0]];
        let index = PopulationIndex::new(vec![column(
            ancestors.clone(),
            &[0, 0, 2],
            &[0, 0, 0, 1, 2, 3, 3, 3],
        )])
        .unwrap();
        assert_eq!(index.population_rows(), 8);
        // leaves: population classes 0 (3), 1 (1), 2 (1), 3 (3); sample holds 0 and 2
        assert_eq!(index.population_only_classes(&[0]), 2);
        assert_eq!(index.population_only_classes(&[1]), 0);
        let missing = PopulationIndex::new(vec![column(ancestors, &[0, 1, 1], &[0, 1, 2])]);
        assert_eq!(
            missing.unwrap_err(),
            PopulationError::NotContained { classes: 1 }
        );
    }
}

/// k-map against a population table: every class matches at least `k` population records.
#[derive(Debug, Clone)]
pub struct KMap {
    /// The smallest population class.
    pub k: u64,
    /// The population.
    pub index: Arc<PopulationIndex>,
}

impl PrivacyModel for KMap {
    fn describe(&self) -> String {
        format!(
            "{}-map (a population of {} records)",
            self.k,
            self.index.population_rows()
        )
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn is_monotone_with_suppression(&self) -> bool {
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        self.index
            .population_count(class)
            .is_some_and(|n| n >= self.k)
    }
}

/// δ-presence: every population class's share of sample records in `[min, max]`.
#[derive(Debug, Clone)]
pub struct DeltaPresence {
    /// δ_min.
    pub min: f64,
    /// δ_max.
    pub max: f64,
    /// The population.
    pub index: Arc<PopulationIndex>,
}

impl DeltaPresence {
    /// Whether a class of `size` sample records in a population class of `population` records passes.
    pub fn admits(&self, size: u64, population: u64) -> bool {
        let delta = if population == 0 {
            f64::INFINITY
        } else {
            size as f64 / population as f64
        };
        self.min <= delta && delta <= self.max
    }
}

impl PrivacyModel for DeltaPresence {
    fn describe(&self) -> String {
        format!(
            "({}, {})-presence (a population of {} records)",
            self.min,
            self.max,
            self.index.population_rows()
        )
    }
    fn min_class_size(&self) -> u64 {
        1
    }
    fn is_monotone_with_suppression(&self) -> bool {
        false
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        self.index
            .population_count(class)
            .is_some_and(|n| self.admits(class.size(), n))
    }
    fn is_table_private(&self, table: &TableView) -> bool {
        // population classes without sample records have δ = 0, which suppression cannot raise
        self.min <= 0.0
            || table
                .levels
                .as_deref()
                .is_some_and(|levels| self.index.population_only_classes(levels) == 0)
    }
    fn is_table_level(&self) -> bool {
        self.min > 0.0
    }
}
