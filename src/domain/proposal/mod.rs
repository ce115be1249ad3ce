//! Proposals: a complete, valid job spec for a table nobody has described yet, with a reason per
//! column, the risk of the table as it is, and what the proposed job is expected to achieve.
//!
//! Each column gets a role from its name ([`names`]) and its profile (inferred type, distinct values):
//! 1. named like a direct identifier → `identifying` (removed);
//! 2. named like a demographic quasi-identifier, or holding dates → `quasi_identifier`;
//! 3. nearly one distinct value per record (at least 80 % over at least 20 records, the share from which
//!    the report warns, [`crate::domain::analysis::warnings`]) → `identifying`;
//! 4. named like a sensitive fact → `sensitive`;
//! 5. at most [`FEW_VALUES`] distinct values → `quasi_identifier` (an attacker may know it), while
//!    fewer than [`MAX_QUASI_IDENTIFIERS`] are chosen (name-hinted ones first);
//! 6. otherwise `insensitive`.
//!
//! Every quasi-identifier gets a `data_type` and a builder chosen from its type: numbers an `interval` builder
//! ([`IntervalBuilder::automatic`]), postal codes a `mask`, dates a `date`
//! builder (month, year, decade), anything else `categories` without levels (the value or `*`). The model
//! is k-anonymity with k = [`DEFAULT_K`] and a suppression limit of [`DEFAULT_SUPPRESSION_LIMIT`]. The
//! expected outcome is measured by running the proposal when the table has at most
//! [`TRIAL_MAX_RECORDS`] records; above, only the bound k gives (a highest prosecutor risk of 1/k) is
//! reported. Reasons name columns and counts, never values.

pub mod names;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::codec::profile::{profile_column, ValueType};
use crate::core::control::Control;
use crate::core::data::{Column, Table};
use crate::core::error::CoreError;
use crate::core::risk::RiskProfile;
use crate::domain::analysis::assessment::{assess, Assessment, AssessmentSpec};
use crate::domain::analysis::warnings::{Warning, NEAR_UNIQUE_MIN_RECORDS, NEAR_UNIQUE_SHARE};
use crate::domain::builders::interval::IntervalBuilder;
use crate::domain::run::{run_job, RunError};
use crate::domain::spec::{HierarchySpec, JobSpec};
use crate::domain::Resolved;
use names::{hint, is_postal_code, NameHint};

/// The k of the proposed k-anonymity.
pub const DEFAULT_K: u64 = 5;

/// The proposed suppression limit.
pub const DEFAULT_SUPPRESSION_LIMIT: f64 = 0.05;

/// Columns with at most this many distinct values are proposed as quasi-identifiers.
pub const FEW_VALUES: usize = 50;

/// At most this many quasi-identifiers are proposed (the search lattice grows with their product).
pub const MAX_QUASI_IDENTIFIERS: usize = 8;

/// Tables of at most this many records get a trial run of the proposal.
pub const TRIAL_MAX_RECORDS: usize = 1_000_000;

/// The proposal for one column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnProposal {
    /// The column.
    pub name: String,
    /// The proposed role.
    pub role: &'static str,
    /// Why, without any value.
    pub reason: String,
    /// The profiled type.
    #[serde(rename = "type")]
    pub value_type: ValueType,
    /// Distinct values.
    pub distinct_count: u64,
}

/// A proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    /// The job spec (JSON), valid for the table.
    pub spec: Value,
    /// Per column, in table order.
    pub columns: Vec<ColumnProposal>,
    /// The table as it is, over the proposed quasi-identifiers.
    pub assessment: Assessment,
    /// What the proposed job is expected to achieve.
    pub expected: Expected,
}

/// The expected outcome of the proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expected {
    /// `trial` (the proposal was run) or `bound` (what k guarantees; the table is too large for a
    /// trial).
    pub basis: &'static str,
    /// The highest prosecutor risk of a published record: measured, or 1/k.
    pub highest_prosecutor_risk: f64,
    /// The trial run's figures, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trial: Option<Trial>,
    /// Why there is no trial, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
}

/// What a trial run of the proposal achieved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial {
    /// The smallest published class.
    pub achieved_k: u64,
    /// Records suppressed.
    pub suppressed_records: u64,
    /// The published table's risk profile.
    pub risk: RiskProfile,
    /// The run's warnings.
    pub warnings: Vec<Warning>,
}

/// Proposes a job for `table`; `csv` is the spec's `csv` object (the delimiter for the CLI), if any.
/// A trial run, under `trial`'s control, happens when one is given and the table has at most
/// [`TRIAL_MAX_RECORDS`] records; a trial the control stops leaves the k bound as the expectation.
pub fn propose(
    table: &Table,
    csv: Option<Value>,
    trial: Option<&dyn Control>,
) -> Result<Proposal, RunError> {
    let columns = classify(table);
    let mut attributes = Map::new();
    for (column, proposal) in table.columns().iter().zip(&columns) {
        let mut attribute = json!({"role": proposal.role});
        if proposal.role == "quasi_identifier" {
            let builder = builder_for(column, proposal.value_type);
            // empty cells fit no order: such a column keeps its hierarchy only (a builder gives empty
            // values their own leaf)
            if column.dictionary.code("").is_none() {
                attribute["data_type"] = json!(data_type_for(&builder, proposal.value_type));
            }
            attribute["hierarchy"] = json!({ "builder": builder });
        }
        attributes.insert(column.name.clone(), attribute);
    }
    let mut fields = Map::new();
    if let Some(csv) = csv {
        fields.insert("csv".into(), csv);
    }
    fields.insert("attributes".into(), Value::Object(attributes.clone()));
    // a table smaller than the default k gets a k it can meet
    let k = DEFAULT_K.min(table.row_count().max(1) as u64);
    fields.insert(
        "privacy_models".into(),
        json!([{"type": "k_anonymity", "k": k}]),
    );
    fields.insert("suppression_limit".into(), json!(DEFAULT_SUPPRESSION_LIMIT));
    let spec = Value::Object(fields);
    let assessment_spec = json!({
        "attributes": roles_only(&attributes),
    });
    let assessment_spec = AssessmentSpec::from_json(assessment_spec.to_string().as_bytes())?;
    let assessment = assess(table, &assessment_spec)?;
    let job = JobSpec::from_json(spec.to_string().as_bytes())?;
    let bound = |note: &'static str| Expected {
        basis: "bound",
        highest_prosecutor_risk: 1.0 / k as f64,
        trial: None,
        note: Some(note),
    };
    let expected = match trial {
        Some(control) if table.row_count() <= TRIAL_MAX_RECORDS => {
            match run_trial(table, &job, control) {
                Err(RunError::Core(CoreError::Cancelled)) => {
                    bound("the trial run was stopped at its time limit")
                }
                other => other?,
            }
        }
        _ => {
            // the spec is still checked against the table in full
            crate::domain::prepare(table, &job, &inline_only)?;
            bound("no trial run: the table is larger than the trial limit")
        }
    };
    Ok(Proposal {
        spec,
        columns,
        assessment,
        expected,
    })
}

/// Proposals build every hierarchy inline.
fn inline_only(_: &HierarchySpec) -> Result<Resolved, String> {
    Err("a proposal builds its hierarchies inline".into())
}

/// Runs the proposed job under `control` and reads its report.
fn run_trial(table: &Table, job: &JobSpec, control: &dyn Control) -> Result<Expected, RunError> {
    let completed = run_job(table, job, &inline_only, control)?;
    let report = completed.report();
    Ok(Expected {
        basis: "trial",
        highest_prosecutor_risk: report.risk.after.prosecutor.highest,
        trial: Some(Trial {
            achieved_k: report.achieved.k,
            suppressed_records: report.suppressed_records,
            risk: report.risk.after,
            warnings: report.warnings,
        }),
        note: None,
    })
}

/// `attributes` with roles only (an assessment reads no hierarchy).
fn roles_only(attributes: &Map<String, Value>) -> Value {
    Value::Object(
        attributes
            .iter()
            .map(|(name, a)| (name.clone(), json!({"role": a["role"]})))
            .collect(),
    )
}

/// The role and reason of every column, in table order.
pub fn classify(table: &Table) -> Vec<ColumnProposal> {
    let rows = table.row_count();
    let profiles: Vec<_> = table.columns().iter().map(profile_column).collect();
    // name-hinted and dated quasi-identifiers first, then the few-valued ones while room is left
    let mut proposals: Vec<ColumnProposal> = profiles
        .iter()
        .map(|profile| {
            let distinct = profile.distinct_count as usize;
            let near_unique = rows >= NEAR_UNIQUE_MIN_RECORDS
                && distinct as f64 >= NEAR_UNIQUE_SHARE * rows as f64;
            let (role, reason) = match hint(&profile.name) {
                Some(NameHint::Identifier) => (
                    "identifying",
                    "named like a direct identifier (a name, record number or contact detail): removed"
                        .to_string(),
                ),
                Some(NameHint::QuasiIdentifier) => (
                    "quasi_identifier",
                    "named like a demographic attribute an attacker may know".to_string(),
                ),
                None | Some(NameHint::Sensitive) if profile.value_type == ValueType::Date => (
                    "quasi_identifier",
                    "holds dates, which can single out a person with other attributes".to_string(),
                ),
                _ if near_unique => (
                    "identifying",
                    format!(
                        "{distinct} distinct values in {rows} records: nearly one per record, so it \
                         identifies; removed (declare it insensitive if it is a measurement)"
                    ),
                ),
                Some(NameHint::Sensitive) => (
                    "sensitive",
                    "named like a sensitive fact: kept as it is, protected by the models".to_string(),
                ),
                None => ("", String::new()),
            };
            ColumnProposal {
                name: profile.name.clone(),
                role,
                reason,
                value_type: profile.value_type,
                distinct_count: profile.distinct_count,
            }
        })
        .collect();
    let mut chosen = proposals
        .iter()
        .filter(|p| p.role == "quasi_identifier")
        .count();
    let fewest = proposals
        .iter()
        .enumerate()
        .filter(|(_, p)| p.role.is_empty() && p.distinct_count > 1)
        .min_by_key(|(_, p)| p.distinct_count)
        .map(|(i, _)| i);
    // a spec needs a quasi-identifier: without one by name, date or few values, the column with the
    // fewest distinct values is it
    let fallback = if chosen == 0
        && !proposals
            .iter()
            .any(|p| p.role.is_empty() && (p.distinct_count as usize) <= FEW_VALUES)
    {
        fewest
    } else {
        None
    };
    for (index, proposal) in proposals.iter_mut().enumerate() {
        if !proposal.role.is_empty() {
            continue;
        }
        let distinct = proposal.distinct_count as usize;
        if Some(index) == fallback {
            chosen += 1;
            proposal.role = "quasi_identifier";
            proposal.reason = format!(
                "{distinct} distinct values; no column is named like a demographic attribute or has few \
                 values, so the one with the fewest is proposed: review the roles"
            );
        } else if distinct <= FEW_VALUES && chosen < MAX_QUASI_IDENTIFIERS {
            chosen += 1;
            proposal.role = "quasi_identifier";
            proposal.reason = format!(
                "{distinct} distinct values: few enough that an attacker may know a person's value"
            );
        } else if distinct <= FEW_VALUES {
            proposal.role = "insensitive";
            proposal.reason = format!(
                "{distinct} distinct values, but {MAX_QUASI_IDENTIFIERS} quasi-identifiers are proposed \
                 already: declare it a quasi-identifier if an attacker may know it"
            );
        } else {
            proposal.role = "insensitive";
            proposal.reason = format!(
                "{distinct} distinct values, not named like an identifier or a demographic attribute: \
                 kept as it is"
            );
        }
    }
    proposals
}

/// The `data_type` of a quasi-identifier, from its profiled type (what local recodings order it by;
/// full-domain searches use the builder): numbers cut into intervals are `numeric`, dates `date`,
/// masked codes and other text `categorical`.
fn data_type_for(builder: &Value, value_type: ValueType) -> &'static str {
    match (builder["type"].as_str(), value_type) {
        (Some("interval"), _) => "numeric",
        (_, ValueType::Date) => "date",
        _ => "categorical",
    }
}

/// The builder of a quasi-identifier of type `value_type`.
pub fn builder_for(column: &Column, value_type: ValueType) -> Value {
    if is_postal_code(&column.name) {
        return match value_type {
            // integers lost their leading zeros: pad them back before masking
            ValueType::Integer => json!({"type": "mask", "pad": "0"}),
            _ => json!({"type": "mask"}),
        };
    }
    match value_type {
        ValueType::Integer | ValueType::Decimal => numeric_builder(column, value_type),
        ValueType::Date => json!({"type": "date"}),
        ValueType::String => json!({"type": "categories", "levels": []}),
    }
}

/// The interval builder [`IntervalBuilder::automatic`] chooses for the column's numbers
/// (`categories` without levels when they span no range).
fn numeric_builder(column: &Column, value_type: ValueType) -> Value {
    let numbers: Vec<f64> = column
        .dictionary
        .values()
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite())
        .collect();
    match IntervalBuilder::automatic(&numbers, value_type == ValueType::Integer) {
        Some(b) => json!({"type": "interval", "width": b.width, "fanouts": b.fanouts}),
        None => json!({"type": "categories", "levels": []}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::control::NoControl;

    /// A hospital table: record number, name, birth date, ZIP code, sex, diagnosis and a measurement.
    fn hospital(rows: usize) -> Table {
        let values: Vec<Vec<String>> = (0..rows)
            .map(|i| {
                vec![
                    format!("MRN{:06}", 100_003 * i % 1_000_000),
                    format!("Person {i}"),
                    format!("19{:02}-{:02}-{:02}", 30 + i % 60, 1 + i % 12, 1 + i % 28),
                    format!("{}", 8000 + (i * 7) % 60),
                    ["F", "M"][i % 2].to_string(),
                    ["I21.4", "J18.9", "E11.9", "I10"][i % 4].to_string(),
                    format!("{}.{}", 3 + i % 5, i % 10),
                    format!("{}", 120 + (i * 37) % 2000),
                ]
            })
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Table::from_rows(
            &[
                "mrn",
                "name",
                "birth_date",
                "zip",
                "sex",
                "diagnosis",
                "hba1c",
                "ward_code",
            ],
            &rows,
        )
    }

    fn roles(proposals: &[ColumnProposal]) -> Vec<(&str, &str)> {
        proposals
            .iter()
            .map(|p| (p.name.as_str(), p.role))
            .collect()
    }

    #[test]
    fn columns_get_roles_from_their_names_and_profiles() {
        let proposals = classify(&hospital(400));
        assert_eq!(
            roles(&proposals),
            [
                ("mrn", "identifying"),
                ("name", "identifying"),
                ("birth_date", "quasi_identifier"),
                ("zip", "quasi_identifier"),
                ("sex", "quasi_identifier"),
                ("diagnosis", "sensitive"),
                // 50 distinct values: few enough
                ("hba1c", "quasi_identifier"),
                // 400 distinct values in 400 records: near-unique
                ("ward_code", "identifying"),
            ]
        );
        for p in &proposals {
            assert!(!p.reason.is_empty());
            assert!(
                !p.reason.contains("MRN") && !p.reason.contains("Person"),
                "{}",
                p.reason
            );
        }
    }

    #[test]
    fn without_a_likely_quasi_identifier_the_fewest_valued_column_is_one() {
        let values: Vec<Vec<String>> = (0..100)
            .map(|i| vec![format!("{}", i % 60), format!("{}", (i * 3) % 70)])
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&["score_a", "score_b"], &rows);
        let proposals = classify(&table);
        assert_eq!(
            roles(&proposals),
            [("score_a", "quasi_identifier"), ("score_b", "insensitive")]
        );
        assert!(proposals[0].reason.contains("review the roles"));
        assert!(propose(&table, None, None).is_ok());
    }

    #[test]
    fn columns_with_empty_cells_get_no_data_type() {
        let values: Vec<Vec<String>> = (0..100)
            .map(|i| {
                vec![
                    if i % 10 == 0 {
                        String::new()
                    } else {
                        format!("{}", 20 + i % 50)
                    },
                    ["F", "M"][i % 2].to_string(),
                ]
            })
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&["age", "sex"], &rows);
        let proposal = propose(&table, None, Some(&NoControl)).unwrap();
        assert!(proposal.spec["attributes"]["age"]
            .get("data_type")
            .is_none());
        assert_eq!(
            proposal.spec["attributes"]["sex"]["data_type"],
            "categorical"
        );
        assert_eq!(proposal.expected.basis, "trial");
    }

    #[test]
    fn at_most_eight_quasi_identifiers_are_proposed() {
        let header: Vec<String> = (0..12).map(|c| format!("c{c}")).collect();
        let values: Vec<Vec<String>> = (0..100)
            .map(|i| (0..12).map(|c| format!("{}", (i + c) % 3)).collect())
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let names: Vec<&str> = header.iter().map(String::as_str).collect();
        let proposals = classify(&Table::from_rows(&names, &rows));
        let chosen = proposals
            .iter()
            .filter(|p| p.role == "quasi_identifier")
            .count();
        assert_eq!(chosen, MAX_QUASI_IDENTIFIERS);
        assert!(proposals[11]
            .reason
            .contains("quasi-identifiers are proposed already"));
    }

    #[test]
    fn builders_follow_the_type() {
        let table = hospital(400);
        let builder = |c: usize| {
            let column = table.column(c);
            builder_for(column, profile_column(column).value_type)
        };
        assert_eq!(builder(2), json!({"type": "date"}));
        assert_eq!(builder(3), json!({"type": "mask", "pad": "0"}));
        assert_eq!(builder(4), json!({"type": "categories", "levels": []}));
        // 3.0 to 7.9: width 0.5 (4.9 over 16 is 0.31, rounded up to 0.5); 10 intervals join into
        // 5, 3 and 2 groups
        assert_eq!(
            builder(6),
            json!({"type": "interval", "width": 0.5, "fanouts": [2, 2, 2]})
        );
    }

    #[test]
    fn a_proposal_is_a_valid_spec_whose_trial_meets_k() {
        let table = hospital(400);
        let proposal = propose(&table, None, Some(&NoControl)).unwrap();
        let spec = JobSpec::from_json(proposal.spec.to_string().as_bytes()).unwrap();
        assert!(crate::domain::prepare(&table, &spec, &inline_only).is_ok());
        assert_eq!(proposal.assessment.k, 1);
        assert_eq!(proposal.expected.basis, "trial");
        let trial = proposal.expected.trial.as_ref().unwrap();
        assert!(trial.achieved_k >= DEFAULT_K, "{trial:?}");
        assert!(proposal.expected.highest_prosecutor_risk <= 0.2);
        // without a trial, the bound
        let bound = propose(&table, None, None).unwrap();
        assert_eq!(bound.expected.basis, "bound");
        assert_eq!(bound.expected.highest_prosecutor_risk, 0.2);
        assert_eq!(
            proposal.spec["attributes"]["birth_date"]["data_type"],
            "date"
        );
        assert_eq!(
            proposal.spec["attributes"]["zip"]["data_type"],
            "categorical"
        );
        assert_eq!(proposal.spec["attributes"]["hba1c"]["data_type"], "numeric");
        // the data types carry the proposal over to Mondrian as it is
        let mut mondrian = proposal.spec.clone();
        mondrian["algorithm"] = json!({"type": "mondrian"});
        mondrian["suppression_limit"] = json!(0);
        let mondrian = JobSpec::from_json(mondrian.to_string().as_bytes()).unwrap();
        let completed = run_job(&table, &mondrian, &inline_only, &NoControl).unwrap();
        assert!(completed.report().achieved.k >= DEFAULT_K);
        // a table smaller than k gets a k it can meet
        let tiny = propose(&hospital(3), None, Some(&NoControl)).unwrap();
        // a trial stopped by its control leaves the bound
        let flag = std::sync::Arc::new(crate::core::control::CancelFlag::default());
        flag.cancel();
        let proposal = propose(&table, None, Some(flag.as_ref())).unwrap();
        assert_eq!(proposal.expected.basis, "bound");
        assert!(proposal.expected.note.unwrap().contains("stopped"));
        assert_eq!(tiny.spec["privacy_models"][0]["k"], 3);
    }
}
