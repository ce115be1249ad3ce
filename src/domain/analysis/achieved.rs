//! The privacy a table achieves on its sensitive attributes, measured class by class: the largest
//! parameter of each sensitive-attribute model the table would pass. Shared by assessments (classes of
//! the original quasi-identifier values) and job reports (the published classes, suppressed records left
//! out). Definitions as in the privacy models (`core::privacy`; Hsu 2008 §3.3–3.4, Li et al. 2007,
//! Brickell & Shmatikov 2008, Cao & Karras 2012):
//! - distinct l: the fewest distinct sensitive values in a class;
//! - entropy l: the smallest `exp(−Σ p·ln p)` over classes;
//! - recursive (c, 2): the largest `r_1 / (r_2 + … + r_m)` of a class, which c must exceed (strictly);
//!   null when a class holds a single value;
//! - t for the equal, the ordered (numeric order when every value is a number, else text order) and,
//!   when the attribute has a hierarchy, the hierarchical ground distance: the largest EMD between a
//!   class's distribution and the whole table's (computed exactly, reported as a float);
//! - δ: the largest `|log₂(class frequency / table frequency)|` over the values a class holds; the table
//!   passes δ-disclosure for every δ strictly above it;
//! - β: the largest relative gain `(class frequency − table frequency) / table frequency`; the table
//!   passes basic β-likeness for every β at or above it.
//!
//! The table distribution is always that of every record of the input, as the models use it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::core::data::{Column, GeneralizationMap, Table};
use crate::core::privacy::EarthMovers;
use crate::core::risk::classes::group_keys;
use crate::core::risk::KeyColumn;

use crate::domain::analysis::security_estimate::{estimates, LinearDiagnostic, SecurityEstimate};
use crate::domain::column_values::natural_ranks;

/// The achieved parameters of one sensitive attribute; null without records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SensitiveMeasures {
    /// Distinct l-diversity achieved: the fewest distinct values in a class.
    pub distinct_l: Option<u64>,
    /// Entropy l-diversity achieved: the smallest `exp(entropy)` of a class.
    pub entropy_l: Option<f64>,
    /// Recursive (c, 2)-diversity holds exactly for every c strictly greater than this (the largest
    /// `r_1 / (r_2 + … + r_m)` of a class); null when some class has a single value, or no records.
    pub recursive_c_for_l2_must_exceed: Option<f64>,
    /// The smallest t of t-closeness with the equal ground distance.
    pub t_equal: Option<f64>,
    /// The smallest t of t-closeness with the ordered ground distance.
    pub t_ordered: Option<f64>,
    /// The smallest t of t-closeness with the hierarchical ground distance (attributes with a
    /// hierarchy only).
    pub t_hierarchical: Option<f64>,
    /// δ-disclosure privacy holds for every δ strictly greater than this (bits).
    pub delta_must_exceed: Option<f64>,
    /// Basic β-likeness holds for every β at least this.
    pub beta: Option<f64>,
}

/// What a published table achieves: the smallest class and each sensitive attribute's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Achieved {
    /// The smallest published class (0 when nothing is published).
    pub k: u64,
    /// Per sensitive attribute, by column name.
    pub sensitive_attributes: BTreeMap<String, SensitiveMeasures>,
    /// The ψ diagnostic of each numeric sensitive attribute a linear model protects, by column name
    /// (absent without such a model).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub security_estimates: BTreeMap<String, SecurityEstimate>,
    /// The published classes against the job's population table (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub population: Option<PopulationAchieved>,
}

/// What the published classes achieve against a population table: the k of k-map and the range of
/// δ-presence they meet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopulationAchieved {
    /// Records of the population.
    pub records: u64,
    /// k-map achieved: the fewest population records a published class matches (0 without classes).
    pub k_map: u64,
    /// The smallest published records / population records of a published class (null without classes).
    pub delta_min: Option<f64>,
    /// The largest such share.
    pub delta_max: Option<f64>,
}

impl PopulationAchieved {
    /// The figures of classes given as `(published records, population records)`.
    pub fn new(records: u64, classes: &[(u64, u64)]) -> Self {
        let deltas = || {
            classes.iter().map(|&(n, p)| {
                if p == 0 {
                    f64::INFINITY
                } else {
                    n as f64 / p as f64
                }
            })
        };
        Self {
            records,
            k_map: classes.iter().map(|c| c.1).min().unwrap_or(0),
            delta_min: deltas().reduce(f64::min),
            delta_max: deltas().reduce(f64::max),
        }
    }
}

/// The figures of the table `table` generalized by `quasi_identifiers` (column, bound hierarchy) at
/// `levels`, without the records `suppressed` marks. `sensitive` lists each sensitive column with its
/// hierarchical EMD, when one is known; `linear` the attributes whose ψ is estimated.
pub fn achieved(
    table: &Table,
    quasi_identifiers: &[(usize, GeneralizationMap)],
    levels: &[u8],
    suppressed: &[bool],
    sensitive: &[(usize, Option<EarthMovers>)],
    linear: &[LinearDiagnostic],
) -> Achieved {
    let keys = generalized_keys(table, quasi_identifiers, levels);
    achieved_by_keys(table, &keys, suppressed, sensitive, linear)
}

/// The class of every record of `table` generalized by `quasi_identifiers` at `levels` (suppression
/// not considered): keys `0..classes`.
pub fn generalized_keys(
    table: &Table,
    quasi_identifiers: &[(usize, GeneralizationMap)],
    levels: &[u8],
) -> Vec<u32> {
    let columns: Vec<KeyColumn<'_>> = quasi_identifiers
        .iter()
        .zip(levels)
        .map(|((c, map), &level)| KeyColumn {
            codes: &table.column(*c).codes,
            translate: Some(map.codes(level as usize)),
        })
        .collect();
    group_keys(&columns, table.row_count())
}

/// The figures of a published table whose classes `keys` gives (one key per record), without the
/// records `suppressed` marks.
pub fn achieved_by_keys(
    table: &Table,
    keys: &[u32],
    suppressed: &[bool],
    sensitive: &[(usize, Option<EarthMovers>)],
    linear: &[LinearDiagnostic],
) -> Achieved {
    let mut sizes: BTreeMap<u32, u64> = BTreeMap::new();
    for (r, &k) in keys.iter().enumerate() {
        if !suppressed[r] {
            *sizes.entry(k).or_default() += 1;
        }
    }
    let sensitive_attributes = sensitive
        .iter()
        .map(|(c, hierarchical)| {
            let column = table.column(*c);
            let distribution = SensitiveDistribution::new(column, hierarchical.clone());
            (
                column.name.clone(),
                measure(keys, &column.codes, |r| !suppressed[r], &distribution),
            )
        })
        .collect();
    Achieved {
        population: None,
        k: sizes.values().copied().min().unwrap_or(0),
        sensitive_attributes,
        security_estimates: estimates(table, keys, suppressed, linear),
    }
}

/// The table-wide distribution of one sensitive attribute and its ground distances.
#[derive(Debug, Clone)]
pub struct SensitiveDistribution {
    global: Vec<u64>,
    equal: EarthMovers,
    ordered: EarthMovers,
    hierarchical: Option<EarthMovers>,
}

impl SensitiveDistribution {
    /// The distribution of `column` over all its records; `hierarchical` is the hierarchical EMD when
    /// the attribute has a hierarchy.
    pub fn new(column: &Column, hierarchical: Option<EarthMovers>) -> Self {
        let global = column.value_counts();
        let ranks = natural_ranks(&column.dictionary);
        Self {
            equal: EarthMovers::equal(global.clone()),
            ordered: EarthMovers::ordered(global.clone(), ranks),
            hierarchical,
            global,
        }
    }
}

/// The measures of the sensitive column `codes` over the classes `keys` assigns; records with
/// `include(r)` false are left out.
pub fn measure(
    keys: &[u32],
    codes: &[u32],
    include: impl Fn(usize) -> bool,
    distribution: &SensitiveDistribution,
) -> SensitiveMeasures {
    // (code, count) pairs per class, sorted by class, then code
    let mut pairs: Vec<(u32, u32)> = keys
        .iter()
        .zip(codes)
        .enumerate()
        .filter(|&(r, _)| include(r))
        .map(|(_, (&k, &v))| (k, v))
        .collect();
    pairs.sort_unstable();
    let mut measures = SensitiveMeasures {
        distinct_l: None,
        entropy_l: None,
        recursive_c_for_l2_must_exceed: None,
        t_equal: None,
        t_ordered: None,
        t_hierarchical: None,
        delta_must_exceed: None,
        beta: None,
    };
    let mut single_valued = false;
    let mut histogram: Vec<(u32, u32)> = Vec::new();
    let mut start = 0;
    let total: u64 = distribution.global.iter().sum();
    while start < pairs.len() {
        let class = pairs[start].0;
        let mut end = start;
        histogram.clear();
        while end < pairs.len() && pairs[end].0 == class {
            let code = pairs[end].1;
            match histogram.last_mut() {
                Some((c, n)) if *c == code => *n += 1,
                _ => histogram.push((code, 1)),
            }
            end += 1;
        }
        start = end;
        let size: u64 = histogram.iter().map(|&(_, n)| u64::from(n)).sum();
        let n = size as f64;
        let distinct = histogram.len() as u64;
        measures.distinct_l = Some(measures.distinct_l.map_or(distinct, |m| m.min(distinct)));
        let entropy: f64 = histogram
            .iter()
            .map(|&(_, c)| {
                let p = f64::from(c) / n;
                -p * p.ln()
            })
            .sum();
        let l = entropy.exp();
        measures.entropy_l = Some(measures.entropy_l.map_or(l, |m| m.min(l)));
        let top = histogram
            .iter()
            .map(|&(_, c)| u64::from(c))
            .max()
            .unwrap_or(0);
        if top == size {
            single_valued = true;
        } else {
            let ratio = top as f64 / (size - top) as f64;
            let current = measures.recursive_c_for_l2_must_exceed.unwrap_or(0.0);
            measures.recursive_c_for_l2_must_exceed = Some(current.max(ratio));
        }
        let raise = |slot: &mut Option<f64>, value: f64| {
            *slot = Some(slot.map_or(value, |m: f64| m.max(value)));
        };
        raise(
            &mut measures.t_equal,
            distribution.equal.distance(&histogram).to_f64(),
        );
        raise(
            &mut measures.t_ordered,
            distribution.ordered.distance(&histogram).to_f64(),
        );
        if let Some(h) = &distribution.hierarchical {
            raise(
                &mut measures.t_hierarchical,
                h.distance(&histogram).to_f64(),
            );
        }
        for &(code, c) in &histogram {
            let table = distribution.global.get(code as usize).copied().unwrap_or(0);
            if table == 0 || total == 0 {
                continue;
            }
            let ratio = (f64::from(c) / n) / (table as f64 / total as f64);
            raise(&mut measures.delta_must_exceed, ratio.log2().abs());
            raise(&mut measures.beta, (ratio - 1.0).max(0.0));
        }
    }
    if single_valued {
        measures.recursive_c_for_l2_must_exceed = None;
    }
    measures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Table;

    /// Table 2.1-1 of Hsu (2008) by its blocks of Table 2.1-2 (note §6.1): {HD 2, VI 2}, {VI 2, HD 1,
    /// C 1}, {C 4}; D_T = {HD 3, VI 4, C 5}/12.
    #[test]
    fn table_2_1_2_figures() {
        let conditions = [
            "HD", "HD", "VI", "VI", "C", "HD", "VI", "VI", "C", "C", "C", "C",
        ];
        let rows: Vec<Vec<&str>> = conditions.iter().map(|c| vec![*c]).collect();
        let table = Table::from_rows(&["condition"], &rows);
        let column = table.column(0);
        let keys = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2];
        let distribution = SensitiveDistribution::new(column, None);
        let m = measure(&keys, &column.codes, |_| true, &distribution);
        assert_eq!(m.distinct_l, Some(1));
        assert_eq!(m.entropy_l, Some(1.0));
        assert_eq!(m.recursive_c_for_l2_must_exceed, None);
        // t-closeness (equal distance) holds iff t ≥ 7/12
        assert!((m.t_equal.unwrap() - 7.0 / 12.0).abs() < 1e-12);
        // {C 4}: 1 / (5/12) = 2.4 → log₂ 2.4; gain 1.4
        assert!((m.delta_must_exceed.unwrap() - 2.4f64.log2()).abs() < 1e-12);
        assert!((m.beta.unwrap() - 1.4).abs() < 1e-12);
        // leaving the {C 4} block out: HD gains 1 in block 1–4; VI's ratio 1.5 ≤ HD's 2
        let m = measure(&keys, &column.codes, |r| r < 8, &distribution);
        assert_eq!(m.distinct_l, Some(2));
        assert!((m.t_equal.unwrap() - 5.0 / 12.0).abs() < 1e-12);
        assert!((m.beta.unwrap() - 1.0).abs() < 1e-12);
        assert!((m.delta_must_exceed.unwrap() - 1.0).abs() < 1e-12);
        // recursive (c, 2): block 1–4 has 2/2 = 1, block 5–8 has 2/2 = 1
        assert_eq!(m.recursive_c_for_l2_must_exceed, Some(1.0));
    }
}
