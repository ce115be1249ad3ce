//! Preserve, utility and dependency loss (Gorla 2019, Def. 8 and Def. 10, Eq. 3.4 and 4.1–4.3; note §1.8,
//! §1.9 and §2.4) and the incremental scores the greedy algorithms evaluate candidates with.
//!
//! d(p, c) averages δ over the attributes X ∪ Y of instance p's dependency, against the best row of
//! cluster c: quasi-identifiers publish c's lowest common values, other columns their own values, so the
//! column part is the fewest mismatches over c's records. preserve(c, p) = (1 − d(p, c)) · min(|c|, k)/k
//! (the thesis's clusters never exceed k; the cap keeps the baselines' larger clusters in [0, 1]);
//! utility = Σ_p max_c preserve(c, p); Δ = Σ_p min_c d(p, c) over published clusters.
//!
//! [`Scores`] keeps, for every instance, the best preserve of the sealed clusters (it only grows), a
//! histogram of the mismatch counts of the unsealed single records (a single record's preserve depends
//! only on that count), and the top entries of the other unsealed clusters with a flag telling whether
//! the list is complete (rescanned over those clusters when it runs short). A candidate (clusters removed,
//! clusters added) is then evaluated exactly on the instances it can change: those some removed or added
//! cluster reaches through an index (dependency, attribute, hierarchy value or column code) → instances.
//! A published value at the top of its hierarchy never helps (δ(x, ⊤) = 1), so it reaches nothing.

use super::dependencies::Attr;
use super::Prepared;
use crate::core::control::Pace;
use crate::core::error::CoreError;

/// Tolerance of float comparisons ("exactly preserved", ties).
pub(crate) const EPSILON: f64 = 1e-9;

/// A cluster given by its records and lowest common `(level, anchor)` values.
pub(crate) type ClusterRef<'c> = (&'c [u32], &'c [(u8, u32)]);

/// CSR offsets over labels or codes, and the instances.
type Csr = (Vec<u32>, Vec<u32>);

/// A cluster of the greedy algorithms.
#[derive(Debug, Clone)]
pub(crate) struct Cluster {
    /// Records, ascending.
    pub members: Vec<u32>,
    /// Lowest common `(level, anchor)` per quasi-identifier.
    pub nodes: Vec<(u8, u32)>,
    /// Sealed (exactly k records, never changed again).
    pub sealed: bool,
    /// Still part of the clustering.
    pub alive: bool,
}

impl Cluster {
    /// One cluster per record, each publishing the record's own values; every record counts as a unit
    /// of work on `pace`.
    pub(crate) fn singletons(
        prep: &Prepared<'_>,
        sealed: bool,
        pace: &mut Pace<'_>,
    ) -> Result<Vec<Cluster>, CoreError> {
        let mut nodes = Vec::new();
        let mut clusters = Vec::with_capacity(prep.rows);
        for r in 0..prep.rows as u32 {
            pace.step(1)?;
            prep.lca(&[r], &mut nodes);
            clusters.push(Cluster {
                members: vec![r],
                nodes: nodes.clone(),
                sealed,
                alive: true,
            });
        }
        Ok(clusters)
    }
}

/// Average distance d(p, c) of instance `p` to the best row of a cluster.
pub(crate) fn distance(prep: &Prepared<'_>, p: usize, members: &[u32], nodes: &[(u8, u32)]) -> f64 {
    let gamma = &prep.gamma;
    let fd = gamma.fd_of(p);
    let values = gamma.values(p);
    let mut sum = 0.0;
    let mut has_columns = false;
    for (i, &attr) in fd.attrs.iter().enumerate() {
        if let Attr::Qi(j) = attr {
            let (level, anchor) = nodes[j];
            sum += prep
                .entropy
                .leaf_to_value(j, prep.maps[j], prep.mode, values[i], level, anchor);
        } else {
            has_columns = true;
        }
    }
    if has_columns {
        let mut fewest = u32::MAX;
        for &r in members {
            let mut m = 0;
            for (i, &attr) in fd.attrs.iter().enumerate() {
                if let Attr::Col(c) = attr {
                    m += u32::from(gamma.columns[c][r as usize] != values[i]);
                }
            }
            fewest = fewest.min(m);
            if fewest == 0 {
                break;
            }
        }
        sum += f64::from(fewest);
    }
    sum / fd.attrs.len() as f64
}

/// preserve(c, p) = (1 − d(p, c)) · min(|c|, k) / k.
pub(crate) fn preserve(prep: &Prepared<'_>, p: usize, members: &[u32], nodes: &[(u8, u32)]) -> f64 {
    let size = members.len().min(prep.k) as f64;
    (1.0 - distance(prep, p, members, nodes)) * size / prep.k as f64
}

/// Whether a preserve or distance value is exactly 1.
pub(crate) fn is_one(v: f64) -> bool {
    v >= 1.0 - EPSILON
}

/// Utility, loss and instances preserved of a set of published clusters.
pub(crate) struct Measured {
    /// Σ_p max_c preserve(c, p).
    pub utility: f64,
    /// Σ_p min_c d(p, c) (1 per instance when nothing is published).
    pub loss: f64,
    /// Instances with min_c d(p, c) = 0.
    pub preserved: usize,
}

/// Measures published clusters directly from the definitions (O(|Γ| · clusters · k)); counts its work
/// on `pace` (every cluster per instance), so it stops when the caller cancels.
pub(crate) fn measure(
    prep: &Prepared<'_>,
    clusters: &[Vec<u32>],
    pace: &mut Pace<'_>,
) -> Result<Measured, CoreError> {
    let nodes = prep.lca_of(clusters);
    let mut out = Measured {
        utility: 0.0,
        loss: 0.0,
        preserved: 0,
    };
    for p in 0..prep.gamma.len() {
        pace.step(clusters.len())?;
        let mut best = 0.0f64;
        let mut nearest = 1.0f64;
        for (m, n) in clusters.iter().zip(&nodes) {
            let d = distance(prep, p, m, n);
            nearest = nearest.min(d);
            best = best.max((1.0 - d) * m.len().min(prep.k) as f64 / prep.k as f64);
        }
        out.utility += best;
        out.loss += nearest;
        out.preserved += usize::from(nearest <= EPSILON);
    }
    Ok(out)
}

/// Utility and exactly preserved instances of a whole clustering, from the definitions (the test
/// oracle of [`Scores`], and the evaluation when the incremental scores are switched off).
pub(crate) fn naive_utility<'c>(
    prep: &Prepared<'_>,
    clusters: impl Iterator<Item = ClusterRef<'c>> + Clone,
) -> (f64, i64) {
    let mut utility = 0.0;
    let mut exact = 0;
    for p in 0..prep.gamma.len() {
        let best = clusters
            .clone()
            .map(|(m, n)| preserve(prep, p, m, n))
            .fold(0.0, f64::max);
        utility += best;
        exact += i64::from(is_one(best));
    }
    (utility, exact)
}

/// Instances by (dependency attribute, value): for a quasi-identifier, per level below the top and per
/// label, the instances whose value lies under it; for a column, per code.
struct ReachIndex {
    /// `lists[f][i]`: per level (one for a column), CSR offsets over labels or codes and the instances.
    lists: Vec<Vec<Vec<Csr>>>,
}

impl ReachIndex {
    fn new(prep: &Prepared<'_>) -> Self {
        let gamma = &prep.gamma;
        let mut lists = Vec::with_capacity(gamma.fds.len());
        for (f, fd) in gamma.fds.iter().enumerate() {
            let mine: Vec<usize> = (0..gamma.len())
                .filter(|&p| gamma.fd_index(p) == f)
                .collect();
            let mut per_attr = Vec::with_capacity(fd.attrs.len());
            for (i, &attr) in fd.attrs.iter().enumerate() {
                let csr = |keys: &dyn Fn(u32) -> u32, buckets: usize| {
                    let mut offsets = vec![0u32; buckets + 1];
                    for &p in &mine {
                        offsets[keys(gamma.values(p)[i]) as usize + 1] += 1;
                    }
                    for b in 0..buckets {
                        offsets[b + 1] += offsets[b];
                    }
                    let mut fill = offsets.clone();
                    let mut items = vec![0u32; mine.len()];
                    for &p in &mine {
                        let b = keys(gamma.values(p)[i]) as usize;
                        items[fill[b] as usize] = p as u32;
                        fill[b] += 1;
                    }
                    (offsets, items)
                };
                let levels = match attr {
                    Attr::Qi(j) => {
                        let map = prep.maps[j];
                        (0..map.max_level())
                            .map(|level| {
                                let codes = map.codes(level);
                                csr(&|v| codes[v as usize], map.label_count(level))
                            })
                            .collect()
                    }
                    Attr::Col(c) => {
                        let buckets = gamma.columns[c]
                            .iter()
                            .copied()
                            .max()
                            .map_or(0, |m| m as usize + 1);
                        vec![csr(&|v| v, buckets)]
                    }
                };
                per_attr.push(levels);
            }
            lists.push(per_attr);
        }
        Self { lists }
    }
}

/// Entries kept per instance for the non-single unsealed clusters.
const TOP: usize = 4;

/// Incremental per-instance best preserve of a clustering.
pub(crate) struct Scores {
    reach: ReachIndex,
    arity: usize,
    /// Current best preserve per instance.
    best: Vec<f64>,
    /// Best preserve of the sealed clusters.
    fixed: Vec<f64>,
    /// `hist[p * arity + j]`: unsealed single records with j mismatches against p (j < its arity).
    hist: Vec<u32>,
    /// Top entries (preserve, cluster) of non-single unsealed clusters, descending.
    top: Vec<[(f64, u32); TOP]>,
    top_len: Vec<u8>,
    /// Whether `top` holds every non-single unsealed cluster with positive preserve.
    complete: Vec<bool>,
    /// Utility of the clustering.
    pub total: f64,
    /// Instances whose best preserve is 1.
    pub exact: i64,
    /// Buffers of [`Scores::apply`] and [`Scores::evaluate`].
    own: Scratch,
}

/// Buffers of one evaluation: instance stamps that deduplicate the reached instances of one cluster
/// and of a whole candidate, and the lists they fill. Each thread that evaluates candidates of the same
/// [`Scores`] at once holds its own ([`Scores::evaluate_with`]).
#[derive(Default)]
pub(crate) struct Scratch {
    stamp: Vec<u32>,
    union_stamp: Vec<u32>,
    union_now: u32,
    now: u32,
    scratch: Vec<u32>,
    touched: Vec<u32>,
    mism: Vec<u32>,
}

impl Scratch {
    /// Buffers for scores over `instances` instances.
    fn new(instances: usize) -> Self {
        Self {
            stamp: vec![0; instances],
            union_stamp: vec![0; instances],
            ..Self::default()
        }
    }

    /// Adds `scratch` to `touched` (deduplicated with the union stamp of round `round`).
    fn collect(&mut self, round: u32) {
        for &p in &self.scratch {
            if self.union_stamp[p as usize] != round {
                self.union_stamp[p as usize] = round;
                self.touched.push(p);
            }
        }
    }

    fn start_union(&mut self) -> u32 {
        self.touched.clear();
        self.union_now = self.union_now.wrapping_add(1);
        if self.union_now == 0 {
            self.union_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.union_now = 1;
        }
        self.union_now
    }

    /// Collects into `scratch` the instances cluster `members`/`nodes` can have positive preserve for.
    fn reach_of(
        &mut self,
        reach: &ReachIndex,
        prep: &Prepared<'_>,
        members: &[u32],
        nodes: &[(u8, u32)],
    ) {
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            self.stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.now = 1;
        }
        self.scratch.clear();
        let now = self.now;
        let gamma = &prep.gamma;
        for (f, fd) in gamma.fds.iter().enumerate() {
            for (i, &attr) in fd.attrs.iter().enumerate() {
                let lists = &reach.lists[f][i];
                let push =
                    |level: usize, bucket: usize, stamp: &mut Vec<u32>, out: &mut Vec<u32>| {
                        let (offsets, items) = &lists[level];
                        if bucket + 1 >= offsets.len() {
                            return;
                        }
                        for &p in &items[offsets[bucket] as usize..offsets[bucket + 1] as usize] {
                            if stamp[p as usize] != now {
                                stamp[p as usize] = now;
                                out.push(p);
                            }
                        }
                    };
                match attr {
                    Attr::Qi(j) => {
                        let (level, anchor) = nodes[j];
                        let map = prep.maps[j];
                        if (level as usize) < map.max_level() {
                            let label = map.codes(level as usize)[anchor as usize];
                            push(
                                level as usize,
                                label as usize,
                                &mut self.stamp,
                                &mut self.scratch,
                            );
                        }
                    }
                    Attr::Col(c) => {
                        for &r in members {
                            let code = gamma.columns[c][r as usize];
                            push(0, code as usize, &mut self.stamp, &mut self.scratch);
                        }
                    }
                }
            }
        }
    }
}

impl Scores {
    /// Scores of a clustering of unsealed single records, except those given sealed; counts its work
    /// on `pace` (one cluster at a time, as [`Scores::apply`]).
    pub fn new(
        prep: &Prepared<'_>,
        clusters: &[Cluster],
        pace: &mut Pace<'_>,
    ) -> Result<Self, CoreError> {
        let n = prep.gamma.len();
        let arity = prep.gamma.max_arity().max(1);
        let mut s = Self {
            reach: ReachIndex::new(prep),
            arity,
            best: vec![0.0; n],
            fixed: vec![0.0; n],
            hist: vec![0; n * arity],
            top: vec![[(0.0, u32::MAX); TOP]; n],
            top_len: vec![0; n],
            complete: vec![true; n],
            total: 0.0,
            exact: 0,
            own: Scratch::new(n),
        };
        let ids: Vec<u32> = (0..clusters.len() as u32)
            .filter(|&c| clusters[c as usize].alive)
            .collect();
        s.apply(prep, clusters, &[], &ids, pace)?;
        Ok(s)
    }

    /// Mismatches of single record `r` against instance `p`.
    fn mismatches(prep: &Prepared<'_>, p: usize, r: u32) -> usize {
        let gamma = &prep.gamma;
        let fd = gamma.fd_of(p);
        let values = gamma.values(p);
        fd.attrs
            .iter()
            .enumerate()
            .filter(|&(i, &attr)| match attr {
                Attr::Qi(j) => prep.record(r)[j] != values[i],
                Attr::Col(c) => gamma.columns[c][r as usize] != values[i],
            })
            .count()
    }

    /// Best preserve of instance `p` over the current clustering without the clusters `removed`.
    /// `mism` is the caller's buffer.
    fn best_without(
        &self,
        mism: &mut Vec<u32>,
        prep: &Prepared<'_>,
        clusters: &[Cluster],
        p: usize,
        removed: &[u32],
    ) -> f64 {
        let a = prep.gamma.fd_of(p).attrs.len();
        let k = prep.k as f64;
        let mut best = self.fixed[p];
        mism.clear();
        for &c in removed {
            let cl = &clusters[c as usize];
            if !cl.sealed && cl.members.len() == 1 {
                let j = Self::mismatches(prep, p, cl.members[0]);
                mism.push(j as u32);
            }
        }
        for j in 0..a {
            let gone = mism.iter().filter(|&&m| m as usize == j).count() as u32;
            if self.hist[p * self.arity + j] > gone {
                best = best.max((1.0 - j as f64 / a as f64) / k);
                break;
            }
        }
        let len = self.top_len[p] as usize;
        match self.top[p][..len]
            .iter()
            .find(|(_, c)| !removed.contains(c))
        {
            Some(&(v, _)) => best = best.max(v),
            None if !self.complete[p] => {
                for (id, cl) in clusters.iter().enumerate() {
                    if cl.alive
                        && !cl.sealed
                        && cl.members.len() > 1
                        && !removed.contains(&(id as u32))
                    {
                        best = best.max(preserve(prep, p, &cl.members, &cl.nodes));
                    }
                }
            }
            None => {}
        }
        best
    }

    /// Change of (utility, exactly preserved instances) if the unsealed clusters `removed` were replaced
    /// by the clusters `added` (records and lowest common values).
    pub fn evaluate(
        &mut self,
        prep: &Prepared<'_>,
        clusters: &[Cluster],
        removed: &[u32],
        added: &[ClusterRef<'_>],
    ) -> (f64, i64) {
        self.with_own(|scores, own| scores.evaluate_with(own, prep, clusters, removed, added))
    }

    /// Runs `f` with the scores' own buffers lent out (given back whatever `f` returns).
    fn with_own<R>(&mut self, f: impl FnOnce(&mut Self, &mut Scratch) -> R) -> R {
        let mut own = std::mem::take(&mut self.own);
        let out = f(self, &mut own);
        self.own = own;
        out
    }

    /// Buffers for [`Scores::evaluate_with`] on another thread.
    pub fn scratch(&self) -> Scratch {
        Scratch::new(self.best.len())
    }

    /// [`Scores::evaluate`] with the caller's buffers, so several threads can evaluate candidates of
    /// the same clustering at once.
    pub fn evaluate_with(
        &self,
        own: &mut Scratch,
        prep: &Prepared<'_>,
        clusters: &[Cluster],
        removed: &[u32],
        added: &[ClusterRef<'_>],
    ) -> (f64, i64) {
        let round = own.start_union();
        for &c in removed {
            let cl = &clusters[c as usize];
            own.reach_of(&self.reach, prep, &cl.members, &cl.nodes);
            own.collect(round);
        }
        for &(m, n) in added {
            own.reach_of(&self.reach, prep, m, n);
            own.collect(round);
        }
        let touched = std::mem::take(&mut own.touched);
        let mut du = 0.0;
        let mut dx = 0;
        for &p in &touched {
            let p = p as usize;
            let mut new = self.best_without(&mut own.mism, prep, clusters, p, removed);
            for &(m, n) in added {
                new = new.max(preserve(prep, p, m, n));
            }
            du += new - self.best[p];
            dx += i64::from(is_one(new)) - i64::from(is_one(self.best[p]));
        }
        own.touched = touched;
        (du, dx)
    }

    /// Records that clusters `removed` (now dead) were replaced by clusters `added` (already in
    /// `clusters`, alive, sealed or not). The instances each cluster reaches count as work on `pace`
    /// (the first call adds every record), and a cancelled run leaves the scores half updated.
    pub fn apply(
        &mut self,
        prep: &Prepared<'_>,
        clusters: &[Cluster],
        removed: &[u32],
        added: &[u32],
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        self.with_own(|scores, own| scores.apply_with(own, prep, clusters, removed, added, pace))
    }

    fn apply_with(
        &mut self,
        own: &mut Scratch,
        prep: &Prepared<'_>,
        clusters: &[Cluster],
        removed: &[u32],
        added: &[u32],
        pace: &mut Pace<'_>,
    ) -> Result<(), CoreError> {
        let round = own.start_union();
        for (i, &c) in removed.iter().chain(added).enumerate() {
            let cl = &clusters[c as usize];
            own.reach_of(&self.reach, prep, &cl.members, &cl.nodes);
            own.collect(round);
            pace.step(1 + own.scratch.len())?;
            // removed clusters are dead and added ones alive, so no id is in both lists
            let is_added = i >= removed.len();
            let scratch = std::mem::take(&mut own.scratch);
            for &p in &scratch {
                let p = p as usize;
                if cl.sealed {
                    if is_added {
                        self.fixed[p] =
                            self.fixed[p].max(preserve(prep, p, &cl.members, &cl.nodes));
                    }
                } else if cl.members.len() == 1 {
                    let j = Self::mismatches(prep, p, cl.members[0]);
                    if j < prep.gamma.fd_of(p).attrs.len() {
                        let h = &mut self.hist[p * self.arity + j];
                        if is_added {
                            *h += 1;
                        } else {
                            *h -= 1;
                        }
                    }
                } else if is_added {
                    let v = preserve(prep, p, &cl.members, &cl.nodes);
                    if v > 0.0 {
                        self.insert_top(p, v, c);
                    }
                } else {
                    let len = self.top_len[p] as usize;
                    if let Some(pos) = self.top[p][..len].iter().position(|&(_, id)| id == c) {
                        self.top[p].copy_within(pos + 1..len, pos);
                        self.top_len[p] -= 1;
                    }
                }
            }
            own.scratch = scratch;
        }
        let touched = std::mem::take(&mut own.touched);
        for &p in &touched {
            let p = p as usize;
            if !self.complete[p] && self.top_len[p] < 2 {
                pace.step(clusters.len())?;
                self.rescan(prep, clusters, p);
            }
            pace.step(1)?;
            let new = self.best_without(&mut own.mism, prep, clusters, p, &[]);
            self.total += new - self.best[p];
            self.exact += i64::from(is_one(new)) - i64::from(is_one(self.best[p]));
            self.best[p] = new;
        }
        own.touched = touched;
        Ok(())
    }

    fn insert_top(&mut self, p: usize, v: f64, c: u32) {
        let len = self.top_len[p] as usize;
        let pos = self.top[p][..len]
            .iter()
            .position(|&(w, _)| v > w)
            .unwrap_or(len);
        if pos >= TOP {
            self.complete[p] = false;
            return;
        }
        if len == TOP {
            self.complete[p] = false;
            self.top[p].copy_within(pos..TOP - 1, pos + 1);
        } else {
            self.top[p].copy_within(pos..len, pos + 1);
            self.top_len[p] += 1;
        }
        self.top[p][pos] = (v, c);
    }

    fn rescan(&mut self, prep: &Prepared<'_>, clusters: &[Cluster], p: usize) {
        self.top_len[p] = 0;
        self.complete[p] = true;
        for (id, cl) in clusters.iter().enumerate() {
            if cl.alive && !cl.sealed && cl.members.len() > 1 {
                let v = preserve(prep, p, &cl.members, &cl.nodes);
                if v > 0.0 {
                    self.insert_top(p, v, id as u32);
                }
            }
        }
    }
}
