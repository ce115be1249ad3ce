//! The equality groups of one full-domain generalization, computed from the distinct original
//! quasi-identifier tuples (the table's frequency set at the bottom of the lattice) rather than from the
//! records, so a lattice node costs time in the number of distinct tuples only. Groups are numbered by
//! first appearance, and renumbered on demand in canonical order: ascending generalized key, label codes
//! compared attribute by attribute (the order the hierarchies list their values in), so results never
//! depend on the order of the input records.
//!
//! A node is grouped either from scratch (one refinement pass per quasi-identifier) or rolled up from a
//! node one level more general in one attribute (one pass: its groups split by that attribute's labels).
//! Numbering by first appearance depends on the partition only, so both give identical groups.
//!
//! A node at the top level of some quasi-identifiers may also be grouped from the projection of the
//! tuples onto the others (`BaseTuples::split_projection`): the same groups from far fewer tuples high in
//! the lattice, numbered in a different first-appearance order but identically once canonical.

use std::collections::HashMap;

use crate::core::data::GeneralizationMap;

/// Largest dense scratch table used to number groups; larger key spaces fall back to hashing.
const DENSE_LIMIT: usize = 1 << 22;

/// The distinct original quasi-identifier tuples and how many records carry each.
#[derive(Debug, Clone)]
pub(super) struct BaseTuples {
    /// Column codes, `tuples[t * q + j]`.
    pub(super) codes: Vec<u32>,
    /// Records per tuple.
    pub(super) counts: Vec<u32>,
    /// The tuple of every record; empty in a projection (see [`BaseTuples::split_projection`]).
    pub(super) tuple_of_row: Vec<u32>,
    /// Distinct codes per quasi-identifier column.
    distinct: Vec<usize>,
}

/// Groups of one node.
#[derive(Debug, Clone)]
pub(super) struct NodeGroups {
    /// Generalized key of every group, `keys[g * q + j]` is a label code at the node's level of `j`.
    pub(super) keys: Vec<u32>,
    /// Records per group.
    pub(super) sizes: Vec<u32>,
    /// The group of every base tuple.
    pub(super) group_of_tuple: Vec<u32>,
    /// Whether the groups are numbered in canonical order (see [`NodeGroups::canonicalize`]); before,
    /// they are numbered in order of first appearance.
    pub(super) canonical: bool,
}

impl NodeGroups {
    /// Number of groups.
    pub(super) fn len(&self) -> usize {
        self.sizes.len()
    }

    /// The key of group `g`.
    pub(super) fn key(&self, g: usize) -> &[u32] {
        let q = self.keys.len() / self.sizes.len().max(1);
        &self.keys[g * q..(g + 1) * q]
    }
}

/// Renumbers `ids` (values below `bound`) combined with `labels` (values below `labels_bound`) densely in
/// order of first appearance; returns the number of distinct pairs. Reuses `scratch`.
fn refine(
    ids: &mut [u32],
    labels: impl Fn(usize) -> u32,
    bound: usize,
    labels_bound: usize,
    scratch: &mut Vec<u32>,
) -> usize {
    let mut next = 0u32;
    match bound.checked_mul(labels_bound) {
        Some(space) if space <= DENSE_LIMIT => {
            if scratch.len() < space {
                scratch.resize(space, u32::MAX);
            }
            let mut touched = Vec::new();
            for (i, id) in ids.iter_mut().enumerate() {
                let index = *id as usize * labels_bound + labels(i) as usize;
                if scratch[index] == u32::MAX {
                    scratch[index] = next;
                    next += 1;
                    touched.push(index);
                }
                *id = scratch[index];
            }
            for index in touched {
                scratch[index] = u32::MAX;
            }
        }
        _ => {
            let mut seen: HashMap<u64, u32> = HashMap::with_capacity(ids.len());
            for (i, id) in ids.iter_mut().enumerate() {
                let key = u64::from(*id) << 32 | u64::from(labels(i));
                let value = *seen.entry(key).or_insert_with(|| {
                    next += 1;
                    next - 1
                });
                *id = value;
            }
        }
    }
    next as usize
}

impl BaseTuples {
    /// The distinct tuples of `columns` (one code slice per quasi-identifier, `distinct[j]` codes each).
    pub(super) fn new(columns: &[&[u32]], distinct: &[usize], rows: usize) -> Self {
        let q = columns.len();
        let mut ids = vec![0u32; rows];
        let mut bound = 1usize;
        let mut scratch = Vec::new();
        for (j, column) in columns.iter().enumerate() {
            bound = refine(
                &mut ids,
                |r| column[r],
                bound,
                distinct[j].max(1),
                &mut scratch,
            );
        }
        let tuples = if rows == 0 { 0 } else { bound };
        let mut codes = vec![0u32; tuples * q];
        let mut counts = vec![0u32; tuples];
        for (r, &t) in ids.iter().enumerate() {
            let t = t as usize;
            if counts[t] == 0 {
                for (j, column) in columns.iter().enumerate() {
                    codes[t * q + j] = column[r];
                }
            }
            counts[t] += 1;
        }
        Self {
            codes,
            counts,
            tuple_of_row: ids,
            distinct: distinct.iter().map(|&d| d.max(1)).collect(),
        }
    }

    /// The projection of these tuples onto a set of quasi-identifiers, made in one pass by splitting the
    /// parts of a narrower projection (the same set without `attribute`) by the codes of `attribute`.
    ///
    /// `narrower` gives the narrower projection's part of every tuple, numbered by first appearance, and
    /// its part count; with `attribute` `None` it must put every tuple in part 0 (the projection onto no
    /// attribute). Returns the new part of every tuple, numbered by first appearance, and the projected
    /// tuples: the codes of each part's first tuple and the records of all. A node may be grouped from a
    /// projection when it is at the top level of every attribute the projection leaves out, where all
    /// codes share one label. A projection has no row map.
    pub(super) fn split_projection(
        &self,
        narrower: (&[u32], usize),
        attribute: Option<usize>,
        scratch: &mut Vec<u32>,
    ) -> (Vec<u32>, Self) {
        let q = self.distinct.len();
        let (parts, narrower_count) = narrower;
        let radix = attribute.map_or(1, |j| self.distinct[j]);
        let code = |t: usize| attribute.map_or(0, |j| self.codes[t * q + j]);
        let space = narrower_count.saturating_mul(radix);
        let mut codes: Vec<u32> = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        let first_seen = |t: usize, codes: &mut Vec<u32>, counts: &mut Vec<u32>| {
            codes.extend_from_slice(&self.codes[t * q..(t + 1) * q]);
            counts.push(0);
        };
        let ids = if space > DENSE_LIMIT {
            let mut ids = parts.to_vec();
            let projected = refine(&mut ids, code, narrower_count, radix, scratch);
            counts.reserve(projected);
            for (t, &id) in ids.iter().enumerate() {
                if id as usize == counts.len() {
                    first_seen(t, &mut codes, &mut counts);
                }
                counts[id as usize] += self.counts[t];
            }
            ids
        } else {
            if scratch.len() < space {
                scratch.resize(space, u32::MAX);
            }
            let mut ids = Vec::with_capacity(self.len());
            let mut touched = Vec::new();
            for (t, &part) in parts.iter().enumerate() {
                let slot = part as usize * radix + code(t) as usize;
                let mut id = scratch[slot];
                if id == u32::MAX {
                    id = counts.len() as u32;
                    scratch[slot] = id;
                    touched.push(slot);
                    first_seen(t, &mut codes, &mut counts);
                }
                counts[id as usize] += self.counts[t];
                ids.push(id);
            }
            for slot in touched {
                scratch[slot] = u32::MAX;
            }
            ids
        };
        (
            ids,
            Self {
                codes,
                counts,
                tuple_of_row: Vec::new(),
                distinct: self.distinct.clone(),
            },
        )
    }

    /// Distinct codes of quasi-identifier `j`.
    pub(super) fn distinct(&self, j: usize) -> usize {
        self.distinct[j]
    }

    /// Number of distinct tuples.
    pub(super) fn len(&self) -> usize {
        self.counts.len()
    }

    /// The groups of the node `levels`, numbered in order of first appearance.
    pub(super) fn group(
        &self,
        maps: &[&GeneralizationMap],
        levels: &[u8],
        scratch: &mut Vec<u32>,
    ) -> NodeGroups {
        let q = maps.len();
        let n = self.len();
        let mut ids = vec![0u32; n];
        let mut bound = usize::from(n > 0);
        for (j, map) in maps.iter().enumerate() {
            let level = levels[j] as usize;
            if map.label_count(level) <= 1 {
                // one label: every tuple agrees
                continue;
            }
            let labels = map.codes(level);
            bound = refine(
                &mut ids,
                |t| labels[self.codes[t * q + j] as usize],
                bound,
                map.label_count(level).max(1),
                scratch,
            );
        }
        self.collect(ids, bound, maps, levels)
    }

    /// The groups of the node `levels` rolled up from the groups of the node one level more general in
    /// `attribute` (`parent` is its group of every tuple, below `parent_groups`): its groups split by
    /// the labels of `attribute` at `levels`. The same groups, numbered the same way, as
    /// [`BaseTuples::group`]: numbering by first appearance depends on the partition only.
    pub(super) fn refine_from(
        &self,
        maps: &[&GeneralizationMap],
        levels: &[u8],
        parent: &[u32],
        parent_groups: usize,
        attribute: usize,
        scratch: &mut Vec<u32>,
    ) -> NodeGroups {
        let q = maps.len();
        let mut ids = parent.to_vec();
        let map = maps[attribute];
        let level = levels[attribute] as usize;
        let labels = map.codes(level);
        let bound = refine(
            &mut ids,
            |t| labels[self.codes[t * q + attribute] as usize],
            parent_groups,
            map.label_count(level).max(1),
            scratch,
        );
        self.collect(ids, bound, maps, levels)
    }

    /// Sizes and keys of the groups `ids` (dense, below `groups`, in order of first appearance).
    fn collect(
        &self,
        ids: Vec<u32>,
        groups: usize,
        maps: &[&GeneralizationMap],
        levels: &[u8],
    ) -> NodeGroups {
        let q = maps.len();
        let mut first = vec![u32::MAX; groups];
        let mut sizes = vec![0u32; groups];
        for (t, &g) in ids.iter().enumerate() {
            if first[g as usize] == u32::MAX {
                first[g as usize] = t as u32;
            }
            sizes[g as usize] += self.counts[t];
        }
        let mut keys = Vec::with_capacity(groups * q);
        for &t in &first {
            let tuple = &self.codes[t as usize * q..(t as usize + 1) * q];
            keys.extend((0..q).map(|j| maps[j].codes(levels[j] as usize)[tuple[j] as usize]));
        }
        NodeGroups {
            keys,
            sizes,
            group_of_tuple: ids,
            canonical: false,
        }
    }
}

impl NodeGroups {
    /// Renumbers the groups in canonical order (ascending key, labels compared attribute by attribute).
    pub(super) fn canonicalize(&mut self, maps: &[&GeneralizationMap], levels: &[u8]) {
        if self.canonical {
            return;
        }
        let q = maps.len();
        let groups = self.sizes.len();
        let unsorted = &self.keys;
        let mut order: Vec<u32>;
        // keys packed in mixed radix compare as their label sequences do
        let radices: Vec<u128> = (0..q)
            .map(|j| maps[j].label_count(levels[j] as usize).max(1) as u128)
            .collect();
        let packed_fits = radices
            .iter()
            .try_fold(1u128, |product, &r| product.checked_mul(r))
            .is_some();
        if packed_fits && q > 0 {
            // sorted with their group beside them (keys are distinct, so the group never decides)
            let mut packed: Vec<(u128, u32)> = unsorted
                .chunks_exact(q)
                .zip(0u32..)
                .map(|(key, g)| {
                    let packed = key
                        .iter()
                        .zip(&radices)
                        .fold(0u128, |acc, (&label, &radix)| {
                            acc * radix + u128::from(label)
                        });
                    (packed, g)
                })
                .collect();
            packed.sort_unstable();
            order = packed.into_iter().map(|(_, g)| g).collect();
        } else {
            order = (0..groups as u32).collect();
            order.sort_unstable_by(|&a, &b| {
                unsorted[a as usize * q..(a as usize + 1) * q]
                    .cmp(&unsorted[b as usize * q..(b as usize + 1) * q])
            });
        }
        let mut rank = vec![0u32; groups];
        for (position, &g) in order.iter().enumerate() {
            rank[g as usize] = position as u32;
        }
        let mut keys = Vec::with_capacity(groups * q);
        for &g in &order {
            keys.extend_from_slice(&unsorted[g as usize * q..(g as usize + 1) * q]);
        }
        self.sizes = order.iter().map(|&g| self.sizes[g as usize]).collect();
        for g in &mut self.group_of_tuple {
            *g = rank[*g as usize];
        }
        self.keys = keys;
        self.canonical = true;
    }
}
