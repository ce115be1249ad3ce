//! t-closeness (Li et al. 2007): the earth mover's distance between every class's distribution of the
//! sensitive attribute and its distribution over the whole table is at most `t`. Resolution builds the
//! table distribution and the ground distance (value order for the ordered distance, the attribute's
//! hierarchy for the hierarchical one); the verifier recomputes the distance from value texts
//! ([`crate::domain::verify::closeness`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::core::data::{Column, GeneralizationMap};
use crate::core::privacy::{Decimal, EarthMovers, GroundDistanceKind, TCloseness};
use crate::error_code::ErrorCode;

use crate::domain::column_values::{distribution_by_text, natural_ranks, ranks_of};
use crate::domain::spec::{pointer_segment, SpecError};
use crate::domain::verify::{closeness, ClassRequirement, ClosenessGround};

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "t_closeness", "attribute": …, "t": …, "distance": …, "order": […]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TClosenessSpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The largest distance allowed, in [0, 1], read as the decimal it is written as.
    pub t: f64,
    /// The ground distance between values; `equal` when absent.
    #[serde(default)]
    pub distance: GroundDistance,
    /// For the ordered distance: every value of the attribute, lowest first. When absent, values are
    /// ordered as numbers if all of them are numbers, else as text.
    pub order: Option<Vec<String>>,
}

/// The ground distance of t-closeness (Li et al. 2007).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroundDistance {
    /// Every pair of distinct values is at distance 1 (categorical attributes).
    #[default]
    Equal,
    /// Rank difference over (number of values − 1) (numeric or ordinal attributes).
    Ordered,
    /// Height of the lowest common ancestor in the attribute's hierarchy over the hierarchy's height.
    Hierarchical,
}

impl ModelSpec for TClosenessSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let i = at.index;
        let column = protected.column;
        let t = match Decimal::from_f64(self.t) {
            Some(t) if self.t <= 1.0 => t,
            _ => {
                return Err(at.error(
                    "t",
                    ErrorCode::InvalidT,
                    "t must be a number between 0 and 1 (at most 18 decimal places)",
                ))
            }
        };
        if self.order.is_some() && self.distance != GroundDistance::Ordered {
            return Err(at.error(
                "order",
                ErrorCode::InvalidSpec,
                "order applies only to the ordered distance",
            ));
        }
        let global = column.value_counts();
        let global_by_text = distribution_by_text(column);
        let (distance, kind, ground) = match self.distance {
            GroundDistance::Equal => (
                EarthMovers::equal(global),
                GroundDistanceKind::Equal,
                ClosenessGround::Equal,
            ),
            GroundDistance::Ordered => {
                let rank = value_ranks(column, self.order.as_deref(), i)?;
                let by_text = column
                    .dictionary
                    .values()
                    .zip(&rank)
                    .map(|(v, &r)| (v.to_string(), r as usize))
                    .collect();
                (
                    EarthMovers::ordered(global, rank),
                    GroundDistanceKind::Ordered,
                    ClosenessGround::Ordered(Arc::new(by_text)),
                )
            }
            GroundDistance::Hierarchical => {
                let Some(map) = protected.hierarchy else {
                    return Err(SpecError::new(
                        format!("/attributes/{}/hierarchy", pointer_segment(&column.name)),
                        ErrorCode::MissingHierarchy,
                        format!(
                            "the hierarchical distance of model {i} needs a hierarchy for '{}'",
                            column.name
                        ),
                    ));
                };
                let paths = (0..column.dictionary.len() as u32)
                    .map(|code| {
                        (
                            column.dictionary.value(code).to_string(),
                            (1..=map.max_level())
                                .map(|level| map.label(level, code).to_string())
                                .collect(),
                        )
                    })
                    .collect();
                (
                    hierarchical_distance(global, map),
                    GroundDistanceKind::Hierarchical,
                    ClosenessGround::Hierarchical(Arc::new(paths)),
                )
            }
        };
        let mut resolved = ResolvedModel::new(
            TCloseness {
                slot: protected.slot,
                attribute: column.name.clone(),
                t,
                kind,
                distance: distance.clone(),
            },
            ClosenessCheck {
                column: column.name.clone(),
                t,
                ground,
                global: global_by_text,
            },
        );
        resolved.ground_distance = Some((protected.slot, kind, distance));
        Ok(resolved)
    }
}

/// The earth mover's distance between the values of `column` in every class and their distribution over
/// the whole input table is at most `t`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosenessCheck {
    /// Output column name.
    pub column: String,
    /// The largest distance allowed.
    pub t: Decimal,
    /// The ground distance.
    pub ground: ClosenessGround,
    /// Records per value over the whole input table (suppressed records included).
    pub global: Arc<HashMap<String, u64>>,
}

impl ClassRequirement for ClosenessCheck {
    fn describe(&self) -> String {
        format!("{}-closeness on '{}'", self.t, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        closeness::earth_movers_distance(values, &self.global, &self.ground).is_at_most(self.t)
    }
}

/// The EMD with the hierarchical ground distance over `map` (a hierarchy bound to the attribute), from
/// the attribute's table counts `global`.
pub(crate) fn hierarchical_distance(global: Vec<u64>, map: &GeneralizationMap) -> EarthMovers {
    let ancestors: Vec<Vec<u32>> = (1..=map.max_level())
        .map(|level| map.codes(level).to_vec())
        .collect();
    EarthMovers::hierarchical(global, ancestors)
}

/// The rank of every value code: by the declared order, else the column's natural order.
fn value_ranks(column: &Column, order: Option<&[String]>, i: usize) -> Result<Vec<u32>, SpecError> {
    let Some(order) = order else {
        return Ok(natural_ranks(&column.dictionary));
    };
    let values: Vec<&str> = column.dictionary.values().collect();
    let position: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(p, v)| (v.as_str(), p))
        .collect();
    let pointer = format!("/privacy_models/{i}/order");
    if position.len() != order.len() {
        return Err(SpecError::new(
            pointer,
            ErrorCode::InvalidOrder,
            "order lists a value more than once",
        ));
    }
    let missing = values.iter().filter(|v| !position.contains_key(*v)).count();
    if missing > 0 {
        return Err(SpecError::new(
            pointer,
            ErrorCode::UncoveredValues,
            format!(
                "order does not list {missing} of the {} distinct values of '{}'",
                values.len(),
                column.name
            ),
        ));
    }
    let mut by_rank: Vec<u32> = (0..values.len() as u32).collect();
    by_rank.sort_by_key(|&code| position[values[code as usize]]);
    Ok(ranks_of(&by_rank))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::Table;

    fn column(values: &[&str]) -> Column {
        let rows: Vec<Vec<&str>> = values.iter().map(|v| vec![*v]).collect();
        Table::from_rows(&["salary"], &rows).column(0).clone()
    }

    #[test]
    fn ranks_numbers_as_numbers_and_text_as_text() {
        let numeric = column(&["10", "9", "100", "9"]);
        // codes in first-seen order: 10, 9, 100
        assert_eq!(value_ranks(&numeric, None, 0).unwrap(), [1, 0, 2]);
        let text = column(&["b", "a", "c"]);
        assert_eq!(value_ranks(&text, None, 0).unwrap(), [1, 0, 2]);
        let order = ["c".to_string(), "b".to_string(), "a".to_string()];
        assert_eq!(value_ranks(&text, Some(&order), 0).unwrap(), [1, 2, 0]);
    }

    #[test]
    fn rejects_incomplete_or_repeated_orders() {
        let text = column(&["low", "high", "secret-value"]);
        let order = ["low".to_string(), "high".to_string()];
        let error = value_ranks(&text, Some(&order), 2).unwrap_err();
        assert_eq!(error.code, "uncovered_values");
        assert_eq!(error.pointer, "/privacy_models/2/order");
        assert!(!error.message.contains("secret-value"));
        let repeated = ["low".to_string(), "low".to_string()];
        assert_eq!(
            value_ranks(&text, Some(&repeated), 0).unwrap_err().code,
            "invalid_order"
        );
    }

    /// The spec paths: every distance resolves through `prepare`, and every mistake has its pointer.
    mod through_prepare {
        use crate::core::data::Table;
        use crate::domain::{prepare, JobSpec, Prepared, SpecError};

        fn prepare_with(model: &str, diagnosis: &str) -> Result<Prepared, SpecError> {
            let table = Table::from_rows(
                &["zip", "diagnosis", "note"],
                &[vec!["1", "flu", "a"], vec!["2", "cold", "b"]],
            );
            let json = format!(
                r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels": [["1", "*"], ["2", "*"]]}}}},
                                   "diagnosis": {diagnosis}, "note": {{"role": "insensitive"}}}},
                    "privacy_models": [{{"type": "k_anonymity", "k": 1}}, {model}]}}"#
            );
            let spec = JobSpec::from_json(json.as_bytes())?;
            prepare(&table, &spec, &|_| Err("inline only".into()))
        }

        const SENSITIVE: &str = r#"{"role": "sensitive"}"#;
        const WITH_TREE: &str = r#"{"role": "sensitive", "hierarchy": {"levels": [["flu", "infection", "*"], ["cold", "infection", "*"]]}}"#;

        fn error(model: &str, diagnosis: &str) -> (String, &'static str) {
            let e = prepare_with(model, diagnosis).unwrap_err();
            (e.pointer, e.code.as_str())
        }

        #[test]
        fn resolves_every_distance() {
            for (model, described) in [
                (
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2}"#,
                    "0.2-closeness (equal distance) on 'diagnosis'",
                ),
                (
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2, "distance": "ordered", "order": ["cold", "flu"]}"#,
                    "0.2-closeness (ordered distance) on 'diagnosis'",
                ),
                (
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.25, "distance": "hierarchical"}"#,
                    "0.25-closeness (hierarchical distance) on 'diagnosis'",
                ),
            ] {
                let p = prepare_with(model, WITH_TREE).unwrap();
                assert_eq!(p.plan.privacy_models[1].describe(), described);
                assert_eq!(p.plan.privacy_models[1].sensitive_slot(), Some(0));
                assert_eq!(p.requirements.len(), 2);
            }
        }

        #[test]
        fn rejects_bad_parameters_with_pointers() {
            let t = |t: &str| {
                format!(r#"{{"type": "t_closeness", "attribute": "diagnosis", "t": {t}}}"#)
            };
            for bad in ["-0.1", "1.5"] {
                assert_eq!(
                    error(&t(bad), SENSITIVE),
                    ("/privacy_models/1/t".into(), "invalid_t")
                );
            }
            assert_eq!(
                error(
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2, "distance": "hierarchical"}"#,
                    SENSITIVE
                ),
                (
                    "/attributes/diagnosis/hierarchy".into(),
                    "missing_hierarchy"
                )
            );
            assert_eq!(
                error(
                    r#"{"type": "t_closeness", "attribute": "note", "t": 0.2}"#,
                    SENSITIVE
                ),
                ("/privacy_models/1/attribute".into(), "not_sensitive")
            );
            assert_eq!(
                error(
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2, "order": ["flu", "cold"]}"#,
                    SENSITIVE
                ),
                ("/privacy_models/1/order".into(), "invalid_spec")
            );
            assert_eq!(
                error(
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2, "distance": "ordered", "order": ["flu"]}"#,
                    SENSITIVE
                ),
                ("/privacy_models/1/order".into(), "uncovered_values")
            );
            // a sensitive hierarchy must cover the column like a quasi-identifier's
            assert_eq!(
                error(
                    r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2}"#,
                    r#"{"role": "sensitive", "hierarchy": {"levels": [["flu", "*"]]}}"#
                ),
                ("/attributes/diagnosis/hierarchy".into(), "uncovered_values")
            );
        }
    }
}
