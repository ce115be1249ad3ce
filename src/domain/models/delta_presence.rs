//! δ-presence (Nergiz, Atzori & Clifton, "Hiding the presence of individuals from shared databases",
//! SIGMOD 2007): for every individual of the population, the probability that they are in the published
//! table — published records / population records of their class — lies in [δ_min, δ_max]. Needs the
//! population table; checked by the full-domain searches (classes outside the range are suppressed;
//! with δ_min > 0 a node whose population has a class without any table record fails as a whole), and
//! verified by counting the population under the published labels ([`PopulationRequirement`]).

use serde::Deserialize;

use crate::core::privacy::DeltaPresence;
use crate::domain::spec::SpecError;
use crate::domain::verify::{PopulationBound, PopulationRequirement};
use crate::error_code::ErrorCode;

use super::population::population;
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "delta_presence", "delta_min": …, "delta_max": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaPresenceSpec {
    /// The least presence probability, in [0, δ_max].
    pub delta_min: f64,
    /// The largest presence probability, in (0, 1].
    pub delta_max: f64,
}

impl ModelSpec for DeltaPresenceSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let (min, max) = (self.delta_min, self.delta_max);
        if !(max > 0.0 && max <= 1.0) {
            return Err(at.error(
                "delta_max",
                ErrorCode::InvalidThreshold,
                "delta_max is a probability greater than 0 and at most 1",
            ));
        }
        if !(min >= 0.0 && min <= max) {
            return Err(at.error(
                "delta_min",
                ErrorCode::InvalidThreshold,
                "delta_min is a probability from 0 up to delta_max",
            ));
        }
        let population = population(at, "δ-presence")?;
        let report = population.clone();
        let mut resolved = ResolvedModel::new(
            DeltaPresence {
                min,
                max,
                index: population.index,
            },
            PopulationRequirement {
                labels: population.labels,
                bound: PopulationBound::Presence { min, max },
            },
        );
        resolved.population = Some(report);
        Ok(resolved)
    }
}
