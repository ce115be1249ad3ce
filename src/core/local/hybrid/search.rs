//! S-Hybrid's lattice walk (Nergiz, Gök & Özkanlı 2013, "Preservation of Utility through Hybrid
//! k-Anonymization", TrustBus, §4 Algorithm 1; implementation note `nergiz-2013-hybrid-k-anonymization.md`
//! §2.1): every full-domain generalization from the most general level down, each repaired with
//! CreateHybrid; a node that cannot be repaired removes every more specific node below it (the paper's
//! anti-monotone pruning, exact without relocation and heuristic with it). Among the repaired nodes the
//! lowest loss wins, then the fewest changed cells, then the lexicographically smallest level vector.
//!
//! A node is pruned exactly when one of its direct generalizations failed or was pruned, which marks the
//! whole down-set of every failed node. The repaired table of the best node so far is kept (the
//! randomized mode could not recompute it). Progress is reported per node, cancellation polled per node.

use super::{NodeResult, Prepared, COST_TOLERANCE};
use crate::core::control::{Control, Phase, Progress};
use crate::core::error::CoreError;
use crate::core::lattice::Lattice;

/// Largest lattice the walk accepts (one status byte per node).
const MAX_NODES: u128 = 1 << 26;

/// What the walk found.
#[derive(Debug)]
pub(super) struct Found {
    pub(super) best: NodeResult,
    pub(super) nodes_evaluated: u64,
    pub(super) lattice_size: u64,
}

/// Whether `a` beats `b`: lower loss (within the tolerance), fewer changed cells, smaller levels.
fn better(a: &NodeResult, b: &NodeResult) -> bool {
    if (a.loss - b.loss).abs() > COST_TOLERANCE {
        return a.loss < b.loss;
    }
    (a.relocation.changed, &a.levels) < (b.relocation.changed, &b.levels)
}

/// Walks the lattice of `prepared` top-down and returns the best repaired node.
pub(super) fn walk(prepared: &Prepared<'_>, control: &dyn Control) -> Result<Found, CoreError> {
    let max_levels: Vec<u8> = prepared.maps.iter().map(|m| m.max_level() as u8).collect();
    let lattice = Lattice::new(max_levels.clone());
    if lattice.size() > MAX_NODES {
        return Err(CoreError::LatticeTooLarge {
            size: lattice.size(),
            algorithm: "hybrid",
            limit: MAX_NODES,
        });
    }
    let total = lattice.size() as u64;
    // false: not (yet) known to fail; true: failed or pruned
    let mut bad = vec![false; total as usize];
    let mut best: Option<NodeResult> = None;
    let mut top_sizes: Vec<u32> = Vec::new();
    let mut done = 0u64;
    let mut evaluated = 0u64;
    let mut scratch = Vec::new();
    let mut outcome = Ok(());
    let bottom = vec![0u8; max_levels.len()];
    for height in (0..=lattice.top_height()).rev() {
        let finished = Lattice::for_each_at_height(&bottom, &max_levels, height, &mut |levels| {
            if control.is_cancelled() {
                outcome = Err(CoreError::Cancelled);
                return false;
            }
            let id = lattice.id(levels);
            let pruned = (0..levels.len())
                .any(|j| levels[j] < max_levels[j] && bad[(id + lattice.stride(j)) as usize]);
            if pruned {
                bad[id as usize] = true;
            } else {
                evaluated += 1;
                let (groups, relocation) = prepared.evaluate(levels, id, &mut scratch);
                if height == lattice.top_height() {
                    top_sizes.clone_from(&groups.sizes);
                }
                match relocation {
                    None => bad[id as usize] = true,
                    Some(relocation) => {
                        let loss = prepared.penalties.loss(
                            &groups.keys,
                            &relocation.sizes,
                            levels,
                            prepared.rows,
                        );
                        let candidate = NodeResult {
                            levels: levels.to_vec(),
                            groups,
                            relocation,
                            loss,
                        };
                        if best.as_ref().is_none_or(|b| better(&candidate, b)) {
                            best = Some(candidate);
                        }
                    }
                }
            }
            done += 1;
            control.report(Progress {
                phase: Phase::Searching,
                done,
                total,
            });
            true
        });
        outcome.clone()?;
        if !finished {
            break;
        }
    }
    let k = prepared.limits.k;
    let best = best.ok_or_else(|| CoreError::NoSolution {
        models: format!(
            "{k}-anonymity with at most {} relocated cells",
            prepared.limits.budget
        ),
        max_suppressed: 0,
        top_failing: top_sizes
            .iter()
            .filter(|&&s| u64::from(s) < k)
            .map(|&s| u64::from(s))
            .sum(),
        top_classes: top_sizes.len() as u64,
        top_smallest_class: top_sizes.iter().map(|&s| u64::from(s)).min().unwrap_or(0),
    })?;
    Ok(Found {
        best,
        nodes_evaluated: evaluated,
        lattice_size: total,
    })
}
