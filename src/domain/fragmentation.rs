//! The mutual-information matrix of a table's columns for vertical fragmentation
//! ([`crate::core::fragmentation`]): a column whose values are all numbers and that has more distinct
//! values than `bins` is discretized into `bins` equal-frequency bins (note gap A1, default 10); any
//! other column is used as its dictionary codes (a missing value is a category of its own).

use crate::core::data::Column;
use crate::core::fragmentation::mutual_information::{equal_frequency_bins, Discrete, MiMatrix};

/// Equal-frequency bins of numeric columns unless a spec says otherwise.
pub const DEFAULT_BINS: usize = 10;

/// A column as the estimator reads it: binned numbers or its codes.
fn discrete(column: &Column, bins: usize) -> (Vec<u32>, usize) {
    let distinct = column.dictionary.len();
    if distinct > bins {
        let numbers: Option<Vec<f64>> = column
            .dictionary
            .values()
            .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        if let Some(numbers) = numbers {
            let per_record: Vec<f64> = column.codes.iter().map(|&c| numbers[c as usize]).collect();
            return equal_frequency_bins(&per_record, bins);
        }
    }
    (column.codes.clone(), distinct)
}

/// The MI matrix of `features` and `class`, numeric columns binned into `bins`.
pub fn mi_matrix(features: &[&Column], class: &Column, bins: usize) -> MiMatrix {
    let columns: Vec<(Vec<u32>, usize)> = features.iter().map(|c| discrete(c, bins)).collect();
    let class = discrete(class, usize::MAX);
    let views: Vec<Discrete<'_>> = columns
        .iter()
        .map(|(codes, cardinality)| Discrete {
            codes,
            cardinality: *cardinality,
        })
        .collect();
    MiMatrix::new(
        &views,
        Discrete {
            codes: &class.0,
            cardinality: class.1,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{read_table, CsvOptions};
    use crate::core::fragmentation::fmrmr::{fmrmr, fragment, Diagonal};

    #[test]
    fn numeric_columns_are_binned_and_text_kept() {
        let rows: Vec<Vec<String>> = (0..100)
            .map(|i| vec![format!("{i}"), ["a", "b"][i % 2].to_string()])
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = crate::core::data::Table::from_rows(&["n", "t"], &rows);
        assert_eq!(discrete(table.column(0), 10).1, 10);
        assert_eq!(discrete(table.column(1), 10).1, 2);
        let m = mi_matrix(&[table.column(0)], table.column(1), 10);
        // ten bins of ten consecutive numbers: half a and half b in each, so nothing about the class
        assert!(m.get(0, m.class()).abs() < 1e-12);
        assert!((m.get(0, 0) - (10f64).ln()).abs() < 1e-9);
    }

    /// creditcard: 23 features and the default class. The two fragments partition the features,
    /// the run is deterministic, and the greedy FMRMR beats splitting the features in halves.
    #[test]
    fn creditcard_splits_into_two_fragments() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/creditcard/creditcard_int.csv");
        let bytes = std::fs::read(path).expect("tests/data/creditcard");
        let table = read_table(&bytes[..], &CsvOptions::with_delimiter(";").unwrap()).unwrap();
        let columns = table.columns();
        let (class, features) = columns.split_last().unwrap();
        let features: Vec<&Column> = features.iter().collect();
        let mi = mi_matrix(&features, class, DEFAULT_BINS);
        let fragments = fragment(&mi, 2, Diagonal::Included).unwrap();
        assert_eq!(fragments.len(), 2);
        let mut all = fragments.concat();
        all.sort_unstable();
        assert_eq!(all, (0..23).collect::<Vec<_>>());
        assert_eq!(fragment(&mi, 2, Diagonal::Included).unwrap(), fragments);
        let halves = vec![(0..12).collect::<Vec<_>>(), (12..23).collect()];
        assert!(
            fmrmr(&mi, &fragments, Diagonal::Included) > fmrmr(&mi, &halves, Diagonal::Included)
        );
        // the repayment statuses carry the most information about default
        let best = (0..23)
            .max_by(|&a, &b| mi.get(a, mi.class()).total_cmp(&mi.get(b, mi.class())))
            .unwrap();
        assert_eq!(columns[best].name, "PAY_0");
    }
}
