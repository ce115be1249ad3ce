//! How an outcome is written: quasi-identifiers as their labels at the chosen level, suppressed records
//! masked with `*` in every quasi-identifier (ARX's behaviour) or left out, identifying columns dropped,
//! other columns verbatim.

use super::data::{Column, GeneralizationMap};

/// The text written for a suppressed quasi-identifier cell.
pub const SUPPRESSED: &str = "*";

/// One column of the output.
#[derive(Debug, Clone, Copy)]
pub enum OutputColumn<'a> {
    /// Written as it is.
    Verbatim(&'a Column),
    /// Written generalized to `level`.
    Generalized {
        /// The original column.
        column: &'a Column,
        /// Its hierarchy.
        hierarchy: &'a GeneralizationMap,
        /// The chosen level.
        level: usize,
    },
}

impl OutputColumn<'_> {
    fn name(&self) -> &str {
        match self {
            OutputColumn::Verbatim(c) | OutputColumn::Generalized { column: c, .. } => &c.name,
        }
    }
}

/// A view of the anonymized table.
#[derive(Debug)]
pub struct Rendering<'a> {
    columns: Vec<OutputColumn<'a>>,
    suppressed: &'a [bool],
    remove_suppressed: bool,
}

impl<'a> Rendering<'a> {
    /// Columns in output order; `suppressed[r]` marks suppressed records.
    pub fn new(
        columns: Vec<OutputColumn<'a>>,
        suppressed: &'a [bool],
        remove_suppressed: bool,
    ) -> Self {
        Self {
            columns,
            suppressed,
            remove_suppressed,
        }
    }

    /// Output column names.
    pub fn header(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name()).collect()
    }

    /// Whether output column `column` is a generalized quasi-identifier.
    pub fn is_generalized(&self, column: usize) -> bool {
        matches!(self.columns[column], OutputColumn::Generalized { .. })
    }

    /// Records that appear in the output, in input order.
    pub fn rows(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.suppressed.len()).filter(move |&r| !(self.remove_suppressed && self.suppressed[r]))
    }

    /// The text of output column `column` for record `row`.
    pub fn cell(&self, row: usize, column: usize) -> &'a str {
        match self.columns[column] {
            OutputColumn::Verbatim(c) => c.dictionary.value(c.codes[row]),
            OutputColumn::Generalized {
                column: c,
                hierarchy,
                level,
            } => {
                if self.suppressed[row] {
                    SUPPRESSED
                } else {
                    hierarchy.label(level, c.codes[row])
                }
            }
        }
    }
}
