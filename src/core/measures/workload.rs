//! Query-workload error: how well the published table answers COUNT queries over random ranges of
//! quasi-identifier values (the query model of Hsu 2008, §2.5; note §1.5), as a mean relative error.
//!
//! A workload is `queries` seeded queries. Each picks `d` columns (`d` uniform in `1..=max_dimensions`,
//! capped at the number of quasi-identifiers; columns drawn without replacement) and, per column, a range
//! `[lo, hi]` of ranks over the column's sorted distinct values (two uniform ranks, ordered). The caller
//! supplies the ranks (numeric or lexicographic order is decided where the text is known).
//!
//! - True answer: the records whose original values fall in every range.
//! - Published answer: each record is spread uniformly over the original values its cell covers, so it
//!   contributes `Π_j |cell_j ∩ range_j| / |cell_j|` over the query's columns (the independence-corrected
//!   estimate of Def 2.5.6 with uniform weights). A suppressed record's cells are `*`, so it contributes
//!   `Π_j |range_j| / |domain_j|`, whether it is masked or removed from the output (the report gives the
//!   number of suppressed records).
//! - Relative error `|published − true| / max(true, 1)`, averaged over the queries.
//!
//! Cost: records are aggregated once into original and published classes. True answers: queries that
//! constrain the same columns share a prefix-sum cube over them ([`super::range_cube`]) when it is small
//! enough, else a query scans the original classes in range of its narrowest column (that column's class
//! order is cut into blocks, each copied once to consecutive memory and scanned there by every query whose
//! range meets it). Published answers cost `O(classes · d)` lookups plus `O(cells · log)` for the covered
//! fractions of the used cells; the queries driven by one column read the classes copied once in that
//! column's cell order, with each cell's rank span beside them.
//! Queries are independent and answered in parallel on the caller's rayon pool (the job's threads).

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde::Serialize;

use super::cells::CellColumn;
use super::classes::Classes;
use super::range_cube::{RangeCube, MAX_CELLS};
use crate::core::rng::SplitMix64;

/// Default number of queries.
pub const DEFAULT_QUERIES: u32 = 1000;
/// Default seed.
pub const DEFAULT_SEED: u64 = 1;
/// Default largest number of columns a query constrains.
pub const DEFAULT_MAX_DIMENSIONS: u32 = 3;

/// The workload's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryWorkload {
    /// Number of queries.
    pub queries: u32,
    /// Seed of the generator.
    pub seed: u64,
    /// Largest number of columns one query constrains (at least 1).
    pub max_dimensions: u32,
}

impl Default for QueryWorkload {
    fn default() -> Self {
        Self {
            queries: DEFAULT_QUERIES,
            seed: DEFAULT_SEED,
            max_dimensions: DEFAULT_MAX_DIMENSIONS,
        }
    }
}

/// The workload's result, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadError {
    /// Number of queries.
    pub queries: u32,
    /// Seed of the generator.
    pub seed: u64,
    /// Largest number of columns one query constrains.
    pub max_dimensions: u32,
    /// Mean of `|published − true| / max(true, 1)` over the queries.
    pub mean_relative_error: f64,
}

/// True answers by query number.
type Answers = Vec<(usize, u64)>;

/// Cubes built at the same time (each at most [`MAX_CELLS`] counters).
const CUBES_AT_ONCE: usize = 4;

/// One query: per constrained column, an inclusive rank range.
struct Query {
    ranges: Vec<(usize, u32, u32)>,
}

fn draw(generator: &mut SplitMix64, domains: &[usize], max_dimensions: u32) -> Query {
    let q = domains.len();
    let most = (max_dimensions as usize).clamp(1, q);
    let d = 1 + generator.below(most as u64) as usize;
    let mut order: Vec<usize> = (0..q).collect();
    let mut ranges = Vec::with_capacity(d);
    for i in 0..d {
        let pick = i + generator.below((q - i) as u64) as usize;
        order.swap(i, pick);
        let j = order[i];
        let domain = domains[j].max(1) as u64;
        let (a, b) = (
            generator.below(domain) as u32,
            generator.below(domain) as u32,
        );
        ranges.push((j, a.min(b), a.max(b)));
    }
    Query { ranges }
}

/// Per rank of one column, the original classes and records at or below it, so that a range's classes
/// and records are differences (`O(domain)` memory, whatever the number of classes).
struct RankIndex {
    /// `starts[rank]`: the classes with a lower rank (`domain + 1` long).
    starts: Vec<usize>,
    /// `records[rank]`: the records of the classes with a lower rank (`domain + 1` long).
    records: Vec<u64>,
}

impl RankIndex {
    fn new(ranks: &[u32], q: usize, j: usize, domain: usize, sizes: &[u64]) -> Self {
        let mut starts = vec![0usize; domain + 1];
        let mut records = vec![0u64; domain + 1];
        for (o, &size) in sizes.iter().enumerate() {
            let rank = ranks[o * q + j] as usize;
            starts[rank + 1] += 1;
            records[rank + 1] += size;
        }
        for r in 0..domain {
            starts[r + 1] += starts[r];
            records[r + 1] += records[r];
        }
        Self { starts, records }
    }

    /// Positions, in the column's rank order of the classes, of the classes whose rank lies in `lo..=hi`.
    fn span(&self, lo: u32, hi: u32) -> std::ops::Range<usize> {
        self.starts[lo as usize]..self.starts[hi as usize + 1]
    }

    /// The class ids sorted by the column's rank (a counting sort), for the scans driven by this column.
    fn order(&self, ranks: &[u32], q: usize, j: usize) -> Vec<u32> {
        let mut next = self.starts.clone();
        let mut order = vec![0u32; self.starts.last().copied().unwrap_or(0)];
        for (o, row) in ranks.chunks_exact(q).enumerate() {
            let slot = &mut next[row[j] as usize];
            order[*slot] = o as u32;
            *slot += 1;
        }
        order
    }
}

/// The column whose range holds the fewest original classes (the one a scan is driven by).
fn driver(query: &Query, indexes: &[RankIndex]) -> Option<(usize, u32, u32)> {
    query
        .ranges
        .iter()
        .min_by_key(|&&(j, lo, hi)| {
            let span = indexes[j].span(lo, hi);
            span.end - span.start
        })
        .copied()
}

/// Classes per block of a driving column's order: the queries a column drives scan a block's rows
/// from one contiguous copy (a few hundred kilobytes per thread) instead of jumping through the table.
const SCAN_BLOCK: usize = 1 << 14;

/// How the true answers are computed: the largest cube, and the classes per block of a scan.
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_cells: usize,
    scan_block: usize,
}

/// The true answers of the multi-column queries `driven` by column `j` (query number and the span of
/// its range in `order`, the class ids sorted by the column's rank). The order is cut into blocks of
/// `block` classes; each block's ranks and sizes are copied once into a thread's buffer and every query
/// whose span meets the block scans its part there, checking its other columns. Blocks run in parallel
/// on the caller's rayon pool; a query's partial counts are integers, so the sums do not depend on it.
#[allow(clippy::too_many_arguments)]
fn scan_driven(
    j: usize,
    driven: &[(usize, std::ops::Range<usize>)],
    queries: &[Query],
    order: &[u32],
    ranks: &[u32],
    q: usize,
    sizes: &[u64],
    block: usize,
) -> Answers {
    // each query's ranges other than the driving column's (which every class of its span meets)
    let others: Vec<Vec<(usize, u32, u32)>> = driven
        .iter()
        .map(|(n, _)| {
            queries[*n]
                .ranges
                .iter()
                .copied()
                .filter(|&(c, _, _)| c != j)
                .collect()
        })
        .collect();
    let block = block.max(1);
    let blocks = order.len().div_ceil(block);
    let partials: Vec<Vec<(usize, u64)>> = (0..blocks)
        .into_par_iter()
        .map_init(
            || (Vec::<u32>::new(), Vec::<u64>::new()),
            |(rows, weights), b| {
                let at = b * block..((b + 1) * block).min(order.len());
                let meeting: Vec<usize> = (0..driven.len())
                    .filter(|&i| driven[i].1.start < at.end && at.start < driven[i].1.end)
                    .collect();
                if meeting.is_empty() {
                    return Vec::new();
                }
                rows.clear();
                weights.clear();
                for &o in &order[at.clone()] {
                    let o = o as usize;
                    rows.extend_from_slice(&ranks[o * q..(o + 1) * q]);
                    weights.push(sizes[o]);
                }
                meeting
                    .into_iter()
                    .map(|i| {
                        let span = &driven[i].1;
                        let from = span.start.max(at.start) - at.start;
                        let to = span.end.min(at.end) - at.start;
                        let ranges = &others[i];
                        let count = rows[from * q..to * q]
                            .chunks_exact(q)
                            .zip(&weights[from..to])
                            .filter(|(row, _)| {
                                ranges
                                    .iter()
                                    .all(|&(c, lo, hi)| (lo..=hi).contains(&row[c]))
                            })
                            .map(|(_, &w)| w)
                            .sum::<u64>();
                        (i, count)
                    })
                    .collect()
            },
        )
        .collect();
    let mut counts = vec![0u64; driven.len()];
    for (i, count) in partials.into_iter().flatten() {
        counts[i] += count;
    }
    driven.iter().map(|(n, _)| *n).zip(counts).collect()
}

/// The true answers of the queries no cube holds: a one-column query is a difference of prefix sums;
/// the others are grouped by the column whose range holds the fewest original classes and scanned
/// through that column's order ([`scan_driven`]), one driving column at a time (one order in memory).
fn scan_counts(
    scanned: &[usize],
    queries: &[Query],
    ranks: &[u32],
    q: usize,
    sizes: &[u64],
    indexes: &[RankIndex],
    block: usize,
) -> Answers {
    let mut answers = Answers::with_capacity(scanned.len());
    let mut driven: Vec<Vec<(usize, std::ops::Range<usize>)>> = vec![Vec::new(); q];
    for &n in scanned {
        let query = &queries[n];
        let Some((j, lo, hi)) = driver(query, indexes) else {
            answers.push((n, sizes.iter().sum()));
            continue;
        };
        if query.ranges.len() == 1 {
            let records = &indexes[j].records;
            answers.push((n, records[hi as usize + 1] - records[lo as usize]));
        } else {
            driven[j].push((n, indexes[j].span(lo, hi)));
        }
    }
    for (j, driven) in driven.iter().enumerate() {
        if !driven.is_empty() {
            let order = indexes[j].order(ranks, q, j);
            answers.extend(scan_driven(
                j, driven, queries, &order, ranks, q, sizes, block,
            ));
        }
    }
    answers
}

/// The true answer of every query. A prefix-sum cube over a set of columns answers every query that
/// constrains a subset of them (the other columns left whole), so the sets of two or more columns the
/// queries constrain are covered by a few cubes of at most `max_cells` cells: each uncovered set, largest
/// first, grows by the columns of smallest domain that still fit while the cube saves at least as much,
/// and covers every set inside it. A cube is built only when it costs less (one pass over the original
/// classes and one over its cells per dimension) than scanning its queries would (the classes in range
/// of each query's narrowest column); a query on a cube then costs at most `2^d` lookups. One-column
/// queries are differences of prefix sums; sets no cube can hold are scanned by [`scan_counts`]. The cubes are
/// built and their queries answered in parallel on the caller's rayon pool.
fn true_counts(
    queries: &[Query],
    ranks: &[u32],
    q: usize,
    sizes: &[u64],
    indexes: &[RankIndex],
    domains: &[usize],
    limits: Limits,
) -> Vec<u64> {
    let total: u64 = sizes.iter().sum();
    let fits = |columns: &[usize]| {
        let extents: Vec<usize> = columns.iter().map(|&j| domains[j]).collect();
        RangeCube::fits(&extents, total, limits.max_cells)
    };
    let mut sets: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (number, query) in queries.iter().enumerate() {
        let mut columns: Vec<usize> = query.ranges.iter().map(|r| r.0).collect();
        columns.sort_unstable();
        sets.entry(columns).or_default().push(number);
    }
    // the covering cubes, each with the query sets it answers; the rest are scanned
    let mut order: Vec<&Vec<usize>> = sets.keys().collect();
    order.sort_by_key(|columns| std::cmp::Reverse(columns.len()));
    let mut narrow: Vec<usize> = (0..q).collect();
    narrow.sort_by_key(|&j| domains[j]);
    let mut cubes: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    let mut covered: BTreeSet<&Vec<usize>> = BTreeSet::new();
    let mut scanned: Vec<usize> = Vec::new();
    // a query's scan visits the classes in range of its narrowest column; a cube costs one pass over the
    // classes and one over its cells per dimension
    let scan_cost: Vec<u128> = queries
        .iter()
        .map(|query| {
            driver(query, indexes).map_or(0, |(j, lo, hi)| {
                let span = indexes[j].span(lo, hi);
                (span.end - span.start) as u128
            })
        })
        .collect();
    let classes = sizes.len() as u128;
    // a set of two or more columns, not yet answered, inside the cube's columns
    let answerable = |cube: &[usize], other: &Vec<usize>, covered: &BTreeSet<&Vec<usize>>| {
        other.len() >= 2
            && !covered.contains(other)
            && other.iter().all(|j| cube.binary_search(j).is_ok())
    };
    let saving = |cube: &[usize], covered: &BTreeSet<&Vec<usize>>| -> i128 {
        let cells: u128 = cube.iter().map(|&j| domains[j].max(1) as u128).product();
        let scans: u128 = order
            .iter()
            .filter(|other| answerable(cube, other, covered))
            .flat_map(|other| &sets[*other])
            .map(|&n| scan_cost[n])
            .sum();
        scans as i128 - (classes + cells * cube.len() as u128) as i128
    };
    for &set in &order {
        if covered.contains(set) {
            continue;
        }
        if set.len() < 2 || !fits(set) || saving(set, &covered) <= 0 {
            covered.insert(set);
            scanned.extend(&sets[set]);
            continue;
        }
        // grow while a column still fits and the cube saves at least as much
        let mut cube = set.clone();
        let mut best = saving(&cube, &covered);
        for &j in &narrow {
            if cube.binary_search(&j).is_err() {
                let mut grown = cube.clone();
                grown.insert(grown.partition_point(|&c| c < j), j);
                if fits(&grown) {
                    let grown_saving = saving(&grown, &covered);
                    if grown_saving >= best {
                        cube = grown;
                        best = grown_saving;
                    }
                }
            }
        }
        let mut members = Vec::new();
        for &other in &order {
            if answerable(&cube, other, &covered) {
                covered.insert(other);
                members.extend(&sets[other]);
            }
        }
        cubes.push((cube, members));
    }
    let answer = |(columns, members): &(Vec<usize>, Vec<usize>)| -> Vec<(usize, u64)> {
        let extents: Vec<usize> = columns.iter().map(|&j| domains[j]).collect();
        let cube = RangeCube::new(
            &extents,
            sizes.iter().enumerate().map(|(o, &size)| {
                let row = &ranks[o * q..(o + 1) * q];
                let cell = RangeCube::cell_of(&extents, columns.iter().map(|&j| row[j] as usize));
                (cell, size)
            }),
        );
        members
            .iter()
            .map(|&n| {
                let mut lo = vec![0u32; columns.len()];
                let mut hi: Vec<u32> = extents.iter().map(|&e| e.max(1) as u32 - 1).collect();
                for &(j, l, h) in &queries[n].ranges {
                    let k = columns.partition_point(|&c| c < j);
                    lo[k] = l;
                    hi[k] = h;
                }
                (n, cube.count(&lo, &hi))
            })
            .collect()
    };
    // the cubes and the scans side by side; the cubes are built a few at a time, so that their memory
    // stays bounded whatever the number of threads
    let (mut answered, scans): (Answers, Answers) = rayon::join(
        || {
            cubes
                .chunks(CUBES_AT_ONCE)
                .flat_map(|chunk| chunk.par_iter().flat_map_iter(answer).collect::<Vec<_>>())
                .collect()
        },
        || {
            scan_counts(
                &scanned,
                queries,
                ranks,
                q,
                sizes,
                indexes,
                limits.scan_block,
            )
        },
    );
    answered.extend(scans);
    let mut truths = vec![0u64; queries.len()];
    for (number, truth) in answered {
        truths[number] = truth;
    }
    truths
}

/// Runs `workload` on the published `columns`; `ranks[j][code]` orders column j's values.
pub fn query_workload(
    columns: &[CellColumn<'_>],
    ranks: &[Vec<u32>],
    original: &Classes,
    published: &Classes,
    workload: &QueryWorkload,
) -> WorkloadError {
    let q = columns.len();
    let mut result = WorkloadError {
        queries: workload.queries,
        seed: workload.seed,
        max_dimensions: workload.max_dimensions,
        mean_relative_error: 0.0,
    };
    if q == 0 || original.is_empty() || workload.queries == 0 {
        return result;
    }
    // row-major ranks of the original classes and cells of the published classes
    // (sized up front: a flattening iterator has no size hint, and growing by doubling would hold
    // twice the table's classes for a moment)
    let mut original_ranks: Vec<u32> = Vec::with_capacity(original.len() * q);
    original_ranks.extend(
        original
            .representative
            .iter()
            .flat_map(|&r| (0..q).map(move |j| ranks[j][columns[j].codes[r as usize] as usize])),
    );
    let mut published_cells: Vec<u32> = Vec::with_capacity(published.len() * q);
    published_cells.extend(
        published
            .representative
            .iter()
            .flat_map(|&r| columns.iter().map(move |c| c.cell_of.get(r as usize))),
    );
    let domains: Vec<usize> = columns.iter().map(|c| c.domain).collect();
    let originals: Vec<RankIndex> = (0..q)
        .map(|j| RankIndex::new(&original_ranks, q, j, domains[j], &original.sizes))
        .collect();
    let publisheds: Vec<CellIndex> = columns
        .iter()
        .enumerate()
        .map(|(j, c)| CellIndex::new(c, &ranks[j], &published_cells, q, j))
        .collect();
    // the queries are drawn in order (the workload depends on the seed only), answered on the job's
    // rayon pool, and their errors summed in order (the same mean whatever the number of threads)
    let mut generator = SplitMix64(workload.seed);
    let queries: Vec<Query> = (0..workload.queries)
        .map(|_| draw(&mut generator, &domains, workload.max_dimensions))
        .collect();
    let truths = true_counts(
        &queries,
        &original_ranks,
        q,
        &original.sizes,
        &originals,
        &domains,
        Limits {
            max_cells: MAX_CELLS,
            scan_block: SCAN_BLOCK,
        },
    );
    let estimates = published_estimates(
        &queries,
        &publisheds,
        &published_cells,
        q,
        &published.sizes,
        &domains,
    );
    let errors: Vec<f64> = estimates
        .iter()
        .zip(&truths)
        .map(|(&estimate, &truth)| (estimate - truth as f64).abs() / (truth.max(1) as f64))
        .collect();
    let total_error: f64 = errors.iter().sum();
    result.mean_relative_error = total_error / workload.queries as f64;
    result
}

/// The published classes of one column by cell, and the cells by the ranks they cover.
struct CellIndex {
    /// Sorted ranks each used cell covers (empty for unused cells).
    cell_ranks: Vec<Vec<u32>>,
    /// Each cell's lowest and highest rank and number of ranks, side by side for the hot loop; a cell
    /// whose ranks have a gap is read from `cell_ranks` instead.
    spans: Vec<CellSpan>,
    /// `cells[cell_starts[r]..cell_starts[r + 1]]`: the used cells covering rank r.
    cell_starts: Vec<usize>,
    cells: Vec<u32>,
    /// `classes[class_starts[c]..class_starts[c + 1]]`: the published classes whose cell is c.
    class_starts: Vec<usize>,
    classes: Vec<u32>,
}

impl CellIndex {
    fn new(column: &CellColumn<'_>, ranks: &[u32], cells_of: &[u32], q: usize, j: usize) -> Self {
        let classes_count = cells_of.len() / q.max(1);
        let mut class_starts = vec![0usize; column.cells.len() + 1];
        for p in 0..classes_count {
            class_starts[cells_of[p * q + j] as usize + 1] += 1;
        }
        for c in 0..column.cells.len() {
            class_starts[c + 1] += class_starts[c];
        }
        let mut next = class_starts.clone();
        let mut classes = vec![0u32; classes_count];
        for p in 0..classes_count {
            let slot = &mut next[cells_of[p * q + j] as usize];
            classes[*slot] = p as u32;
            *slot += 1;
        }
        let cell_ranks: Vec<Vec<u32>> = column
            .cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if class_starts[c] == class_starts[c + 1] {
                    return Vec::new();
                }
                let mut r: Vec<u32> = cell.covers.iter().map(|&a| ranks[a as usize]).collect();
                r.sort_unstable();
                r
            })
            .collect();
        let spans = cell_ranks.iter().map(|r| CellSpan::of(r)).collect();
        let mut cell_starts = vec![0usize; column.domain + 1];
        for r in cell_ranks.iter().flatten() {
            cell_starts[*r as usize + 1] += 1;
        }
        for r in 0..column.domain {
            cell_starts[r + 1] += cell_starts[r];
        }
        let mut next = cell_starts.clone();
        let mut cells = vec![0u32; cell_starts[column.domain]];
        for (c, covered) in cell_ranks.iter().enumerate() {
            for &r in covered {
                let slot = &mut next[r as usize];
                cells[*slot] = c as u32;
                *slot += 1;
            }
        }
        Self {
            cell_ranks,
            spans,
            cell_starts,
            cells,
            class_starts,
            classes,
        }
    }

    /// The share of `cell`'s values whose rank lies in `lo..=hi`: an overlap of two intervals when the
    /// cell covers consecutive ranks (a range, a prefix, a hierarchy node in value order), else two
    /// binary searches in its sorted ranks.
    fn fraction(&self, cell: u32, lo: u32, hi: u32) -> f64 {
        let span = self.spans[cell as usize];
        if span.ranks == 0 {
            return 0.0;
        }
        let inside = if span.consecutive {
            (hi.min(span.last) + 1).saturating_sub(lo.max(span.first)) as usize
        } else {
            let r = &self.cell_ranks[cell as usize];
            r.partition_point(|&x| x <= hi) - r.partition_point(|&x| x < lo)
        };
        inside as f64 / span.ranks as f64
    }
}

/// One cell's ranks at a glance: lowest, highest, how many, and whether they follow one another.
#[derive(Debug, Clone, Copy)]
struct CellSpan {
    first: u32,
    last: u32,
    ranks: u32,
    consecutive: bool,
}

impl CellSpan {
    /// The span of a cell's sorted ranks (an unused cell has none).
    fn of(ranks: &[u32]) -> Self {
        Self {
            first: ranks.first().copied().unwrap_or(0),
            last: ranks.last().copied().unwrap_or(0),
            ranks: ranks.len() as u32,
            consecutive: ranks.windows(2).all(|w| w[1] == w[0] + 1),
        }
    }
}

/// The column that drives a query's published answer: the one with the narrowest range relative to
/// its domain.
fn published_driver(query: &Query, domains: &[usize]) -> Option<(usize, u32, u32)> {
    query
        .ranges
        .iter()
        .min_by(|a, b| {
            let width =
                |&(j, lo, hi): &(usize, u32, u32)| f64::from(hi - lo + 1) / domains[j] as f64;
            width(a).total_cmp(&width(b))
        })
        .copied()
}

/// The published classes in one column's cell order, their cells and sizes copied side by side, so
/// that the classes of one cell are read from consecutive memory.
struct DrivenClasses {
    /// `q` cells per class, in the order of the column's `CellIndex::classes`.
    cells: Vec<u32>,
    sizes: Vec<u64>,
}

impl DrivenClasses {
    fn new(index: &CellIndex, cells_of: &[u32], q: usize, sizes: &[u64]) -> Self {
        let mut cells = Vec::with_capacity(index.classes.len() * q);
        let mut ordered = Vec::with_capacity(index.classes.len());
        for &p in &index.classes {
            let p = p as usize;
            cells.extend_from_slice(&cells_of[p * q..(p + 1) * q]);
            ordered.push(sizes[p]);
        }
        Self {
            cells,
            sizes: ordered,
        }
    }
}

/// The published answer of every query. Queries are grouped by the column that drives them
/// ([`published_driver`]); each group reads one copy of the classes in that column's cell order
/// ([`DrivenClasses`], one column's copy in memory at a time) and its queries run in parallel on the
/// caller's rayon pool. Each answer sums in the same order whatever the grouping or threads.
fn published_estimates(
    queries: &[Query],
    indexes: &[CellIndex],
    cells_of: &[u32],
    q: usize,
    sizes: &[u64],
    domains: &[usize],
) -> Vec<f64> {
    let total = sizes.iter().sum::<u64>() as f64;
    let mut estimates = vec![total; queries.len()];
    // each query's number and its driving range, by driving column
    let mut driven: Vec<Vec<(usize, u32, u32)>> = vec![Vec::new(); q];
    for (number, query) in queries.iter().enumerate() {
        if let Some((j, lo, hi)) = published_driver(query, domains) {
            driven[j].push((number, lo, hi));
        }
    }
    for (j, numbers) in driven.iter().enumerate() {
        if numbers.is_empty() {
            continue;
        }
        let classes = DrivenClasses::new(&indexes[j], cells_of, q, sizes);
        let cells = indexes[j].cell_ranks.len();
        let answers: Vec<(usize, f64)> = numbers
            .par_iter()
            .map_init(
                || vec![u32::MAX; cells],
                |seen, &(number, lo, hi)| {
                    let estimate = published_estimate(
                        &queries[number],
                        (number as u32, j, lo, hi),
                        indexes,
                        &classes,
                        q,
                        seen,
                    );
                    (number, estimate)
                },
            )
            .collect();
        for (number, estimate) in answers {
            estimates[number] = estimate;
        }
    }
    estimates
}

/// The published answer of query `number` driven by column `driver` over ranks `lo..=hi` (`classes`
/// in that column's cell order): only the classes whose cell there meets the range are visited, each
/// weighted by the covered share of its cell in every constrained column. `seen` (the driving column's
/// cells) marks the cells already visited by this query.
fn published_estimate(
    query: &Query,
    (number, driver, lo, hi): (u32, usize, u32, u32),
    indexes: &[CellIndex],
    classes: &DrivenClasses,
    q: usize,
    seen: &mut [u32],
) -> f64 {
    let index = &indexes[driver];
    let mut estimate = 0.0;
    for rank in lo..=hi {
        let covering =
            &index.cells[index.cell_starts[rank as usize]..index.cell_starts[rank as usize + 1]];
        for &cell in covering {
            if seen[cell as usize] == number {
                continue;
            }
            seen[cell as usize] = number;
            let share = index.fraction(cell, lo, hi);
            let at = index.class_starts[cell as usize]..index.class_starts[cell as usize + 1];
            for (row, &size) in classes.cells[at.start * q..at.end * q]
                .chunks_exact(q)
                .zip(&classes.sizes[at])
            {
                let mut value = size as f64 * share;
                for &(j, lo, hi) in &query.ranges {
                    if j != driver {
                        value *= indexes[j].fraction(row[j], lo, hi);
                    }
                }
                estimate += value;
            }
        }
    }
    estimate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::measures::cells::CellCover;

    fn singletons(domain: usize) -> Vec<CellCover> {
        (0..domain as u32)
            .map(|a| CellCover {
                covers: vec![a],
                tree: None,
            })
            .collect()
    }

    fn run(columns: &[CellColumn<'_>], workload: &QueryWorkload) -> f64 {
        let rows = columns[0].codes.len();
        let ranks: Vec<Vec<u32>> = columns
            .iter()
            .map(|c| (0..c.domain as u32).collect())
            .collect();
        let original = Classes::original(columns, rows);
        let published = Classes::published(columns, rows);
        query_workload(columns, &ranks, &original, &published, workload).mean_relative_error
    }

    const A: [u32; 9] = [0, 1, 2, 0, 1, 0, 3, 3, 0];
    const B: [u32; 9] = [1, 1, 0, 2, 2, 0, 1, 0, 1];

    /// Nothing generalized: every published cell is the original value, so every answer is exact.
    #[test]
    fn bottom_node_answers_exactly() {
        let columns = [
            CellColumn {
                name: "a",
                codes: &A,
                domain: 4,
                cell_of: A.to_vec().into(),
                cells: singletons(4),
                position: Vec::new(),
            },
            CellColumn {
                name: "b",
                codes: &B,
                domain: 3,
                cell_of: B.to_vec().into(),
                cells: singletons(3),
                position: Vec::new(),
            },
        ];
        assert_eq!(run(&columns, &QueryWorkload::default()), 0.0);
    }

    /// One record per value, all suppressed: spreading each record uniformly over the domain gives
    /// `|range|` for a range of `|range|` values, which is the true count.
    #[test]
    fn suppressed_uniform_column_answers_exactly() {
        let codes = [0, 1, 2, 3, 4];
        let mut cells = singletons(5);
        cells.push(CellCover {
            covers: vec![0, 1, 2, 3, 4],
            tree: None,
        });
        let column = CellColumn {
            name: "a",
            codes: &codes,
            domain: 5,
            cell_of: vec![5; 5].into(),
            cells,
            position: Vec::new(),
        };
        let error = run(std::slice::from_ref(&column), &QueryWorkload::default());
        assert!(error.abs() < 1e-12, "{error}");
    }

    /// The true answers from the cubes equal those of the scan (in blocks of any size), and a
    /// brute-force count over the records, on random tables and workloads of one to four columns.
    #[test]
    fn cube_answers_equal_the_scan() {
        let mut generator = SplitMix64(5);
        for round in 0..30 {
            let q = 1 + round % 4;
            let rows = 1 + generator.below(200) as usize;
            let domains: Vec<usize> = (0..q).map(|_| 1 + generator.below(12) as usize).collect();
            let codes: Vec<Vec<u32>> = domains
                .iter()
                .map(|&d| {
                    (0..rows)
                        .map(|_| generator.below(d as u64) as u32)
                        .collect()
                })
                .collect();
            let columns: Vec<CellColumn<'_>> = codes
                .iter()
                .zip(&domains)
                .map(|(c, &d)| CellColumn {
                    name: "c",
                    codes: c,
                    domain: d,
                    cell_of: c.clone().into(),
                    cells: singletons(d),
                    position: Vec::new(),
                })
                .collect();
            // ranks reverse the codes, so rank order is not code order
            let ranks: Vec<Vec<u32>> = domains
                .iter()
                .map(|&d| (0..d as u32).rev().collect())
                .collect();
            let original = Classes::original(&columns, rows);
            let original_ranks: Vec<u32> = original
                .representative
                .iter()
                .flat_map(|&r| {
                    (0..q)
                        .map(|j| ranks[j][codes[j][r as usize] as usize])
                        .collect::<Vec<_>>()
                })
                .collect();
            let indexes: Vec<RankIndex> = (0..q)
                .map(|j| RankIndex::new(&original_ranks, q, j, domains[j], &original.sizes))
                .collect();
            let queries: Vec<Query> = (0..50).map(|_| draw(&mut generator, &domains, 4)).collect();
            let args = (&original_ranks, q, &original.sizes, &indexes, &domains);
            let answers = |max_cells: usize, scan_block: usize| {
                let limits = Limits {
                    max_cells,
                    scan_block,
                };
                true_counts(&queries, args.0, args.1, args.2, args.3, args.4, limits)
            };
            let cubes = answers(MAX_CELLS, SCAN_BLOCK);
            let scans = answers(0, SCAN_BLOCK);
            assert_eq!(cubes, scans);
            // scans in blocks of one class and of a few (a query's span crossing blocks)
            assert_eq!(answers(0, 1), scans);
            assert_eq!(answers(0, 7), scans);
            // small cubes: some sets covered by a larger cube, some by their own, some scanned
            let mixed = answers(40, 5);
            assert_eq!(mixed, scans);
            for (query, &truth) in queries.iter().zip(&cubes) {
                let brute = (0..rows)
                    .filter(|&r| {
                        query
                            .ranges
                            .iter()
                            .all(|&(j, lo, hi)| (lo..=hi).contains(&ranks[j][codes[j][r] as usize]))
                    })
                    .count() as u64;
                assert_eq!(truth, brute);
            }
        }
    }

    /// The published answers equal a record-by-record sum of the covered shares of each record's cells,
    /// on random tables with overlapping cells (contiguous ranges and scattered sets of values), with
    /// every column able to drive.
    #[test]
    fn published_answers_equal_the_record_sum() {
        let mut generator = SplitMix64(11);
        for round in 0..40 {
            let q = 1 + round % 4;
            let rows = 1 + generator.below(150) as usize;
            let domains: Vec<usize> = (0..q).map(|_| 1 + generator.below(10) as usize).collect();
            let codes: Vec<Vec<u32>> = domains
                .iter()
                .map(|&d| {
                    (0..rows)
                        .map(|_| generator.below(d as u64) as u32)
                        .collect()
                })
                .collect();
            // per column: the singletons, then random cells covering each record's value
            let mut all_cells: Vec<Vec<CellCover>> = Vec::new();
            let mut cell_of: Vec<Vec<u32>> = Vec::new();
            for (j, &d) in domains.iter().enumerate() {
                let mut cells = singletons(d);
                let mut of = Vec::with_capacity(rows);
                for &value in &codes[j] {
                    match generator.below(3) {
                        0 => of.push(value),
                        1 => {
                            let lo = generator.below(u64::from(value) + 1) as u32;
                            let hi = value + generator.below((d as u32 - value) as u64) as u32;
                            cells.push(CellCover {
                                covers: (lo..=hi).collect(),
                                tree: None,
                            });
                            of.push(cells.len() as u32 - 1);
                        }
                        _ => {
                            let mut covers: Vec<u32> = (0..d as u32)
                                .filter(|&a| a == value || generator.below(2) == 0)
                                .collect();
                            covers.dedup();
                            cells.push(CellCover { covers, tree: None });
                            of.push(cells.len() as u32 - 1);
                        }
                    }
                }
                all_cells.push(cells);
                cell_of.push(of);
            }
            let columns: Vec<CellColumn<'_>> = (0..q)
                .map(|j| CellColumn {
                    name: "c",
                    codes: &codes[j],
                    domain: domains[j],
                    cell_of: cell_of[j].clone().into(),
                    cells: all_cells[j].clone(),
                    position: Vec::new(),
                })
                .collect();
            let ranks: Vec<Vec<u32>> = domains
                .iter()
                .map(|&d| (0..d as u32).rev().collect())
                .collect();
            let published = Classes::published(&columns, rows);
            let cells_of: Vec<u32> = published
                .representative
                .iter()
                .flat_map(|&r| columns.iter().map(move |c| c.cell_of.get(r as usize)))
                .collect();
            let indexes: Vec<CellIndex> = columns
                .iter()
                .enumerate()
                .map(|(j, c)| CellIndex::new(c, &ranks[j], &cells_of, q, j))
                .collect();
            let queries: Vec<Query> = (0..60).map(|_| draw(&mut generator, &domains, 4)).collect();
            let estimates =
                published_estimates(&queries, &indexes, &cells_of, q, &published.sizes, &domains);
            for (query, &estimate) in queries.iter().zip(&estimates) {
                let expected: f64 = (0..rows)
                    .map(|r| {
                        query
                            .ranges
                            .iter()
                            .map(|&(j, lo, hi)| {
                                let covers = &all_cells[j][cell_of[j][r] as usize].covers;
                                let inside = covers
                                    .iter()
                                    .filter(|&&a| (lo..=hi).contains(&ranks[j][a as usize]))
                                    .count();
                                inside as f64 / covers.len() as f64
                            })
                            .product::<f64>()
                    })
                    .sum();
                assert!(
                    (estimate - expected).abs() <= 1e-9 * expected.max(1.0),
                    "round {round}: {estimate} against {expected}"
                );
            }
        }
    }

    /// The same seed gives the same workload and error; generalization makes the error positive here.
    #[test]
    fn seeded_workload_is_reproducible() {
        let mut cells = singletons(4);
        cells.push(CellCover {
            covers: vec![0, 1],
            tree: None,
        });
        cells.push(CellCover {
            covers: vec![2, 3],
            tree: None,
        });
        let column = CellColumn {
            name: "a",
            codes: &A,
            domain: 4,
            cell_of: A.iter().map(|&a| 4 + a / 2).collect::<Vec<u32>>().into(),
            cells,
            position: Vec::new(),
        };
        let columns = std::slice::from_ref(&column);
        let workload = QueryWorkload {
            queries: 200,
            seed: 7,
            max_dimensions: 3,
        };
        let first = run(columns, &workload);
        assert_eq!(first, run(columns, &workload));
        assert!(first > 0.0);
        // the seed is what draws the queries: another seed draws another workload
        let other = QueryWorkload {
            seed: 8,
            ..workload
        };
        assert_ne!(first, run(columns, &other));
    }
}
