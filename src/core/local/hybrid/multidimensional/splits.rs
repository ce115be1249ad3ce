//! The hybrid cuts of M-Hybrid: a group of records is cut on one quasi-identifier into a small side `A`
//! (fewer than k of its own records, a run of the lowest or highest values, or of the first or last
//! children of its common ancestor) and the rest `B`, and CreateHybrid's two moves (Nergiz, Gök &
//! Özkanlı 2013, §4 Algorithm 2) make both publishable:
//!
//! - **Distribution** (`2|A| ≤ k`, `|B| ≥ k`): `A`'s records move into `B` and publish `B`'s box.
//! - **Completion** (`k < 2|A| < 2k`, `|B| > 2k − |A|`, or `≥` with [`Completion::AtLeast`]): `k − |A|`
//!   records of `B` move into `A` and publish `A`'s box; the deterministic mode takes the records whose
//!   values `A`'s box misses on the fewest quasi-identifiers (then, on an ordered quasi-identifier, the
//!   closest in rank to the cut; then the lowest record index), the randomized mode a uniform number in
//!   `[k − |A|, |B| − k]` of uniformly drawn records, as Algorithm 2's randomized variant does (so `B` may
//!   keep exactly k records then, whatever the completion rule).
//!
//! A box is always computed from the group's own records (its *members*); records moved in (*guests*)
//! publish it whether it covers them or not, and a cut leaves the guests with `B`. The cost of a cut is
//! the quasi-identifier cells it makes uncovered (moved records' plus guests' whose box shrank), its gain
//! the drop in the group's summed penalty ([`super::geometry`]). The cut offered for a group is the one
//! of best gain per cell within the budget left, then the larger gain, lower quasi-identifier, lower side
//! first, larger `A`. A completion whose moved records `A`'s box covers anyway (possible on a hierarchy)
//! changes no cell and comes first; it is still a relocation (counted in the records relocated) and is
//! taken only when the budget is at least one cell, so that `p = 0` stays Mondrian.
//!
//! A group's records are a contiguous range of one arena, members first: a cut reorders the range in place
//! (`[B | A | guests]` after a distribution, `[A | moved | B | guests]` after a completion), so no record
//! list is ever copied.

use std::cmp::Ordering;

use super::geometry::{Extent, Geometry};
use crate::core::local::hybrid::Completion;
use crate::core::secret_rng::SecretStream;

/// Gains below this are rounding noise, not an improvement.
const GAIN_TOLERANCE: f64 = 1e-9;

/// A group of the arena: `len` records from `start`, of which the first `members` are its own.
#[derive(Debug, Clone, Copy)]
pub(super) struct Group {
    pub(super) start: usize,
    pub(super) members: usize,
    pub(super) len: usize,
    /// Whether the group may still be cut (a completed group may not).
    pub(super) open: bool,
}

impl Group {
    /// Positions of its own records in the arena.
    pub(super) fn member_range(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.members
    }

    /// Positions of its guests in the arena.
    pub(super) fn guest_range(&self) -> std::ops::Range<usize> {
        self.start + self.members..self.start + self.len
    }
}

/// Which move a cut makes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Move {
    /// `A` joins `B` as guests.
    Distribution,
    /// These records of `B` join `A` as guests.
    Completion { moved: Vec<u32> },
}

/// A cut of one group, ready to apply.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cut {
    /// Drop of the group's summed penalty.
    pub(super) gain: f64,
    /// Cells it makes uncovered.
    pub(super) cost: u64,
    /// The quasi-identifier cut.
    pub(super) attribute: usize,
    /// Whether `A` is the low side.
    pub(super) low_side: bool,
    /// `A`'s own records, counted.
    pub(super) size: usize,
    /// `A`'s records.
    pub(super) side: Vec<u32>,
    /// The move.
    pub(super) action: Move,
}

impl Cut {
    /// Gain per changed cell (infinite when no cell changes).
    pub(super) fn priority(&self) -> f64 {
        if self.cost == 0 {
            f64::INFINITY
        } else {
            self.gain / self.cost as f64
        }
    }

    /// Whether `self` is preferred to `other` within one group.
    fn better_than(&self, other: &Cut) -> bool {
        let order = self
            .priority()
            .total_cmp(&other.priority())
            .then(self.gain.total_cmp(&other.gain))
            .then(other.attribute.cmp(&self.attribute))
            .then(self.low_side.cmp(&other.low_side))
            .then(self.size.cmp(&other.size));
        order == Ordering::Greater
    }
}

/// The best cut found so far within a budget.
struct Best {
    cut: Option<Cut>,
    budget: u64,
}

impl Best {
    /// Whether `cut` is affordable, gains and beats the best so far (its side list may still be empty).
    fn wins(&self, cut: &Cut) -> bool {
        cut.cost <= self.budget
            && cut.gain > GAIN_TOLERANCE
            && self.cut.as_ref().is_none_or(|b| cut.better_than(b))
    }

    /// Keeps `cut` when it wins.
    fn offer(&mut self, cut: Cut) {
        if self.wins(&cut) {
            self.cut = Some(cut);
        }
    }
}

/// What a cut search may use.
pub(super) struct Rules<'g> {
    pub(super) geometry: &'g Geometry<'g>,
    pub(super) k: usize,
    pub(super) completion: Completion,
}

/// Reusable buffers of the cut search.
#[derive(Default)]
pub(super) struct Scratch {
    sorted: Vec<(u32, u32)>,
    rest: Vec<u32>,
    scored: Vec<(u64, u32, u32)>,
}

impl Rules<'_> {
    /// Fewest own records `B` must keep after giving records away.
    fn keep(&self) -> usize {
        match self.completion {
            Completion::MoreThan => self.k + 1,
            Completion::AtLeast => self.k,
        }
    }

    /// The best cut of `group` (records in `arena`) costing at most `budget` cells, if any gains.
    /// `rng` draws the moved records in the randomized mode.
    pub(super) fn best_cut(
        &self,
        arena: &[u32],
        group: Group,
        budget: u64,
        scratch: &mut Scratch,
        mut rng: Option<&mut SecretStream>,
    ) -> Option<Cut> {
        let k = self.k;
        let n = group.members;
        if !group.open || n <= k {
            return None;
        }
        let geometry = self.geometry;
        let members = &arena[group.member_range()];
        let guests = &arena[group.guest_range()];
        let whole = geometry.bounding(members);
        let before = group.len as f64 * geometry.penalty(&whole);
        let guest_cost: u64 = guests.iter().map(|&g| geometry.outside(&whole, g)).sum();
        let mut best = Best { cut: None, budget };
        let mut sorted = std::mem::take(&mut scratch.sorted);
        for j in 0..geometry.q() {
            if !geometry.is_wide(&whole, j) {
                continue;
            }
            sorted.clear();
            sorted.extend(
                members
                    .iter()
                    .map(|&row| (geometry.part(&whole, j, row), row)),
            );
            sorted.sort_unstable();
            // cut positions between parts with fewer than k records on one side
            let positions: Vec<usize> = (1..n)
                .filter(|&b| sorted[b - 1].0 != sorted[b].0 && (b < k || n - b < k))
                .collect();
            let (below, above) = self.side_boxes(&sorted, &positions);
            // completion is tried once per side, where it moves the fewest records: the largest A below k
            let completed_low = positions.iter().copied().filter(|&b| b < k).max();
            let completed_high = positions.iter().copied().filter(|&b| n - b < k).min();
            for (p, &b) in positions.iter().enumerate() {
                for low_side in [true, false] {
                    let (a, rest, own, target) = if low_side {
                        (&sorted[..b], &sorted[b..], &below[p], &above[p])
                    } else {
                        (&sorted[b..], &sorted[..b], &above[p], &below[p])
                    };
                    let s = a.len();
                    if s >= k {
                        continue;
                    }
                    if 2 * s <= k {
                        if rest.len() < k {
                            continue;
                        }
                        let cost = a
                            .iter()
                            .map(|&(_, r)| r)
                            .chain(guests.iter().copied())
                            .map(|r| geometry.outside(target, r))
                            .sum::<u64>()
                            .saturating_sub(guest_cost);
                        let after = group.len as f64 * geometry.penalty(target);
                        // the side's records are listed only for a cut that may be offered
                        let mut cut = Cut {
                            gain: before - after,
                            cost,
                            attribute: j,
                            low_side,
                            size: s,
                            side: Vec::new(),
                            action: Move::Distribution,
                        };
                        if best.wins(&cut) {
                            cut.side.extend(a.iter().map(|&(_, r)| r));
                            best.cut = Some(cut);
                        }
                        continue;
                    }
                    let largest = if low_side {
                        completed_low
                    } else {
                        completed_high
                    };
                    if largest != Some(b) || rest.len() < k - s + self.keep() {
                        continue;
                    }
                    scratch.rest.clear();
                    scratch.rest.extend(rest.iter().map(|&(_, r)| r));
                    let side: Vec<u32> = a.iter().map(|&(_, r)| r).collect();
                    best.offer(self.completion_cut(
                        j,
                        low_side,
                        side,
                        own,
                        (before, guest_cost),
                        guests,
                        group.len,
                        scratch,
                        rng.as_deref_mut(),
                    ));
                }
            }
        }
        scratch.sorted = sorted;
        best.cut
    }

    /// The boxes of the records before (`below[p]`) and from (`above[p]`) every cut position
    /// `positions[p]` of `sorted`, in two sweeps.
    fn side_boxes(
        &self,
        sorted: &[(u32, u32)],
        positions: &[usize],
    ) -> (Vec<Vec<Extent>>, Vec<Vec<Extent>>) {
        let geometry = self.geometry;
        let mut below = Vec::with_capacity(positions.len());
        let mut acc = geometry.empty();
        let mut next = 0;
        for &b in positions {
            for &(_, r) in &sorted[next..b] {
                geometry.extend(&mut acc, r);
            }
            next = b;
            below.push(acc.clone());
        }
        let mut above = vec![Vec::new(); positions.len()];
        let mut acc = geometry.empty();
        let mut next = sorted.len();
        for (p, &b) in positions.iter().enumerate().rev() {
            for &(_, r) in &sorted[b..next] {
                geometry.extend(&mut acc, r);
            }
            next = b;
            above[p] = acc.clone();
        }
        (below, above)
    }

    /// The completion of side `side` (records of `A`) from the group's other members
    /// (`scratch.rest`); `current` is the group's box, summed penalty and guests' uncovered cells.
    #[allow(clippy::too_many_arguments)]
    fn completion_cut(
        &self,
        j: usize,
        low_side: bool,
        side: Vec<u32>,
        own: &[Extent],
        current: (f64, u64),
        guests: &[u32],
        len: usize,
        scratch: &mut Scratch,
        rng: Option<&mut SecretStream>,
    ) -> Cut {
        let geometry = self.geometry;
        let (before, guest_cost) = current;
        let k = self.k;
        let s = side.len();
        let rest = &mut scratch.rest;
        let moved: Vec<u32> = match rng {
            None => {
                // fewest uncovered cells, then closest to the cut, then lowest record index
                let edge = if low_side {
                    side.iter().map(|&r| geometry.key(r)[j]).max()
                } else {
                    side.iter().map(|&r| geometry.key(r)[j]).min()
                }
                .unwrap_or(0);
                scratch.scored.clear();
                scratch.scored.extend(rest.iter().map(|&r| {
                    (
                        geometry.outside(own, r),
                        geometry.key(r)[j].abs_diff(edge),
                        r,
                    )
                }));
                let count = k - s;
                scratch.scored.select_nth_unstable(count - 1);
                let mut chosen: Vec<(u64, u32, u32)> = scratch.scored[..count].to_vec();
                chosen.sort_unstable();
                chosen.into_iter().map(|(_, _, r)| r).collect()
            }
            Some(rng) => {
                let room = (rest.len() - k) as u64;
                let count = (k - s) as u64 + rng.below(room - (k - s) as u64 + 1);
                // a partial Fisher–Yates draw of `count` records
                for i in 0..count as usize {
                    let pick = i + rng.below((rest.len() - i) as u64) as usize;
                    rest.swap(i, pick);
                }
                rest[..count as usize].to_vec()
            }
        };
        let cost_moved: u64 = moved.iter().map(|&r| geometry.outside(own, r)).sum();
        let mut taken = moved.clone();
        taken.sort_unstable();
        let mut shrunk = geometry.empty();
        for &r in rest.iter() {
            if taken.binary_search(&r).is_err() {
                geometry.extend(&mut shrunk, r);
            }
        }
        let guest_after: u64 = guests.iter().map(|&g| geometry.outside(&shrunk, g)).sum();
        let after = (s + moved.len()) as f64 * geometry.penalty(own)
            + (len - s - moved.len()) as f64 * geometry.penalty(&shrunk);
        Cut {
            gain: before - after,
            cost: (cost_moved + guest_after).saturating_sub(guest_cost),
            attribute: j,
            low_side,
            size: s,
            side,
            action: Move::Completion { moved },
        }
    }
}

/// Applies `cut` to `group`: reorders its arena range and returns the group that stays open (`B`) and,
/// after a completion, the completed group (`A` with its moved records).
pub(super) fn apply(
    arena: &mut [u32],
    mark: &mut [u8],
    group: Group,
    cut: &Cut,
) -> (Group, Option<Group>) {
    const SIDE: u8 = 1;
    const MOVED: u8 = 2;
    for &r in &cut.side {
        mark[r as usize] = SIDE;
    }
    let moved: &[u32] = match &cut.action {
        Move::Distribution => &[],
        Move::Completion { moved } => moved,
    };
    for &r in moved {
        mark[r as usize] = MOVED;
    }
    let range = group.member_range();
    let members: Vec<u32> = arena[range.clone()].to_vec();
    let rank = |r: u32| match (mark[r as usize], &cut.action) {
        (SIDE, Move::Distribution) => 1,
        (SIDE, _) => 0,
        (MOVED, _) => 1,
        _ => match cut.action {
            Move::Distribution => 0,
            Move::Completion { .. } => 2,
        },
    };
    let mut write = range.start;
    for class in 0..3 {
        for &r in &members {
            if rank(r) == class {
                arena[write] = r;
                write += 1;
            }
        }
    }
    for &r in cut.side.iter().chain(moved) {
        mark[r as usize] = 0;
    }
    let s = cut.side.len();
    match cut.action {
        Move::Distribution => (
            Group {
                start: group.start,
                members: group.members - s,
                len: group.len,
                open: true,
            },
            None,
        ),
        Move::Completion { .. } => {
            let taken = s + moved.len();
            (
                Group {
                    start: group.start + taken,
                    members: group.members - taken,
                    len: group.len - taken,
                    open: true,
                },
                Some(Group {
                    start: group.start,
                    members: s,
                    len: taken,
                    open: false,
                }),
            )
        }
    }
}
