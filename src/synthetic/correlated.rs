//! High-dimensional tables with planted mutual information, for vertical fragmentation's tests and
//! benchmarks (the paper's Musk data is not available here). Features come in groups: every record draws
//! one latent value per group, and each feature of a group copies its group's latent value, or with
//! probability `noise` takes a value of its own. The class follows the latent value of the first group
//! (scaled to the classes), with the same noise. Features of one group thus share much information,
//! features of different groups little, and the first group's features tell the most about the class.
//! Columns are `f0`, `f1`, … (integers `0..levels`) and `class` (integers `0..classes`).

use crate::core::data::{Column, Table};
use crate::core::rng::SplitMix64;

use super::renumber;

/// The shape of a correlated table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorrelatedShape {
    /// Records.
    pub records: usize,
    /// Groups of features.
    pub groups: usize,
    /// Features per group.
    pub per_group: usize,
    /// Values of each feature (at least 1).
    pub levels: u32,
    /// Class values (at least 1).
    pub classes: u32,
    /// Probability that a feature (or the class) ignores its latent value, 0 to 1.
    pub noise: f64,
    /// Seed: the same seed gives the same table.
    pub seed: u64,
}

/// Generates the table of `shape`.
pub fn correlated_table(shape: &CorrelatedShape) -> Table {
    let levels = shape.levels.max(1);
    let classes = shape.classes.max(1);
    let features = shape.groups * shape.per_group;
    let mut rng = SplitMix64(shape.seed);
    let threshold = (shape.noise.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
    let mut codes: Vec<Vec<u32>> = vec![Vec::with_capacity(shape.records); features + 1];
    let mut latent = vec![0u32; shape.groups];
    for _ in 0..shape.records {
        for value in latent.iter_mut() {
            *value = rng.below(u64::from(levels)) as u32;
        }
        for g in 0..shape.groups {
            for i in 0..shape.per_group {
                let value = if rng.next_u64() < threshold {
                    rng.below(u64::from(levels)) as u32
                } else {
                    latent[g]
                };
                codes[g * shape.per_group + i].push(value);
            }
        }
        let first = latent.first().copied().unwrap_or(0);
        let class = if rng.next_u64() < threshold {
            rng.below(u64::from(classes)) as u32
        } else {
            (u64::from(first) * u64::from(classes) / u64::from(levels)) as u32
        };
        codes[features].push(class);
    }
    let columns = codes
        .into_iter()
        .enumerate()
        .map(|(c, mut column)| {
            let domain = if c == features { classes } else { levels } as usize;
            let dictionary = renumber(&mut column, domain, |v| v.to_string());
            Column {
                name: if c == features {
                    "class".to_string()
                } else {
                    format!("f{c}")
                },
                dictionary,
                codes: column,
            }
        })
        .collect();
    Table::new(columns, shape.records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::fragmentation::mutual_information::{mutual_information, Discrete};

    fn d(column: &Column) -> Discrete<'_> {
        Discrete {
            codes: &column.codes,
            cardinality: column.dictionary.len(),
        }
    }

    #[test]
    fn groups_share_information_and_the_first_tells_the_class() {
        let shape = CorrelatedShape {
            records: 2000,
            groups: 2,
            per_group: 3,
            levels: 6,
            classes: 3,
            noise: 0.2,
            seed: 7,
        };
        let table = correlated_table(&shape);
        assert_eq!(table.columns().len(), 7);
        assert_eq!(table.column(6).name, "class");
        let mi = |a: usize, b: usize| mutual_information(d(table.column(a)), d(table.column(b)));
        // within a group far more than across groups
        assert!(mi(0, 1) > 10.0 * mi(0, 3), "{} vs {}", mi(0, 1), mi(0, 3));
        assert!(mi(3, 4) > 10.0 * mi(2, 5));
        // the first group's features tell the class, the second's hardly
        assert!(mi(0, 6) > 10.0 * mi(3, 6));
        // deterministic
        let again = correlated_table(&shape);
        assert_eq!(again.column(2).codes, table.column(2).codes);
    }
}
