//! (ε, δ)-differential privacy with SafePub (Bild, Kuhn & Prasser 2018, "SafePub: A truthful data
//! anonymization algorithm with strong privacy guarantees", PoPETs 2018(1):67–87):
//! `{"type": "differential_privacy", "epsilon": 1.0, "delta": 1e-5}`, optionally with `search_budget`
//! (ε_s, default 0.1 as in ARX) and `steps` (pivots drawn, default 100).
//!
//! The anonymization's share ε − ε_s gives the sampling probability β and, with δ, the class size k
//! (`core::differential::parameters`); the job then draws every record with probability β, searches
//! the lattice with SafePub's private search, and suppresses (removes) every class below k. The
//! criterion is k-anonymity with that k and the verifier checks the published class sizes
//! ([`MinClassSize`]); the report's `differential_privacy` section states the guarantee.

use serde::Deserialize;

use crate::core::differential::parameters::safe_parameters;
use crate::core::privacy::{DerivedKAnonymity, KAnonymity};
use crate::domain::spec::SpecError;
use crate::domain::verify::MinClassSize;
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// The search's share of ε when the spec gives none (ARX's default).
pub const DEFAULT_SEARCH_BUDGET: f64 = 0.1;
/// Pivots the search draws when the spec gives no number.
pub const DEFAULT_STEPS: u32 = 100;
/// The largest ε a spec may ask for.
pub const MAX_EPSILON: f64 = 10.0;
/// The most pivots a spec may ask for.
pub const MAX_STEPS: u32 = 100_000;

/// `{"type": "differential_privacy", "epsilon": …, "delta": …, "search_budget"?: …, "steps"?: …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DifferentialPrivacySpec {
    /// The whole privacy budget ε.
    pub epsilon: f64,
    /// δ, strictly between 0 and 1.
    pub delta: f64,
    /// The search's share ε_s of ε (below ε).
    pub search_budget: Option<f64>,
    /// Pivots the search draws.
    pub steps: Option<u32>,
}

/// The resolved parameters of a differentially private job.
#[derive(Debug, Clone, PartialEq)]
pub struct DifferentialPrivacy {
    /// The whole budget ε.
    pub epsilon: f64,
    /// The requested δ.
    pub delta: f64,
    /// The search's share ε_s.
    pub search_budget: f64,
    /// Pivots the search draws.
    pub steps: u32,
    /// The probability with which each record is drawn.
    pub sampling_probability: f64,
    /// The smallest published class.
    pub k: u64,
    /// The δ the chosen k gives (at most the requested δ).
    pub delta_at_k: f64,
}

impl ModelSpec for DifferentialPrivacySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(at.error(
                "epsilon",
                ErrorCode::InvalidParameter,
                "ε is a positive number",
            ));
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(at.error(
                "delta",
                ErrorCode::InvalidParameter,
                "δ is strictly between 0 and 1",
            ));
        }
        let search_budget = self.search_budget.unwrap_or(DEFAULT_SEARCH_BUDGET);
        if !(search_budget > 0.0 && search_budget < self.epsilon) {
            return Err(at.error(
                "search_budget",
                ErrorCode::InvalidParameter,
                format!(
                    "the search's budget is a positive share of ε below ε ({}); the rest pays the \
                     anonymization",
                    self.epsilon
                ),
            ));
        }
        let steps = self.steps.unwrap_or(DEFAULT_STEPS);
        if !(1..=MAX_STEPS).contains(&steps) {
            return Err(at.error(
                "steps",
                ErrorCode::InvalidParameter,
                format!("the search draws between 1 and {MAX_STEPS} pivots"),
            ));
        }
        if self.epsilon > MAX_EPSILON {
            return Err(at.error(
                "epsilon",
                ErrorCode::InvalidParameter,
                format!("ε is at most {MAX_EPSILON}: beyond it sampling keeps nearly every record"),
            ));
        }
        let parameters =
            safe_parameters(self.epsilon - search_budget, self.delta).map_err(|e| {
                let field = match &e {
                    crate::core::error::CoreError::InvalidParameter { name, .. } => *name,
                    _ => "",
                };
                at.error(field, ErrorCode::InvalidParameter, e.to_string())
            })?;
        let rows = at.table.row_count() as u64;
        if parameters.k > rows {
            return Err(at.error(
                "",
                ErrorCode::KExceedsRows,
                format!(
                    "ε {} and δ {} need published classes of {} records, more than the table's {rows}",
                    self.epsilon, self.delta, parameters.k
                ),
            ));
        }
        let settings = DifferentialPrivacy {
            epsilon: self.epsilon,
            delta: self.delta,
            search_budget,
            steps,
            sampling_probability: parameters.sampling_probability,
            k: parameters.k,
            delta_at_k: parameters.delta_at_k,
        };
        let mut resolved = ResolvedModel::new(
            DerivedKAnonymity {
                k: KAnonymity { k: parameters.k },
                description: format!(
                    "({}, {})-differential privacy (SafePub): a random sample, classes of at least {} \
                     records",
                    self.epsilon, self.delta, parameters.k
                ),
            },
            MinClassSize(parameters.k),
        );
        resolved.differential_privacy = Some(settings);
        Ok(resolved)
    }
}
