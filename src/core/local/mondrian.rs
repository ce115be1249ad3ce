//! Mondrian multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan 2006, "Mondrian
//! Multidimensional K-Anonymity", ICDE: strict and relaxed multidimensional partitioning, §2; the greedy
//! median-cut algorithm and allowable cuts, §4): the
//! table is cut top-down into groups, each cut allowable only when every side satisfies every privacy
//! model; a partition without an allowable cut becomes a group. There is no note for this paper; the
//! choices below follow the paper and common implementations of it.
//!
//! # Choices
//! - **Dimension.** The quasi-identifier with the widest normalized extent over the partition's records
//!   is tried first, then the next widest, until one has an allowable cut (attributes of extent 0 are
//!   never cut). Extent of an ordered attribute: numeric width of the partition over the numeric width
//!   of the whole domain for numeric domains, `(high rank − low rank) / (ranks − 1)` otherwise. Extent of a
//!   hierarchical attribute: `(leaves under the partition's lowest common ancestor − 1) / (hierarchy
//!   leaves − 1)`, so that a single value has extent 0 and the root 1. Ties go to the lower
//!   quasi-identifier index. [`MondrianOptions::split_preference`] replaces this order by an explicit
//!   priority (unlisted attributes follow by extent).
//! - **Ordered cut.** Strict: the split value `v` is the rank of the lower median record (index
//!   `(n − 1) / 2` of the partition sorted by rank); records of rank `≤ v` go left, the rest right. When
//!   that leaves the right side empty (`v` is the partition's highest rank), `v` becomes the highest rank
//!   below it. Relaxed: the `⌊n / 2⌋` lowest-ranked records go left, ties at the median rank broken by
//!   record index (lower indices left), so the halves differ by at most one record.
//! - **Hierarchical cut.** A partition whose lowest common ancestor is node `v` at level `l > 0` is cut
//!   into its records' level `l − 1` ancestors (the children of `v` present). The multiway cut is tried
//!   first and is allowable only when every child group passes. Otherwise a binary cut groups the
//!   children, ordered by label code, into a prefix and a suffix; prefixes are tried from the most
//!   balanced (record counts closest to half) outwards, and the first allowable one is taken. Both sides
//!   of a binary cut keep `v` as their ancestor when they hold several children; later cuts separate them.
//!   Strict and relaxed modes cut hierarchies the same way (a value never straddles a hierarchical cut).
//! - **Order of work.** A cut lays its parts out left to right in the row array; groups are numbered by
//!   their position there, which is the order of a depth-first pass that finishes the first part first.
//!   Parts of partitions of at least [`PARALLEL_PARTITION`] records (and fewer than 48 cuts deep) are
//!   partitioned side by side on the caller's rayon pool (each thread with its own scratch and checker,
//!   on disjoint slices of the arrays); the rest on an explicit stack. Same input, same output, for any
//!   number of threads.
//!
//! # Invariants
//! - Every group satisfies every model ([`GroupChecker::is_private`]), because a part is only created by
//!   an allowable cut and the whole table is checked first.
//! - In strict mode, two records with the same value of the cut attribute are never separated by a cut:
//!   any two groups have disjoint value sets on at least one quasi-identifier.
//! - Every cut is a stable counting pass (no sorting of records), so a partition of `n` records costs
//!   `O(n × quasi-identifiers)` per candidate attribute, with no allocation per record. The row-major
//!   key copy moves with the row ids, so a partition's keys are one contiguous block and every pass
//!   reads memory sequentially (random access into a 10 M-record key copy costs far more than moving it).

use serde::Serialize;

use std::sync::Mutex;

use rayon::prelude::*;

use super::{Domain, GroupChecker, LocalInput, OrderedDomain, Recoding};
use crate::core::control::{Control, Pace, Phase, Progress};
use crate::core::data::GeneralizationMap;
use crate::core::error::CoreError;
use crate::core::privacy::PrivacyModel;

/// Options of a Mondrian run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MondrianOptions {
    /// Relaxed Mondrian: ordered cuts may separate records with the median value so that both halves are
    /// as balanced as possible. Strict (the default) keeps equal values together.
    pub relaxed: bool,
    /// Quasi-identifier indices to try first, in this order, instead of the widest extent; attributes not
    /// listed follow by extent. Indices must be distinct and below the number of quasi-identifiers.
    pub split_preference: Vec<usize>,
}

/// Statistics of a Mondrian run, for the job report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MondrianReport {
    /// Whether relaxed cuts were used.
    pub relaxed: bool,
    /// Groups formed.
    pub groups: u64,
    /// Cuts made (a multiway hierarchical cut counts once).
    pub splits: u64,
    /// Candidate cuts rejected because a side failed a model.
    pub rejected_cuts: u64,
    /// Depth of the deepest group (the whole table has depth 0).
    pub max_depth: u32,
    /// Records in the smallest group.
    pub smallest_group: u64,
    /// Records in the largest group.
    pub largest_group: u64,
}

/// The outcome of a Mondrian run: the recoding and its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Mondrian {
    /// Groups (no record is suppressed) and their cells: lowest common ancestors and rank ranges.
    pub recoding: Recoding,
    /// Statistics.
    pub report: MondrianReport,
}

/// Partitions the records of `input` with Mondrian so that every group satisfies every model of
/// `models`, and returns the recoding of the partition ([`Recoding::from_partition`]).
///
/// Partitions of at least [`PARALLEL_PARTITION`] records that are cut have their parts partitioned on
/// the caller's rayon pool; the output is the same for any number of threads.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for a bad `split_preference` or more than `u32::MAX` records;
/// [`CoreError::TooFewRecords`] when a model needs more records than the table has;
/// [`CoreError::NoSolution`] when the whole table already fails a model (no record is suppressed);
/// [`CoreError::Cancelled`] when `control` asks to stop (polled once per partition, and while the
/// sides of candidate cuts are checked, so a large partition with many rejected cuts stops too).
pub fn mondrian(
    input: &LocalInput<'_>,
    models: &[Box<dyn PrivacyModel>],
    options: &MondrianOptions,
    control: &dyn Control,
) -> Result<Mondrian, CoreError> {
    mondrian_with(input, models, options, control, PARALLEL_PARTITION)
}

/// Fewest records of a partition whose parts are partitioned in parallel: below, a thread costs more
/// than the partition's work.
pub const PARALLEL_PARTITION: usize = 1 << 14;

/// Deepest partition whose parts are partitioned in parallel: each parallel level is a stack frame on a
/// pool thread, so a long chain of lopsided cuts continues on the explicit stack.
const PARALLEL_DEPTH: u32 = 48;

/// [`mondrian`] with parts of partitions of at least `parallel_from` records partitioned in parallel
/// (tests lower it to reach the parallel path on small tables).
pub(crate) fn mondrian_with(
    input: &LocalInput<'_>,
    models: &[Box<dyn PrivacyModel>],
    options: &MondrianOptions,
    control: &dyn Control,
    parallel_from: usize,
) -> Result<Mondrian, CoreError> {
    validate(input, models, options)?;
    let mut checker = GroupChecker::new(input, models);
    let mut rows: Vec<u32> = (0..input.rows as u32).collect();
    if control.is_cancelled() {
        return Err(CoreError::Cancelled);
    }
    if input.rows > 0 && !checker.is_private(&rows) {
        return Err(CoreError::NoSolution {
            models: models
                .iter()
                .map(|m| m.describe())
                .collect::<Vec<_>>()
                .join(" and "),
            max_suppressed: 0,
            top_failing: input.rows as u64,
            top_classes: 1,
            top_smallest_class: input.rows as u64,
        });
    }
    if control.is_cancelled() {
        return Err(CoreError::Cancelled);
    }
    let min_size = checker.min_group_size().min(usize::MAX as u64) as usize;
    let plan = Plan::new(input, models, options, control, (min_size, parallel_from));
    let n = input.rows;
    let mut keys = plan.keys()?;
    let (mut scratch, mut scratch_keys) = (vec![0u32; n], vec![0u32; n * plan.q]);
    plan.progress(0);
    let mut worker = Worker::new(&plan, checker);
    if n > 0 {
        worker.partition(
            Block {
                offset: 0,
                rows: &mut rows,
                keys: &mut keys,
                scratch: &mut scratch,
                scratch_keys: &mut scratch_keys,
            },
            0,
        );
    }
    if worker.cancelled || control.is_cancelled() {
        return Err(CoreError::Cancelled);
    }
    worker.flush();
    plan.progress(0);
    // Groups are numbered by position: a cut lays its parts out left to right, so this is the order in
    // which a depth-first pass, first part first, settles them.
    let mut leaves = std::mem::take(&mut worker.leaves);
    leaves.sort_unstable_by_key(|leaf| leaf.start);
    let mut group_of = vec![0u32; n];
    let mut report = MondrianReport {
        relaxed: options.relaxed,
        groups: leaves.len() as u64,
        splits: worker.splits,
        rejected_cuts: worker.rejected_cuts,
        max_depth: 0,
        smallest_group: if leaves.is_empty() { 0 } else { u64::MAX },
        largest_group: 0,
    };
    for (g, leaf) in leaves.iter().enumerate() {
        for &r in &rows[leaf.start..leaf.start + leaf.len] {
            group_of[r as usize] = g as u32;
        }
        report.max_depth = report.max_depth.max(leaf.depth);
        report.smallest_group = report.smallest_group.min(leaf.len as u64);
        report.largest_group = report.largest_group.max(leaf.len as u64);
    }
    Ok(Mondrian {
        recoding: Recoding::from_partition(input, group_of, leaves.len()),
        report,
    })
}

/// Checks the options and the table size against the models.
fn validate(
    input: &LocalInput<'_>,
    models: &[Box<dyn PrivacyModel>],
    options: &MondrianOptions,
) -> Result<(), CoreError> {
    // a threshold on the whole table cannot be decided one partition at a time
    if let Some(model) = models.iter().find(|m| m.is_table_level()) {
        return Err(CoreError::InvalidParameter {
            name: "privacy_models",
            problem: format!(
                "{} is a threshold on the whole table, which Mondrian cannot enforce",
                model.describe()
            ),
        });
    }
    let q = input.quasi_identifiers.len();
    let mut seen = vec![false; q];
    for &j in &options.split_preference {
        if j >= q {
            return Err(CoreError::InvalidParameter {
                name: "split_preference",
                problem: format!("index {j} is not below the {q} quasi-identifiers"),
            });
        }
        if std::mem::replace(&mut seen[j], true) {
            return Err(CoreError::InvalidParameter {
                name: "split_preference",
                problem: format!("index {j} is listed twice"),
            });
        }
    }
    if input.rows > u32::MAX as usize {
        return Err(CoreError::InvalidParameter {
            name: "rows",
            problem: format!("Mondrian handles at most {} records", u32::MAX),
        });
    }
    for model in models {
        if model.min_class_size() > input.rows as u64 {
            return Err(CoreError::TooFewRecords {
                model: model.describe(),
                needed: model.min_class_size(),
                rows: input.rows as u64,
            });
        }
    }
    Ok(())
}

/// How one quasi-identifier is cut.
enum Dimension<'a> {
    /// Rank ranges; `total` is the width of the whole domain (numeric width, or ranks − 1), `numbers`
    /// the number at every rank for numeric domains.
    Ordered {
        order: &'a OrderedDomain,
        numbers: Option<Vec<f64>>,
        total: f64,
    },
    /// Children along a hierarchy; `labels` is the most labels of any level.
    Hierarchy {
        map: &'a GeneralizationMap,
        leaves: f64,
        labels: usize,
    },
}

/// The extent of a partition on one quasi-identifier.
#[derive(Debug, Clone, Copy)]
enum Extent {
    /// Lowest and highest rank.
    Range { low: u32, high: u32 },
    /// Lowest common ancestor: its level and the column code of one record under it.
    Node { level: usize, anchor: u32 },
}

/// What every worker of a run reads: the input, the models, the options and how each quasi-identifier
/// is cut; and the records settled so far, for progress.
struct Plan<'p> {
    input: &'p LocalInput<'p>,
    models: &'p [Box<dyn PrivacyModel>],
    control: &'p dyn Control,
    relaxed: bool,
    preference: Vec<usize>,
    dimensions: Vec<Dimension<'p>>,
    q: usize,
    min_size: usize,
    parallel_from: usize,
    /// Settled records between two progress reports.
    report_every: u64,
    /// Records settled so far; reports are sent under the lock, so they only grow.
    settled: Mutex<u64>,
}

impl<'p> Plan<'p> {
    fn new(
        input: &'p LocalInput<'p>,
        models: &'p [Box<dyn PrivacyModel>],
        options: &MondrianOptions,
        control: &'p dyn Control,
        (min_size, parallel_from): (usize, usize),
    ) -> Self {
        let mut dimensions = Vec::with_capacity(input.quasi_identifiers.len());
        for attribute in &input.quasi_identifiers {
            dimensions.push(match attribute.domain {
                Domain::Ordered(order) => {
                    let (numbers, total) = order.scale();
                    Dimension::Ordered {
                        order,
                        numbers,
                        total,
                    }
                }
                Domain::Hierarchy(map) => Dimension::Hierarchy {
                    map,
                    leaves: map.hierarchy().leaf_count().saturating_sub(1).max(1) as f64,
                    labels: (0..=map.max_level())
                        .map(|l| map.label_count(l))
                        .max()
                        .unwrap_or(0),
                },
            });
        }
        Self {
            input,
            models,
            control,
            relaxed: options.relaxed,
            preference: options.split_preference.clone(),
            dimensions,
            q: input.quasi_identifiers.len(),
            min_size,
            parallel_from: parallel_from.max(1),
            report_every: (input.rows as u64 / 512).max(1),
            settled: Mutex::new(0),
        }
    }

    /// The row-major key copy: `keys[r * q + j]` is the rank (ordered) or column code (hierarchy) of
    /// quasi-identifier `j` of record `r`; filled in blocks of records on the caller's pool.
    fn keys(&self) -> Result<Vec<u32>, CoreError> {
        const BLOCK: usize = 1 << 14;
        let input = self.input;
        let q = self.q;
        let mut keys = vec![0u32; input.rows * q];
        if q == 0 {
            return Ok(keys);
        }
        keys.par_chunks_mut(BLOCK * q)
            .enumerate()
            .for_each(|(b, chunk)| {
                for (i, row) in chunk.chunks_exact_mut(q).enumerate() {
                    let r = b * BLOCK + i;
                    for ((key, attribute), dimension) in row
                        .iter_mut()
                        .zip(&input.quasi_identifiers)
                        .zip(&self.dimensions)
                    {
                        let code = attribute.codes[r];
                        *key = match dimension {
                            Dimension::Ordered { order, .. } => order.rank(code),
                            Dimension::Hierarchy { .. } => code,
                        };
                    }
                }
            });
        if self.control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        Ok(keys)
    }

    /// Adds `records` to the settled ones and reports the count.
    fn progress(&self, records: u64) {
        let mut settled = self
            .settled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *settled += records;
        self.control.report(Progress {
            phase: Phase::Partitioning,
            done: *settled,
            total: self.input.rows as u64,
        });
    }
}

/// A partition's share of the working arrays: its row ids, their row-major keys and scratch of the same
/// sizes; `offset` is the position of its first row in the whole table's arrays.
struct Block<'b> {
    offset: usize,
    rows: &'b mut [u32],
    keys: &'b mut [u32],
    scratch: &'b mut [u32],
    scratch_keys: &'b mut [u32],
}

impl<'b> Block<'b> {
    /// The parts of the block cut at the (ascending, block-relative) positions `cuts`.
    fn split(self, cuts: &[usize], q: usize) -> Vec<Block<'b>> {
        let mut parts = Vec::with_capacity(cuts.len() + 1);
        let Block {
            mut offset,
            mut rows,
            mut keys,
            mut scratch,
            mut scratch_keys,
        } = self;
        let mut at = 0;
        for &cut in cuts {
            let len = cut - at;
            let (r, rest_r) = rows.split_at_mut(len);
            let (k, rest_k) = keys.split_at_mut(len * q);
            let (s, rest_s) = scratch.split_at_mut(len);
            let (sk, rest_sk) = scratch_keys.split_at_mut(len * q);
            parts.push(Block {
                offset,
                rows: r,
                keys: k,
                scratch: s,
                scratch_keys: sk,
            });
            (rows, keys, scratch, scratch_keys) = (rest_r, rest_k, rest_s, rest_sk);
            offset += len;
            at = cut;
        }
        parts.push(Block {
            offset,
            rows,
            keys,
            scratch,
            scratch_keys,
        });
        parts
    }
}

/// A group found: its first position in the partitioned rows, its size and depth.
#[derive(Debug, Clone, Copy)]
struct Leaf {
    start: usize,
    len: usize,
    depth: u32,
}

/// One thread's share of a run: scratch buffers, a checker, the groups it settled and its counters.
struct Worker<'w, 'p> {
    plan: &'w Plan<'p>,
    checker: GroupChecker<'p>,
    /// `counts[j]`: scratch indexed by label code (any level) of hierarchical quasi-identifier `j`.
    counts: Vec<Vec<u32>>,
    histogram: Vec<u32>,
    touched: Vec<u32>,
    extents: Vec<Extent>,
    order: Vec<(f64, usize)>,
    cuts: Vec<usize>,
    splits: u64,
    rejected_cuts: u64,
    leaves: Vec<Leaf>,
    /// Records settled since the last progress report.
    pending: u64,
    /// Counts the records whose sides are checked; polls the caller's control between checks.
    pace: Pace<'p>,
    /// Set once the control asked to stop: every later cut is rejected and the run returns
    /// [`CoreError::Cancelled`].
    cancelled: bool,
}

impl<'w, 'p> Worker<'w, 'p> {
    fn new(plan: &'w Plan<'p>, checker: GroupChecker<'p>) -> Self {
        let counts = plan
            .dimensions
            .iter()
            .map(|d| match d {
                Dimension::Hierarchy { labels, .. } => vec![0; *labels],
                Dimension::Ordered { .. } => Vec::new(),
            })
            .collect();
        Self {
            plan,
            checker,
            counts,
            histogram: Vec::new(),
            touched: Vec::new(),
            extents: Vec::with_capacity(plan.q),
            order: Vec::with_capacity(plan.q),
            cuts: Vec::new(),
            splits: 0,
            rejected_cuts: 0,
            leaves: Vec::new(),
            pending: 0,
            pace: Pace::new(plan.control),
            cancelled: false,
        }
    }

    /// A fresh worker of the same run, for another thread.
    fn fork(&self) -> Self {
        Self::new(
            self.plan,
            GroupChecker::new(self.plan.input, self.plan.models),
        )
    }

    /// Partitions `block` (a partition at `depth`) completely. Parts of large partitions are
    /// partitioned on the pool by forked workers, whose groups and counters this worker takes over.
    fn partition(&mut self, mut block: Block<'_>, depth: u32) {
        let n = block.rows.len();
        if n < self.plan.parallel_from
            || depth >= PARALLEL_DEPTH
            || rayon::current_num_threads() < 2
        {
            self.partition_sequentially(block, depth);
            return;
        }
        if self.cancelled || self.plan.control.is_cancelled() {
            self.cancelled = true;
            return;
        }
        if !self.cut(&mut block, 0, n) {
            self.settle(block.offset, n, depth);
            return;
        }
        let cuts = std::mem::take(&mut self.cuts);
        let parts = block.split(&cuts, self.plan.q);
        self.cuts = cuts;
        let forks: Vec<Worker<'w, 'p>> = parts
            .into_par_iter()
            .map(|part| {
                let mut worker = self.fork();
                worker.partition(part, depth + 1);
                worker.flush();
                worker
            })
            .collect();
        for fork in forks {
            self.leaves.extend(fork.leaves);
            self.splits += fork.splits;
            self.rejected_cuts += fork.rejected_cuts;
            self.cancelled |= fork.cancelled;
        }
    }

    /// Partitions `block` on this thread: an explicit stack, the left (first) part of a cut first.
    fn partition_sequentially(&mut self, mut block: Block<'_>, depth: u32) {
        let mut stack: Vec<(usize, usize, u32)> = vec![(0, block.rows.len(), depth)];
        while let Some((start, end, depth)) = stack.pop() {
            if self.cancelled || self.plan.control.is_cancelled() {
                self.cancelled = true;
                return;
            }
            if self.cut(&mut block, start, end) {
                // Parts are pushed last-first so the first part is finished first.
                let mut bounds_end = end;
                for &c in self.cuts.iter().rev() {
                    stack.push((c, bounds_end, depth + 1));
                    bounds_end = c;
                }
                stack.push((start, bounds_end, depth + 1));
            } else {
                self.settle(block.offset + start, end - start, depth);
            }
        }
    }

    /// Cuts `rows[start..end]` of `block` on the first candidate quasi-identifier with an allowable cut;
    /// on success `cuts` holds the inner boundaries (block-relative) and the rows are arranged part by
    /// part. False when no cut is allowable (or the run was cancelled).
    fn cut(&mut self, block: &mut Block<'_>, start: usize, end: usize) -> bool {
        self.measure(block, start, end);
        for j in self.candidates() {
            if self.try_cut(block, start, end, j) {
                self.splits += 1;
                return true;
            }
        }
        false
    }

    /// Computes the extent of `rows[start..end]` on every quasi-identifier.
    fn measure(&mut self, block: &Block<'_>, start: usize, end: usize) {
        let q = self.plan.q;
        let dimensions = &self.plan.dimensions;
        self.extents.clear();
        for (j, dimension) in dimensions.iter().enumerate() {
            let key = block.keys[start * q + j];
            self.extents.push(match dimension {
                Dimension::Ordered { .. } => Extent::Range {
                    low: key,
                    high: key,
                },
                Dimension::Hierarchy { .. } => Extent::Node {
                    level: 0,
                    anchor: key,
                },
            });
        }
        for row in block.keys[(start + 1) * q..end * q].chunks_exact(q) {
            for ((extent, dimension), &key) in self.extents.iter_mut().zip(dimensions).zip(row) {
                match (extent, dimension) {
                    (Extent::Range { low, high }, _) => {
                        *low = (*low).min(key);
                        *high = (*high).max(key);
                    }
                    (Extent::Node { level, anchor }, Dimension::Hierarchy { map, .. }) => {
                        while *level < map.max_level()
                            && map.codes(*level)[key as usize]
                                != map.codes(*level)[*anchor as usize]
                        {
                            *level += 1;
                        }
                    }
                    (Extent::Node { .. }, Dimension::Ordered { .. }) => {}
                }
            }
        }
    }

    /// The normalized extent of the current partition on quasi-identifier `j` (0 when it cannot be cut).
    fn width(&self, j: usize) -> f64 {
        match (self.extents[j], &self.plan.dimensions[j]) {
            (Extent::Range { low, high }, Dimension::Ordered { numbers, total, .. }) => {
                if low == high {
                    0.0
                } else if let Some(numbers) = numbers {
                    (numbers[high as usize] - numbers[low as usize]) / total
                } else {
                    f64::from(high - low) / total
                }
            }
            (Extent::Node { level, anchor }, Dimension::Hierarchy { map, leaves, .. }) => {
                if level == 0 {
                    0.0
                } else {
                    let label = map.codes(level)[anchor as usize];
                    (map.hierarchy().leaves_under(level, label) - 1) as f64 / leaves
                }
            }
            _ => 0.0,
        }
    }

    /// The quasi-identifiers to try, in order: preferred ones first, then by decreasing extent.
    fn candidates(&mut self) -> Vec<usize> {
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for j in 0..self.plan.q {
            let w = self.width(j);
            if w > 0.0 {
                order.push((w, j));
            }
        }
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let preference = &self.plan.preference;
        let mut out: Vec<usize> = Vec::with_capacity(order.len());
        for &j in preference {
            if order.iter().any(|&(_, i)| i == j) {
                out.push(j);
            }
        }
        for &(_, j) in &order {
            if !preference.contains(&j) {
                out.push(j);
            }
        }
        self.order = order;
        out
    }

    /// Tries to cut `rows[start..end]` on quasi-identifier `j`; on success `cuts` holds the inner
    /// boundaries (block-relative) and the rows are arranged part by part. Once the run is cancelled
    /// every cut fails at once.
    fn try_cut(&mut self, block: &mut Block<'_>, start: usize, end: usize, j: usize) -> bool {
        self.cuts.clear();
        // a cut scans and reorders the partition before its sides are checked
        if self.cancelled || self.pace.step(end - start).is_err() {
            self.cancelled = true;
            return false;
        }
        match self.extents[j] {
            Extent::Range { low, high } => self.cut_ordered(block, start, end, j, (low, high)),
            Extent::Node { level, .. } => self.cut_hierarchy(block, start, end, j, level),
        }
    }

    /// Whether the part `rows[start..end]` satisfies every model; false once the run is cancelled.
    fn allowable(&mut self, block: &Block<'_>, start: usize, end: usize) -> bool {
        if self.cancelled || self.pace.step(end - start).is_err() {
            self.cancelled = true;
            return false;
        }
        end - start >= self.plan.min_size && self.checker.is_private(&block.rows[start..end])
    }

    /// Cuts on ordered attribute `j` (ranks `low < high` in the partition) at the median, strict or
    /// relaxed.
    fn cut_ordered(
        &mut self,
        block: &mut Block<'_>,
        start: usize,
        end: usize,
        j: usize,
        (low, high): (u32, u32),
    ) -> bool {
        let q = self.plan.q;
        let relaxed = self.plan.relaxed;
        let min_size = self.plan.min_size;
        let n = end - start;
        let target = if relaxed { n / 2 - 1 } else { (n - 1) / 2 };
        let (value, below, at_most) = self.nth_rank(block, start, end, j, low, high, target);
        // `below` records rank under `value`, `at_most` at or under it.
        let keys = &mut *block.keys;
        let (value, left) = if relaxed {
            (value, n / 2)
        } else if at_most == n {
            let lower = (start..end)
                .map(|i| keys[i * q + j])
                .filter(|&k| k < value)
                .max()
                .unwrap_or(low);
            let left = (start..end).filter(|&i| keys[i * q + j] <= lower).count();
            (lower, left)
        } else {
            (value, at_most)
        };
        if left == 0 || left == n || left < min_size || n - left < min_size {
            self.rejected_cuts += 1;
            return false;
        }
        let (rows, scratch, scratch_keys) = (
            &mut *block.rows,
            &mut *block.scratch,
            &mut *block.scratch_keys,
        );
        // Relaxed: of the records at the median rank, those with the lowest record indices up to
        // `last_tie` go left.
        let last_tie = if relaxed {
            let mut equal = 0;
            for i in start..end {
                if keys[i * q + j] == value {
                    scratch[equal] = rows[i];
                    equal += 1;
                }
            }
            let (_, &mut last, _) = scratch[..equal].select_nth_unstable(left - below - 1);
            last
        } else {
            u32::MAX
        };
        // Stable partition: left records compacted in place, right records through the scratch buffers.
        let mut write = start;
        let mut spilled = 0;
        for i in start..end {
            let r = rows[i];
            let key = keys[i * q + j];
            let goes_left = key < value || (key == value && r <= last_tie);
            if goes_left {
                if write != i {
                    rows[write] = r;
                    keys.copy_within(i * q..i * q + q, write * q);
                }
                write += 1;
            } else {
                scratch[spilled] = r;
                scratch_keys[spilled * q..spilled * q + q].copy_from_slice(&keys[i * q..i * q + q]);
                spilled += 1;
            }
        }
        rows[write..end].copy_from_slice(&scratch[..spilled]);
        keys[write * q..end * q].copy_from_slice(&scratch_keys[..spilled * q]);
        let mid = start + left;
        if self.allowable(block, start, mid) && self.allowable(block, mid, end) {
            self.cuts.push(mid);
            true
        } else {
            self.rejected_cuts += 1;
            false
        }
    }

    /// The rank of the `target`-th record (0-based, by rank) of `rows[start..end]` on ordered attribute
    /// `j`, with the number of records ranked below it and at or below it.
    #[allow(clippy::too_many_arguments)]
    fn nth_rank(
        &mut self,
        block: &mut Block<'_>,
        start: usize,
        end: usize,
        j: usize,
        low: u32,
        high: u32,
        target: usize,
    ) -> (u32, usize, usize) {
        let q = self.plan.q;
        let n = end - start;
        let span = (high - low) as usize + 1;
        if span <= n.max(64) {
            self.histogram.clear();
            self.histogram.resize(span, 0);
            for i in start..end {
                self.histogram[(block.keys[i * q + j] - low) as usize] += 1;
            }
            let mut below = 0usize;
            for (offset, &count) in self.histogram.iter().enumerate() {
                let at_most = below + count as usize;
                if at_most > target {
                    return (low + offset as u32, below, at_most);
                }
                below = at_most;
            }
            (high, n, n)
        } else {
            let ranks = &mut block.scratch[..n];
            for (slot, i) in ranks.iter_mut().zip(start..end) {
                *slot = block.keys[i * q + j];
            }
            let (_, &mut value, _) = ranks.select_nth_unstable(target);
            let below = ranks.iter().filter(|&&k| k < value).count();
            let at_most = ranks.iter().filter(|&&k| k <= value).count();
            (value, below, at_most)
        }
    }

    /// Cuts on hierarchical attribute `j` whose lowest common ancestor is at `level` (> 0): the
    /// multiway cut into children, else the most balanced allowable binary grouping of the children.
    fn cut_hierarchy(
        &mut self,
        block: &mut Block<'_>,
        start: usize,
        end: usize,
        j: usize,
        level: usize,
    ) -> bool {
        let q = self.plan.q;
        let min = self.plan.min_size;
        let n = end - start;
        let Dimension::Hierarchy { map, .. } = &self.plan.dimensions[j] else {
            return false;
        };
        let counts = &mut self.counts[j];
        let child_of = map.codes(level - 1);
        self.touched.clear();
        for i in start..end {
            let child = child_of[block.keys[i * q + j] as usize];
            if counts[child as usize] == 0 {
                self.touched.push(child);
            }
            counts[child as usize] += 1;
        }
        self.touched.sort_unstable();
        // Part boundaries (relative), children in label-code order.
        let mut offsets: Vec<usize> = Vec::with_capacity(self.touched.len() + 1);
        let mut sum = 0usize;
        offsets.push(0);
        for &child in &self.touched {
            let count = counts[child as usize] as usize;
            counts[child as usize] = sum as u32;
            sum += count;
            offsets.push(sum);
        }
        let parts = offsets.len() - 1;
        let multiway_fits = offsets.windows(2).all(|w| w[1] - w[0] >= min);
        let binary_fits = parts > 2 && offsets[1..parts].iter().any(|&o| o >= min && n - o >= min);
        if parts < 2 || !(multiway_fits || binary_fits) {
            // No part can be large enough: skip the reordering.
            for &child in &self.touched {
                counts[child as usize] = 0;
            }
            self.rejected_cuts += u64::from(parts >= 2);
            return false;
        }
        // Stable counting sort of the rows by child through the scratch buffer.
        for i in start..end {
            let child = child_of[block.keys[i * q + j] as usize] as usize;
            let to = counts[child] as usize;
            block.scratch[to] = block.rows[i];
            block.scratch_keys[to * q..to * q + q].copy_from_slice(&block.keys[i * q..i * q + q]);
            counts[child] += 1;
        }
        for &child in &self.touched {
            counts[child as usize] = 0;
        }
        block.rows[start..end].copy_from_slice(&block.scratch[..n]);
        block.keys[start * q..end * q].copy_from_slice(&block.scratch_keys[..n * q]);
        let multiway = multiway_fits
            && (0..parts)
                .all(|p| self.allowable(block, start + offsets[p], start + offsets[p + 1]));
        if multiway {
            self.cuts
                .extend(offsets[1..parts].iter().map(|&o| start + o));
            return true;
        }
        self.rejected_cuts += 1;
        if parts == 2 {
            return false;
        }
        let mut prefixes: Vec<usize> = (1..parts).collect();
        prefixes.sort_by_key(|&p| ((2 * offsets[p]).abs_diff(n), p));
        for p in prefixes {
            let mid = start + offsets[p];
            if mid - start < min || end - mid < min {
                continue;
            }
            if self.allowable(block, start, mid) && self.allowable(block, mid, end) {
                self.cuts.push(mid);
                return true;
            }
            self.rejected_cuts += 1;
        }
        false
    }

    /// Makes the `len` rows from position `start` of the whole table a group.
    fn settle(&mut self, start: usize, len: usize, depth: u32) {
        self.leaves.push(Leaf { start, len, depth });
        self.pending += len as u64;
        if self.pending >= self.plan.report_every {
            self.flush();
        }
    }

    /// Reports the records settled since the last report.
    fn flush(&mut self) {
        if self.pending > 0 {
            self.plan.progress(std::mem::take(&mut self.pending));
        }
    }
}

#[cfg(test)]
#[path = "mondrian_tests.rs"]
pub(super) mod tests;
