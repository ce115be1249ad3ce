//! What a differentially private job (`{"type": "differential_privacy", …}`) requires of the rest of the
//! spec. SafePub's guarantee (Bild, Kuhn & Prasser 2018, after Li, Qardaji & Su 2012) covers a random
//! sample in which whole records are generalized independently of the data and every class below k is
//! suppressed, and nothing else, so the spec is refused where it would publish more:
//! - another privacy model would suppress more classes, depending on the data;
//! - a search algorithm other than the default: SafePub's own search runs;
//! - a metric without a score function;
//! - a sensitive or insensitive column is published as it is, outside the classes; an identifying
//!   column is published through an operator.
//!
//! The suppression limit does not apply (every class below k is suppressed) and suppressed records are
//! always left out. A hierarchy built from the column's values (a builder, the automatic ranges of a
//! typed column) depends on which records the table holds; the report names such columns
//! (`hierarchies_from_data`) and warns (`hierarchy_from_data`; `strict` then refuses the output).

use crate::core::data::Table;
use crate::core::differential::score::has_score;
use crate::domain::models::differential_privacy::DifferentialPrivacy;
use crate::domain::models::PrivacyModelSpec;
use crate::domain::spec::{
    pointer_segment, AlgorithmSpec, HierarchySpec, JobSpec, Problems, Role, SpecError,
};
use crate::error_code::ErrorCode;

use super::identifiers::{refuse_operators, IdentifierColumn};

/// A differentially private job's parameters and what the report says about them.
#[derive(Debug, Clone, PartialEq)]
pub struct PrivateJob {
    /// SafePub's parameters.
    pub settings: DifferentialPrivacy,
    /// Quasi-identifiers whose hierarchy was ranged over the data's own values.
    pub hierarchies_from_data: Vec<String>,
}

/// Whether the spec asks for differential privacy.
pub fn is_private(spec: &JobSpec) -> bool {
    spec.privacy_models
        .iter()
        .any(|m| matches!(m, PrivacyModelSpec::DifferentialPrivacy(_)))
}

/// Records every part of `spec` a differentially private job cannot take in `problems`.
pub fn check_private_spec(
    spec: &JobSpec,
    table: &Table,
    identifiers: &[IdentifierColumn],
    problems: &mut Problems,
) {
    if !is_private(spec) {
        return;
    }
    let mut private_models = 0;
    for (i, model) in spec.privacy_models.iter().enumerate() {
        let private = matches!(model, PrivacyModelSpec::DifferentialPrivacy(_));
        private_models += usize::from(private);
        if !private || private_models > 1 {
            problems.push(SpecError::new(
                format!("/privacy_models/{i}"),
                ErrorCode::UnsupportedModel,
                "differential privacy is the job's only privacy model: another model would suppress \
                 records depending on the data, which the guarantee does not cover",
            ));
        }
    }
    if !matches!(spec.algorithm, AlgorithmSpec::Optimal) {
        problems.push(SpecError::new(
            "/algorithm",
            ErrorCode::UnsupportedModel,
            "differential privacy runs SafePub's own search: leave the algorithm out",
        ));
    }
    if !has_score(spec.metric) {
        problems.push(SpecError::new(
            "/metric",
            ErrorCode::UnsupportedOption,
            format!(
                "differential privacy searches with a score function, which the metric '{}' lacks: \
                 use granularity, discernibility, precision or aecs",
                spec.metric.name()
            ),
        ));
    }
    for (name, attribute) in &spec.attributes {
        if attribute.aggregate.is_some() {
            problems.push(SpecError::new(
                format!("/attributes/{}/aggregate", pointer_segment(name)),
                ErrorCode::UnsupportedOption,
                "differential privacy generalizes independently of the data: a class aggregate \
                 depends on it",
            ));
        }
        if matches!(attribute.role, Role::Sensitive | Role::Insensitive) {
            problems.push(SpecError::new(
                format!("/attributes/{}/role", pointer_segment(name)),
                ErrorCode::UnsupportedModel,
                format!(
                    "differential privacy protects whole records: column '{name}' would be published \
                     as it is; make it a quasi-identifier (with a hierarchy) or identifying (dropped)"
                ),
            ));
        }
    }
    refuse_operators(
        table,
        identifiers,
        "differential privacy publishes no identifying column: it can only be dropped",
        problems,
    );
}

/// The quasi-identifiers of `spec` whose hierarchy is built from the column's values: a builder given
/// inline, or the automatic one of a typed column (ranged over its minimum and maximum). Stored
/// hierarchies and files are taken as fixed in advance.
pub fn hierarchies_from_data(spec: &JobSpec) -> Vec<String> {
    spec.attributes
        .iter()
        .filter(|(_, a)| {
            a.role == Role::QuasiIdentifier
                && match &a.hierarchy {
                    None => a.data_type.is_some(),
                    Some(source) => matches!(source, HierarchySpec::Builder { .. }),
                }
        })
        .map(|(name, _)| name.clone())
        .collect()
}
