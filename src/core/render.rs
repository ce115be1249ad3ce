//! How an outcome is written: quasi-identifiers as their labels at the chosen level, suppressed records
//! masked with `*` in every quasi-identifier (ARX's behaviour) or left out, identifying columns dropped,
//! other columns verbatim.

use super::data::{Column, GeneralizationMap};
use super::identifiers::OperatedTexts;

/// The text written for a suppressed quasi-identifier cell.
pub const SUPPRESSED: &str = "*";

/// The group of a suppressed record (local recoding).
pub const SUPPRESSED_GROUP: u32 = u32::MAX;

/// The distinct cell texts of one quasi-identifier and the text of each group, as a local recoding
/// publishes them (built by `core::local`, which knows the cells; written here, which knows only texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellTexts {
    texts: Vec<String>,
    text_of_group: Vec<u32>,
}

impl CellTexts {
    /// Texts `texts`, and for every group the index of its text.
    pub(crate) fn from_parts(texts: Vec<String>, text_of_group: Vec<u32>) -> Self {
        Self {
            texts,
            text_of_group,
        }
    }

    /// The text group `group` publishes.
    pub fn text(&self, group: u32) -> &str {
        &self.texts[self.text_of_group[group as usize] as usize]
    }

    /// The id of the text group `group` publishes (equal ids, equal texts).
    pub fn text_id(&self, group: u32) -> u32 {
        self.text_of_group[group as usize]
    }
}

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
    /// Written as the cell of the record's group (local recoding).
    Recoded {
        /// The original column.
        column: &'a Column,
        /// The group of each record ([`SUPPRESSED_GROUP`] when suppressed).
        group_of: &'a [u32],
        /// The text of every group's cell.
        texts: &'a CellTexts,
    },
    /// An identifying column written through an operator (pseudonym, mask, constant).
    Operated {
        /// The original column.
        column: &'a Column,
        /// The published text of each of its codes.
        texts: &'a OperatedTexts,
        /// The operator's name (`pseudonym`, `mask`, `replace`).
        operator: &'static str,
    },
}

impl OutputColumn<'_> {
    fn name(&self) -> &str {
        match self {
            OutputColumn::Verbatim(c)
            | OutputColumn::Generalized { column: c, .. }
            | OutputColumn::Recoded { column: c, .. }
            | OutputColumn::Operated { column: c, .. } => &c.name,
        }
    }
}

/// A view of the anonymized table.
#[derive(Debug)]
pub struct Rendering<'a> {
    columns: Vec<OutputColumn<'a>>,
    suppressed: &'a [bool],
    remove_suppressed: bool,
    order: Option<&'a [u32]>,
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
            order: None,
        }
    }

    /// Writes the records in `order` (a permutation of the records) instead of input order.
    pub fn with_order(mut self, order: &'a [u32]) -> Self {
        self.order = Some(order);
        self
    }

    /// Output column names.
    pub fn header(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name()).collect()
    }

    /// Whether output column `column` is a generalized quasi-identifier.
    pub fn is_generalized(&self, column: usize) -> bool {
        matches!(
            self.columns[column],
            OutputColumn::Generalized { .. } | OutputColumn::Recoded { .. }
        )
    }

    /// Whether record `row` is suppressed.
    pub fn is_suppressed(&self, row: usize) -> bool {
        self.suppressed[row]
    }

    /// Whether output column `column` is an identifying column written through an operator.
    pub fn is_operated(&self, column: usize) -> bool {
        self.operator(column).is_some()
    }

    /// The operator of output column `column` when it is an identifying column written through one.
    pub fn operator(&self, column: usize) -> Option<&'static str> {
        match self.columns[column] {
            OutputColumn::Operated { operator, .. } => Some(operator),
            _ => None,
        }
    }

    /// Records that appear in the output, in output order (input order unless an order was given).
    pub fn rows(&self) -> impl Iterator<Item = usize> + '_ {
        let all: Box<dyn Iterator<Item = usize> + '_> = match self.order {
            Some(order) => Box::new(order.iter().map(|&r| r as usize)),
            None => Box::new(0..self.suppressed.len()),
        };
        all.filter(move |&r| !(self.remove_suppressed && self.suppressed[r]))
    }

    /// The original column behind output column `column`.
    pub fn source(&self, column: usize) -> &'a Column {
        match self.columns[column] {
            OutputColumn::Verbatim(c)
            | OutputColumn::Generalized { column: c, .. }
            | OutputColumn::Recoded { column: c, .. }
            | OutputColumn::Operated { column: c, .. } => c,
        }
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
            OutputColumn::Recoded {
                group_of, texts, ..
            } => match group_of[row] {
                SUPPRESSED_GROUP => SUPPRESSED,
                group => texts.text(group),
            },
            // a suppressed record's identifier would link it to releases where it is not suppressed
            OutputColumn::Operated { column, texts, .. } => {
                if self.suppressed[row] {
                    SUPPRESSED
                } else {
                    texts.text(column.codes[row])
                }
            }
        }
    }
}
