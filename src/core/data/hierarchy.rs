//! Generalization hierarchies: validated trees of labels (level 0 = original value, last level = one top
//! value), and their binding to an encoded column as flat `level × code → label` arrays (Issa 2009, §2.5 B).
//!
//! Invariants checked on construction: every row has the same number of levels, each label at level `l`
//! has exactly one parent at level `l + 1` (so generalization is a function and monotonicity holds), and
//! the top level has a single value. Error messages name lines and levels, never labels, because leaf labels
//! are data values.

use super::dictionary::Dictionary;
use super::table::Column;

/// What is wrong with a hierarchy's structure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HierarchyError {
    /// No rows at all.
    #[error("the hierarchy has no rows")]
    Empty,
    /// A row with no label.
    #[error("line {line}: the row is empty")]
    EmptyRow {
        /// 1-based row number.
        line: usize,
    },
    /// Rows of different lengths.
    #[error("line {line} has {found} levels but line 1 has {expected}; every row needs the same number of levels")]
    RaggedRow {
        /// 1-based row number.
        line: usize,
        /// Levels on that row.
        found: usize,
        /// Levels on the first row.
        expected: usize,
    },
    /// A label with two different parents.
    #[error("line {line}: the label at level {level} generalizes to a different level-{} label than on line {first_line}; each value must map to exactly one value at the next level", level + 1)]
    AmbiguousParent {
        /// 1-based row number of the conflicting row.
        line: usize,
        /// Level of the label whose parent conflicts.
        level: usize,
        /// 1-based row number where the first parent was given.
        first_line: usize,
    },
    /// More than one top value.
    #[error(
        "the top level has {distinct} distinct values; a hierarchy needs exactly one top value"
    )]
    SeveralTops {
        /// Distinct labels at the last level.
        distinct: usize,
    },
}

/// A validated generalization hierarchy, independent of any column.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    levels: Vec<Dictionary>,
    parents: Vec<Vec<u32>>,
    leaf_counts: Vec<Vec<u64>>,
    repeated_rows: usize,
    /// The original values below the first level: its own labels, except in a window
    /// ([`GeneralizationMap::window`]), whose first level is a level above the original values.
    leaves: usize,
}

impl Hierarchy {
    /// Validates rows of labels (`row[0]` is the original value, `row[last]` the top) into a hierarchy.
    pub fn from_rows<S: AsRef<str>>(rows: &[Vec<S>]) -> Result<Self, HierarchyError> {
        let first = rows.first().ok_or(HierarchyError::Empty)?;
        let height = first.len();
        if height == 0 {
            return Err(HierarchyError::EmptyRow { line: 1 });
        }
        let mut levels = vec![Dictionary::new(); height];
        // parent code and the line that set it, per level
        let mut parents: Vec<Vec<(u32, usize)>> = vec![Vec::new(); height.saturating_sub(1)];
        for (index, row) in rows.iter().enumerate() {
            let line = index + 1;
            if row.is_empty() {
                return Err(HierarchyError::EmptyRow { line });
            }
            if row.len() != height {
                return Err(HierarchyError::RaggedRow {
                    line,
                    found: row.len(),
                    expected: height,
                });
            }
            let codes: Vec<u32> = row
                .iter()
                .zip(levels.iter_mut())
                .map(|(label, dict)| dict.intern(label.as_ref()))
                .collect();
            for level in 0..height - 1 {
                let (child, parent) = (codes[level] as usize, codes[level + 1]);
                let table = &mut parents[level];
                if child == table.len() {
                    table.push((parent, line));
                } else if table[child].0 != parent {
                    return Err(HierarchyError::AmbiguousParent {
                        line,
                        level,
                        first_line: table[child].1,
                    });
                }
            }
        }
        let top = levels[height - 1].len();
        if top != 1 {
            return Err(HierarchyError::SeveralTops { distinct: top });
        }
        let parents: Vec<Vec<u32>> = parents
            .into_iter()
            .map(|t| t.into_iter().map(|(p, _)| p).collect())
            .collect();
        let mut leaf_counts: Vec<Vec<u64>> = levels.iter().map(|d| vec![0; d.len()]).collect();
        for leaf in 0..levels[0].len() as u32 {
            let mut code = leaf;
            leaf_counts[0][code as usize] += 1;
            for level in 0..height - 1 {
                code = parents[level][code as usize];
                leaf_counts[level + 1][code as usize] += 1;
            }
        }
        let repeated_rows = rows.len() - levels[0].len();
        let leaves = levels[0].len();
        Ok(Self {
            levels,
            parents,
            leaf_counts,
            repeated_rows,
            leaves,
        })
    }

    /// Rows that repeated an earlier row's original value (with the same ancestors) and were counted
    /// once. ARX counts each row, so loss measures that weigh hierarchy leaves differ from its figures.
    pub fn repeated_rows(&self) -> usize {
        self.repeated_rows
    }

    /// Number of levels, the original values included (a hierarchy `value;*` has height 2).
    pub fn height(&self) -> usize {
        self.levels.len()
    }

    /// Number of original values (leaves) the hierarchy defines.
    pub fn leaf_count(&self) -> usize {
        self.leaves
    }

    /// Labels of one level.
    pub fn labels(&self, level: usize) -> &Dictionary {
        &self.levels[level]
    }

    /// Leaves below the label `code` of `level` (1 for every leaf).
    pub fn leaves_under(&self, level: usize, code: u32) -> u64 {
        self.leaf_counts[level][code as usize]
    }

    /// The ancestor at `level` of the leaf `leaf`.
    pub fn ancestor(&self, leaf: u32, level: usize) -> u32 {
        let mut code = leaf;
        for parents in &self.parents[..level] {
            code = parents[code as usize];
        }
        code
    }
}

/// A hierarchy bound to one column: `codes(level)[column code]` is the label code at that level.
#[derive(Debug, Clone)]
pub struct GeneralizationMap {
    hierarchy: Hierarchy,
    by_level: Vec<Vec<u32>>,
}

/// A column holds values its hierarchy does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the hierarchy of column '{column}' does not cover {uncovered} of the column's {distinct} distinct values")]
pub struct UncoveredValues {
    /// Column name.
    pub column: String,
    /// Distinct column values missing from the hierarchy's first level.
    pub uncovered: usize,
    /// Distinct values in the column.
    pub distinct: usize,
}

impl GeneralizationMap {
    /// Binds `hierarchy` to `column`; every distinct value of the column must be a leaf.
    pub fn bind(hierarchy: Hierarchy, column: &Column) -> Result<Self, UncoveredValues> {
        let distinct = column.dictionary.len();
        let mut leaves = Vec::with_capacity(distinct);
        let mut uncovered = 0;
        for value in column.dictionary.values() {
            match hierarchy.labels(0).code(value) {
                Some(leaf) => leaves.push(leaf),
                None => uncovered += 1,
            }
        }
        if uncovered > 0 {
            return Err(UncoveredValues {
                column: column.name.clone(),
                uncovered,
                distinct,
            });
        }
        let by_level = (0..hierarchy.height())
            .map(|level| {
                leaves
                    .iter()
                    .map(|&leaf| hierarchy.ancestor(leaf, level))
                    .collect()
            })
            .collect();
        Ok(Self {
            hierarchy,
            by_level,
        })
    }

    /// The underlying hierarchy.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// Highest generalization level (height − 1).
    pub fn max_level(&self) -> usize {
        self.by_level.len() - 1
    }

    /// Label codes at `level`, indexed by column code.
    pub fn codes(&self, level: usize) -> &[u32] {
        &self.by_level[level]
    }

    /// Number of labels at `level` (an upper bound on distinct generalized values).
    pub fn label_count(&self, level: usize) -> usize {
        self.hierarchy.labels(level).len()
    }

    /// The text of the label a column code takes at `level`.
    pub fn label(&self, level: usize, column_code: u32) -> &str {
        self.hierarchy
            .labels(level)
            .value(self.by_level[level][column_code as usize])
    }

    /// The same column generalized only between levels `lowest` and `highest` of this map (both within
    /// `0..=max_level`, `lowest ≤ highest`): level `l` of the window is level `lowest + l` here. The
    /// window's hierarchy keeps counting original values as leaves ([`Hierarchy::leaves_under`],
    /// [`Hierarchy::leaf_count`]), so loss measures over it are those of the levels it stands for.
    pub fn window(&self, lowest: usize, highest: usize) -> Self {
        let h = &self.hierarchy;
        Self {
            hierarchy: Hierarchy {
                levels: h.levels[lowest..=highest].to_vec(),
                parents: h.parents[lowest..highest].to_vec(),
                leaf_counts: h.leaf_counts[lowest..=highest].to_vec(),
                repeated_rows: h.repeated_rows,
                leaves: h.leaves,
            },
            by_level: self.by_level[lowest..=highest].to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::table::Table;

    fn rows(text: &str) -> Vec<Vec<String>> {
        text.lines()
            .map(|l| l.split(';').map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn marital_status_matches_issa_table_18() {
        // Issa 2009, Table 18: divorced, married, widow -> been married; single -> never married.
        let h = Hierarchy::from_rows(&rows(
            "divorced;been married;*\nmarried;been married;*\nsingle;never married;*\nwidow;been married;*",
        ))
        .unwrap();
        assert_eq!(h.height(), 3);
        assert_eq!(h.leaf_count(), 4);
        let single = h.labels(0).code("single").unwrap();
        assert_eq!(h.labels(1).value(h.ancestor(single, 1)), "never married");
        let been = h.labels(1).code("been married").unwrap();
        assert_eq!(h.leaves_under(1, been), 3);
        assert_eq!(h.leaves_under(2, 0), 4);
    }

    #[test]
    fn rejects_structural_errors() {
        assert_eq!(
            Hierarchy::from_rows::<String>(&[]).unwrap_err(),
            HierarchyError::Empty
        );
        assert_eq!(
            Hierarchy::from_rows(&rows("a;x;*\nb;*")).unwrap_err(),
            HierarchyError::RaggedRow {
                line: 2,
                found: 2,
                expected: 3
            }
        );
        assert_eq!(
            Hierarchy::from_rows(&rows("a;x;*\nb;x;*\nc;y;*\nd;y;+")).unwrap_err(),
            HierarchyError::AmbiguousParent {
                line: 4,
                level: 1,
                first_line: 3
            }
        );
        assert_eq!(
            Hierarchy::from_rows(&rows("a;x\nb;y")).unwrap_err(),
            HierarchyError::SeveralTops { distinct: 2 }
        );
        // the same leaf listed twice with the same parents is accepted
        assert!(Hierarchy::from_rows(&rows("a;x;*\na;x;*")).is_ok());
        assert!(matches!(
            Hierarchy::from_rows(&rows("a;x;*\na;y;*")).unwrap_err(),
            HierarchyError::AmbiguousParent { level: 0, .. }
        ));
    }

    #[test]
    fn binding_counts_uncovered_values() {
        let table = Table::from_rows(&["c"], &[vec!["a"], vec!["q"], vec!["r"], vec!["a"]]);
        let h = Hierarchy::from_rows(&rows("a;*\nb;*")).unwrap();
        let err = GeneralizationMap::bind(h.clone(), table.column(0)).unwrap_err();
        assert_eq!(err.uncovered, 2);
        assert_eq!(err.distinct, 3);
        assert!(!err.to_string().contains('q'));
        let table = Table::from_rows(&["c"], &[vec!["b"], vec!["a"]]);
        let map = GeneralizationMap::bind(h, table.column(0)).unwrap();
        assert_eq!(map.codes(0), &[1, 0]);
        assert_eq!(map.codes(1), &[0, 0]);
        assert_eq!(map.label(1, 0), "*");
        assert_eq!(map.max_level(), 1);
    }

    /// A window's level l is the map's level lowest + l, and its leaves stay the original values.
    #[test]
    fn window_shifts_levels_and_keeps_the_original_leaves() {
        let h = Hierarchy::from_rows(&rows("1;1-2;1-4;*\n2;1-2;1-4;*\n3;3-4;1-4;*\n4;3-4;1-4;*"))
            .unwrap();
        let table = Table::from_rows(&["c"], &[vec!["3"], vec!["1"], vec!["4"]]);
        let map = GeneralizationMap::bind(h, table.column(0)).unwrap();
        let window = map.window(1, 2);
        assert_eq!(window.max_level(), 1);
        for code in 0..3 {
            assert_eq!(window.label(0, code), map.label(1, code));
            assert_eq!(window.label(1, code), map.label(2, code));
            assert_eq!(window.codes(1)[code as usize], map.codes(2)[code as usize]);
        }
        assert_eq!(window.hierarchy().leaf_count(), 4);
        let low = window.hierarchy().labels(0).code("3-4").unwrap();
        assert_eq!(window.hierarchy().leaves_under(0, low), 2);
        assert_eq!(window.hierarchy().leaves_under(1, 0), 4);
        assert_eq!(window.label_count(0), 2);
        // the top alone, and the original values alone
        assert_eq!(map.window(3, 3).label(0, 1), "*");
        assert_eq!(map.window(0, 0).label(0, 1), "1");
    }
}
