//! The privacy-model registry: one file per model declares its spec type (the JSON fields of its
//! `privacy_models` entry), its validation, the engine criterion it becomes, the independent requirement
//! the verifier checks on every published class, and what the report learns from it. Adding a model
//! means one file here plus one line in [`registry!`] below; the engine criterion itself lives in
//! `core::privacy`.
//!
//! Families share their parameter checks: [`context`] (the model's pointer, its sensitive attribute and
//! common parameters), [`categories`] (Hsu 2008's categorical models) and [`class_function`] (the linear
//! models).

pub mod categories;
pub mod class_function;
pub mod context;
pub mod population;

use serde::Deserialize;

use crate::core::privacy::{EarthMovers, GroundDistanceKind, PrivacyModel};
use crate::domain::analysis::security_estimate::LinearScale;
use crate::domain::spec::{Problems, SpecError};
use crate::domain::verify::{ClassRequirement, Requirement};
use crate::error_code::ErrorCode;

pub use context::{ModelContext, ModelInputs, SensitiveColumn};

/// What every model's spec type does: validate itself against the table and resolve into an engine
/// criterion and a verifier requirement.
pub trait ModelSpec {
    /// The model resolved for model `at.index` of the spec, or the first problem of its parameters.
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError>;
}

/// The ground distance a t-closeness model measures a sensitive slot with: `(slot, kind, distance)`.
pub type SlotGroundDistance = (usize, GroundDistanceKind, EarthMovers);

/// One model of a spec, resolved against the table.
#[derive(Debug)]
pub struct ResolvedModel {
    /// The criterion the engine's search and algorithms check.
    pub criterion: Box<dyn PrivacyModel>,
    /// What the independent verification checks on every published class.
    pub requirement: Requirement,
    /// The ground distance of the sensitive slot, for the report's variance-based loss measures
    /// (t-closeness only).
    pub ground_distance: Option<SlotGroundDistance>,
    /// The similarity scale of the report's ψ security estimate (linear models only).
    pub linear_scale: Option<LinearScale>,
    /// The population size the model states (population models only): the report's risk analysis
    /// takes it when the job's `risk` section names none.
    pub population_size: Option<u64>,
    /// The population table the model reads (population models only), for the report.
    pub population: Option<population::Population>,
    /// SafePub's parameters (differential privacy only): the job samples, searches privately and
    /// suppresses every class below their k.
    pub differential_privacy: Option<differential_privacy::DifferentialPrivacy>,
}

impl ResolvedModel {
    /// A model with a criterion and a requirement and nothing for the report.
    pub fn new(
        criterion: impl PrivacyModel + 'static,
        requirement: impl ClassRequirement + 'static,
    ) -> Self {
        Self {
            criterion: Box::new(criterion),
            requirement: Box::new(requirement),
            ground_distance: None,
            linear_scale: None,
            population_size: None,
            population: None,
            differential_privacy: None,
        }
    }
}

/// Declares the models: each line gives the variant of [`PrivacyModelSpec`], the `type` name of the JSON
/// and the module with the model's spec type.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($name:tt, $module:ident::$spec:ident),)*) => {
        $(pub mod $module;)*

        /// A privacy model of the spec, by its `type`, with typed parameters.
        #[derive(Debug, Clone, Deserialize)]
        #[serde(tag = "type")]
        pub enum PrivacyModelSpec {
            $($(#[$doc])* #[serde(rename = $name)] $variant($module::$spec),)*
        }

        impl PrivacyModelSpec {
            /// The `type` name of every model, in registry order.
            pub const TYPES: &'static [&'static str] = &[$($name),*];

            /// The model's spec type, for resolution.
            fn spec(&self) -> &dyn ModelSpec {
                match self {
                    $(Self::$variant(spec) => spec,)*
                }
            }
        }
    };
}

registry! {
    /// k-anonymity.
    KAnonymity("k_anonymity", k_anonymity::KAnonymitySpec),
    /// Highest prosecutor risk (k-anonymity with k = ⌈1 / threshold⌉).
    HighestRisk("highest_risk", highest_risk::HighestRiskSpec),
    /// Average prosecutor risk of the published table.
    AverageRisk("average_risk", average_risk::AverageRiskSpec),
    /// Share of sample uniques of the published table.
    SampleUniqueness("sample_uniqueness", sample_uniqueness::SampleUniquenessSpec),
    /// Estimated share of population uniques of the published table.
    PopulationUniqueness("population_uniqueness", population_uniqueness::PopulationUniquenessSpec),
    /// k-map, against a population table or estimated from the sampling fraction.
    KMap("k_map", k_map::KMapSpec),
    /// δ-presence against a population table.
    DeltaPresence("delta_presence", delta_presence::DeltaPresenceSpec),
    /// (ε, δ)-differential privacy with SafePub (sampling, a private search, classes of at least k).
    DifferentialPrivacy("differential_privacy", differential_privacy::DifferentialPrivacySpec),
    /// Distinct l-diversity.
    DistinctLDiversity("distinct_l_diversity", distinct_l_diversity::DistinctLDiversitySpec),
    /// Entropy l-diversity.
    EntropyLDiversity("entropy_l_diversity", entropy_l_diversity::EntropyLDiversitySpec),
    /// Recursive (c,l)-diversity.
    RecursiveClDiversity("recursive_cl_diversity", recursive_cl_diversity::RecursiveClDiversitySpec),
    /// t-closeness.
    TCloseness("t_closeness", t_closeness::TClosenessSpec),
    /// δ-disclosure privacy.
    DeltaDisclosure("delta_disclosure", delta_disclosure::DeltaDisclosureSpec),
    /// β-likeness.
    BetaLikeness("beta_likeness", beta_likeness::BetaLikenessSpec),
    /// l-categorical diversity.
    LCategoricalDiversity("l_categorical_diversity", l_categorical_diversity::LCategoricalDiversitySpec),
    /// d-density control (with μ-dilution).
    DDensity("d_density", d_density::DDensitySpec),
    /// μ-dilution.
    MuDilution("mu_dilution", mu_dilution::MuDilutionSpec),
    /// (c,l)-categorical recursive diversity.
    ClCategoricalRecursiveDiversity("cl_categorical_recursive_diversity", cl_categorical_recursive_diversity::ClCategoricalRecursiveDiversitySpec),
    /// (c,l)-density control.
    ClDensity("cl_density", cl_density::ClDensitySpec),
    /// δ-range control.
    DeltaRange("delta_range", delta_range::DeltaRangeSpec),
    /// (l,r)-linear diversity.
    LrLinearDiversity("lr_linear_diversity", lr_linear_diversity::LrLinearDiversitySpec),
}

impl PrivacyModelSpec {
    /// The class size a k-anonymity or highest-risk model asks for (`None` for other models; 1 for an
    /// invalid threshold, which the model's resolution refuses), for algorithms that support class
    /// sizes only.
    pub fn class_size(&self) -> Option<u64> {
        match self {
            PrivacyModelSpec::KAnonymity(spec) => Some(spec.k),
            // an invalid threshold is reported by the model's own resolution
            PrivacyModelSpec::HighestRisk(spec) => Some(spec.k().unwrap_or(1)),
            _ => None,
        }
    }

    /// Whether the model judges the whole published table (a risk threshold on it), which only the
    /// full-domain searches can enforce.
    pub fn is_table_level(&self) -> bool {
        matches!(
            self,
            PrivacyModelSpec::AverageRisk(_)
                | PrivacyModelSpec::SampleUniqueness(_)
                | PrivacyModelSpec::PopulationUniqueness(_)
        )
    }

    /// Whether the model reads a population table (which only the full-domain searches match).
    pub fn reads_population(&self) -> bool {
        match self {
            PrivacyModelSpec::KMap(spec) => spec.estimator.is_none(),
            PrivacyModelSpec::DeltaPresence(_) => true,
            _ => false,
        }
    }
}

/// Every model of `models` resolved against the table, in order; every model is checked on its own, so
/// that all models' mistakes are reported together.
pub fn resolve_models(
    models: &[PrivacyModelSpec],
    inputs: ModelInputs<'_>,
) -> Result<Vec<ResolvedModel>, SpecError> {
    if models.is_empty() {
        return Err(SpecError::new(
            "/privacy_models",
            ErrorCode::MissingPrivacyModel,
            "at least one privacy model is required",
        ));
    }
    let mut problems = Problems::new();
    let mut resolved = Vec::with_capacity(models.len());
    for (index, model) in models.iter().enumerate() {
        let at = ModelContext::of(index, inputs);
        if let Some(model) = problems.keep(model.spec().resolve(&at)) {
            resolved.push(model);
        }
    }
    problems.finish()?;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_type_parses_by_its_name() {
        for name in PrivacyModelSpec::TYPES {
            // a bare type fails on a missing parameter, not on an unknown type
            let e = serde_json::from_str::<PrivacyModelSpec>(&format!(r#"{{"type": "{name}"}}"#))
                .unwrap_err()
                .to_string();
            assert!(e.contains("missing field"), "{name}: {e}");
        }
        let e =
            serde_json::from_str::<PrivacyModelSpec>(r#"{"type": "k_anonymity", "k": 2, "l": 3}"#)
                .unwrap_err();
        assert!(e.to_string().contains("unknown field"));
    }
}
