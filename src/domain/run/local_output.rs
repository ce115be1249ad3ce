//! What a local recoding publishes, derived once from its groups: the cell texts, the output table, the
//! coverage checks the verifier runs, and the report's analyses (loss measures, risk, achieved privacy)
//! over the published groups.

use rayon::prelude::*;

use crate::core::data::Table;
use crate::core::local::{CellTexts, Recoding, SUPPRESSED_GROUP};
use crate::core::measures::CellColumn;
use crate::core::render::{OutputColumn, Rendering};
use crate::core::risk::classes::group_keys;
use crate::core::risk::{ClassSizes, KeyColumn};

use crate::domain::analysis::achieved::achieved_by_keys;
use crate::domain::analysis::loss_measures::{measure_cells, original_classes};
use crate::domain::analysis::risk::risk_report;
use crate::domain::report::Analyses;
use crate::domain::resolve::aggregate::number_text;
use crate::domain::resolve::local::{LocalDomain, LocalPlan};
use crate::domain::resolve::ResolvedJob;
use crate::domain::verify::{ColumnCoverage, Coverage};

/// The published form of a recoding: one [`CellTexts`] per quasi-identifier, the suppression mask, and
/// the classes of the published table. Published classes are records with equal texts in every
/// quasi-identifier: two groups of the algorithm may publish the same cells, and then they are one
/// class for every class-based figure of the report.
#[derive(Debug)]
pub struct Publication {
    texts: Vec<CellTexts>,
    suppressed: Vec<bool>,
    /// The published class of every record (suppressed records share one id of their own).
    classes: Vec<u32>,
    /// The size of every published class, suppressed records left out.
    class_sizes: Vec<u64>,
}

impl Publication {
    /// The texts of every group's cells and the classes they form; a quasi-identifier with
    /// `centroids` (microaggregation) publishes its group's centroid instead of its cell.
    pub fn new(
        table: &Table,
        plan: &LocalPlan,
        recoding: &Recoding,
        centroids: Option<&[Option<Vec<f64>>]>,
    ) -> Self {
        let texts: Vec<CellTexts> = plan
            .attributes
            .iter()
            .enumerate()
            .map(|(j, (c, domain))| {
                let means = centroids
                    .and_then(|m| m.get(j))
                    .and_then(Option::as_ref)
                    .filter(|_| publishes_centroid(&table.column(*c).dictionary, domain));
                match means {
                    Some(means) => centroid_texts(means),
                    None => {
                        CellTexts::new(recoding, j, domain.view(), &table.column(*c).dictionary)
                    }
                }
            })
            .collect();
        // groups with equal texts in every column are one class: the groups (far fewer than the
        // records) are grouped by their text ids, then the records take their group's class, renumbered
        // in order of the records' first appearance (suppressed records share one id of their own)
        let groups = recoding.groups();
        let text_ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|texts| (0..groups as u32).map(|g| texts.text_id(g)).collect())
            .collect();
        let keys: Vec<KeyColumn<'_>> = text_ids
            .iter()
            .map(|codes| KeyColumn {
                codes,
                translate: None,
            })
            .collect();
        let class_of_group = group_keys(&keys, groups);
        let suppressed = recoding.suppressed();
        let mut renumbered = vec![u32::MAX; groups + 1];
        let mut count = 0usize;
        let classes: Vec<u32> = recoding
            .group_of()
            .iter()
            .map(|&g| {
                let slot = match g {
                    SUPPRESSED_GROUP => groups,
                    g => class_of_group[g as usize] as usize,
                };
                if renumbered[slot] == u32::MAX {
                    renumbered[slot] = count as u32;
                    count += 1;
                }
                renumbered[slot]
            })
            .collect();
        let mut sizes = vec![0u64; count];
        for (&class, &hidden) in classes.iter().zip(&suppressed) {
            if !hidden {
                sizes[class as usize] += 1;
            }
        }
        // the suppressed records' class holds no published record
        sizes.retain(|&n| n > 0);
        Self {
            texts,
            suppressed,
            classes,
            class_sizes: sizes,
        }
    }

    /// Whether each record is suppressed.
    pub fn suppressed(&self) -> &[bool] {
        &self.suppressed
    }

    /// The sizes of the published classes (suppressed records left out), in no particular order.
    pub fn class_sizes(&self) -> &[u64] {
        &self.class_sizes
    }
}

/// Whether a microaggregated quasi-identifier publishes its groups' centroids: a numeric one whose
/// values are all plain numbers (dates and date-times, ordered by their seconds, publish their groups'
/// ranges).
fn publishes_centroid(values: &crate::core::data::Dictionary, domain: &LocalDomain) -> bool {
    matches!(domain, LocalDomain::Ordered(order) if order.is_numeric())
        && values.values().all(|v| v.trim().parse::<f64>().is_ok())
}

/// One text per group: its centroid, shortest form (an integer when whole, else at most three decimals).
/// Groups whose centroids read the same share one text id (equal ids, equal texts), so that they are
/// one published class.
fn centroid_texts(means: &[f64]) -> CellTexts {
    let mut ids: rustc_hash::FxHashMap<String, u32> = rustc_hash::FxHashMap::default();
    let mut texts: Vec<String> = Vec::new();
    let text_of_group = means
        .iter()
        .map(|&m| {
            *ids.entry(number_text(m)).or_insert_with_key(|t| {
                texts.push(t.clone());
                texts.len() as u32 - 1
            })
        })
        .collect();
    CellTexts::from_parts(texts, text_of_group)
}

/// The output table: quasi-identifiers as their group's cell, others verbatim, in the recoding's order.
pub fn rendering<'a>(
    table: &'a Table,
    prepared: &'a ResolvedJob,
    plan: &'a LocalPlan,
    recoding: &'a Recoding,
    publication: &'a Publication,
) -> Rendering<'a> {
    let columns = prepared
        .output
        .iter()
        .map(
            |&c| match plan.attributes.iter().position(|(q, _)| *q == c) {
                Some(j) => OutputColumn::Recoded {
                    column: table.column(c),
                    group_of: recoding.group_of(),
                    texts: &publication.texts[j],
                },
                None => prepared.plain_output(table, c),
            },
        )
        .collect();
    Rendering::new(columns, &publication.suppressed, prepared.remove_suppressed)
        .with_order(recoding.order())
}

/// How the verifier checks each published quasi-identifier, from the spec's inputs only: ancestor
/// labels of every value by hierarchy, numbers, or the declared order.
///
/// With `centroids` (microaggregation) the numeric quasi-identifiers publish their group's centroid,
/// which does not cover the value by design: they are not checked (the class checks still are).
pub fn coverage<'a>(
    table: &'a Table,
    prepared: &ResolvedJob,
    plan: &'a LocalPlan,
    centroids: bool,
) -> Vec<ColumnCoverage<'a>> {
    plan.attributes
        .par_iter()
        .filter_map(|(c, domain)| {
            let values = &table.column(*c).dictionary;
            if centroids && publishes_centroid(values, domain) {
                return None;
            }
            let column = prepared.output.iter().position(|o| o == c)?;
            let coverage = match domain {
                LocalDomain::Hierarchy(map) => Coverage::Labels(
                    values
                        .values()
                        .enumerate()
                        .map(|(code, value)| {
                            let labels: Vec<&str> = (0..=map.max_level())
                                .map(|level| map.label(level, code as u32))
                                .collect();
                            (value, labels)
                        })
                        .collect(),
                ),
                // dates carry numbers (seconds) but their texts are checked by position
                LocalDomain::Ordered(order)
                    if order.is_numeric()
                        && values.values().all(|v| v.trim().parse::<f64>().is_ok()) =>
                {
                    Coverage::Numeric
                }
                LocalDomain::Ordered(order) => Coverage::Ordinal(
                    values
                        .values()
                        .enumerate()
                        .map(|(code, value)| (value, order.rank(code as u32) as usize))
                        .collect(),
                ),
            };
            Some(ColumnCoverage { column, coverage })
        })
        .collect()
}

/// The published cells of every quasi-identifier of a local recoding, in plan order.
pub fn cells<'a>(
    table: &'a Table,
    plan: &'a LocalPlan,
    recoding: &'a Recoding,
) -> Vec<CellColumn<'a>> {
    plan.attributes
        .iter()
        .enumerate()
        .map(|(j, (c, domain))| {
            let column = table.column(*c);
            CellColumn::local(&column.name, &column.codes, domain.view(), recoding, j)
        })
        .collect()
}

/// The loss measures, risk profiles and achieved privacy of the published groups.
pub fn analyses(
    table: &Table,
    prepared: &ResolvedJob,
    plan: &LocalPlan,
    recoding: &Recoding,
    publication: &Publication,
) -> Analyses {
    let quasi_identifiers: Vec<usize> = plan.attributes.iter().map(|(c, _)| *c).collect();
    // the original table is grouped once for the loss measures and the risk before, which then run
    // side by side; the achieved privacy, which reads neither, runs beside all three
    let ((loss_measures, risk), achieved) = rayon::join(
        || {
            let (columns, original) = rayon::join(
                || cells(table, plan, recoding),
                || original_classes(table, &quasi_identifiers),
            );
            rayon::join(
                || measure_cells(table, prepared, &columns, &original),
                || {
                    risk_report(
                        &original,
                        &ClassSizes::from_sizes(publication.class_sizes.iter().copied()),
                        &prepared.risk,
                    )
                },
            )
        },
        || {
            achieved_by_keys(
                table,
                &publication.classes,
                &publication.suppressed,
                &prepared.sensitive_with_hierarchical_emd(),
                &prepared.linear_diagnostics,
            )
        },
    );
    Analyses {
        loss_measures,
        risk,
        achieved,
    }
}
