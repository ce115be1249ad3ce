//! Microaggregation of full-domain jobs, as ARX offers it (`"aggregate"` on a quasi-identifier): the
//! column is not generalized along a hierarchy and takes no part in forming the classes; once the
//! search has chosen the transformation, every published class's records show the class's aggregate of
//! the column (mean, geometric mean, median, mode or `[min .. max]`), and suppressed records `*`. Every
//! record of a class then shows the same value, so the published classes, and every class-level model,
//! are those of the other quasi-identifiers.

use crate::core::data::{Column, GeneralizationMap, Table};
use crate::core::render::{CellTexts, SUPPRESSED_GROUP};
use crate::domain::analysis::achieved::generalized_keys;
use crate::domain::spec::{AggregateFunction, SpecError};
use crate::error_code::ErrorCode;

/// A quasi-identifier published as its classes' aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AggregatedColumn {
    /// Table index.
    pub column: usize,
    /// The aggregate.
    pub function: AggregateFunction,
}

/// The published classes of a full-domain run and each aggregated column's text per class.
#[derive(Debug, Clone)]
pub struct Aggregates {
    /// The class of every record ([`SUPPRESSED_GROUP`] when suppressed).
    pub class_of: Vec<u32>,
    /// One [`CellTexts`] per aggregated column, in the order of the job's aggregated columns.
    pub texts: Vec<CellTexts>,
}

/// The shortest text of a number: an integer when whole, else at most three decimals.
pub fn number_text(value: f64) -> String {
    let rounded = format!("{value:.3}");
    let trimmed = rounded.trim_end_matches('0').trim_end_matches('.');
    match trimmed {
        "-0" | "" => "0".to_string(),
        text => text.to_string(),
    }
}

/// The numbers of a column's codes (`None` for a value that is not a number).
fn numbers(column: &Column) -> Vec<Option<f64>> {
    column
        .dictionary
        .values()
        .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect()
}

/// Checks that `function` applies to `column` (declared at `pointer`): every aggregate but the mode
/// needs numbers, the geometric mean positive ones. Messages never show a value.
pub fn check_aggregate(
    column: &Column,
    function: AggregateFunction,
    pointer: &str,
) -> Result<(), SpecError> {
    if function == AggregateFunction::Mode {
        return Ok(());
    }
    let numbers = numbers(column);
    let not_numbers = numbers.iter().filter(|n| n.is_none()).count();
    if not_numbers > 0 {
        return Err(SpecError::new(
            format!("{pointer}/aggregate"),
            ErrorCode::NotNumeric,
            format!(
                "column '{}': the {} needs numbers, and {not_numbers} distinct value(s) are not",
                column.name,
                function.name()
            ),
        ));
    }
    if function == AggregateFunction::GeometricMean && numbers.iter().flatten().any(|&x| x <= 0.0) {
        return Err(SpecError::new(
            format!("{pointer}/aggregate"),
            ErrorCode::InvalidParameter,
            format!(
                "column '{}': the geometric mean needs positive numbers",
                column.name
            ),
        ));
    }
    Ok(())
}

/// The classes of the published table (the quasi-identifiers at `levels`, suppressed records apart)
/// and the texts of every aggregated column per class.
pub fn aggregate(
    table: &Table,
    quasi_identifiers: &[(usize, GeneralizationMap)],
    levels: &[u8],
    suppressed: &[bool],
    columns: &[AggregatedColumn],
) -> Aggregates {
    let mut class_of = generalized_keys(table, quasi_identifiers, levels);
    for (class, &hidden) in class_of.iter_mut().zip(suppressed) {
        if hidden {
            *class = SUPPRESSED_GROUP;
        }
    }
    let classes = class_of
        .iter()
        .filter(|&&c| c != SUPPRESSED_GROUP)
        .map(|&c| c as usize + 1)
        .max()
        .unwrap_or(0);
    // the records of each class, contiguous (a counting sort by class)
    let mut start = vec![0usize; classes + 1];
    for &c in class_of.iter().filter(|&&c| c != SUPPRESSED_GROUP) {
        start[c as usize + 1] += 1;
    }
    for i in 0..classes {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut members = vec![0u32; start[classes]];
    for (row, &c) in class_of.iter().enumerate() {
        if c != SUPPRESSED_GROUP {
            members[next[c as usize]] = row as u32;
            next[c as usize] += 1;
        }
    }
    let texts = columns
        .iter()
        .map(|a| {
            let column = table.column(a.column);
            let numbers = numbers(column);
            // classes with the same aggregate share its text (equal ids, equal texts)
            let mut ids: rustc_hash::FxHashMap<String, u32> = rustc_hash::FxHashMap::default();
            let mut texts: Vec<String> = Vec::new();
            let text_of_class: Vec<u32> = (0..classes)
                .map(|class| {
                    let codes: Vec<u32> = members[start[class]..start[class + 1]]
                        .iter()
                        .map(|&row| column.codes[row as usize])
                        .collect();
                    let text = class_text(column, &numbers, &codes, a.function);
                    *ids.entry(text).or_insert_with_key(|t| {
                        texts.push(t.clone());
                        texts.len() as u32 - 1
                    })
                })
                .collect();
            CellTexts::from_parts(texts, text_of_class)
        })
        .collect();
    Aggregates { class_of, texts }
}

/// The aggregate of one class's `codes` as text (empty for a class whose records are all suppressed,
/// which no published record shows).
fn class_text(
    column: &Column,
    numbers: &[Option<f64>],
    codes: &[u32],
    function: AggregateFunction,
) -> String {
    if codes.is_empty() {
        return String::new();
    }
    let value = |code: u32| numbers[code as usize].unwrap_or(0.0);
    let text = |code: u32| column.dictionary.value(code).to_string();
    let n = codes.len().max(1) as f64;
    match function {
        AggregateFunction::Mean => number_text(codes.iter().map(|&c| value(c)).sum::<f64>() / n),
        AggregateFunction::GeometricMean => {
            number_text((codes.iter().map(|&c| value(c).ln()).sum::<f64>() / n).exp())
        }
        AggregateFunction::Median => {
            let mut sorted = codes.to_vec();
            sorted.sort_by(|&a, &b| value(a).total_cmp(&value(b)));
            text(sorted[(sorted.len().max(1) - 1) / 2])
        }
        AggregateFunction::Interval => {
            let low = codes
                .iter()
                .copied()
                .min_by(|&a, &b| value(a).total_cmp(&value(b)));
            let high = codes
                .iter()
                .copied()
                .max_by(|&a, &b| value(a).total_cmp(&value(b)));
            match (low, high) {
                (Some(l), Some(h)) if value(l) == value(h) => text(l),
                (Some(l), Some(h)) => format!("[{} .. {}]", text(l), text(h)),
                _ => String::new(),
            }
        }
        AggregateFunction::Mode => {
            let mut counts: Vec<(u32, u32)> = Vec::new();
            let mut sorted = codes.to_vec();
            sorted.sort_unstable();
            for code in sorted {
                match counts.last_mut() {
                    Some((c, n)) if *c == code => *n += 1,
                    _ => counts.push((code, 1)),
                }
            }
            // the most frequent; ties to the lowest number, then the first text
            counts
                .into_iter()
                .max_by(|a, b| {
                    a.1.cmp(&b.1).then_with(|| {
                        let (x, y) = (numbers[a.0 as usize], numbers[b.0 as usize]);
                        match (x, y) {
                            (Some(x), Some(y)) => y.total_cmp(&x),
                            _ => column
                                .dictionary
                                .value(b.0)
                                .cmp(column.dictionary.value(a.0)),
                        }
                    })
                })
                .map(|(code, _)| text(code))
                .unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Hierarchy;

    /// Ten records: sex (generalized or not) and an age to aggregate.
    fn table() -> Table {
        let rows = [
            ["F", "20"],
            ["F", "30"],
            ["F", "40"],
            ["F", "40"],
            ["M", "10"],
            ["M", "1000"],
            ["M", "30"],
            ["M", "30"],
            ["M", "20"],
            ["F", "90"],
        ];
        let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.to_vec()).collect();
        Table::from_rows(&["sex", "age"], &rows)
    }

    fn texts(function: AggregateFunction, level: u8, suppressed: &[bool]) -> Vec<String> {
        let table = table();
        let sex = Hierarchy::from_rows(&[vec!["F", "*"], vec!["M", "*"]]).unwrap();
        let map = GeneralizationMap::bind(sex, table.column(0)).unwrap();
        let columns = [AggregatedColumn {
            column: 1,
            function,
        }];
        let a = aggregate(&table, &[(0, map)], &[level], suppressed, &columns);
        a.class_of
            .iter()
            .map(|&c| match c {
                SUPPRESSED_GROUP => "*".to_string(),
                c => a.texts[0].text(c).to_string(),
            })
            .collect()
    }

    #[test]
    fn every_function_by_hand() {
        let none = [false; 10];
        // F: 20, 30, 40, 40, 90; M: 10, 1000, 30, 30, 20
        let mean = texts(AggregateFunction::Mean, 0, &none);
        assert_eq!((mean[0].as_str(), mean[4].as_str()), ("44", "218"));
        let median = texts(AggregateFunction::Median, 0, &none);
        assert_eq!((median[0].as_str(), median[4].as_str()), ("40", "30"));
        let mode = texts(AggregateFunction::Mode, 0, &none);
        assert_eq!((mode[0].as_str(), mode[4].as_str()), ("40", "30"));
        let interval = texts(AggregateFunction::Interval, 0, &none);
        assert_eq!(
            (interval[0].as_str(), interval[4].as_str()),
            ("[20 .. 90]", "[10 .. 1000]")
        );
        // geometric mean of F: (20·30·40·40·90)^(1/5) = 38.6636…
        let geometric = texts(AggregateFunction::GeometricMean, 0, &none);
        assert_eq!(geometric[0], "38.664");
        // one class at the top: the mean of all ten; a suppressed record shows `*` and is left out
        let mut hidden = none;
        hidden[5] = true;
        let top = texts(AggregateFunction::Mean, 1, &hidden);
        assert_eq!(top[5], "*");
        assert_eq!(
            top[0],
            number_text((20.0 + 30.0 + 40.0 + 40.0 + 10.0 + 30.0 + 30.0 + 20.0 + 90.0) / 9.0)
        );
        assert!(texts(AggregateFunction::Mean, 1, &none)
            .iter()
            .all(|t| t == "131"));
    }

    /// A suppressed class that appears first (key 0) has no published record: every function skips it.
    #[test]
    fn a_suppressed_class_first_in_the_table_is_skipped() {
        let rows = [["X", "5"], ["F", "3"], ["F", "9"]];
        let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.to_vec()).collect();
        let table = Table::from_rows(&["sex", "age"], &rows);
        let sex = Hierarchy::from_rows(&[vec!["X", "*"], vec!["F", "*"]]).unwrap();
        let map = GeneralizationMap::bind(sex, table.column(0)).unwrap();
        for function in [
            AggregateFunction::Mean,
            AggregateFunction::GeometricMean,
            AggregateFunction::Median,
            AggregateFunction::Mode,
            AggregateFunction::Interval,
        ] {
            let columns = [AggregatedColumn {
                column: 1,
                function,
            }];
            let a = aggregate(
                &table,
                &[(0, map.clone())],
                &[0],
                &[true, false, false],
                &columns,
            );
            assert_eq!(a.class_of[0], SUPPRESSED_GROUP);
            assert!(!a.texts[0].text(a.class_of[1]).is_empty(), "{function:?}");
        }
    }

    #[test]
    fn mode_ties_go_to_the_lowest_number() {
        // one class of three values, each once: the lowest number wins
        let rows = [["F", "5"], ["F", "3"], ["F", "9"]];
        let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.to_vec()).collect();
        let table = Table::from_rows(&["sex", "age"], &rows);
        let sex = Hierarchy::from_rows(&[vec!["F", "*"]]).unwrap();
        let map = GeneralizationMap::bind(sex, table.column(0)).unwrap();
        let columns = [AggregatedColumn {
            column: 1,
            function: AggregateFunction::Mode,
        }];
        let a = aggregate(&table, &[(0, map)], &[0], &[false; 3], &columns);
        assert_eq!(a.texts[0].text(a.class_of[0]), "3");
    }

    #[test]
    fn checks_refuse_texts_and_non_positive_numbers_without_showing_them() {
        let table = Table::from_rows(&["x"], &[vec!["secret-7"], vec!["-2"]]);
        let e =
            check_aggregate(table.column(0), AggregateFunction::Mean, "/attributes/x").unwrap_err();
        assert_eq!(e.code, ErrorCode::NotNumeric);
        assert!(!e.to_string().contains("secret"));
        assert!(check_aggregate(table.column(0), AggregateFunction::Mode, "/attributes/x").is_ok());
        let numbers = Table::from_rows(&["x"], &[vec!["3"], vec!["-2"]]);
        let e =
            check_aggregate(numbers.column(0), AggregateFunction::GeometricMean, "/a").unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code),
            ("/a/aggregate", ErrorCode::InvalidParameter)
        );
    }
}
