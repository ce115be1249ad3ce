//! k-map: every published class matches at least k individuals of the population an attacker may
//! identify people from (Sweeney's k-map; El Emam & Dankar, "Protecting privacy using k-anonymity",
//! JAMIA 15(5), 2008). Two forms, as in ARX:
//! - against a population table (`{"type": "k_map", "k": 5}` and the job's population): a class passes
//!   when at least k population records generalize to its values; checked by the full-domain searches,
//!   verified by counting the population under the published labels ([`PopulationRequirement`]);
//! - estimated (`"estimator": "poisson" | "zero_truncated_poisson"`, with `population_size` or
//!   `sampling_fraction` and a `significance` level, default 0.05): the table's classes must hold at
//!   least the derived k ≤ k ([`derived_k`]); the full-domain searches and the local recodings that
//!   take any class-level model (Mondrian) take it, and the verifier checks that class size
//!   ([`MinClassSize`]).

use serde::Deserialize;

use crate::core::privacy::{derived_k, DerivedKAnonymity, KAnonymity, KMap, PopulationEstimator};
use crate::domain::analysis::risk::risk_settings;
use crate::domain::spec::{RiskSpec, SpecError};
use crate::domain::verify::{MinClassSize, PopulationBound, PopulationRequirement};
use crate::error_code::ErrorCode;

use super::population::population;
use super::{ModelContext, ModelSpec, ResolvedModel};

/// The default significance level of estimated k-map.
pub const DEFAULT_SIGNIFICANCE: f64 = 0.05;

/// The estimator's name in the spec.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EstimatorName {
    /// Poisson.
    Poisson,
    /// Zero-truncated Poisson.
    ZeroTruncatedPoisson,
}

/// `{"type": "k_map", "k": …, "estimator"?: …, "significance"?: …, "population_size" |
/// "sampling_fraction"?: …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KMapSpec {
    /// The least number of population records a class matches.
    pub k: u64,
    /// Estimate the population from the sampling fraction instead of a population table.
    pub estimator: Option<EstimatorName>,
    /// The estimate's significance level, in (0, 1) (estimated k-map only).
    pub significance: Option<f64>,
    /// Records in the population (estimated k-map only).
    pub population_size: Option<u64>,
    /// The table's share of the population (estimated k-map only).
    pub sampling_fraction: Option<f64>,
}

impl KMapSpec {
    fn estimated(
        &self,
        at: &ModelContext<'_>,
        estimator: EstimatorName,
    ) -> Result<ResolvedModel, SpecError> {
        let alpha = self.significance.unwrap_or(DEFAULT_SIGNIFICANCE);
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(at.error(
                "significance",
                ErrorCode::InvalidParameter,
                "the significance level is a probability strictly between 0 and 1",
            ));
        }
        let rows = at.table.row_count() as u64;
        let stated = RiskSpec {
            population_size: self.population_size,
            sampling_fraction: self.sampling_fraction,
            threshold: None,
        };
        let settings = risk_settings(&stated, rows, &at.pointer(""))?;
        let population = match (settings.population_size, at.population) {
            (Some(size), _) => size,
            (None, Some(table)) => (table.row_count() as u64).max(rows),
            (None, None) => {
                return Err(at.error(
                    "",
                    ErrorCode::InvalidParameter,
                    "estimated k-map needs the population: give population_size or sampling_fraction",
                ))
            }
        };
        if self.k > population {
            return Err(at.error(
                "k",
                ErrorCode::KExceedsRows,
                format!("k is larger than the population's {population} records"),
            ));
        }
        let fraction = if population == 0 {
            1.0
        } else {
            rows as f64 / population as f64
        };
        let estimator = match estimator {
            EstimatorName::Poisson => PopulationEstimator::Poisson,
            EstimatorName::ZeroTruncatedPoisson => PopulationEstimator::ZeroTruncatedPoisson,
        };
        let (k, type_one) = derived_k(self.k, alpha, fraction, estimator, rows);
        let name = match estimator {
            PopulationEstimator::Poisson => "Poisson",
            PopulationEstimator::ZeroTruncatedPoisson => "zero-truncated Poisson",
        };
        let mut resolved = ResolvedModel::new(
            DerivedKAnonymity {
                k: KAnonymity { k },
                description: format!(
                    "{}-map estimated ({name}, significance {alpha}): classes of at least {k} records, \
                     type-1 error {type_one:.4}",
                    self.k
                ),
            },
            MinClassSize(k),
        );
        resolved.population_size = Some(population);
        Ok(resolved)
    }
}

impl ModelSpec for KMapSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        if self.k == 0 {
            return Err(at.error("k", ErrorCode::InvalidK, "k is at least 1"));
        }
        if let Some(estimator) = self.estimator {
            return self.estimated(at, estimator);
        }
        for (field, given) in [
            ("significance", self.significance.is_some()),
            ("population_size", self.population_size.is_some()),
            ("sampling_fraction", self.sampling_fraction.is_some()),
        ] {
            if given {
                return Err(at.error(
                    field,
                    ErrorCode::InvalidParameter,
                    "k-map against a population table takes the population from the table; this \
                     parameter is for estimated k-map (give an estimator)",
                ));
            }
        }
        let population = population(at, "k-map")?;
        if self.k > population.index.population_rows() as u64 {
            return Err(at.error(
                "k",
                ErrorCode::KExceedsRows,
                format!(
                    "k is larger than the population's {} records",
                    population.index.population_rows()
                ),
            ));
        }
        let report = population.clone();
        let mut resolved = ResolvedModel::new(
            KMap {
                k: self.k,
                index: population.index,
            },
            PopulationRequirement {
                labels: population.labels,
                bound: PopulationBound::AtLeast(self.k),
            },
        );
        resolved.population = Some(report);
        Ok(resolved)
    }
}
