//! A seeded generator of tables with planted functional dependencies and matching hierarchies, for the
//! dependency-preserving clustering algorithms (Gorla 2019 evaluates on data with known dependencies;
//! note §3.2).
//!
//! Columns: `zip`, `city`, `province`, `age`, `sex`, `diagnosis`, `medication`. Planted dependencies:
//! zip → city, city → province and diagnosis → medication. A fraction `violation_rate` of the records
//! gets another city of the same province (violating zip → city only) and, independently with the same
//! rate, another medication (violating diagnosis → medication). Zips are drawn with a mild skew (the
//! square of a uniform draw favours low zip numbers) unless `uniform` is set, the other columns
//! uniformly.
//! Hierarchies, built in code: zip → zip prefix (first four digits) → city → province → `*`;
//! city → province → `*`; province → region → `*`; age → 5-year band → 20-year band → `*`; sex → `*`.
//! Diagnosis and medication are not generalized and have no hierarchy.

use crate::core::data::{Hierarchy, HierarchyError, Table};
use crate::core::rng::SplitMix64;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct DependencyTableOptions {
    /// Records.
    pub rows: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Provinces (at most 9, so zips keep five digits).
    pub provinces: usize,
    /// Cities per province (at most 99).
    pub cities_per_province: usize,
    /// Zips per city (at most 99).
    pub zips_per_city: usize,
    /// Distinct diagnoses (two diagnoses share a medication).
    pub diagnoses: usize,
    /// Fraction of records whose city, and independently whose medication, breaks its dependency.
    pub violation_rate: f64,
    /// Draw zips uniformly instead of with the default skew.
    pub uniform: bool,
}

impl Default for DependencyTableOptions {
    fn default() -> Self {
        Self {
            rows: 1000,
            seed: 0,
            provinces: 6,
            cities_per_province: 8,
            zips_per_city: 12,
            diagnoses: 20,
            violation_rate: 0.01,
            uniform: false,
        }
    }
}

/// A generated table and the hierarchies of its quasi-identifiers.
#[derive(Debug, Clone)]
pub struct DependencyTable {
    /// The records (columns as in the module documentation).
    pub table: Table,
    /// `(column name, hierarchy)` of `zip`, `city`, `province`, `age` and `sex`.
    pub hierarchies: Vec<(String, Hierarchy)>,
}

/// Column names, in order.
pub const COLUMNS: [&str; 7] = [
    "zip",
    "city",
    "province",
    "age",
    "sex",
    "diagnosis",
    "medication",
];

fn zip(p: usize, c: usize, z: usize) -> String {
    format!("{}{:02}{:02}", p + 1, c, z)
}

fn city(p: usize, c: usize) -> String {
    format!("C{}-{:02}", p + 1, c)
}

fn province(p: usize) -> String {
    format!("P{}", p + 1)
}

fn band(age: usize, width: usize) -> String {
    let low = age / width * width;
    format!("{}-{}", low, low + width - 1)
}

/// Generates a table (see the module documentation). The same options always give the same table.
pub fn dependency_table(
    options: &DependencyTableOptions,
) -> Result<DependencyTable, HierarchyError> {
    let provinces = options.provinces.clamp(1, 9);
    let cities = options.cities_per_province.clamp(1, 99);
    let zips = options.zips_per_city.clamp(1, 99);
    let diagnoses = options.diagnoses.max(1);
    let mut rng = SplitMix64(options.seed);
    let unit = |rng: &mut SplitMix64| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let all_zips = provinces * cities * zips;
    let mut rows: Vec<[String; 7]> = Vec::with_capacity(options.rows);
    for _ in 0..options.rows {
        let u = unit(&mut rng);
        let spread = if options.uniform { u } else { u * u };
        let index = (spread * all_zips as f64) as usize % all_zips;
        let (p, rest) = (index / (cities * zips), index % (cities * zips));
        let (c, z) = (rest / zips, rest % zips);
        let mut record_city = c;
        if cities > 1 && unit(&mut rng) < options.violation_rate {
            record_city = (c + 1 + rng.index(cities - 1)) % cities;
        }
        let age = 18 + rng.index(72);
        let sex = if rng.index(2) == 0 { "F" } else { "M" };
        let d = rng.index(diagnoses);
        let mut medication = d / 2;
        if diagnoses > 2 && unit(&mut rng) < options.violation_rate {
            medication =
                (medication + 1 + rng.index(diagnoses.div_ceil(2) - 1)) % diagnoses.div_ceil(2);
        }
        rows.push([
            zip(p, c, z),
            city(p, record_city),
            province(p),
            age.to_string(),
            sex.to_string(),
            format!("D{d:02}"),
            format!("M{medication:02}"),
        ]);
    }
    let refs: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    let table = Table::from_rows(&COLUMNS, &refs);
    let mut zip_rows = Vec::new();
    let mut city_rows = Vec::new();
    let mut province_rows = Vec::new();
    for p in 0..provinces {
        province_rows.push(vec![
            province(p),
            format!("R{}", p / 3 + 1),
            "*".to_string(),
        ]);
        for c in 0..cities {
            city_rows.push(vec![city(p, c), province(p), "*".to_string()]);
            for z in 0..zips {
                let code = zip(p, c, z);
                let prefix = format!("{}*", &code[..4]);
                zip_rows.push(vec![code, prefix, city(p, c), province(p), "*".to_string()]);
            }
        }
    }
    let age_rows: Vec<Vec<String>> = (0..120)
        .map(|a| vec![a.to_string(), band(a, 5), band(a, 20), "*".to_string()])
        .collect();
    let sex_rows = vec![
        vec!["F".to_string(), "*".to_string()],
        vec!["M".to_string(), "*".to_string()],
    ];
    let hierarchies = vec![
        ("zip".to_string(), Hierarchy::from_rows(&zip_rows)?),
        ("city".to_string(), Hierarchy::from_rows(&city_rows)?),
        (
            "province".to_string(),
            Hierarchy::from_rows(&province_rows)?,
        ),
        ("age".to_string(), Hierarchy::from_rows(&age_rows)?),
        ("sex".to_string(), Hierarchy::from_rows(&sex_rows)?),
    ];
    Ok(DependencyTable { table, hierarchies })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::GeneralizationMap;

    #[test]
    fn tables_are_seeded_and_hierarchies_cover_them() {
        let options = DependencyTableOptions {
            rows: 500,
            seed: 7,
            ..Default::default()
        };
        let a = dependency_table(&options).unwrap();
        let b = dependency_table(&options).unwrap();
        for j in 0..7 {
            assert_eq!(a.table.column(j).codes, b.table.column(j).codes);
        }
        for (j, (_, h)) in a.hierarchies.iter().enumerate() {
            assert!(GeneralizationMap::bind(h.clone(), a.table.column(j)).is_ok());
        }
    }

    #[test]
    fn without_violations_the_dependencies_hold_and_with_them_they_break() {
        let holds = |rate: f64, lhs: usize, rhs: usize| {
            let t = dependency_table(&DependencyTableOptions {
                rows: 3000,
                violation_rate: rate,
                ..Default::default()
            })
            .unwrap()
            .table;
            let mut seen = std::collections::HashMap::new();
            (0..3000).all(|r| {
                let (x, y) = (t.column(lhs).codes[r], t.column(rhs).codes[r]);
                *seen.entry(x).or_insert(y) == y
            })
        };
        assert!(holds(0.0, 0, 1) && holds(0.0, 1, 2) && holds(0.0, 5, 6));
        assert!(!holds(0.05, 0, 1) && !holds(0.05, 5, 6));
        // city changes stay within the province
        assert!(holds(0.05, 1, 2));
    }
}
