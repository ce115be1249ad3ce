//! PAIR-ENUM (Gorla 2019, "Dependency-preserving generalization", Algorithm 1, §4.2, with the
//! optimizations of Ch. 5; note §2.2 and §2.4, [GAP-1], [GAP-7], [GAP-8], [GAP-12]).
//!
//! Starting from single records, every round merges the pair of unsealed clusters whose merge gives the
//! clustering of highest utility; a merged cluster of exactly k records is sealed. When two clusters
//! hold more than k records together, the larger one (ties: the first) keeps its records and takes, one
//! at a time, the record of the other with the fewest quasi-identifier mismatches to those chosen
//! (ties: lowest record) until it has k; the rest stays an unsealed cluster ([GAP-8]). Rounds run while
//! at least k records are unsealed; the remaining (< k) records are suppressed. Every unsealed cluster
//! has fewer than k records, so a pair always exists and there are O(N) rounds.
//!
//! Ties: candidates compare by (utility, instances preserved exactly) when `prefer_exact` is on (the
//! default, [GAP-1]: it reproduces the thesis's worked example with the entropy distance), else by
//! utility; equal keys go to the first pair in enumeration order (unsealed clusters ordered by their
//! lowest record, pairs lexicographic). Utilities are compared on a 10⁻⁹ grid so float noise never
//! decides a tie. The first candidate is always accepted ([GAP-7]).
//!
//! Opt-1 (`neighbours = Some(q)`, default q = 8): a cluster's candidate partners are its q nearest
//! unsealed clusters by the average δ between their published rows; a new cluster gets its list, and
//! lists that held a merged cluster are recomputed; a pair stays a candidate until one of its clusters
//! is merged. Candidate gains are then kept in a priority queue
//! and only the best one is re-evaluated after each round (lazy greedy); a gain that rose since it was
//! computed is not noticed until it is re-evaluated, which is why Opt-1 can lose some utility, as in
//! the thesis (§3.3: +3.2 % Δ). `neighbours = None` evaluates every pair every round (the thesis's
//! baseline, O(N²) candidates per round). Opt-2 (`incremental`, default on) evaluates a candidate on
//! the instances it can change only (`utility::Scores`), exactly; off, the utility of every candidate
//! clustering is recomputed from the definitions.
//!
//! Cost: with Opt-1, O(N) rounds, each computing O(q) neighbour lists in O(N · q_attrs) and a few
//! candidate evaluations in O(touched instances · k); without it, O(N²) evaluations per round.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::utility::{naive_utility, Cluster, ClusterRef, Scores};
use super::{finish, tick, ClusteringResult, FunctionalDependency, Prepared, PreserveMode};
use crate::core::control::{Control, Pace};
use crate::core::error::CoreError;
use crate::core::local::LocalInput;

/// Options of [`pair_enum`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PairEnumOptions {
    /// k of k-anonymity (≥ 1; the thesis's default is 5).
    pub k: usize,
    /// Value distance of the utility.
    pub mode: PreserveMode,
    /// Break utility ties by the number of instances preserved exactly (default on).
    pub prefer_exact: bool,
    /// Opt-1: candidate partners per cluster (`None`: every pair; default `Some(8)`).
    pub neighbours: Option<usize>,
    /// Opt-2: incremental, exact candidate evaluation (default on).
    pub incremental: bool,
}

impl Default for PairEnumOptions {
    fn default() -> Self {
        Self {
            k: 5,
            mode: PreserveMode::Continuous,
            prefer_exact: true,
            neighbours: Some(8),
            incremental: true,
        }
    }
}

/// Scaled utility grid of candidate keys.
fn grid(v: f64) -> i64 {
    (v * 1e9).round() as i64
}

/// A candidate merge: the merged cluster and, when the pair holds more than k records, the rest.
#[derive(Default)]
struct Merge {
    merged: Vec<u32>,
    merged_nodes: Vec<(u8, u32)>,
    rest: Vec<u32>,
    rest_nodes: Vec<(u8, u32)>,
    sums: Vec<u32>,
}

impl Merge {
    fn build(&mut self, prep: &Prepared<'_>, clusters: &[Cluster], a: u32, b: u32) {
        let (ca, cb) = (&clusters[a as usize], &clusters[b as usize]);
        self.merged.clear();
        self.rest.clear();
        if ca.members.len() + cb.members.len() <= prep.k {
            self.merged.extend_from_slice(&ca.members);
            self.merged.extend_from_slice(&cb.members);
            self.merged.sort_unstable();
            prep.join(&ca.nodes, &cb.nodes, &mut self.merged_nodes);
            self.rest_nodes.clear();
            return;
        }
        let (keep, other) = if cb.members.len() > ca.members.len() {
            (cb, ca)
        } else {
            (ca, cb)
        };
        self.merged.extend_from_slice(&keep.members);
        self.rest.extend_from_slice(&other.members);
        self.sums.clear();
        for &r in &self.rest {
            self.sums
                .push(keep.members.iter().map(|&m| prep.mismatches(r, m)).sum());
        }
        while self.merged.len() < prep.k {
            let mut pick = 0;
            for i in 1..self.rest.len() {
                if (self.sums[i], self.rest[i]) < (self.sums[pick], self.rest[pick]) {
                    pick = i;
                }
            }
            let r = self.rest.swap_remove(pick);
            self.sums.swap_remove(pick);
            for (i, &x) in self.rest.iter().enumerate() {
                self.sums[i] += prep.mismatches(x, r);
            }
            self.merged.push(r);
        }
        self.merged.sort_unstable();
        self.rest.sort_unstable();
        prep.lca(&self.merged, &mut self.merged_nodes);
        prep.lca(&self.rest, &mut self.rest_nodes);
    }

    fn added(&self) -> Vec<ClusterRef<'_>> {
        let mut added = vec![(self.merged.as_slice(), self.merged_nodes.as_slice())];
        if !self.rest.is_empty() {
            added.push((self.rest.as_slice(), self.rest_nodes.as_slice()));
        }
        added
    }
}

/// The state of one run.
struct Run<'p, 'a> {
    prep: &'p Prepared<'a>,
    options: &'p PairEnumOptions,
    clusters: Vec<Cluster>,
    scores: Option<Scores>,
    merge: Merge,
    /// Utility and exactly preserved instances of the current clustering when candidates are evaluated
    /// from the definitions (a candidate's key is its change from these, as the incremental scores
    /// give it); refreshed after every merge.
    current: (f64, i64),
    /// Opt-1: each cluster's last ranking of its nearest clusters (by cluster id).
    rankings: Vec<Option<Ranking>>,
    /// Opt-1: the clusters' published rows, for distances (by cluster id).
    rows: Rows,
    /// Opt-1: the open (unsealed, alive) clusters, compactly, for the neighbour scans.
    open: Open,
}

/// The open clusters as an ascending id list (closed ids are dropped lazily) with a flag and the first
/// record of every cluster, so a neighbour scan reads two small arrays instead of every cluster ever
/// made.
#[derive(Default)]
struct Open {
    ids: Vec<u32>,
    flag: Vec<bool>,
    first: Vec<u32>,
    closed: usize,
}

impl Open {
    /// Records a new cluster (ids come in ascending order).
    fn push(&mut self, id: u32, first: u32, open: bool) {
        debug_assert_eq!(
            id as usize,
            self.flag.len(),
            "clusters are added in id order"
        );
        self.flag.push(open);
        self.first.push(first);
        if open {
            self.ids.push(id);
        }
    }

    /// Marks cluster `id` closed; the id list is compacted once half of it is closed.
    fn close(&mut self, id: u32) {
        if std::mem::replace(&mut self.flag[id as usize], false) {
            self.closed += 1;
            if 2 * self.closed > self.ids.len() {
                let flag = &self.flag;
                self.ids.retain(|&i| flag[i as usize]);
                self.closed = 0;
            }
        }
    }

    fn is_open(&self, id: u32) -> bool {
        self.flag.get(id as usize).copied().unwrap_or(false)
    }

    /// The open ids from `from` on, ascending.
    fn from(&self, from: usize) -> impl Iterator<Item = u32> + '_ {
        let start = self.ids.partition_point(|&i| (i as usize) < from);
        self.ids[start..]
            .iter()
            .copied()
            .filter(|&i| self.flag[i as usize])
    }
}

impl<'p, 'a> Run<'p, 'a> {
    /// The run over `clusters` (their published rows and open index built, the current utility
    /// measured when there are no incremental scores).
    fn new(
        prep: &'p Prepared<'a>,
        options: &'p PairEnumOptions,
        clusters: Vec<Cluster>,
        scores: Option<Scores>,
    ) -> Self {
        let mut run = Run {
            prep,
            options,
            clusters: Vec::with_capacity(clusters.len()),
            scores,
            merge: Merge::default(),
            current: (0.0, 0),
            rankings: Vec::new(),
            rows: Rows::new(prep),
            open: Open::default(),
        };
        for cluster in clusters {
            run.push_cluster(cluster);
        }
        run.current = run.measure_current();
        run
    }
}

impl Run<'_, '_> {
    /// Key of merging `a` and `b` (canonical order: `a` has the lower first record).
    fn key(&mut self, a: u32, b: u32) -> Key {
        let current = self.current;
        self.merge.build(self.prep, &self.clusters, a, b);
        let (du, dx) = match &mut self.scores {
            Some(scores) => {
                scores.evaluate(self.prep, &self.clusters, &[a, b], &self.merge.added())
            }
            None => {
                let kept = self
                    .clusters
                    .iter()
                    .enumerate()
                    .filter(|&(id, c)| c.alive && id as u32 != a && id as u32 != b)
                    .map(|(_, c)| (c.members.as_slice(), c.nodes.as_slice()));
                let added = self.merge.added();
                let (u, x) = naive_utility(self.prep, kept.chain(added.iter().copied()));
                (u - current.0, x - current.1)
            }
        };
        let (ca, cb) = (&self.clusters[a as usize], &self.clusters[b as usize]);
        let before = self.prep.penalty(&ca.nodes, ca.members.len())
            + self.prep.penalty(&cb.nodes, cb.members.len());
        let after = self
            .merge
            .added()
            .iter()
            .map(|(members, nodes)| self.prep.penalty(nodes, members.len()))
            .sum::<f64>();
        (
            grid(du),
            if self.options.prefer_exact { dx } else { 0 },
            -grid(after - before),
        )
    }

    fn measure_current(&self) -> (f64, i64) {
        match &self.scores {
            Some(_) => (0.0, 0),
            None => naive_utility(
                self.prep,
                self.clusters
                    .iter()
                    .filter(|c| c.alive)
                    .map(|c| (c.members.as_slice(), c.nodes.as_slice())),
            ),
        }
    }

    fn first(&self, c: u32) -> u32 {
        self.clusters[c as usize].members[0]
    }

    fn canonical(&self, a: u32, b: u32) -> (u32, u32) {
        if self.first(a) < self.first(b) {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// Commits the merge of `a` and `b`; returns the new cluster ids and the records sealed.
    fn commit(
        &mut self,
        a: u32,
        b: u32,
        pace: &mut Pace<'_>,
    ) -> Result<(Vec<u32>, usize), CoreError> {
        self.merge.build(self.prep, &self.clusters, a, b);
        self.clusters[a as usize].alive = false;
        self.clusters[b as usize].alive = false;
        self.open.close(a);
        self.open.close(b);
        let mut added = Vec::with_capacity(2);
        let sealed = self.merge.merged.len() == self.prep.k;
        added.push(self.clusters.len() as u32);
        self.push_cluster(Cluster {
            members: self.merge.merged.clone(),
            nodes: self.merge.merged_nodes.clone(),
            sealed,
            alive: true,
        });
        if !self.merge.rest.is_empty() {
            added.push(self.clusters.len() as u32);
            self.push_cluster(Cluster {
                members: self.merge.rest.clone(),
                nodes: self.merge.rest_nodes.clone(),
                sealed: false,
                alive: true,
            });
        }
        match &mut self.scores {
            Some(scores) => scores.apply(self.prep, &self.clusters, &[a, b], &added, pace)?,
            None => self.current = self.measure_current(),
        }
        Ok((added, if sealed { self.prep.k } else { 0 }))
    }

    /// The unsealed clusters ordered by first record.
    fn unsealed(&self) -> Vec<u32> {
        let mut u: Vec<u32> = (0..self.clusters.len() as u32)
            .filter(|&c| self.clusters[c as usize].alive && !self.clusters[c as usize].sealed)
            .collect();
        u.sort_unstable_by_key(|&c| self.first(c));
        u
    }

    /// Every pair, first best key wins.
    fn best_pair_exhaustive(
        &mut self,
        pace: &mut Pace<'_>,
    ) -> Result<Option<(u32, u32)>, CoreError> {
        let u = self.unsealed();
        pace.step(self.clusters.len())?;
        let mut best: Option<(Key, (u32, u32))> = None;
        for i in 0..u.len() {
            for j in i + 1..u.len() {
                let key = self.key(u[i], u[j]);
                pace.step(self.key_work(u[i], u[j]))?;
                if best.is_none_or(|(b, _)| key > b) {
                    best = Some((key, (u[i], u[j])));
                }
            }
        }
        Ok(best.map(|(_, pair)| pair))
    }

    /// Work units of evaluating the pair `a`, `b`: the records of both clusters (the merge and its
    /// incremental score), or every live cluster when the utility is recomputed from the definitions.
    fn key_work(&self, a: u32, b: u32) -> usize {
        let pair =
            self.clusters[a as usize].members.len() + self.clusters[b as usize].members.len();
        match self.scores {
            Some(_) => pair,
            None => pair + self.clusters.len(),
        }
    }

    /// Adds `cluster` to the clusters and to their published rows.
    fn push_cluster(&mut self, cluster: Cluster) {
        self.rows.push(self.prep, &cluster.nodes);
        self.open.push(
            self.clusters.len() as u32,
            cluster.members[0],
            cluster.alive && !cluster.sealed,
        );
        self.clusters.push(cluster);
    }

    /// Whether cluster `id` can still be merged.
    fn open(&self, id: u32) -> bool {
        self.open.is_open(id)
    }

    /// The q unsealed clusters nearest to `c` by the average δ of their published rows (ties: first
    /// record). Clusters never change once made, so `c`'s ranking is kept ([`Ranking`]): while at least
    /// q of its entries are still open, the answer is among them and the clusters made since, and only
    /// those are measured; otherwise every cluster is.
    fn nearest(&mut self, c: u32, q: usize) -> Vec<u32> {
        if self.rankings.len() < self.clusters.len() {
            self.rankings.resize_with(self.clusters.len(), || None);
        }
        let depth = q.saturating_mul(RANKING_DEPTH).max(1);
        let mut entries: Vec<Near> = Vec::new();
        let mut bound = None;
        let mut from = 0;
        if let Some(ranking) = self.rankings[c as usize].take() {
            entries = ranking.entries;
            entries.retain(|&(_, _, id)| self.open(id));
            if ranking.bound.is_none() || entries.len() >= q {
                bound = ranking.bound;
                from = ranking.measured;
            } else {
                entries.clear();
            }
        }
        let ranking = rank(
            &self.open,
            &self.rows,
            self.clusters.len(),
            (c as usize, Some(c)),
            from,
            entries,
            bound,
            depth,
        );
        let near = ranking
            .entries
            .iter()
            .take(q)
            .map(|&(_, _, id)| id)
            .collect();
        self.rankings[c as usize] = Some(ranking);
        near
    }

    /// Ranks every cluster's nearest open clusters, a block of clusters at a time on the caller's rayon
    /// pool (the first lists of Opt-1, one per record); [`Run::nearest`] then reads them without
    /// measuring again. Each block is short and counts its work on `pace`, so a cancelled run stops
    /// between blocks and the pool is never held long.
    fn rank_all(&mut self, q: usize, pace: &mut Pace<'_>) -> Result<(), CoreError> {
        use rayon::prelude::*;
        let depth = q.saturating_mul(RANKING_DEPTH).max(1);
        let n = self.clusters.len();
        // clusters that publish the same row rank every other cluster alike: each distinct row is ranked
        // once, one entry deeper and counting its own clusters, and each cluster then drops itself
        let mut row_of: Vec<u32> = Vec::with_capacity(n);
        let mut subjects: Vec<usize> = Vec::new();
        let mut seen: HashMap<&[(u8, u32)], u32> = HashMap::new();
        for (c, cluster) in self.clusters.iter().enumerate() {
            let next = subjects.len() as u32;
            let row = *seen.entry(cluster.nodes.as_slice()).or_insert(next);
            if row == next {
                subjects.push(c);
            }
            row_of.push(row);
        }
        drop(seen);
        let mut shared: Vec<Ranking> = Vec::with_capacity(subjects.len());
        let (open, rows) = (&self.open, &self.rows);
        for block in subjects.chunks(RANKING_BLOCK) {
            let ranked: Vec<Ranking> = block
                .par_iter()
                .map(|&subject| {
                    rank(
                        open,
                        rows,
                        n,
                        (subject, None),
                        0,
                        Vec::new(),
                        None,
                        depth + 1,
                    )
                })
                .collect();
            shared.extend(ranked);
            pace.step(block.len() * n)?;
        }
        self.rankings = (0..n)
            .map(|c| {
                let ranking = &shared[row_of[c] as usize];
                let mut entries: Vec<Near> = ranking
                    .entries
                    .iter()
                    .copied()
                    .filter(|&(_, _, id)| id != c as u32)
                    .collect();
                let bound = if ranking.bound.is_some() {
                    entries.truncate(depth);
                    entries.last().copied()
                } else {
                    None
                };
                Some(Ranking {
                    entries,
                    measured: ranking.measured,
                    bound,
                })
            })
            .collect();
        Ok(())
    }
}

/// Clusters ranked per parallel block by [`Run::rank_all`].
const RANKING_BLOCK: usize = 64;

/// Entries kept per cluster in its [`Ranking`], in multiples of the neighbours asked for.
const RANKING_DEPTH: usize = 3;

/// A neighbour as ranked: distance, first record, cluster id.
type Near = (f64, u32, u32);

/// Ranking order: distance, then first record (unique among open clusters).
fn by_key(x: &Near, y: &Near) -> std::cmp::Ordering {
    x.0.total_cmp(&y.0).then(x.1.cmp(&y.1))
}

/// A cluster's nearest open clusters as last measured, ascending. Every open cluster below id
/// `measured` that is not an entry ranks after `bound`, and every entry before or at it; no bound means
/// every such cluster is an entry.
struct Ranking {
    entries: Vec<Near>,
    measured: usize,
    bound: Option<Near>,
}

/// The ranking of the cluster whose published row is `subject.0` (leaving out cluster `subject.1`, if
/// any) from `entries` (open clusters already ranked, all before or at `bound`) and the open clusters
/// from id `from` on (of the `made` clusters so far), keeping at most `depth` entries.
#[allow(clippy::too_many_arguments)]
fn rank(
    open: &Open,
    rows: &Rows,
    made: usize,
    subject: (usize, Option<u32>),
    from: usize,
    mut entries: Vec<Near>,
    mut bound: Option<Near>,
    depth: usize,
) -> Ranking {
    // entries past the depth-th nearest seen so far can never be kept: once twice the depth are held,
    // the farther half is dropped and its nearest becomes a cut-off for the rest of the scan
    let mut cutoff: Option<Near> = None;
    let (row, exclude) = subject;
    for id in open.from(from) {
        if Some(id) == exclude {
            continue;
        }
        // a cluster already farther than the bound or the cut-off is not measured to the end
        let limit = match (bound, cutoff) {
            (Some(b), Some(x)) => b.0.min(x.0),
            (Some(b), None) => b.0,
            (None, Some(x)) => x.0,
            (None, None) => f64::INFINITY,
        };
        let Some(distance) = rows.distance_within(row, id as usize, limit) else {
            continue;
        };
        let near = (distance, open.first[id as usize], id);
        // past the bound, an unmeasured older cluster may be nearer: leave it out (it stays past)
        if bound.is_none_or(|b| by_key(&near, &b).is_lt())
            && cutoff.is_none_or(|b| by_key(&near, &b).is_lt())
        {
            entries.push(near);
            if entries.len() > 2 * depth {
                entries.select_nth_unstable_by(depth, by_key);
                cutoff = Some(entries[depth]);
                entries.truncate(depth + 1);
            }
        }
    }
    if entries.len() > depth {
        entries.select_nth_unstable_by(depth, by_key);
        entries.truncate(depth);
        entries.sort_unstable_by(by_key);
        bound = entries.last().copied();
    } else {
        entries.sort_unstable_by(by_key);
    }
    Ranking {
        entries,
        measured: made,
        bound,
    }
}

/// The clusters' published rows laid out for Opt-1's distances: per cluster and quasi-identifier, the
/// labels of its value's ancestors at every level (the top label repeated up to the tallest hierarchy),
/// its level and its normalized entropy penalty. δ of two values is then two loads: their labels at the
/// higher level differ (1) or not (the difference of their penalties), as `Entropy::between` computes.
#[derive(Default)]
struct Rows {
    q: usize,
    height: usize,
    chains: Vec<u32>,
    levels: Vec<u8>,
    penalties: Vec<f64>,
}

impl Rows {
    fn new(prep: &Prepared<'_>) -> Self {
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

    fn push(&mut self, prep: &Prepared<'_>, nodes: &[(u8, u32)]) {
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
    fn distance(&self, a: usize, b: usize) -> f64 {
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
}

/// Candidate key: utility gain, instances preserved exactly (when preferred), negated penalty growth.
type Key = (i64, i64, i64);

/// Heap entry: key, pair order (reversed so the first pair wins), pair, evaluation version.
type Entry = (Key, Reverse<(u32, u32)>, (u32, u32), u64);

/// Runs PAIR-ENUM: clusters of exactly k records that keep the most dependency instances (see the
/// module documentation); records left over (fewer than k) are suppressed.
pub fn pair_enum(
    input: &LocalInput<'_>,
    dependencies: &[FunctionalDependency<'_>],
    options: &PairEnumOptions,
    control: &dyn Control,
) -> Result<ClusteringResult, CoreError> {
    let prep = Prepared::new(input, dependencies, options.k, options.mode)?;
    if options.neighbours == Some(0) {
        return Err(CoreError::InvalidParameter {
            name: "neighbours",
            problem: "at least one neighbour per cluster is needed".into(),
        });
    }
    let n = prep.rows;
    let k = prep.k;
    let mut pace = Pace::new(control);
    pace.check()?;
    let clusters = Cluster::singletons(&prep, k == 1, &mut pace)?;
    let scores = if options.incremental && k > 1 {
        Some(Scores::new(&prep, &clusters, &mut pace)?)
    } else {
        None
    };
    pace.check()?;
    let mut run = Run::new(&prep, options, clusters, scores);
    let mut sealed_records = if k == 1 { n } else { 0 };
    let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
    let mut evaluated: HashMap<(u32, u32), u64> = HashMap::new();
    let mut lists: Vec<Vec<u32>> = Vec::new();
    let mut holders: Vec<Vec<u32>> = Vec::new();
    let mut version = 0u64;
    // Both closures count their work on `pace`: one neighbour list scans every cluster, so a round that
    // refreshes many lists (or the first loop, one list per record) polls between lists.
    let push = |run: &mut Run<'_, '_>,
                heap: &mut BinaryHeap<Entry>,
                evaluated: &mut HashMap<(u32, u32), u64>,
                pace: &mut Pace<'_>,
                version: u64,
                a: u32,
                b: u32|
     -> Result<(), CoreError> {
        let (a, b) = run.canonical(a, b);
        if evaluated.get(&(a, b)) == Some(&version) {
            return Ok(());
        }
        let key = run.key(a, b);
        pace.step(run.key_work(a, b))?;
        evaluated.insert((a, b), version);
        heap.push((key, Reverse((run.first(a), run.first(b))), (a, b), version));
        Ok(())
    };
    let refresh = |run: &mut Run<'_, '_>,
                   heap: &mut BinaryHeap<Entry>,
                   evaluated: &mut HashMap<(u32, u32), u64>,
                   lists: &mut Vec<Vec<u32>>,
                   holders: &mut Vec<Vec<u32>>,
                   pace: &mut Pace<'_>,
                   version: u64,
                   c: u32,
                   q: usize|
     -> Result<(), CoreError> {
        let near = run.nearest(c, q);
        let len = run.clusters.len();
        pace.step(len)?;
        lists.resize(len, Vec::new());
        holders.resize(len, Vec::new());
        for &x in &near {
            holders[x as usize].push(c);
            let (a, b) = run.canonical(c, x);
            if !evaluated.contains_key(&(a, b)) {
                push(run, heap, evaluated, pace, version, a, b)?;
            }
        }
        lists[c as usize] = near;
        Ok(())
    };
    if let Some(q) = options.neighbours {
        if k > 1 {
            run.rank_all(q, &mut pace)?;
            for c in 0..n as u32 {
                refresh(
                    &mut run,
                    &mut heap,
                    &mut evaluated,
                    &mut lists,
                    &mut holders,
                    &mut pace,
                    version,
                    c,
                    q,
                )?;
            }
        }
    }
    let mut unsealed_records = n - sealed_records;
    while unsealed_records >= k && k > 1 {
        tick(control, sealed_records, n)?;
        let pair = match options.neighbours {
            None => run.best_pair_exhaustive(&mut pace)?,
            Some(q) => {
                let mut chosen = None;
                while chosen.is_none() {
                    pace.step(1)?;
                    let Some((_, _, (a, b), stamp)) = heap.pop() else {
                        // every queued pair was used up: rebuild the lists
                        for c in run.unsealed() {
                            refresh(
                                &mut run,
                                &mut heap,
                                &mut evaluated,
                                &mut lists,
                                &mut holders,
                                &mut pace,
                                version,
                                c,
                                q,
                            )?;
                        }
                        if heap.is_empty() {
                            break;
                        }
                        continue;
                    };
                    if !run.clusters[a as usize].alive || !run.clusters[b as usize].alive {
                        evaluated.remove(&(a, b));
                        continue;
                    }
                    if evaluated.get(&(a, b)) != Some(&stamp) {
                        continue;
                    }
                    if stamp != version {
                        push(
                            &mut run,
                            &mut heap,
                            &mut evaluated,
                            &mut pace,
                            version,
                            a,
                            b,
                        )?;
                        continue;
                    }
                    chosen = Some((a, b));
                }
                chosen
            }
        };
        let Some((a, b)) = pair else {
            break;
        };
        let (added, sealed) = run.commit(a, b, &mut pace)?;
        sealed_records += sealed;
        unsealed_records -= sealed;
        if let Some(q) = options.neighbours {
            version += 1;
            evaluated.remove(&(a, b));
            let mut stale: Vec<u32> = Vec::new();
            for gone in [a, b] {
                if let Some(h) = holders.get_mut(gone as usize) {
                    stale.append(h);
                }
            }
            stale.sort_unstable();
            stale.dedup();
            for c in added {
                if !run.clusters[c as usize].sealed {
                    refresh(
                        &mut run,
                        &mut heap,
                        &mut evaluated,
                        &mut lists,
                        &mut holders,
                        &mut pace,
                        version,
                        c,
                        q,
                    )?;
                }
            }
            for c in stale {
                let cl = &run.clusters[c as usize];
                if cl.alive && !cl.sealed {
                    refresh(
                        &mut run,
                        &mut heap,
                        &mut evaluated,
                        &mut lists,
                        &mut holders,
                        &mut pace,
                        version,
                        c,
                        q,
                    )?;
                }
            }
        }
    }
    tick(control, sealed_records, n)?;
    let mut out: Vec<Vec<u32>> = run
        .clusters
        .into_iter()
        .filter(|c| c.alive && c.sealed)
        .map(|c| c.members)
        .collect();
    out.sort_unstable_by_key(|m| m[0]);
    finish(&prep, input, "pair_enum", &out, control)
}

#[cfg(test)]
mod tests {
    use super::super::example::{prepared, Example};
    use super::*;

    /// The `q` nearest open clusters of `c` by brute force: every open cluster but `c`, by (δ, first
    /// record).
    fn brute_nearest(run: &Run<'_, '_>, c: u32, q: usize) -> Vec<u32> {
        let mut all: Vec<Near> = (0..run.clusters.len() as u32)
            .filter(|&id| {
                id != c && run.clusters[id as usize].alive && !run.clusters[id as usize].sealed
            })
            .map(|id| {
                (
                    run.rows.distance(c as usize, id as usize),
                    run.first(id),
                    id,
                )
            })
            .collect();
        all.sort_unstable_by(by_key);
        all.into_iter().take(q).map(|(_, _, id)| id).collect()
    }

    // The neighbour lists (the shared first rankings, the compact open index, the cut-off and the early
    // exit of the distance) agree with a brute-force ranking, first and after merges.
    #[test]
    fn neighbour_lists_agree_with_brute_force() {
        let ex = Example::new();
        let input = ex.input();
        let prep = prepared(&ex, &input, PreserveMode::Continuous);
        let options = PairEnumOptions {
            k: 2,
            ..PairEnumOptions::default()
        };
        for q in [1, 2, 3] {
            let control = crate::core::control::NoControl;
            let mut pace = Pace::new(&control);
            let clusters = Cluster::singletons(&prep, false, &mut pace).unwrap();
            let mut run = Run::new(&prep, &options, clusters, None);
            run.rank_all(q, &mut pace).unwrap();
            for c in 0..8u32 {
                assert_eq!(
                    run.nearest(c, q),
                    brute_nearest(&run, c, q),
                    "q {q}, cluster {c}"
                );
            }
            // merge the first open pair a few times (k = 2 seals each merge) and check again
            for _ in 0..3 {
                let open: Vec<u32> = run.unsealed();
                let (a, b) = run.canonical(open[0], open[1]);
                run.commit(a, b, &mut pace).unwrap();
                for c in run.unsealed() {
                    assert_eq!(
                        run.nearest(c, q),
                        brute_nearest(&run, c, q),
                        "q {q}, cluster {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn published_rows_measure_as_the_entropy_distance() {
        let ex = Example::new();
        let input = ex.input();
        let prep = prepared(&ex, &input, PreserveMode::Continuous);
        // every cluster of one or two of the example's records, and all eight
        let mut clusters: Vec<Vec<u32>> = (0..8u32)
            .flat_map(|a| (a..8).map(move |b| if a == b { vec![a] } else { vec![a, b] }))
            .collect();
        clusters.push((0..8).collect());
        let nodes = prep.lca_of(&clusters);
        let mut rows = Rows::new(&prep);
        for n in &nodes {
            rows.push(&prep, n);
        }
        for (a, x) in nodes.iter().enumerate() {
            for (b, y) in nodes.iter().enumerate() {
                let expected: f64 = prep
                    .maps
                    .iter()
                    .enumerate()
                    .map(|(j, map)| prep.entropy.between(j, map, x[j], y[j]))
                    .sum();
                assert_eq!(rows.distance(a, b), expected, "clusters {a} and {b}");
            }
        }
    }
}
