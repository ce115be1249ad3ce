//! The loss measures of a published table against its original, whoever produced the table
//! (`anonymizer assess --published`, `POST /v1/jobs/{id}/assessments`): the measures of the report
//! (`loss_measures`, Hsu 2008 §3–4 and `notes/hsu-2008-sensitive-attribute-protection.md`; the
//! `dependencies` section, Gorla 2019) computed from the published texts, not from the engine's
//! recoding. On the engine's own output they equal the job report's.
//!
//! **Reading.** The job spec says how each quasi-identifier generalizes, and each published cell is read
//! back as the set of original values it covers ([`CellReader`]): a value of the column; a label of the
//! column's hierarchy (at the lowest level that has it); `[low .. high]` over an ordered column, by
//! position when both ends are values of the column, else by number for a numeric column; `*`, every
//! value. Any other text is an error naming the column, never the text.
//!
//! **Pairing.** The measures compare each record's original values with its published cells, so every
//! published row is paired with one record ([`pair`]):
//! - *by order* when the published rows are the records in their original order (full-domain outputs),
//!   each row covering its record; when suppressed records are removed, a record the next row does not
//!   cover is taken as removed;
//! - otherwise *by content* (local recodings publish their records class by class): the records with
//!   the same original values are given to published classes (same cells, same verbatim values) whose
//!   cells cover them, the records with a single such class first. Records of equal values are
//!   indistinguishable to every measure, so the pairing is exact whenever each record's values have a
//!   single covering class (full-domain outputs); with overlapping cells (Mondrian, clustering) it is
//!   one valid pairing, and the measures of a record against its own class (mean volume inflation, the
//!   hybrid variance measure) may differ slightly from the engine's pairing. Rows that cannot be paired
//!   are an error.
//!
//! Removed records are measured as the job report measures them: as suppressed, with `*` cells.

use serde::Serialize;

use crate::core::data::{Column, Table};
use crate::core::local::Domain;
use crate::core::measures::{positions, CellColumn, CellCover, Classes, LossMeasures};
use crate::core::render::SUPPRESSED;
mod pairing;
mod reader;

use pairing::{pair, Rows};
use reader::CellReader;

use crate::domain::analysis::dependencies::{dependency_report, DependencyReport};
use crate::domain::analysis::loss_measures::{measure_cells, original_classes};
use crate::domain::resolve::local::LocalAlgorithm;
use crate::domain::resolve::{JobKind, Prepared};
use crate::domain::spec::SpecError;
use crate::error_code::ErrorCode;

/// How published rows were paired with the original records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Row by row, in the original order.
    Order,
    /// By the values the rows cover.
    Content,
}

/// The assessment of a published table against its original.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedAssessment {
    /// Records of the original table.
    pub records: u64,
    /// Rows of the published table.
    pub published_records: u64,
    /// Original records the published table leaves out (measured as suppressed).
    pub removed_records: u64,
    /// How rows were paired with records.
    pub pairing: Pairing,
    /// Classes of the published table: rows with the same quasi-identifier cells, rows whose every
    /// quasi-identifier is `*` left out (they reveal nothing).
    pub classes: u64,
    /// The smallest of those classes (0 without one).
    pub k: u64,
    /// Rows showing `*` in every quasi-identifier: suppressed records or records generalized to the
    /// root everywhere, which a published table cannot tell apart (the job report counts the latter
    /// as a class).
    pub fully_generalized_records: u64,
    /// The loss measures, as the job report gives them.
    pub loss_measures: LossMeasures,
    /// The functional dependencies' loss, when the spec declares dependencies.
    pub dependencies: Option<DependencyReport>,
}

/// Measures `published` against `original`, the table `prepared` was resolved against.
pub fn assess_published(
    original: &Table,
    published: &Table,
    prepared: &Prepared,
) -> Result<PublishedAssessment, SpecError> {
    let domains: Vec<(usize, Domain<'_>)> = match &prepared.kind {
        JobKind::FullDomain => prepared.full_domain_hierarchies(),
        JobKind::Local(plan) => plan
            .attributes
            .iter()
            .map(|(c, domain)| (*c, domain.view()))
            .collect(),
        JobKind::Fragmentation(_) => {
            return Err(SpecError::new(
                "/algorithm",
                ErrorCode::UnsupportedOption,
                "a fragmentation publishes several tables: assess each fragment's job instead",
            ))
        }
    };
    if let JobKind::Local(plan) = &prepared.kind {
        if matches!(plan.algorithm, LocalAlgorithm::Mdav(_)) {
            return Err(SpecError::new(
                "/algorithm",
                ErrorCode::UnsupportedOption,
                "mdav publishes centroids, which cover no original value: its loss measures cannot \
                 be read back from the published table (the job's report gives SSE/SST)",
            ));
        }
    }
    let quasi: Vec<QuasiColumn<'_>> = domains
        .iter()
        .map(|&(c, domain)| QuasiColumn::read(original.column(c), published, domain))
        .collect::<Result<_, _>>()?;
    let qi_columns: Vec<usize> = domains.iter().map(|(c, _)| *c).collect();
    let verbatim: Vec<VerbatimColumn<'_>> = prepared
        .output_columns()
        .iter()
        // an aggregated quasi-identifier shows its class's aggregate, not its value: not paired on
        .filter(|c| !qi_columns.contains(c) && !prepared.aggregated.iter().any(|a| a.column == **c))
        .map(|&c| VerbatimColumn::read(original.column(c), published))
        .collect::<Result<_, _>>()?;
    let rows = Rows {
        quasi: &quasi,
        verbatim: &verbatim,
    };
    let (row_of, pairing) = pair(
        &rows,
        original.row_count(),
        published.row_count(),
        prepared.remove_suppressed,
    )?;
    let removed = row_of.iter().filter(|&&p| p == REMOVED).count() as u64;
    let columns: Vec<CellColumn<'_>> = quasi.iter().map(|q| q.cells(&row_of)).collect();
    let original_grouping = original_classes(original, &qi_columns);
    let loss_measures = measure_cells(original, prepared, &columns, &original_grouping);
    let dependencies = (!prepared.dependencies.is_empty()).then(|| {
        let kept: Vec<bool> = row_of.iter().map(|&p| p != REMOVED).collect();
        dependency_report(
            original,
            &prepared.dependencies,
            &qi_columns,
            &columns,
            &kept,
        )
    });
    let (classes, k, fully_generalized_records) = published_classes(&quasi, published.row_count());
    Ok(PublishedAssessment {
        records: original.row_count() as u64,
        published_records: published.row_count() as u64,
        removed_records: removed,
        pairing,
        classes,
        k,
        fully_generalized_records,
        loss_measures,
        dependencies,
    })
}

/// The published row of a removed record.
const REMOVED: u32 = u32::MAX;

/// The error of a published table that cannot be read or paired.
fn unreadable(message: String) -> SpecError {
    SpecError::new("", ErrorCode::PublishedUnreadable, message)
}

/// One published quasi-identifier: every distinct published text read as a cell.
struct QuasiColumn<'a> {
    name: &'a str,
    /// The original codes.
    original: &'a [u32],
    domain: usize,
    /// Cell id (the published dictionary code) of every published row.
    published: &'a [u32],
    /// Cells by id, then the root cell of removed records.
    cells: Vec<CellCover>,
    /// The ids whose text is `*`.
    suppressed: Vec<bool>,
    position: Vec<u32>,
}

impl<'a> QuasiColumn<'a> {
    fn read(
        column: &'a Column,
        published: &'a Table,
        domain: Domain<'_>,
    ) -> Result<Self, SpecError> {
        let Some(index) = published.column_index(&column.name) else {
            return Err(unreadable(format!(
                "the published table has no quasi-identifier column '{}'",
                column.name
            )));
        };
        let texts = &published.column(index).dictionary;
        let mut reader = CellReader::new(column, domain);
        reader.settle(texts.values());
        let mut cells = Vec::with_capacity(texts.len() + 1);
        let mut unread = 0usize;
        for text in texts.values() {
            match reader.read(text) {
                Some(cell) => cells.push(cell),
                None => {
                    unread += 1;
                    cells.push(CellCover {
                        covers: Vec::new(),
                        tree: None,
                    });
                }
            }
        }
        if unread > 0 {
            return Err(unreadable(format!(
                "column '{}': {unread} distinct published cells are neither a value, a hierarchy label, a range of its values nor '*'",
                column.name
            )));
        }
        cells.push(reader.root());
        Ok(Self {
            name: &column.name,
            original: &column.codes,
            domain: column.dictionary.len(),
            published: &published.column(index).codes,
            suppressed: texts.values().map(|t| t == SUPPRESSED).collect(),
            cells,
            position: positions(domain),
        })
    }

    /// Whether published row `row`'s cell covers original record `record`'s value.
    fn covers(&self, row: usize, record: usize) -> bool {
        self.cell_covers(self.published[row], self.original[record])
    }

    fn cell_covers(&self, cell: u32, code: u32) -> bool {
        self.cells[cell as usize]
            .covers
            .binary_search(&code)
            .is_ok()
    }

    /// The measures' column: each record gets its row's cell, a removed record the root.
    fn cells(&self, row_of: &[u32]) -> CellColumn<'a> {
        let root = self.cells.len() as u32 - 1;
        let ids: Vec<u32> = row_of
            .iter()
            .map(|&p| {
                if p == REMOVED {
                    root
                } else {
                    self.published[p as usize]
                }
            })
            .collect();
        CellColumn {
            name: self.name,
            codes: self.original,
            domain: self.domain,
            cell_of: ids.into(),
            cells: self.cells.clone(),
            position: self.position.clone(),
        }
    }
}

/// A column published as it is: each published text's original code.
struct VerbatimColumn<'a> {
    original: &'a [u32],
    /// Original code of every published dictionary code (`u32::MAX` for a text the original lacks).
    code_of: Vec<u32>,
    published: &'a [u32],
    bound: u64,
}

impl<'a> VerbatimColumn<'a> {
    fn read(column: &'a Column, published: &'a Table) -> Result<Self, SpecError> {
        let Some(index) = published.column_index(&column.name) else {
            return Err(unreadable(format!(
                "the published table has no column '{}', which the spec publishes as it is",
                column.name
            )));
        };
        let texts = &published.column(index).dictionary;
        Ok(Self {
            original: &column.codes,
            code_of: texts
                .values()
                .map(|t| column.dictionary.code(t).unwrap_or(u32::MAX))
                .collect(),
            published: &published.column(index).codes,
            bound: column.dictionary.len() as u64 + 1,
        })
    }

    /// The original code published in row `row` (`bound − 1` for a text the original lacks).
    fn code(&self, row: usize) -> u32 {
        let code = self.code_of[self.published[row] as usize];
        if code == u32::MAX {
            self.bound as u32 - 1
        } else {
            code
        }
    }
}

/// Classes of the published rows by quasi-identifier cells and the smallest, and the rows of `*` only,
/// which are left out of the classes.
fn published_classes(quasi: &[QuasiColumn<'_>], rows: usize) -> (u64, u64, u64) {
    let bounds: Vec<u64> = quasi.iter().map(|q| q.cells.len() as u64).collect();
    let classes = Classes::group(rows, &bounds, |row, j| quasi[j].published[row]);
    let mut counted = 0u64;
    let mut smallest = u64::MAX;
    let mut stars = 0u64;
    for (&size, &row) in classes.sizes.iter().zip(&classes.representative) {
        if quasi
            .iter()
            .all(|q| q.suppressed[q.published[row as usize] as usize])
        {
            stars += size;
        } else {
            counted += 1;
            smallest = smallest.min(size);
        }
    }
    (counted, if counted == 0 { 0 } else { smallest }, stars)
}

#[cfg(test)]
mod tests;
