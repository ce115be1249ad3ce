//! Box counts over overlapping cells by orthogonal range counting (the report's volume inflation, Hsu
//! 2008 Defs 4.4.4–4.4.5): when every column orders its codes so that each published cell covers
//! consecutive places ([`super::CellColumn::position`]), a class's box is an axis-aligned box over those
//! places, and the original records inside it are counted with a k-d tree over the distinct original
//! combinations (Bentley 1975), each node holding its bounding box and the records below it. A query adds
//! whole subtrees that lie inside the box and skips those outside, so narrow boxes cost about
//! `O(log n + reported boundary)` each instead of a scan of every combination. Exact: the counts are the
//! same integers as the scan's, which stays the test oracle. The classes are counted in parallel on the
//! caller's rayon pool.

use rayon::prelude::*;

use super::cells::CellColumn;
use super::classes::Classes;

/// Points per leaf: small enough that a leaf's check is cheap, large enough that the tree stays small.
const LEAF: usize = 16;

/// One node of the tree: the points `start..end` of the permuted point array, their bounding box and
/// their weight.
struct Node {
    start: u32,
    end: u32,
    /// Children (`u32::MAX` for a leaf).
    left: u32,
    right: u32,
    weight: u64,
}

/// A k-d tree over weighted points of `dims` coordinates.
struct KdTree {
    dims: usize,
    /// Per dimension, the number of places (a split divides the dimension whose points spread over the
    /// largest share of it, so small domains such as sex are split as well as ZIP codes).
    extents: Vec<u32>,
    /// Coordinates, point by point (`dims` each), in tree order.
    coordinates: Vec<u32>,
    /// Weight of each point, in tree order (a class size: below 2³²).
    weights: Vec<u32>,
    nodes: Vec<Node>,
    /// Bounds, node by node: `dims` lows then `dims` highs.
    bounds: Vec<u32>,
}

impl KdTree {
    /// The tree over the points whose coordinates `coordinates` lists point by point, point `p`
    /// weighing `weights[p]`. The coordinates are reordered in place (at 10M points a second copy
    /// would cost hundreds of megabytes).
    fn new(dims: usize, extents: Vec<u32>, coordinates: Vec<u32>, weights: &[u64]) -> Self {
        let points = weights.len();
        let mut tree = KdTree {
            dims,
            extents,
            coordinates,
            weights: Vec::new(),
            nodes: Vec::with_capacity(2 * points / LEAF + 2),
            bounds: Vec::new(),
        };
        let mut order: Vec<u32> = (0..points as u32).collect();
        if points > 0 {
            tree.build(&mut order, weights, 0, points);
        }
        // store the points in tree order, so a leaf's points are contiguous
        tree.weights = order.iter().map(|&p| weights[p as usize] as u32).collect();
        permute_rows(&mut tree.coordinates, dims, &order);
        tree
    }

    /// Builds the node over `order[start..end]` and returns its index.
    fn build(&mut self, order: &mut [u32], weights: &[u64], start: usize, end: usize) -> u32 {
        let dims = self.dims;
        let mut low = vec![u32::MAX; dims];
        let mut high = vec![0u32; dims];
        let mut weight = 0u64;
        for &p in &order[start..end] {
            let p = p as usize;
            for d in 0..dims {
                let x = self.coordinates[p * dims + d];
                low[d] = low[d].min(x);
                high[d] = high[d].max(x);
            }
            weight += weights[p];
        }
        let index = self.nodes.len() as u32;
        self.nodes.push(Node {
            start: start as u32,
            end: end as u32,
            left: u32::MAX,
            right: u32::MAX,
            weight,
        });
        self.bounds.extend_from_slice(&low);
        self.bounds.extend_from_slice(&high);
        // split the widest dimension at its median, unless the node is small or a single point
        let spread = |d: usize| f64::from(high[d] - low[d]) / f64::from(self.extents[d].max(1));
        let split = (0..dims)
            .max_by(|&a, &b| spread(a).total_cmp(&spread(b)))
            .filter(|&d| end - start > LEAF && high[d] > low[d]);
        if let Some(d) = split {
            let middle = start + (end - start) / 2;
            let coordinates = &self.coordinates;
            order[start..end].select_nth_unstable_by_key(middle - start, |&p| {
                coordinates[p as usize * dims + d]
            });
            let left = self.build(order, weights, start, middle);
            let right = self.build(order, weights, middle, end);
            let node = &mut self.nodes[index as usize];
            node.left = left;
            node.right = right;
        }
        index
    }

    /// The weight of the points inside the box `low..=high` (per dimension).
    fn count(&self, low: &[u32], high: &[u32]) -> u64 {
        if self.nodes.is_empty() {
            return 0;
        }
        let dims = self.dims;
        let mut total = 0u64;
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            let bounds = &self.bounds[n as usize * 2 * dims..(n as usize + 1) * 2 * dims];
            let (node_low, node_high) = bounds.split_at(dims);
            let mut inside = true;
            let mut outside = false;
            for d in 0..dims {
                if node_high[d] < low[d] || node_low[d] > high[d] {
                    outside = true;
                    break;
                }
                if node_low[d] < low[d] || node_high[d] > high[d] {
                    inside = false;
                }
            }
            if outside {
                continue;
            }
            if inside {
                total += node.weight;
                continue;
            }
            if node.left == u32::MAX {
                for p in node.start as usize..node.end as usize {
                    let point = &self.coordinates[p * dims..(p + 1) * dims];
                    if (0..dims).all(|d| low[d] <= point[d] && point[d] <= high[d]) {
                        total += u64::from(self.weights[p]);
                    }
                }
            } else {
                stack.push(node.left);
                stack.push(node.right);
            }
        }
        total
    }
}

/// Reorders the rows of `width` values of `values` in place so that row `i` becomes the old row
/// `order[i]` (`order` a permutation), following each cycle once with one row of scratch.
fn permute_rows(values: &mut [u32], width: usize, order: &[u32]) {
    let mut placed = vec![false; order.len()];
    let mut scratch = vec![0u32; width];
    for start in 0..order.len() {
        if placed[start] {
            continue;
        }
        scratch.copy_from_slice(&values[start * width..(start + 1) * width]);
        let mut at = start;
        loop {
            placed[at] = true;
            let from = order[at] as usize;
            if from == start {
                values[at * width..(at + 1) * width].copy_from_slice(&scratch);
                break;
            }
            values.copy_within(from * width..(from + 1) * width, at * width);
            at = from;
        }
    }
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
    let extents = columns.iter().map(|c| c.domain as u32).collect();
    let tree = KdTree::new(dims, extents, coordinates, &original.sizes);
    // the classes' counts are independent: counted in parallel on the caller's rayon pool
    Some(
        published
            .representative
            .par_iter()
            .map_init(
                || (vec![0u32; dims], vec![0u32; dims]),
                |(low, high), &r| {
                    for (j, column) in columns.iter().enumerate() {
                        let (l, h) = ranges[j][column.cell_of.get(r as usize) as usize];
                        low[j] = l;
                        high[j] = h;
                    }
                    tree.count(low, high)
                },
            )
            .collect(),
    )
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
        let tree = KdTree::new(2, vec![40, 40], coordinates, &weights);
        let brute = |low: [u32; 2], high: [u32; 2]| -> u64 {
            (low[0]..=high[0])
                .map(|x| u64::from(x + 1) * u64::from(high[1] - low[1] + 1))
                .sum()
        };
        for (low, high) in [
            ([0, 0], [39, 39]),
            ([3, 5], [3, 5]),
            ([10, 0], [20, 39]),
            ([7, 13], [31, 14]),
        ] {
            assert_eq!(
                tree.count(&low, &high),
                brute(low, high),
                "{low:?}..{high:?}"
            );
        }
        assert_eq!(tree.count(&[41, 0], &[50, 39]), 0);
        assert_eq!(
            KdTree::new(2, vec![10, 10], vec![], &[]).count(&[0, 0], &[9, 9]),
            0
        );
    }

    #[test]
    fn rows_are_permuted_in_place() {
        // rows of two values; row i holds (i, 10 + i)
        let mut values: Vec<u32> = (0..6).flat_map(|i| [i, 10 + i]).collect();
        let order = [3u32, 0, 4, 1, 2, 5];
        permute_rows(&mut values, 2, &order);
        let expected: Vec<u32> = order.iter().flat_map(|&i| [i, 10 + i]).collect();
        assert_eq!(values, expected);
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
