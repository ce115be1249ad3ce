//! Validates a [`JobSpec`] against a loaded table and resolves it into what the engine runs: bound
//! hierarchies, the engine plan, and the output layout. Every problem is a [`SpecError`] with the JSON
//! pointer of the offending field; messages name columns, never cell values.

use crate::codec::{parse_arx_hierarchy, CsvOptions};
use crate::core::data::{GeneralizationMap, Hierarchy, Table};
use crate::core::engine::{Outcome, Plan};
use crate::core::input::{EngineInput, QuasiIdentifier, SensitiveAttribute};
use crate::core::privacy::{
    Decimal, DistinctLDiversity, EntropyLDiversity, KAnonymity, PrivacyModel, RecursiveCLDiversity,
};
use crate::core::render::{OutputColumn, Rendering};
use crate::core::risk::RiskSettings;

use super::risk::{risk_settings, run_risk, RiskReport};
use super::spec::{
    pointer_segment, HierarchySpec, JobSpec, PrivacyModelSpec, Role, SpecError, SuppressedRecords,
};
use super::verify::Requirement;

/// Loads hierarchies given by reference (a path for the CLI, an id for the service). Returns a message
/// on failure; the caller adds the pointer.
pub type HierarchyResolver<'r> = dyn Fn(&HierarchySpec) -> Result<Hierarchy, String> + 'r;

/// A spec resolved against a table.
#[derive(Debug)]
pub struct Prepared {
    quasi_identifiers: Vec<(usize, GeneralizationMap)>,
    sensitive: Vec<usize>,
    output: Vec<usize>,
    /// The engine plan.
    pub plan: Plan,
    /// Whether suppressed records are left out of the output.
    pub remove_suppressed: bool,
    /// What the independent verification checks on every published class, one per privacy model.
    pub requirements: Vec<Requirement>,
    /// Settings of the report's risk analysis.
    pub risk: RiskSettings,
}

impl Prepared {
    /// The engine's view of `table` (the table `prepare` validated).
    pub fn input<'a>(&'a self, table: &'a Table) -> EngineInput<'a> {
        EngineInput {
            rows: table.row_count(),
            quasi_identifiers: self
                .quasi_identifiers
                .iter()
                .map(|(c, map)| QuasiIdentifier {
                    name: &table.column(*c).name,
                    codes: &table.column(*c).codes,
                    hierarchy: map,
                })
                .collect(),
            sensitive: self
                .sensitive
                .iter()
                .map(|&c| SensitiveAttribute {
                    name: &table.column(c).name,
                    codes: &table.column(c).codes,
                    distinct: table.column(c).dictionary.len(),
                })
                .collect(),
        }
    }

    /// Quasi-identifier column names in lattice order.
    pub fn quasi_identifier_names<'a>(&self, table: &'a Table) -> Vec<&'a str> {
        self.quasi_identifiers
            .iter()
            .map(|(c, _)| table.column(*c).name.as_str())
            .collect()
    }

    /// The risk profiles of `table` before and after `outcome`.
    pub fn risk_report(&self, table: &Table, outcome: &Outcome) -> RiskReport {
        run_risk(
            table,
            &self.quasi_identifiers,
            &outcome.transformation,
            &outcome.suppressed,
            &self.risk,
        )
    }

    /// The output table of `outcome`.
    pub fn rendering<'a>(&'a self, table: &'a Table, outcome: &'a Outcome) -> Rendering<'a> {
        let columns = self
            .output
            .iter()
            .map(
                |&c| match self.quasi_identifiers.iter().position(|(q, _)| *q == c) {
                    Some(j) => OutputColumn::Generalized {
                        column: table.column(c),
                        hierarchy: &self.quasi_identifiers[j].1,
                        level: outcome.transformation[j] as usize,
                    },
                    None => OutputColumn::Verbatim(table.column(c)),
                },
            )
            .collect();
        Rendering::new(columns, &outcome.suppressed, self.remove_suppressed)
    }
}

/// The CSV options a spec asks for.
pub fn csv_options(spec: &JobSpec) -> Result<CsvOptions, SpecError> {
    match &spec.csv.delimiter {
        None => Ok(CsvOptions::default()),
        Some(d) => CsvOptions::with_delimiter(d)
            .map_err(|e| SpecError::new("/csv/delimiter", "invalid_delimiter", e.to_string())),
    }
}

fn delimiter_byte(d: &Option<String>, pointer: &str) -> Result<u8, SpecError> {
    match d {
        None => Ok(b';'),
        Some(d) => CsvOptions::with_delimiter(d)
            .map(|o| o.delimiter)
            .map_err(|e| SpecError::new(pointer, "invalid_delimiter", e.to_string())),
    }
}

/// Validates `spec` against `table` and resolves it.
pub fn prepare(
    table: &Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
) -> Result<Prepared, SpecError> {
    for name in spec.attributes.keys() {
        if table.column_index(name).is_none() {
            let hint = match table.columns() {
                [only] if only.name.contains([';', ',', '\t', '|']) => {
                    " (the header was read as a single column: is csv.delimiter right?)"
                }
                _ => "",
            };
            return Err(SpecError::new(
                format!("/attributes/{}", pointer_segment(name)),
                "unknown_column",
                format!("the dataset has no column '{name}'{hint}"),
            ));
        }
    }
    let mut quasi_identifiers = Vec::new();
    let mut sensitive = Vec::new();
    let mut output = Vec::new();
    for (index, column) in table.columns().iter().enumerate() {
        let Some(attribute) = spec.attributes.get(&column.name) else {
            return Err(SpecError::new(
                "/attributes",
                "undeclared_column",
                format!(
                    "column '{}' has no role; declare it as quasi_identifier, sensitive, insensitive or identifying",
                    column.name
                ),
            ));
        };
        let pointer = format!("/attributes/{}", pointer_segment(&column.name));
        match attribute.role {
            Role::QuasiIdentifier => {
                let Some(source) = &attribute.hierarchy else {
                    return Err(SpecError::new(
                        format!("{pointer}/hierarchy"),
                        "missing_hierarchy",
                        format!("quasi-identifier '{}' needs a hierarchy", column.name),
                    ));
                };
                let hierarchy_pointer = format!("{pointer}/hierarchy");
                let hierarchy = load(source, &hierarchy_pointer, resolve)?;
                if hierarchy.height() > u8::MAX as usize {
                    return Err(SpecError::new(
                        hierarchy_pointer,
                        "invalid_hierarchy",
                        "a hierarchy may have at most 255 levels",
                    ));
                }
                let map = GeneralizationMap::bind(hierarchy, column).map_err(|e| {
                    SpecError::new(hierarchy_pointer, "uncovered_values", e.to_string())
                })?;
                quasi_identifiers.push((index, map));
                output.push(index);
            }
            Role::Sensitive => {
                sensitive.push(index);
                output.push(index);
            }
            Role::Insensitive => output.push(index),
            Role::Identifying => {}
        }
    }
    if quasi_identifiers.is_empty() {
        return Err(SpecError::new(
            "/attributes",
            "no_quasi_identifier",
            "declare at least one column as quasi_identifier",
        ));
    }
    let sensitive_names: Vec<&str> = sensitive
        .iter()
        .map(|&c| table.column(c).name.as_str())
        .collect();
    let (privacy_models, requirements) = privacy_models(spec, table, &sensitive_names)?;
    let plan = Plan {
        privacy_models,
        suppression_limit: suppression_limit(spec.suppression_limit)?,
        metric: spec.metric,
        algorithm: spec.algorithm.to_algorithm(),
    };
    let risk = risk_settings(&spec.risk, table.row_count() as u64, "/risk")?;
    Ok(Prepared {
        quasi_identifiers,
        sensitive,
        output,
        plan,
        remove_suppressed: spec.suppressed_records == SuppressedRecords::Remove,
        requirements,
        risk,
    })
}

fn load(
    source: &HierarchySpec,
    pointer: &str,
    resolve: &HierarchyResolver<'_>,
) -> Result<Hierarchy, SpecError> {
    let invalid = |m: String| SpecError::new(pointer, "invalid_hierarchy", m);
    match source {
        HierarchySpec::Levels { levels } => {
            Hierarchy::from_rows(levels).map_err(|e| invalid(e.to_string()))
        }
        HierarchySpec::Arx { arx, delimiter } => {
            let d = delimiter_byte(delimiter, &format!("{pointer}/delimiter"))?;
            parse_arx_hierarchy(arx.as_bytes(), d).map_err(|e| invalid(e.to_string()))
        }
        HierarchySpec::Path { .. } | HierarchySpec::Id { .. } => resolve(source).map_err(invalid),
    }
}

type Models = (Vec<Box<dyn PrivacyModel>>, Vec<Requirement>);

fn privacy_models(spec: &JobSpec, table: &Table, sensitive: &[&str]) -> Result<Models, SpecError> {
    let rows = table.row_count() as u64;
    if spec.privacy_models.is_empty() {
        return Err(SpecError::new(
            "/privacy_models",
            "missing_privacy_model",
            "at least one privacy model is required",
        ));
    }
    let mut models: Vec<Box<dyn PrivacyModel>> = Vec::new();
    let mut requirements = Vec::new();
    for (i, m) in spec.privacy_models.iter().enumerate() {
        match m {
            &PrivacyModelSpec::KAnonymity { k } => {
                let pointer = format!("/privacy_models/{i}/k");
                if k < 1 {
                    return Err(SpecError::new(pointer, "invalid_k", "k must be at least 1"));
                }
                if k > rows {
                    return Err(SpecError::new(
                        pointer,
                        "k_exceeds_rows",
                        format!("k = {k} is larger than the table ({rows} records)"),
                    ));
                }
                models.push(Box::new(KAnonymity { k }));
                requirements.push(Requirement::MinClassSize(k));
            }
            PrivacyModelSpec::DistinctLDiversity { attribute, l } => {
                let slot = sensitive_slot(i, attribute, table, sensitive)?;
                let l = diversity_l(i, *l)?;
                models.push(Box::new(DistinctLDiversity {
                    slot,
                    attribute: attribute.clone(),
                    l,
                }));
                requirements.push(Requirement::DistinctL {
                    column: attribute.clone(),
                    l,
                });
            }
            PrivacyModelSpec::EntropyLDiversity { attribute, l } => {
                let slot = sensitive_slot(i, attribute, table, sensitive)?;
                let l = diversity_l(i, *l)?;
                models.push(Box::new(EntropyLDiversity {
                    slot,
                    attribute: attribute.clone(),
                    l,
                }));
                requirements.push(Requirement::EntropyL {
                    column: attribute.clone(),
                    l,
                });
            }
            PrivacyModelSpec::RecursiveClDiversity { attribute, c, l } => {
                let slot = sensitive_slot(i, attribute, table, sensitive)?;
                let l = diversity_l(i, *l)?;
                let c = match Decimal::from_f64(*c) {
                    Some(c) if !c.is_zero() => c,
                    _ => {
                        return Err(SpecError::new(
                            format!("/privacy_models/{i}/c"),
                            "invalid_c",
                            "c must be a positive number (at most 18 decimal places)",
                        ))
                    }
                };
                models.push(Box::new(RecursiveCLDiversity {
                    slot,
                    attribute: attribute.clone(),
                    c,
                    l,
                }));
                requirements.push(Requirement::RecursiveCL {
                    column: attribute.clone(),
                    c,
                    l,
                });
            }
        }
    }
    Ok((models, requirements))
}

/// The slot of the sensitive attribute model `i` protects.
fn sensitive_slot(
    i: usize,
    attribute: &str,
    table: &Table,
    sensitive: &[&str],
) -> Result<usize, SpecError> {
    let pointer = format!("/privacy_models/{i}/attribute");
    if let Some(slot) = sensitive.iter().position(|&s| s == attribute) {
        return Ok(slot);
    }
    if table.column_index(attribute).is_none() {
        return Err(SpecError::new(
            pointer,
            "unknown_column",
            format!("the dataset has no column '{attribute}'"),
        ));
    }
    Err(SpecError::new(
        pointer,
        "not_sensitive",
        format!("column '{attribute}' must have the role sensitive to be protected by l-diversity"),
    ))
}

/// Validates the l of model `i`.
fn diversity_l(i: usize, l: u64) -> Result<u64, SpecError> {
    if l < 1 {
        return Err(SpecError::new(
            format!("/privacy_models/{i}/l"),
            "invalid_l",
            "l must be at least 1",
        ));
    }
    Ok(l)
}

fn suppression_limit(limit: f64) -> Result<f64, SpecError> {
    if limit.is_finite() && (0.0..=1.0).contains(&limit) {
        Ok(limit)
    } else {
        Err(SpecError::new(
            "/suppression_limit",
            "invalid_suppression_limit",
            "the suppression limit is a fraction of records between 0 and 1",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table::from_rows(
            &["zip", "diagnosis", "note"],
            &[vec!["1", "flu", "a"], vec!["2", "cold", "b"]],
        )
    }

    fn prepare_with(model: &str) -> Result<Prepared, SpecError> {
        let json = format!(
            r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels": [["1", "*"], ["2", "*"]]}}}},
                               "diagnosis": {{"role": "sensitive"}}, "note": {{"role": "insensitive"}}}},
                "privacy_models": [{{"type": "k_anonymity", "k": 1}}, {model}]}}"#
        );
        let spec = JobSpec::from_json(json.as_bytes())?;
        prepare(&table(), &spec, &|_| Err("inline only".into()))
    }

    fn error(model: &str) -> (String, &'static str) {
        let e = prepare_with(model).unwrap_err();
        (e.pointer, e.code)
    }

    #[test]
    fn resolves_l_diversity_models_to_sensitive_slots() {
        let p = prepare_with(
            r#"{"type": "recursive_cl_diversity", "attribute": "diagnosis", "c": 1.5, "l": 2}"#,
        )
        .unwrap();
        let model = &p.plan.privacy_models[1];
        assert_eq!(model.sensitive_slot(), Some(0));
        assert_eq!(
            model.describe(),
            "recursive-(1.5,2)-diversity on 'diagnosis'"
        );
        assert_eq!(p.requirements.len(), 2);
        for kind in ["distinct_l_diversity", "entropy_l_diversity"] {
            let p = prepare_with(&format!(
                r#"{{"type": "{kind}", "attribute": "diagnosis", "l": 2}}"#
            ))
            .unwrap();
            assert_eq!(p.plan.privacy_models[1].min_class_size(), 2);
        }
    }

    #[test]
    fn rejects_bad_l_diversity_parameters() {
        assert_eq!(
            error(r#"{"type": "distinct_l_diversity", "attribute": "age", "l": 2}"#),
            ("/privacy_models/1/attribute".into(), "unknown_column")
        );
        assert_eq!(
            error(r#"{"type": "entropy_l_diversity", "attribute": "note", "l": 2}"#),
            ("/privacy_models/1/attribute".into(), "not_sensitive")
        );
        assert_eq!(
            error(r#"{"type": "distinct_l_diversity", "attribute": "zip", "l": 2}"#),
            ("/privacy_models/1/attribute".into(), "not_sensitive")
        );
        assert_eq!(
            error(r#"{"type": "entropy_l_diversity", "attribute": "diagnosis", "l": 0}"#),
            ("/privacy_models/1/l".into(), "invalid_l")
        );
        for c in ["0", "-1", "1e-30"] {
            assert_eq!(
                error(&format!(
                    r#"{{"type": "recursive_cl_diversity", "attribute": "diagnosis", "c": {c}, "l": 2}}"#
                )),
                ("/privacy_models/1/c".into(), "invalid_c"),
                "c = {c}"
            );
        }
    }
}
