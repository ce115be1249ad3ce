//! The generalized cells of a published table, column by column: the input of every information-loss
//! measure (Hsu 2008, Def 2.3.4; `notes/hsu-2008-sensitive-attribute-protection.md` §1.3 and §3).
//!
//! A generalized cell is a *set* of original values. Each quasi-identifier column gives every record a
//! cell id, and each cell lists the original codes it covers. Nothing requires records with the same
//! original value to share a cell, so local recoding (records of one value split over several cells) fits
//! the same input as full-domain generalization; [`CellColumn::full_domain`] builds the latter from a
//! [`GeneralizationMap`] at the outcome's levels, with suppressed records in the hierarchy's root cell.
//!
//! Published classes are formed by cell ids: two records are in the same class when they have the same
//! cell id in every column. Builders give one id per distinct published cell.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use crate::core::data::GeneralizationMap;
use crate::core::local::{Domain, RecodedCell, Recoding, SUPPRESSED_GROUP};

/// A cell's place in a balanced hierarchy: level `level` of levels `0..=top` (Hsu §4.1: `L_0` are the
/// leaves, `L_top` the root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreePosition {
    /// The cell's level (0 = original value).
    pub level: u32,
    /// The hierarchy's top level (height − 1).
    pub top: u32,
}

/// One generalized cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellCover {
    /// Original column codes the cell covers, ascending and distinct.
    pub covers: Vec<u32>,
    /// Where the cell sits in its hierarchy, when it is a hierarchy node (needed by the tree measure only).
    pub tree: Option<TreePosition>,
}

/// One quasi-identifier column of a published table.
#[derive(Debug, Clone)]
pub struct CellColumn<'a> {
    /// Column name (for reports only).
    pub name: &'a str,
    /// Original code per record.
    pub codes: &'a [u32],
    /// Number of distinct original codes (codes are `0..domain`).
    pub domain: usize,
    /// The id of each record's cell.
    pub cell_of: CellIds<'a>,
    /// Cells by id.
    pub cells: Vec<CellCover>,
    /// Each code's place in an order of the codes in which every cell covers consecutive places (the
    /// rank order of an ordered domain, the leaf order of a tree hierarchy); empty when no such order is
    /// known. Box counting over overlapping cells uses it ([`super::box_counts`]).
    pub position: Vec<u32>,
}

/// The cell id of every record, without a per-record array when it can be looked up: record `r`
/// has the id `table[keys[r]]` (the key itself when there is no table), or `root` when it is hidden
/// (suppressed). At 10M records and six quasi-identifiers, listing the ids would cost 240 MB.
#[derive(Debug, Clone)]
pub struct CellIds<'a> {
    keys: Cow<'a, [u32]>,
    /// Key → cell id; empty when the keys are the ids.
    table: Vec<u32>,
    hidden: Hidden<'a>,
    root: u32,
}

/// Which records show the root cell whatever their key.
#[derive(Debug, Clone, Copy)]
enum Hidden<'a> {
    None,
    /// The records `mask` marks.
    Mask(&'a [bool]),
    /// The records whose key is this value.
    Key(u32),
}

impl CellIds<'_> {
    /// The cell id of record `r`.
    #[inline]
    pub fn get(&self, r: usize) -> u32 {
        let key = self.keys[r];
        let hidden = match self.hidden {
            Hidden::None => false,
            Hidden::Mask(mask) => mask[r],
            Hidden::Key(k) => key == k,
        };
        if hidden {
            self.root
        } else if self.table.is_empty() {
            key
        } else {
            self.table[key as usize]
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The cell ids of every record, in record order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|r| self.get(r))
    }
}

impl From<Vec<u32>> for CellIds<'_> {
    /// Ids listed record by record.
    fn from(ids: Vec<u32>) -> Self {
        Self {
            keys: Cow::Owned(ids),
            table: Vec::new(),
            hidden: Hidden::None,
            root: 0,
        }
    }
}

impl CellColumn<'_> {
    /// For each original code, the ids of the cells that cover it.
    pub fn covering(&self) -> Vec<Vec<u32>> {
        covering(&self.cells, self.domain)
    }
}

#[cfg(test)]
impl<'a> CellColumn<'a> {
    /// A column from each record's cell id and each cell's covered codes (tests).
    pub(crate) fn from_cells(
        name: &'a str,
        codes: &'a [u32],
        domain: usize,
        ids: &[u32],
        covers: &[&[u32]],
    ) -> Self {
        CellColumn {
            name,
            codes,
            domain,
            cell_of: ids.to_vec().into(),
            cells: covers
                .iter()
                .map(|c| CellCover {
                    covers: c.to_vec(),
                    tree: None,
                })
                .collect(),
            position: Vec::new(),
        }
    }
}

impl<'a> CellColumn<'a> {
    /// The column as full-domain generalization publishes it: every kept record gets the label of its value
    /// at `level`, and a suppressed record the hierarchy's root (`*`). Cell ids are label codes at `level`;
    /// below the top level the root gets one extra id.
    pub fn full_domain(
        name: &'a str,
        codes: &'a [u32],
        map: &GeneralizationMap,
        level: usize,
        suppressed: &'a [bool],
    ) -> Self {
        let labels = map.codes(level);
        let domain = labels.len();
        let top = map.max_level();
        let mut cells: Vec<CellCover> = (0..map.label_count(level))
            .map(|_| CellCover {
                covers: Vec::new(),
                tree: Some(TreePosition {
                    level: level as u32,
                    top: top as u32,
                }),
            })
            .collect();
        for (code, &label) in labels.iter().enumerate() {
            cells[label as usize].covers.push(code as u32);
        }
        let root = if level == top {
            // the single top label covers everything
            0
        } else {
            cells.push(CellCover {
                covers: (0..domain as u32).collect(),
                tree: Some(TreePosition {
                    level: top as u32,
                    top: top as u32,
                }),
            });
            cells.len() as u32 - 1
        };
        let cell_of = CellIds {
            keys: Cow::Borrowed(codes),
            table: labels.to_vec(),
            hidden: Hidden::Mask(suppressed),
            root,
        };
        Self {
            name,
            codes,
            domain,
            cell_of,
            cells,
            // the cells of one level are disjoint: box counting never needs an order here
            position: Vec::new(),
        }
    }

    /// Quasi-identifier `qi` of a local recoding: one cell per distinct published cell, and one covering
    /// the whole domain for suppressed records (the hierarchy's root, or every rank).
    pub fn local(
        name: &'a str,
        codes: &'a [u32],
        domain: Domain<'_>,
        recoding: &'a Recoding,
        qi: usize,
    ) -> Self {
        let (size, top) = match domain {
            Domain::Hierarchy(map) => (map.codes(0).len(), Some(map.max_level() as u32)),
            Domain::Ordered(order) => (order.len(), None),
        };
        let position = positions(domain);
        let covered = |cell: RecodedCell| -> CellCover {
            match (cell, domain) {
                (RecodedCell::Node { level, label }, Domain::Hierarchy(map)) => CellCover {
                    covers: (0..size as u32)
                        .filter(|&c| map.codes(level as usize)[c as usize] == label)
                        .collect(),
                    tree: top.map(|top| TreePosition {
                        level: u32::from(level),
                        top,
                    }),
                },
                (RecodedCell::Range { low, high }, Domain::Ordered(order)) => {
                    let mut covers: Vec<u32> = (low..=high).map(|r| order.code_at(r)).collect();
                    covers.sort_unstable();
                    CellCover { covers, tree: None }
                }
                _ => CellCover {
                    covers: (0..size as u32).collect(),
                    tree: None,
                },
            }
        };
        let mut ids: FxHashMap<RecodedCell, u32> = FxHashMap::default();
        let mut cells = Vec::new();
        let group_cell: Vec<u32> = (0..recoding.groups() as u32)
            .map(|g| {
                let cell = recoding.cell(g, qi);
                *ids.entry(cell).or_insert_with(|| {
                    cells.push(covered(cell));
                    cells.len() as u32 - 1
                })
            })
            .collect();
        let root = cells.len() as u32;
        cells.push(CellCover {
            covers: (0..size as u32).collect(),
            tree: top.map(|top| TreePosition { level: top, top }),
        });
        let cell_of = CellIds {
            keys: Cow::Borrowed(recoding.group_of()),
            table: group_cell,
            hidden: Hidden::Key(SUPPRESSED_GROUP),
            root,
        };
        Self {
            name,
            codes,
            domain: size,
            cell_of,
            cells,
            position,
        }
    }

    /// Whether `cell` covers the whole domain of the column.
    pub fn covers_all(&self, cell: u32) -> bool {
        self.cells[cell as usize].covers.len() == self.domain
    }

    /// Whether `cell` is a redaction (a fully suppressed cell, `*`): the root of its hierarchy, or, for a
    /// cell outside any hierarchy, a cell covering every value of the column.
    pub fn is_redacted(&self, cell: u32) -> bool {
        match self.cells[cell as usize].tree {
            Some(TreePosition { level, top }) => level == top,
            None => self.covers_all(cell),
        }
    }

    /// Number of records.
    pub fn rows(&self) -> usize {
        self.codes.len()
    }
}

/// For each of `domain` original codes, the ids (positions in `cells`) of the cells that cover it.
pub fn covering(cells: &[CellCover], domain: usize) -> Vec<Vec<u32>> {
    let mut covering = vec![Vec::new(); domain];
    for (id, cell) in cells.iter().enumerate() {
        for &code in &cell.covers {
            covering[code as usize].push(id as u32);
        }
    }
    covering
}

/// Each code's place in an order in which every cell of `domain` covers consecutive places: the leaf
/// order of a hierarchy, the rank order of an ordered domain.
pub fn positions(domain: Domain<'_>) -> Vec<u32> {
    match domain {
        Domain::Hierarchy(map) => leaf_positions(map),
        Domain::Ordered(order) => (0..order.len() as u32).map(|c| order.rank(c)).collect(),
    }
}

/// Each leaf code's place when the leaves are sorted by their path from the top of the hierarchy down:
/// in a tree, the leaves under any node are then consecutive.
fn leaf_positions(map: &GeneralizationMap) -> Vec<u32> {
    let leaves = map.codes(0).len();
    let levels: Vec<&[u32]> = (1..=map.max_level()).rev().map(|l| map.codes(l)).collect();
    let mut order: Vec<u32> = (0..leaves as u32).collect();
    order.sort_by(|&a, &b| {
        levels
            .iter()
            .map(|codes| codes[a as usize].cmp(&codes[b as usize]))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| a.cmp(&b))
    });
    let mut position = vec![0u32; leaves];
    for (place, &code) in order.iter().enumerate() {
        position[code as usize] = place as u32;
    }
    position
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{Hierarchy, Table};

    #[test]
    fn full_domain_cells_follow_the_levels_and_suppression() {
        let table = Table::from_rows(&["zip"], &[vec!["1302"], vec!["1301"], vec!["1401"]]);
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301", "130*", "*"],
            vec!["1302", "130*", "*"],
            vec!["1401", "140*", "*"],
        ];
        let h = Hierarchy::from_rows(&rows).unwrap();
        let map = GeneralizationMap::bind(h, table.column(0)).unwrap();
        let codes = &table.column(0).codes;
        let c = CellColumn::full_domain("zip", codes, &map, 1, &[false, false, true]);
        // 1302 and 1301 share 130*; the suppressed 1401 goes to the extra root cell
        assert_eq!(c.cell_of.get(0), c.cell_of.get(1));
        assert_eq!(c.cells[c.cell_of.get(0) as usize].covers, vec![0, 1]);
        assert_eq!(c.cell_of.get(2), 2);
        assert!(c.is_redacted(2));
        assert!(!c.is_redacted(c.cell_of.get(0)));
        assert_eq!(c.cells[2].covers, vec![0, 1, 2]);
        let top = CellColumn::full_domain("zip", codes, &map, 2, &[false, false, true]);
        assert_eq!(top.cells.len(), 1);
        assert!(top.cell_of.iter().all(|id| id == 0));
        assert!(top.is_redacted(0));
        let bottom = CellColumn::full_domain("zip", codes, &map, 0, &[false; 3]);
        // level-0 cell ids are the hierarchy's leaf codes; each covers exactly the record's own value
        for (&code, cell) in codes.iter().zip(bottom.cell_of.iter()) {
            assert_eq!(bottom.cells[cell as usize].covers, vec![code]);
        }
        assert!(!bottom.is_redacted(0));
    }
}
