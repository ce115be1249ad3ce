//! Census-like tables for whole-job benchmarks at any size, with the uniqueness of real population data.
//! Replicated benchmark rows are degenerate at scale (adult ×330 is already 5-anonymous at the bottom of
//! its lattice); these tables keep the classic quasi-identifier triple that makes most people unique
//! (Sweeney 2000, "Simple demographics often identify people uniquely": 5-digit ZIP code, date of birth
//! and sex identify 87 % of the US population) plus adult-like categorical columns:
//!
//! - `zip`: 5-digit codes, skewed: a 3-digit area drawn from 900 areas with Zipf weights (s = 0.8), then
//!   one of 45 local codes of the area with Zipf weights (s = 0.7) — up to 40,500 codes;
//! - `birth_date`: `YYYY-MM-DD` between 1930-01-01 and 2019-12-31 (90 years, about 32,900 days),
//!   uniform;
//! - `sex`, `race`, `marital_status`, `education`: fixed categorical distributions close to the adult
//!   table's;
//! - `diagnosis`: an ICD-10 chapter (22 values, skewed), a sensitive attribute.
//!
//! [`census_hierarchies`] builds generalization hierarchies for the quasi-identifiers in ARX's CSV form:
//! ZIP digit masking, date → month → year → 5 years → decade, grouped categories. Everything is
//! deterministic for a seed; codes go straight into the columns (no text per cell).

use super::renumber;
use crate::core::calendar::{civil_from_days, days_from_civil};
use crate::core::data::{Column, Table};
use crate::core::rng::SplitMix64;

/// The columns of a census table, in order.
pub const CENSUS_COLUMNS: [&str; 7] = [
    "zip",
    "birth_date",
    "sex",
    "race",
    "marital_status",
    "education",
    "diagnosis",
];

/// The quasi-identifiers among [`CENSUS_COLUMNS`]: all but the last, `diagnosis`.
pub const CENSUS_QUASI_IDENTIFIERS: &[&str] = CENSUS_COLUMNS.split_at(6).0;

const AREAS: usize = 900;
const LOCAL_CODES: usize = 45;
const FIRST_YEAR: i64 = 1930;
const YEARS: i64 = 90;

const SEXES: [(&str, u32); 2] = [("Male", 67), ("Female", 33)];
const RACES: [(&str, u32); 5] = [
    ("White", 854),
    ("Black", 93),
    ("Asian-Pac-Islander", 29),
    ("Amer-Indian-Eskimo", 10),
    ("Other", 8),
];
/// Marital statuses and whether each counts as married (the hierarchy's middle level).
const MARITAL: [(&str, u32, bool); 7] = [
    ("Married-civ-spouse", 466, true),
    ("Never-married", 322, false),
    ("Divorced", 140, false),
    ("Separated", 31, false),
    ("Widowed", 28, false),
    ("Married-spouse-absent", 12, true),
    ("Married-AF-spouse", 1, true),
];
/// Education levels and their group (the hierarchy's middle level).
const EDUCATION: [(&str, u32, &str); 16] = [
    ("HS-grad", 326, "High school"),
    ("Some-college", 221, "High school"),
    ("Bachelors", 167, "Higher education"),
    ("Masters", 54, "Higher education"),
    ("Assoc-voc", 43, "Associate"),
    ("11th", 36, "Primary and secondary"),
    ("Assoc-acdm", 33, "Associate"),
    ("10th", 27, "Primary and secondary"),
    ("7th-8th", 18, "Primary and secondary"),
    ("Prof-school", 18, "Higher education"),
    ("9th", 15, "Primary and secondary"),
    ("12th", 13, "Primary and secondary"),
    ("Doctorate", 13, "Higher education"),
    ("5th-6th", 10, "Primary and secondary"),
    ("1st-4th", 5, "Primary and secondary"),
    ("Preschool", 1, "Primary and secondary"),
];
const DIAGNOSES: [(&str, u32); 22] = [
    ("I00-I99 circulatory", 180),
    ("J00-J99 respiratory", 120),
    ("K00-K95 digestive", 100),
    ("M00-M99 musculoskeletal", 95),
    ("F01-F99 mental", 80),
    ("E00-E89 endocrine", 70),
    ("C00-D49 neoplasms", 65),
    ("S00-T88 injury", 60),
    ("N00-N99 genitourinary", 50),
    ("G00-G99 nervous", 40),
    ("L00-L99 skin", 30),
    ("A00-B99 infectious", 25),
    ("H00-H59 eye", 20),
    ("R00-R99 symptoms", 15),
    ("O00-O9A pregnancy", 12),
    ("H60-H95 ear", 10),
    ("D50-D89 blood", 8),
    ("Z00-Z99 health services", 7),
    ("Q00-Q99 congenital", 5),
    ("V00-Y99 external causes", 4),
    ("P00-P96 perinatal", 3),
    ("U00-U85 special purposes", 1),
];

/// Draws indices with fixed weights: cumulative weights and a binary search.
struct Weighted {
    cumulative: Vec<u64>,
}

impl Weighted {
    fn new(weights: impl IntoIterator<Item = u64>) -> Self {
        let mut total = 0;
        let cumulative = weights
            .into_iter()
            .map(|w| {
                total += w;
                total
            })
            .collect();
        Self { cumulative }
    }

    /// Weights `1 / rank^s` for ranks 1..=n, scaled to integers.
    fn zipf(n: usize, s: f64) -> Self {
        Self::new((1..=n).map(|rank| ((1e9 / (rank as f64).powf(s)) as u64).max(1)))
    }

    fn draw(&self, rng: &mut SplitMix64) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0);
        let x = rng.below(total);
        self.cumulative.partition_point(|&c| c <= x)
    }
}

/// The 5-digit code of local code `local` of area `area`: areas are spread over 000–999 by a fixed
/// permutation, local codes over 00–99 (29 is coprime with 100, so the codes of an area are distinct).
fn zip_code(area: usize, local: usize) -> u32 {
    let prefix = (area * 677 + 101) % 1000;
    let suffix = (local * 29 + area) % 100;
    (prefix * 100 + suffix) as u32
}

/// A census table of `rows` records; the same `seed` gives the same table.
pub fn census_table(rows: usize, seed: u64) -> Table {
    let mut rng = SplitMix64(seed);
    let areas = Weighted::zipf(AREAS, 0.8);
    let locals = Weighted::zipf(LOCAL_CODES, 0.7);
    let sexes = Weighted::new(SEXES.iter().map(|s| u64::from(s.1)));
    let races = Weighted::new(RACES.iter().map(|s| u64::from(s.1)));
    let marital = Weighted::new(MARITAL.iter().map(|s| u64::from(s.1)));
    let education = Weighted::new(EDUCATION.iter().map(|s| u64::from(s.1)));
    let diagnoses = Weighted::new(DIAGNOSES.iter().map(|s| u64::from(s.1)));
    let first_day = days_from_civil(FIRST_YEAR, 1, 1);
    let days = (days_from_civil(FIRST_YEAR + YEARS, 1, 1) - first_day) as u64;

    // raw values first (ZIP code, day offset, category index), recoded in first-appearance order below
    let mut raw: Vec<Vec<u32>> = (0..CENSUS_COLUMNS.len())
        .map(|_| Vec::with_capacity(rows))
        .collect();
    for _ in 0..rows {
        let area = areas.draw(&mut rng);
        raw[0].push(zip_code(area, locals.draw(&mut rng)));
        raw[1].push(rng.below(days) as u32);
        raw[2].push(sexes.draw(&mut rng) as u32);
        raw[3].push(races.draw(&mut rng) as u32);
        raw[4].push(marital.draw(&mut rng) as u32);
        raw[5].push(education.draw(&mut rng) as u32);
        raw[6].push(diagnoses.draw(&mut rng) as u32);
    }
    let text = |column: usize, value: u32| -> String {
        match column {
            0 => format!("{value:05}"),
            1 => {
                let (y, m, d) = civil_from_days(first_day + i64::from(value));
                format!("{y:04}-{m:02}-{d:02}")
            }
            2 => SEXES[value as usize].0.to_string(),
            3 => RACES[value as usize].0.to_string(),
            4 => MARITAL[value as usize].0.to_string(),
            5 => EDUCATION[value as usize].0.to_string(),
            _ => DIAGNOSES[value as usize].0.to_string(),
        }
    };
    let columns = raw
        .into_iter()
        .enumerate()
        .map(|(j, mut codes)| {
            let domain = codes.iter().copied().max().map_or(0, |m| m as usize + 1);
            let dictionary = renumber(&mut codes, domain, |value| text(j, value));
            Column {
                name: CENSUS_COLUMNS[j].to_string(),
                dictionary,
                codes,
            }
        })
        .collect();
    Table::new(columns, rows)
}

/// One ARX-format hierarchy per quasi-identifier of `table` (a census table), as `(column, CSV text)`
/// with `;` between levels: one line per value of the column, the value first and `*` last.
pub fn census_hierarchies(table: &Table) -> Vec<(&'static str, String)> {
    CENSUS_QUASI_IDENTIFIERS
        .iter()
        .filter_map(|&name| {
            let column = table.column(table.column_index(name)?);
            let mut text = String::new();
            for value in column.dictionary.values() {
                let levels = generalizations(name, value);
                text.push_str(value);
                for level in levels {
                    text.push(';');
                    text.push_str(&level);
                }
                text.push_str(";*\n");
            }
            Some((name, text))
        })
        .collect()
}

/// The generalizations of `value` in column `name`, most specific first, without the value and `*`.
fn generalizations(name: &str, value: &str) -> Vec<String> {
    match name {
        "zip" => (1..value.len())
            .rev()
            .map(|keep| format!("{}{}", &value[..keep], "*".repeat(value.len() - keep)))
            .collect(),
        "birth_date" => {
            let year: i64 = value.get(..4).and_then(|y| y.parse().ok()).unwrap_or(0);
            let five = year - year.rem_euclid(5);
            let decade = year - year.rem_euclid(10);
            vec![
                value.get(..7).unwrap_or(value).to_string(),
                year.to_string(),
                format!("[{five} .. {}]", five + 4),
                format!("[{decade} .. {}]", decade + 9),
            ]
        }
        "marital_status" => MARITAL
            .iter()
            .find(|m| m.0 == value)
            .map(|m| vec![if m.2 { "Married" } else { "Not married" }.to_string()])
            .unwrap_or_default(),
        "education" => EDUCATION
            .iter()
            .find(|e| e.0 == value)
            .map(|e| vec![e.2.to_string()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::parse_arx_hierarchy;
    use std::collections::HashMap;

    #[test]
    fn the_same_seed_gives_the_same_table() {
        let a = census_table(1000, 7);
        let b = census_table(1000, 7);
        let c = census_table(1000, 8);
        for j in 0..CENSUS_COLUMNS.len() {
            assert_eq!(a.column(j).codes, b.column(j).codes);
        }
        assert_ne!(a.column(0).codes, c.column(0).codes);
    }

    #[test]
    fn zip_date_and_sex_make_most_records_unique() {
        let table = census_table(100_000, 1);
        let (zip, date, sex) = (table.column(0), table.column(1), table.column(2));
        assert!(zip.dictionary.len() > 10_000, "{}", zip.dictionary.len());
        assert!(date.dictionary.len() > 30_000);
        let mut counts: HashMap<(u32, u32, u32), u32> = HashMap::new();
        for row in 0..table.row_count() {
            *counts
                .entry((zip.codes[row], date.codes[row], sex.codes[row]))
                .or_default() += 1;
        }
        let unique = counts.values().filter(|&&n| n == 1).count();
        assert!(unique > 90_000, "{unique} unique of 100,000");
        // ZIP codes are skewed: the most frequent holds far more than an even share
        let mut per_zip = vec![0u32; zip.dictionary.len()];
        for &code in &zip.codes {
            per_zip[code as usize] += 1;
        }
        let top = per_zip.iter().copied().max().unwrap_or(0);
        assert!(f64::from(top) > 20.0 * 100_000.0 / per_zip.len() as f64);
    }

    #[test]
    fn the_hierarchies_cover_every_value_and_parse() {
        let table = census_table(5_000, 3);
        let hierarchies = census_hierarchies(&table);
        assert_eq!(hierarchies.len(), CENSUS_QUASI_IDENTIFIERS.len());
        for (name, text) in &hierarchies {
            let hierarchy = parse_arx_hierarchy(text.as_bytes(), b';').expect(name);
            let column = table.column(table.column_index(name).unwrap());
            assert_eq!(
                text.lines().count(),
                column.dictionary.len(),
                "{name}: one line per value"
            );
            let height = match *name {
                "zip" => 6,
                "birth_date" => 6,
                "marital_status" | "education" => 3,
                _ => 2,
            };
            assert_eq!(hierarchy.height(), height, "{name}");
        }
        let zip = &hierarchies[0].1;
        let line = zip.lines().next().unwrap();
        let parts: Vec<&str> = line.split(';').collect();
        assert_eq!(parts[1], format!("{}*", &parts[0][..4]));
        assert_eq!(parts[5], "*");
        let date = &hierarchies[1].1;
        let parts: Vec<&str> = date.lines().next().unwrap().split(';').collect();
        assert_eq!(parts[1], &parts[0][..7]);
        assert_eq!(parts[2], &parts[0][..4]);
    }
}
