//! Runs the local-recoding algorithm a job asks for and keeps what the report needs: the recoding, the
//! algorithm's own figures (aggregates only, never which records moved), and the number of cells it
//! declares relocated (the verifier allows exactly that many cells not to cover their original value).

use crate::core::control::Control;
use crate::core::error::CoreError;
use crate::core::local::{mondrian, LocalInput, MondrianOptions, Recoding};
use crate::core::privacy::PrivacyModel;

use super::local_plan::{LocalAlgorithm, LocalPlan};

/// A finished local recoding.
#[derive(Debug, Clone)]
pub struct LocalRun {
    /// Groups and their cells.
    pub recoding: Recoding,
    /// The algorithm's report (aggregates only).
    pub details: serde_json::Value,
    /// Quasi-identifier cells the algorithm relocated (published cells that do not cover the original
    /// value by design).
    pub relocated_cells: u64,
}

/// Runs `plan`'s algorithm on `input` under `models`.
pub fn run_local(
    input: &LocalInput<'_>,
    plan: &LocalPlan,
    models: &[Box<dyn PrivacyModel>],
    control: &dyn Control,
) -> Result<LocalRun, CoreError> {
    match &plan.algorithm {
        LocalAlgorithm::Mondrian {
            relaxed,
            split_preference,
        } => {
            let options = MondrianOptions {
                relaxed: *relaxed,
                split_preference: split_preference.clone(),
            };
            let result = mondrian(input, models, &options, control)?;
            Ok(LocalRun {
                details: details(&result.report),
                recoding: result.recoding,
                relocated_cells: 0,
            })
        }
    }
}

/// An algorithm's report as JSON (a serialization failure, impossible for these plain structs, gives
/// `null`).
fn details(report: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(report).unwrap_or(serde_json::Value::Null)
}
