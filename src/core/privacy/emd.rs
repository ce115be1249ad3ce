//! The earth mover's distance between a class's sensitive distribution and the whole table's, exactly,
//! with the three ground distances of t-closeness (Li, Li & Venkatasubramanian, "t-Closeness: Privacy
//! Beyond k-Anonymity and l-Diversity", ICDE 2007, §4.2; restated by Hsu 2008, §3.4, Def 3.4.3). See
//! `notes/hsu-2008-sensitive-attribute-protection.md` §1.4 for the closed forms and §7 for the test vectors.
//!
//! A class of `s` records with counts `n_i` and the table of `N` records with counts `N_i` have
//! distributions `p_i = n_i/s` and `q_i = N_i/N`. Every closed form is a sum of terms in
//! `r_i = p_i − q_i`; multiplying by `s·N` turns each `r_i` into the integer `n_i·N − N_i·s`, so the
//! distance is computed as an exact fraction ([`Ratio`]) and compared with `t` without rounding:
//! - equal distance (every pair of distinct values at distance 1): `½ Σ_i |r_i|`;
//! - ordered distance (values ranked `0..m`, `d(i, j) = |i − j| / (m − 1)`):
//!   `Σ_i |Σ_{j ≤ i} r_j| / (m − 1)`;
//! - hierarchical distance (`d = height(lowest common ancestor) / H` on a tree of height `H`):
//!   `Σ_N height(N)/H · min(pos(N), neg(N))` over the inner nodes, where `extra(leaf) = r_leaf`,
//!   `extra(N) = Σ_children extra`, and `pos`/`neg` sum the positive/negative children's extras.

use std::cell::RefCell;

use super::Decimal;

/// A non-negative fraction `numerator / denominator` (denominator > 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    /// Numerator.
    pub numerator: u128,
    /// Denominator, positive.
    pub denominator: u128,
}

impl Ratio {
    /// The value as a float (for reports).
    pub fn to_f64(self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }

    /// Whether the fraction is at most `bound`, exactly (products are taken in 256 bits).
    pub fn is_at_most(self, bound: Decimal) -> bool {
        let (b_num, b_den) = bound.as_fraction();
        wide_product(self.numerator, b_den) <= wide_product(b_num, self.denominator)
    }
}

/// The full product of two `u128` as `(high, low)` 128-bit halves (compares like the 256-bit number).
fn wide_product(a: u128, b: u128) -> (u128, u128) {
    const HALF: u32 = 64;
    const MASK: u128 = (1 << HALF) - 1;
    let (a_hi, a_lo) = (a >> HALF, a & MASK);
    let (b_hi, b_lo) = (b >> HALF, b & MASK);
    let low = a_lo * b_lo;
    let cross_1 = a_hi * b_lo;
    let cross_2 = a_lo * b_hi;
    let high = a_hi * b_hi;
    // middle 128-bit column: the cross products' sum plus the carry from the low product
    let (middle, carry_1) = cross_1.overflowing_add(cross_2);
    let (middle, carry_2) = middle.overflowing_add(low >> HALF);
    let high = high + (middle >> HALF) + ((u128::from(carry_1) + u128::from(carry_2)) << HALF);
    let low = (middle << HALF) | (low & MASK);
    (high, low)
}

/// Which ground distance the EMD uses.
#[derive(Debug, Clone)]
enum Ground {
    /// Every pair of distinct values is at distance 1.
    Equal,
    /// `rank[code]` orders the values (a permutation of the codes).
    Ordered { rank: Vec<u32> },
    /// `parents[0][code]` is the node at height 1 above each value and `parents[h][node]` the node at
    /// height h + 1 above a node at height h; the top level has one node. `widths[h]` is the number of
    /// nodes at height h + 1.
    Hierarchical {
        parents: Vec<Vec<u32>>,
        widths: Vec<usize>,
    },
}

/// The EMD from any class to the distribution of one sensitive attribute over the whole table.
#[derive(Debug, Clone)]
pub struct EarthMovers {
    /// Table count of each value code.
    global: Vec<u64>,
    /// Records in the table.
    total: u64,
    ground: Ground,
}

thread_local! {
    /// Dense per-value (or per-node) scratch, reused between classes to avoid allocation per class.
    static SCRATCH: RefCell<Vec<i128>> = const { RefCell::new(Vec::new()) };
}

impl EarthMovers {
    /// Equal ground distance over the values whose table counts are `global` (indexed by code).
    pub fn equal(global: Vec<u64>) -> Self {
        Self::with(global, Ground::Equal)
    }

    /// Ordered ground distance: `rank[code]` is the position of each value in the attribute's order
    /// (a permutation of `0..global.len()`).
    pub fn ordered(global: Vec<u64>, rank: Vec<u32>) -> Self {
        Self::with(global, Ground::Ordered { rank })
    }

    /// Hierarchical ground distance: `ancestors[ℓ − 1][code]` is the ancestor of each value at height ℓ
    /// (ℓ = 1..=H); node ids are small integers (a level's label codes), so per-level arrays stay dense.
    /// If the top level has more than one node, a root above all of them is added (so the tree's height
    /// is H + 1).
    pub fn hierarchical(global: Vec<u64>, mut ancestors: Vec<Vec<u32>>) -> Self {
        let width_of = |level: &[u32]| level.iter().map(|&n| n as usize + 1).max().unwrap_or(1);
        let one_top_node = |top: &Vec<u32>| top.iter().all(|&n| Some(&n) == top.first());
        if !ancestors.last().is_some_and(one_top_node) {
            ancestors.push(vec![0; global.len()]);
        }
        let widths: Vec<usize> = ancestors.iter().map(|level| width_of(level)).collect();
        let mut parents = Vec::with_capacity(ancestors.len());
        parents.push(ancestors[0].clone());
        for h in 1..ancestors.len() {
            // nodes no value reaches keep parent 0; their extra is always 0
            let mut up = vec![0u32; widths[h - 1]];
            for (code, &node) in ancestors[h - 1].iter().enumerate() {
                up[node as usize] = ancestors[h][code];
            }
            parents.push(up);
        }
        Self::with(global, Ground::Hierarchical { parents, widths })
    }

    fn with(global: Vec<u64>, ground: Ground) -> Self {
        let total = global.iter().sum();
        Self {
            global,
            total,
            ground,
        }
    }

    /// The EMD between the class with value counts `histogram` (sorted `(code, count)` pairs) and the
    /// table, as an exact fraction.
    pub fn distance(&self, histogram: &[(u32, u32)]) -> Ratio {
        let size: u64 = histogram.iter().map(|&(_, n)| u64::from(n)).sum();
        if size == 0 || self.total == 0 {
            return Ratio {
                numerator: 0,
                denominator: 1,
            };
        }
        let scale = u128::from(size) * u128::from(self.total);
        let (numerator, denominator) = match &self.ground {
            Ground::Equal => (self.equal_sum(histogram, size), 2 * scale),
            Ground::Ordered { rank } => {
                let ranks = rank.len();
                if ranks <= 1 {
                    (0, 1)
                } else {
                    (
                        self.ordered_sum(histogram, size, rank),
                        scale * (ranks as u128 - 1),
                    )
                }
            }
            Ground::Hierarchical { parents, widths } => (
                self.hierarchical_sum(histogram, size, parents, widths),
                scale * parents.len() as u128,
            ),
        };
        Ratio {
            numerator,
            denominator,
        }
    }

    /// A lower bound of [`Self::distance`] for every class whose values all occur in `histogram`
    /// (counts ignored): the table's share of the other values, `1 − Σ_{present} N_i / N`, must be
    /// moved onto them at the smallest ground distance between distinct values (1 for equal distance,
    /// `1/(m − 1)` ordered, `1/H` hierarchical). Merging classes unites their values, so the bound of
    /// a merged class is at most that of each part.
    pub fn coverage_bound(&self, histogram: &[(u32, u32)]) -> Ratio {
        let present: u64 = histogram
            .iter()
            .filter(|&&(_, n)| n > 0)
            .map(|&(code, _)| self.global.get(code as usize).copied().unwrap_or(0))
            .sum();
        let uncovered = self.total.saturating_sub(present);
        let steps = match &self.ground {
            Ground::Equal => 1,
            Ground::Ordered { rank } => rank.len().saturating_sub(1) as u128,
            Ground::Hierarchical { parents, .. } => parents.len() as u128,
        };
        if self.total == 0 || steps == 0 {
            return Ratio {
                numerator: 0,
                denominator: 1,
            };
        }
        Ratio {
            numerator: u128::from(uncovered),
            denominator: u128::from(self.total) * steps,
        }
    }

    /// `n_i·N − N_i·s` for a value with class count `n` and table count `big_n`.
    fn scaled_difference(&self, n: u64, big_n: u64, size: u64) -> i128 {
        i128::from(n) * i128::from(self.total) - i128::from(big_n) * i128::from(size)
    }

    /// `Σ_i |n_i·N − N_i·s|`: the values absent from the class contribute `N_i·s` each.
    fn equal_sum(&self, histogram: &[(u32, u32)], size: u64) -> u128 {
        let mut present_global = 0u64;
        let mut sum = 0u128;
        for &(code, n) in histogram {
            let big_n = self.global[code as usize];
            present_global += big_n;
            sum += self
                .scaled_difference(u64::from(n), big_n, size)
                .unsigned_abs();
        }
        sum + u128::from(self.total - present_global) * u128::from(size)
    }

    /// `Σ_i |Σ_{rank ≤ i} (n·N − N·s)|` over the ranks.
    fn ordered_sum(&self, histogram: &[(u32, u32)], size: u64, rank: &[u32]) -> u128 {
        SCRATCH.with(|scratch| {
            let mut by_rank = scratch.borrow_mut();
            by_rank.clear();
            by_rank.resize(rank.len(), 0);
            for (code, &big_n) in self.global.iter().enumerate() {
                by_rank[rank[code] as usize] = self.scaled_difference(0, big_n, size);
            }
            for &(code, n) in histogram {
                by_rank[rank[code as usize] as usize] += i128::from(n) * i128::from(self.total);
            }
            let mut cumulative = 0i128;
            let mut sum = 0u128;
            for &r in by_rank.iter() {
                cumulative += r;
                sum += cumulative.unsigned_abs();
            }
            sum
        })
    }

    /// `Σ_N height(N) · min(pos(N), neg(N))` over the inner nodes, in scaled integers.
    fn hierarchical_sum(
        &self,
        histogram: &[(u32, u32)],
        size: u64,
        parents: &[Vec<u32>],
        widths: &[usize],
    ) -> u128 {
        SCRATCH.with(|scratch| {
            let mut buffer = scratch.borrow_mut();
            // layout: the leaves' extras, then per level the positive and negative sums and the net
            // extra of every node
            let leaves = self.global.len();
            let needed = leaves + widths.iter().map(|w| 3 * w).sum::<usize>();
            buffer.clear();
            buffer.resize(needed, 0);
            let (leaf_extra, mut rest) = buffer.split_at_mut(leaves);
            for (code, &big_n) in self.global.iter().enumerate() {
                leaf_extra[code] = self.scaled_difference(0, big_n, size);
            }
            for &(code, n) in histogram {
                leaf_extra[code as usize] += i128::from(n) * i128::from(self.total);
            }
            let mut sum = 0u128;
            let mut below: &[i128] = leaf_extra;
            for (height, (up, &width)) in parents.iter().zip(widths).enumerate() {
                let (level, tail) = rest.split_at_mut(3 * width);
                let (positive, level) = level.split_at_mut(width);
                let (negative, net) = level.split_at_mut(width);
                for (child, &extra) in below.iter().enumerate() {
                    let node = up[child] as usize;
                    if extra > 0 {
                        positive[node] += extra;
                    } else {
                        negative[node] += extra;
                    }
                    net[node] += extra;
                }
                for node in 0..width {
                    let cost = positive[node]
                        .unsigned_abs()
                        .min(negative[node].unsigned_abs());
                    sum += (height as u128 + 1) * cost;
                }
                below = net;
                rest = tail;
            }
            sum
        })
    }
}

#[cfg(test)]
mod tests {
    //! Every closed form against a min-cost-flow solution of the transport problem (note §1.4,
    //! Problem 2.4.3) on random distributions.

    use super::*;
    use proptest::prelude::*;

    /// Minimum cost of moving `supply` onto `demand` (equal totals) with integer `cost[i][j]`, by
    /// successive shortest paths (Bellman–Ford on the residual graph).
    fn transport_cost(supply: &[i128], demand: &[i128], cost: &[Vec<i128>]) -> i128 {
        let m = supply.len();
        // nodes: 0 source, 1..=m supplies, m+1..=2m demands, 2m+1 sink
        let nodes = 2 * m + 2;
        let sink = nodes - 1;
        // edges as (to, capacity, cost, reverse index)
        let mut graph: Vec<Vec<(usize, i128, i128, usize)>> = vec![Vec::new(); nodes];
        let add = |graph: &mut Vec<Vec<(usize, i128, i128, usize)>>,
                   a: usize,
                   b: usize,
                   cap: i128,
                   c: i128| {
            let ra = graph[b].len();
            let rb = graph[a].len();
            graph[a].push((b, cap, c, ra));
            graph[b].push((a, 0, -c, rb));
        };
        for i in 0..m {
            add(&mut graph, 0, 1 + i, supply[i], 0);
            add(&mut graph, 1 + m + i, sink, demand[i], 0);
            for (j, &c) in cost[i].iter().enumerate() {
                add(&mut graph, 1 + i, 1 + m + j, i128::MAX / 4, c);
            }
        }
        let mut total = 0;
        loop {
            let mut distance = vec![i128::MAX; nodes];
            let mut previous: Vec<Option<(usize, usize)>> = vec![None; nodes];
            distance[0] = 0;
            for _ in 0..nodes {
                let mut changed = false;
                for u in 0..nodes {
                    if distance[u] == i128::MAX {
                        continue;
                    }
                    for (e, &(v, cap, c, _)) in graph[u].iter().enumerate() {
                        if cap > 0 && distance[u] + c < distance[v] {
                            distance[v] = distance[u] + c;
                            previous[v] = Some((u, e));
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
            if distance[sink] == i128::MAX {
                return total;
            }
            let mut push = i128::MAX;
            let mut v = sink;
            while let Some((u, e)) = previous[v] {
                push = push.min(graph[u][e].1);
                v = u;
            }
            let mut v = sink;
            while let Some((u, e)) = previous[v] {
                graph[u][e].1 -= push;
                let (to, reverse) = (graph[u][e].0, graph[u][e].3);
                graph[to][reverse].1 += push;
                v = u;
            }
            total += push * distance[sink];
        }
    }

    /// Supplies `n_i·N` and demands `N_i·s`: the transport problem scaled by `s·N`.
    fn scaled_masses(class: &[u32], global: &[u64]) -> (Vec<i128>, Vec<i128>) {
        let size: i128 = class.iter().map(|&n| i128::from(n)).sum();
        let total: i128 = global.iter().map(|&n| i128::from(n)).sum();
        (
            class.iter().map(|&n| i128::from(n) * total).collect(),
            global.iter().map(|&n| i128::from(n) * size).collect(),
        )
    }

    fn sparse(class: &[u32]) -> Vec<(u32, u32)> {
        class
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(c, &n)| (c as u32, n))
            .collect()
    }

    /// `ratio == flow / (unit · s · N)`, by cross-multiplication.
    fn agrees(ratio: Ratio, flow: i128, unit: i128, class: &[u32], global: &[u64]) -> bool {
        let size: i128 = class.iter().map(|&n| i128::from(n)).sum();
        let total: i128 = global.iter().map(|&n| i128::from(n)).sum();
        ratio.numerator as i128 * unit * size * total == flow * ratio.denominator as i128
    }

    /// A class (at least one record) and a table (every value at least once) over `m` values.
    fn distributions() -> impl Strategy<Value = (Vec<u32>, Vec<u64>)> {
        (2usize..7).prop_flat_map(|m| {
            (
                proptest::collection::vec(0u32..5, m)
                    .prop_filter("a class has a record", |c| c.iter().any(|&n| n > 0)),
                proptest::collection::vec(1u64..6, m),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn equal_distance_matches_min_cost_flow((class, global) in distributions()) {
            let m = class.len();
            let cost: Vec<Vec<i128>> =
                (0..m).map(|i| (0..m).map(|j| i128::from(i != j)).collect()).collect();
            let (supply, demand) = scaled_masses(&class, &global);
            let flow = transport_cost(&supply, &demand, &cost);
            let ratio = EarthMovers::equal(global.clone()).distance(&sparse(&class));
            prop_assert!(agrees(ratio, flow, 1, &class, &global));
        }

        #[test]
        fn ordered_distance_matches_min_cost_flow(
            (class, global) in distributions(),
            seed in any::<u64>(),
        ) {
            let m = class.len();
            // a permutation of the ranks from the seed
            let mut rank: Vec<u32> = (0..m as u32).collect();
            let mut state = seed | 1;
            for i in (1..m).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                rank.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let cost: Vec<Vec<i128>> = (0..m)
                .map(|i| (0..m).map(|j| (i128::from(rank[i]) - i128::from(rank[j])).abs()).collect())
                .collect();
            let (supply, demand) = scaled_masses(&class, &global);
            let flow = transport_cost(&supply, &demand, &cost);
            let ratio = EarthMovers::ordered(global.clone(), rank).distance(&sparse(&class));
            prop_assert!(agrees(ratio, flow, m as i128 - 1, &class, &global));
        }

        #[test]
        fn hierarchical_distance_matches_min_cost_flow(
            (class, global) in distributions(),
            parents in proptest::collection::vec(proptest::collection::vec(0u32..3, 6), 1..4),
            single_root in any::<bool>(),
        ) {
            let m = class.len();
            // height 1: each value's node; above, each node's parent from `parents`
            let mut ancestors: Vec<Vec<u32>> = vec![(0..m).map(|c| parents[0][c] % 3).collect()];
            for up in &parents[1..] {
                let below = ancestors.last().unwrap().clone();
                ancestors.push(below.iter().map(|&n| up[n as usize]).collect());
            }
            if single_root {
                ancestors.push(vec![0; m]);
            }
            let top = ancestors.last().unwrap();
            let top_is_one = top.iter().all(|&n| n == top[0]);
            let height = ancestors.len() as i128 + i128::from(!top_is_one);
            let lca_height = |i: usize, j: usize| -> i128 {
                if i == j {
                    return 0;
                }
                ancestors
                    .iter()
                    .position(|level| level[i] == level[j])
                    .map_or(height, |h| h as i128 + 1)
            };
            let cost: Vec<Vec<i128>> =
                (0..m).map(|i| (0..m).map(|j| lca_height(i, j)).collect()).collect();
            let (supply, demand) = scaled_masses(&class, &global);
            let flow = transport_cost(&supply, &demand, &cost);
            let ratio = EarthMovers::hierarchical(global.clone(), ancestors.clone()).distance(&sparse(&class));
            prop_assert!(agrees(ratio, flow, height, &class, &global));
        }

        #[test]
        fn coverage_bound_is_a_lower_bound_and_monotone_under_merging(
            (class, global) in distributions(),
            other in proptest::collection::vec(0u32..5, 7),
            parents in proptest::collection::vec(proptest::collection::vec(0u32..3, 6), 1..4),
        ) {
            let m = class.len();
            let mut ancestors: Vec<Vec<u32>> = vec![(0..m).map(|c| parents[0][c] % 3).collect()];
            for up in &parents[1..] {
                let below = ancestors.last().unwrap().clone();
                ancestors.push(below.iter().map(|&n| up[n as usize]).collect());
            }
            let merged: Vec<u32> = class.iter().zip(&other).map(|(a, b)| a + b).collect();
            let at_most = |a: Ratio, b: Ratio| a.numerator * b.denominator <= b.numerator * a.denominator;
            for emd in [
                EarthMovers::equal(global.clone()),
                EarthMovers::ordered(global.clone(), (0..m as u32).rev().collect()),
                EarthMovers::hierarchical(global.clone(), ancestors),
            ] {
                let bound = emd.coverage_bound(&sparse(&class));
                prop_assert!(at_most(bound, emd.distance(&sparse(&class))));
                prop_assert!(at_most(emd.coverage_bound(&sparse(&merged)), bound));
            }
        }
    }
}
