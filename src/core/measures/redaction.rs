//! Redaction counting (Meyerson & Williams) and the tree measure (Aggarwal et al.), as Hsu (2008, §4.1)
//! restates them; `notes/hsu-2008-sensitive-attribute-protection.md` §3.1.
//!
//! - Redaction counting: the number of fully suppressed cells (`*`, see [`CellColumn::is_redacted`]). A
//!   suppressed record is published as `*` in every quasi-identifier, so it counts once per column.
//! - Tree measure: a cell at level `r` of a balanced hierarchy with levels `0..=l` costs `r/l`; summed
//!   over cells. With `l = 1` (suppression only) it is redaction counting. Equivalently it is redaction
//!   counting over the `l` path columns of each attribute, weighted by `1/l` (the weight the thesis omits,
//!   note §8 item 6). A one-level hierarchy (`l = 0`) costs 0. The measure is defined only when every
//!   published cell is a hierarchy node; otherwise it is `None`.
//!
//! Both are monotone: a coarser cell is never at a lower level, and never less suppressed.

use super::cells::{CellColumn, TreePosition};

/// The redactions and tree cost of one column.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RedactionLoss {
    /// Fully suppressed cells.
    pub redactions: u64,
    /// `Σ r/l` over cells, when every cell is a hierarchy node.
    pub tree: Option<f64>,
}

impl RedactionLoss {
    /// Counts over the records of `column`.
    pub fn of(column: &CellColumn<'_>) -> Self {
        let redacted: Vec<bool> = (0..column.cells.len() as u32)
            .map(|id| column.is_redacted(id))
            .collect();
        let cost: Vec<Option<f64>> = column
            .cells
            .iter()
            .map(|c| {
                c.tree.map(|TreePosition { level, top }| {
                    if top == 0 {
                        0.0
                    } else {
                        f64::from(level) / f64::from(top)
                    }
                })
            })
            .collect();
        let mut redactions = 0;
        let mut levels_sum = Some(0.0);
        for cell in column.cell_of.iter() {
            redactions += u64::from(redacted[cell as usize]);
            levels_sum = match (levels_sum, cost[cell as usize]) {
                (Some(sum), Some(c)) => Some(sum + c),
                _ => None,
            };
        }
        Self {
            redactions,
            tree: levels_sum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::measures::cells::CellCover;

    fn node(covers: &[u32], level: u32, top: u32) -> CellCover {
        CellCover {
            covers: covers.to_vec(),
            tree: Some(TreePosition { level, top }),
        }
    }

    /// A 4-level tree (`l = 3`, e.g. Canada → North America → Americas → *): records at levels 0, 1, 2
    /// and 3 cost 0 + 1/3 + 2/3 + 1 = 2, and only the root is a redaction.
    #[test]
    fn tree_cost_is_level_over_height() {
        let codes = [0, 0, 0, 0];
        let c = CellColumn {
            name: "country",
            codes: &codes,
            domain: 2,
            cell_of: vec![0, 1, 2, 3].into(),
            cells: vec![
                node(&[0], 0, 3),
                node(&[0], 1, 3),
                node(&[0, 1], 2, 3),
                node(&[0, 1], 3, 3),
            ],
            position: Vec::new(),
        };
        let loss = RedactionLoss::of(&c);
        assert_eq!(loss.redactions, 1);
        assert!((loss.tree.unwrap() - 2.0).abs() < 1e-12);
    }

    /// A cell outside any hierarchy is a redaction when it covers the whole column, and the tree measure
    /// is then undefined.
    #[test]
    fn cells_outside_hierarchies() {
        let codes = [0, 1, 2];
        let plain = |covers: &[u32]| CellCover {
            covers: covers.to_vec(),
            tree: None,
        };
        let c = CellColumn {
            name: "age",
            codes: &codes,
            domain: 3,
            cell_of: vec![0, 0, 1].into(),
            cells: vec![plain(&[0, 1]), plain(&[0, 1, 2])],
            position: Vec::new(),
        };
        let loss = RedactionLoss::of(&c);
        assert_eq!(loss.redactions, 1);
        assert_eq!(loss.tree, None);
    }
}
