//! Clustering-based local recoding on hierarchical quasi-identifiers: the dependency-preserving
//! algorithms PAIR-ENUM and k-ASSEMBLE (Gorla 2019, "Dependency-preserving generalization", MSc thesis,
//! McMaster University, Ch. 4–5) and the baselines greedy k-member (Byun et al. 2007) and top-down
//! partitioning (Xu et al. 2006). Implementation notes: `gorla-2019-dependency-preserving-generalization.md`.
//!
//! Every algorithm partitions the records into clusters of at least k records, suppresses the records it
//! cannot cluster, and publishes every cluster's lowest common hierarchy values
//! ([`Recoding::from_partition`]). With functional dependencies given, the report measures how much of
//! them the output keeps: the dependency loss Δ, the utility and the violations introduced
//! ([`ClusteringReport`]).
//!
//! Files: [`dependencies`] (functional dependencies, instances Γ, violations), `distance` (entropy
//! penalty and value distance), `utility` (preserve, utility, Δ and the incremental scores),
//! [`pair_enum`], [`k_assemble`], [`k_member`], [`top_down`].

pub mod dependencies;
mod distance;
pub mod k_assemble;
pub mod k_member;
pub mod pair_enum;
pub mod top_down;
mod utility;

pub use dependencies::{FdAttribute, FunctionalDependency};
pub use k_assemble::{k_assemble, KAssembleOptions};
pub use k_member::{k_member, KMemberOptions};
pub use pair_enum::{pair_enum, PairEnumOptions};
pub use top_down::{top_down, TopDownOptions};

use super::{Domain, LocalInput, Recoding, SUPPRESSED_GROUP};
use crate::core::control::{Control, Pace, Phase, Progress};
use crate::core::data::GeneralizationMap;
use crate::core::error::CoreError;
use dependencies::Gamma;
use distance::Entropy;

/// How the distance between an instance value and a published value is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreserveMode {
    /// The entropy-based distance δ (Gorla 2019, Def. 6): a generalized value that covers the instance
    /// value costs its normalized entropy penalty, an unrelated value costs 1.
    #[default]
    Continuous,
    /// Exact match: a value costs 0 when it is the instance value itself and 1 otherwise (the reading
    /// that reproduces the thesis's worked example without the secondary tie-break, note [GAP-1]).
    Exact,
}

/// What a clustering run measured, for the job report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClusteringReport {
    /// Algorithm name (`pair_enum`, `k_assemble`, `k_member`, `top_down`).
    pub algorithm: &'static str,
    /// The k of k-anonymity.
    pub k: usize,
    /// Clusters published (groups of the recoding).
    pub clusters: usize,
    /// Records left over (fewer than k) and suppressed.
    pub leftovers_suppressed: usize,
    /// Dependency instances |Γ|: distinct projections of every functional dependency's attributes.
    pub dependency_instances: usize,
    /// Instances the output keeps undistorted somewhere (their Δ contribution is 0).
    pub instances_preserved: usize,
    /// Dependency loss Δ (Gorla 2019, Def. 8): over every instance, the smallest average distance to a
    /// published row; 0 ≤ Δ ≤ |Γ|.
    pub dependency_loss: f64,
    /// Utility of the published clusters (Gorla 2019, Def. 10): over every instance, the best
    /// `(1 − distance) × min(|c|, k) / k`. Equals |Γ| − Δ when every cluster has exactly k records.
    pub utility: f64,
    /// Functional-dependency violations of the input: per dependency, distinct left-hand values with
    /// more than one right-hand value, summed.
    pub fd_violations_input: u64,
    /// The same count on the published rows: distinct published left-hand values whose published
    /// right-hand values contradict each other (two hierarchy values neither of which covers the
    /// other, or two different values of another column; `ibuprofen` and `*` do not contradict);
    /// suppressed records are left out. So the thesis's running example (Table 19, Δ = 0) has none.
    pub fd_violations_output: u64,
    /// `fd_violations_output − fd_violations_input` when positive, else 0.
    pub fd_violations_introduced: u64,
}

/// The output of a clustering run.
#[derive(Debug, Clone)]
pub struct ClusteringResult {
    /// Groups (one per cluster, lowest common hierarchy values) and suppressed leftovers.
    pub recoding: Recoding,
    /// What the run measured.
    pub report: ClusteringReport,
}

/// The validated, encoded input shared by the algorithms.
pub(crate) struct Prepared<'a> {
    /// Records.
    pub rows: usize,
    /// k.
    pub k: usize,
    /// The hierarchy of every quasi-identifier.
    pub maps: Vec<&'a GeneralizationMap>,
    /// Column codes, record-major: `codes[r * q + j]` is record r's value of quasi-identifier j.
    pub codes: Vec<u32>,
    /// Entropy penalties per hierarchy value.
    pub entropy: Entropy,
    /// Dependency instances.
    pub gamma: Gamma<'a>,
    /// Value distance mode.
    pub mode: PreserveMode,
}

impl<'a> Prepared<'a> {
    /// Validates the input (hierarchical quasi-identifiers only, k ≥ 1, dependency attributes in range)
    /// and encodes it.
    pub fn new(
        input: &LocalInput<'a>,
        dependencies: &[FunctionalDependency<'a>],
        k: usize,
        mode: PreserveMode,
    ) -> Result<Self, CoreError> {
        if k == 0 {
            return Err(CoreError::InvalidParameter {
                name: "k",
                problem: "k must be at least 1".into(),
            });
        }
        let mut maps = Vec::with_capacity(input.quasi_identifiers.len());
        for attribute in &input.quasi_identifiers {
            match attribute.domain {
                Domain::Hierarchy(map) => maps.push(map),
                Domain::Ordered(_) => {
                    return Err(CoreError::InvalidParameter {
                        name: "quasi_identifiers",
                        problem: format!(
                            "clustering needs a hierarchy for every quasi-identifier, but '{}' has a value order",
                            attribute.name
                        ),
                    })
                }
            }
            if attribute.codes.len() != input.rows {
                return Err(CoreError::InvalidParameter {
                    name: "quasi_identifiers",
                    problem: format!("'{}' does not have one value per record", attribute.name),
                });
            }
        }
        let q = maps.len();
        let mut codes = vec![0u32; input.rows * q];
        for (j, attribute) in input.quasi_identifiers.iter().enumerate() {
            for (r, &code) in attribute.codes.iter().enumerate() {
                codes[r * q + j] = code;
            }
        }
        let entropy = Entropy::new(&maps, input);
        let gamma = Gamma::new(input, dependencies)?;
        Ok(Self {
            rows: input.rows,
            k,
            maps,
            codes,
            entropy,
            gamma,
            mode,
        })
    }

    /// Number of quasi-identifiers.
    pub fn q(&self) -> usize {
        self.maps.len()
    }

    /// Record `r`'s quasi-identifier codes.
    pub fn record(&self, r: u32) -> &[u32] {
        let q = self.q();
        &self.codes[r as usize * q..(r as usize + 1) * q]
    }

    /// Number of quasi-identifiers on which two records differ (the tuple distance between ground
    /// records, Gorla 2019 Def. 7 averaged over the quasi-identifiers as note [GAP-5] resolves, times q).
    pub fn mismatches(&self, a: u32, b: u32) -> u32 {
        self.record(a)
            .iter()
            .zip(self.record(b))
            .filter(|(x, y)| x != y)
            .count() as u32
    }

    /// The lowest common hierarchy values of a set of records, as `(level, anchor code)` per
    /// quasi-identifier (the label is `codes(level)[anchor]`).
    pub fn lca(&self, members: &[u32], out: &mut Vec<(u8, u32)>) {
        out.clear();
        let Some(&first) = members.first() else {
            return;
        };
        for (j, map) in self.maps.iter().enumerate() {
            let anchor = self.record(first)[j];
            let mut level = 0usize;
            for &m in &members[1..] {
                let code = self.record(m)[j];
                while level < map.max_level()
                    && map.codes(level)[code as usize] != map.codes(level)[anchor as usize]
                {
                    level += 1;
                }
            }
            out.push((level as u8, anchor));
        }
    }

    /// [`Prepared::lca`] of each cluster of `clusters`.
    pub fn lca_of(&self, clusters: &[Vec<u32>]) -> Vec<Vec<(u8, u32)>> {
        clusters
            .iter()
            .map(|members| {
                let mut nodes = Vec::new();
                self.lca(members, &mut nodes);
                nodes
            })
            .collect()
    }

    /// The lowest common values of two clusters given by their `(level, anchor)` values.
    pub fn join(&self, a: &[(u8, u32)], b: &[(u8, u32)], out: &mut Vec<(u8, u32)>) {
        out.clear();
        for (j, map) in self.maps.iter().enumerate() {
            let (la, xa) = a[j];
            let (lb, xb) = b[j];
            let mut level = la.max(lb) as usize;
            while level < map.max_level()
                && map.codes(level)[xa as usize] != map.codes(level)[xb as usize]
            {
                level += 1;
            }
            out.push((level as u8, xa));
        }
    }
}

impl Prepared<'_> {
    /// Byun et al.'s categorical information loss of published values, summed over the
    /// quasi-identifiers: a value's level over its hierarchy's height (0 for record values, 1 for the
    /// top). A cluster's information loss is its size times this.
    pub fn spread(&self, nodes: &[(u8, u32)]) -> f64 {
        nodes
            .iter()
            .zip(&self.maps)
            .map(|(&(level, _), map)| {
                if map.max_level() == 0 {
                    0.0
                } else {
                    f64::from(level) / map.max_level() as f64
                }
            })
            .sum()
    }

    /// [`Prepared::spread`] of the lowest common values of `nodes` and record `r`, without building them.
    pub fn spread_with(&self, nodes: &[(u8, u32)], r: u32) -> f64 {
        let record = self.record(r);
        let mut total = 0.0;
        for (j, map) in self.maps.iter().enumerate() {
            let (mut level, anchor) = (nodes[j].0 as usize, nodes[j].1);
            while level < map.max_level()
                && map.codes(level)[record[j] as usize] != map.codes(level)[anchor as usize]
            {
                level += 1;
            }
            if map.max_level() > 0 {
                total += level as f64 / map.max_level() as f64;
            }
        }
        total
    }

    /// The entropy penalty of publishing `nodes` for `records` records: `records` × Σ_j E(v_j)/H(X_j),
    /// the thesis's generalization measure Π (Gorla 2019 Eq. 2.1, note §1.11) normalized per attribute.
    pub fn penalty(&self, nodes: &[(u8, u32)], records: usize) -> f64 {
        let per_record: f64 = nodes
            .iter()
            .zip(&self.maps)
            .enumerate()
            .map(|(j, (&node, map))| self.entropy.penalty(j, map, node))
            .sum();
        per_record * records as f64
    }

    /// Widens `nodes` in place to cover record `r`.
    pub fn widen(&self, nodes: &mut [(u8, u32)], r: u32) {
        let record = self.record(r);
        for (j, map) in self.maps.iter().enumerate() {
            let (level, anchor) = &mut nodes[j];
            while (*level as usize) < map.max_level()
                && map.codes(*level as usize)[record[j] as usize]
                    != map.codes(*level as usize)[*anchor as usize]
            {
                *level += 1;
            }
        }
    }
}

/// Reports clustering progress and stops when the caller cancels.
pub(crate) fn tick(control: &dyn Control, done: usize, total: usize) -> Result<(), CoreError> {
    if control.is_cancelled() {
        return Err(CoreError::Cancelled);
    }
    control.report(Progress {
        phase: Phase::Clustering,
        done: done as u64,
        total: total as u64,
    });
    Ok(())
}

/// Builds the recoding and the report of a final clustering (`clusters` lists every published cluster;
/// records in none are suppressed). Measuring the dependency loss compares every instance with every
/// cluster, so it polls `control` as it goes.
pub(crate) fn finish(
    prep: &Prepared<'_>,
    input: &LocalInput<'_>,
    algorithm: &'static str,
    clusters: &[Vec<u32>],
    control: &dyn Control,
) -> Result<ClusteringResult, CoreError> {
    let mut pace = Pace::new(control);
    pace.check()?;
    let mut group_of = vec![SUPPRESSED_GROUP; prep.rows];
    for (g, members) in clusters.iter().enumerate() {
        for &r in members {
            group_of[r as usize] = g as u32;
        }
    }
    let leftovers = group_of.iter().filter(|&&g| g == SUPPRESSED_GROUP).count();
    let recoding = Recoding::from_partition(input, group_of, clusters.len());
    let measured = utility::measure(prep, clusters, &mut pace)?;
    pace.check()?;
    let fd_violations_input = prep.gamma.input_violations(&mut pace)?;
    let fd_violations_output = prep.gamma.output_violations(prep, clusters, &mut pace)?;
    let report = ClusteringReport {
        algorithm,
        k: prep.k,
        clusters: clusters.len(),
        leftovers_suppressed: leftovers,
        dependency_instances: prep.gamma.len(),
        instances_preserved: measured.preserved,
        dependency_loss: measured.loss,
        utility: measured.utility,
        fd_violations_input,
        fd_violations_output,
        fd_violations_introduced: fd_violations_output.saturating_sub(fd_violations_input),
    };
    Ok(ClusteringResult { recoding, report })
}

/// The dependency measures (Δ, utility, instances kept, violations) of any partition of the records into
/// published groups, each publishing its records' lowest common hierarchy values: how the output of an
/// algorithm that does not optimise for dependencies (Mondrian, or clusters built elsewhere) keeps them.
/// `groups` lists every published group; records in none are suppressed.
pub fn measure_partition(
    input: &LocalInput<'_>,
    dependencies: &[FunctionalDependency<'_>],
    k: usize,
    groups: &[Vec<u32>],
    control: &dyn Control,
) -> Result<ClusteringReport, CoreError> {
    let prep = Prepared::new(input, dependencies, k, PreserveMode::Continuous)?;
    Ok(finish(&prep, input, "partition", groups, control)?.report)
}

#[cfg(test)]
pub(crate) mod example;
#[cfg(test)]
mod properties;
