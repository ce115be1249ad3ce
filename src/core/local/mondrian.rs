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
//! - **Order of work.** An explicit stack (no recursion); the left (first) part of a cut is finished
//!   first, so group ids grow from left to right. Same input, same output.
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

use super::{Domain, GroupChecker, LocalInput, Recoding};
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
    let q = input.quasi_identifiers.len();
    validate(input, models, options)?;
    let mut checker = GroupChecker::new(input, models);
    let all: Vec<u32> = (0..input.rows as u32).collect();
    if control.is_cancelled() {
        return Err(CoreError::Cancelled);
    }
    if input.rows > 0 && !checker.is_private(&all) {
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
    let mut state = Partitioner::new(input, options, checker, all, control)?;
    let total = input.rows as u64;
    let mut stack: Vec<(usize, usize, u32)> = Vec::new();
    if input.rows > 0 {
        stack.push((0, input.rows, 0));
    }
    let mut done = 0u64;
    while let Some((start, end, depth)) = stack.pop() {
        if control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        control.report(Progress {
            phase: Phase::Partitioning,
            done,
            total,
        });
        state.measure(start, end);
        let mut cut = false;
        for j in state.candidates(q) {
            if state.try_cut(start, end, j) {
                cut = true;
                break;
            }
        }
        if state.cancelled {
            return Err(CoreError::Cancelled);
        }
        if cut {
            state.report.splits += 1;
            // Parts are pushed last-first so the first part is finished first.
            let cuts = &state.cuts;
            let mut bounds_end = end;
            for &c in cuts.iter().rev() {
                stack.push((c, bounds_end, depth + 1));
                bounds_end = c;
            }
            stack.push((start, bounds_end, depth + 1));
        } else {
            state.settle(start, end, depth);
            done += (end - start) as u64;
        }
    }
    if control.is_cancelled() {
        return Err(CoreError::Cancelled);
    }
    control.report(Progress {
        phase: Phase::Partitioning,
        done,
        total,
    });
    let Partitioner {
        group_of,
        groups,
        mut report,
        ..
    } = state;
    report.groups = groups as u64;
    if groups == 0 {
        report.smallest_group = 0;
    }
    Ok(Mondrian {
        recoding: Recoding::from_partition(input, group_of, groups),
        report,
    })
}

/// Checks the options and the table size against the models.
fn validate(
    input: &LocalInput<'_>,
    models: &[Box<dyn PrivacyModel>],
    options: &MondrianOptions,
) -> Result<(), CoreError> {
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
        numbers: Option<Vec<f64>>,
        total: f64,
    },
    /// Children along a hierarchy; `counts` is scratch indexed by label code (any level).
    Hierarchy {
        map: &'a GeneralizationMap,
        leaves: f64,
        counts: Vec<u32>,
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

/// The working state: row ids partitioned in place, a row-major copy of the keys, scratch buffers.
struct Partitioner<'a> {
    relaxed: bool,
    preference: Vec<usize>,
    dimensions: Vec<Dimension<'a>>,
    q: usize,
    /// `keys[i * q + j]`: rank (ordered) or column code (hierarchy) of quasi-identifier `j` of the record
    /// at position `i` of `rows`; moved with the row ids, so every scan of a partition is sequential.
    keys: Vec<u32>,
    rows: Vec<u32>,
    scratch: Vec<u32>,
    scratch_keys: Vec<u32>,
    histogram: Vec<u32>,
    touched: Vec<u32>,
    extents: Vec<Extent>,
    order: Vec<(f64, usize)>,
    cuts: Vec<usize>,
    checker: GroupChecker<'a>,
    min_size: usize,
    group_of: Vec<u32>,
    groups: usize,
    report: MondrianReport,
    /// Counts the records whose sides are checked; polls the caller's control between checks.
    pace: Pace<'a>,
    /// Set once the control asked to stop: every later cut is rejected and the run returns
    /// [`CoreError::Cancelled`] after the current partition.
    cancelled: bool,
}

impl<'a> Partitioner<'a> {
    fn new(
        input: &LocalInput<'a>,
        options: &MondrianOptions,
        checker: GroupChecker<'a>,
        rows: Vec<u32>,
        control: &'a dyn Control,
    ) -> Result<Self, CoreError> {
        let q = input.quasi_identifiers.len();
        let n = input.rows;
        let mut keys = vec![0u32; n * q];
        let mut dimensions = Vec::with_capacity(q);
        for (j, attribute) in input.quasi_identifiers.iter().enumerate() {
            // one column of a large table takes a while to copy
            if control.is_cancelled() {
                return Err(CoreError::Cancelled);
            }
            match attribute.domain {
                Domain::Ordered(order) => {
                    for (r, &code) in attribute.codes.iter().enumerate().take(n) {
                        keys[r * q + j] = order.rank(code);
                    }
                    let (numbers, total) = order.scale();
                    dimensions.push(Dimension::Ordered { numbers, total });
                }
                Domain::Hierarchy(map) => {
                    for (r, &code) in attribute.codes.iter().enumerate().take(n) {
                        keys[r * q + j] = code;
                    }
                    let labels = (0..=map.max_level())
                        .map(|l| map.label_count(l))
                        .max()
                        .unwrap_or(0);
                    let leaves = map.hierarchy().leaf_count().saturating_sub(1).max(1) as f64;
                    dimensions.push(Dimension::Hierarchy {
                        map,
                        leaves,
                        counts: vec![0; labels],
                    });
                }
            }
        }
        let min_size = checker.min_group_size().min(usize::MAX as u64) as usize;
        Ok(Self {
            relaxed: options.relaxed,
            preference: options.split_preference.clone(),
            dimensions,
            q,
            keys,
            rows,
            scratch: vec![0; n],
            scratch_keys: vec![0; n * q],
            histogram: Vec::new(),
            touched: Vec::new(),
            extents: Vec::with_capacity(q),
            order: Vec::with_capacity(q),
            cuts: Vec::new(),
            checker,
            min_size,
            group_of: vec![0; n],
            groups: 0,
            report: MondrianReport {
                relaxed: options.relaxed,
                groups: 0,
                splits: 0,
                rejected_cuts: 0,
                max_depth: 0,
                smallest_group: u64::MAX,
                largest_group: 0,
            },
            pace: Pace::new(control),
            cancelled: false,
        })
    }

    /// Computes the extent of `rows[start..end]` on every quasi-identifier.
    fn measure(&mut self, start: usize, end: usize) {
        let q = self.q;
        let first = start;
        self.extents.clear();
        for (j, dimension) in self.dimensions.iter().enumerate() {
            let key = self.keys[first * q + j];
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
        for row in self.keys[(start + 1) * q..end * q].chunks_exact(q) {
            for ((extent, dimension), &key) in
                self.extents.iter_mut().zip(&self.dimensions).zip(row)
            {
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
        match (self.extents[j], &self.dimensions[j]) {
            (Extent::Range { low, high }, Dimension::Ordered { numbers, total }) => {
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
    fn candidates(&mut self, q: usize) -> Vec<usize> {
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for j in 0..q {
            let w = self.width(j);
            if w > 0.0 {
                order.push((w, j));
            }
        }
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out: Vec<usize> = Vec::with_capacity(order.len());
        for &j in &self.preference {
            if order.iter().any(|&(_, i)| i == j) {
                out.push(j);
            }
        }
        for &(_, j) in &order {
            if !self.preference.contains(&j) {
                out.push(j);
            }
        }
        self.order = order;
        out
    }

    /// Tries to cut `rows[start..end]` on quasi-identifier `j`; on success `cuts` holds the inner
    /// boundaries (absolute positions) and the rows are arranged part by part. Once the run is cancelled
    /// every cut fails at once.
    fn try_cut(&mut self, start: usize, end: usize, j: usize) -> bool {
        self.cuts.clear();
        // a cut scans and reorders the partition before its sides are checked
        if self.cancelled || self.pace.step(end - start).is_err() {
            self.cancelled = true;
            return false;
        }
        match self.extents[j] {
            Extent::Range { low, high } => self.cut_ordered(start, end, j, low, high),
            Extent::Node { level, .. } => self.cut_hierarchy(start, end, j, level),
        }
    }

    /// Whether the part `rows[start..end]` satisfies every model; false once the run is cancelled.
    fn allowable(&mut self, start: usize, end: usize) -> bool {
        if self.cancelled || self.pace.step(end - start).is_err() {
            self.cancelled = true;
            return false;
        }
        end - start >= self.min_size && self.checker.is_private(&self.rows[start..end])
    }

    /// Cuts on ordered attribute `j` (ranks `low < high` in the partition) at the median, strict or
    /// relaxed.
    fn cut_ordered(&mut self, start: usize, end: usize, j: usize, low: u32, high: u32) -> bool {
        let q = self.q;
        let n = end - start;
        let target = if self.relaxed { n / 2 - 1 } else { (n - 1) / 2 };
        let (value, below, at_most) = self.nth_rank(start, end, j, low, high, target);
        // `below` records rank under `value`, `at_most` at or under it.
        let (value, left) = if self.relaxed {
            (value, n / 2)
        } else if at_most == n {
            let lower = (start..end)
                .map(|i| self.keys[i * q + j])
                .filter(|&k| k < value)
                .max()
                .unwrap_or(low);
            let left = (start..end)
                .filter(|&i| self.keys[i * q + j] <= lower)
                .count();
            (lower, left)
        } else {
            (value, at_most)
        };
        if left == 0 || left == n || left < self.min_size || n - left < self.min_size {
            self.report.rejected_cuts += 1;
            return false;
        }
        // Relaxed: of the records at the median rank, those with the lowest record indices up to
        // `last_tie` go left.
        let last_tie = if self.relaxed {
            let mut equal = 0;
            for i in start..end {
                if self.keys[i * q + j] == value {
                    self.scratch[equal] = self.rows[i];
                    equal += 1;
                }
            }
            let (_, &mut last, _) = self.scratch[..equal].select_nth_unstable(left - below - 1);
            last
        } else {
            u32::MAX
        };
        // Stable partition: left records compacted in place, right records through the scratch buffers.
        let mut write = start;
        let mut spilled = 0;
        for i in start..end {
            let r = self.rows[i];
            let key = self.keys[i * q + j];
            let goes_left = key < value || (key == value && r <= last_tie);
            if goes_left {
                if write != i {
                    self.rows[write] = r;
                    self.keys.copy_within(i * q..i * q + q, write * q);
                }
                write += 1;
            } else {
                self.scratch[spilled] = r;
                self.scratch_keys[spilled * q..spilled * q + q]
                    .copy_from_slice(&self.keys[i * q..i * q + q]);
                spilled += 1;
            }
        }
        self.rows[write..end].copy_from_slice(&self.scratch[..spilled]);
        self.keys[write * q..end * q].copy_from_slice(&self.scratch_keys[..spilled * q]);
        let mid = start + left;
        if self.allowable(start, mid) && self.allowable(mid, end) {
            self.cuts.push(mid);
            true
        } else {
            self.report.rejected_cuts += 1;
            false
        }
    }

    /// The rank of the `target`-th record (0-based, by rank) of `rows[start..end]` on ordered attribute
    /// `j`, with the number of records ranked below it and at or below it.
    fn nth_rank(
        &mut self,
        start: usize,
        end: usize,
        j: usize,
        low: u32,
        high: u32,
        target: usize,
    ) -> (u32, usize, usize) {
        let q = self.q;
        let n = end - start;
        let span = (high - low) as usize + 1;
        if span <= n.max(64) {
            self.histogram.clear();
            self.histogram.resize(span, 0);
            for i in start..end {
                self.histogram[(self.keys[i * q + j] - low) as usize] += 1;
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
            let ranks = &mut self.scratch[..n];
            for (slot, i) in ranks.iter_mut().zip(start..end) {
                *slot = self.keys[i * q + j];
            }
            let (_, &mut value, _) = ranks.select_nth_unstable(target);
            let below = ranks.iter().filter(|&&k| k < value).count();
            let at_most = ranks.iter().filter(|&&k| k <= value).count();
            (value, below, at_most)
        }
    }

    /// Cuts on hierarchical attribute `j` whose lowest common ancestor is at `level` (> 0): the
    /// multiway cut into children, else the most balanced allowable binary grouping of the children.
    fn cut_hierarchy(&mut self, start: usize, end: usize, j: usize, level: usize) -> bool {
        let q = self.q;
        let n = end - start;
        let Dimension::Hierarchy { map, counts, .. } = &mut self.dimensions[j] else {
            return false;
        };
        let map: &'a GeneralizationMap = map;
        let child_of = map.codes(level - 1);
        self.touched.clear();
        for i in start..end {
            let child = child_of[self.keys[i * q + j] as usize];
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
        let min = self.min_size;
        let multiway_fits = offsets.windows(2).all(|w| w[1] - w[0] >= min);
        let binary_fits = parts > 2 && offsets[1..parts].iter().any(|&o| o >= min && n - o >= min);
        if parts < 2 || !(multiway_fits || binary_fits) {
            // No part can be large enough: skip the reordering.
            for &child in &self.touched {
                counts[child as usize] = 0;
            }
            self.report.rejected_cuts += u64::from(parts >= 2);
            return false;
        }
        // Stable counting sort of the rows by child through the scratch buffer.
        for i in start..end {
            let child = child_of[self.keys[i * q + j] as usize] as usize;
            let to = counts[child] as usize;
            self.scratch[to] = self.rows[i];
            self.scratch_keys[to * q..to * q + q].copy_from_slice(&self.keys[i * q..i * q + q]);
            counts[child] += 1;
        }
        for &child in &self.touched {
            counts[child as usize] = 0;
        }
        self.rows[start..end].copy_from_slice(&self.scratch[..n]);
        self.keys[start * q..end * q].copy_from_slice(&self.scratch_keys[..n * q]);
        let multiway = multiway_fits
            && (0..parts).all(|p| self.allowable(start + offsets[p], start + offsets[p + 1]));
        if multiway {
            self.cuts
                .extend(offsets[1..parts].iter().map(|&o| start + o));
            return true;
        }
        self.report.rejected_cuts += 1;
        if parts == 2 {
            return false;
        }
        let mut prefixes: Vec<usize> = (1..parts).collect();
        prefixes.sort_by_key(|&p| ((2 * offsets[p]).abs_diff(n), p));
        for p in prefixes {
            let mid = start + offsets[p];
            if mid - start < self.min_size || end - mid < self.min_size {
                continue;
            }
            if self.allowable(start, mid) && self.allowable(mid, end) {
                self.cuts.push(mid);
                return true;
            }
            self.report.rejected_cuts += 1;
        }
        false
    }

    /// Makes `rows[start..end]` a group.
    fn settle(&mut self, start: usize, end: usize, depth: u32) {
        let g = self.groups as u32;
        for &r in &self.rows[start..end] {
            self.group_of[r as usize] = g;
        }
        self.groups += 1;
        let size = (end - start) as u64;
        let report = &mut self.report;
        report.max_depth = report.max_depth.max(depth);
        report.smallest_group = report.smallest_group.min(size);
        report.largest_group = report.largest_group.max(size);
    }
}

#[cfg(test)]
#[path = "mondrian_tests.rs"]
pub(super) mod tests;
