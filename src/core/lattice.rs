//! The generalization lattice of full-domain recoding: one level per quasi-identifier, ordered
//! component-wise (Issa 2009, Defs 10–15). Nodes are numbered in mixed radix, so `id(v - e_j) < id(v)` and
//! increasing ids form a topological order from the bottom to the top.

/// Shape of a lattice: the maximum level of each quasi-identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lattice {
    max_levels: Vec<u8>,
    strides: Vec<u64>,
    size: u128,
}

/// A node's id in mixed radix (`Σ level_j · stride_j`).
pub type NodeId = u64;

impl Lattice {
    /// A lattice whose attribute `j` has levels `0..=max_levels[j]`.
    pub fn new(max_levels: Vec<u8>) -> Self {
        let mut strides = vec![0u64; max_levels.len()];
        let mut size: u128 = 1;
        for j in (0..max_levels.len()).rev() {
            strides[j] = size.min(u64::MAX as u128) as u64;
            size = size.saturating_mul(max_levels[j] as u128 + 1);
        }
        Self {
            max_levels,
            strides,
            size,
        }
    }

    /// Number of nodes, `Π (max_j + 1)`.
    pub fn size(&self) -> u128 {
        self.size
    }

    /// Number of quasi-identifiers.
    pub fn dimensions(&self) -> usize {
        self.max_levels.len()
    }

    /// Maximum level per quasi-identifier.
    pub fn max_levels(&self) -> &[u8] {
        &self.max_levels
    }

    /// Height of the top node (`Σ max_j`).
    pub fn top_height(&self) -> usize {
        self.max_levels.iter().map(|&m| m as usize).sum()
    }

    /// Stride of attribute `j` in node ids.
    pub fn stride(&self, j: usize) -> u64 {
        self.strides[j]
    }

    /// The id of `levels`. The lattice must have at most `u64::MAX` nodes.
    pub fn id(&self, levels: &[u8]) -> NodeId {
        levels
            .iter()
            .zip(&self.strides)
            .map(|(&l, &s)| l as u64 * s)
            .sum()
    }

    /// Writes the levels of node `id` into `out`.
    pub fn levels_into(&self, id: NodeId, out: &mut [u8]) {
        let mut rest = id;
        for (j, &s) in self.strides.iter().enumerate() {
            out[j] = (rest / s) as u8;
            rest %= s;
        }
    }

    /// The level of attribute `j` in node `id`.
    pub fn level(&self, id: NodeId, j: usize) -> u8 {
        ((id / self.strides[j]) % (self.max_levels[j] as u64 + 1)) as u8
    }

    /// Height of node `id` (sum of its levels), without allocating.
    pub fn height_of(&self, id: NodeId) -> usize {
        (0..self.dimensions())
            .map(|j| self.level(id, j) as usize)
            .sum()
    }

    /// The levels of node `id`.
    pub fn levels(&self, id: NodeId) -> Vec<u8> {
        let mut out = vec![0; self.dimensions()];
        self.levels_into(id, &mut out);
        out
    }

    /// Component-wise `a ≤ b`.
    pub fn le(a: &[u8], b: &[u8]) -> bool {
        a.iter().zip(b).all(|(x, y)| x <= y)
    }

    /// Height of a node (sum of its levels).
    pub fn height(levels: &[u8]) -> usize {
        levels.iter().map(|&l| l as usize).sum()
    }

    /// Calls `f` for every node `x` with `bottom ≤ x ≤ top` and `height(x) == height`, in lexicographic order.
    pub fn for_each_at_height(
        bottom: &[u8],
        top: &[u8],
        height: usize,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> bool {
        fn walk(
            j: usize,
            bottom: &[u8],
            top: &[u8],
            remaining: usize,
            suffix_room: &[usize],
            cur: &mut Vec<u8>,
            f: &mut dyn FnMut(&[u8]) -> bool,
        ) -> bool {
            if j == bottom.len() {
                return remaining != 0 || f(cur);
            }
            let room = (top[j] - bottom[j]) as usize;
            let lo = remaining.saturating_sub(suffix_room[j + 1]);
            let hi = room.min(remaining);
            for d in lo..=hi {
                cur[j] = bottom[j] + d as u8;
                if !walk(j + 1, bottom, top, remaining - d, suffix_room, cur, f) {
                    return false;
                }
            }
            true
        }
        let base = Self::height(bottom);
        if height < base || height > Self::height(top) {
            return true;
        }
        let n = bottom.len();
        let mut suffix_room = vec![0usize; n + 1];
        for j in (0..n).rev() {
            suffix_room[j] = suffix_room[j + 1] + (top[j] - bottom[j]) as usize;
        }
        let mut cur = bottom.to_vec();
        walk(0, bottom, top, height - base, &suffix_room, &mut cur, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issa_figure_4_lattice_has_6_nodes_and_4_levels() {
        let l = Lattice::new(vec![1, 2]);
        assert_eq!(l.size(), 6);
        assert_eq!(l.top_height() + 1, 4);
        let mut at = vec![];
        for h in 0..=3 {
            let mut n = 0;
            Lattice::for_each_at_height(&[0, 0], &[1, 2], h, &mut |_| {
                n += 1;
                true
            });
            at.push(n);
        }
        assert_eq!(at, vec![1, 2, 2, 1]);
    }

    #[test]
    fn ids_round_trip_and_are_topological() {
        let l = Lattice::new(vec![1, 6, 1, 2]);
        assert_eq!(l.size(), 84);
        for id in 0..84u64 {
            let v = l.levels(id);
            assert_eq!(l.id(&v), id);
            for j in 0..4 {
                if v[j] > 0 {
                    let mut w = v.clone();
                    w[j] -= 1;
                    assert!(l.id(&w) < id);
                }
            }
        }
    }

    #[test]
    fn issa_table_12_lattice_sizes() {
        // Heights from Issa 2009 Table 9: Adult, CUP, FARS, ED, Niday.
        let cases: [(&[u8], u128); 5] = [
            (&[3, 2, 2, 2, 2, 1, 1, 3], 5184),
            (&[5, 4, 2, 3], 360),
            (&[4, 1, 3, 2], 120),
            (&[3, 7, 7, 6, 1], 3584),
            (&[7, 4, 6, 2, 2, 2], 7560),
        ];
        for (heights, size) in cases {
            assert_eq!(Lattice::new(heights.to_vec()).size(), size);
        }
    }
}
