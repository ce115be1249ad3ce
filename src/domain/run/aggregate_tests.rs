//! Aggregated quasi-identifiers of full-domain jobs through whole runs: the column shows each
//! published class's aggregate (suppressed records `*`), the classes are those of the other
//! quasi-identifiers, and the option is refused where it cannot apply.

use super::*;
use crate::codec::CsvOptions;
use crate::core::control::NoControl;
use crate::domain::prepare;
use crate::error_code::ErrorCode;

/// Seven records: sex and age; one man alone.
fn table() -> Table {
    let rows = [
        ["F", "20"],
        ["F", "30"],
        ["F", "40"],
        ["M", "50"],
        ["M", "70"],
        ["X", "99"],
        ["F", "50"],
    ];
    let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.to_vec()).collect();
    Table::from_rows(&["sex", "age"], &rows)
}

fn spec(aggregate: &str, extra: &str) -> JobSpec {
    let json = format!(
        r#"{{"attributes": {{
              "sex": {{"role": "quasi_identifier",
                       "hierarchy": {{"levels": [["F", "*"], ["M", "*"], ["X", "*"]]}}}},
              "age": {{"role": "quasi_identifier", "aggregate": "{aggregate}"}}}},
            "privacy_models": [{{"type": "k_anonymity", "k": 2}}],
            "suppression_limit": 0.2,
            "suppressed_records": "mask"{extra}}}"#
    );
    JobSpec::from_json(json.as_bytes()).unwrap()
}

fn published(spec: &JobSpec) -> Vec<String> {
    let table = table();
    let done = run_job(&table, spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    let mut bytes = Vec::new();
    done.write_csv(&mut bytes, &CsvOptions::default()).unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_record_of_a_class_shows_its_aggregate() {
    // sex stays (F: 4, M: 2; X alone is suppressed within 20 %): F ages 20, 30, 40, 50; M 50, 70
    assert_eq!(
        published(&spec("mean", "")),
        ["sex,age", "F,35", "F,35", "F,35", "M,60", "M,60", "*,*", "F,35"]
    );
    assert_eq!(
        published(&spec("interval", ""))[1..3],
        ["F,[20 .. 50]", "F,[20 .. 50]"]
    );
    assert_eq!(published(&spec("median", ""))[4], "M,50");
}

#[test]
fn refuses_aggregates_where_they_cannot_apply() {
    let problem = |spec: &JobSpec| {
        let e = prepare(&table(), spec, &|_| Err("inline only".into())).unwrap_err();
        (e.pointer.clone(), e.code)
    };
    let local = spec("mean", r#", "algorithm": {"type": "mondrian"}"#);
    let (pointer, code) = problem(&local);
    assert_eq!(
        (pointer.as_str(), code),
        ("/attributes/age/aggregate", ErrorCode::UnsupportedOption)
    );
    let rows: Vec<Vec<&str>> = vec![vec!["F", "old"], vec!["F", "young"]];
    let words = Table::from_rows(&["sex", "age"], &rows);
    let e = prepare(&words, &spec("mean", ""), &|_| Err("inline only".into())).unwrap_err();
    assert_eq!(
        (e.pointer.as_str(), e.code),
        ("/attributes/age/aggregate", ErrorCode::NotNumeric)
    );
    // the mode takes any values
    assert!(prepare(&words, &spec("mode", ""), &|_| Err("inline only".into())).is_ok());
}

/// A published table with an aggregated column reads back: its loss measures (over the other
/// quasi-identifiers) are the report's.
#[test]
fn the_published_table_assesses_to_the_report() {
    let table = table();
    let spec = spec("mean", "");
    let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
    let rows: Vec<Vec<String>> = published(&spec)[1..]
        .iter()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let out = super::model_tests::table_of(&["sex", "age"], &rows);
    let prepared = prepare(&table, &spec, &|_| Err("inline only".into())).unwrap();
    let assessed =
        crate::domain::analysis::published::assess_published(&table, &out, &prepared).unwrap();
    assert_eq!(assessed.loss_measures, done.report().loss_measures);
    assert_eq!(assessed.k, 2);
}
