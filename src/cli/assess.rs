//! `anonymizer assess`: the assessment of a local CSV file as it is (`domain::analysis::assessment`), printed as
//! pretty JSON on stdout — the same document `POST /v1/datasets/{id}/assessments` answers. With
//! `--population`, journalist and marketer risk are computed against that table. Without `csv.delimiter`
//! in the spec, the delimiter is sniffed from the input's header line.

use std::fs::File;
use std::io::{BufReader, Write};

use super::AssessArgs;
use crate::codec::sniff::read_table_sniffing;
use crate::codec::{read_table, CsvOptions, DEFAULT_MAX_FIELD_BYTES};
use crate::domain::analysis::assessment::{assess_against, AssessmentSpec};

/// Runs the command; errors are one-line messages.
pub fn run(args: &AssessArgs) -> Result<(), String> {
    let spec_bytes = std::fs::read(&args.spec)
        .map_err(|e| format!("cannot read spec {}: {}", args.spec.display(), e.kind()))?;
    let spec = AssessmentSpec::from_json(&spec_bytes)
        .map_err(|e| format!("spec {}: {e}", args.spec.display()))?;
    // without `csv.delimiter`, the input's header line decides (as for uploads); the population
    // table is read with the same one
    let given = match &spec.csv.delimiter {
        None => None,
        Some(d) => {
            Some(CsvOptions::with_delimiter(d).map_err(|e| format!("spec: /csv/delimiter: {e}"))?)
        }
    };
    let file = File::open(&args.input)
        .map_err(|e| format!("cannot read input {}: {}", args.input.display(), e.kind()))?;
    let encoding = match &spec.csv.encoding {
        None => None,
        Some(label) => crate::codec::encoding::encoding_for(label)
            .map_err(|m| format!("spec: /csv/encoding: {m} [invalid_encoding]"))?,
    };
    let (table, options) = read_table_sniffing(
        super::anonymize::decoded(BufReader::with_capacity(1 << 16, file), encoding),
        given,
        DEFAULT_MAX_FIELD_BYTES,
    )
    .map_err(|e| format!("input {}: {e} [{}]", args.input.display(), e.code()))?;
    let population = match &args.population {
        None => None,
        Some(path) => {
            let file = File::open(path)
                .map_err(|e| format!("cannot read population {}: {}", path.display(), e.kind()))?;
            Some(
                read_table(
                    super::anonymize::decoded(BufReader::with_capacity(1 << 16, file), encoding),
                    &options,
                )
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
