//! Runs the local-recoding algorithm a job asks for and keeps what the report needs: the recoding, the
//! algorithm's own figures (aggregates only, never which records moved), and the number of cells it
//! declares relocated (the verifier allows exactly that many cells not to cover their original value).

use rand_core::{OsRng, RngCore};

use crate::core::control::Control;
use crate::core::data::Table;
use crate::core::error::CoreError;
use crate::core::local::clustering::{
    k_assemble, k_member, pair_enum, top_down, FdAttribute, FunctionalDependency, KAssembleOptions,
    KMemberOptions, PairEnumOptions, PreserveMode, TopDownOptions,
};
use crate::core::local::hybrid::{hybrid, Completion, HybridMode, HybridOptions};
use crate::core::local::{mondrian, LocalInput, MondrianOptions, Recoding};
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
            })
        };
    let mode = |exact: bool| {
        if exact {
            PreserveMode::Exact
        } else {
            PreserveMode::Continuous
        }
    };
    match plan.algorithm {
        LocalAlgorithm::Mondrian {
            relaxed,
            ref split_preference,
        } => {
            let options = MondrianOptions {
                relaxed,
                split_preference: split_preference.clone(),
            };
            let result = mondrian(input, models, &options, control)?;
            Ok(LocalRun {
                details: details(&result.report),
                recoding: result.recoding,
                relocated_cells: 0,
            })
        }
        LocalAlgorithm::KMember { k, seed } => clustered(k_member(
            input,
            &dependencies,
            &KMemberOptions { k: size(k), seed },
            control,
        )),
        LocalAlgorithm::TopDown { k, seed } => clustered(top_down(
            input,
            &dependencies,
            &TopDownOptions { k: size(k), seed },
            control,
        )),
        LocalAlgorithm::PairEnum {
            k,
            exact_match,
            prefer_preserved,
            nearest_clusters,
            incremental,
        } => clustered(pair_enum(
            input,
            &dependencies,
            &PairEnumOptions {
                k: size(k),
                mode: mode(exact_match),
                prefer_exact: prefer_preserved,
                neighbours: nearest_clusters.map(size),
                incremental,
            },
            control,
        )),
        LocalAlgorithm::KAssemble {
            k,
            seed,
            pool,
            exact_match,
            prefer_preserved,
            incremental,
        } => clustered(k_assemble(
            input,
            &dependencies,
            &KAssembleOptions {
                k: size(k),
                pool: size(pool),
                seed,
                mode: mode(exact_match),
                prefer_exact: prefer_preserved,
                incremental,
            },
            control,
        )),
        LocalAlgorithm::Hybrid {
            k,
            relocation_limit,
            alpha,
            deterministic,
            completion_at_least,
        } => {
            let options = HybridOptions {
                relocation_limit,
                alpha,
                mode: if deterministic {
                    HybridMode::Deterministic
                } else {
                    HybridMode::Randomized
                },
                key: secret_key()?,
                completion: if completion_at_least {
                    Completion::AtLeast
                } else {
                    Completion::MoreThan
                },
            };
            let result = hybrid(input, k, &options, control)?;
            Ok(LocalRun {
                details: details(&result.report),
                relocated_cells: result.report.cells_changed,
                recoding: result.recoding,
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

/// A count from the spec as a size (saturating on 32-bit targets).
fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A 256-bit key from the operating system's randomness, for draws no caller may know or replay:
/// hybrid k-anonymization's choices and output order. Never logged, stored or returned.
fn secret_key() -> Result<SecretKey, CoreError> {
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
