//! One anonymization run on a loaded table, shared by the CLI and the service's workers: validate the spec
//! against the table, run the engine under the caller's [`Control`], and verify the output independently
//! of the engine before anything can be published. Writing the CSV and building the report are separate
//! steps, so each caller decides where the bytes go.

use std::io::Write;
use std::time::Instant;

use crate::codec::{write_rendering, CodecError, CsvOptions};
use crate::core::control::Control;
use crate::core::data::Table;
use crate::core::engine::{anonymize, Outcome};
use crate::core::error::CoreError;

use super::verify::{verify, VerificationError};
use super::{prepare, HierarchyResolver, JobSpec, Prepared, Report, SpecError};

/// Why a run produced nothing. Every variant's message is free of cell values.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The spec does not fit the table.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// The engine found no result, or was cancelled.
    #[error("{0}")]
    Core(#[from] CoreError),
    /// The output broke a privacy model (an engine bug); nothing may be published.
    #[error("{0}")]
    Verification(#[from] VerificationError),
}

/// A finished, verified run.
#[derive(Debug)]
pub struct Completed<'t> {
    table: &'t Table,
    prepared: Prepared,
    outcome: Outcome,
    elapsed_ms: f64,
}

/// Validates `spec` against `table`, runs the engine and verifies its output.
pub fn run<'t>(
    table: &'t Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
    control: &dyn Control,
) -> Result<Completed<'t>, RunError> {
    let prepared = prepare(table, spec, resolve)?;
    let started = Instant::now();
    let outcome = anonymize(&prepared.input(table), &prepared.plan, control)?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let completed = Completed {
        table,
        prepared,
        outcome,
        elapsed_ms,
    };
    verify(
        &completed.prepared.rendering(table, &completed.outcome),
        &completed.prepared.requirements,
    )?;
    Ok(completed)
}

impl Completed<'_> {
    /// The engine's outcome.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Engine time in milliseconds.
    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// Writes the anonymized table as CSV (header first).
    pub fn write_csv<W: Write>(&self, output: W, options: &CsvOptions) -> Result<(), CodecError> {
        write_rendering(
            output,
            &self.prepared.rendering(self.table, &self.outcome),
            options,
        )
    }

    /// The run's report.
    pub fn report(&self) -> Report {
        Report::new(
            &self.outcome,
            &self.prepared.quasi_identifier_names(self.table),
            self.prepared
                .plan
                .privacy_models
                .iter()
                .map(|m| m.describe())
                .collect(),
            self.prepared.remove_suppressed,
            self.elapsed_ms,
        )
    }
}
