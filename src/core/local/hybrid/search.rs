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
//!
//! Every direct generalization of a node that is not pruned was repaired one height up, so the groups of
//! the repaired nodes of the previous height are kept and each node's groups are rolled up from one of
//! them (`groups.rs`) instead of being computed from the base tuples again. The nodes of one height
//! depend on the height above only, so they are grouped and repaired in parallel (rayon); their results
//! are then taken in walk order, so the outcome, the progress reports and the tie-breaks are those of a
//! sequential walk (every node's randomized choices come from its own stream).
//!
//! A node is grouped from the projection of the distinct tuples onto the quasi-identifiers it has below
//! their top level ([`Projections`]): on adult the nodes a walk repairs have about 2,300 such tuples on
//! average instead of 18,109. Its groups are rolled up from a direct generalization that is still below
//! the top in the attribute it generalizes (so it uses the same projection), else grouped from scratch.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::create::Relocation;
use super::groups::{BaseTuples, NodeGroups};
use super::{NodeResult, Parent, Prepared, COST_TOLERANCE};
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

/// A node's groups, its repair (`None` when it failed) and the loss of the repair.
type Evaluated = (NodeGroups, Option<Relocation>, Option<f64>);

/// The quasi-identifiers of `levels` below their top level, one bit each; [`ALL`] (no projection) with
/// more quasi-identifiers than bits.
pub(super) fn projection_mask(levels: &[u8], max_levels: &[u8]) -> u64 {
    if levels.len() >= 64 {
        return ALL;
    }
    levels
        .iter()
        .zip(max_levels)
        .enumerate()
        .filter(|(_, (level, max))| level < max)
        .fold(0, |mask, (j, _)| mask | 1 << j)
}

/// The mask of a node grouped from the base tuples themselves.
const ALL: u64 = u64::MAX;

/// The mask of the nodes with no attribute at the top level, which use the base tuples.
fn full_mask(attributes: usize) -> u64 {
    if attributes >= 64 {
        ALL
    } else {
        (1 << attributes) - 1
    }
}

/// The projections of the base tuples onto the quasi-identifiers below their top level, by mask of
/// those attributes: a node high in the lattice has far fewer distinct tuples to group than the table
/// has, and all nodes with the same attributes at the top share one projection.
///
/// The projection of a mask is made from that of the mask without its attribute of most distinct codes,
/// by splitting its partition of the base tuples by that attribute's codes (one pass); numbering by first
/// appearance makes its content independent of how it was made.
#[derive(Debug, Default)]
pub(super) struct Projections {
    /// Per mask: its partition of the base tuples, and the projected tuples.
    by_mask: FxHashMap<u64, (Vec<u32>, BaseTuples)>,
}

impl Projections {
    /// The tuples the nodes of `mask` are grouped from: the base tuples when no attribute is at its
    /// top level, else their projection, which must have been made (see [`Projections::extend_for`]).
    pub(super) fn base<'s>(&'s self, prepared: &'s Prepared<'_>, mask: u64) -> &'s BaseTuples {
        debug_assert!(
            mask == ALL
                || mask == full_mask(prepared.maps.len())
                || self.by_mask.contains_key(&mask),
            "projection {mask:#x} was not made"
        );
        self.by_mask
            .get(&mask)
            .map_or(&prepared.base, |(_, tuples)| tuples)
    }

    /// Drops the projections no node at `height` or below can use and none of theirs is split from.
    ///
    /// A node with the attributes outside `mask` at their top level is at least as high as the sum of
    /// those top levels, so `mask` is usable down from that height; a projection is split from one whose
    /// mask lacks one attribute, whose sum is larger by that attribute's top level at most. Keeping the
    /// masks whose sum exceeds `height` by no more than the largest top level therefore keeps the
    /// immediate source of every projection a later height needs; a deeper source that was dropped is
    /// made again by [`Projections::extend_for`] (identically: numbering is by first appearance). Only
    /// the projections of the walk's last heights are held at once.
    pub(super) fn retain_usable(&mut self, max_levels: &[u8], height: u64) {
        let highest_step = max_levels.iter().copied().max().map_or(0, u64::from);
        self.by_mask.retain(|&mask, _| {
            let top_sum: u64 = max_levels
                .iter()
                .enumerate()
                .filter(|&(j, _)| mask >> j & 1 == 0)
                .map(|(_, &max)| u64::from(max))
                .sum();
            top_sum <= height + highest_step
        });
    }

    /// The mask a projection is split from (see [`Projections`]).
    fn narrower(prepared: &Prepared<'_>, mask: u64) -> (u64, usize) {
        let attribute = (0..prepared.maps.len())
            .filter(|&j| mask >> j & 1 == 1)
            .max_by_key(|&j| (prepared.base.distinct(j), j))
            .unwrap_or(0);
        (mask & !(1 << attribute), attribute)
    }

    /// Makes the projections of `masks` that are missing and those they are split from, in parallel
    /// from the narrowest masks up. Each projection scans the base tuples, and a height may need many,
    /// so `control` is polled before each one.
    pub(super) fn extend_for(
        &mut self,
        prepared: &Prepared<'_>,
        masks: impl Iterator<Item = u64>,
        control: &dyn Control,
    ) -> Result<(), CoreError> {
        let full = full_mask(prepared.maps.len());
        let mut missing: FxHashSet<u64> = FxHashSet::default();
        let mut pending: Vec<u64> = masks.filter(|&mask| mask != full && mask != ALL).collect();
        while let Some(mask) = pending.pop() {
            if self.by_mask.contains_key(&mask) || !missing.insert(mask) {
                continue;
            }
            if mask != 0 {
                pending.push(Self::narrower(prepared, mask).0);
            }
        }
        let mut missing: Vec<u64> = missing.into_iter().collect();
        missing.sort_unstable_by_key(|&mask| (mask.count_ones(), mask));
        let base = &prepared.base;
        let mut start = 0;
        while start < missing.len() {
            let width = missing[start].count_ones();
            let end = start
                + missing[start..]
                    .iter()
                    .take_while(|m| m.count_ones() == width)
                    .count();
            let made: Option<Vec<Made>> = missing[start..end]
                .par_iter()
                .map_init(Vec::new, |scratch, &mask| {
                    if control.is_cancelled() {
                        return None;
                    }
                    let made = if mask == 0 {
                        base.split_projection((&vec![0u32; base.len()], 1), None, scratch)
                    } else {
                        let (narrower, attribute) = Self::narrower(prepared, mask);
                        let (ids, tuples) = &self.by_mask[&narrower];
                        base.split_projection((ids, tuples.len()), Some(attribute), scratch)
                    };
                    Some((mask, made))
                })
                .collect();
            self.by_mask.extend(made.ok_or(CoreError::Cancelled)?);
            start = end;
        }
        Ok(())
    }
}

/// A projection made for a mask: the mask, every base tuple's projected tuple and the projected tuples.
type Made = (u64, (Vec<u32>, BaseTuples));

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
    let bottom = vec![0u8; max_levels.len()];
    // group of every base tuple and group count of the repaired nodes one height up, and of this height
    let mut above: FxHashMap<u64, (Vec<u32>, usize)> = FxHashMap::default();
    let mut here: FxHashMap<u64, (Vec<u32>, usize)> = FxHashMap::default();
    let mut projections = Projections::default();
    for height in (0..=lattice.top_height()).rev() {
        if control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        // the nodes of this height in walk order; pruning depends on the height above only
        let mut nodes: Vec<(Vec<u8>, u64, bool)> = Vec::new();
        Lattice::for_each_at_height(&bottom, &max_levels, height, &mut |levels| {
            let id = lattice.id(levels);
            let pruned = (0..levels.len())
                .any(|j| levels[j] < max_levels[j] && bad[(id + lattice.stride(j)) as usize]);
            nodes.push((levels.to_vec(), id, pruned));
            true
        });
        projections.retain_usable(&max_levels, height as u64);
        projections.extend_for(
            prepared,
            nodes
                .iter()
                .filter(|(_, _, pruned)| !pruned)
                .map(|(levels, _, _)| projection_mask(levels, &max_levels)),
            control,
        )?;
        let above_ref = &above;
        let projections_ref = &projections;
        let repaired: Vec<Option<Evaluated>> = nodes
            .par_iter()
            .map_init(Vec::new, |scratch, (levels, id, pruned)| {
                if *pruned || control.is_cancelled() {
                    return None;
                }
                let base = projections_ref.base(prepared, projection_mask(levels, &max_levels));
                // every direct generalization of a node that is not pruned was repaired one height up;
                // one still below the top in the attribute it generalizes uses the same projection
                let parent = (0..levels.len())
                    .find(|&j| levels[j] + 1 < max_levels[j])
                    .and_then(|j| {
                        let (group_of_tuple, groups) = above_ref.get(&(id + lattice.stride(j)))?;
                        Some(Parent {
                            group_of_tuple,
                            groups: *groups,
                            attribute: j,
                        })
                    });
                let (groups, relocation) = prepared.evaluate(base, levels, *id, parent, scratch);
                let loss = relocation.as_ref().map(|relocation| {
                    prepared
                        .penalties
                        .loss(&groups.keys, &relocation.sizes, levels, prepared.rows)
                });
                Some((groups, relocation, loss))
            })
            .collect();
        for ((levels, id, pruned), result) in nodes.into_iter().zip(repaired) {
            if pruned {
                bad[id as usize] = true;
            } else {
                let Some((groups, relocation, loss)) = result else {
                    return Err(CoreError::Cancelled);
                };
                evaluated += 1;
                if height == lattice.top_height() {
                    top_sizes.clone_from(&groups.sizes);
                }
                match (relocation, loss) {
                    (Some(relocation), Some(loss)) => {
                        let count = groups.len();
                        let mut candidate = NodeResult {
                            levels,
                            groups,
                            relocation,
                            loss,
                        };
                        if best.as_ref().is_none_or(|b| better(&candidate, b)) {
                            if height > 0 {
                                here.insert(id, (candidate.groups.group_of_tuple.clone(), count));
                            }
                            best = Some(candidate);
                        } else if height > 0 {
                            let partition = std::mem::take(&mut candidate.groups.group_of_tuple);
                            here.insert(id, (partition, count));
                        }
                    }
                    _ => bad[id as usize] = true,
                }
            }
            done += 1;
            control.report(Progress {
                phase: Phase::Searching,
                done,
                total,
            });
        }
        above = std::mem::take(&mut here);
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
