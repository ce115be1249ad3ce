//! What a worker runs on its blocking thread: the [`Executor`] (by default [`run_pipeline`], the shared
//! run pipeline), its input (a loaded table, the job's spec and its stored hierarchies) and its output
//! (the CSV, spooled to a temporary file, and the report JSON). Tests substitute an executor that
//! panics or loops.

use std::sync::Arc;

use super::output::OutputCsv;
use crate::codec::archive::{fragment_entry_name, write_archive};
use crate::codec::CsvOptions;
use crate::core::control::{Control, Stage};
use crate::core::data::Table;
use crate::core::error::CoreError;
use crate::core::identifiers::PseudonymKey;
use crate::domain::analysis::warnings::refuse;
use crate::domain::run::{run_job_with, JobInputs, RunError};
use crate::domain::{JobSpec, Report};
use crate::hierarchy_refs::StoredHierarchies;

/// Everything one run needs, borrowed from the runner.
#[derive(Debug, Clone, Copy)]
pub struct JobInput<'a> {
    /// The dataset, parsed.
    pub table: &'a Table,
    /// The job's spec.
    pub spec: &'a JobSpec,
    /// The stored hierarchies the spec references.
    pub hierarchies: &'a StoredHierarchies,
    /// The dataset's field delimiter, used for the output too.
    pub delimiter: &'a str,
    /// The tenant's pseudonym key, when the spec asks for pseudonyms.
    pub pseudonym_key: Option<&'a PseudonymKey>,
    /// The population table the spec names, if any.
    pub population: Option<&'a Table>,
}

/// The result of a successful run.
#[derive(Debug)]
pub struct JobOutput {
    /// The anonymized table as CSV (header first).
    pub csv: OutputCsv,
    /// The run's report as JSON.
    pub report_json: String,
    /// What the run achieved, for job lists (JSON, see [`outcome_json`]); `None` when unknown.
    pub outcome_json: Option<String>,
}

/// Why a run produced no output. Messages are free of cell values.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// The pipeline refused the spec, the engine found no result or stopped, or verification failed.
    #[error("{0}")]
    Run(#[from] RunError),
    /// The output could not be serialized.
    #[error("{0}")]
    Output(&'static str),
}

/// The function a worker runs for a job, on a blocking thread inside the worker's rayon pool.
pub type Executor =
    Arc<dyn Fn(&JobInput<'_>, &dyn Control) -> Result<JobOutput, ExecuteError> + Send + Sync>;

/// The default executor: validates the spec against the table, runs the engine, verifies the output,
/// serializes the report and writes the output as CSV with the dataset's delimiter, telling `control`
/// each stage as it starts.
pub fn run_pipeline(
    input: &JobInput<'_>,
    control: &dyn Control,
) -> Result<JobOutput, ExecuteError> {
    let resolve = |source: &crate::domain::spec::HierarchySpec| input.hierarchies.resolve(source);
    let inputs = JobInputs {
        pseudonym_key: input.pseudonym_key,
        population: input.population,
    };
    let completed = run_job_with(input.table, input.spec, &resolve, control, inputs)?;
    stop_if_asked(control)?;
    let options = CsvOptions::with_delimiter(input.delimiter)
        .map_err(|_| ExecuteError::Output("the dataset's delimiter is not usable"))?;
    control.enter(Stage::Measuring);
    let report = completed.report();
    if input.spec.strict {
        refuse(&report.warnings).map_err(RunError::Spec)?;
    }
    let report_json = serde_json::to_string(&report)
        .map_err(|_| ExecuteError::Output("the report could not be serialized"))?;
    let outcome_json = Some(outcome_json(&report));
    stop_if_asked(control)?;
    control.enter(Stage::Writing);
    let spool_error =
        |_| ExecuteError::Output("the output could not be spooled to a temporary file");
    let csv = if completed.is_fragmented() {
        // one CSV per fragment, then the archive of them all (what the job stores)
        let mut fragments = Vec::with_capacity(completed.outputs());
        for index in 0..completed.outputs() {
            let fragment =
                OutputCsv::spool(|writer| completed.write_output(index, writer, &options))
                    .map_err(spool_error)?
                    .map_err(|_| ExecuteError::Output("the output could not be written"))?;
            fragments.push(fragment);
        }
        let readers = fragments
            .iter()
            .map(|f| f.reader().map(|r| (r, f.len())))
            .collect::<Result<Vec<_>, _>>()
            .map_err(spool_error)?;
        OutputCsv::spool(|writer| {
            write_archive(
                writer,
                readers
                    .into_iter()
                    .enumerate()
                    .map(|(i, (reader, len))| (fragment_entry_name(i + 1), reader, len)),
            )
            .map(|_| ())
        })
        .map_err(spool_error)?
        .map_err(|_| ExecuteError::Output("the archive of the fragments could not be written"))?
    } else {
        OutputCsv::spool(|writer| completed.write_csv(writer, &options))
            .map_err(spool_error)?
            .map_err(|_| ExecuteError::Output("the output could not be written"))?
    };
    // a cancel that arrives now is found by the runner or by the fenced terminal write; a deadline or a
    // shutdown no longer throws the finished output away
    Ok(JobOutput {
        csv,
        report_json,
        outcome_json,
    })
}

/// Ends the run between two stages when the caller wants it to stop (a cancel, a deadline, a lost
/// lease, a shutdown), so that a cancel during verification or measuring is honoured before the report
/// and the output are written.
fn stop_if_asked(control: &dyn Control) -> Result<(), ExecuteError> {
    if control.is_cancelled() {
        Err(ExecuteError::Run(RunError::Core(CoreError::Cancelled)))
    } else {
        Ok(())
    }
}

/// The figures of a report a job list shows (the `JobOutcome` schema): records, published records,
/// the achieved k, suppressed records and the warnings.
pub fn outcome_json(report: &Report) -> String {
    serde_json::json!({
        "records": report.records,
        "published_records": report.published_records,
        "achieved_k": report.achieved.k,
        "suppressed_records": report.suppressed_records,
        "warnings": report.warnings,
    })
    .to_string()
}

/// [`run_pipeline`] as an [`Executor`].
pub fn default_executor() -> Executor {
    Arc::new(run_pipeline)
}
