//! Opt-1's neighbour lists (Gorla 2019, Ch. 5 "Opt-1"; note §2.4): for every open (unsealed, alive)
//! cluster, its nearest open clusters by the average δ between their published rows, ties by first
//! record.
//!
//! Clusters never change once made, so each open cluster keeps a [`Ranking`] of its nearest clusters
//! that stays valid as the clustering evolves: a cluster that closes is dropped from it when it is
//! read, and a cluster that opens is offered to every ranking in the one scan that builds its own
//! ([`Neighbours::push`]). Reading the q nearest of a cluster then costs nothing while q of its ranked
//! entries are still open; only a ranking that has run short is rebuilt by a scan of every open cluster.
//!
//! Scans read the open clusters from [`Slots`], column by column. Most open clusters publish a record's
//! own values (level 0, penalty 0); δ from any row to such a cluster is at least the number of
//! quasi-identifiers on which their labels differ at the row's levels, a count the compiler vectorizes
//! over all slots at once, so a scan measures exactly only the clusters that count few enough
//! differences. The first rankings, one per distinct record row, are counts alone: between two records
//! δ is the count itself ([`Neighbours::rank_all`], on the caller's rayon pool).

use std::collections::HashMap;

use super::super::Prepared;
use crate::core::control::Pace;
use crate::core::error::CoreError;

/// Rows ranked per parallel block by [`Neighbours::rank_all`].
const RANKING_BLOCK: usize = 64;

/// Entries kept per cluster in its [`Ranking`], in multiples of the neighbours asked for.
const RANKING_DEPTH: usize = 3;

/// Slots whose difference counts a scan skips at once when none can qualify.
const COUNT_BLOCK: usize = 64;

/// Free slots from which closing a cluster compacts the slots (when more than half are free); small in
/// tests so that random tables compact too.
const COMPACT_AT: usize = if cfg!(test) { 2 } else { 64 };

/// No slot (a closed cluster) or no cluster (a free slot).
const NONE: u32 = u32::MAX;

/// A neighbour as ranked: distance, first record, cluster id.
pub(super) type Near = (f64, u32, u32);

/// Ranking order: distance, then first record (unique among open clusters).
pub(super) fn by_key(x: &Near, y: &Near) -> std::cmp::Ordering {
    x.0.total_cmp(&y.0).then(x.1.cmp(&y.1))
}

/// The clusters' published rows laid out for Opt-1's distances: per cluster and quasi-identifier, the
/// labels of its value's ancestors at every level (the top label repeated up to the tallest hierarchy),
/// its level and its normalized entropy penalty. δ of two values is then two loads: their labels at the
/// higher level differ (1) or not (the difference of their penalties), as `Entropy::between` computes.
#[derive(Default)]
pub(super) struct Rows {
    q: usize,
    height: usize,
    chains: Vec<u32>,
    levels: Vec<u8>,
    penalties: Vec<f64>,
}

impl Rows {
    pub(super) fn new(prep: &Prepared<'_>) -> Self {
        Self {
            q: prep.maps.len(),
            height: prep
                .maps
                .iter()
                .map(|m| m.max_level() + 1)
                .max()
                .unwrap_or(1),
            ..Self::default()
        }
    }

    pub(super) fn push(&mut self, prep: &Prepared<'_>, nodes: &[(u8, u32)]) {
        for (j, map) in prep.maps.iter().enumerate() {
            let (level, anchor) = nodes[j];
            for l in 0..self.height {
                self.chains
                    .push(map.codes(l.min(map.max_level()))[anchor as usize]);
            }
            self.levels.push(level);
            self.penalties.push(prep.entropy.penalty(j, map, nodes[j]));
        }
    }

    /// Σ over the quasi-identifiers of δ between the published rows of clusters `a` and `b`.
    #[cfg(test)]
    pub(super) fn distance(&self, a: usize, b: usize) -> f64 {
        self.distance_within(a, b, f64::INFINITY)
            .unwrap_or(f64::INFINITY)
    }

    /// Σ over the quasi-identifiers of δ between the published rows of clusters `a` and `b`, or `None`
    /// as soon as a partial sum exceeds `limit` (every δ is at least 0, so the whole sum would too).
    fn distance_within(&self, a: usize, b: usize, limit: f64) -> Option<f64> {
        let (q, h) = (self.q, self.height);
        let mut d = 0.0;
        for j in 0..q {
            let (x, y) = (a * q + j, b * q + j);
            let level = self.levels[x].max(self.levels[y]) as usize;
            d += if self.chains[x * h + level] != self.chains[y * h + level] {
                1.0
            } else {
                (self.penalties[x] - self.penalties[y]).abs()
            };
            if d > limit {
                return None;
            }
        }
        Some(d)
    }

    /// Cluster `c`'s label of quasi-identifier `j` at `level`.
    fn label(&self, c: usize, j: usize, level: usize) -> u32 {
        self.chains[(c * self.q + j) * self.height + level]
    }

    /// Cluster `c`'s normalized penalty of quasi-identifier `j`.
    fn penalty(&self, c: usize, j: usize) -> f64 {
        self.penalties[c * self.q + j]
    }

    /// Cluster `c`'s level of quasi-identifier `j`.
    fn level(&self, c: usize, j: usize) -> usize {
        usize::from(self.levels[c * self.q + j])
    }

    /// Cluster `c`'s published row as (level, label) per quasi-identifier: equal rows are equal lists.
    fn node_labels(&self, c: usize) -> Vec<(usize, u32)> {
        (0..self.q)
            .map(|j| {
                let level = self.level(c, j);
                (level, self.label(c, j, level))
            })
            .collect()
    }

    /// Whether cluster `c` publishes a record's own values (every level 0, so every penalty 0).
    fn is_record(&self, c: usize) -> bool {
        let range = c * self.q..(c + 1) * self.q;
        self.levels[range.clone()].iter().all(|&l| l == 0)
            && self.penalties[range].iter().all(|&p| p == 0.0)
    }
}

/// The open clusters by slot, column by column: per quasi-identifier and level, every slot's label;
/// a mask that is 0 for slots publishing a record and 255 for the others and for free slots; the
/// distance of the slot's ranking bound (+∞ without a bound, −∞ without a ranking) and that bound as a
/// difference count: a record slot whose count exceeds it cannot enter the ranking. Closed clusters free
/// their slots, which the next clusters reuse.
#[derive(Default)]
struct Slots {
    /// Cluster per slot ([`NONE`]: free).
    ids: Vec<u32>,
    free: Vec<u32>,
    /// `labels[j * height + level][slot]`.
    labels: Vec<Vec<u32>>,
    mask: Vec<u8>,
    bound: Vec<f64>,
    bound_count: Vec<u8>,
}

impl Slots {
    fn new(rows: &Rows) -> Self {
        Self {
            labels: vec![Vec::new(); rows.q * rows.height],
            ..Self::default()
        }
    }

    /// A slot for open cluster `id`.
    fn take(&mut self, rows: &Rows, id: u32) -> u32 {
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                self.ids.push(NONE);
                self.mask.push(u8::MAX);
                self.bound.push(f64::NEG_INFINITY);
                self.bound_count.push(0);
                for column in &mut self.labels {
                    column.push(0);
                }
                self.ids.len() as u32 - 1
            }
        };
        let i = s as usize;
        self.ids[i] = id;
        self.mask[i] = if rows.is_record(id as usize) {
            0
        } else {
            u8::MAX
        };
        self.set_bound(i, f64::NEG_INFINITY);
        for j in 0..rows.q {
            for l in 0..rows.height {
                self.labels[j * rows.height + l][i] = rows.label(id as usize, j, l);
            }
        }
        s
    }

    fn release(&mut self, s: u32) {
        self.ids[s as usize] = NONE;
        self.mask[s as usize] = u8::MAX;
        self.set_bound(s as usize, f64::NEG_INFINITY);
        self.free.push(s);
    }

    /// Cluster `c`'s label of quasi-identifier `j` at its level, and every slot's label at that level.
    fn column(&self, rows: &Rows, c: usize, j: usize) -> (u32, &[u32]) {
        let level = rows.level(c, j);
        (
            rows.label(c, j, level),
            &self.labels[j * rows.height + level],
        )
    }

    /// Records the bound distance of slot `s`'s ranking. A record slot counting more differences than
    /// the bound is farther than it (δ is at least the count), so the count cut-off is the bound's
    /// integer part; slots that are not records always pass (255).
    fn set_bound(&mut self, s: usize, bound: f64) {
        self.bound[s] = bound;
        self.bound_count[s] = if self.mask[s] != 0 || bound == f64::INFINITY {
            u8::MAX
        } else {
            // the float-to-int cast saturates: −∞ gives 0, large bounds 255
            bound.floor() as u8
        };
    }
}

/// Most quasi-identifiers for which [`Differences`] records which ones match (one bit each).
const MATCH_BITS: usize = 8;

/// One scan's view of every slot from cluster `c`'s row: per slot, the quasi-identifiers on which its
/// label differs from `c`'s at `c`'s level (saturating at 255, the value of slots that do not publish a
/// record and of free slots) and, with at most [`MATCH_BITS`] quasi-identifiers, which ones match. δ from `c` to a
/// record slot then needs no load of the slot's row: it sums, over the quasi-identifiers in order,
/// `c`'s penalty where they match and 1 where they differ, the sum `distance_within` computes, read
/// from a table of every match pattern.
#[derive(Default)]
struct Differences {
    counts: Vec<u8>,
    matches: Vec<u8>,
    /// δ per match pattern (empty with more quasi-identifiers than [`MATCH_BITS`]).
    sums: Vec<f64>,
}

impl Differences {
    /// The view of every slot of `slots` from cluster `c`.
    fn fill(&mut self, slots: &Slots, rows: &Rows, c: usize) {
        let n = slots.ids.len();
        self.counts.clear();
        self.matches.clear();
        if rows.q <= MATCH_BITS {
            // one bit per matching quasi-identifier; the count is the bits that are not set
            self.matches.resize(n, 0);
            for j in 0..rows.q {
                let (value, column) = slots.column(rows, c, j);
                for (matched, &x) in self.matches.iter_mut().zip(column) {
                    *matched |= u8::from(x == value) << j;
                }
            }
            let q = rows.q as u8;
            self.counts.extend(
                self.matches
                    .iter()
                    .zip(&slots.mask)
                    .map(|(&m, &mask)| (q - m.count_ones() as u8) | mask),
            );
        } else {
            self.counts.resize(n, 0);
            for j in 0..rows.q {
                let (value, column) = slots.column(rows, c, j);
                for (count, &x) in self.counts.iter_mut().zip(column) {
                    *count = count.saturating_add(u8::from(x != value));
                }
            }
            for (count, &m) in self.counts.iter_mut().zip(&slots.mask) {
                *count |= m;
            }
        }
        let bits = !self.matches.is_empty();
        self.sums.clear();
        if bits {
            self.sums.extend((0..1usize << rows.q).map(|pattern| {
                let mut d = 0.0;
                for j in 0..rows.q {
                    d += if pattern >> j & 1 == 1 {
                        rows.penalty(c, j)
                    } else {
                        1.0
                    };
                }
                d
            }));
        }
    }

    /// δ from cluster `c` (the row of the last [`Differences::fill`]) to open cluster `id` in slot `s`,
    /// or `None` when it exceeds `limit`.
    fn distance(
        &self,
        slots: &Slots,
        rows: &Rows,
        (c, id, s): (usize, usize, usize),
        limit: f64,
    ) -> Option<f64> {
        if slots.mask[s] == 0 && !self.sums.is_empty() {
            let d = self.sums[usize::from(self.matches[s])];
            return (d <= limit).then_some(d);
        }
        rows.distance_within(c, id, limit)
    }
}

/// Whether some slot of a block passes the count cut-off: its count is at most the larger of `own` and
/// its own cut-off in `cutoffs` (a fold without early exit, which the compiler vectorizes).
fn block_passes(counts: &[u8], cutoffs: &[u8], own: u8) -> bool {
    counts
        .iter()
        .zip(cutoffs)
        .fold(false, |any, (&n, &b)| any | (n <= own.max(b)))
}

/// A cluster's nearest clusters, ascending. Every open cluster (but the cluster itself) that is not an
/// entry ranks at or after `bound` (at only when the bound has closed: first records are unique among
/// open clusters), and every entry before it or is it; without a bound every open cluster is
/// an entry. Entries may have closed since; they are dropped when read.
struct Ranking {
    entries: Vec<Near>,
    bound: Option<Near>,
}

impl Ranking {
    /// The ranking of the candidates `entries` (every open cluster but those already known to rank
    /// after the last of them), keeping the `depth` nearest.
    fn of(mut entries: Vec<Near>, depth: usize) -> Self {
        let mut bound = None;
        if entries.len() > depth {
            entries.select_nth_unstable_by(depth, by_key);
            entries.truncate(depth);
            entries.sort_unstable_by(by_key);
            bound = entries.last().copied();
        } else {
            entries.sort_unstable_by(by_key);
        }
        Self { entries, bound }
    }

    /// The distance a newcomer must not exceed to be an entry (+∞ without a bound).
    fn limit(&self) -> f64 {
        self.bound.map_or(f64::INFINITY, |b| b.0)
    }

    /// Takes in a cluster that has just opened: an entry if it ranks before the bound. Once twice the
    /// depth are held, closed entries are dropped and, past the depth, the farthest; the last one kept
    /// becomes the bound.
    fn offer(&mut self, near: Near, depth: usize, is_open: impl Fn(u32) -> bool) {
        // a cluster that ties with the bound has the bound's first record, so the bound is closed and
        // every open entry ranks strictly before the newcomer: leaving it out keeps the invariant
        if self.bound.is_some_and(|b| by_key(&near, &b).is_ge()) {
            return;
        }
        let at = self.entries.partition_point(|e| by_key(e, &near).is_lt());
        self.entries.insert(at, near);
        if self.entries.len() >= 2 * depth {
            self.entries.retain(|e| is_open(e.2));
            if self.entries.len() > depth {
                self.entries.truncate(depth);
                self.bound = self.entries.last().copied();
            }
        }
    }
}

/// The neighbour lists of every open cluster (see the module documentation).
pub(super) struct Neighbours {
    pub(super) rows: Rows,
    /// First record per cluster id.
    first: Vec<u32>,
    /// Slot per cluster id ([`NONE`]: closed).
    slot_of: Vec<u32>,
    slots: Slots,
    /// Ranking per slot.
    rankings: Vec<Option<Ranking>>,
    /// The last scan's view of the slots.
    differences: Differences,
    /// Neighbours asked for; 0 until [`Neighbours::rank_all`] starts keeping rankings.
    q: usize,
    /// Entries kept per ranking.
    depth: usize,
}

impl Neighbours {
    /// No clusters yet, no rankings kept.
    pub(super) fn new(prep: &Prepared<'_>) -> Self {
        let rows = Rows::new(prep);
        Self {
            slots: Slots::new(&rows),
            rows,
            first: Vec::new(),
            slot_of: Vec::new(),
            rankings: Vec::new(),
            differences: Differences::default(),
            q: 0,
            depth: 0,
        }
    }

    /// Records cluster `id` (ids ascending), publishing `nodes`, with first record `first`. Once the
    /// rankings are kept, a cluster that opens is offered to every open cluster's ranking and gets its
    /// own, in one scan of the open clusters.
    pub(super) fn push(
        &mut self,
        prep: &Prepared<'_>,
        id: u32,
        first: u32,
        nodes: &[(u8, u32)],
        open: bool,
    ) {
        debug_assert_eq!(id as usize, self.first.len(), "clusters come in id order");
        self.rows.push(prep, nodes);
        self.first.push(first);
        if !open {
            self.slot_of.push(NONE);
            return;
        }
        let s = self.slots.take(&self.rows, id);
        self.slot_of.push(s);
        if self.rankings.len() <= s as usize {
            self.rankings.resize_with(s as usize + 1, || None);
        }
        if self.q > 0 {
            self.link(id);
        }
    }

    /// Marks cluster `id` closed (merged or sealed).
    pub(super) fn close(&mut self, id: u32) {
        let s = std::mem::replace(&mut self.slot_of[id as usize], NONE);
        if s != NONE {
            self.slots.release(s);
            self.rankings[s as usize] = None;
            if self.slots.free.len() >= COMPACT_AT
                && 2 * self.slots.free.len() > self.slots.ids.len()
            {
                self.compact();
            }
        }
    }

    /// Moves the open clusters to the first slots, in slot order, and drops the free ones, so scans
    /// read as many slots as there are open clusters.
    fn compact(&mut self) {
        let slots = &mut self.slots;
        let mut next = 0;
        for s in 0..slots.ids.len() {
            let id = slots.ids[s];
            if id == NONE {
                continue;
            }
            if s != next {
                slots.ids[next] = id;
                slots.mask[next] = slots.mask[s];
                slots.bound[next] = slots.bound[s];
                slots.bound_count[next] = slots.bound_count[s];
                for column in &mut slots.labels {
                    column[next] = column[s];
                }
                self.rankings.swap(s, next);
                self.slot_of[id as usize] = next as u32;
            }
            next += 1;
        }
        slots.ids.truncate(next);
        slots.mask.truncate(next);
        slots.bound.truncate(next);
        slots.bound_count.truncate(next);
        for column in &mut slots.labels {
            column.truncate(next);
        }
        slots.free.clear();
        self.rankings.truncate(next);
    }

    /// Drops every kept ranking, so the next list of each open cluster is ranked by a scan (a
    /// fallback should a ranking ever have lost a neighbour; new clusters are still ranked and offered).
    pub(super) fn forget_rankings(&mut self) {
        for (s, ranking) in self.rankings.iter_mut().enumerate() {
            if ranking.take().is_some() {
                self.slots.set_bound(s, f64::NEG_INFINITY);
            }
        }
    }

    /// Whether cluster `id` is open.
    fn is_open(slot_of: &[u32], id: u32) -> bool {
        slot_of.get(id as usize).is_some_and(|&s| s != NONE)
    }

    /// Offers the new open cluster `c` to every open cluster's ranking and ranks its own neighbours.
    fn link(&mut self, c: u32) {
        let mut differences = std::mem::take(&mut self.differences);
        differences.fill(&self.slots, &self.rows, c as usize);
        let counts = &differences.counts;
        let own = self.own_count(c, counts, self.depth);
        let Self {
            rows,
            first,
            slot_of,
            slots,
            rankings,
            depth,
            ..
        } = self;
        let depth = *depth;
        let mine = first[c as usize];
        let mut entries: Vec<Near> = Vec::new();
        let mut cutoff: Option<Near> = None;
        for start in (0..counts.len()).step_by(COUNT_BLOCK) {
            let range = start..(start + COUNT_BLOCK).min(counts.len());
            if !block_passes(
                &counts[range.clone()],
                &slots.bound_count[range.clone()],
                own,
            ) {
                continue;
            }
            for s in range {
                let (count, id) = (counts[s], slots.ids[s]);
                if count > own.max(slots.bound_count[s]) || id == NONE || id == c {
                    continue;
                }
                let own_limit = cutoff.map_or(f64::INFINITY, |x| x.0);
                let limit = own_limit.max(slots.bound[s]);
                let at = (c as usize, id as usize, s);
                let Some(distance) = differences.distance(slots, rows, at, limit) else {
                    continue;
                };
                if let Some(ranking) = rankings[s].as_mut() {
                    ranking.offer((distance, mine, c), depth, |x| Self::is_open(slot_of, x));
                    slots.set_bound(s, ranking.limit());
                }
                let near = (distance, first[id as usize], id);
                let mine_too = count <= own || slots.mask[s] != 0;
                if mine_too && cutoff.is_none_or(|x| by_key(&near, &x).is_lt()) {
                    keep(&mut entries, &mut cutoff, near, depth);
                }
            }
        }
        let ranking = Ranking::of(entries, depth);
        let s = slot_of[c as usize] as usize;
        slots.set_bound(s, ranking.limit());
        rankings[s] = Some(ranking);
        self.differences = differences;
    }

    /// The count cut-off of cluster `c`'s own ranking (`depth` entries) from its difference `counts`:
    /// δ from `c` to a record slot lies between the slot's count t and t + P, P the sum of `c`'s own
    /// penalties, so once `depth` record slots other than `c`'s own count at most T (`depth` + 2 counted,
    /// since `c` may count itself and the ranking needs one more than it keeps to know its bound), a
    /// record slot counting more than T + P is farther than all of them. 255 (every slot passes) when
    /// too few record slots are open or the cut-off does not fit a count.
    fn own_count(&self, c: u32, counts: &[u8], depth: usize) -> u8 {
        let q = self.rows.q;
        let needed = depth.saturating_add(1);
        let Some(t) = (0..q.min(usize::from(u8::MAX))).find(|&t| at_most(counts, t as u8) > needed)
        else {
            return u8::MAX;
        };
        let own_penalty: f64 = (0..q).map(|j| self.rows.penalty(c as usize, j)).sum();
        // a margin for the float sums, which may round a hair above T + P
        let cut = (t as f64 + own_penalty + 1e-6).floor();
        if cut >= f64::from(u8::MAX) {
            u8::MAX
        } else {
            cut as u8
        }
    }

    /// The q nearest open clusters of open cluster `c` (ties: first record): read from its ranking while
    /// q of its entries are still open (or it holds every open cluster), else ranked again by a scan.
    pub(super) fn nearest(&mut self, c: u32) -> Vec<u32> {
        let q = self.q.max(1);
        debug_assert!(
            Self::is_open(&self.slot_of, c),
            "only open clusters have lists"
        );
        let s = self.slot_of[c as usize] as usize;
        if let Some(ranking) = self.rankings[s].as_mut() {
            let slot_of = &self.slot_of;
            ranking.entries.retain(|e| Self::is_open(slot_of, e.2));
            if ranking.bound.is_none() || ranking.entries.len() >= q {
                return ranking.entries.iter().take(q).map(|e| e.2).collect();
            }
        }
        let depth = self.depth.max(q);
        let mut differences = std::mem::take(&mut self.differences);
        let ranking = self.scan(c, Some(c), depth, &mut differences);
        self.differences = differences;
        let near = ranking.entries.iter().take(q).map(|e| e.2).collect();
        self.slots.set_bound(s, ranking.limit());
        self.rankings[s] = Some(ranking);
        near
    }

    /// The ranking of the published row of cluster `row` by a scan of every open cluster but `exclude`,
    /// keeping `depth` entries; `differences` is the caller's buffer.
    fn scan(
        &self,
        row: u32,
        exclude: Option<u32>,
        depth: usize,
        differences: &mut Differences,
    ) -> Ranking {
        differences.fill(&self.slots, &self.rows, row as usize);
        let counts = &differences.counts;
        let own = self.own_count(row, counts, depth);
        let mut entries: Vec<Near> = Vec::new();
        let mut cutoff: Option<Near> = None;
        let mask = &self.slots.mask;
        for start in (0..counts.len()).step_by(COUNT_BLOCK) {
            let range = start..(start + COUNT_BLOCK).min(counts.len());
            // slots that are not records (mask 255) always pass
            if !block_passes(&counts[range.clone()], &mask[range.clone()], own) {
                continue;
            }
            for s in range {
                let (count, id) = (counts[s], self.slots.ids[s]);
                if count > own.max(mask[s]) || id == NONE || Some(id) == exclude {
                    continue;
                }
                let limit = cutoff.map_or(f64::INFINITY, |x| x.0);
                let at = (row as usize, id as usize, s);
                let Some(distance) = differences.distance(&self.slots, &self.rows, at, limit)
                else {
                    continue;
                };
                let near = (distance, self.first[id as usize], id);
                if cutoff.is_none_or(|x| by_key(&near, &x).is_lt()) {
                    keep(&mut entries, &mut cutoff, near, depth);
                }
            }
        }
        Ranking::of(entries, depth)
    }

    /// The ranking of record cluster `row` when every open cluster publishes a record too: δ is then
    /// the difference count itself, so the `depth` nearest are read from a histogram of the counts
    /// without measuring any distance. Open clusters that count more than the kept ones rank after them.
    fn rank_counted(&self, row: u32, depth: usize, differences: &mut Differences) -> Ranking {
        differences.fill(&self.slots, &self.rows, row as usize);
        let counts = &differences.counts;
        // the smallest count that, with every count below it, reaches the depth (free slots count 255,
        // above every open cluster's)
        let open = self.slots.ids.len() - self.slots.free.len();
        let mut threshold = self.rows.q;
        for t in 0..self.rows.q {
            let t = t as u8;
            if at_most(counts, t) >= depth {
                threshold = usize::from(t);
                break;
            }
        }
        // few slots qualify: skip blocks whose smallest count is above the threshold
        let mut entries: Vec<Near> = Vec::new();
        for (counts, ids) in counts
            .chunks(COUNT_BLOCK)
            .zip(self.slots.ids.chunks(COUNT_BLOCK))
        {
            if usize::from(counts.iter().copied().fold(u8::MAX, u8::min)) > threshold {
                continue;
            }
            for (&c, &id) in counts.iter().zip(ids) {
                if usize::from(c) <= threshold {
                    entries.push((f64::from(c), self.first[id as usize], id));
                }
            }
        }
        let held = entries.len();
        let mut ranking = Ranking::of(entries, depth);
        if ranking.bound.is_none() && held < open {
            ranking.bound = ranking.entries.last().copied();
        }
        ranking
    }

    /// Ranks every open cluster's nearest open clusters (the first lists of Opt-1, one per record) and
    /// from then on keeps every open cluster's ranking (`q` neighbours asked for). Clusters that publish
    /// the same row rank every other cluster alike, so each distinct row is ranked once, one entry
    /// deeper and counting its own clusters, and each cluster then drops itself. Blocks of rows run on
    /// the caller's rayon pool and count their work on `pace`, so a cancelled run stops between blocks.
    pub(super) fn rank_all(&mut self, q: usize, pace: &mut Pace<'_>) -> Result<(), CoreError> {
        use rayon::prelude::*;
        // more neighbours than clusters would change no list; the bound keeps the depth arithmetic small
        let clusters = self.slots.ids.len().max(1);
        self.q = q.clamp(1, clusters);
        self.depth = self.q.saturating_mul(RANKING_DEPTH);
        let depth = self.depth;
        let open: Vec<u32> = self
            .slots
            .ids
            .iter()
            .copied()
            .filter(|&id| id != NONE)
            .collect();
        let mut row_of: Vec<u32> = Vec::with_capacity(open.len());
        let mut subjects: Vec<u32> = Vec::new();
        let mut seen: HashMap<Vec<(usize, u32)>, u32> = HashMap::new();
        for &c in &open {
            let next = subjects.len() as u32;
            let row = *seen
                .entry(self.rows.node_labels(c as usize))
                .or_insert(next);
            if row == next {
                subjects.push(c);
            }
            row_of.push(row);
        }
        drop(seen);
        let counted = self.rows.q < usize::from(u8::MAX)
            && open.iter().all(|&c| self.rows.is_record(c as usize));
        let mut shared: Vec<Ranking> = Vec::with_capacity(subjects.len());
        for block in subjects.chunks(RANKING_BLOCK) {
            let ranked: Vec<Ranking> = block
                .par_iter()
                .map_init(Differences::default, |differences, &s| {
                    if counted {
                        self.rank_counted(s, depth + 1, differences)
                    } else {
                        self.scan(s, None, depth + 1, differences)
                    }
                })
                .collect();
            shared.extend(ranked);
            pace.step(block.len() * open.len())?;
        }
        for (&c, &row) in open.iter().zip(&row_of) {
            let ranking = &shared[row as usize];
            let mut entries: Vec<Near> = ranking
                .entries
                .iter()
                .copied()
                .filter(|&(_, _, id)| id != c)
                .collect();
            let bound = if ranking.bound.is_some() {
                entries.truncate(depth);
                entries.last().copied()
            } else {
                None
            };
            let ranking = Ranking { entries, bound };
            let s = self.slot_of[c as usize] as usize;
            self.slots.set_bound(s, ranking.limit());
            self.rankings[s] = Some(ranking);
        }
        Ok(())
    }
}

/// How many of `counts` are at most `t` (summed in bytes, 255 at a time, which the compiler
/// vectorizes).
fn at_most(counts: &[u8], t: u8) -> usize {
    counts
        .chunks(255)
        .map(|chunk| {
            usize::from(
                chunk
                    .iter()
                    .fold(0u8, |sum, &c| sum.wrapping_add(u8::from(c <= t))),
            )
        })
        .sum()
}

/// Adds `near` (ranked before the cut-off) to the scan's `entries`: once twice the depth are held, the
/// farther half is dropped and its nearest becomes the cut-off for the rest of the scan (entries past
/// the depth-th nearest seen so far can never be kept).
fn keep(entries: &mut Vec<Near>, cutoff: &mut Option<Near>, near: Near, depth: usize) {
    entries.push(near);
    if entries.len() > 2 * depth {
        entries.select_nth_unstable_by(depth, by_key);
        *cutoff = Some(entries[depth]);
        entries.truncate(depth + 1);
    }
}
