//! Guard rails: what in a finished run is probably a mistake even though every requested model holds,
//! reported as warnings with a stable `code`, the column where one applies and a message that names no
//! value of the data. Every check reads the output as it is written ([`Rendering`]), so it holds for
//! every algorithm:
//! - `near_unique_column`: a column published unchanged whose values are nearly all distinct (an
//!   identifier such as a record number declared insensitive or sensitive);
//! - `near_unique_mask`: a masked identifying column that still shows nearly one text per record;
//! - `fully_generalized`: a quasi-identifier that is `*` in every published record;
//! - `records_fully_generalized`: records that are not suppressed yet `*` in every quasi-identifier, which
//!   a reader cannot tell from suppressed records (the report also counts them);
//! - `most_records_suppressed`: more than half of the records suppressed;
//! - `over_generalized`: the smallest published class far larger than the k asked for;
//! - `suppression_marker_in_input`: a quasi-identifier whose input already holds `*`, the text of a
//!   suppressed cell;
//! - `repeated_hierarchy_rows`: a hierarchy that lists an original value on several identical rows
//!   ([`repeated_hierarchy_rows`]).
//!
//! A `strict` job turns them into errors (`strict_warnings`): the two the input shows are checked before
//! the run ([`input_warnings`]), the rest refuse the output ([`refuse`]).

use serde::Serialize;

use crate::core::data::Table;
use crate::core::render::{Rendering, SUPPRESSED};
use crate::domain::spec::{pointer_segment, JobSpec, Problems, Role, SpecError};
use crate::error_code::ErrorCode;

/// Published records at or above which a column is checked for near-uniqueness (smaller tables are
/// all near-unique).
pub const NEAR_UNIQUE_MIN_RECORDS: usize = 20;

/// Share of distinct values among published records from which a column unchanged is near-unique.
pub const NEAR_UNIQUE_SHARE: f64 = 0.8;

/// How many times the k asked for the smallest class may reach before the output counts as
/// over-generalized.
pub const OVER_GENERALIZATION_FACTOR: u64 = 10;

/// One warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Stable snake_case code.
    pub code: &'static str,
    /// The column it concerns, when it concerns one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// What was found and what to do, without any cell value.
    pub message: String,
}

impl Warning {
    fn new(code: &'static str, column: Option<&str>, message: String) -> Self {
        Self {
            code,
            column: column.map(str::to_string),
            message,
        }
    }
}

/// The warnings of a run and the number of records published unsuppressed but `*` in every
/// quasi-identifier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// The warnings, in the order of the checks above and of the columns.
    pub warnings: Vec<Warning>,
    /// Records not suppressed whose every quasi-identifier is `*`.
    pub fully_generalized_records: u64,
}

/// Checks the output `rendering` of a run over `records` input records, `suppressed` marking the
/// suppressed ones; `requested_k` is the largest class size a model asks for (1 without one) and
/// `achieved_k` the smallest published class.
pub fn check(
    rendering: &Rendering<'_>,
    suppressed: &[bool],
    requested_k: u64,
    achieved_k: u64,
) -> Findings {
    let mut findings = Findings::default();
    let header = rendering.header();
    let generalized: Vec<usize> = (0..header.len())
        .filter(|&c| rendering.is_generalized(c))
        .collect();
    // the output's rows are walked again per check rather than listed (80 MB at 10M records)
    let rows = rendering.rows().count();
    // unchanged columns with nearly one value per published record
    if rows >= NEAR_UNIQUE_MIN_RECORDS {
        for column in (0..header.len()).filter(|c| !rendering.is_generalized(*c)) {
            if rendering.is_operated(column) {
                // a pseudonym is unique by design and a constant never is; a mask may leave too much
                if let Some(warning) = near_unique_mask(rendering, column, rows) {
                    findings.warnings.push(warning);
                }
                continue;
            }
            let source = rendering.source(column);
            let mut seen = vec![false; source.dictionary.len()];
            let mut distinct = 0usize;
            for row in rendering.rows() {
                let slot = &mut seen[source.codes[row] as usize];
                distinct += usize::from(!std::mem::replace(slot, true));
            }
            if distinct as f64 >= NEAR_UNIQUE_SHARE * rows as f64 {
                findings
                    .warnings
                    .push(near_unique(header[column], distinct, rows));
            }
        }
    }
    // quasi-identifiers that are `*` everywhere, and records that are `*` everywhere
    let mut all_star = vec![true; generalized.len()];
    let mut published = 0u64;
    for row in rendering.rows().filter(|&r| !suppressed[r]) {
        published += 1;
        let mut every = !generalized.is_empty();
        for (i, &column) in generalized.iter().enumerate() {
            let star = rendering.cell(row, column) == SUPPRESSED;
            all_star[i] &= star;
            every &= star;
        }
        findings.fully_generalized_records += u64::from(every);
    }
    for (i, &column) in generalized.iter().enumerate() {
        if all_star[i] && published > 0 {
            findings.warnings.push(Warning::new(
                "fully_generalized",
                Some(header[column]),
                "every published record shows * in this quasi-identifier: the column carries no \
                 information; a finer hierarchy, a smaller k or more suppression may keep some"
                    .into(),
            ));
        }
    }
    if findings.fully_generalized_records > 0 {
        findings.warnings.push(Warning::new(
            "records_fully_generalized",
            None,
            format!(
                "{} records are not suppressed but show * in every quasi-identifier, like suppressed \
                 records; the report counts them apart (fully_generalized_records)",
                findings.fully_generalized_records
            ),
        ));
    }
    let records = suppressed.len();
    let hidden = suppressed.iter().filter(|&&s| s).count();
    if hidden * 2 > records {
        findings.warnings.push(Warning::new(
            "most_records_suppressed",
            None,
            format!("{hidden} of {records} records are suppressed"),
        ));
    }
    if requested_k > 1 && achieved_k >= OVER_GENERALIZATION_FACTOR * requested_k {
        findings.warnings.push(Warning::new(
            "over_generalized",
            None,
            format!(
                "the smallest published class holds {achieved_k} records for k = {requested_k}: the \
                 output may be generalized far more than the models need (a hierarchy with more \
                 levels lets the search stop earlier)"
            ),
        ));
    }
    // the suppression marker in a quasi-identifier's input
    for &column in &generalized {
        let source = rendering.source(column);
        if let Some(code) = source.dictionary.code(SUPPRESSED) {
            let count = source.codes.iter().filter(|&&c| c == code).count();
            findings
                .warnings
                .push(marker_in_input(header[column], count));
        }
    }
    findings
}

/// `near_unique_mask` when a masked identifier still shows nearly one text per published record: the
/// characters it keeps single records out. Pseudonyms (one per value by design) and constants are not
/// checked.
fn near_unique_mask(rendering: &Rendering<'_>, column: usize, rows: usize) -> Option<Warning> {
    if rendering.operator(column) != Some("mask") {
        return None;
    }
    // a mask never shows more distinct texts than the column has values among the published records:
    // those are counted first, and the texts only of them, once each
    let source = rendering.source(column);
    let mut seen = vec![false; source.dictionary.len()];
    let mut shown: Vec<usize> = Vec::new();
    for row in rendering.rows() {
        let code = source.codes[row] as usize;
        if !std::mem::replace(&mut seen[code], true) {
            shown.push(row);
        }
    }
    if (shown.len() as f64) < NEAR_UNIQUE_SHARE * rows as f64 {
        return None;
    }
    let texts: rustc_hash::FxHashSet<&str> = shown
        .iter()
        .map(|&row| rendering.cell(row, column))
        .collect();
    let distinct = texts.len();
    (distinct as f64 >= NEAR_UNIQUE_SHARE * rows as f64).then(|| {
        Warning::new(
            "near_unique_mask",
            Some(rendering.header()[column]),
            format!(
                "the masked column shows {distinct} distinct texts for {rows} published records: the \
                 characters it keeps single records out; keep fewer characters, or publish a \
                 pseudonym or nothing"
            ),
        )
    })
}

/// The classification utility the spec asked for could not be computed (`reason` names counts only).
pub fn classification_skipped(column: &str, reason: &str) -> Warning {
    Warning::new(
        "classification_skipped",
        Some(column),
        format!("the classification utility was not computed: {reason}"),
    )
}

fn near_unique(column: &str, distinct: usize, rows: usize) -> Warning {
    Warning::new(
        "near_unique_column",
        Some(column),
        format!(
            "{distinct} distinct values in {rows} published records, published unchanged: a value this \
             rare can single out a person; declare the column identifying (removed) or a \
             quasi-identifier"
        ),
    )
}

fn marker_in_input(column: &str, count: usize) -> Warning {
    Warning::new(
        "suppression_marker_in_input",
        Some(column),
        format!(
            "{count} input records hold * in this quasi-identifier; in the output they cannot be told \
             from suppressed or fully generalized cells"
        ),
    )
}

/// `repeated_hierarchy_rows`: one warning per column whose hierarchy listed an original value on more
/// than one (identical) row, counted once here; ARX counts every row, so measures that weigh hierarchy
/// leaves (loss, non-uniform entropy) differ from its figures.
pub fn repeated_hierarchy_rows(columns: &[(String, usize)]) -> Vec<Warning> {
    columns
        .iter()
        .map(|(column, repeated)| {
            Warning::new(
                "repeated_hierarchy_rows",
                Some(column),
                format!(
                    "the hierarchy repeats {repeated} row(s) of an original value already listed; each \
                     value counts once here, while ARX counts every row, so loss figures compared with \
                     ARX's differ: remove the repeated rows"
                ),
            )
        })
        .collect()
}

/// A differentially private job's quasi-identifiers whose hierarchy was built from the data's own
/// values (a builder, or the automatic numeric ranges): the guarantee assumes hierarchies fixed
/// independently of the data.
pub fn hierarchies_from_data(columns: &[String]) -> Vec<Warning> {
    columns
        .iter()
        .map(|column| {
            Warning::new(
                "hierarchy_from_data",
                Some(column),
                "the hierarchy was built from the data's own values (its ranges or leaves depend on \
                 which records the table holds), which the differential-privacy guarantee does not \
                 cover: give a hierarchy fixed in advance (a file or inline levels over every possible \
                 value)"
                    .to_string(),
            )
        })
        .collect()
}

/// The warnings the input alone shows, before any run: columns published unchanged (sensitive and
/// insensitive) that are near-unique over all records, and quasi-identifiers whose input holds `*`.
/// The run checks the published records again, which suppression may change either way.
pub fn input_warnings(table: &Table, spec: &JobSpec) -> Vec<Warning> {
    let rows = table.row_count();
    let mut warnings = Vec::new();
    for column in table.columns() {
        let Some(attribute) = spec.attributes.get(&column.name) else {
            continue;
        };
        match attribute.role {
            Role::Sensitive | Role::Insensitive => {
                let distinct = column.dictionary.len();
                if rows >= NEAR_UNIQUE_MIN_RECORDS
                    && distinct as f64 >= NEAR_UNIQUE_SHARE * rows as f64
                {
                    warnings.push(near_unique(&column.name, distinct, rows));
                }
            }
            Role::QuasiIdentifier => {
                if let Some(code) = column.dictionary.code(SUPPRESSED) {
                    let count = column.codes.iter().filter(|&&c| c == code).count();
                    warnings.push(marker_in_input(&column.name, count));
                }
            }
            Role::Identifying => {}
        }
    }
    warnings
}

/// The error of a strict job with `warnings` (`Ok` without any): one `strict_warnings` problem per
/// warning, pointing at its column's attribute when it has one, else at `/strict`.
pub fn refuse(warnings: &[Warning]) -> Result<(), SpecError> {
    let mut problems = Problems::new();
    for warning in warnings {
        let pointer = match &warning.column {
            Some(column) => format!("/attributes/{}", pointer_segment(column)),
            None => "/strict".to_string(),
        };
        problems.push(SpecError::new(
            pointer,
            ErrorCode::StrictWarnings,
            format!("strict: {} ({})", warning.message, warning.code),
        ));
    }
    problems.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::render::OutputColumn;

    /// 40 records: `id` unique, `sex` generalized at `level` (0: as is, 1: `*`), `flag` with two values.
    fn run(level: usize, suppressed: &[bool], requested_k: u64, achieved_k: u64) -> Findings {
        let values: Vec<Vec<String>> = (0..40)
            .map(|i| {
                vec![
                    format!("r{i}"),
                    if i % 2 == 0 { "M" } else { "F" }.to_string(),
                    if i < 3 { "*" } else { "x" }.to_string(),
                ]
            })
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&["id", "sex", "flag"], &rows);
        let sex = GeneralizationMap::bind(
            Hierarchy::from_rows(&[vec!["M", "*"], vec!["F", "*"]]).unwrap(),
            table.column(1),
        )
        .unwrap();
        let flag = GeneralizationMap::bind(
            Hierarchy::from_rows(&[vec!["x", "*"], vec!["*", "*"]]).unwrap(),
            table.column(2),
        )
        .unwrap();
        let rendering = Rendering::new(
            vec![
                OutputColumn::Verbatim(table.column(0)),
                OutputColumn::Generalized {
                    column: table.column(1),
                    hierarchy: &sex,
                    level,
                },
                OutputColumn::Generalized {
                    column: table.column(2),
                    hierarchy: &flag,
                    level,
                },
            ],
            suppressed,
            false,
        );
        check(&rendering, suppressed, requested_k, achieved_k)
    }

    fn codes(findings: &Findings) -> Vec<(&str, Option<&str>)> {
        findings
            .warnings
            .iter()
            .map(|w| (w.code, w.column.as_deref()))
            .collect()
    }

    #[test]
    fn each_check_fires_on_its_case_only() {
        let none = vec![false; 40];
        // as is: the unique id, and the marker in flag's input
        let f = run(0, &none, 2, 2);
        assert_eq!(
            codes(&f),
            [
                ("near_unique_column", Some("id")),
                ("suppression_marker_in_input", Some("flag"))
            ]
        );
        assert_eq!(f.fully_generalized_records, 0);
        assert!(f.warnings[1].message.starts_with("3 input records"));
        // everything generalized: both columns, every record, and k far above the request
        let f = run(1, &none, 2, 40);
        assert_eq!(
            codes(&f),
            [
                ("near_unique_column", Some("id")),
                ("fully_generalized", Some("sex")),
                ("fully_generalized", Some("flag")),
                ("records_fully_generalized", None),
                ("over_generalized", None),
                ("suppression_marker_in_input", Some("flag")),
            ]
        );
        assert_eq!(f.fully_generalized_records, 40);
        // most records suppressed; the published rest is not all `*`
        let most: Vec<bool> = (0..40).map(|i| i < 30).collect();
        let f = run(0, &most, 1, 1);
        assert!(codes(&f).contains(&("most_records_suppressed", None)));
        assert!(!codes(&f).iter().any(|(c, _)| *c == "fully_generalized"));
        // no message carries a value of the data
        for w in run(1, &most, 2, 40).warnings {
            for value in ["r1", "r39"] {
                assert!(!w.message.contains(value), "{}", w.message);
            }
        }
    }

    #[test]
    fn the_input_shows_near_unique_columns_and_markers_before_a_run() {
        let values: Vec<Vec<String>> = (0..40)
            .map(|i| {
                vec![
                    format!("r{i}"),
                    if i < 3 { "*" } else { "x" }.to_string(),
                    format!("n{}", i % 3),
                ]
            })
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&["id", "flag", "note"], &rows);
        let spec = |id_role: &str| {
            JobSpec::from_json(
                format!(
                    r#"{{"attributes": {{"id": {{"role": "{id_role}"}},
                        "flag": {{"role": "quasi_identifier", "hierarchy": {{"levels": [["x", "*"], ["*", "*"]]}}}},
                        "note": {{"role": "insensitive"}}}},
                        "privacy_models": [{{"type": "k_anonymity", "k": 2}}], "strict": true}}"#
                )
                .as_bytes(),
            )
            .unwrap()
        };
        let found = input_warnings(&table, &spec("insensitive"));
        let listed: Vec<(&str, Option<&str>)> = found
            .iter()
            .map(|w| (w.code, w.column.as_deref()))
            .collect();
        assert_eq!(
            listed,
            [
                ("near_unique_column", Some("id")),
                ("suppression_marker_in_input", Some("flag"))
            ]
        );
        // an identifying column is removed: nothing to warn about
        assert_eq!(input_warnings(&table, &spec("identifying")).len(), 1);

        let e = refuse(&found).unwrap_err();
        assert_eq!(e.code, ErrorCode::StrictWarnings);
        assert_eq!(e.pointer, "/attributes/id");
        let all: Vec<&SpecError> = e.all().collect();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].pointer, "/attributes/flag");
        assert!(all[1].message.contains("suppression_marker_in_input"));
        assert!(refuse(&[]).is_ok());
        let general = [Warning::new("over_generalized", None, "m".into())];
        assert_eq!(refuse(&general).unwrap_err().pointer, "/strict");
        // prepare refuses a strict spec the input already warns about, and only a strict one
        let no_files =
            |_: &crate::domain::spec::HierarchySpec| -> Result<crate::domain::Resolved, String> {
                Err("inline only".into())
            };
        let e = crate::domain::prepare(&table, &spec("insensitive"), &no_files).unwrap_err();
        assert_eq!(
            (e.code, e.pointer.as_str()),
            (ErrorCode::StrictWarnings, "/attributes/id")
        );
        let mut lenient = spec("insensitive");
        lenient.strict = false;
        assert!(crate::domain::prepare(&table, &lenient, &no_files).is_ok());
    }

    #[test]
    fn repeated_hierarchy_rows_are_reported_per_column() {
        let table = Table::from_rows(
            &["age", "sex"],
            &[
                vec!["30", "F"],
                vec!["30", "M"],
                vec!["40", "F"],
                vec!["40", "M"],
            ],
        );
        let spec = JobSpec::from_json(
            br#"{"attributes": {
                "age": {"role": "quasi_identifier",
                        "hierarchy": {"levels": [["30", "*"], ["40", "*"], ["30", "*"], ["30", "*"]]}},
                "sex": {"role": "quasi_identifier", "hierarchy": {"levels": [["F", "*"], ["M", "*"]]}}},
              "privacy_models": [{"type": "k_anonymity", "k": 2}]}"#,
        )
        .unwrap();
        let no_files =
            |_: &crate::domain::spec::HierarchySpec| -> Result<crate::domain::Resolved, String> {
                Err("inline only".into())
            };
        let completed =
            crate::domain::run::run_job(&table, &spec, &no_files, &crate::core::control::NoControl)
                .unwrap();
        let report = completed.report();
        let repeated: Vec<&Warning> = report
            .warnings
            .iter()
            .filter(|w| w.code == "repeated_hierarchy_rows")
            .collect();
        assert_eq!(repeated.len(), 1, "{:?}", report.warnings);
        assert_eq!(repeated[0].column.as_deref(), Some("age"));
        assert!(repeated[0].message.contains("repeats 2 row(s)"));
        assert!(!repeated[0].message.contains("30"));
    }
}
