//! The k-anonymous fragmentation pipeline on encoded input (Zakerzadeh et al., §3–4; note §3.1): each
//! fragment's quasi-identifiers are partitioned by Mondrian on their own, each fragment gets its own copy
//! of the class column, a repair ([`Strategy`]) changes class values until no join of fragments on the
//! class is reconstructible, and the result is checked over every subset of fragments before it is
//! returned. Publication (row order, files) is the caller's.

use rayon::prelude::*;

use super::apply::apply;
use super::reconstruction::{first_violation, nested_or_disjoint, ClassCounts};
use super::repair::{dgbe, naive, Change};
use super::selectivity::delta_selective;
use crate::core::control::Control;
use crate::core::error::CoreError;
use crate::core::local::{mondrian, LocalInput, MondrianOptions, Recoding};
use crate::core::privacy::PrivacyModel;

/// How joins on the class are repaired.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// Every equivalence class takes its majority value.
    Naive,
    /// Dependency-graph-based enforcement (Algorithm 3).
    Dgbe,
    /// δ-selectivity (Algorithm 4): every joinable pair keeps η ≥ δ. A probabilistic relaxation: the
    /// hard join check is not applied.
    DeltaSelective(f64),
}

impl Strategy {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Naive => "naive",
            Strategy::Dgbe => "dgbe",
            Strategy::DeltaSelective(_) => "delta_selectivity",
        }
    }
}

/// One anonymized fragment.
#[derive(Debug, Clone)]
pub struct Fragment {
    /// The features it holds (as the caller numbers them).
    pub attributes: Vec<usize>,
    /// The anonymizer's partition of the records over those features.
    pub recoding: Recoding,
    /// The fragment's copy of the class column after the repair (one value per record).
    pub class: Vec<u32>,
    /// The class counts of each of its groups after the repair.
    pub counts: Vec<ClassCounts>,
}

/// The anonymized fragments and the repair's changes.
#[derive(Debug, Clone)]
pub struct Fragmented {
    /// One per fragment, in the plan's order.
    pub fragments: Vec<Fragment>,
    /// Every change of the repair.
    pub changes: Vec<Change>,
    /// Whether the subset lemma showed that no join could fail before any repair (then DGBE and
    /// δ-selectivity change nothing and skip their walk).
    pub nested: bool,
}

/// Class counts of every group of a partition (`group_of[r]`, `groups` groups).
pub fn class_counts(group_of: &[u32], groups: usize, class: &[u32]) -> Vec<ClassCounts> {
    let mut counts: Vec<ClassCounts> = vec![Vec::new(); groups];
    for (&g, &c) in group_of.iter().zip(class) {
        let Some(eq) = counts.get_mut(g as usize) else {
            continue;
        };
        match eq.iter_mut().find(|(v, _)| *v == c) {
            Some(entry) => entry.1 += 1,
            None => eq.push((c, 1)),
        }
    }
    for eq in &mut counts {
        eq.sort_unstable();
    }
    counts
}

/// Repairs the class column (`class[r]`) of the fragments' recodings (`recodings[t]` partitions the
/// records over the features `fragments[t]`) with `strategy`, and checks the joins. A violation left
/// after Naive or DGBE (possible only for three or more fragments, which the pairwise repairs do not
/// see) is an error.
pub fn repair_joins(
    fragments: &[Vec<usize>],
    recodings: Vec<Recoding>,
    class: &[u32],
    k: u64,
    strategy: Strategy,
) -> Result<Fragmented, CoreError> {
    let mut counts: Vec<Vec<ClassCounts>> = recodings
        .iter()
        .map(|r| class_counts(r.group_of(), r.groups(), class))
        .collect();
    let nested = nested_or_disjoint(&counts, k);
    let changes = match strategy {
        Strategy::Naive => naive(&mut counts),
        Strategy::Dgbe | Strategy::DeltaSelective(_) if nested => Vec::new(),
        Strategy::Dgbe => dgbe(&mut counts, k),
        Strategy::DeltaSelective(delta) => delta_selective(&mut counts, k, delta),
    };
    // δ-selectivity is a probabilistic relaxation; nested class sets are safe by the lemma (after
    // Naive every class holds one value, so its sets always are)
    let proven = (nested && changes.is_empty()) || nested_or_disjoint(&counts, k);
    let hard = !matches!(strategy, Strategy::DeltaSelective(_));
    if hard && !proven {
        if let Some(v) = first_violation(&counts, k) {
            return Err(CoreError::InvalidParameter {
                name: "fragments",
                problem: format!(
                    "the repair left a join of fragments {:?} of {} records (k = {k}); use fewer fragments",
                    v.fragments, v.j
                ),
            });
        }
    }
    let fragments = fragments
        .iter()
        .zip(recodings)
        .zip(counts)
        .enumerate()
        .map(|(t, ((attributes, recoding), counts))| {
            let mut copy = class.to_vec();
            apply(t, &changes, recoding.group_of(), &mut copy);
            Fragment {
                attributes: attributes.clone(),
                recoding,
                class: copy,
                counts,
            }
        })
        .collect();
    Ok(Fragmented {
        fragments,
        changes,
        nested,
    })
}

/// [`repair_joins`] after Mondrian (on every core) on each fragment's features of `input` (indices into
/// `input.quasi_identifiers`) under `models`.
pub fn fragment_and_anonymize(
    input: &LocalInput<'_>,
    fragments: &[Vec<usize>],
    class: &[u32],
    models: &[Box<dyn PrivacyModel>],
    k: u64,
    strategy: Strategy,
    control: &dyn Control,
) -> Result<Fragmented, CoreError> {
    let projected: Vec<LocalInput<'_>> = fragments
        .iter()
        .map(|attributes| LocalInput {
            rows: input.rows,
            quasi_identifiers: attributes
                .iter()
                .map(|&j| input.quasi_identifiers[j])
                .collect(),
            sensitive: input.sensitive.clone(),
        })
        .collect();
    let recodings: Vec<Recoding> = projected
        .par_iter()
        .map(|p| mondrian(p, models, &MondrianOptions::default(), control).map(|m| m.recoding))
        .collect::<Result<_, _>>()?;
    repair_joins(fragments, recodings, class, k, strategy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::control::NoControl;
    use crate::core::local::{Domain, LocalAttribute, OrderedDomain};
    use crate::core::privacy::KAnonymity;
    use std::collections::HashMap;

    /// 120 records, four numeric features and a class of three values tied to the first feature.
    fn data() -> (Vec<Vec<u32>>, Vec<u32>) {
        let features: Vec<Vec<u32>> = (0..4)
            .map(|f| {
                (0..120u32)
                    .map(|r| (r * (7 + 2 * f) + f * 3) % 40)
                    .collect()
            })
            .collect();
        let class: Vec<u32> = features[0].iter().map(|&v| (v / 14).min(2)).collect();
        (features, class)
    }

    #[test]
    fn fragments_are_k_anonymous_and_joins_are_repaired() {
        let (features, class) = data();
        let orders: Vec<OrderedDomain> = (0..4)
            .map(|_| OrderedDomain::numeric((0..40).map(f64::from).collect()))
            .collect();
        let names = ["a", "b", "c", "d"];
        let input = LocalInput {
            rows: 120,
            quasi_identifiers: (0..4)
                .map(|j| LocalAttribute {
                    name: names[j],
                    codes: &features[j],
                    distinct: 40,
                    domain: Domain::Ordered(&orders[j]),
                })
                .collect(),
            sensitive: vec![],
        };
        let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: 5 })];
        let plan = vec![vec![0, 2], vec![1, 3]];
        for strategy in [Strategy::Naive, Strategy::Dgbe] {
            let result =
                fragment_and_anonymize(&input, &plan, &class, &models, 5, strategy, &NoControl)
                    .unwrap();
            assert_eq!(result.fragments.len(), 2);
            // independently: every group of every fragment holds at least k records, and every pair
            // of groups joins to nothing or to at least k tuples on the fragments' class copies
            let mut per_fragment: Vec<HashMap<u32, HashMap<u32, u64>>> = Vec::new();
            for fragment in &result.fragments {
                let mut groups: HashMap<u32, HashMap<u32, u64>> = HashMap::new();
                for (r, &g) in fragment.recoding.group_of().iter().enumerate() {
                    *groups
                        .entry(g)
                        .or_default()
                        .entry(fragment.class[r])
                        .or_default() += 1;
                }
                assert!(groups.values().all(|c| c.values().sum::<u64>() >= 5));
                per_fragment.push(groups);
            }
            for a in per_fragment[0].values() {
                for b in per_fragment[1].values() {
                    let j: u64 = a
                        .iter()
                        .map(|(c, n)| n * b.get(c).copied().unwrap_or(0))
                        .sum();
                    assert!(j == 0 || j >= 5, "{strategy:?}: a join of {j}");
                }
            }
            let changed: u64 = result.changes.iter().map(|c| c.records).sum();
            let differing: u64 = result
                .fragments
                .iter()
                .map(|f| f.class.iter().zip(&class).filter(|(a, b)| a != b).count() as u64)
                .sum();
            assert_eq!(changed, differing, "{strategy:?}");
        }
    }

    /// The cross joins of two fragments' groups, counted from the published class columns.
    fn joins_pass(result: &Fragmented, k: u64) -> bool {
        let groups: Vec<HashMap<u32, HashMap<u32, u64>>> = result
            .fragments
            .iter()
            .map(|f| {
                let mut groups: HashMap<u32, HashMap<u32, u64>> = HashMap::new();
                for (r, &g) in f.recoding.group_of().iter().enumerate() {
                    *groups.entry(g).or_default().entry(f.class[r]).or_default() += 1;
                }
                groups
            })
            .collect();
        groups[0].values().all(|a| {
            groups[1].values().all(|b| {
                let j: u64 = a
                    .iter()
                    .map(|(c, n)| n * b.get(c).copied().unwrap_or(0))
                    .sum();
                j == 0 || j >= k
            })
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// On generated correlated tables of three or four classes, FMRMR's two fragments anonymized
        /// by Mondrian and repaired by Naive or DGBE never join below k, and DGBE changes no more
        /// records than Naive.
        #[test]
        fn repaired_fragments_never_reconstruct(
            per_group in 2usize..4,
            levels in 4u32..9,
            classes in 3u32..5,
            noise in 0.1f64..0.6,
            records in 60usize..160,
            k in 3u64..8,
            seed in proptest::prelude::any::<u64>(),
        ) {
            use crate::core::fragmentation::fmrmr::{fragment, Diagonal};
            use crate::core::fragmentation::mutual_information::{Discrete, MiMatrix};
            use crate::synthetic::correlated::{correlated_table, CorrelatedShape};
            let table = correlated_table(&CorrelatedShape {
                records, groups: 2, per_group, levels, classes, noise, seed,
            });
            let n = 2 * per_group;
            let columns = table.columns();
            let views: Vec<Discrete<'_>> = columns[..n]
                .iter()
                .map(|c| Discrete { codes: &c.codes, cardinality: c.dictionary.len() })
                .collect();
            let class = &columns[n];
            let mi = MiMatrix::new(
                &views,
                Discrete { codes: &class.codes, cardinality: class.dictionary.len() },
            );
            let plan = fragment(&mi, 2, Diagonal::Included).unwrap();
            let orders: Vec<OrderedDomain> = columns[..n]
                .iter()
                .map(|c| OrderedDomain::numeric(
                    c.dictionary.values().map(|v| v.parse::<f64>().unwrap_or(0.0)).collect(),
                ))
                .collect();
            let input = LocalInput {
                rows: records,
                quasi_identifiers: (0..n)
                    .map(|j| LocalAttribute {
                        name: "f",
                        codes: &columns[j].codes,
                        distinct: columns[j].dictionary.len(),
                        domain: Domain::Ordered(&orders[j]),
                    })
                    .collect(),
                sensitive: vec![],
            };
            let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
            let mut changed = Vec::new();
            for strategy in [Strategy::Naive, Strategy::Dgbe] {
                let result = fragment_and_anonymize(
                    &input, &plan, &class.codes, &models, k, strategy, &NoControl,
                ).unwrap();
                proptest::prop_assert!(joins_pass(&result, k), "{:?}", strategy);
                changed.push(result.changes.iter().map(|c| c.records).sum::<u64>());
            }
            proptest::prop_assert!(changed[1] <= changed[0], "DGBE {} > Naive {}", changed[1], changed[0]);
        }
    }
}
