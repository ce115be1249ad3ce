//! The published text of every group's cell of one quasi-identifier: the hierarchy label of a `Node`
//! cell, and for a `Range` cell the value itself when it holds one value, else `[low .. high]` with the
//! texts of its lowest and highest values, both included (`[20 .. 29]`, `[-5 .. -1]`,
//! `[1933-10-15 .. 1945-04-05]`): the one range syntax of every type, which reads back unambiguously
//! whatever the values hold.

use rustc_hash::FxHashMap;

use super::{Domain, RecodedCell, Recoding};
use crate::core::data::Dictionary;
use crate::core::render::CellTexts;

impl CellTexts {
    /// The texts of quasi-identifier `qi` of `recoding`, whose original values are `values`.
    pub fn new(recoding: &Recoding, qi: usize, domain: Domain<'_>, values: &Dictionary) -> Self {
        let mut ids: FxHashMap<RecodedCell, u32> = FxHashMap::default();
        let mut texts = Vec::new();
        let text_of_group = (0..recoding.groups() as u32)
            .map(|g| {
                let cell = recoding.cell(g, qi);
                *ids.entry(cell).or_insert_with(|| {
                    texts.push(cell_text(cell, domain, values));
                    texts.len() as u32 - 1
                })
            })
            .collect();
        CellTexts::from_parts(texts, text_of_group)
    }
}

/// The text of one cell.
fn cell_text(cell: RecodedCell, domain: Domain<'_>, values: &Dictionary) -> String {
    match (cell, domain) {
        (RecodedCell::Node { level, label }, Domain::Hierarchy(map)) => map
            .hierarchy()
            .labels(level as usize)
            .value(label)
            .to_string(),
        (RecodedCell::Range { low, high }, Domain::Ordered(order)) => {
            let low_text = values.value(order.code_at(low));
            if low == high {
                low_text.to_string()
            } else {
                format!("[{low_text} .. {}]", values.value(order.code_at(high)))
            }
        }
        // a cell of the other kind than its domain is a caller bug; publish the most general text
        _ => crate::core::render::SUPPRESSED.to_string(),
    }
}
