//! Information-loss measures of a published table, after Hsu (2008, Ch. 4;
//! `notes/hsu-2008-sensitive-attribute-protection.md` §3 and §7 item 5), reported next to the search
//! metrics of [`crate::core::loss`] (which stay the engine's objective functions).
//!
//! The input is a published table described cell by cell ([`CellColumn`]), so full-domain generalization
//! and local recoding are measured the same way. All logarithms are base 2 and all probabilities come
//! from the original table. One file per job:
//! - `cells`: the generalized cells of each column, and the full-domain builder;
//! - `classes`: original and published classes, and the box counts behind `Pr(q*)`;
//! - `redaction`: redaction counting and the tree measure (§4.1);
//! - `entropy`: `Π_e`, `Π_me`, `Π_ne` (§4.2);
//! - `distance`: the EMD between a class and the table (equal ground distance by default);
//! - `inflation`: volume inflation on the empirical joint (§4.4);
//! - `variance`: tuple-wise variance loss `Π_tv` and the hybrid `Π'` (§4.4);
//! - `relational`: the relational loss of the group-by queries relating a quasi-identifier to a sensitive
//!   attribute (§4.3, Table 4.3-3);
//! - `noise`: noise scanning, the unwanted sensitive values a class returns to one-attribute queries
//!   (§4.5; experimental, the thesis gives no algorithm);
//! - `workload`: the mean relative error of a seeded COUNT-query workload (§2.5).
//!
//! Monotonicity (Def 4.2.2): redactions, the tree measure, `Π_me` and `Π_ne` never decrease from a table
//! to a coarser one; `Π_e` can (Lemma 4.2.3); `Π_tv` is ≥ 0 for coarsenings only; the hybrid can be
//! negative even then. Values are reported raw.

mod box_tree;
mod cells;
mod classes;
mod distance;
mod entropy;
mod inflation;
mod noise;
mod range_cube;
mod redaction;
mod relational;
mod variance;
mod workload;

#[cfg(test)]
mod golden;
#[cfg(test)]
mod properties;

use rayon::prelude::*;
use serde::Serialize;

pub use cells::{covering, positions, CellColumn, CellCover, TreePosition};
pub use classes::{box_counts, Classes};
pub use distance::{ClassDistance, EmdDistance};
pub use entropy::{record_non_uniform_entropy, ColumnEntropy, EntropyLoss};
pub use inflation::{Inflation, VolumeInflation, BASIS};
pub use noise::{noise_scan, NoiseScan, MAX_THRESHOLDS};
pub use redaction::RedactionLoss;
pub use relational::{relational_loss, RelationalAttribute, RelationalLoss};
pub use variance::{SensitiveColumn, VarianceLoss};
pub use workload::{
    query_workload, QueryWorkload, WorkloadError, DEFAULT_MAX_DIMENSIONS, DEFAULT_QUERIES,
    DEFAULT_SEED,
};

/// The volume measures of one quasi-identifier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttributeLoss {
    /// The quasi-identifier.
    pub attribute: String,
    /// Fully suppressed cells.
    pub redactions: u64,
    /// Tree measure (`null` when a cell is not a hierarchy node).
    pub tree: Option<f64>,
    /// Entropy loss `Π_e`.
    pub entropy: f64,
    /// Monotone entropy `Π_me`.
    pub monotone_entropy: f64,
    /// Non-uniform entropy `Π_ne`.
    pub non_uniform_entropy: f64,
    /// `Π_ne` as a share of its value when the whole column is suppressed: 0 when every value is kept,
    /// 1 when the column carries no information; null when the column holds a single value.
    pub information_loss: Option<f64>,
}

/// Every measure of one published table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LossMeasures {
    /// Fully suppressed cells, over all quasi-identifiers.
    pub redactions: u64,
    /// Tree measure, summed over quasi-identifiers (`null` when a cell is not a hierarchy node).
    pub tree: Option<f64>,
    /// Entropy loss `Π_e` (not monotone).
    pub entropy: f64,
    /// Monotone entropy `Π_me`.
    pub monotone_entropy: f64,
    /// Non-uniform entropy `Π_ne`.
    pub non_uniform_entropy: f64,
    /// The same per quasi-identifier, in lattice order.
    pub attributes: Vec<AttributeLoss>,
    /// Volume inflation.
    pub volume_inflation: VolumeInflation,
    /// Variance loss and the hybrid measure, per sensitive attribute.
    pub variance: Vec<VarianceLoss>,
    /// Relational loss of the group-by queries relating each quasi-identifier to each sensitive
    /// attribute (§4.3), per sensitive attribute.
    pub relational: Vec<RelationalLoss>,
    /// Noise scanning per sensitive attribute (§4.5, experimental).
    pub noise: Vec<NoiseScan>,
    /// The query workload's error, when one ran.
    pub query_workload: Option<WorkloadError>,
}

/// A query workload and the value order it ranges over (`ranks[j][code]` for quasi-identifier j).
#[derive(Debug, Clone, Copy)]
pub struct Workload<'a> {
    /// The workload's parameters.
    pub parameters: QueryWorkload,
    /// Ranks of each column's codes in the column's value order.
    pub ranks: &'a [Vec<u32>],
}

/// Computes every measure of the published `columns` (all of `rows` records), grouping the original
/// table itself (tests; the report shares one original grouping through [`measure_with_original`]).
#[cfg(test)]
pub fn measure(
    rows: usize,
    columns: &[CellColumn<'_>],
    sensitive: &[SensitiveColumn<'_>],
    workload: Option<Workload<'_>>,
) -> LossMeasures {
    let original = Classes::original(columns, rows);
    measure_with_original(rows, columns, &original, sensitive, workload)
}

/// Computes every measure of the published `columns` (all of `rows` records) when the original table's
/// classes (`Classes::original` of the same records, whatever the order of its columns) are already
/// known: the report groups the original table once for every analysis that reads it.
pub fn measure_with_original(
    rows: usize,
    columns: &[CellColumn<'_>],
    original: &Classes,
    sensitive: &[SensitiveColumn<'_>],
    workload: Option<Workload<'_>>,
) -> LossMeasures {
    // the per-column measures and the published grouping are independent: computed side by side
    let (attributes, published) = rayon::join(
        || {
            columns
                .par_iter()
                .map(|column| {
                    let redaction = RedactionLoss::of(column);
                    let tables = ColumnEntropy::new(column);
                    let entropy = EntropyLoss::of(column, &tables);
                    let most = tables.suppressed_non_uniform_entropy();
                    AttributeLoss {
                        attribute: column.name.to_string(),
                        redactions: redaction.redactions,
                        tree: redaction.tree,
                        entropy: entropy.entropy,
                        monotone_entropy: entropy.monotone_entropy,
                        non_uniform_entropy: entropy.non_uniform_entropy,
                        information_loss: (most > 0.0)
                            .then(|| (entropy.non_uniform_entropy / most).clamp(0.0, 1.0)),
                    }
                })
                .collect::<Vec<_>>()
        },
        || Classes::published(columns, rows),
    );
    // volume inflation (box counts, then the variance loss that reads it) runs beside the measures
    // that only read the classes: the box counts and the query workload are the two largest parts
    let ((variance, volume_inflation), (relational, (noise, query_workload))) = rayon::join(
        || {
            let boxes = box_counts(columns, &published, original);
            let inflation = Inflation::new(&published, original, &boxes);
            let variance: Vec<VarianceLoss> = sensitive
                .iter()
                .map(|s| VarianceLoss::of(s, original, &published, &inflation))
                .collect();
            (variance, VolumeInflation::of(&inflation))
        },
        || {
            rayon::join(
                || relational_loss(columns, sensitive),
                || {
                    rayon::join(
                        || noise_scan(columns, workload.map(|w| w.ranks), &published, sensitive),
                        || {
                            workload.map(|w| {
                                query_workload(
                                    columns,
                                    w.ranks,
                                    original,
                                    &published,
                                    &w.parameters,
                                )
                            })
                        },
                    )
                },
            )
        },
    );
    LossMeasures {
        redactions: attributes.iter().map(|a| a.redactions).sum(),
        tree: attributes.iter().map(|a| a.tree).sum(),
        entropy: attributes.iter().map(|a| a.entropy).sum(),
        monotone_entropy: attributes.iter().map(|a| a.monotone_entropy).sum(),
        non_uniform_entropy: attributes.iter().map(|a| a.non_uniform_entropy).sum(),
        volume_inflation,
        variance,
        relational,
        noise,
        query_workload,
        attributes,
    }
}
