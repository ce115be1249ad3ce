//! Box counts over overlapping cells by orthogonal range counting (the report's volume inflation, Hsu
//! 2008 Defs 4.4.4–4.4.5): when every column orders its codes so that each published cell covers
//! consecutive places ([`super::CellColumn::position`]), a class's box is an axis-aligned box over those
//! places, and the original records inside it are counted over the distinct original combinations.
//!
//! The boxes are all known in advance, so they are counted offline by one recursive partition of the
//! points (a k-d tree built for these boxes, Bentley 1975): a node splits its points by a plane, and each
//! box goes down to the children it reaches. A box holding all of a node's points takes their weight at
//! once; one missing them all is dropped. The plane is chosen where it cuts no box whenever such a plane
//! splits the points evenly enough (the cells of a Mondrian-like partition are nested that way), so a
//! box follows a single path and costs `O(depth)`; otherwise the points' median on their widest
//! dimension is used, as in a k-d tree, and the boxes it cuts go both ways. Points are partitioned, so
//! nothing is counted twice; their coordinates and weights move with them, so that every pass over a
//! node reads consecutive memory (a pass per level and dimension touched, not a jump per point).
//! Exact: the counts are the same integers as the scan's, which stays the test oracle. Large nodes
//! split their two halves across the caller's rayon pool.

use std::sync::atomic::{AtomicU64, Ordering};

use super::cells::CellColumn;
use super::classes::Classes;

/// Nodes with at most this many points check each remaining box against each point.
const LEAF_POINTS: usize = 32;

/// Nodes with at least this many points count their two halves in parallel.
const PARALLEL_POINTS: usize = 1 << 15;

/// The boxes to count points in, all in `dims` dimensions.
struct Boxes<'p> {
    dims: usize,
    /// Per dimension, the number of places (the widest dimension is the one whose points spread over
    /// the largest share of it, so small domains such as sex are split as well as ZIP codes).
    extents: &'p [u32],
    /// Lowest and highest place, box by box (`dims` each).
    lows: &'p [u32],
    highs: &'p [u32],
    /// The weight found inside each box so far.
    counts: Vec<AtomicU64>,
}

/// The points of one node: their coordinates row by row (`dims` each) and their weights, reordered in
/// place as the node splits, so that every pass over a node's points reads consecutive memory.
struct Points<'a> {
    dims: usize,
    coordinates: &'a mut [u32],
    weights: &'a mut [u64],
}

impl<'a> Points<'a> {
    fn len(&self) -> usize {
        self.weights.len()
    }

    fn rows(&self) -> impl Iterator<Item = (&[u32], u64)> + '_ {
        self.coordinates
            .chunks_exact(self.dims)
            .zip(self.weights.iter().copied())
    }

    /// Moves the points of `[from..]` with `left(row)` to the front of that part; returns where the
    /// others start.
    fn partition(&mut self, from: usize, left: impl Fn(&[u32]) -> bool) -> usize {
        let dims = self.dims;
        let mut next = from;
        for i in from..self.len() {
            if left(&self.coordinates[i * dims..(i + 1) * dims]) {
                if i != next {
                    let (front, back) = self.coordinates.split_at_mut(i * dims);
                    front[next * dims..(next + 1) * dims].swap_with_slice(&mut back[..dims]);
                    self.weights.swap(i, next);
                }
                next += 1;
            }
        }
        next
    }

    /// The first `middle` points and the rest.
    fn split_at(self, middle: usize) -> (Points<'a>, Points<'a>) {
        let (left, right) = self.coordinates.split_at_mut(middle * self.dims);
        let (left_weights, right_weights) = self.weights.split_at_mut(middle);
        (
            Points {
                dims: self.dims,
                coordinates: left,
                weights: left_weights,
            },
            Points {
                dims: self.dims,
                coordinates: right,
                weights: right_weights,
            },
        )
    }
}

impl Boxes<'_> {
    fn bounds(&self, b: u32) -> (&[u32], &[u32]) {
        let at = b as usize * self.dims..(b as usize + 1) * self.dims;
        (&self.lows[at.clone()], &self.highs[at])
    }

    fn contains(&self, b: u32, point: &[u32]) -> bool {
        let (low, high) = self.bounds(b);
        point
            .iter()
            .zip(low.iter().zip(high))
            .all(|(&x, (&l, &h))| l <= x && x <= h)
    }

    /// Adds the weight of `points` to every box of `boxes` that holds it.
    fn count(&self, mut points: Points<'_>, boxes: &[u32]) {
        if points.len() == 0 || boxes.is_empty() {
            return;
        }
        let dims = self.dims;
        let mut low = vec![u32::MAX; dims];
        let mut high = vec![0u32; dims];
        let mut weight = 0u64;
        for (row, w) in points.rows() {
            for (d, &x) in row.iter().enumerate() {
                low[d] = low[d].min(x);
                high[d] = high[d].max(x);
            }
            weight += w;
        }
        let mut open = Vec::with_capacity(boxes.len());
        for &b in boxes {
            let (box_low, box_high) = self.bounds(b);
            let mut inside = true;
            let mut outside = false;
            for d in 0..dims {
                if box_high[d] < low[d] || box_low[d] > high[d] {
                    outside = true;
                    break;
                }
                inside &= box_low[d] <= low[d] && high[d] <= box_high[d];
            }
            if outside {
                continue;
            }
            if inside {
                self.counts[b as usize].fetch_add(weight, Ordering::Relaxed);
            } else {
                open.push(b);
            }
        }
        if open.is_empty() {
            return;
        }
        if points.len() <= LEAF_POINTS || open.len() == 1 {
            for &b in &open {
                let inside: u64 = points
                    .rows()
                    .filter(|(row, _)| self.contains(b, row))
                    .map(|(_, w)| w)
                    .sum();
                self.counts[b as usize].fetch_add(inside, Ordering::Relaxed);
            }
            return;
        }
        let parallel = points.len() >= PARALLEL_POINTS;
        let middle = self.split(&mut points, &open, &low, &high);
        let (left, right) = points.split_at(middle);
        if parallel {
            rayon::join(|| self.count(left, &open), || self.count(right, &open));
        } else {
            self.count(left, &open);
            self.count(right, &open);
        }
    }

    /// Reorders `points` (at least two, spread in some dimension) into two non-empty halves and
    /// returns the length of the first: by a plane that cuts none of `boxes` when one splits the
    /// points evenly enough, else at the median of the widest dimension (the points equal to the
    /// median on either side, as needed for halves of equal size).
    fn split(&self, points: &mut Points<'_>, boxes: &[u32], low: &[u32], high: &[u32]) -> usize {
        let dims = self.dims;
        let n = points.len();
        let spread = |d: usize| f64::from(high[d] - low[d]) / f64::from(self.extents[d].max(1));
        let mut order: Vec<usize> = (0..dims).filter(|&d| high[d] > low[d]).collect();
        if order.is_empty() {
            // equal points: any split is exact
            return n / 2;
        }
        order.sort_by(|&a, &b| spread(b).total_cmp(&spread(a)));
        // one dimension's coordinates, copied out to find medians and count sides
        let mut column: Vec<u32> = Vec::with_capacity(n);
        let middle = n / 2;
        // the most even plane that cuts no box, over the dimensions from the widest
        let mut best: Option<(usize, u32, usize)> = None;
        for &d in &order {
            let clean = self.clean_planes(boxes, d, low[d], high[d]);
            if clean.is_empty() {
                continue;
            }
            column.clear();
            column.extend(points.coordinates.chunks_exact(dims).map(|row| row[d]));
            let median = *column.select_nth_unstable(middle).1;
            for x in nearest_planes(&clean, median) {
                let left = column.iter().filter(|&&v| v < x).count();
                let smaller = left.min(n - left);
                if best.is_none_or(|(_, _, s)| smaller > s) {
                    best = Some((d, x, smaller));
                }
            }
            if best.is_some_and(|(_, _, s)| s * 4 >= n) {
                break;
            }
        }
        if let Some((d, x, _)) = best.filter(|&(_, _, smaller)| smaller * 64 >= n) {
            return points.partition(0, |row| row[d] < x);
        }
        let d = order[0];
        column.clear();
        column.extend(points.coordinates.chunks_exact(dims).map(|row| row[d]));
        let median = *column.select_nth_unstable(middle).1;
        // fewer than `middle + 1` points lie below the median and more than `middle` at or below it,
        // so the points equal to it straddle `middle`: both halves are non-empty
        let below = points.partition(0, |row| row[d] < median);
        points.partition(below, |row| row[d] == median);
        middle
    }

    /// The places `x` in `low + 1..=high` such that a plane between `x - 1` and `x` in dimension `d`
    /// cuts none of `boxes` (no box has `box low < x <= box high`), as ascending disjoint ranges.
    fn clean_planes(&self, boxes: &[u32], d: usize, low: u32, high: u32) -> Vec<(u32, u32)> {
        // each box blocks the planes x in box low + 1..=box high (clipped to the node)
        let blocked = boxes.iter().filter_map(|&b| {
            let (box_low, box_high) = self.bounds(b);
            let from = box_low[d].max(low) + 1;
            let to = box_high[d].min(high);
            (from <= to).then_some((from, to))
        });
        let extent = (high - low) as usize;
        let mut clean = Vec::new();
        if extent <= 4 * boxes.len() + 1024 {
            // a difference array over the node's places
            let mut depth = vec![0i32; extent + 2];
            for (from, to) in blocked {
                depth[(from - low) as usize] += 1;
                depth[(to - low) as usize + 1] -= 1;
            }
            let mut covering = 0i32;
            for x in low + 1..=high {
                covering += depth[(x - low) as usize];
                if covering == 0 {
                    match clean.last_mut() {
                        Some((_, end)) if *end + 1 == x => *end = x,
                        _ => clean.push((x, x)),
                    }
                }
            }
        } else {
            // sort the blocked ranges and take the gaps between them
            let mut ranges: Vec<(u32, u32)> = blocked.collect();
            ranges.sort_unstable();
            let mut next = low + 1;
            for (from, to) in ranges {
                if from > next {
                    clean.push((next, from - 1));
                }
                next = next.max(to + 1);
            }
            if next <= high {
                clean.push((next, high));
            }
        }
        clean
    }
}

/// The clean places nearest to `median` from below and from above (at most two).
fn nearest_planes(clean: &[(u32, u32)], median: u32) -> impl Iterator<Item = u32> {
    // the first range ending at or after the median holds it or is the nearest above
    let at = clean.partition_point(|&(_, end)| end < median);
    let above = clean.get(at).map(|&(start, _)| start.max(median));
    let below = at
        .checked_sub(1)
        .and_then(|i| clean.get(i))
        .map(|&(_, end)| end);
    let below = below.filter(|&b| Some(b) != above);
    above.into_iter().chain(below)
}

/// The weight of the points inside each of `boxes` boxes (`lows`/`highs` list the boxes,
/// `coordinates` the points, `dims` per item), counted on the caller's rayon pool.
fn count_in_boxes(
    dims: usize,
    extents: &[u32],
    mut coordinates: Vec<u32>,
    weights: &[u64],
    boxes: usize,
    (lows, highs): (&[u32], &[u32]),
) -> Vec<u64> {
    if dims == 0 {
        // no quasi-identifier: every box holds every point
        let total: u64 = weights.iter().sum();
        return vec![total; boxes];
    }
    let problem = Boxes {
        dims,
        extents,
        lows,
        highs,
        counts: (0..boxes).map(|_| AtomicU64::new(0)).collect(),
    };
    let mut weights = weights.to_vec();
    let points = Points {
        dims,
        coordinates: &mut coordinates,
        weights: &mut weights,
    };
    let all: Vec<u32> = (0..boxes as u32).collect();
    problem.count(points, &all);
    problem
        .counts
        .into_iter()
        .map(AtomicU64::into_inner)
        .collect()
}

/// Per published class, the original records inside its box, when every column has an order in which
/// every cell a class uses covers consecutive places; `None` otherwise (the caller scans).
pub(super) fn by_ranges(
    columns: &[CellColumn<'_>],
    published: &Classes,
    original: &Classes,
) -> Option<Vec<u64>> {
    let dims = columns.len();
    // every cell in use as a range of places
    let mut ranges: Vec<Vec<(u32, u32)>> = Vec::with_capacity(dims);
    for column in columns {
        if column.position.len() != column.domain {
            return None;
        }
        let mut used = vec![false; column.cells.len()];
        for &r in &published.representative {
            used[column.cell_of.get(r as usize) as usize] = true;
        }
        let mut column_ranges = vec![(1, 0); column.cells.len()];
        for (id, cell) in column.cells.iter().enumerate() {
            if !used[id] {
                continue;
            }
            let places = cell.covers.iter().map(|&c| column.position[c as usize]);
            let low = places.clone().min()?;
            let high = places.max()?;
            if (high - low) as usize + 1 != cell.covers.len() {
                return None;
            }
            column_ranges[id] = (low, high);
        }
        ranges.push(column_ranges);
    }
    let mut coordinates = Vec::with_capacity(original.len() * dims);
    for &r in &original.representative {
        for column in columns {
            coordinates.push(column.position[column.codes[r as usize] as usize]);
        }
    }
    let extents: Vec<u32> = columns.iter().map(|c| c.domain as u32).collect();
    let mut lows = Vec::with_capacity(published.len() * dims);
    let mut highs = Vec::with_capacity(published.len() * dims);
    for &r in &published.representative {
        for (j, column) in columns.iter().enumerate() {
            let (l, h) = ranges[j][column.cell_of.get(r as usize) as usize];
            lows.push(l);
            highs.push(h);
        }
    }
    Some(count_in_boxes(
        dims,
        &extents,
        coordinates,
        &original.sizes,
        published.len(),
        (&lows, &highs),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_weights_inside_boxes() {
        // points on a 2-d grid 0..40 × 0..40, weight x + 1
        let mut coordinates = Vec::new();
        let mut weights = Vec::new();
        for x in 0..40u32 {
            for y in 0..40u32 {
                coordinates.extend([x, y]);
                weights.push(u64::from(x) + 1);
            }
        }
        let brute = |low: [u32; 2], high: [u32; 2]| -> u64 {
            (low[0]..=high[0])
                .map(|x| u64::from(x + 1) * u64::from(high[1] - low[1] + 1))
                .sum()
        };
        // nested, overlapping, single-point and empty boxes
        let boxes = [
            ([0, 0], [39, 39]),
            ([3, 5], [3, 5]),
            ([10, 0], [20, 39]),
            ([7, 13], [31, 14]),
            ([0, 0], [19, 39]),
            ([20, 0], [39, 39]),
        ];
        let lows: Vec<u32> = boxes.iter().flat_map(|b| b.0).collect();
        let highs: Vec<u32> = boxes.iter().flat_map(|b| b.1).collect();
        let counts = count_in_boxes(
            2,
            &[40, 40],
            coordinates.clone(),
            &weights,
            boxes.len(),
            (&lows, &highs),
        );
        for ((low, high), count) in boxes.iter().zip(&counts) {
            assert_eq!(*count, brute(*low, *high), "{low:?}..{high:?}");
        }
        assert_eq!(
            count_in_boxes(2, &[10, 10], Vec::new(), &[], 1, (&[0, 0], &[9, 9])),
            [0]
        );
        // no dimension: every box holds every point
        assert_eq!(
            count_in_boxes(0, &[], Vec::new(), &[2, 3], 2, (&[], &[])),
            vec![5u64, 5]
        );
    }

    #[test]
    fn clean_planes_are_the_gaps_between_boxes() {
        let problem = Boxes {
            dims: 1,
            extents: &[100],
            // boxes [2, 5], [5, 9], [20, 20], [30, 60]
            lows: &[2, 5, 20, 30],
            highs: &[5, 9, 20, 60],
            counts: Vec::new(),
        };
        let all = [0, 1, 2, 3];
        // planes blocked: 3..=5, 6..=9, none, 31..=60; the node spans 0..=70, by both methods
        let expected = vec![(1, 2), (10, 30), (61, 70)];
        assert_eq!(problem.clean_planes(&all, 0, 0, 70), expected);
        // a node far wider than its boxes takes the sorting method
        assert_eq!(
            problem.clean_planes(&all, 0, 0, 5000),
            [(1, 2), (10, 30), (61, 5000)]
        );
        // clipped to a node inside the boxes' span
        assert_eq!(problem.clean_planes(&all, 0, 4, 25), [(10, 25)]);
        assert_eq!(nearest_planes(&expected, 15).collect::<Vec<_>>(), [15, 2]);
        assert_eq!(nearest_planes(&expected, 45).collect::<Vec<_>>(), [61, 30]);
        assert_eq!(nearest_planes(&expected, 0).collect::<Vec<_>>(), [1]);
        assert_eq!(nearest_planes(&expected, 90).collect::<Vec<_>>(), [70]);
    }

    mod properties {
        use proptest::prelude::*;

        use crate::core::control::NoControl;
        use crate::core::local::{
            mondrian, Domain, LocalAttribute, LocalInput, MondrianOptions, OrderedDomain,
        };
        use crate::core::measures::cells::{CellColumn, CellCover};
        use crate::core::measures::classes::{box_counts, by_scanning, Classes};
        use crate::core::privacy::{KAnonymity, PrivacyModel};

        type RandomColumn = (Vec<u32>, Vec<u32>, Vec<(u32, u32)>, Vec<usize>);

        /// A column of `codes` whose codes sit at `places` (a permutation), with cells that are runs of
        /// places `[a, b]` (overlapping freely) and one cell per record chosen by `pick`.
        fn column<'a>(
            codes: &'a [u32],
            places: &[u32],
            runs: &[(u32, u32)],
            pick: &[usize],
        ) -> CellColumn<'a> {
            let domain = places.len();
            let cells: Vec<CellCover> = runs
                .iter()
                .map(|&(a, b)| {
                    let (low, high) = (a.min(b), a.max(b));
                    let mut covers: Vec<u32> = (0..domain as u32)
                        .filter(|&c| (low..=high).contains(&places[c as usize]))
                        .collect();
                    covers.sort_unstable();
                    CellCover { covers, tree: None }
                })
                .collect();
            CellColumn {
                name: "q",
                codes,
                domain,
                cell_of: pick
                    .iter()
                    .map(|&p| (p % cells.len()) as u32)
                    .collect::<Vec<u32>>()
                    .into(),
                cells,
                position: places.to_vec(),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            /// Random overlapping runs (cells need not even cover the record's own value, as after a
            /// hybrid relocation): the tree's counts are the scan's.
            #[test]
            fn the_tree_counts_what_the_scan_counts(
                domains in proptest::collection::vec(2usize..9, 1..4),
                rows in 1usize..80,
                seed in any::<u64>(),
            ) {
                let mut state = seed | 1;
                let mut next = move |bound: usize| -> usize {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % bound as u64) as usize
                };
                // per column: codes, places, runs and each record's pick
                let data: Vec<RandomColumn> = domains
                    .iter()
                    .map(|&domain| {
                        let codes: Vec<u32> = (0..rows).map(|_| next(domain) as u32).collect();
                        let mut places: Vec<u32> = (0..domain as u32).collect();
                        for i in (1..domain).rev() {
                            places.swap(i, next(i + 1));
                        }
                        let runs: Vec<(u32, u32)> = (0..1 + next(5))
                            .map(|_| (next(domain) as u32, next(domain) as u32))
                            .collect();
                        let pick: Vec<usize> = (0..rows).map(|_| next(64)).collect();
                        (codes, places, runs, pick)
                    })
                    .collect();
                let columns: Vec<CellColumn<'_>> = data
                    .iter()
                    .map(|(codes, places, runs, pick)| column(codes, places, runs, pick))
                    .collect();
                let published = Classes::published(&columns, rows);
                let original = Classes::original(&columns, rows);
                let tree = super::by_ranges(&columns, &published, &original);
                prop_assert_eq!(tree, Some(by_scanning(&columns, &published, &original)));
            }

            /// Large random inputs (past the leaf size, so planes and medians are chosen): random
            /// boxes, and boxes from a random guillotine partition (the nested kind clean planes
            /// separate), all agree with a brute-force count.
            #[test]
            fn offline_counts_equal_brute_force(
                domains in proptest::collection::vec(1u32..60, 1..5),
                points in 0usize..3000,
                random_boxes in 0usize..150,
                seed in any::<u64>(),
            ) {
                let dims = domains.len();
                let mut state = seed | 1;
                let mut next = move |bound: u32| -> u32 {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % u64::from(bound.max(1))) as u32
                };
                let coordinates: Vec<u32> = (0..points)
                    .flat_map(|_| domains.iter().map(|&d| next(d)).collect::<Vec<_>>())
                    .collect();
                let weights: Vec<u64> = (0..points).map(|_| 1 + u64::from(next(4))).collect();
                let (mut lows, mut highs) = (Vec::new(), Vec::new());
                for _ in 0..random_boxes {
                    for &d in &domains {
                        let (a, b) = (next(d), next(d));
                        lows.push(a.min(b));
                        highs.push(a.max(b));
                    }
                }
                // a guillotine partition of the whole space, cut at random places
                let mut pending = vec![(vec![0u32; dims], domains.iter().map(|&d| d - 1).collect::<Vec<_>>())];
                while let Some((low, high)) = pending.pop() {
                    let d = next(dims as u32) as usize;
                    if high[d] > low[d] && lows.len() / dims < random_boxes + 400 && next(5) != 0 {
                        let cut = low[d] + 1 + next(high[d] - low[d]);
                        let (mut left_high, mut right_low) = (high.clone(), low.clone());
                        left_high[d] = cut - 1;
                        right_low[d] = cut;
                        pending.push((low, left_high));
                        pending.push((right_low, high));
                    } else {
                        lows.extend_from_slice(&low);
                        highs.extend_from_slice(&high);
                    }
                }
                let boxes = lows.len() / dims;
                let counts = super::super::count_in_boxes(
                    dims, &domains, coordinates.clone(), &weights, boxes, (&lows, &highs),
                );
                for b in 0..boxes {
                    let (low, high) = (&lows[b * dims..(b + 1) * dims], &highs[b * dims..(b + 1) * dims]);
                    let brute: u64 = (0..points)
                        .filter(|&p| (0..dims).all(|d| {
                            let x = coordinates[p * dims + d];
                            low[d] <= x && x <= high[d]
                        }))
                        .map(|p| weights[p])
                        .sum();
                    prop_assert_eq!(counts[b], brute, "box {}", b);
                }
            }

            /// Relaxed Mondrian's overlapping ranges on random numeric tables: the report's box counts
            /// are the scan's.
            #[test]
            fn relaxed_mondrian_boxes_match_the_scan(
                table in proptest::collection::vec(proptest::collection::vec(0u32..12, 3), 4..90),
                k in 2u64..5,
            ) {
                let rows = table.len();
                prop_assume!(k as usize <= rows);
                let codes: Vec<Vec<u32>> = (0..3)
                    .map(|j| table.iter().map(|r| r[j]).collect())
                    .collect();
                let orders: Vec<OrderedDomain> = (0..3)
                    .map(|_| OrderedDomain::new((0..12).collect(), Some((0..12).map(f64::from).collect())))
                    .collect();
                let input = LocalInput {
                    rows,
                    quasi_identifiers: (0..3)
                        .map(|j| LocalAttribute {
                            name: "q",
                            codes: &codes[j],
                            distinct: 12,
                            domain: Domain::Ordered(&orders[j]),
                        })
                        .collect(),
                    sensitive: vec![],
                };
                let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
                let options = MondrianOptions { relaxed: true, split_preference: vec![] };
                let result = mondrian(&input, &models, &options, &NoControl).unwrap();
                let columns: Vec<CellColumn<'_>> = (0..3)
                    .map(|j| {
                        CellColumn::local("q", &codes[j], Domain::Ordered(&orders[j]), &result.recoding, j)
                    })
                    .collect();
                let published = Classes::published(&columns, rows);
                let original = Classes::original(&columns, rows);
                prop_assert_eq!(
                    box_counts(&columns, &published, &original),
                    by_scanning(&columns, &published, &original)
                );
            }
        }
    }
}
