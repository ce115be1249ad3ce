//! The boxes of M-Hybrid: the generalized cells a set of records publishes (the range of their ranks on
//! an ordered quasi-identifier, their lowest common ancestor on a hierarchical one), whether a box covers
//! a record's original values, and a box's loss per record.
//!
//! The loss of a cell is Iyengar's penalty as Nergiz, Gök & Özkanlı (2013, §5) use it, extended to ranges
//! the way Mondrian measures extents: `(leaves under the value − 1) / (hierarchy leaves − 1)` on a
//! hierarchy, `numeric width / domain width` on a numeric domain, `(high − low) / (ranks − 1)` on an
//! ordinal one. A single value costs 0 and the whole domain 1.

use crate::core::data::GeneralizationMap;
use crate::core::local::{Domain, LocalInput, RecodedCell};

/// How one quasi-identifier generalizes.
enum Dimension<'a> {
    /// Ranks of an ordered domain; `numbers[rank]` for numeric domains; `total` the domain's width.
    Ordered {
        numbers: Option<Vec<f64>>,
        total: f64,
    },
    /// A hierarchy; `leaves` is its leaf count minus one (at least 1).
    Hierarchy {
        map: &'a GeneralizationMap,
        leaves: f64,
    },
}

/// The extent of a set of records on one quasi-identifier while it is being accumulated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Extent {
    /// No record yet.
    Empty,
    /// Lowest and highest rank.
    Range { low: u32, high: u32 },
    /// The lowest common ancestor: its level and the column code of one record under it.
    Node { level: usize, anchor: u32 },
}

/// The quasi-identifiers of a run with a row-major copy of every record's keys (rank or column code).
pub(super) struct Geometry<'a> {
    dimensions: Vec<Dimension<'a>>,
    q: usize,
    keys: Vec<u32>,
}

impl<'a> Geometry<'a> {
    /// The geometry of `input`'s quasi-identifiers.
    pub(super) fn new(input: &LocalInput<'a>) -> Self {
        let q = input.quasi_identifiers.len();
        let mut keys = vec![0u32; input.rows * q];
        let mut dimensions = Vec::with_capacity(q);
        for (j, attribute) in input.quasi_identifiers.iter().enumerate() {
            match attribute.domain {
                Domain::Ordered(order) => {
                    for (r, &code) in attribute.codes.iter().enumerate().take(input.rows) {
                        keys[r * q + j] = order.rank(code);
                    }
                    let (numbers, total) = order.scale();
                    dimensions.push(Dimension::Ordered { numbers, total });
                }
                Domain::Hierarchy(map) => {
                    for (r, &code) in attribute.codes.iter().enumerate().take(input.rows) {
                        keys[r * q + j] = code;
                    }
                    let leaves = map.hierarchy().leaf_count().saturating_sub(1).max(1) as f64;
                    dimensions.push(Dimension::Hierarchy { map, leaves });
                }
            }
        }
        Self {
            dimensions,
            q,
            keys,
        }
    }

    /// Whether some quasi-identifier generalizes along a hierarchy.
    pub(super) fn has_hierarchy(&self) -> bool {
        self.dimensions
            .iter()
            .any(|d| matches!(d, Dimension::Hierarchy { .. }))
    }

    /// Number of quasi-identifiers.
    pub(super) fn q(&self) -> usize {
        self.q
    }

    /// The keys of record `row`.
    pub(super) fn key(&self, row: u32) -> &[u32] {
        let start = row as usize * self.q;
        &self.keys[start..start + self.q]
    }

    /// An empty box.
    pub(super) fn empty(&self) -> Vec<Extent> {
        vec![Extent::Empty; self.q]
    }

    /// Widens `extents` to hold record `row`.
    pub(super) fn extend(&self, extents: &mut [Extent], row: u32) {
        for ((extent, dimension), &key) in
            extents.iter_mut().zip(&self.dimensions).zip(self.key(row))
        {
            *extent = match (*extent, dimension) {
                (Extent::Empty, Dimension::Ordered { .. }) => Extent::Range {
                    low: key,
                    high: key,
                },
                (Extent::Empty, Dimension::Hierarchy { .. }) => Extent::Node {
                    level: 0,
                    anchor: key,
                },
                (Extent::Range { low, high }, _) => Extent::Range {
                    low: low.min(key),
                    high: high.max(key),
                },
                (Extent::Node { mut level, anchor }, Dimension::Hierarchy { map, .. }) => {
                    while level < map.max_level()
                        && map.codes(level)[key as usize] != map.codes(level)[anchor as usize]
                    {
                        level += 1;
                    }
                    Extent::Node { level, anchor }
                }
                (other, Dimension::Ordered { .. }) => other,
            };
        }
    }

    /// The box of `rows`.
    pub(super) fn bounding(&self, rows: &[u32]) -> Vec<Extent> {
        let mut extents = self.empty();
        for &row in rows {
            self.extend(&mut extents, row);
        }
        extents
    }

    /// Quasi-identifiers of record `row` whose original value the box does not cover.
    pub(super) fn outside(&self, extents: &[Extent], row: u32) -> u64 {
        extents
            .iter()
            .zip(&self.dimensions)
            .zip(self.key(row))
            .filter(|((extent, dimension), &key)| match (**extent, dimension) {
                (Extent::Range { low, high }, _) => key < low || key > high,
                (Extent::Node { level, anchor }, Dimension::Hierarchy { map, .. }) => {
                    map.codes(level)[key as usize] != map.codes(level)[anchor as usize]
                }
                _ => true,
            })
            .count() as u64
    }

    /// The loss of one record published with this box: the sum of its cells' penalties.
    pub(super) fn penalty(&self, extents: &[Extent]) -> f64 {
        extents
            .iter()
            .zip(&self.dimensions)
            .map(|(extent, dimension)| match (*extent, dimension) {
                (Extent::Range { low, high }, Dimension::Ordered { numbers, total }) => {
                    match numbers {
                        Some(numbers) => (numbers[high as usize] - numbers[low as usize]) / total,
                        None => f64::from(high - low) / total,
                    }
                }
                (Extent::Node { level, anchor }, Dimension::Hierarchy { map, leaves }) => {
                    let label = map.codes(level)[anchor as usize];
                    map.hierarchy().leaves_under(level, label).saturating_sub(1) as f64 / leaves
                }
                _ => 0.0,
            })
            .sum()
    }

    /// Whether the box spans more than one value on quasi-identifier `j`.
    pub(super) fn is_wide(&self, extents: &[Extent], j: usize) -> bool {
        match extents[j] {
            Extent::Range { low, high } => low < high,
            Extent::Node { level, .. } => level > 0,
            Extent::Empty => false,
        }
    }

    /// The key by which records are ordered to cut a box on quasi-identifier `j`: the rank on an
    /// ordered domain, the child of the box's lowest common ancestor on a hierarchy.
    pub(super) fn part(&self, extents: &[Extent], j: usize, row: u32) -> u32 {
        let key = self.key(row)[j];
        match (extents[j], &self.dimensions[j]) {
            (Extent::Node { level, .. }, Dimension::Hierarchy { map, .. }) if level > 0 => {
                map.codes(level - 1)[key as usize]
            }
            _ => key,
        }
    }

    /// The published cells of a box.
    pub(super) fn cells<'s>(
        &'s self,
        extents: &'s [Extent],
    ) -> impl Iterator<Item = RecodedCell> + 's {
        extents
            .iter()
            .zip(&self.dimensions)
            .map(|(extent, dimension)| match (*extent, dimension) {
                (Extent::Range { low, high }, _) => RecodedCell::Range { low, high },
                (Extent::Node { level, anchor }, Dimension::Hierarchy { map, .. }) => {
                    RecodedCell::Node {
                        level: level as u8,
                        label: map.codes(level)[anchor as usize],
                    }
                }
                (_, Dimension::Hierarchy { map, .. }) => RecodedCell::Node {
                    level: map.max_level() as u8,
                    label: map.codes(map.max_level()).first().copied().unwrap_or(0),
                },
                (_, Dimension::Ordered { .. }) => RecodedCell::Range { low: 0, high: 0 },
            })
    }
}
