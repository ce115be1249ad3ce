//! What describes a job rather than its run: the display `name` and free `labels` of a job request
//! (taken out of the request before its spec is parsed) and the summary a job list shows: what the job
//! asks for (from its spec, at submission) and what it achieved (from its report, when it succeeded).

use serde_json::{json, Map, Value};

use super::ApiError;
use crate::domain::spec::{HierarchySpec, SpecError};
use crate::domain::JobSpec;
use crate::error_code::ErrorCode;
use crate::store::Job;

/// Most labels on one job.
pub const MAX_LABELS: usize = 20;

/// Longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 64;

/// Longest job name, in characters.
pub const MAX_JOB_NAME_CHARS: usize = 200;

/// The name and labels of a job request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobMeta {
    /// Display name.
    pub name: Option<String>,
    /// Distinct labels, in the request's order.
    pub labels: Vec<String>,
    /// The callback URL (`callback.url`), not yet checked against the server's allowlist.
    pub callback_url: Option<String>,
}

/// Removes `name`, `labels` and `callback` from a job request and checks them: a name is a string of at most
/// [`MAX_JOB_NAME_CHARS`] characters without control characters; labels are at most [`MAX_LABELS`]
/// strings, each a valid label ([`check_label`]). Errors point at the field and echo nothing.
pub fn take_meta(object: &mut Map<String, Value>) -> Result<JobMeta, ApiError> {
    let invalid = |pointer: String, message: String| {
        ApiError::from(SpecError::new(pointer, ErrorCode::InvalidSpec, message))
    };
    let name = match object.remove("name") {
        None => None,
        Some(Value::String(name)) => {
            if name.is_empty() || name.chars().count() > MAX_JOB_NAME_CHARS {
                return Err(invalid(
                    "/name".into(),
                    format!("name has 1 to {MAX_JOB_NAME_CHARS} characters"),
                ));
            }
            if name.chars().any(char::is_control) {
                return Err(invalid(
                    "/name".into(),
                    "name may not contain control characters".into(),
                ));
            }
            Some(name)
        }
        Some(_) => return Err(invalid("/name".into(), "name must be a string".into())),
    };
    let labels = match object.remove("labels") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            if items.len() > MAX_LABELS {
                return Err(invalid(
                    "/labels".into(),
                    format!("a job has at most {MAX_LABELS} labels"),
                ));
            }
            let mut labels: Vec<String> = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let Value::String(label) = item else {
                    return Err(invalid(
                        format!("/labels/{i}"),
                        "a label is a string".into(),
                    ));
                };
                check_label(&label).map_err(|m| invalid(format!("/labels/{i}"), m))?;
                if !labels.contains(&label) {
                    labels.push(label);
                }
            }
            labels
        }
        Some(_) => {
            return Err(invalid(
                "/labels".into(),
                "labels is an array of strings".into(),
            ))
        }
    };
    let callback_url = match object.remove("callback") {
        None | Some(Value::Null) => None,
        Some(Value::Object(mut callback)) => {
            let url = match callback.remove("url") {
                Some(Value::String(url)) => url,
                _ => {
                    return Err(invalid(
                        "/callback/url".into(),
                        "callback.url is a string".into(),
                    ))
                }
            };
            if let Some(other) = callback.keys().next() {
                return Err(invalid(
                    format!("/callback/{}", crate::domain::spec::pointer_segment(other)),
                    "callback has only url".into(),
                ));
            }
            Some(url)
        }
        Some(_) => {
            return Err(invalid(
                "/callback".into(),
                "callback is an object with a url".into(),
            ))
        }
    };
    Ok(JobMeta {
        name,
        labels,
        callback_url,
    })
}

/// A label has 1 to [`MAX_LABEL_CHARS`] characters among ASCII letters, digits and `-_.:/=`
/// (e.g. `study=cardio-2026`).
pub fn check_label(label: &str) -> Result<(), String> {
    let valid = !label.is_empty()
        && label.chars().count() <= MAX_LABEL_CHARS
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/' | '='));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "a label has 1 to {MAX_LABEL_CHARS} characters among ASCII letters, digits and -_.:/="
        ))
    }
}

/// The ids of the stored hierarchies a spec references (malformed ids are left to validation).
pub fn referenced_hierarchies(spec: &JobSpec) -> Vec<uuid::Uuid> {
    let mut ids: Vec<uuid::Uuid> = spec
        .attributes
        .values()
        .filter_map(|a| match &a.hierarchy {
            Some(HierarchySpec::Id { id }) => uuid::Uuid::try_parse(id).ok(),
            _ => None,
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// What a job asks for, from its spec document: the privacy models' types, the k of k-anonymity
/// (or of a highest-risk threshold) when one is asked for, and the algorithm (`optimal` when absent).
pub fn summary_json(spec: &Map<String, Value>) -> String {
    let models: Vec<&str> = spec
        .get("privacy_models")
        .and_then(Value::as_array)
        .map(|models| {
            models
                .iter()
                .filter_map(|m| m.get("type").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let k = spec
        .get("privacy_models")
        .and_then(Value::as_array)
        .and_then(|models| {
            models
                .iter()
                .find(|m| m.get("type").and_then(Value::as_str) == Some("k_anonymity"))
        })
        .and_then(|m| m.get("k"))
        .and_then(Value::as_u64)
        .or_else(|| highest_risk_k(spec));
    let algorithm = spec
        .get("algorithm")
        .and_then(|a| a.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("optimal");
    json!({"models": models, "k": k, "algorithm": algorithm}).to_string()
}

/// The `summary` of a job view: dataset name, models, k and algorithm asked for, and once it
/// succeeded the records, achieved k and suppressed records; the duration once it finished.
pub fn summary(job: &Job) -> Value {
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .unwrap_or(Value::Null)
    };
    let asked = parse(&job.summary_json);
    let outcome = parse(&job.outcome_json);
    let field = |doc: &Value, key: &str| doc.get(key).cloned().unwrap_or(Value::Null);
    let duration_ms = match (job.started_at, job.finished_at) {
        (Some(start), Some(end)) => json!((end - start).max(0)),
        _ => Value::Null,
    };
    json!({
        "dataset_name": job.dataset_name,
        "models": field(&asked, "models"),
        "k": field(&asked, "k"),
        "algorithm": field(&asked, "algorithm"),
        "records": field(&outcome, "records"),
        "achieved_k": field(&outcome, "achieved_k"),
        "suppressed_records": field(&outcome, "suppressed_records"),
        "duration_ms": duration_ms,
    })
}

/// The warnings of a succeeded job (empty before it succeeds).
pub fn warnings(job: &Job) -> Value {
    job.outcome_json
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|o| o.get("warnings").cloned())
        .unwrap_or_else(|| json!([]))
}

/// The labels of a job, as stored.
pub fn labels(job: &Job) -> Value {
    serde_json::from_str(&job.labels_json).unwrap_or_else(|_| json!([]))
}

/// The k of a spec's `highest_risk` model (the smallest k with 1 / k ≤ its threshold), for job lists.
fn highest_risk_k(spec: &Map<String, Value>) -> Option<u64> {
    spec.get("privacy_models")?
        .as_array()?
        .iter()
        .find(|m| m.get("type").and_then(Value::as_str) == Some("highest_risk"))?
        .get("threshold")?
        .as_f64()
        .and_then(crate::core::privacy::HighestRisk::new)
        .map(|m| m.k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(body: Value) -> Result<JobMeta, ApiError> {
        let Value::Object(mut object) = body else {
            unreachable!()
        };
        take_meta(&mut object)
    }

    #[test]
    fn the_summary_gives_the_k_of_k_anonymity_or_of_a_highest_risk() {
        let summary = |spec: Value| -> Value {
            let Value::Object(spec) = spec else {
                unreachable!()
            };
            serde_json::from_str(&summary_json(&spec)).unwrap()
        };
        let risk = summary(json!({"privacy_models": [{"type": "highest_risk", "threshold": 0.3}]}));
        assert_eq!(risk["k"], 4);
        let both = summary(json!({"privacy_models": [
            {"type": "highest_risk", "threshold": 0.3}, {"type": "k_anonymity", "k": 7}]}));
        assert_eq!(both["k"], 7);
    }

    #[test]
    fn names_and_labels_are_taken_and_checked() {
        let meta =
            take(json!({"name": "cardio export", "labels": ["study=cardio", "q3", "q3"]})).unwrap();
        assert_eq!(meta.name.as_deref(), Some("cardio export"));
        assert_eq!(meta.labels, vec!["study=cardio", "q3"]);
        assert_eq!(take(json!({})).unwrap(), JobMeta::default());
        for (body, pointer) in [
            (json!({"name": 5}), "/name"),
            (json!({"name": ""}), "/name"),
            (json!({"name": "a\nb"}), "/name"),
            (json!({"labels": "x"}), "/labels"),
            (json!({"labels": ["ok", 5]}), "/labels/1"),
            (json!({"labels": ["secret value"]}), "/labels/0"),
            (json!({"labels": vec!["a"; 21]}), "/labels"),
        ] {
            let e = take(body).unwrap_err();
            assert_eq!(e.pointer(), Some(pointer));
            assert!(!e.detail().contains("secret"));
        }
    }

    #[test]
    fn the_summary_reads_models_k_and_algorithm() {
        let Value::Object(spec) = json!({"privacy_models": [{"type": "k_anonymity", "k": 5},
            {"type": "distinct_l_diversity", "column": "d", "l": 2}], "algorithm": {"type": "mondrian"}})
        else {
            unreachable!()
        };
        let summary: Value = serde_json::from_str(&summary_json(&spec)).unwrap();
        assert_eq!(
            summary,
            json!({"models": ["k_anonymity", "distinct_l_diversity"], "k": 5, "algorithm": "mondrian"})
        );
        let summary: Value = serde_json::from_str(&summary_json(&Map::new())).unwrap();
        assert_eq!(summary["algorithm"], "optimal");
        assert_eq!(summary["k"], Value::Null);
    }
}
