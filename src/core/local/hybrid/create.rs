//! CreateHybrid (Nergiz, Gök & Özkanlı 2013, "Preservation of Utility through Hybrid k-Anonymization",
//! TrustBus, §4 Algorithm 2; implementation note `nergiz-2013-hybrid-k-anonymization.md` §2.2 and §2.4):
//! the greedy repair of one full-domain generalization by relocating records between its equality
//! groups, on group sizes and compositions rather than on records.
//!
//! - **Distribution.** Every small group (`2|g| ≤ k`), in canonical key order, moves whole into the
//!   closest nearly-full group (`k < 2|g| < 2k`) while one remains, else into the closest k-anonymous
//!   group (A1, A2, A11). Small groups never receive records, so once no nearly-full group is left the
//!   k-anonymous targets are fixed: they are collected once and indexed (`targets.rs`).
//! - **Completion.** Every nearly-full group still below k, in canonical key order, takes `k − |g|`
//!   records from the closest k-anonymous group holding more than `2k − |g|` records (A3; `≥` with
//!   [`Completion::AtLeast`]).
//! - "Closest" is the number of quasi-identifiers whose generalized values differ, ties going to the
//!   lower canonical key (A5). The records taken from a source are those that add the fewest changed
//!   cells against their original values (a record returning to its original group saves cells), ties
//!   to the lower canonical key of their original group (A6).
//! - **Randomized mode** (§2.4): targets and sources are drawn uniformly among the eligible groups, a
//!   completion moves a uniform number of records in `[k − |g|, |g'| − k]`, drawn uniformly from the
//!   source.
//! - **Stop rule** (A7, A8): after every move the changed cells (counted against the original table)
//!   must stay within the budget and, in the statistical variant, the group sizes must pass the
//!   chi-square test; otherwise the move is not made and the node fails, as does a node where a group
//!   finds no target or source. The paper rolls back and returns a table that is not k-anonymous, which
//!   its lattice walk then prunes (A10); the outcome is the same.
//! - A node is rejected before any move when the cells any repair needs exceed the budget: every record
//!   of a group below k either leaves it or joins it from elsewhere, so at least
//!   `⌈Σ_{|g|<k} min(|g|, k − |g|) / 2⌉` records move, each changing at least one cell. Any sequence of
//!   moves CreateHybrid makes would hit the budget, so this changes no result.

use super::statistic;
use super::targets::Targets;
use crate::core::secret_rng::SecretStream;

/// Which completion sources qualify (note A3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    /// The paper's literal rule: the source holds more than `2k − |g|` records, so it keeps at least
    /// `k + 1` after giving `k − |g|`.
    #[default]
    MoreThan,
    /// The source holds at least `2k − |g|` records and may be left with exactly k.
    AtLeast,
}

/// The limits a repair works within.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// The k of k-anonymity.
    pub(super) k: u64,
    /// Cells that may change.
    pub(super) budget: u64,
    /// Largest chi-square statistic allowed (infinite without the statistical test).
    pub(super) critical: Option<f64>,
    /// Completion rule.
    pub(super) completion: Completion,
}

/// A repaired node: where records of every original group ended up.
#[derive(Debug, Clone)]
pub(super) struct Relocation {
    /// Final records per group (0 for groups emptied by distribution).
    pub(super) sizes: Vec<u32>,
    /// Moved records: `(origin group, destination group, records)`.
    pub(super) flows: Vec<(u32, u32, u32)>,
    /// Quasi-identifier cells that differ from the original generalized key.
    pub(super) changed: u64,
    /// Pearson's statistic of the final sizes against the original ones.
    pub(super) chi_square: f64,
}

impl Relocation {
    /// The relocation of a node that is k-anonymous as it is: nothing moves.
    pub(super) fn unchanged(sizes: &[u32]) -> Self {
        Self {
            sizes: sizes.to_vec(),
            flows: Vec::new(),
            changed: 0,
            chi_square: 0.0,
        }
    }
}

/// The generalization being repaired.
struct State<'a> {
    keys: &'a [u32],
    q: usize,
    /// The keys packed 16 bits per label (see [`pack`]), when they fit.
    packed: Option<Vec<u128>>,
    expected: &'a [u32],
    sizes: Vec<u32>,
    own: Vec<u32>,
    guests: Vec<Vec<(u32, u32)>>,
    changed: u64,
    chi_square: f64,
    limits: Limits,
}

/// Bits per label in a packed key.
pub(super) const LANE: usize = 16;

/// The keys (`q` labels each) packed into one `u128` per group, [`LANE`] bits per label, when
/// `q ≤ 128 / LANE` and every label fits in a lane; `None` otherwise.
pub(super) fn pack(keys: &[u32], q: usize) -> Option<Vec<u128>> {
    if q == 0 || q > 128 / LANE || keys.iter().any(|&label| label >> LANE != 0) {
        return None;
    }
    Some(
        keys.chunks_exact(q)
            .map(|key| {
                key.iter()
                    .fold(0u128, |acc, &label| acc << LANE | u128::from(label))
            })
            .collect(),
    )
}

/// The number of non-zero [`LANE`]-bit lanes of `x`: the labels in which two packed keys differ.
pub(super) fn lanes_differing(x: u128) -> u64 {
    // fold every lane onto its lowest bit; shifts bring higher lanes' bits only into bits that are
    // never read back into bit 0 of a lane
    let mut y = x | x >> 8;
    y |= y >> 4;
    y |= y >> 2;
    y |= y >> 1;
    let lowest = u128::MAX / ((1u128 << LANE) - 1); // bit 0 of every lane
    u64::from((y & lowest).count_ones())
}

impl State<'_> {
    fn distance(&self, a: usize, b: usize) -> u64 {
        if let Some(packed) = &self.packed {
            return lanes_differing(packed[a] ^ packed[b]);
        }
        let (ka, kb) = (
            &self.keys[a * self.q..(a + 1) * self.q],
            &self.keys[b * self.q..(b + 1) * self.q],
        );
        ka.iter().zip(kb).filter(|(x, y)| x != y).count() as u64
    }

    /// The distance between `a` and `b`, or any value `≥ bound` once it reaches `bound`.
    fn distance_below(&self, a: usize, b: usize, bound: u64) -> u64 {
        if self.packed.is_some() {
            return self.distance(a, b);
        }
        let (ka, kb) = (
            &self.keys[a * self.q..(a + 1) * self.q],
            &self.keys[b * self.q..(b + 1) * self.q],
        );
        let mut d = 0;
        for (x, y) in ka.iter().zip(kb) {
            if x != y {
                d += 1;
                if d >= bound {
                    break;
                }
            }
        }
        d
    }

    /// The statistic after `count` records go from `from` to `to`.
    fn chi_square_after(&self, from: usize, to: usize, count: u32) -> f64 {
        let (e_from, e_to) = (self.expected[from], self.expected[to]);
        self.chi_square - statistic::term(self.sizes[from], e_from)
            + statistic::term(self.sizes[from] - count, e_from)
            - statistic::term(self.sizes[to], e_to)
            + statistic::term(self.sizes[to] + count, e_to)
    }

    /// Whether a move adding `cost` cells and giving statistic `chi_square` stays within the limits.
    fn admissible(&self, cost: i64, chi_square: f64) -> bool {
        let changed = self.changed as i64 + cost;
        changed <= self.limits.budget as i64
            && self
                .limits
                .critical
                .is_none_or(|critical| chi_square <= critical)
    }

    fn add(&mut self, group: usize, origin: u32, count: u32) {
        if origin as usize == group {
            self.own[group] += count;
        } else if let Some(entry) = self.guests[group].iter_mut().find(|(o, _)| *o == origin) {
            entry.1 += count;
        } else {
            self.guests[group].push((origin, count));
        }
    }

    /// Moves `taken` (origin, records) from `from` to `to`; `cost` and `chi_square` precomputed.
    fn apply(&mut self, from: usize, to: usize, taken: &[(u32, u32)], cost: i64, chi_square: f64) {
        let mut total = 0;
        for &(origin, count) in taken {
            if origin as usize == from {
                self.own[from] -= count;
            } else if let Some(entry) = self.guests[from].iter_mut().find(|(o, _)| *o == origin) {
                entry.1 -= count;
            }
            self.add(to, origin, count);
            total += count;
        }
        self.guests[from].retain(|&(_, c)| c > 0);
        self.sizes[from] -= total;
        self.sizes[to] += total;
        self.changed = (self.changed as i64 + cost) as u64;
        self.chi_square = chi_square;
    }

    /// Cells a record of original group `origin` adds by moving from `from` to `to`.
    fn move_cost(&self, origin: usize, from: usize, to: usize) -> i64 {
        self.distance(origin, to) as i64 - self.distance(origin, from) as i64
    }

    /// The records of `from` as (origin, records), its own records first.
    fn members(&self, from: usize) -> Vec<(u32, u32)> {
        let mut out = Vec::with_capacity(1 + self.guests[from].len());
        if self.own[from] > 0 {
            out.push((from as u32, self.own[from]));
        }
        out.extend(self.guests[from].iter().copied());
        out
    }
}

/// The closest candidate to `group` (lowest distance, then lowest index; candidates come in ascending
/// index order, so the scan stops at the first candidate one attribute away), or a uniform one.
fn choose(
    state: &State<'_>,
    group: usize,
    candidates: impl Iterator<Item = usize>,
    rng: Option<&mut SecretStream>,
) -> Option<usize> {
    match rng {
        None => {
            let mut best: Option<(u64, usize)> = None;
            for c in candidates {
                let bound = best.map_or(u64::MAX, |(d, _)| d);
                let d = state.distance_below(group, c, bound);
                if d < bound {
                    best = Some((d, c));
                    if d <= 1 {
                        break;
                    }
                }
            }
            best.map(|(_, c)| c)
        }
        Some(rng) => {
            let all: Vec<usize> = candidates.collect();
            if all.is_empty() {
                None
            } else {
                Some(all[rng.below(all.len() as u64) as usize])
            }
        }
    }
}

/// A lower bound on the cells any k-anonymous relocation of groups of `sizes` changes.
pub(super) fn cells_needed(sizes: &[u32], k: u64) -> u64 {
    let sum: u64 = sizes
        .iter()
        .map(|&s| u64::from(s))
        .filter(|&s| s > 0 && s < k)
        .map(|s| s.min(k - s))
        .sum();
    sum.div_ceil(2)
}

/// Runs CreateHybrid on the groups of one node (`keys` with `q` labels per group, `sizes` records per
/// group in canonical order). Returns `None` when the node cannot be made k-anonymous within the limits.
/// `rng` selects the randomized mode.
pub(super) fn create_hybrid(
    keys: &[u32],
    q: usize,
    sizes: &[u32],
    limits: Limits,
    mut rng: Option<&mut SecretStream>,
) -> Option<Relocation> {
    let k = limits.k;
    let groups = sizes.len();
    if cells_needed(sizes, k) > limits.budget {
        return None;
    }
    let is_small = |s: u32| 2 * u64::from(s) <= k;
    let mut state = State {
        keys,
        q,
        packed: pack(keys, q),
        expected: sizes,
        sizes: sizes.to_vec(),
        own: sizes.to_vec(),
        guests: vec![Vec::new(); groups],
        changed: 0,
        chi_square: 0.0,
        limits,
    };
    let small: Vec<usize> = (0..groups).filter(|&g| is_small(sizes[g])).collect();
    let mut big: Vec<usize> = (0..groups)
        .filter(|&g| !is_small(sizes[g]) && u64::from(sizes[g]) < k)
        .collect();
    let initially_big = big.clone();
    // the k-anonymous groups, fixed once no nearly-full group is left
    let mut anonymous: Option<Targets> = None;
    // distribution
    for &g in &small {
        let target = if big.is_empty() {
            let targets = anonymous.get_or_insert_with(|| {
                let members = (0..groups as u32)
                    .filter(|&c| u64::from(state.sizes[c as usize]) >= k)
                    .collect();
                Targets::new(members, state.packed.as_deref(), q)
            });
            match rng.as_deref_mut() {
                Some(rng) => targets.draw(rng),
                None if targets.packed() => state
                    .packed
                    .as_ref()
                    .and_then(|packed| targets.closest(packed[g])),
                None => choose(&state, g, targets.members(), None),
            }
        } else {
            choose(&state, g, big.iter().copied(), rng.as_deref_mut())
        }?;
        let count = state.sizes[g];
        let cost = i64::from(count) * state.distance(g, target) as i64;
        let chi_square = state.chi_square_after(g, target, count);
        if !state.admissible(cost, chi_square) {
            return None;
        }
        state.apply(g, target, &[(g as u32, count)], cost, chi_square);
        if u64::from(state.sizes[target]) >= k {
            big.retain(|&b| b != target);
        }
    }
    // completion
    for &g in &initially_big {
        let size = u64::from(state.sizes[g]);
        if size >= k {
            continue;
        }
        let threshold = 2 * k - size;
        let eligible = |c: usize| {
            let s = u64::from(state.sizes[c]);
            c != g
                && s >= k
                && match limits.completion {
                    Completion::MoreThan => s > threshold,
                    Completion::AtLeast => s >= threshold,
                }
        };
        let source = choose(
            &state,
            g,
            (0..groups).filter(|&c| eligible(c)),
            rng.as_deref_mut(),
        )?;
        let members = state.members(source);
        let (taken, cost) = match rng.as_deref_mut() {
            None => take_cheapest(&state, &members, source, g, (k - size) as u32),
            Some(rng) => {
                let room = u64::from(state.sizes[source]) - k;
                let count = (k - size) + rng.below(room - (k - size) + 1);
                take_random(&state, &members, source, g, count as u32, rng)
            }
        };
        let total: u32 = taken.iter().map(|&(_, c)| c).sum();
        let chi_square = state.chi_square_after(source, g, total);
        if !state.admissible(cost, chi_square) {
            return None;
        }
        state.apply(source, g, &taken, cost, chi_square);
    }
    let mut flows = Vec::new();
    for (to, guests) in state.guests.iter().enumerate() {
        for &(origin, count) in guests {
            flows.push((origin, to as u32, count));
        }
    }
    flows.sort_unstable();
    Some(Relocation {
        chi_square: statistic::pearson(&state.sizes, sizes),
        sizes: state.sizes,
        flows,
        changed: state.changed,
    })
}

/// The `count` records of `source` whose move to `target` adds the fewest cells (A6).
fn take_cheapest(
    state: &State<'_>,
    members: &[(u32, u32)],
    source: usize,
    target: usize,
    count: u32,
) -> (Vec<(u32, u32)>, i64) {
    let mut ranked: Vec<(i64, u32, u32)> = members
        .iter()
        .map(|&(origin, n)| (state.move_cost(origin as usize, source, target), origin, n))
        .collect();
    ranked.sort_unstable();
    let mut left = count;
    let mut cost = 0;
    let mut taken = Vec::new();
    for (unit, origin, n) in ranked {
        if left == 0 {
            break;
        }
        let m = n.min(left);
        taken.push((origin, m));
        cost += unit * i64::from(m);
        left -= m;
    }
    (taken, cost)
}

/// `count` records of `source` drawn uniformly without replacement.
fn take_random(
    state: &State<'_>,
    members: &[(u32, u32)],
    source: usize,
    target: usize,
    count: u32,
    rng: &mut SecretStream,
) -> (Vec<(u32, u32)>, i64) {
    let mut left: Vec<(u32, u32)> = members.to_vec();
    let mut remaining: u64 = left.iter().map(|&(_, n)| u64::from(n)).sum();
    let mut drawn = vec![0u32; left.len()];
    for _ in 0..count {
        let mut pick = rng.below(remaining);
        for (i, entry) in left.iter_mut().enumerate() {
            if pick < u64::from(entry.1) {
                entry.1 -= 1;
                drawn[i] += 1;
                break;
            }
            pick -= u64::from(entry.1);
        }
        remaining -= 1;
    }
    let mut cost = 0;
    let mut taken = Vec::new();
    for (i, &(origin, _)) in members.iter().enumerate() {
        if drawn[i] > 0 {
            cost += state.move_cost(origin as usize, source, target) * i64::from(drawn[i]);
            taken.push((origin, drawn[i]));
        }
    }
    (taken, cost)
}

#[cfg(test)]
mod tests {
    use super::{lanes_differing, pack, LANE};
    use proptest::prelude::*;

    proptest! {
        /// Packed distances equal the number of differing labels, including labels that use the
        /// top bit of a lane and keys of fewer than eight labels.
        #[test]
        fn packed_distance_counts_differing_labels(
            q in 1usize..=8,
            a in prop::collection::vec(0u32..(1 << LANE), 8),
            b in prop::collection::vec(0u32..(1 << LANE), 8),
            same in prop::collection::vec(any::<bool>(), 8),
        ) {
            let b: Vec<u32> = (0..8).map(|j| if same[j] { a[j] } else { b[j] }).collect();
            let keys: Vec<u32> = a[..q].iter().chain(&b[..q]).copied().collect();
            let packed = pack(&keys, q).expect("labels fit in a lane");
            let expected = (0..q).filter(|&j| a[j] != b[j]).count() as u64;
            prop_assert_eq!(lanes_differing(packed[0] ^ packed[1]), expected);
        }
    }

    #[test]
    fn keys_that_do_not_fit_are_not_packed() {
        assert!(pack(&[1 << LANE, 0], 2).is_none());
        assert!(pack(&[0; 9], 9).is_none());
        assert!(pack(&[0xFFFF, 0], 2).is_some());
    }
}
