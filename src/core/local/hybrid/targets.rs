//! The distribution targets of CreateHybrid once no nearly-full group is left: the k-anonymous groups.
//! From that moment the set is fixed (targets only grow, small groups never reach k records, nearly-full
//! groups never come back), so it is collected once, in ascending group order, with its packed keys.
//!
//! A uniform draw is then one index into that list, and the closest target (fewest differing labels,
//! then the lowest group) is found without scanning the groups: per quasi-identifier a hash map from the
//! key with that label blanked to the lowest target carrying it answers every query one label away (the
//! common case); only queries with no such target scan the list, stopping at the first target two labels
//! away. The maps are built on the first closest-target query.

use rustc_hash::FxHashMap;

use super::create::{lanes_differing, LANE};
use crate::core::secret_rng::SecretStream;

/// The fixed set of k-anonymous groups a small group may move into.
#[derive(Debug)]
pub(super) struct Targets {
    /// Target groups, ascending.
    members: Vec<u32>,
    /// Packed key of every member (see `create::pack`), or empty when the keys are not packed.
    packed: Vec<u128>,
    /// Labels per key.
    q: usize,
    /// Per label position: packed key with that lane cleared → lowest member carrying it. Empty until
    /// the first closest-target query.
    near: Vec<FxHashMap<u128, u32>>,
}

impl Targets {
    /// The targets `members` (ascending), with the packed keys of every group when there are any.
    pub(super) fn new(members: Vec<u32>, packed: Option<&[u128]>, q: usize) -> Self {
        let packed = packed.map_or_else(Vec::new, |keys| {
            members.iter().map(|&g| keys[g as usize]).collect()
        });
        Self {
            members,
            packed,
            q,
            near: Vec::new(),
        }
    }

    /// The targets, ascending.
    pub(super) fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.members.iter().map(|&g| g as usize)
    }

    /// A uniform target, as `rng` would pick it from the ascending list; `None` when there is none.
    pub(super) fn draw(&self, rng: &mut SecretStream) -> Option<usize> {
        if self.members.is_empty() {
            return None;
        }
        Some(self.members[rng.below(self.members.len() as u64) as usize] as usize)
    }

    /// Whether [`Targets::closest`] can answer (the keys were packed).
    pub(super) fn packed(&self) -> bool {
        !self.members.is_empty() && self.packed.len() == self.members.len()
    }

    /// Mask clearing lane `lane` of a packed key.
    fn blank(lane: usize) -> u128 {
        !(((1u128 << LANE) - 1) << (lane * LANE))
    }

    /// The closest target to the group with packed key `query`, which must not be a target: fewest
    /// differing labels, then the lowest group. `None` when there is no target. Needs packed keys.
    pub(super) fn closest(&mut self, query: u128) -> Option<usize> {
        if self.near.is_empty() {
            self.near = (0..self.q)
                .map(|lane| {
                    let mask = Self::blank(lane);
                    let mut map =
                        FxHashMap::with_capacity_and_hasher(self.members.len(), Default::default());
                    for (&key, &g) in self.packed.iter().zip(&self.members) {
                        map.entry(key & mask).or_insert(g);
                    }
                    map
                })
                .collect();
        }
        // a target sharing all labels but one is one away (the query is no target, so none is zero)
        let adjacent = self
            .near
            .iter()
            .enumerate()
            .filter_map(|(lane, map)| map.get(&(query & Self::blank(lane))).copied())
            .min();
        if let Some(g) = adjacent {
            return Some(g as usize);
        }
        let mut best: Option<(u64, u32)> = None;
        for (&key, &g) in self.packed.iter().zip(&self.members) {
            let d = lanes_differing(key ^ query);
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, g));
                if d <= 2 {
                    break;
                }
            }
        }
        best.map(|(_, g)| g as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::Targets;
    use crate::core::local::hybrid::create::{lanes_differing, pack};
    use proptest::prelude::*;

    proptest! {
        /// The closest target equals the plain scan's: lowest distance, then lowest group.
        #[test]
        fn closest_matches_a_scan(
            q in 1usize..=8,
            labels in 1u32..4,
            raw in prop::collection::vec(prop::collection::vec(0u32..4, 8), 1..60),
            chosen in prop::collection::vec(any::<bool>(), 60),
        ) {
            let mut keys: Vec<Vec<u32>> =
                raw.iter().map(|k| k[..q].iter().map(|&l| l % labels).collect()).collect();
            keys.sort();
            keys.dedup();
            let flat: Vec<u32> = keys.concat();
            let packed = pack(&flat, q).expect("small labels pack");
            let members: Vec<u32> =
                (0..keys.len() as u32).filter(|&g| chosen[g as usize]).collect();
            let mut targets = Targets::new(members.clone(), Some(&packed), q);
            for g in (0..keys.len()).filter(|&g| !chosen[g]) {
                let expected = members
                    .iter()
                    .map(|&m| (lanes_differing(packed[m as usize] ^ packed[g]), m as usize))
                    .min()
                    .map(|(_, m)| m);
                prop_assert_eq!(targets.closest(packed[g]), expected);
            }
        }
    }
}
