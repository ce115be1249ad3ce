//! The job spec's `"risk"` settings, validated into [`RiskSettings`], and the before/after risk
//! profiles of a run (`core::risk`): "before" groups the input by its original quasi-identifier
//! values; "after" groups the published records by their generalized values, suppressed records left
//! out as ARX does. Both are `O(records × quasi-identifiers)`.

use serde::Serialize;

use crate::core::data::{GeneralizationMap, Table};
use crate::core::measures::Classes;
use crate::core::risk::{ClassSizes, KeyColumn, RiskProfile, RiskSettings, DEFAULT_THRESHOLD};
use crate::error_code::ErrorCode;

use crate::domain::spec::{RiskSpec, SpecError};

/// The risk section of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiskReport {
    /// The input table, grouped by original quasi-identifier values.
    pub before: RiskProfile,
    /// The published table: classes of generalized values, suppressed records left out.
    pub after: RiskProfile,
}

/// Validates `spec` (found at `pointer`) for a table of `records` records. Defaults: threshold 0.2,
/// the table as its own population.
pub fn risk_settings(
    spec: &RiskSpec,
    records: u64,
    pointer: &str,
) -> Result<RiskSettings, SpecError> {
    let threshold = match spec.threshold {
        None => DEFAULT_THRESHOLD,
        Some(t) if t.is_finite() && t > 0.0 && t <= 1.0 => t,
        Some(_) => {
            return Err(SpecError::new(
                format!("{pointer}/threshold"),
                ErrorCode::InvalidThreshold,
                "the risk threshold is a probability in (0, 1]",
            ))
        }
    };
    let population_size = match (spec.population_size, spec.sampling_fraction) {
        (Some(_), Some(_)) => {
            return Err(SpecError::new(
                pointer,
                ErrorCode::ConflictingPopulation,
                "give population_size or sampling_fraction, not both",
            ))
        }
        (Some(size), None) if size < records => {
            return Err(SpecError::new(
                format!("{pointer}/population_size"),
                ErrorCode::PopulationTooSmall,
                format!(
                    "the population ({size} records) is smaller than the table ({records} records)"
                ),
            ))
        }
        (Some(size), None) => Some(size),
        (None, Some(f)) if f.is_finite() && f > 0.0 && f <= 1.0 => {
            let size = (records as f64 / f).round();
            if size > u64::MAX as f64 / 2.0 {
                return Err(SpecError::new(
                    format!("{pointer}/sampling_fraction"),
                    ErrorCode::InvalidSamplingFraction,
                    "the sampling fraction is too small",
                ));
            }
            Some((size as u64).max(records))
        }
        (None, Some(_)) => {
            return Err(SpecError::new(
                format!("{pointer}/sampling_fraction"),
                ErrorCode::InvalidSamplingFraction,
                "the sampling fraction is a number in (0, 1]",
            ))
        }
        (None, None) => None,
    };
    Ok(RiskSettings {
        threshold,
        population_size,
    })
}

/// Profiles of a run: `original` is the input's classes ([`super::loss_measures::original_classes`]),
/// `quasi_identifiers` are (column index, hierarchy) in lattice order, `transformation` the chosen
/// level of each, `suppressed` the suppression mask.
pub fn run_risk(
    table: &Table,
    original: &Classes,
    quasi_identifiers: &[(usize, GeneralizationMap)],
    transformation: &[u8],
    suppressed: &[bool],
    settings: &RiskSettings,
) -> RiskReport {
    let published: Vec<KeyColumn<'_>> = quasi_identifiers
        .iter()
        .zip(transformation)
        .map(|((c, map), &level)| KeyColumn {
            codes: &table.column(*c).codes,
            translate: Some(map.codes(level as usize)),
        })
        .collect();
    let after = ClassSizes::group(&published, table.row_count(), |r| !suppressed[r]);
    risk_report(original, &after, settings)
}

/// The risk profiles before (the original table's classes, `original`) and after (the published
/// classes' sizes, suppressed records left out).
pub fn risk_report(original: &Classes, after: &ClassSizes, settings: &RiskSettings) -> RiskReport {
    let before = ClassSizes::from_sizes(original.sizes.iter().copied());
    RiskReport {
        before: RiskProfile::new(&before, None, settings),
        after: RiskProfile::new(after, None, settings),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: &str, records: u64) -> Result<RiskSettings, (String, &'static str)> {
        let spec: RiskSpec = serde_json::from_str(json).unwrap();
        risk_settings(&spec, records, "/risk").map_err(|e| (e.pointer, e.code.as_str()))
    }

    #[test]
    fn defaults_and_population() {
        assert_eq!(settings("{}", 10), Ok(RiskSettings::default()));
        assert_eq!(
            settings(r#"{"sampling_fraction": 0.1, "threshold": 0.5}"#, 10),
            Ok(RiskSettings {
                threshold: 0.5,
                population_size: Some(100)
            })
        );
        assert_eq!(
            settings(r#"{"population_size": 10}"#, 10)
                .unwrap()
                .population_size,
            Some(10)
        );
    }

    #[test]
    fn rejects_bad_settings_with_pointers() {
        let e = |json: &str| settings(json, 10).unwrap_err();
        assert_eq!(
            e(r#"{"threshold": 0}"#),
            ("/risk/threshold".into(), "invalid_threshold")
        );
        assert_eq!(
            e(r#"{"threshold": 1.5}"#),
            ("/risk/threshold".into(), "invalid_threshold")
        );
        assert_eq!(
            e(r#"{"population_size": 9}"#),
            ("/risk/population_size".into(), "population_too_small")
        );
        assert_eq!(
            e(r#"{"sampling_fraction": 0}"#),
            (
                "/risk/sampling_fraction".into(),
                "invalid_sampling_fraction"
            )
        );
        assert_eq!(
            e(r#"{"sampling_fraction": 1.01}"#),
            (
                "/risk/sampling_fraction".into(),
                "invalid_sampling_fraction"
            )
        );
        assert_eq!(
            e(r#"{"sampling_fraction": 0.5, "population_size": 20}"#),
            ("/risk".into(), "conflicting_population")
        );
    }
}
