//! The job report as a page a privacy officer can read, sign and archive: one self-contained HTML file
//! (inline CSS and SVG charts, no script, font, image or link to fetch; a Content-Security-Policy that
//! forbids any), printable. It says what went in (provenance), what was done (the spec, the algorithm),
//! what came out (classes, suppression, generalization), the risk before and after, the utility cost,
//! and explains each measure in a glossary.
//!
//! The page is rendered from the report's JSON form (what the service stores and `--report` writes) with
//! the `minijinja` template engine (auto-escaping HTML; the template is compiled into the binary), so the
//! service and the CLI print the same page. It shows no cell value: only aggregates, column names and
//! the spec, whose inline hierarchies and value lists are summarized ([`redacted_spec`]).

pub mod charts;
pub mod svg;

use minijinja::value::{Serde, Value as TemplateValue};
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;
use serde_json::Value;

/// The template, compiled into the binary.
const TEMPLATE: &str = include_str!("report.html");

/// The Content-Security-Policy of the page: nothing may be fetched; only the inline style applies.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// Where the report's data came from and who ran the job.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// The service's (or CLI's) version.
    pub service_version: String,
    /// When the page was rendered (RFC 3339).
    pub generated_at: String,
    /// The input table.
    pub dataset: DatasetFacts,
    /// The job, for a report of the service (none for the CLI).
    pub job: Option<JobFacts>,
    /// The job spec as submitted (summarized by [`redacted_spec`] before it is shown).
    pub spec: Value,
}

/// The input table.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetFacts {
    /// The dataset's id (service) or none (CLI).
    pub id: Option<String>,
    /// Its name (service) or file name (CLI).
    pub name: String,
    /// Bytes of the CSV as received.
    pub byte_size: Option<u64>,
    /// SHA-256 of the CSV as received (lowercase hex).
    pub sha256: Option<String>,
    /// Records of the table.
    pub records: Option<u64>,
}

/// The job a service report belongs to.
#[derive(Debug, Clone, Serialize)]
pub struct JobFacts {
    /// Job id.
    pub id: String,
    /// The tenant that owns it.
    pub tenant: String,
    /// The job's name, when it has one.
    pub name: Option<String>,
    /// Submitted (RFC 3339).
    pub submitted_at: String,
    /// Started (RFC 3339).
    pub started_at: Option<String>,
    /// Finished (RFC 3339).
    pub finished_at: Option<String>,
}

/// Why the page could not be rendered (a defect of the template, never of the data).
#[derive(Debug, thiserror::Error)]
#[error("the report page could not be rendered: {0}")]
pub struct PageError(#[from] minijinja::Error);

/// Renders the page of `report` (a job report's JSON) with its provenance.
pub fn render(report: &Value, provenance: &Provenance) -> Result<String, PageError> {
    let mut env = Environment::new();
    // a missing section reads as undefined (and prints nothing) however deep the lookup goes
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    // the filters print digits, separators, units and "n/a" only: nothing to escape
    env.add_filter("pct", |v: TemplateValue| {
        TemplateValue::from_safe_string(svg::percent(f64::try_from(v).ok()))
    });
    env.add_filter("num", |v| TemplateValue::from_safe_string(format_number(v)));
    env.add_filter("bytes", |v| {
        TemplateValue::from_safe_string(format_bytes(v))
    });
    env.add_template("report.html", TEMPLATE)?;
    let template = env.get_template("report.html")?;
    let spec_text = serde_json::to_string_pretty(&redacted_spec(&provenance.spec))
        .unwrap_or_else(|_| "{}".to_string());
    // each chart and its table show the same rows, read from the report once
    let (risk_rows, size_rows) = (charts::risk_rows(report), charts::size_rows(report));
    let html = template.render(minijinja::context! {
        report => Serde(report),
        p => Serde(provenance),
        spec_text => spec_text,
        risk_chart => TemplateValue::from_safe_string(charts::risk(&risk_rows)),
        class_size_chart => TemplateValue::from_safe_string(charts::class_sizes(&size_rows)),
        risk_rows => Serde(risk_rows),
        size_rows => Serde(size_rows),
        before_color => charts::BEFORE,
        after_color => charts::AFTER,
        loss_chart => TemplateValue::from_safe_string(charts::loss(report)),
        csp => TemplateValue::from_safe_string(CONTENT_SECURITY_POLICY.to_string()),
    })?;
    Ok(html)
}

/// A number for people: integers with thin-space thousands separators, other numbers with four
/// significant digits (trailing zeros dropped); "n/a" for none.
fn format_number(value: TemplateValue) -> String {
    if value.is_none() || value.is_undefined() {
        return "n/a".to_string();
    }
    if let Ok(integer) = i64::try_from(value.clone()) {
        return group_thousands(integer);
    }
    match f64::try_from(value) {
        Ok(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 => group_thousands(x as i64),
        Ok(x) if x.is_finite() => {
            let magnitude = if x == 0.0 {
                0
            } else {
                x.abs().log10().floor() as i32
            };
            let decimals = (3 - magnitude).clamp(0, 6) as usize;
            if decimals == 0 && x.abs() < 1e15 {
                group_thousands(x.round() as i64)
            } else if decimals == 0 {
                format!("{x:.0}")
            } else {
                let text = format!("{x:.decimals$}");
                text.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        }
        Ok(x) => x.to_string(),
        Err(_) => "n/a".to_string(),
    }
}

fn group_thousands(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * 3 + 1);
    if value < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// A size in bytes for people ("820.3 MB (820 312 011 bytes)").
fn format_bytes(value: TemplateValue) -> String {
    let Ok(bytes) = u64::try_from(value) else {
        return "n/a".to_string();
    };
    let exact = group_thousands(bytes.min(i64::MAX as u64) as i64);
    let units = [(1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
    match units.iter().find(|(size, _)| bytes as f64 >= *size) {
        Some((size, unit)) => format!("{:.1} {unit} ({exact} bytes)", bytes as f64 / size),
        None => format!("{exact} bytes"),
    }
}

/// The spec with what may hold cell values summarized: inline ARX hierarchies (`arx`) and every list of
/// texts, wherever it is (hierarchy `levels`, value orders, the categories and don't-care values of
/// the sensitive-attribute models, missing-value markers), become a sentence saying how many entries
/// were left out. Lists of objects (the privacy models, builder intervals) are shown with their own
/// lists summarized; every other field (roles, models, numbers, paths and ids of hierarchies) is shown as
/// submitted.
pub fn redacted_spec(spec: &Value) -> Value {
    let mut spec = spec.clone();
    redact_values(&mut spec);
    spec
}

fn redact_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                match (key.as_str(), &*inner) {
                    ("arx", Value::String(text)) => {
                        *inner = Value::String(format!(
                            "(inline ARX hierarchy of {} lines, not shown)",
                            text.lines().count()
                        ))
                    }
                    (_, Value::Array(items)) if items.iter().any(is_text_list_item) => {
                        *inner = Value::String(format!(
                            "({} entries, not shown: they may hold values)",
                            items.len()
                        ))
                    }
                    _ => redact_values(inner),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_values),
        _ => {}
    }
}

/// An item that makes its list a list of values: a text, or a list holding text (a hierarchy row).
fn is_text_list_item(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Array(items) => items.iter().any(is_text_list_item),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
