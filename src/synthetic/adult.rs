//! Tables shaped like the UCI Adult benchmark (the ARX version bundled in `tests/data/adult/`) at any
//! size. Records are drawn uniformly with replacement from a template table (the bundled `adult.csv`,
//! loaded by the caller), so value frequencies and the dependence between columns follow the template;
//! only age is jittered by −2..=+2 years, clamped to the template's age range, so that ages absent from
//! the template also occur. Every generated value is a template value or an integer age within the
//! template's range, so the bundled ARX hierarchies (ages 1–100) cover the output. Codes are written
//! straight into the columns (first-appearance order, like the CSV reader); no text is made per cell.

use super::renumber;
use crate::core::data::{Column, Dictionary, Table};
use crate::core::rng::SplitMix64;

/// The nine columns of the bundled adult table, in its header order.
pub const ADULT_COLUMNS: [&str; 9] = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
];

/// Position of `age` in [`ADULT_COLUMNS`].
const AGE: usize = 1;

/// Largest age change the generator applies, in years.
const JITTER: i64 = 2;

/// Why a template table cannot shape adult-like tables. Messages name columns, never cell values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntheticError {
    /// The template lacks one of [`ADULT_COLUMNS`].
    #[error("the template has no column '{0}'")]
    MissingColumn(&'static str),
    /// An age of the template is not a whole number of years.
    #[error(
        "the template's age column holds a value that is not a whole number between 0 and 1000"
    )]
    AgeNotInteger,
    /// The template has no records.
    #[error("the template has no records")]
    Empty,
}

/// The template of an adult-shaped generator: every template record's codes, and the value texts.
#[derive(Debug, Clone)]
pub struct AdultShape {
    /// Row-major template codes, 9 per record (age as years minus `min_age`).
    records: Vec<u32>,
    /// Value texts per column (age unused: ages are written as numbers).
    dictionaries: Vec<Dictionary>,
    min_age: u32,
    max_age: u32,
}

impl AdultShape {
    /// A shape from a template table holding the [`ADULT_COLUMNS`] (other columns are ignored).
    ///
    /// # Errors
    /// [`SyntheticError`] when a column is missing, an age is not an integer, or the table is empty.
    pub fn from_table(template: &Table) -> Result<Self, SyntheticError> {
        if template.row_count() == 0 {
            return Err(SyntheticError::Empty);
        }
        let mut columns = Vec::with_capacity(ADULT_COLUMNS.len());
        for name in ADULT_COLUMNS {
            let index = template
                .column_index(name)
                .ok_or(SyntheticError::MissingColumn(name))?;
            columns.push(template.column(index));
        }
        let years: Vec<u32> = columns[AGE]
            .dictionary
            .values()
            .map(|v| {
                v.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&y| y <= 1000)
                    .ok_or(SyntheticError::AgeNotInteger)
            })
            .collect::<Result<_, _>>()?;
        let ages = &columns[AGE].codes;
        let min_age = ages.iter().map(|&c| years[c as usize]).min().unwrap_or(0);
        let max_age = ages.iter().map(|&c| years[c as usize]).max().unwrap_or(0);
        let n = template.row_count();
        let mut records = Vec::with_capacity(n * ADULT_COLUMNS.len());
        for row in 0..n {
            for (j, column) in columns.iter().enumerate() {
                let code = column.codes[row];
                records.push(if j == AGE {
                    years[code as usize] - min_age
                } else {
                    code
                });
            }
        }
        Ok(Self {
            records,
            dictionaries: columns.iter().map(|c| c.dictionary.clone()).collect(),
            min_age,
            max_age,
        })
    }

    /// Number of template records.
    pub fn template_rows(&self) -> usize {
        self.records.len() / ADULT_COLUMNS.len()
    }

    /// A table of `rows` records with the [`ADULT_COLUMNS`]; the same `seed` gives the same table.
    pub fn generate(&self, rows: usize, seed: u64) -> Table {
        let q = ADULT_COLUMNS.len();
        let template = self.template_rows() as u64;
        let span = (self.max_age - self.min_age) as i64;
        let mut rng = SplitMix64(seed);
        let mut codes: Vec<Vec<u32>> = (0..q).map(|_| Vec::with_capacity(rows)).collect();
        for _ in 0..rows {
            let pick = rng.below(template) as usize;
            let record = &self.records[pick * q..pick * q + q];
            let jitter = rng.below((2 * JITTER + 1) as u64) as i64 - JITTER;
            let age = (i64::from(record[AGE]) + jitter).clamp(0, span) as u32;
            for (j, column) in codes.iter_mut().enumerate() {
                column.push(if j == AGE { age } else { record[j] });
            }
        }
        let columns = codes
            .into_iter()
            .enumerate()
            .map(|(j, mut column)| {
                let domain = if j == AGE {
                    (self.max_age - self.min_age + 1) as usize
                } else {
                    self.dictionaries[j].len()
                };
                let dictionary = self.recode(j, domain, &mut column);
                Column {
                    name: ADULT_COLUMNS[j].to_string(),
                    dictionary,
                    codes: column,
                }
            })
            .collect();
        Table::new(columns, rows)
    }

    /// Renumbers `column` (template codes, or age offsets) in first-appearance order and returns its
    /// dictionary: one text per distinct value, not per cell.
    fn recode(&self, j: usize, domain: usize, column: &mut [u32]) -> Dictionary {
        renumber(column, domain, |code| {
            if j == AGE {
                (self.min_age + code).to_string()
            } else {
                self.dictionaries[j].value(code).to_string()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{parse_arx_hierarchy, read_table, CsvOptions};
    use crate::core::data::GeneralizationMap;
    use std::path::Path;

    fn small_template() -> Table {
        Table::from_rows(
            &ADULT_COLUMNS,
            &[
                vec![
                    "Male",
                    "30",
                    "White",
                    "Never-married",
                    "Bachelors",
                    "United-States",
                    "Private",
                    "Sales",
                    "<=50K",
                ],
                vec![
                    "Female",
                    "40",
                    "Black",
                    "Divorced",
                    "HS-grad",
                    "Cuba",
                    "State-gov",
                    "Tech-support",
                    ">50K",
                ],
            ],
        )
    }

    #[test]
    fn same_seed_same_table_and_records_keep_their_template_values() {
        let shape = AdultShape::from_table(&small_template()).unwrap();
        let a = shape.generate(500, 3);
        let b = shape.generate(500, 3);
        let c = shape.generate(500, 4);
        let text = |t: &Table, row: usize, j: usize| {
            let column = t.column(j);
            column.dictionary.value(column.codes[row]).to_string()
        };
        let all_equal =
            |x: &Table, y: &Table| (0..500).all(|r| (0..9).all(|j| text(x, r, j) == text(y, r, j)));
        assert!(all_equal(&a, &b));
        assert!(!all_equal(&a, &c));
        let mut females = 0;
        for r in 0..500 {
            let female = text(&a, r, 0) == "Female";
            females += usize::from(female);
            // whole records: the other columns follow the sampled template record
            assert_eq!(text(&a, r, 5) == "Cuba", female);
            assert_eq!(text(&a, r, 8) == ">50K", female);
            let age: u32 = text(&a, r, 1).parse().unwrap();
            if female {
                assert!(
                    (38..=40).contains(&age),
                    "40 jittered, clamped at the template maximum"
                );
            } else {
                assert!(
                    (30..=32).contains(&age),
                    "30 jittered, clamped at the template minimum"
                );
            }
        }
        assert!((200..=300).contains(&females), "about half: {females}");
        // first-appearance codes, like the CSV reader
        assert_eq!(a.column(0).codes[0], 0);
        assert_eq!(a.column(AGE).dictionary.len(), 6, "30..=32 and 38..=40");
        assert!(a
            .columns()
            .iter()
            .enumerate()
            .all(|(j, c)| j == AGE || c.dictionary.len() == 2));
    }

    #[test]
    fn missing_columns_and_bad_ages_are_refused() {
        let table = Table::from_rows(&["sex"], &[vec!["Male"]]);
        assert_eq!(
            AdultShape::from_table(&table).unwrap_err(),
            SyntheticError::MissingColumn("age")
        );
        let mut rows = vec![ADULT_COLUMNS.to_vec()];
        rows[0][AGE] = "old";
        let table = Table::from_rows(&ADULT_COLUMNS, &rows);
        assert_eq!(
            AdultShape::from_table(&table).unwrap_err(),
            SyntheticError::AgeNotInteger
        );
    }

    #[test]
    fn bundled_hierarchies_cover_generated_adult_and_frequencies_follow_it() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult");
        let bytes = std::fs::read(dir.join("adult.csv")).unwrap();
        let adult = read_table(
            bytes.as_slice(),
            &CsvOptions {
                delimiter: b';',
                ..CsvOptions::default()
            },
        )
        .unwrap();
        let shape = AdultShape::from_table(&adult).unwrap();
        assert_eq!(shape.template_rows(), 30_162);
        let table = shape.generate(60_000, 11);
        for name in ADULT_COLUMNS {
            let text = std::fs::read(dir.join(format!("adult_hierarchy_{name}.csv"))).unwrap();
            let hierarchy = parse_arx_hierarchy(&text, b';').unwrap();
            let column = table.column(table.column_index(name).unwrap());
            assert!(GeneralizationMap::bind(hierarchy, column).is_ok(), "{name}");
        }
        // share of each template value within 1.5 points of the template's (sampling error at 60,000
        // records is about 0.2 points)
        for name in ["sex", "race", "marital-status", "salary-class"] {
            let original = adult.column(adult.column_index(name).unwrap());
            let generated = table.column(table.column_index(name).unwrap());
            let counts = generated.value_counts();
            for (code, count) in original.value_counts().into_iter().enumerate() {
                let value = original.dictionary.value(code as u32);
                let share = count as f64 / 30_162.0;
                let made = generated
                    .dictionary
                    .code(value)
                    .map_or(0, |c| counts[c as usize]) as f64
                    / 60_000.0;
                assert!((share - made).abs() < 0.015, "{name}: {share} vs {made}");
            }
        }
    }
}
