//! The frequency sets an evaluator keeps for rolling up later checks (Issa 2009 §2.5 D: a node's classes
//! are unions of the classes of any node below it, so grouping can start from the smallest cached set
//! below the target instead of from the records).
//!
//! Lookups scan every entry, so the nodes' levels are kept in one flat array beside the sets: a scan of
//! a few thousand entries touches a few kilobytes. Entries are evicted least recently used, within a
//! count and a byte budget.

use crate::core::groupify::FrequencySet;

/// Cached frequency sets with their levels laid out flat for fast lookups.
#[derive(Debug)]
pub struct SetCache {
    dimensions: usize,
    max_entries: usize,
    max_bytes: usize,
    sets: Vec<FrequencySet>,
    /// `levels[i * dimensions..(i + 1) * dimensions]`: the node of entry i.
    levels: Vec<u8>,
    /// Classes of entry i (the cost of rolling up from it).
    sizes: Vec<usize>,
    /// Clock value of entry i's last use.
    used: Vec<u64>,
    clock: u64,
    bytes: usize,
}

impl SetCache {
    /// An empty cache for nodes of `dimensions` levels, holding at most `max_entries` sets and
    /// `max_bytes` of them (by [`FrequencySet::weight`]).
    pub fn new(dimensions: usize, max_entries: usize, max_bytes: usize) -> Self {
        Self {
            dimensions,
            max_entries,
            max_bytes,
            sets: Vec::new(),
            levels: Vec::new(),
            sizes: Vec::new(),
            used: Vec::new(),
            clock: 0,
            bytes: 0,
        }
    }

    /// Number of cached sets.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// The entry with the fewest classes among those whose every level is at most `ceiling`'s, marked as
    /// used. Callers raise `ceiling` to `u8::MAX` for attributes that any level may generalize (constant
    /// at the target).
    pub fn smallest_below(&mut self, ceiling: &[u8]) -> Option<&FrequencySet> {
        debug_assert_eq!(ceiling.len(), self.dimensions);
        let d = self.dimensions;
        let mut best: Option<usize> = None;
        for (i, size) in self.sizes.iter().enumerate() {
            if best.is_some_and(|b| self.sizes[b] <= *size) {
                continue;
            }
            let node = &self.levels[i * d..i * d + d];
            if node.iter().zip(ceiling).all(|(have, limit)| have <= limit) {
                best = Some(i);
            }
        }
        let i = best?;
        self.clock += 1;
        self.used[i] = self.clock;
        Some(&self.sets[i])
    }

    /// Keeps `set` unless a set of the same node is cached or it alone would take over a quarter of the
    /// byte budget; evicts least recently used entries to make room.
    pub fn insert(&mut self, set: FrequencySet) {
        let d = self.dimensions;
        let weight = set.weight();
        if weight > self.max_bytes / 4 || self.position(set.levels()).is_some() {
            return;
        }
        while !self.sets.is_empty()
            && (self.sets.len() >= self.max_entries || self.bytes + weight > self.max_bytes)
        {
            let oldest = self
                .used
                .iter()
                .enumerate()
                .min_by_key(|(_, &used)| used)
                .map_or(0, |(i, _)| i);
            self.remove(oldest);
        }
        self.clock += 1;
        self.bytes += weight;
        self.levels.extend_from_slice(&set.levels()[..d]);
        self.sizes.push(set.len());
        self.used.push(self.clock);
        self.sets.push(set);
    }

    /// Index of the entry of node `levels`.
    fn position(&self, levels: &[u8]) -> Option<usize> {
        let d = self.dimensions;
        (0..self.sets.len()).find(|&i| &self.levels[i * d..i * d + d] == levels)
    }

    /// Removes entry `i` (the last entry takes its place).
    fn remove(&mut self, i: usize) {
        let d = self.dimensions;
        let last = self.sets.len() - 1;
        if i != last {
            self.levels.copy_within(last * d..last * d + d, i * d);
        }
        self.levels.truncate(last * d);
        self.sizes.swap_remove(i);
        self.used.swap_remove(i);
        let old = self.sets.swap_remove(i);
        self.bytes -= old.weight();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(levels: &[u8], classes: usize) -> FrequencySet {
        FrequencySet::with_classes_for_tests(levels, classes)
    }

    #[test]
    fn finds_the_smallest_set_below_and_evicts_the_least_recently_used() {
        let mut cache = SetCache::new(2, 3, usize::MAX);
        cache.insert(set(&[0, 0], 100));
        cache.insert(set(&[1, 0], 40));
        cache.insert(set(&[0, 2], 30));
        // [1, 1]: [0, 0] and [1, 0] are below it, [0, 2] is not
        assert_eq!(cache.smallest_below(&[1, 1]).map(|s| s.len()), Some(40));
        // an attribute constant at the target admits any level
        assert_eq!(
            cache.smallest_below(&[1, u8::MAX]).map(|s| s.len()),
            Some(30)
        );
        assert!(cache
            .smallest_below(&[0, 1])
            .is_some_and(|s| s.len() == 100));
        // a duplicate node is not stored twice
        cache.insert(set(&[1, 0], 40));
        assert_eq!(cache.len(), 3);
        // full: the least recently used entry ([1, 0], used before the other two) goes
        cache.insert(set(&[2, 2], 5));
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.smallest_below(&[1, 1]).map(|s| s.len()), Some(100));
        assert_eq!(cache.smallest_below(&[2, 2]).map(|s| s.len()), Some(5));
    }

    #[test]
    fn respects_the_byte_budget() {
        let one = set(&[0], 10).weight();
        let mut cache = SetCache::new(1, 100, one * 4 + 1);
        for level in 0..6 {
            cache.insert(set(&[level], 10));
        }
        assert_eq!(cache.len(), 4);
        assert!(cache.smallest_below(&[1]).is_none());
        assert!(cache.smallest_below(&[2]).is_some());
        // a set over a quarter of the budget is not kept
        cache.insert(set(&[9], 1000));
        assert!(cache.smallest_below(&[9]).is_some_and(|s| s.len() == 10));
    }
}
