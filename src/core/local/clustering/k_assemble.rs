//! k-ASSEMBLE (Gorla 2019, "Dependency-preserving generalization", Algorithm 2, §4.3, with Opt-2 of
//! Ch. 5; note §2.3, [GAP-9], [GAP-10]).
//!
//! Every round draws a pool of m seeds from the unsealed records with a seeded generator; each seed
//! forms a candidate cluster with its k − 1 nearest unsealed records (fewest quasi-identifier mismatches,
//! i.e. the tuple distance averaged over the quasi-identifiers [GAP-5]; ties: lowest record), and the
//! candidate whose clustering (sealed clusters, the candidate, every other unsealed record alone) has the
//! highest utility is sealed. Candidates compare by (utility, instances preserved exactly) when
//! `prefer_exact` is on (default), else by utility; ties go to the first seed drawn. Unsealed clusters
//! are always single records and every round seals exactly k records, so there are ⌊N/k⌋ rounds; the
//! N mod k records left are suppressed (the thesis claims every record is covered, which fails when k
//! does not divide N [GAP-10]).
//!
//! Opt-2 (`incremental`, default on) evaluates a candidate exactly on the instances it can change
//! (`utility::Scores`); off, each candidate clustering's utility is recomputed from the definitions.
//! Cost: ⌊N/k⌋ rounds × m seeds × (O(N · q) neighbour scan + O(touched instances · k) evaluation).

use super::utility::{naive_utility, Cluster, Scores};
use super::{finish, tick, ClusteringResult, FunctionalDependency, Prepared, PreserveMode};
use crate::core::control::{Control, Pace};
use crate::core::error::CoreError;
use crate::core::local::LocalInput;
use crate::core::rng::SplitMix64;

/// Options of [`k_assemble`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct KAssembleOptions {
    /// k of k-anonymity (≥ 1; the thesis's default is 5).
    pub k: usize,
    /// Seeds drawn per round (m ≥ 1; default 3, the thesis does not state its value).
    pub pool: usize,
    /// Seed of the random generator.
    pub seed: u64,
    /// Value distance of the utility.
    pub mode: PreserveMode,
    /// Break utility ties by the number of instances preserved exactly (default on).
    pub prefer_exact: bool,
    /// Opt-2: incremental, exact candidate evaluation (default on).
    pub incremental: bool,
}

impl Default for KAssembleOptions {
    fn default() -> Self {
        Self {
            k: 5,
            pool: 3,
            seed: 0,
            mode: PreserveMode::Continuous,
            prefer_exact: true,
            incremental: true,
        }
    }
}

/// The k − 1 unsealed records nearest to `seed` (fewest mismatches, then lowest record), in `out`.
fn neighbours(prep: &Prepared<'_>, unsealed: &[u32], seed: u32, out: &mut Vec<(u32, u32)>) {
    let want = prep.k - 1;
    out.clear();
    for &r in unsealed {
        if r == seed {
            continue;
        }
        let d = prep.mismatches(seed, r);
        if out.len() == want {
            if d >= out[want - 1].0 {
                continue;
            }
            out.pop();
        }
        // records come in ascending order, so an equal distance goes after the ones already held
        let pos = out.iter().position(|&(x, _)| d < x).unwrap_or(out.len());
        out.insert(pos, (d, r));
        if out.len() == want && out[want - 1].0 == 0 {
            break;
        }
    }
}

/// Runs k-ASSEMBLE (see the module documentation); records left over (fewer than k) are suppressed.
/// A given seed always gives the same clustering.
pub fn k_assemble(
    input: &LocalInput<'_>,
    dependencies: &[FunctionalDependency<'_>],
    options: &KAssembleOptions,
    control: &dyn Control,
) -> Result<ClusteringResult, CoreError> {
    assemble(input, dependencies, options, control, &[])
}

/// k-ASSEMBLE whose first rounds use the given seed pools (records still unsealed), then the generator.
pub(crate) fn assemble(
    input: &LocalInput<'_>,
    dependencies: &[FunctionalDependency<'_>],
    options: &KAssembleOptions,
    control: &dyn Control,
    scripted: &[Vec<u32>],
) -> Result<ClusteringResult, CoreError> {
    let prep = Prepared::new(input, dependencies, options.k, options.mode)?;
    if options.pool == 0 {
        return Err(CoreError::InvalidParameter {
            name: "pool",
            problem: "at least one seed per round is needed".into(),
        });
    }
    let n = prep.rows;
    let k = prep.k;
    if k == 1 {
        let out: Vec<Vec<u32>> = (0..n as u32).map(|r| vec![r]).collect();
        return finish(&prep, input, "k_assemble", &out, control);
    }
    let mut pace = Pace::new(control);
    pace.check()?;
    let mut clusters = Cluster::singletons(&prep, false, &mut pace)?;
    let mut scores = if options.incremental {
        Some(Scores::new(&prep, &clusters, &mut pace)?)
    } else {
        None
    };
    pace.check()?;
    let mut rng = SplitMix64(options.seed);
    let mut unsealed: Vec<u32> = (0..n as u32).collect();
    let mut sealed: Vec<Vec<u32>> = Vec::new();
    let mut near = Vec::with_capacity(k);
    let mut candidate: Vec<u32> = Vec::with_capacity(k);
    let mut best: Vec<u32> = Vec::with_capacity(k);
    let mut cand_nodes = Vec::new();
    let mut seeds: Vec<u32> = Vec::new();
    while unsealed.len() >= k {
        tick(control, n - unsealed.len(), n)?;
        seeds.clear();
        let m = options.pool.min(unsealed.len());
        if let Some(pool) = scripted.get(sealed.len()) {
            seeds.extend(pool.iter().filter(|r| unsealed.binary_search(r).is_ok()));
        }
        while seeds.len() < m.max(usize::from(seeds.is_empty())) && seeds.len() < m {
            let s = unsealed[rng.index(unsealed.len())];
            if !seeds.contains(&s) {
                seeds.push(s);
            }
        }
        let current = match &scores {
            Some(_) => (0.0, 0),
            None => naive_utility(
                &prep,
                clusters
                    .iter()
                    .filter(|c| c.alive)
                    .map(|c| (c.members.as_slice(), c.nodes.as_slice())),
            ),
        };
        let mut best_key: Option<(i64, i64)> = None;
        for &s in &seeds {
            // one candidate scans the unsealed records (and every cluster without Opt-2)
            pace.step(if scores.is_some() {
                unsealed.len()
            } else {
                unsealed.len() + clusters.len()
            })?;
            neighbours(&prep, &unsealed, s, &mut near);
            candidate.clear();
            candidate.push(s);
            candidate.extend(near.iter().map(|&(_, r)| r));
            candidate.sort_unstable();
            prep.lca(&candidate, &mut cand_nodes);
            let added = [(candidate.as_slice(), cand_nodes.as_slice())];
            // a single record's cluster id is the record itself
            let (du, dx) = match &mut scores {
                Some(scores) => scores.evaluate(&prep, &clusters, &candidate, &added),
                None => {
                    let kept = clusters
                        .iter()
                        .filter(|c| {
                            c.alive
                                && !(c.members.len() == 1
                                    && !c.sealed
                                    && candidate.contains(&c.members[0]))
                        })
                        .map(|c| (c.members.as_slice(), c.nodes.as_slice()));
                    let (u, x) = naive_utility(&prep, kept.chain(added.iter().copied()));
                    (u - current.0, x - current.1)
                }
            };
            let key = (
                (du * 1e9).round() as i64,
                if options.prefer_exact { dx } else { 0 },
            );
            if best_key.is_none_or(|b| key > b) {
                best_key = Some(key);
                best.clone_from(&candidate);
            }
        }
        for &r in &best {
            clusters[r as usize].alive = false;
        }
        let id = clusters.len() as u32;
        prep.lca(&best, &mut cand_nodes);
        clusters.push(Cluster {
            members: best.clone(),
            nodes: cand_nodes.clone(),
            sealed: true,
            alive: true,
        });
        if let Some(scores) = &mut scores {
            scores.apply(&prep, &clusters, &best, &[id], &mut pace)?;
        }
        unsealed.retain(|r| best.binary_search(r).is_err());
        sealed.push(best.clone());
    }
    tick(control, n - unsealed.len(), n)?;
    finish(&prep, input, "k_assemble", &sealed, control)
}
