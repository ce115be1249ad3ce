//! The report page's figures, read once from a job report (its JSON form, as the service stores it)
//! into rows that both a chart and its table show: re-identification risk before and after, records by
//! class size before and after, and the information lost per quasi-identifier. Missing sections give
//! empty rows and charts, never an error: the page shows what the report has.

use serde::Serialize;
use serde_json::Value;

use super::svg::{BarChart, Series};

/// Fill colour of the "before" bars (the input table).
pub const BEFORE: &str = "#b5472c";
/// Fill colour of the "after" bars (the published table).
pub const AFTER: &str = "#2b66a8";
/// Fill colour of the second series of the loss chart.
const SUPPRESSED: &str = "#6b6b6b";

/// The risk figures charted, as (label, JSON pointer inside a risk profile).
const RISK_FIGURES: [(&str, &str); 9] = [
    ("Prosecutor risk, highest", "/prosecutor/highest"),
    ("Prosecutor risk, average", "/prosecutor/average"),
    (
        "Records at risk (prosecutor)",
        "/prosecutor/records_at_risk",
    ),
    ("Journalist risk, highest", "/journalist/highest"),
    ("Journalist risk, average", "/journalist/average"),
    (
        "Records at risk (journalist)",
        "/journalist/records_at_risk",
    ),
    ("Marketer risk", "/marketer"),
    ("Sample uniques", "/sample_uniques"),
    (
        "Population uniques (estimate)",
        "/population_uniques/dankar/fraction",
    ),
];

/// One risk figure before and after (a share of records or a probability).
#[derive(Debug, Serialize)]
pub struct RiskRow {
    label: &'static str,
    before: Option<f64>,
    after: Option<f64>,
}

/// The risk figures of `report`, in [`RISK_FIGURES`] order.
pub fn risk_rows(report: &Value) -> Vec<RiskRow> {
    let figure = |side: &str, pointer: &str| {
        report
            .pointer(&format!("/risk/{side}{pointer}"))
            .and_then(Value::as_f64)
    };
    RISK_FIGURES
        .iter()
        .map(|&(label, pointer)| RiskRow {
            label,
            before: figure("before", pointer),
            after: figure("after", pointer),
        })
        .collect()
}

/// The chart of `rows`: risk before and after.
pub fn risk(rows: &[RiskRow]) -> String {
    BarChart {
        id: "risk-chart",
        title: "Re-identification risk before and after",
        description:
            "For each risk figure, the share before anonymization (input table) and after \
                      (published table); the same figures are in the table below.",
        categories: rows.iter().map(|r| r.label.to_string()).collect(),
        series: vec![
            Series {
                name: "before",
                color: BEFORE,
                values: rows.iter().map(|r| r.before).collect(),
            },
            Series {
                name: "after",
                color: AFTER,
                values: rows.iter().map(|r| r.after).collect(),
            },
        ],
    }
    .render()
}

/// The label of a class-size bin ("1", "3–4", "1000+").
fn bin_label(bin: &Value) -> String {
    let smallest = bin.get("smallest").and_then(Value::as_u64).unwrap_or(0);
    match bin.get("largest").and_then(Value::as_u64) {
        None => format!("{smallest}+"),
        Some(largest) if largest == smallest => smallest.to_string(),
        Some(largest) => format!("{smallest}–{largest}"),
    }
}

/// Classes and records of one class-size bin, before and after.
#[derive(Debug, Serialize)]
pub struct SizeRow {
    label: String,
    before_classes: Option<u64>,
    before_records: Option<u64>,
    after_classes: Option<u64>,
    after_records: Option<u64>,
}

/// The class-size bins of `report`'s risk profiles, before and after side by side.
pub fn size_rows(report: &Value) -> Vec<SizeRow> {
    let bins = |side: &str| -> &[Value] {
        report
            .pointer(&format!("/risk/{side}/class_sizes"))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    };
    let (before, after) = (bins("before"), bins("after"));
    let count =
        |bin: Option<&Value>, key: &str| bin.and_then(|b| b.get(key)).and_then(Value::as_u64);
    (0..before.len().max(after.len()))
        .map(|i| {
            let (b, a) = (before.get(i), after.get(i));
            SizeRow {
                label: bin_label(b.or(a).unwrap_or(&Value::Null)),
                before_classes: count(b, "classes"),
                before_records: count(b, "records"),
                after_classes: count(a, "classes"),
                after_records: count(a, "records"),
            }
        })
        .collect()
}

/// The chart of `rows`: the share of records in each class-size bin, before and after.
pub fn class_sizes(rows: &[SizeRow]) -> String {
    let shares = |records: &dyn Fn(&SizeRow) -> Option<u64>| -> Vec<Option<f64>> {
        let total: u64 = rows.iter().filter_map(records).sum();
        rows.iter()
            .map(|r| {
                records(r)
                    .filter(|_| total > 0)
                    .map(|n| n as f64 / total as f64)
            })
            .collect()
    };
    BarChart {
        id: "class-size-chart",
        title: "Records by equivalence class size",
        description:
            "For each range of class sizes, the share of records in classes of that size, \
                      before and after anonymization; small classes are the risky ones.",
        categories: rows.iter().map(|r| r.label.clone()).collect(),
        series: vec![
            Series {
                name: "before",
                color: BEFORE,
                values: shares(&|r| r.before_records),
            },
            Series {
                name: "after",
                color: AFTER,
                values: shares(&|r| r.after_records),
            },
        ],
    }
    .render()
}

/// The information lost per quasi-identifier, and the share of its cells suppressed whole.
pub fn loss(report: &Value) -> String {
    let attributes = report
        .pointer("/loss_measures/attributes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let records = report.get("records").and_then(Value::as_u64).unwrap_or(0);
    BarChart {
        id: "loss-chart",
        title: "Information loss per quasi-identifier",
        description:
            "For each quasi-identifier, the information lost (non-uniform entropy relative to \
                      suppressing the whole column) and the share of its cells shown as *.",
        categories: attributes
            .iter()
            .map(|a| {
                a.get("attribute")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            })
            .collect(),
        series: vec![
            Series {
                name: "information lost",
                color: AFTER,
                values: attributes
                    .iter()
                    .map(|a| a.get("information_loss").and_then(Value::as_f64))
                    .collect(),
            },
            Series {
                name: "cells suppressed",
                color: SUPPRESSED,
                values: attributes
                    .iter()
                    .map(|a| {
                        let redactions = a.get("redactions").and_then(Value::as_u64)?;
                        (records > 0).then(|| redactions as f64 / records as f64)
                    })
                    .collect(),
            },
        ],
    }
    .render()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bins_are_labelled_as_ranges() {
        assert_eq!(bin_label(&json!({"smallest": 1, "largest": 1})), "1");
        assert_eq!(bin_label(&json!({"smallest": 3, "largest": 4})), "3–4");
        assert_eq!(
            bin_label(&json!({"smallest": 1000, "largest": null})),
            "1000+"
        );
    }

    #[test]
    fn charts_read_the_report_and_survive_missing_sections() {
        let report = json!({
            "records": 10,
            "risk": {
                "before": {"prosecutor": {"highest": 1.0}, "class_sizes": [
                    {"smallest": 1, "largest": 1, "classes": 2, "records": 2},
                    {"smallest": 2, "largest": 2, "classes": 4, "records": 8}]},
                "after": {"prosecutor": {"highest": 0.5}, "class_sizes": [
                    {"smallest": 1, "largest": 1, "classes": 0, "records": 0},
                    {"smallest": 2, "largest": 2, "classes": 5, "records": 10}]}
            },
            "loss_measures": {"attributes": [
                {"attribute": "age", "information_loss": 0.5, "redactions": 3}]}
        });
        let risk = risk(&risk_rows(&report));
        assert!(risk.contains("100.0 %") && risk.contains("50.0 %") && risk.contains("n/a"));
        let sizes = class_sizes(&size_rows(&report));
        // before: 2 of 10 and 8 of 10; after: none and all
        for share in [">20.0 %<", ">80.0 %<", ">0.0 %<", ">100.0 %<"] {
            assert!(sizes.contains(share), "{share}");
        }
        // information lost 50 %, 3 of 10 cells suppressed
        let loss = loss(&report);
        assert!(loss.contains(">age<") && loss.contains(">50.0 %<") && loss.contains(">30.0 %<"));
        for empty in [
            super::risk(&risk_rows(&json!({}))),
            super::class_sizes(&size_rows(&json!({}))),
            super::loss(&json!({})),
        ] {
            assert!(empty.starts_with("<svg") && empty.ends_with("</svg>"));
        }
    }
}
