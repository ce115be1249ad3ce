//! Assessment of an existing table without changing it, shared by `POST /v1/datasets/{id}/assessments`
//! and `anonymizer assess`: the achieved k, per sensitive attribute the achieved l-diversity figures,
//! and the re-identification risk profile (`core::risk`).
//!
//! Classes group the records by their original quasi-identifier values (no hierarchy is read; a
//! `hierarchy` given with a quasi-identifier is ignored). The sensitive-attribute figures (achieved
//! l of each l-diversity variant, t of each ground distance, δ, β) are those of [`super::achieved`];
//! the hierarchical distance needs the sensitive attribute's hierarchy given inline.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::core::data::{Column, Table};
use crate::core::privacy::EarthMovers;
use crate::core::risk::classes::group_keys;
use crate::core::risk::{ClassSizes, KeyColumn, MatchedClass, RiskProfile};
use crate::error_code::ErrorCode;

use crate::domain::analysis::achieved::{measure, SensitiveDistribution, SensitiveMeasures};
use crate::domain::analysis::risk::risk_settings;
use crate::domain::models::t_closeness::hierarchical_distance;
use crate::domain::resolve::roles::declared_columns;
use crate::domain::resolve::{bind_hierarchy, HierarchyResolver};
use crate::domain::spec::{
    parse_json, pointer_segment, AttributeSpec, CsvSpec, HierarchySpec, Problems, RiskSpec, Role,
    SpecError,
};

/// What to assess: the roles of the columns and the risk settings (`{"attributes": …, "risk": …}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssessmentSpec {
    /// How the CSV is read (CLI; the service checks it against the upload's delimiter).
    #[serde(default)]
    pub csv: CsvSpec,
    /// The role of every column; quasi-identifiers need no hierarchy.
    pub attributes: BTreeMap<String, AttributeSpec>,
    /// Risk analysis settings.
    #[serde(default)]
    pub risk: RiskSpec,
}

impl AssessmentSpec {
    /// Parses a request, reporting the JSON pointer of the first problem.
    pub fn from_json(bytes: &[u8]) -> Result<Self, SpecError> {
        parse_json(bytes)
    }
}

/// The assessment of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assessment {
    /// Records in the table.
    pub records: u64,
    /// The quasi-identifiers, in table order.
    pub quasi_identifiers: Vec<String>,
    /// Equivalence classes.
    pub classes: u64,
    /// The achieved k: the smallest class (0 without records).
    pub k: u64,
    /// Per sensitive attribute, by column name.
    pub sensitive_attributes: BTreeMap<String, SensitiveAssessment>,
    /// The re-identification risk profile.
    pub risk: RiskProfile,
}

/// Measures of one sensitive attribute over the classes; null without records.
pub type SensitiveAssessment = SensitiveMeasures;

/// Validates `spec` against `table` and assesses it; the table is its own population for journalist
/// and marketer risk.
pub fn assess(table: &Table, spec: &AssessmentSpec) -> Result<Assessment, SpecError> {
    assess_against(table, spec, None)
}

/// [`assess`] with an optional population table: journalist and marketer risk then use, for every
/// class of `table`, the number of population records with the same quasi-identifier values (compared
/// as text; a class the population lacks counts as its own size, since the population contains the
/// sample), and without an explicit `population_size`/`sampling_fraction` the population table's
/// record count is the population size of the uniqueness estimates. The population must have every
/// quasi-identifier column (`/attributes/<name>`, `missing_in_population` otherwise).
pub fn assess_against(
    table: &Table,
    spec: &AssessmentSpec,
    population: Option<&Table>,
) -> Result<Assessment, SpecError> {
    let mut problems = Problems::new();
    let mut quasi_identifiers = Vec::new();
    let mut sensitive = Vec::new();
    for (index, attribute) in declared_columns(table, &spec.attributes, &mut problems) {
        match attribute.role {
            Role::QuasiIdentifier => quasi_identifiers.push(index),
            Role::Sensitive => sensitive.push(index),
            Role::Insensitive | Role::Identifying => {}
        }
    }
    let rows = table.row_count();
    let settings = problems.keep(risk_settings(&spec.risk, rows as u64, "/risk"));
    let mut settings = problems.finish_with(settings)?;
    let columns: Vec<KeyColumn<'_>> = quasi_identifiers
        .iter()
        .map(|&c| KeyColumn {
            codes: &table.column(c).codes,
            translate: None,
        })
        .collect();
    let keys = group_keys(&columns, rows);
    let class_count = keys.iter().map(|&k| k as usize + 1).max().unwrap_or(0);
    let mut sizes = vec![0u64; class_count];
    for &k in &keys {
        sizes[k as usize] += 1;
    }
    let classes = ClassSizes::from_sizes(sizes.iter().copied());
    let matched = match population {
        None => None,
        Some(population) => {
            if settings.population_size.is_none() {
                settings.population_size = Some((population.row_count() as u64).max(rows as u64));
            }
            Some(match_population(
                table,
                &quasi_identifiers,
                &keys,
                &sizes,
                population,
            )?)
        }
    };
    let mut sensitive_attributes = BTreeMap::new();
    for &c in &sensitive {
        let column = table.column(c);
        let hierarchical = match &spec.attributes[&column.name].hierarchy {
            Some(source) => Some(sensitive_hierarchy(source, column)?),
            None => None,
        };
        let distribution = SensitiveDistribution::new(column, hierarchical);
        sensitive_attributes.insert(
            column.name.clone(),
            measure(&keys, &column.codes, |_| true, &distribution),
        );
    }
    Ok(Assessment {
        records: rows as u64,
        quasi_identifiers: quasi_identifiers
            .iter()
            .map(|&c| table.column(c).name.clone())
            .collect(),
        classes: classes.classes(),
        k: classes.min_size().unwrap_or(0),
        sensitive_attributes,
        risk: RiskProfile::new(&classes, matched.as_deref(), &settings),
    })
}

/// The hierarchical EMD of a sensitive attribute whose hierarchy is given inline (`levels` or `arx`),
/// loaded and bound as a job's are; stored hierarchies and files are not resolved here.
fn sensitive_hierarchy(source: &HierarchySpec, column: &Column) -> Result<EarthMovers, SpecError> {
    let inline_only: &HierarchyResolver<'_> = &|_| {
        Err("an assessment takes a sensitive attribute's hierarchy inline (levels or arx)".into())
    };
    let pointer = format!("/attributes/{}", pointer_segment(&column.name));
    let map = bind_hierarchy(source, column, &pointer, inline_only)?;
    Ok(hierarchical_distance(column.value_counts(), &map))
}

/// Every class of `table` (ids `keys`, sizes `sizes`) with the size of its class in `population`.
fn match_population(
    table: &Table,
    quasi_identifiers: &[usize],
    keys: &[u32],
    sizes: &[u64],
    population: &Table,
) -> Result<Vec<MatchedClass>, SpecError> {
    let mut columns = Vec::with_capacity(quasi_identifiers.len());
    for &c in quasi_identifiers {
        let name = &table.column(c).name;
        let Some(index) = population.column_index(name) else {
            return Err(SpecError::new(
                format!("/attributes/{}", pointer_segment(name)),
                ErrorCode::MissingInPopulation,
                format!("the population table has no column '{name}'"),
            ));
        };
        columns.push(population.column(index));
    }
    let mut counts: HashMap<Vec<&str>, u64> = HashMap::new();
    for r in 0..population.row_count() {
        let key: Vec<&str> = columns
            .iter()
            .map(|c| c.dictionary.value(c.codes[r]))
            .collect();
        *counts.entry(key).or_default() += 1;
    }
    let mut seen = vec![false; sizes.len()];
    let mut matched = Vec::with_capacity(sizes.len());
    for (r, &k) in keys.iter().enumerate() {
        if std::mem::replace(&mut seen[k as usize], true) {
            continue;
        }
        let key: Vec<&str> = quasi_identifiers
            .iter()
            .map(|&c| {
                let column = table.column(c);
                column.dictionary.value(column.codes[r])
            })
            .collect();
        matched.push(MatchedClass {
            sample: sizes[k as usize],
            population: counts.get(&key).copied().unwrap_or(0),
        });
    }
    Ok(matched)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> AssessmentSpec {
        AssessmentSpec::from_json(json.as_bytes()).unwrap()
    }

    /// zip × diagnosis: class 1301 {flu, flu, cold} (3), class 1302 {flu, cold, cancer, cancer} (4),
    /// class 1303 {flu} (1).
    fn table() -> Table {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301", "flu", "a"],
            vec!["1301", "flu", "b"],
            vec!["1301", "cold", "c"],
            vec!["1302", "flu", "d"],
            vec!["1302", "cold", "e"],
            vec!["1302", "cancer", "f"],
            vec!["1302", "cancer", "g"],
            vec!["1303", "flu", "h"],
        ];
        Table::from_rows(&["zip", "diagnosis", "name"], &rows)
    }

    const ROLES: &str = r#""zip": {"role": "quasi_identifier"}, "diagnosis": {"role": "sensitive"},
                           "name": {"role": "identifying"}"#;

    #[test]
    fn hand_computed_assessment() {
        let a = assess(
            &table(),
            &spec(&format!(r#"{{"attributes": {{{ROLES}}}}}"#)),
        )
        .unwrap();
        assert_eq!((a.records, a.classes, a.k), (8, 3, 1));
        assert_eq!(a.quasi_identifiers, ["zip"]);
        let d = &a.sensitive_attributes["diagnosis"];
        // distinct values per class: 2, 3, 1
        assert_eq!(d.distinct_l, Some(1));
        // the class of one record has entropy 0: exp(0) = 1
        assert_eq!(d.entropy_l, Some(1.0));
        // the single-valued class: no c passes
        assert_eq!(d.recursive_c_for_l2_must_exceed, None);
        // risk: sizes {3, 4, 1}
        assert_eq!(a.risk.prosecutor.highest, 1.0);
        assert_eq!(a.risk.prosecutor.average, 3.0 / 8.0);
        assert_eq!(a.risk.sample_uniques, 1.0 / 8.0);
    }

    /// Classes {flu, flu, cold}, {flu, cold, cancer, cancer}, {flu} against D = {flu 4, cold 2,
    /// cancer 2}/8. Equal EMD: 1/4, 1/4 and 1 − 1/2 = 1/2. With the tree {flu, cold} → infection,
    /// {cancer} → tumor (H = 2), {flu} is (|1/2| + |−1/4| + |−1/4| + |1/4| + |−1/4|) / 4 = 3/8 away, the
    /// others 1/4. δ: flu in {flu} and cancer in the second class have ratio 2 (1 bit), flu in the second
    /// 1/2 (1 bit). β: those ratios of 2 gain 1.
    #[test]
    fn closeness_disclosure_and_likeness_by_hand() {
        let roles = r#""zip": {"role": "quasi_identifier"}, "name": {"role": "identifying"},
            "diagnosis": {"role": "sensitive", "hierarchy": {"levels": [["flu", "infection", "*"],
                ["cold", "infection", "*"], ["cancer", "tumor", "*"]]}}"#;
        let a = assess(
            &table(),
            &spec(&format!(r#"{{"attributes": {{{roles}}}}}"#)),
        )
        .unwrap();
        let d = &a.sensitive_attributes["diagnosis"];
        assert!((d.t_equal.unwrap() - 0.5).abs() < 1e-12);
        assert!((d.t_hierarchical.unwrap() - 0.375).abs() < 1e-12);
        assert!((d.delta_must_exceed.unwrap() - 1.0).abs() < 1e-12);
        assert!((d.beta.unwrap() - 1.0).abs() < 1e-12);
        // without a hierarchy there is no hierarchical figure; a stored one is refused with its pointer
        let plain = assess(
            &table(),
            &spec(&format!(r#"{{"attributes": {{{ROLES}}}}}"#)),
        )
        .unwrap();
        assert_eq!(plain.sensitive_attributes["diagnosis"].t_hierarchical, None);
        let stored = r#""zip": {"role": "quasi_identifier"}, "name": {"role": "identifying"},
            "diagnosis": {"role": "sensitive", "hierarchy": {"id": "h-1"}}"#;
        let e = assess(
            &table(),
            &spec(&format!(r#"{{"attributes": {{{stored}}}}}"#)),
        )
        .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/attributes/diagnosis/hierarchy", "invalid_hierarchy")
        );
    }

    /// Without the unique record: classes {flu, flu, cold} and {flu, cold, cancer, cancer}.
    #[test]
    fn diversity_figures_by_hand() {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301", "flu", "a"],
            vec!["1301", "flu", "b"],
            vec!["1301", "cold", "c"],
            vec!["1302", "flu", "d"],
            vec!["1302", "cold", "e"],
            vec!["1302", "cancer", "f"],
            vec!["1302", "cancer", "g"],
        ];
        let table = Table::from_rows(&["zip", "diagnosis", "name"], &rows);
        let a = assess(&table, &spec(&format!(r#"{{"attributes": {{{ROLES}}}}}"#))).unwrap();
        assert_eq!(a.k, 3);
        let d = &a.sensitive_attributes["diagnosis"];
        assert_eq!(d.distinct_l, Some(2));
        // class 1301: H = −(2/3 ln 2/3 + 1/3 ln 1/3) = ln 3 − (2/3) ln 2; exp(H) = 3 / 2^(2/3)
        let expected = 3.0 / 2f64.powf(2.0 / 3.0);
        assert!((d.entropy_l.unwrap() - expected).abs() < 1e-12);
        // r1/tail: 2/1 and 2/2: c must exceed 2
        assert_eq!(d.recursive_c_for_l2_must_exceed, Some(2.0));
    }

    #[test]
    fn rejects_bad_requests_with_pointers() {
        let e = assess(
            &table(),
            &spec(r#"{"attributes": {"zip": {"role": "quasi_identifier"}, "age": {"role": "sensitive"}}}"#),
        )
        .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/attributes/age", "unknown_column")
        );
        let e = assess(
            &table(),
            &spec(r#"{"attributes": {"zip": {"role": "quasi_identifier"}}}"#),
        )
        .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/attributes", "undeclared_column")
        );
        let e = assess(
            &table(),
            &spec(&format!(
                r#"{{"attributes": {{{ROLES}}}, "risk": {{"threshold": 2}}}}"#
            )),
        )
        .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/risk/threshold", "invalid_threshold")
        );
        let e =
            AssessmentSpec::from_json(br#"{"attributes": {}, "privacy_models": []}"#).unwrap_err();
        assert_eq!(e.code, "invalid_spec");
    }

    #[test]
    fn roles_are_checked_as_for_jobs_and_every_problem_is_reported() {
        // the same check as a job's: an unknown column, a column without a role and a bad threshold
        // come back together
        let e = assess(
            &table(),
            &spec(
                r#"{"attributes": {"zip": {"role": "quasi_identifier"}, "diagnosis": {"role": "sensitive"},
                                   "nmae": {"role": "identifying"}},
                    "risk": {"threshold": 2}}"#,
            ),
        )
        .unwrap_err();
        let problems: Vec<(&str, &str)> = e
            .all()
            .map(|p| (p.pointer.as_str(), p.code.as_str()))
            .collect();
        assert_eq!(
            problems,
            [
                ("/attributes/nmae", "unknown_column"),
                ("/attributes", "undeclared_column"),
                ("/risk/threshold", "invalid_threshold"),
            ]
        );
    }

    #[test]
    fn sensitive_hierarchies_are_loaded_as_for_jobs() {
        let with = |hierarchy: &str| {
            let json = format!(
                r#"{{"attributes": {{"zip": {{"role": "quasi_identifier"}},
                                   "diagnosis": {{"role": "sensitive", "hierarchy": {hierarchy}}},
                                   "name": {{"role": "identifying"}}}}}}"#
            );
            assess(&table(), &spec(&json)).map(|_| ()).map_err(|e| {
                e.all()
                    .map(|p| (p.pointer.clone(), p.code.as_str()))
                    .collect::<Vec<_>>()
            })
        };
        let at = "/attributes/diagnosis/hierarchy".to_string();
        // a stored hierarchy is not resolved here
        assert_eq!(
            with(r#"{"id": "00000000-0000-4000-8000-000000000000"}"#),
            Err(vec![(at.clone(), "invalid_hierarchy")])
        );
        // the ARX delimiter is checked as a job's is, at its own pointer
        assert_eq!(
            with(r#"{"arx": "flu;*", "delimiter": ";;"}"#),
            Err(vec![(format!("{at}/delimiter"), "invalid_delimiter")])
        );
        // a hierarchy that misses a value of the column
        assert_eq!(
            with(r#"{"levels": [["flu", "*"]]}"#),
            Err(vec![(at, "uncovered_values")])
        );
    }

    /// The sample's classes 1301 (3 records), 1302 (4), 1303 (1) in a population where they have 6,
    /// 4 and 10 records: journalist highest 1/4, records at risk (1/F > 0.2) the 4 records of 1302,
    /// marketer (3/6 + 4/4 + 1/10) / 8 = 1.6 / 8; population size 20 for the uniqueness estimates.
    #[test]
    fn journalist_risk_against_a_population_table() {
        let mut rows: Vec<Vec<&str>> = Vec::new();
        rows.extend(std::iter::repeat_n(vec!["1301", "x"], 6));
        rows.extend(std::iter::repeat_n(vec!["1302", "x"], 4));
        rows.extend(std::iter::repeat_n(vec!["1303", "x"], 10));
        let population = Table::from_rows(&["zip", "other"], &rows);
        let s = spec(&format!(r#"{{"attributes": {{{ROLES}}}}}"#));
        let a = assess_against(&table(), &s, Some(&population)).unwrap();
        assert_eq!(a.risk.journalist.highest, 0.25);
        assert_eq!(a.risk.journalist.records_at_risk, 4.0 / 8.0);
        assert!((a.risk.marketer - 1.6 / 8.0).abs() < 1e-15);
        assert_eq!(a.risk.prosecutor.highest, 1.0);
        assert_eq!(a.risk.population_uniques.population_size, 20);
        let missing = Table::from_rows(&["code"], &[vec!["1"]]);
        let e = assess_against(&table(), &s, Some(&missing)).unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/attributes/zip", "missing_in_population")
        );
    }
}
