//! Greedy k-member clustering (Byun, Kamra, Bertino, Li 2007, "Efficient k-anonymization using
//! clustering techniques", DASFAA, §4; as Gorla 2019 §2.3 describes it, note §6), a baseline of the
//! dependency-preserving algorithms.
//!
//! From a random record, the next seed is the remaining record furthest from the previous seed (the
//! distance is Byun's categorical one: the level of the two values' lowest common hierarchy value over
//! the hierarchy's height, summed over the quasi-identifiers); its cluster grows by the remaining record
//! whose addition gives the least information loss (cluster size times that distance of the cluster's
//! published values) until it has k records. When fewer than k records remain, each joins the cluster
//! whose information loss grows least (ties: earliest cluster, lowest record). Clusters may then hold
//! more than k records; nothing is suppressed unless the table has fewer than k records.
//! Cost: O(N²) information-loss evaluations of O(q · height) each.

use super::{finish, tick, ClusteringResult, FunctionalDependency, Prepared, PreserveMode};
use crate::core::control::{Control, Pace};
use crate::core::error::CoreError;
use crate::core::local::LocalInput;
use crate::core::rng::SplitMix64;

/// Options of [`k_member`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct KMemberOptions {
    /// k of k-anonymity (≥ 1).
    pub k: usize,
    /// Seed of the random first record.
    pub seed: u64,
}

impl Default for KMemberOptions {
    fn default() -> Self {
        Self { k: 5, seed: 0 }
    }
}

/// Runs greedy k-member clustering. Functional dependencies are only measured (Δ, utility, violations
/// in the report).
pub fn k_member(
    input: &LocalInput<'_>,
    dependencies: &[FunctionalDependency<'_>],
    options: &KMemberOptions,
    control: &dyn Control,
) -> Result<ClusteringResult, CoreError> {
    let prep = Prepared::new(input, dependencies, options.k, PreserveMode::Continuous)?;
    let n = prep.rows;
    let k = prep.k;
    let mut rng = SplitMix64(options.seed);
    let mut remaining: Vec<u32> = (0..n as u32).collect();
    let mut clusters: Vec<Vec<u32>> = Vec::new();
    let mut cluster_nodes: Vec<Vec<(u8, u32)>> = Vec::new();
    let mut nodes = Vec::new();
    let mut pace = Pace::new(control);
    if n >= k {
        let mut seed = remaining[rng.index(n)];
        while remaining.len() >= k {
            tick(control, n - remaining.len(), n)?;
            pace.step(remaining.len())?;
            prep.lca(&[seed], &mut nodes);
            let mut far = 0;
            let mut far_d = -1.0;
            for (i, &r) in remaining.iter().enumerate() {
                let d = prep.spread_with(&nodes, r);
                if d > far_d {
                    far_d = d;
                    far = i;
                }
            }
            seed = remaining.remove(far);
            let mut members = vec![seed];
            prep.lca(&members, &mut nodes);
            while members.len() < k {
                pace.step(remaining.len())?;
                let base = prep.spread(&nodes);
                let mut pick = 0;
                let mut pick_d = f64::INFINITY;
                for (i, &r) in remaining.iter().enumerate() {
                    let d = prep.spread_with(&nodes, r);
                    if d < pick_d {
                        pick_d = d;
                        pick = i;
                        if d <= base {
                            break;
                        }
                    }
                }
                let r = remaining.remove(pick);
                prep.widen(&mut nodes, r);
                members.push(r);
            }
            members.sort_unstable();
            clusters.push(members);
            cluster_nodes.push(nodes.clone());
        }
        for r in std::mem::take(&mut remaining) {
            pace.step(clusters.len())?;
            let mut pick = 0;
            let mut pick_d = f64::INFINITY;
            for (c, members) in clusters.iter().enumerate() {
                let size = members.len() as f64;
                let grow = (size + 1.0) * prep.spread_with(&cluster_nodes[c], r)
                    - size * prep.spread(&cluster_nodes[c]);
                if grow < pick_d {
                    pick_d = grow;
                    pick = c;
                }
            }
            clusters[pick].push(r);
            prep.widen(&mut cluster_nodes[pick], r);
        }
    }
    tick(control, n - remaining.len(), n)?;
    finish(&prep, input, "k_member", &clusters, control)
}
