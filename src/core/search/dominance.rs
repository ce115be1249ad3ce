//! Dominance queries over a growing set of lattice nodes, in time that follows the set, not the lattice.
//!
//! The exact searches need to know whether a node lies above some checked solution or below some checked
//! non-solution (predictive tagging, Samarati 2001), and which checked node below a candidate gives the best
//! bound. A dense tag array answers in O(1) but costs a pass over every node it tags; on a lattice of
//! millions of nodes that pass dominates the search. Here every member is one bit in, for each attribute
//! `j` and level `v`, the set of members whose level at `j` is at most `v` (or at least `v`, for the upward
//! direction). A node `x` is dominated by the members in the intersection of the sets picked by its
//! levels, so a query ANDs one word per attribute for every 64 members and stops at the first non-zero
//! word: O(d · m / 64) for `m` members, and memory of `Σ_j (H_j + 1) · m` bits.
//!
//! Members are appended; [`Dominance::remove`] clears a member from an alive mask, so indices stay
//! stable (the [`super::border::Border`] removes members) until [`Dominance::compact`] drops the removed
//! ones.

/// Which members a query finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Members at or below the node in every attribute (the node generalizes them).
    Below,
    /// Members at or above the node in every attribute (the node specializes them).
    Above,
}

/// A set of nodes (as level vectors) indexed for dominance queries.
#[derive(Debug, Clone)]
pub struct Dominance {
    direction: Direction,
    max_levels: Vec<u8>,
    /// Word `w` of the bitset of members whose level at `j` is ≤ `v` (Below) or ≥ `v` (Above), at
    /// `rows[w * width + offset[j] + v]`: the rows of one word of members lie together.
    rows: Vec<u64>,
    /// The same for the opposite comparison: the members the node dominates.
    opposite: Vec<u64>,
    offset: Vec<usize>,
    /// Rows per word: `Σ_j (H_j + 1)`.
    width: usize,
    alive: Vec<u64>,
    /// Every member's levels, `d` bytes each, by index (for [`Dominance::compact`]).
    levels: Vec<u8>,
    members: usize,
    live: usize,
}

impl Dominance {
    /// An empty index for a lattice with these maximum levels.
    pub fn new(max_levels: &[u8], direction: Direction) -> Self {
        let mut offset = Vec::with_capacity(max_levels.len());
        let mut rows = 0;
        for &h in max_levels {
            offset.push(rows);
            rows += h as usize + 1;
        }
        Self {
            direction,
            max_levels: max_levels.to_vec(),
            rows: Vec::new(),
            opposite: Vec::new(),
            offset,
            width: rows,
            alive: Vec::new(),
            levels: Vec::new(),
            members: 0,
            live: 0,
        }
    }

    /// Adds `levels` as the next member and returns its index.
    pub fn push(&mut self, levels: &[u8]) -> usize {
        debug_assert_eq!(levels.len(), self.max_levels.len());
        let index = self.members;
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if word == self.alive.len() {
            self.alive.push(0);
            self.rows.resize(self.rows.len() + self.width, 0);
            self.opposite.resize(self.opposite.len() + self.width, 0);
        }
        self.alive[word] |= bit;
        for (j, &level) in levels.iter().enumerate() {
            let (below, above) = (level..=self.max_levels[j], 0..=level);
            let (rows, opposite) = match self.direction {
                Direction::Below => (below, above),
                Direction::Above => (above, below),
            };
            let base = word * self.width + self.offset[j];
            for v in rows {
                self.rows[base + v as usize] |= bit;
            }
            for v in opposite {
                self.opposite[base + v as usize] |= bit;
            }
        }
        self.levels.extend_from_slice(levels);
        self.members += 1;
        self.live += 1;
        index
    }

    /// Takes member `index` out of every later answer.
    pub fn remove(&mut self, index: usize) {
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if self.alive[word] & bit != 0 {
            self.alive[word] &= !bit;
            self.live -= 1;
        }
    }

    /// Whether some live member dominates `levels` in the index's direction.
    pub fn any(&self, levels: &[u8]) -> bool {
        self.first(levels).is_some()
    }

    /// The live member with the smallest index that dominates `levels`.
    pub fn first(&self, levels: &[u8]) -> Option<usize> {
        if self.live == 0 {
            return None;
        }
        (0..self.alive.len()).find_map(|word| {
            let hits = self.word(levels, word);
            (hits != 0).then(|| word * 64 + hits.trailing_zeros() as usize)
        })
    }

    /// Calls `f` with every live member that dominates `levels`, in index order.
    pub fn for_each(&self, levels: &[u8], mut f: impl FnMut(usize)) {
        if self.live == 0 {
            return;
        }
        for word in 0..self.alive.len() {
            let mut hits = self.word(levels, word);
            while hits != 0 {
                f(word * 64 + hits.trailing_zeros() as usize);
                hits &= hits - 1;
            }
        }
    }

    /// Calls `f` with every live member that `levels` dominates (the opposite direction), in index order.
    pub fn for_each_dominated(&self, levels: &[u8], mut f: impl FnMut(usize)) {
        for word in 0..self.alive.len() {
            let mut hits = self.hits(&self.opposite, levels, word);
            while hits != 0 {
                f(word * 64 + hits.trailing_zeros() as usize);
                hits &= hits - 1;
            }
        }
    }

    /// The levels of member `member`.
    pub fn levels(&self, member: usize) -> &[u8] {
        let dims = self.max_levels.len();
        &self.levels[member * dims..(member + 1) * dims]
    }

    /// Removed members outnumber the live ones.
    pub fn is_sparse(&self) -> bool {
        self.members - self.live > self.live.max(64)
    }

    /// Drops the removed members; the live ones get new indices (in the same order).
    pub fn compact(&mut self) {
        let dims = self.max_levels.len();
        let old = std::mem::replace(self, Self::new(&self.max_levels, self.direction));
        for member in 0..old.members {
            if old.alive[member / 64] & (1 << (member % 64)) != 0 {
                self.push(&old.levels[member * dims..(member + 1) * dims]);
            }
        }
    }

    /// The members of word `word` that dominate `levels`.
    fn word(&self, levels: &[u8], word: usize) -> u64 {
        self.hits(&self.rows, levels, word)
    }

    fn hits(&self, rows: &[u64], levels: &[u8], word: usize) -> u64 {
        let rows = &rows[word * self.width..(word + 1) * self.width];
        let mut hits = self.alive[word];
        for (&offset, &level) in self.offset.iter().zip(levels) {
            if hits == 0 {
                break;
            }
            hits &= rows.get(offset + level as usize).copied().unwrap_or(0);
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lattice::Lattice;
    use crate::core::rng::SplitMix64;

    fn brute(members: &[(Vec<u8>, bool)], x: &[u8], direction: Direction) -> Vec<usize> {
        members
            .iter()
            .enumerate()
            .filter(|(_, (m, alive))| {
                *alive
                    && match direction {
                        Direction::Below => Lattice::le(m, x),
                        Direction::Above => Lattice::le(x, m),
                    }
            })
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn answers_as_pairwise_comparison() {
        let max = [3u8, 1, 4, 2, 0];
        let mut rng = SplitMix64(7);
        let draw = |rng: &mut SplitMix64| -> Vec<u8> {
            max.iter().map(|&h| rng.below(h as u64 + 1) as u8).collect()
        };
        for direction in [Direction::Below, Direction::Above] {
            let mut index = Dominance::new(&max, direction);
            let mut members: Vec<(Vec<u8>, bool)> = Vec::new();
            for round in 0..300 {
                let m = draw(&mut rng);
                assert_eq!(index.push(&m), members.len());
                members.push((m, true));
                if round % 7 == 3 {
                    let victim = rng.index(members.len());
                    index.remove(victim);
                    members[victim].1 = false;
                }
                for _ in 0..5 {
                    let x = draw(&mut rng);
                    let expected = brute(&members, &x, direction);
                    let mut found = Vec::new();
                    index.for_each(&x, |i| found.push(i));
                    assert_eq!(found, expected);
                    assert_eq!(index.first(&x), expected.first().copied());
                    assert_eq!(index.any(&x), !expected.is_empty());
                    let opposite = match direction {
                        Direction::Below => Direction::Above,
                        Direction::Above => Direction::Below,
                    };
                    let mut dominated = Vec::new();
                    index.for_each_dominated(&x, |i| dominated.push(i));
                    assert_eq!(dominated, brute(&members, &x, opposite));
                }
            }
            index.compact();
            members.retain(|(_, alive)| *alive);
            assert_eq!(index.push(&max), members.len());
            members.push((max.to_vec(), true));
            for _ in 0..50 {
                let x = draw(&mut rng);
                assert_eq!(
                    index.first(&x),
                    brute(&members, &x, direction).first().copied()
                );
            }
        }
    }

    #[test]
    fn an_empty_index_dominates_nothing() {
        let mut index = Dominance::new(&[2, 2], Direction::Below);
        assert!(!index.any(&[2, 2]));
        let i = index.push(&[1, 0]);
        assert!(index.any(&[1, 2]) && !index.any(&[0, 2]));
        index.remove(i);
        assert!(!index.any(&[2, 2]));
    }
}
