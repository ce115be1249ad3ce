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
//! Opt-1 (`neighbours = Some(q)`, default q = 1): a cluster's candidate partners are its q nearest
//! unsealed clusters by the average δ between their published rows (`neighbours`, which keeps every
//! open cluster's ranking up to date); a new cluster gets its list, and lists that held a merged cluster
//! are read again; a pair stays a candidate until one of its clusters is merged. Candidate gains are
//! kept in a priority queue and only the best one is re-evaluated after each round (lazy greedy); a gain
//! that rose since it was computed is not noticed until it is re-evaluated, which is why Opt-1 can lose
//! some utility, as in the thesis (§3.3: +3.2 % Δ). The thesis does not give q; on the planted-dependency
//! grid Δ falls as q falls (summed over its 20 tables: 271 at q = 8, 231 at q = 2, 191 at q = 1, and at
//! N = 300 q = 1 is below evaluating every pair from k = 3), because merges that gain no utility then
//! join near clusters, so q = 1 is the default (docs/papers.md). `neighbours = None` evaluates every
//! pair every round (the thesis's baseline, O(N²) candidates per round). Opt-2 (`incremental`, default
//! on) evaluates a candidate on the instances it can change only (`utility::Scores`), exactly; off, the
//! utility of every candidate clustering is recomputed from the definitions.
//!
//! Cost: with Opt-1, O(N) rounds, each offering the new cluster to every open cluster's ranking (a
//! vectorized count per slot, exact distances for the few that can enter) and a few candidate
//! evaluations in O(touched instances · k); the pairs a round lists are evaluated together, on the
//! caller's rayon pool when there are many (the first lists). Without Opt-1, O(N²) evaluations per
//! round.

mod neighbours;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use neighbours::Neighbours;

use super::utility::{naive_utility, Cluster, ClusterRef, Scores, Scratch};
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
    /// Opt-1: candidate partners per cluster (`None`: every pair; default `Some(1)`, the lowest Δ on
    /// the planted-dependency grid, docs/papers.md).
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
            neighbours: Some(1),
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
    /// Opt-1: the open clusters' neighbour lists.
    neighbours: Neighbours,
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
            neighbours: Neighbours::new(prep),
        };
        for cluster in clusters {
            run.push_cluster(cluster);
        }
        run.current = run.measure_current();
        run
    }
}

impl Run<'_, '_> {
    /// Key of merging `a` and `b` (canonical order: `a` has the lower first record), built in `work`.
    fn key(&self, work: &mut Work, a: u32, b: u32) -> Key {
        let current = self.current;
        let merge = &mut work.merge;
        merge.build(self.prep, &self.clusters, a, b);
        let (du, dx) = match (&self.scores, work.scratch.as_mut()) {
            (Some(scores), Some(scratch)) => {
                scores.evaluate_with(scratch, self.prep, &self.clusters, &[a, b], &merge.added())
            }
            _ => {
                let kept = self
                    .clusters
                    .iter()
                    .enumerate()
                    .filter(|&(id, c)| c.alive && id as u32 != a && id as u32 != b)
                    .map(|(_, c)| (c.members.as_slice(), c.nodes.as_slice()));
                let added = merge.added();
                let (u, x) = naive_utility(self.prep, kept.chain(added.iter().copied()));
                (u - current.0, x - current.1)
            }
        };
        let (ca, cb) = (&self.clusters[a as usize], &self.clusters[b as usize]);
        let before = self.prep.penalty(&ca.nodes, ca.members.len())
            + self.prep.penalty(&cb.nodes, cb.members.len());
        let after = merge
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
        self.neighbours.close(a);
        self.neighbours.close(b);
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
        let mut work = Work::new(self);
        let mut best: Option<(Key, (u32, u32))> = None;
        for i in 0..u.len() {
            for j in i + 1..u.len() {
                let key = self.key(&mut work, u[i], u[j]);
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

    /// Adds `cluster` to the clusters and to the neighbour lists.
    fn push_cluster(&mut self, cluster: Cluster) {
        self.neighbours.push(
            self.prep,
            self.clusters.len() as u32,
            cluster.members[0],
            &cluster.nodes,
            cluster.alive && !cluster.sealed,
        );
        self.clusters.push(cluster);
    }
}

/// Buffers of one candidate evaluation (one per thread that evaluates).
struct Work {
    merge: Merge,
    scratch: Option<Scratch>,
}

impl Work {
    fn new(run: &Run<'_, '_>) -> Self {
        Self {
            merge: Merge::default(),
            scratch: run.scores.as_ref().map(Scores::scratch),
        }
    }
}

/// Pairs queued for evaluation below which a batch is evaluated on the calling thread.
const PARALLEL_BATCH: usize = 256;

/// Opt-1's candidate pairs: every open cluster's neighbour list (refreshed when the cluster is made
/// or one of its neighbours is merged), each listed pair evaluated once per version of the clustering
/// and kept in a priority queue by its key; the best entry is re-evaluated until it is current (lazy
/// greedy). The pairs that one round lists are evaluated together, in parallel on the caller's rayon
/// pool: they all see the same clustering, and the queue orders entries totally (key, then pair), so
/// the choices do not depend on the order in which they are evaluated.
struct Candidates {
    heap: BinaryHeap<Entry>,
    /// The version each listed pair was last evaluated at.
    evaluated: FxHashMap<(u32, u32), u64>,
    /// Per cluster, the clusters whose lists hold it.
    holders: Vec<Vec<u32>>,
    /// Pairs listed this round and not evaluated yet.
    batch: Vec<(u32, u32)>,
    /// Merges committed so far.
    version: u64,
    /// One evaluation's buffers per thread of the pool.
    works: Vec<Work>,
}

impl Candidates {
    fn new(run: &Run<'_, '_>) -> Self {
        let threads = rayon::current_num_threads().max(1);
        Self {
            heap: BinaryHeap::new(),
            evaluated: FxHashMap::default(),
            holders: Vec::new(),
            batch: Vec::new(),
            version: 0,
            works: (0..threads).map(|_| Work::new(run)).collect(),
        }
    }

    /// Reads open cluster `c`'s neighbour list and queues the pairs it lists that are not candidates
    /// yet. A list reads its ranking or scans every cluster, so it counts that work on `pace`.
    fn refresh(
        &mut self,
        run: &mut Run<'_, '_>,
        c: u32,
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        let near = run.neighbours.nearest(c);
        let len = run.clusters.len();
        pace.step(len)?;
        self.holders.resize(len, Vec::new());
        for &x in &near {
            self.holders[x as usize].push(c);
            let pair = run.canonical(c, x);
            if let std::collections::hash_map::Entry::Vacant(slot) = self.evaluated.entry(pair) {
                slot.insert(self.version);
                self.batch.push(pair);
            }
        }
        Ok(())
    }

    /// Evaluates the queued pairs (on the rayon pool from [`PARALLEL_BATCH`] pairs: the first lists;
    /// smaller batches cost less than waking the pool) and queues their entries.
    fn flush(&mut self, run: &Run<'_, '_>, pace: &mut Pace<'_>) -> Result<(), CoreError> {
        use rayon::prelude::*;
        let batch = std::mem::take(&mut self.batch);
        let keys: Vec<Key> = if batch.len() < PARALLEL_BATCH || self.works.len() == 1 {
            let work = &mut self.works[0];
            batch.iter().map(|&(a, b)| run.key(work, a, b)).collect()
        } else {
            let chunk = batch.len().div_ceil(self.works.len());
            let mut keys = vec![(0, 0, 0); batch.len()];
            keys.par_chunks_mut(chunk)
                .zip(batch.par_chunks(chunk))
                .zip(self.works.par_iter_mut())
                .for_each(|((keys, pairs), work)| {
                    for (key, &(a, b)) in keys.iter_mut().zip(pairs) {
                        *key = run.key(work, a, b);
                    }
                });
            keys
        };
        for (&(a, b), key) in batch.iter().zip(keys) {
            pace.step(run.key_work(a, b))?;
            self.heap.push((
                key,
                Reverse((run.first(a), run.first(b))),
                (a, b),
                self.version,
            ));
        }
        self.batch = batch;
        self.batch.clear();
        Ok(())
    }

    /// The pair to merge: the first entry of the queue that is current, re-evaluating stale ones; when
    /// the queue runs dry, every open cluster's list is read again. `None` when no pair is left.
    fn best(
        &mut self,
        run: &mut Run<'_, '_>,
        pace: &mut Pace<'_>,
    ) -> Result<Option<(u32, u32)>, CoreError> {
        loop {
            pace.step(1)?;
            let Some((_, _, (a, b), stamp)) = self.heap.pop() else {
                // every queued pair was used up: rebuild the lists
                let open = run.unsealed();
                for &c in &open {
                    self.refresh(run, c, pace)?;
                }
                self.flush(run, pace)?;
                if self.heap.is_empty() && open.len() > 1 {
                    // two open clusters always list each other or a third: an empty queue means a
                    // ranking lost a neighbour; rank every list by a scan rather than suppress records
                    debug_assert!(false, "open clusters without candidate pairs");
                    run.neighbours.forget_rankings();
                    for &c in &open {
                        self.refresh(run, c, pace)?;
                    }
                    self.flush(run, pace)?;
                }
                if self.heap.is_empty() {
                    return Ok(None);
                }
                continue;
            };
            if !run.clusters[a as usize].alive || !run.clusters[b as usize].alive {
                self.evaluated.remove(&(a, b));
                continue;
            }
            if self.evaluated.get(&(a, b)) != Some(&stamp) {
                continue;
            }
            if stamp == self.version {
                return Ok(Some((a, b)));
            }
            let key = run.key(&mut self.works[0], a, b);
            pace.step(run.key_work(a, b))?;
            self.evaluated.insert((a, b), self.version);
            self.heap.push((
                key,
                Reverse((run.first(a), run.first(b))),
                (a, b),
                self.version,
            ));
        }
    }

    /// After `a` and `b` were merged into `added`: the new open clusters and every cluster whose list
    /// held `a` or `b` read their lists again.
    fn merged(
        &mut self,
        run: &mut Run<'_, '_>,
        (a, b): (u32, u32),
        added: &[u32],
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        self.version += 1;
        self.evaluated.remove(&(a, b));
        let mut stale: Vec<u32> = Vec::new();
        for gone in [a, b] {
            if let Some(h) = self.holders.get_mut(gone as usize) {
                stale.append(h);
            }
        }
        stale.sort_unstable();
        stale.dedup();
        for &c in added {
            if !run.clusters[c as usize].sealed {
                self.refresh(run, c, pace)?;
            }
        }
        for c in stale {
            let cl = &run.clusters[c as usize];
            if cl.alive && !cl.sealed {
                self.refresh(run, c, pace)?;
            }
        }
        self.flush(run, pace)
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
    let mut candidates = options
        .neighbours
        .filter(|_| k > 1)
        .map(|_| Candidates::new(&run));
    if let (Some(q), Some(candidates)) = (options.neighbours, candidates.as_mut()) {
        run.neighbours.rank_all(q, &mut pace)?;
        for c in 0..n as u32 {
            candidates.refresh(&mut run, c, &mut pace)?;
        }
        candidates.flush(&run, &mut pace)?;
    }
    let mut unsealed_records = n - sealed_records;
    while unsealed_records >= k && k > 1 {
        tick(control, sealed_records, n)?;
        let pair = match candidates.as_mut() {
            None => run.best_pair_exhaustive(&mut pace)?,
            Some(candidates) => candidates.best(&mut run, &mut pace)?,
        };
        let Some((a, b)) = pair else {
            break;
        };
        let (added, sealed) = run.commit(a, b, &mut pace)?;
        sealed_records += sealed;
        unsealed_records -= sealed;
        if let Some(candidates) = candidates.as_mut() {
            candidates.merged(&mut run, (a, b), &added, &mut pace)?;
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
