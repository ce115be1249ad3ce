//! Top-down partitioning (Xu, Wang, Pei, Wang, Shi, Fu 2006, "Utility-based anonymization using local
//! recoding", KDD, §4.2; as Gorla 2019 §2.3 describes it, note §6), a baseline of the
//! dependency-preserving algorithms.
//!
//! A part of at least 2k records is split in two: from a random record u, v is the record furthest from
//! u, then u the record furthest from v, repeated while the distance grows (at most a few times); the
//! other records, in random order, join the side whose information loss grows least. A side left with
//! fewer than k records then takes, one at a time, the record of the other side whose move costs least
//! (Xu's clean-up), so both sides have at least k records; each side is split again. Parts of fewer
//! than 2k records are published. Distance and information loss are Byun's categorical ones
//! ([`super::k_member`]). Nothing is suppressed unless the table has fewer than k records.
//! Cost: O(N log N) information-loss evaluations for balanced splits, O(N²) at worst.

use super::{finish, tick, ClusteringResult, FunctionalDependency, Prepared, PreserveMode};
use crate::core::control::{Control, Pace};
use crate::core::error::CoreError;
use crate::core::local::LocalInput;
use crate::core::rng::SplitMix64;

/// Options of [`top_down`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TopDownOptions {
    /// k of k-anonymity (≥ 1).
    pub k: usize,
    /// Seed of the random first records and assignment orders.
    pub seed: u64,
}

impl Default for TopDownOptions {
    fn default() -> Self {
        Self { k: 5, seed: 0 }
    }
}

/// The record of `part` furthest from record `from` (ties: first).
fn furthest(
    prep: &Prepared<'_>,
    part: &[u32],
    from: u32,
    nodes: &mut Vec<(u8, u32)>,
) -> (u32, f64) {
    prep.lca(&[from], nodes);
    let mut best = (from, -1.0);
    for &r in part {
        let d = prep.spread_with(nodes, r);
        if d > best.1 {
            best = (r, d);
        }
    }
    best
}

/// Growth of a side's information loss when record `r` joins it.
fn growth(prep: &Prepared<'_>, nodes: &[(u8, u32)], size: usize, r: u32) -> f64 {
    (size as f64 + 1.0) * prep.spread_with(nodes, r) - size as f64 * prep.spread(nodes)
}

/// Runs top-down partitioning. Functional dependencies are only measured (Δ, utility, violations in
/// the report).
pub fn top_down(
    input: &LocalInput<'_>,
    dependencies: &[FunctionalDependency<'_>],
    options: &TopDownOptions,
    control: &dyn Control,
) -> Result<ClusteringResult, CoreError> {
    let prep = Prepared::new(input, dependencies, options.k, PreserveMode::Continuous)?;
    let n = prep.rows;
    let k = prep.k;
    let mut rng = SplitMix64(options.seed);
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut stack: Vec<Vec<u32>> = Vec::new();
    if n >= k {
        stack.push((0..n as u32).collect());
    }
    let mut done = 0;
    let mut scratch = Vec::new();
    // a split of a large part scans it several times; its steps count on `pace`
    let mut pace = Pace::new(control);
    while let Some(mut part) = stack.pop() {
        tick(control, done, n)?;
        if part.len() < 2 * k {
            done += part.len();
            part.sort_unstable();
            out.push(part);
            continue;
        }
        let mut u = part[rng.index(part.len())];
        pace.step(part.len())?;
        let (mut v, mut d) = furthest(&prep, &part, u, &mut scratch);
        for _ in 0..3 {
            pace.step(part.len())?;
            let (w, e) = furthest(&prep, &part, v, &mut scratch);
            if e <= d {
                break;
            }
            u = v;
            v = w;
            d = e;
        }
        if u == v {
            v = *part.iter().find(|&&r| r != u).unwrap_or(&u);
        }
        // random order of the other records
        let mut rest: Vec<u32> = part.iter().copied().filter(|&r| r != u && r != v).collect();
        for i in (1..rest.len()).rev() {
            rest.swap(i, rng.index(i + 1));
        }
        let mut sides = [vec![u], vec![v]];
        let mut nodes = [Vec::new(), Vec::new()];
        prep.lca(&sides[0], &mut nodes[0]);
        prep.lca(&sides[1], &mut nodes[1]);
        for r in rest {
            pace.step(1)?;
            let g0 = growth(&prep, &nodes[0], sides[0].len(), r);
            let g1 = growth(&prep, &nodes[1], sides[1].len(), r);
            let s = usize::from(g1 < g0);
            sides[s].push(r);
            prep.widen(&mut nodes[s], r);
        }
        for small in 0..2 {
            let big = 1 - small;
            while sides[small].len() < k {
                pace.step(sides[big].len())?;
                let mut pick = 0;
                let mut pick_g = f64::INFINITY;
                for (i, &r) in sides[big].iter().enumerate() {
                    let g = growth(&prep, &nodes[small], sides[small].len(), r);
                    if g < pick_g {
                        pick_g = g;
                        pick = i;
                    }
                }
                let r = sides[big].swap_remove(pick);
                prep.widen(&mut nodes[small], r);
                sides[small].push(r);
            }
        }
        let [a, b] = sides;
        stack.push(b);
        stack.push(a);
    }
    tick(control, done, n)?;
    out.sort_unstable_by_key(|m| m[0]);
    finish(&prep, input, "top_down", &out, control)
}
