//! The sampling step of a differentially private job (SafePub, Bild, Kuhn & Prasser 2018, §3): every
//! record is drawn with probability β from the operating system's randomness, the engine then runs on
//! the drawn records only, with SafePub's search keyed by the same secret. The report's
//! `differential_privacy` section states the guarantee and that the output is randomized.

use serde::Serialize;

use crate::core::data::Table;
use crate::core::differential::mechanism::uniform;
use crate::core::differential::PrivateSearch;
use crate::core::error::CoreError;
use crate::core::secret_rng::{SecretKey, SecretStream};
use crate::domain::resolve::differential::PrivateJob;
use crate::domain::resolve::ResolvedJob;

/// The stream of the key that draws the sample (the search draws from stream 0).
const SAMPLING_STREAM: u64 = 1;

/// What the report says about a differentially private run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DifferentialPrivacyReport {
    /// The guarantee: the output is (ε, δ)-differentially private.
    pub epsilon: f64,
    /// The requested δ.
    pub delta: f64,
    /// The search's share of ε.
    pub search_budget: f64,
    /// The anonymization's share of ε, which fixes the sampling probability and k.
    pub anonymization_epsilon: f64,
    /// The probability with which each record was drawn.
    pub sampling_probability: f64,
    /// The smallest published class.
    pub k: u64,
    /// The δ that k gives (at most the requested δ).
    pub delta_at_k: f64,
    /// Pivots the search was allowed to draw.
    pub steps: u32,
    /// Records of the input.
    pub input_records: u64,
    /// Records drawn into the sample (the report's `records`).
    pub sampled_records: u64,
    /// Always true: another run publishes another sample and transformation.
    pub randomized: bool,
    /// Quasi-identifiers whose automatic hierarchy was ranged over the data's own values, which the
    /// guarantee does not cover (give hierarchies fixed in advance).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hierarchies_from_data: Vec<String>,
}

/// Draws the sample of a differentially private job with `key`, and gives the job's plan SafePub's
/// search keyed by it. Returns the sampled table and the report's section.
pub(super) fn draw_sample(
    table: &Table,
    job: &mut ResolvedJob,
    private: &PrivateJob,
    key: SecretKey,
) -> (Table, DifferentialPrivacyReport) {
    let settings = &private.settings;
    let mut stream = SecretStream::new(&key, SAMPLING_STREAM);
    let keep: Vec<bool> = (0..table.row_count())
        .map(|_| uniform(&mut stream) < settings.sampling_probability)
        .collect();
    let sample = table.keep_rows(&keep);
    let input_records = table.row_count() as u64;
    job.plan.private_search = Some(PrivateSearch {
        epsilon: settings.search_budget,
        steps: settings.steps,
        k: settings.k,
        input_rows: input_records,
        key,
    });
    let report = DifferentialPrivacyReport {
        epsilon: settings.epsilon,
        delta: settings.delta,
        search_budget: settings.search_budget,
        anonymization_epsilon: settings.epsilon - settings.search_budget,
        sampling_probability: settings.sampling_probability,
        k: settings.k,
        delta_at_k: settings.delta_at_k,
        steps: settings.steps,
        input_records,
        sampled_records: sample.row_count() as u64,
        randomized: true,
        hierarchies_from_data: private.hierarchies_from_data.clone(),
    };
    (sample, report)
}

/// Fails when the sample is too small for k (the engine would say so less clearly).
pub(super) fn check_sample(
    sample: &Table,
    report: &DifferentialPrivacyReport,
) -> Result<(), CoreError> {
    if (sample.row_count() as u64) < report.k {
        return Err(CoreError::TooFewRecords {
            model: format!(
                "({}, {})-differential privacy (a sample of {} of the {} records)",
                report.epsilon, report.delta, report.sampled_records, report.input_records
            ),
            needed: report.k,
            rows: sample.row_count() as u64,
        });
    }
    Ok(())
}
