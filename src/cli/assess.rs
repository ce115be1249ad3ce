//! `anonymizer assess`: the assessment of a local CSV file as it is (`domain::analysis::assessment`), printed as
//! pretty JSON on stdout — the same document `POST /v1/datasets/{id}/assessments` answers. With
//! `--population`, journalist and marketer risk are computed against that table.

use std::fs::File;
use std::io::{BufReader, Write};

use super::AssessArgs;
use crate::codec::{read_table, CsvOptions};
use crate::domain::analysis::assessment::{assess_against, AssessmentSpec};

/// Runs the command; errors are one-line messages.
pub fn run(args: &AssessArgs) -> Result<(), String> {
    let spec_bytes = std::fs::read(&args.spec)
        .map_err(|e| format!("cannot read spec {}: {}", args.spec.display(), e.kind()))?;
    let spec = AssessmentSpec::from_json(&spec_bytes)
        .map_err(|e| format!("spec {}: {e}", args.spec.display()))?;
    let options = match &spec.csv.delimiter {
        None => CsvOptions::default(),
        Some(d) => {
            CsvOptions::with_delimiter(d).map_err(|e| format!("spec: /csv/delimiter: {e}"))?
        }
    };
    let file = File::open(&args.input)
        .map_err(|e| format!("cannot read input {}: {}", args.input.display(), e.kind()))?;
    let table = read_table(BufReader::with_capacity(1 << 16, file), &options)
        .map_err(|e| format!("input {}: {e}", args.input.display()))?;
    let population = match &args.population {
        None => None,
        Some(path) => {
            let file = File::open(path)
                .map_err(|e| format!("cannot read population {}: {}", path.display(), e.kind()))?;
            Some(
                read_table(BufReader::with_capacity(1 << 16, file), &options)
                    .map_err(|e| format!("population {}: {e}", path.display()))?,
            )
        }
    };
    let assessment =
        assess_against(&table, &spec, population.as_ref()).map_err(|e| super::spec_problems(&e))?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &assessment).map_err(|e| e.to_string())?;
    out.write_all(b"\n")
        .map_err(|e| format!("cannot write output: {}", e.kind()))
}
