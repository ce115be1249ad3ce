//! The report's information-loss measures of a full-domain outcome (see [`crate::core::measures`]): the
//! published cells at the outcome's levels (suppressed records as `*`), the ground distance of every
//! sensitive attribute (that of the job's t-closeness model on it, else the equal distance), and the
//! value order the query workload ranges over.
//! The value order is the column's natural order ([`super::column_values::natural_ranks`]).

use crate::core::data::Table;
use crate::core::engine::Outcome;
use crate::core::measures::{
    measure_with_original, CellColumn, ClassDistance, Classes, EmdDistance, LossMeasures,
    SensitiveColumn, Workload,
};

use crate::domain::column_values::natural_ranks;
use crate::domain::resolve::ResolvedJob;

/// Every loss measure of `outcome` on `table`.
pub fn loss_measures(
    table: &Table,
    prepared: &ResolvedJob,
    outcome: &Outcome,
    original: &Classes,
) -> LossMeasures {
    let columns = full_domain_cells(table, prepared, outcome);
    measure_cells(table, prepared, &columns, original)
}

/// The published cells of every quasi-identifier of a full-domain `outcome`, in lattice order.
pub fn full_domain_cells<'a>(
    table: &'a Table,
    prepared: &'a ResolvedJob,
    outcome: &'a Outcome,
) -> Vec<CellColumn<'a>> {
    prepared
        .input(table)
        .quasi_identifiers
        .iter()
        .zip(&outcome.transformation)
        .map(|(q, &level)| {
            CellColumn::full_domain(
                q.name,
                q.codes,
                q.hierarchy,
                level as usize,
                &outcome.suppressed,
            )
        })
        .collect()
}

/// Every loss measure of a published table given cell by cell (any recoding); `original` groups the
/// same records by their original values ([`original_classes`]).
pub fn measure_cells(
    table: &Table,
    prepared: &ResolvedJob,
    columns: &[CellColumn<'_>],
    original: &Classes,
) -> LossMeasures {
    let input = prepared.input(table);
    // the ground distance of the slot's t-closeness model, else the equal distance
    let distances: Vec<EmdDistance> = input
        .sensitive
        .iter()
        .enumerate()
        .map(|(slot, s)| {
            match prepared
                .ground_distances
                .iter()
                .find(|(protected, _, _)| *protected == slot)
            {
                Some((_, kind, emd)) => EmdDistance::new(kind.name(), emd.clone()),
                None => EmdDistance::equal(s.codes, s.distinct),
            }
        })
        .collect();
    let sensitive: Vec<SensitiveColumn<'_>> = input
        .sensitive
        .iter()
        .zip(&distances)
        .map(|(s, d)| SensitiveColumn {
            name: s.name,
            codes: s.codes,
            distance: d as &dyn ClassDistance,
        })
        .collect();
    let ranks: Vec<Vec<u32>> = columns
        .iter()
        .map(|c| match table.column_index(c.name) {
            Some(i) => natural_ranks(&table.column(i).dictionary),
            None => (0..c.domain as u32).collect(),
        })
        .collect();
    measure_with_original(
        input.rows,
        columns,
        original,
        &sensitive,
        Some(Workload {
            parameters: prepared.query_workload,
            ranks: &ranks,
        }),
    )
}

/// The original table's classes over the quasi-identifier columns `columns`: records with equal
/// original values. Grouped once per report and shared by the loss measures and the risk before
/// anonymization (at 10M records this is the largest grouping of the report).
pub fn original_classes(table: &Table, columns: &[usize]) -> Classes {
    let codes: Vec<&[u32]> = columns
        .iter()
        .map(|&c| &table.column(c).codes[..])
        .collect();
    let bounds: Vec<u64> = columns
        .iter()
        .map(|&c| table.column(c).dictionary.len().max(1) as u64)
        .collect();
    Classes::group(table.row_count(), &bounds, |r, j| codes[j][r])
}
