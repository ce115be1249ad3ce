//! Turns the repaired node S-Hybrid chose into a [`Recoding`] and its report: records of every original
//! group are dealt to the groups their group's records went to (the lowest record indices move in the
//! deterministic mode, matching the note's A6 tie-break; a keyed shuffle decides in the randomized
//! mode), every published group gets its generalized key as explicit cells, and the output order is a
//! keyed permutation so positions do not reveal who moved.

use super::search::Found;
use super::statistic::p_value;
use super::{ChiSquareReport, HybridMode, HybridReport, HybridResult, Prepared};
use crate::core::local::{RecodedCell, Recoding};

/// Stream numbers of the generators outside the node walk (node streams use node ids).
const ASSIGN_STREAM: u64 = u64::MAX;
const ORDER_STREAM: u64 = u64::MAX - 1;

/// Builds the result of the walk.
pub(super) fn publish(prepared: &Prepared<'_>, found: Found) -> HybridResult {
    let Found {
        mut best,
        nodes_evaluated,
        lattice_size,
    } = found;
    // the walk may have grouped the node from a projection: group it again from the base tuples, whose
    // row map the output needs; canonical numbering depends on the keys only, so it is the repair's
    let mut regrouped = prepared
        .base
        .group(&prepared.maps, &best.levels, &mut Vec::new());
    regrouped.canonicalize(&prepared.maps, &best.levels);
    if !best.groups.canonical {
        // only nodes where nothing moved skip canonical numbering, so the sizes are the groups' own
        best.relocation.sizes.clone_from(&regrouped.sizes);
    }
    best.groups = regrouped;
    let q = prepared.maps.len();
    let groups = &best.groups;
    let relocation = &best.relocation;
    let n = prepared.rows;
    // records by original group, ascending
    let origin_of =
        |r: usize| groups.group_of_tuple[prepared.base.tuple_of_row[r] as usize] as usize;
    let mut start = vec![0usize; groups.len() + 1];
    for r in 0..n {
        start[origin_of(r) + 1] += 1;
    }
    for g in 0..groups.len() {
        start[g + 1] += start[g];
    }
    let mut next = start.clone();
    let mut by_origin = vec![0u32; n];
    for r in 0..n {
        let o = origin_of(r);
        by_origin[next[o]] = r as u32;
        next[o] += 1;
    }
    let mut assign = prepared.stream(ASSIGN_STREAM);
    let mut destination = vec![0u32; n];
    let mut flows = relocation.flows.iter().peekable();
    for origin in 0..groups.len() {
        let rows = &mut by_origin[start[origin]..start[origin + 1]];
        if prepared.options.mode == HybridMode::Randomized {
            assign.shuffle(rows);
        }
        let mut position = 0;
        while let Some(&&(o, to, count)) = flows.peek() {
            if o as usize != origin {
                break;
            }
            for &r in &rows[position..position + count as usize] {
                destination[r as usize] = to;
            }
            position += count as usize;
            flows.next();
        }
        for &r in &rows[position..] {
            destination[r as usize] = origin as u32;
        }
    }
    // published groups: the non-empty ones, in canonical order
    let mut published = vec![u32::MAX; groups.len()];
    let mut cells = Vec::new();
    for (g, &size) in relocation.sizes.iter().enumerate() {
        if size > 0 {
            published[g] = (cells.len() / q) as u32;
            cells.extend(
                groups
                    .key(g)
                    .iter()
                    .enumerate()
                    .map(|(j, &label)| RecodedCell::Node {
                        level: best.levels[j],
                        label,
                    }),
            );
        }
    }
    let group_of: Vec<u32> = destination.iter().map(|&g| published[g as usize]).collect();
    let mut order: Vec<u32> = (0..n as u32).collect();
    prepared.stream(ORDER_STREAM).shuffle(&mut order);
    let published_groups = (cells.len() / q) as u64;
    let recoding = Recoding::new(q, group_of, cells).with_order(order);
    let statistic = prepared.alpha.map(|alpha| {
        let df = groups.len() as u64 - 1;
        ChiSquareReport {
            statistic: relocation.chi_square,
            degrees_of_freedom: df,
            alpha,
            p_value: p_value(relocation.chi_square, df),
            critical_value: super::critical_value(alpha, df),
        }
    });
    let report = HybridReport {
        mode: prepared.options.mode,
        k: prepared.limits.k,
        levels: best.levels.clone(),
        loss: best.loss,
        cells_changed: relocation.changed,
        cells_total: n as u64 * q as u64,
        budget: prepared.limits.budget,
        rows_relocated: relocation.flows.iter().map(|&(_, _, c)| u64::from(c)).sum(),
        groups: published_groups,
        truthful: relocation.changed == 0,
        statistic,
        nodes_evaluated,
        lattice_size,
    };
    HybridResult {
        recoding,
        levels: best.levels,
        report,
    }
}
