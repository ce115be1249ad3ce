//! Population uniqueness (ARX's population-uniqueness risk threshold): the estimated share of the
//! population's records that are unique in the population, from the published classes, at most
//! `threshold`. The estimate is Pitman's, Zayatz's, the SNB model's or, by default, the one Dankar et
//! al.'s rule picks (`core::risk::uniqueness`), for the population given by `population_size` or
//! `sampling_fraction` as in the job's `risk` section.
//!
//! A model on the whole published table, not monotone: the full-domain searches check it on the classes
//! kept after the class-level suppression, at every node; local recodings refuse it. A model that does
//! not apply to a table's classes (e.g. SNB without classes of two) fails it. The verifier re-estimates
//! the share from the published classes ([`TableLimit`]). When the job's `risk` section names no
//! population, the report's risk analysis takes this model's, so `risk.after.population_uniques` holds
//! the achieved figure.

use serde::Deserialize;

use crate::core::privacy::TableThreshold;
use crate::core::risk::UniquenessModel;
use crate::domain::analysis::risk::risk_settings;
use crate::domain::spec::{RiskSpec, SpecError};
use crate::domain::verify::TableLimit;
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// The estimator's name in the spec.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EstimatorName {
    /// Pitman's model.
    Pitman,
    /// Zayatz's model.
    Zayatz,
    /// The SNB model.
    Snb,
    /// Dankar et al.'s rule.
    #[default]
    Dankar,
}

impl From<EstimatorName> for UniquenessModel {
    fn from(name: EstimatorName) -> Self {
        match name {
            EstimatorName::Pitman => UniquenessModel::Pitman,
            EstimatorName::Zayatz => UniquenessModel::Zayatz,
            EstimatorName::Snb => UniquenessModel::Snb,
            EstimatorName::Dankar => UniquenessModel::Dankar,
        }
    }
}

/// `{"type": "population_uniqueness", "threshold": …, "population_size" | "sampling_fraction": …,
/// "model": "dankar"}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopulationUniquenessSpec {
    /// The largest estimated share of population uniques, in [0, 1].
    pub threshold: f64,
    /// The estimator (default `dankar`).
    #[serde(default)]
    pub model: EstimatorName,
    /// Records in the population (at least the table's).
    pub population_size: Option<u64>,
    /// The table's records as a share of the population, in (0, 1].
    pub sampling_fraction: Option<f64>,
}

impl ModelSpec for PopulationUniquenessSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let u = at.share_threshold(self.threshold, "the share of population uniques is between 0 and 1")?;
        let population = RiskSpec {
            population_size: self.population_size,
            sampling_fraction: self.sampling_fraction,
            threshold: None,
        };
        let rows = at.table.row_count() as u64;
        let settings = risk_settings(&population, rows, &at.pointer(""))?;
        let Some(population) = settings.population_size else {
            return Err(at.error(
                "",
                ErrorCode::InvalidParameter,
                "population uniqueness needs the population: give population_size or \
                 sampling_fraction",
            ));
        };
        let model = UniquenessModel::from(self.model);
        let mut resolved = ResolvedModel::new(
            TableThreshold::population_uniqueness(u, model, population),
            TableLimit::PopulationUniques {
                threshold: u,
                model,
                population,
            },
        );
        resolved.population_size = Some(population);
        Ok(resolved)
    }
}
