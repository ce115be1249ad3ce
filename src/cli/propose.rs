//! `anonymizer propose`: a job spec for a local CSV file nobody has described yet
//! ([`crate::domain::proposal`]), printed as pretty JSON on stdout so that
//! `anonymizer propose --input x.csv > job.json && anonymizer anonymize --input x.csv --spec job.json …`
//! runs as it is. The reason for each column and the risk before and after go to stderr; `--report`
//! writes the whole proposal as JSON.

use std::io::Write;

use serde_json::json;

use super::input::read_input;
use super::ProposeArgs;
use crate::codec::DEFAULT_MAX_FIELD_BYTES;
use crate::core::control::NoControl;
use crate::domain::proposal::{propose, Proposal};
use crate::domain::resolve::input_format;
use crate::domain::run::RunError;
use crate::domain::spec::CsvSpec;

/// Runs the command; errors are one-line messages.
pub fn run(args: &ProposeArgs) -> Result<(), String> {
    let csv = CsvSpec {
        delimiter: args.delimiter.clone(),
        encoding: args.encoding.clone(),
        output_encoding: None,
    };
    let format = input_format(&csv).map_err(|e| super::spec_problems(&e))?;
    let (table, options, _) = read_input(&args.input, &format, DEFAULT_MAX_FIELD_BYTES, false)?;
    // the spec names the delimiter the input was read with (sniffed or given) and its encoding
    let delimiter = match options.delimiter {
        b'\t' => "\\t".to_string(),
        d => (d as char).to_string(),
    };
    let mut csv_json = json!({ "delimiter": delimiter });
    if let Some(encoding) = &args.encoding {
        csv_json["encoding"] = json!(encoding);
    }
    let proposal = propose(&table, Some(csv_json), Some(&NoControl)).map_err(|e| match e {
        RunError::Spec(e) => super::spec_problems(&e),
        other => format!("the proposal could not be checked: {other}"),
    })?;
    if let Some(path) = &args.report {
        let text = serde_json::to_string_pretty(&proposal).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write {}: {}", path.display(), e.kind()))?;
    }
    if !args.quiet {
        eprint!("{}", explanation(&proposal));
    }
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &proposal.spec).map_err(|e| e.to_string())?;
    out.write_all(b"\n")
        .map_err(|e| format!("cannot write output: {}", e.kind()))
}

/// The reasons and the risk before and after, for the terminal.
fn explanation(proposal: &Proposal) -> String {
    let mut text = String::new();
    let width = proposal
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    for column in &proposal.columns {
        text.push_str(&format!(
            "{:<16} {:<width$}  {}\n",
            column.role, column.name, column.reason
        ));
    }
    let before = &proposal.assessment;
    text.push_str(&format!(
        "as it is: k = {}, highest prosecutor risk {:.3}, {:.1} % of records unique\n",
        before.k,
        before.risk.prosecutor.highest,
        100.0 * before.risk.sample_uniques
    ));
    let expected = &proposal.expected;
    match &expected.trial {
        Some(trial) => {
            text.push_str(&format!(
                "proposed (trial run): k = {}, {} records suppressed, highest prosecutor risk {:.3}\n",
                trial.achieved_k, trial.suppressed_records, expected.highest_prosecutor_risk
            ));
            for warning in &trial.warnings {
                match &warning.column {
                    Some(column) => text.push_str(&format!(
                        "warning: {column}: {} [{}]\n",
                        warning.message, warning.code
                    )),
                    None => text.push_str(&format!(
                        "warning: {} [{}]\n",
                        warning.message, warning.code
                    )),
                }
            }
        }
        None => text.push_str(&format!(
            "proposed: highest prosecutor risk at most {:.3} (the k-anonymity bound; {})\n",
            expected.highest_prosecutor_risk,
            expected.note.unwrap_or("no trial run")
        )),
    }
    text
}
