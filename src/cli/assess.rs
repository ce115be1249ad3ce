//! `anonymizer assess`: the assessment of a local CSV file as it is (`domain::analysis::assessment`), printed as
//! pretty JSON on stdout — the same document `POST /v1/datasets/{id}/assessments` answers. With
//! `--population`, journalist and marketer risk are computed against that table. The input is read as
//! `anonymize` reads it ([`super::input`]). With `--published`, the loss measures of that published table
//! against the input (`domain::analysis::published`), the spec being the job spec it was made with.

use std::io::Write;
use std::path::Path;

use super::anonymize::{hierarchies_beside, read_job_spec};
use super::input::{read_input, read_like_input};
use super::AssessArgs;
use crate::codec::DEFAULT_MAX_FIELD_BYTES;
use crate::domain::analysis::assessment::{assess_against, AssessmentSpec};
use crate::domain::analysis::published::assess_published;
use crate::domain::resolve::{input_format, output_encoding, prepare_with, InputFormat};

/// Runs the command; errors are one-line messages.
pub fn run(args: &AssessArgs) -> Result<(), String> {
    if let Some(published) = &args.published {
        return run_published(args, published);
    }
    let spec_bytes = std::fs::read(&args.spec)
        .map_err(|e| format!("cannot read spec {}: {}", args.spec.display(), e.kind()))?;
    let spec = AssessmentSpec::from_json(&spec_bytes)
        .map_err(|e| format!("spec {}: {e}", args.spec.display()))?;
    // the population table is read as the input was (delimiter and encoding)
    let format = input_format(&spec.csv).map_err(|e| super::spec_problems(&e))?;
    let (table, options, _) = read_input(&args.input, &format, DEFAULT_MAX_FIELD_BYTES, false)?;
    let population = match &args.population {
        None => None,
        Some(path) => Some(read_like_input(path, &format, &options, "population")?),
    };
    let assessment =
        assess_against(&table, &spec, population.as_ref()).map_err(|e| super::spec_problems(&e))?;
    print_json(&assessment)
}

/// `--published`: the published table's loss measures against the input.
fn run_published(args: &AssessArgs, published: &Path) -> Result<(), String> {
    let spec = read_job_spec(&args.spec)?;
    let format = input_format(&spec.csv).map_err(|e| super::spec_problems(&e))?;
    let (table, options, _) = read_input(&args.input, &format, DEFAULT_MAX_FIELD_BYTES, false)?;
    // `anonymize` writes the published table in the output encoding (UTF-8 unless the spec sets one)
    let published_format = InputFormat {
        encoding: output_encoding(&spec.csv).map_err(|e| super::spec_problems(&e))?,
        ..format
    };
    let published = read_like_input(published, &published_format, &options, "published table")?;
    let population = match &args.population {
        None => None,
        Some(path) => Some(read_like_input(path, &format, &options, "population")?),
    };
    let prepared = prepare_with(
        &table,
        &spec,
        &hierarchies_beside(&args.spec),
        population.as_ref(),
    )
    .map_err(|e| super::spec_problems(&e))?;
    let assessment =
        assess_published(&table, &published, &prepared).map_err(|e| super::spec_problems(&e))?;
    print_json(&assessment)
}

/// Writes `value` as pretty JSON and a newline on stdout.
fn print_json(value: &impl serde::Serialize) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| e.to_string())?;
    out.write_all(b"\n")
        .map_err(|e| format!("cannot write output: {}", e.kind()))
}
