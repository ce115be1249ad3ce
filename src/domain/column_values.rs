//! Facts about a column's values that several spec resolutions and reports share: their natural order
//! (numeric when every value is a number, else text) and their distribution by text.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::data::{Column, Dictionary};

/// `ranks[code]`: the position of each value of `dictionary` in its natural order. A dictionary whose
/// values all parse as finite numbers is ordered numerically (ties, such as `1` and `1.0`, by their
/// text); any other by text, byte by byte.
pub fn natural_ranks(dictionary: &Dictionary) -> Vec<u32> {
    let values: Vec<&str> = dictionary.values().collect();
    let numbers: Option<Vec<f64>> = values
        .iter()
        .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    match numbers {
        Some(numbers) => order.sort_by(|&a, &b| {
            numbers[a as usize]
                .total_cmp(&numbers[b as usize])
                .then_with(|| values[a as usize].cmp(values[b as usize]))
        }),
        None => order.sort_by_key(|&code| values[code as usize]),
    }
    ranks_of(&order)
}

/// The rank of every code, given the codes in rank order.
pub fn ranks_of(order: &[u32]) -> Vec<u32> {
    let mut ranks = vec![0u32; order.len()];
    for (rank, &code) in order.iter().enumerate() {
        ranks[code as usize] = rank as u32;
    }
    ranks
}

/// Records per value text over the whole column.
pub fn distribution_by_text(column: &Column) -> Arc<HashMap<String, u64>> {
    Arc::new(
        column
            .dictionary
            .values()
            .zip(column.value_counts())
            .map(|(v, n)| (v.to_string(), n))
            .collect(),
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
        natural_ranks(&d)
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
