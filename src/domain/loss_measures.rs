//! The report's information-loss measures of a full-domain outcome (see [`crate::core::measures`]): the
//! published cells at the outcome's levels (suppressed records as `*`), the ground distance of every
//! sensitive attribute (that of the job's t-closeness model on it, else the equal distance), and the
//! value order the query workload ranges over.
//!
//! Value order: a column whose values all parse as finite numbers is ordered numerically (ties, such as
//! `1` and `1.0`, by their text); any other column by its text, byte by byte.

use std::cmp::Ordering;

use crate::core::data::{Dictionary, Table};
use crate::core::engine::Outcome;
use crate::core::measures::{
    measure, CellColumn, ClassDistance, EqualDistance, LossMeasures, SensitiveColumn, Workload,
};
use crate::core::privacy::{EarthMovers, GroundDistanceKind};

use super::Prepared;

/// `ranks[code]`: the position of each value of `dictionary` in the column's value order.
pub fn value_ranks(dictionary: &Dictionary) -> Vec<u32> {
    let values: Vec<&str> = dictionary.values().collect();
    let numbers: Option<Vec<f64>> = values
        .iter()
        .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    match numbers {
        Some(numbers) => order.sort_by(|&a, &b| {
            numbers[a as usize]
                .partial_cmp(&numbers[b as usize])
                .unwrap_or(Ordering::Equal)
                .then_with(|| values[a as usize].cmp(values[b as usize]))
        }),
        None => order.sort_by(|&a, &b| values[a as usize].cmp(values[b as usize])),
    }
    let mut ranks = vec![0u32; values.len()];
    for (rank, &code) in order.iter().enumerate() {
        ranks[code as usize] = rank as u32;
    }
    ranks
}

/// The EMD of a t-closeness model on the same attribute, so the variance measures use its ground distance.
#[derive(Debug)]
struct ModelDistance {
    kind: GroundDistanceKind,
    emd: EarthMovers,
}

impl ClassDistance for ModelDistance {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn distance(&self, histogram: &[(u32, u32)], _size: u64) -> f64 {
        self.emd.distance(histogram).to_f64()
    }
}

/// Every loss measure of `outcome` on `table`.
pub fn loss_measures(table: &Table, prepared: &Prepared, outcome: &Outcome) -> LossMeasures {
    let input = prepared.input(table);
    let columns: Vec<CellColumn<'_>> = input
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
        .collect();
    // the ground distance of the slot's t-closeness model, else the equal distance
    let distances: Vec<Box<dyn ClassDistance>> = input
        .sensitive
        .iter()
        .enumerate()
        .map(|(slot, s)| {
            match prepared
                .ground_distances
                .iter()
                .find(|(protected, _, _)| *protected == slot)
            {
                Some((_, kind, emd)) => Box::new(ModelDistance {
                    kind: *kind,
                    emd: emd.clone(),
                }) as Box<dyn ClassDistance>,
                None => Box::new(EqualDistance::new(s.codes, s.distinct)),
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
            distance: d.as_ref(),
        })
        .collect();
    let ranks: Vec<Vec<u32>> = columns
        .iter()
        .map(|c| match table.column_index(c.name) {
            Some(i) => value_ranks(&table.column(i).dictionary),
            None => (0..c.domain as u32).collect(),
        })
        .collect();
    measure(
        input.rows,
        &columns,
        &sensitive,
        Some(Workload {
            parameters: prepared.query_workload,
            ranks: &ranks,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(values: &[&str]) -> Vec<u32> {
        let mut d = Dictionary::new();
        for v in values {
            d.intern(v);
        }
        value_ranks(&d)
    }

    #[test]
    fn numbers_sort_numerically_and_text_lexicographically() {
        assert_eq!(ranks(&["10", "9", "-1.5", "100"]), vec![2, 1, 0, 3]);
        assert_eq!(ranks(&["10", "9", "?"]), vec![0, 1, 2]);
        assert_eq!(ranks(&["b", "a", "B"]), vec![2, 1, 0]);
        // NaN and infinities are not numbers for ordering
        assert_eq!(ranks(&["2", "NaN", "1"]), vec![1, 2, 0]);
    }
}
