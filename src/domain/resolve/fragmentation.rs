//! Resolves a fragmentation job (`"algorithm": {"type": "fragmentation", ...}`): the class column, the
//! number of fragments and their size bounds, the mutual-information settings, the repair strategy and
//! the per-fragment anonymizer. The quasi-identifiers are the features; the class must be a `sensitive`
//! column, and a fragmentation job publishes nothing else (no other sensitive or insensitive column):
//! a column shared by the fragments would re-link them.

use crate::core::data::Table;
use crate::core::fragmentation::fmrmr::Diagonal;
use crate::core::fragmentation::pipeline::Strategy;
use crate::domain::fragmentation::DEFAULT_BINS;
use crate::domain::models::PrivacyModelSpec;
use crate::domain::resolve::local::LocalPlan;
use crate::domain::spec::{
    pointer_segment, AlgorithmSpec, DiagonalSpec, FragmentationSpec, JobSpec, RepairStrategySpec,
    Role, SpecError,
};
use crate::error_code::ErrorCode;

/// Fragments when the spec gives no number.
pub const DEFAULT_FRAGMENTS: u64 = 2;
/// δ of δ-selectivity when the spec gives none (the paper's experiments).
pub const DEFAULT_DELTA: f64 = 0.5;

/// A fragmentation job resolved against its table.
#[derive(Debug, Clone)]
pub struct FragmentationPlan {
    /// Every feature (quasi-identifier) with its domain, and the anonymizer.
    pub local: LocalPlan,
    /// The anonymizer as the spec gives it (each fragment's own job is derived with it).
    pub anonymizer: AlgorithmSpec,
    /// The table index of the class column.
    pub class: usize,
    /// Fragments to build.
    pub fragments: usize,
    /// Fewest and most features per fragment.
    pub size_bounds: (usize, usize),
    /// The repair.
    pub strategy: Strategy,
    /// Equal-frequency bins of numeric features.
    pub bins: usize,
    /// FMRMR's diagonal convention.
    pub diagonal: Diagonal,
    /// The k of the job's k-anonymity.
    pub k: u64,
    /// The ℓ of the job's ℓ-diversity models on the class, when it has any: then the records are
    /// segmented by class value and every fragment's chunks are anonymized per segment (note §3.9).
    /// A t-closeness model of the class alone gives 1.
    pub diversity: Option<u64>,
    /// Whether the job has t-closeness of the class: one segment of every record (the note's §3.9:
    /// class-disjoint segments conflict with closeness to the whole table's distribution).
    pub single_segment: bool,
}

/// Checks the fragmentation parameters of `spec` against `table` and wraps `local`, the features' plan
/// resolved with the anonymizer.
pub fn fragmentation_plan(
    table: &Table,
    spec: &JobSpec,
    fragmentation: &FragmentationSpec,
    local: LocalPlan,
) -> Result<FragmentationPlan, SpecError> {
    let anonymizer = fragmentation
        .anonymizer
        .clone()
        .unwrap_or_else(AlgorithmSpec::default_anonymizer);
    if matches!(
        anonymizer,
        AlgorithmSpec::Fragmentation(_) | AlgorithmSpec::Hybrid { .. } | AlgorithmSpec::Mdav
    ) {
        return Err(SpecError::new(
            "/algorithm/anonymizer/type",
            ErrorCode::UnsupportedOption,
            format!(
                "{} cannot anonymize a fragment; use mondrian, k_member, top_down, pair_enum or k_assemble",
                anonymizer.name()
            ),
        ));
    }
    let class = class_column(table, spec, &fragmentation.class)?;
    let features = local.attributes.len();
    let fragments = fragmentation.fragments.unwrap_or(DEFAULT_FRAGMENTS);
    if fragments < 2 || fragments > features as u64 {
        return Err(SpecError::new(
            "/algorithm/fragments",
            ErrorCode::InvalidParameter,
            format!("fragments must be between 2 and the {features} quasi-identifiers (features)"),
        ));
    }
    let fragments = fragments as usize;
    let low = fragmentation.min_fragment_size.unwrap_or(1).max(1);
    let high = fragmentation
        .max_fragment_size
        .unwrap_or(features as u64)
        .min(features as u64);
    if low > high
        || low.saturating_mul(fragments as u64) > features as u64
        || high * (fragments as u64) < features as u64
    {
        return Err(SpecError::new(
            "/algorithm",
            ErrorCode::InvalidParameter,
            format!(
                "{fragments} fragments of {low} to {high} features cannot hold the {features} features"
            ),
        ));
    }
    let bins = fragmentation.bins.unwrap_or(DEFAULT_BINS as u64);
    if !(2..=1000).contains(&bins) {
        return Err(SpecError::new(
            "/algorithm/bins",
            ErrorCode::InvalidParameter,
            "bins must be between 2 and 1000",
        ));
    }
    let strategy = match (fragmentation.strategy, fragmentation.delta) {
        (RepairStrategySpec::DeltaSelectivity, delta) => {
            let delta = delta.unwrap_or(DEFAULT_DELTA);
            if !(delta > 0.0 && delta <= 1.0) {
                return Err(SpecError::new(
                    "/algorithm/delta",
                    ErrorCode::InvalidParameter,
                    "delta must be in (0, 1]",
                ));
            }
            Strategy::DeltaSelective(delta)
        }
        (_, Some(_)) => {
            return Err(SpecError::new(
                "/algorithm/delta",
                ErrorCode::UnsupportedOption,
                "delta applies to the delta_selectivity strategy only",
            ))
        }
        (RepairStrategySpec::Naive, None) => Strategy::Naive,
        (RepairStrategySpec::Dgbe, None) => Strategy::Dgbe,
    };
    let (k, diversity, single_segment) = models_of(&spec.privacy_models, &fragmentation.class)?;
    if diversity.is_some() && strategy != Strategy::Dgbe {
        return Err(SpecError::new(
            "/algorithm/strategy",
            ErrorCode::UnsupportedOption,
            "an l-diverse fragmentation publishes segments whose joins need no repair; leave strategy at dgbe",
        ));
    }
    Ok(FragmentationPlan {
        local,
        anonymizer,
        class,
        fragments,
        size_bounds: (low as usize, high as usize),
        strategy,
        bins: bins as usize,
        diagonal: match fragmentation.diagonal {
            DiagonalSpec::Included => Diagonal::Included,
            DiagonalSpec::Excluded => Diagonal::Excluded,
        },
        k,
        diversity,
        single_segment,
    })
}

/// The class column: a declared `sensitive` column, and the only column published besides the features.
fn class_column(table: &Table, spec: &JobSpec, name: &str) -> Result<usize, SpecError> {
    let Some(index) = table.column_index(name) else {
        return Err(SpecError::new(
            "/algorithm/class",
            ErrorCode::UnknownColumn,
            format!("the dataset has no column '{name}'"),
        ));
    };
    if spec.attributes.get(name).map(|a| a.role) != Some(Role::Sensitive) {
        return Err(SpecError::new(
            format!("/attributes/{}/role", pointer_segment(name)),
            ErrorCode::InvalidSpec,
            format!("the class column '{name}' of a fragmentation job must be declared sensitive"),
        ));
    }
    for (other, attribute) in &spec.attributes {
        if other != name && matches!(attribute.role, Role::Sensitive | Role::Insensitive) {
            return Err(SpecError::new(
                format!("/attributes/{}/role", pointer_segment(other)),
                ErrorCode::UnsupportedOption,
                format!(
                    "a fragmentation job publishes the features and the class only: a column '{other}' in every fragment would re-link them; declare it identifying to drop it"
                ),
            ));
        }
    }
    Ok(index)
}

/// The k of the job, the ℓ of its ℓ-diversity models on the class (1 for t-closeness alone), and
/// whether it has t-closeness of the class: fragmentation supports k-anonymity and distinct, entropy
/// and recursive (c, ℓ)-diversity and t-closeness of the class (the segment pipeline); other models
/// are refused.
fn models_of(
    models: &[PrivacyModelSpec],
    class: &str,
) -> Result<(u64, Option<u64>, bool), SpecError> {
    let mut k = None;
    let mut diversity: Option<u64> = None;
    let mut closeness = false;
    for (i, model) in models.iter().enumerate() {
        if let Some(value) = model.class_size() {
            k = Some(k.map_or(value, |o: u64| o.max(value)));
            continue;
        }
        let l = match model {
            PrivacyModelSpec::TCloseness(spec) if spec.attribute == class => {
                closeness = true;
                1
            }
            PrivacyModelSpec::DistinctLDiversity(spec) if spec.attribute == class => spec.l,
            PrivacyModelSpec::EntropyLDiversity(spec) if spec.attribute == class => spec.l,
            PrivacyModelSpec::RecursiveClDiversity(spec) if spec.attribute == class => spec.l,
            _ => {
                return Err(SpecError::new(
                    format!("/privacy_models/{i}"),
                    ErrorCode::UnsupportedModel,
                    "fragmentation supports k_anonymity, and distinct, entropy or recursive l-diversity or t-closeness of the class",
                ))
            }
        };
        diversity = Some(diversity.map_or(l, |o| o.max(l)));
    }
    let k = k.ok_or_else(|| {
        SpecError::new(
            "/privacy_models",
            ErrorCode::MissingPrivacyModel,
            "fragmentation needs a k_anonymity model",
        )
    })?;
    Ok((k, diversity, closeness))
}
