//! Runs the local-recoding algorithm a job asks for and keeps what the report needs: the recoding, the
//! algorithm's own figures (aggregates only, never which records moved), and the number of cells it
//! declares relocated (the verifier allows exactly that many cells not to cover their original value).

use rand_core::{OsRng, RngCore};

use crate::core::control::Control;
use crate::core::data::Table;
use crate::core::error::CoreError;
use crate::core::local::clustering::{
    k_assemble, k_member, pair_enum, top_down, FdAttribute, FunctionalDependency,
};
use crate::core::local::hybrid::{hybrid, m_hybrid, HybridOptions};
use crate::core::local::mdav::mdav;
use crate::core::local::{mondrian, LocalInput, Recoding};
use crate::core::privacy::PrivacyModel;
use crate::core::secret_rng::SecretKey;

use crate::domain::resolve::local::{DependencyColumn, LocalAlgorithm, LocalPlan};

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
    /// Microaggregation's centroids, `[j][group]` for each numeric quasi-identifier j (MDAV only): those
    /// columns publish them instead of the groups' ranges.
    pub centroids: Option<Vec<Option<Vec<f64>>>>,
}

/// Runs `plan`'s algorithm on `input` (drawn from `table`) under `models`.
pub fn run_local(
    table: &Table,
    input: &LocalInput<'_>,
    plan: &LocalPlan,
    models: &[Box<dyn PrivacyModel>],
    control: &dyn Control,
) -> Result<LocalRun, CoreError> {
    let dependencies = dependencies(table, plan);
    let clustered =
        |result: Result<crate::core::local::clustering::ClusteringResult, CoreError>| {
            result.map(|r| LocalRun {
                details: details(&r.report),
                recoding: r.recoding,
                relocated_cells: 0,
                centroids: None,
            })
        };
    match &plan.algorithm {
        LocalAlgorithm::Mondrian(options) => {
            let result = mondrian(input, models, options, control)?;
            Ok(LocalRun {
                details: details(&result.report),
                recoding: result.recoding,
                relocated_cells: 0,
                centroids: None,
            })
        }
        LocalAlgorithm::Mdav(options) => {
            let result = mdav(input, options, control)?;
            Ok(LocalRun {
                details: details(&result.report),
                recoding: result.recoding,
                relocated_cells: 0,
                centroids: Some(result.centroids),
            })
        }
        LocalAlgorithm::KMember(options) => {
            clustered(k_member(input, &dependencies, options, control))
        }
        LocalAlgorithm::TopDown(options) => {
            clustered(top_down(input, &dependencies, options, control))
        }
        LocalAlgorithm::PairEnum(options) => {
            clustered(pair_enum(input, &dependencies, options, control))
        }
        LocalAlgorithm::KAssemble(options) => {
            clustered(k_assemble(input, &dependencies, options, control))
        }
        &LocalAlgorithm::Hybrid {
            k,
            relocation_limit,
            alpha,
            mode,
            completion,
            multidimensional,
        } => {
            let options = HybridOptions {
                relocation_limit,
                alpha,
                mode,
                key: secret_key()?,
                completion,
            };
            if multidimensional {
                let result = m_hybrid(input, k, &options, control)?;
                return Ok(LocalRun {
                    details: details(&result.report),
                    relocated_cells: result.report.cells_changed,
                    recoding: result.recoding,
                    centroids: None,
                });
            }
            let result = hybrid(input, k, &options, control)?;
            Ok(LocalRun {
                details: details(&result.report),
                relocated_cells: result.report.cells_changed,
                recoding: result.recoding,
                centroids: None,
            })
        }
    }
}

/// The plan's functional dependencies over the engine's columns.
fn dependencies<'t>(table: &'t Table, plan: &LocalPlan) -> Vec<FunctionalDependency<'t>> {
    let side = |columns: &[DependencyColumn]| -> Vec<FdAttribute<'t>> {
        columns
            .iter()
            .map(|c| match *c {
                DependencyColumn::QuasiIdentifier(q) => FdAttribute::QuasiIdentifier(q),
                DependencyColumn::Other(c) => FdAttribute::Column(&table.column(c).codes),
            })
            .collect()
    };
    plan.dependencies
        .iter()
        .map(|fd| FunctionalDependency {
            lhs: side(&fd.lhs),
            rhs: side(&fd.rhs),
        })
        .collect()
}

/// A 256-bit key from the operating system's randomness, for draws no caller may know or replay:
/// hybrid k-anonymization's choices and output order. Never logged, stored or returned.
pub(crate) fn secret_key() -> Result<SecretKey, CoreError> {
    let mut bytes = [0u8; 32];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| CoreError::RandomnessUnavailable {
            reason: e.to_string(),
        })?;
    Ok(SecretKey::from_bytes(bytes))
}

/// An algorithm's report as JSON (a serialization failure, impossible for these plain structs, gives
/// `null`).
fn details(report: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(report).unwrap_or(serde_json::Value::Null)
}
