//! The report of a finished run, as the CLI writes it and the service serves it.

use serde::Serialize;

use crate::core::engine::{ClassStatistics, Outcome};
use crate::core::local::LocalMetrics;
use crate::core::loss::MetricValues;
use crate::core::measures::LossMeasures;

use crate::domain::analysis::achieved::Achieved;
use crate::domain::analysis::candidates::CandidatesReport;
use crate::domain::analysis::risk::RiskReport;
use crate::domain::analysis::warnings::Warning;

/// What a run did, without any cell value. A full-domain run carries `transformation`, `metric`,
/// `loss`, `metrics` and `search`; a local recoding carries `recoding` instead.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Records in the input.
    pub records: u64,
    /// Records in the output (suppressed ones excluded when removed).
    pub published_records: u64,
    /// Chosen level per quasi-identifier, in lattice order (full-domain runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transformation: Option<serde_json::Map<String, serde_json::Value>>,
    /// Records suppressed.
    pub suppressed_records: u64,
    /// Most records the limit allowed to suppress (local recodings: the records they suppressed).
    pub max_suppressed_records: u64,
    /// Whether suppressed records were removed (else masked with `*`).
    pub suppressed_records_removed: bool,
    /// The privacy models, described.
    pub privacy_models: Vec<String>,
    /// The metric the search minimised (full-domain runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<&'static str>,
    /// Its value (full-domain runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Every metric at the chosen transformation (full-domain runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricValues>,
    /// Published equivalence classes.
    pub equivalence_classes: ClassStatistics,
    /// How the search went (full-domain runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchReport>,
    /// The best transformations for comparison, when the spec asks for `candidates` (full-domain runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<CandidatesReport>,
    /// What the local recoding did (local recodings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recoding: Option<RecodingReport>,
    /// Hsu's (2008) information-loss measures of the published table.
    pub loss_measures: LossMeasures,
    /// Re-identification risk of the input and of the published table.
    pub risk: RiskReport,
    /// What the published table achieves: its smallest class and, per sensitive attribute, the
    /// l-diversity, t-closeness, δ-disclosure and β-likeness parameters it meets.
    pub achieved: Achieved,
    /// Records not suppressed yet `*` in every quasi-identifier (they read like suppressed records).
    pub fully_generalized_records: u64,
    /// What in the run is probably a mistake (see [`crate::domain::analysis::warnings`]).
    pub warnings: Vec<Warning>,
    /// The fragments of a fragmentation job (then the top-level risk, achieved privacy and loss
    /// measures are those of the fragment `fragmentation.reported_fragment`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragmentation: Option<Box<crate::domain::run::FragmentationSection>>,
    /// Classification utility, when the spec asks for it (`"utility"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<crate::domain::analysis::classification::ClassificationReport>,
    /// How the output keeps the spec's functional dependencies (Δ, instances kept, utility, violations),
    /// for every algorithm, when the spec names any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<crate::domain::analysis::dependencies::DependencyReport>,
    /// Every identifying column and what was published of it (`drop`: nothing), with the pseudonym
    /// key's fingerprint where one was used; absent when the spec declares no identifying column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<crate::domain::resolve::identifiers::IdentifierReport>,
    /// The guarantee of a differentially private job (SafePub): its parameters, the sample and that
    /// the output is randomized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differential_privacy: Option<crate::domain::run::private::DifferentialPrivacyReport>,
}

/// What a local recoding did.
#[derive(Debug, Clone, Serialize)]
pub struct RecodingReport {
    /// The algorithm.
    pub algorithm: &'static str,
    /// Groups published (each generalized on its own).
    pub groups: u64,
    /// The cell-level loss metrics.
    pub metrics: LocalMetrics,
    /// What the algorithm reports about itself.
    pub details: serde_json::Value,
    /// Engine time in milliseconds.
    pub elapsed_ms: f64,
}

/// Search statistics.
#[derive(Debug, Clone, Serialize)]
pub struct SearchReport {
    /// Algorithm that ran.
    pub algorithm: &'static str,
    /// Whether the result is guaranteed optimal for the metric.
    pub exact: bool,
    /// Distinct transformations grouped and checked.
    pub nodes_checked: u64,
    /// Transformations in the lattice.
    pub lattice_size: u64,
    /// Candidate solutions compared by the metric.
    pub candidates: u64,
    /// Whether predictive tagging pruned the lattice.
    pub pruning: bool,
    /// Engine time in milliseconds.
    pub elapsed_ms: f64,
}

/// The analyses of the published table a report carries beside the search's own figures.
#[derive(Debug, Clone)]
pub struct Analyses {
    /// Hsu's information-loss measures.
    pub loss_measures: LossMeasures,
    /// Re-identification risk before and after.
    pub risk: RiskReport,
    /// The privacy the published table achieves.
    pub achieved: Achieved,
}

impl Report {
    /// Builds the report of `outcome`; `names` are the quasi-identifiers in lattice order.
    pub fn new(
        outcome: &Outcome,
        names: &[&str],
        models: Vec<String>,
        removed: bool,
        elapsed_ms: f64,
        analyses: Analyses,
    ) -> Self {
        let Analyses {
            loss_measures,
            risk,
            achieved,
        } = analyses;
        let records = outcome.suppressed.len() as u64;
        Self {
            records,
            published_records: if removed {
                records - outcome.suppressed_records
            } else {
                records
            },
            transformation: Some(
                names
                    .iter()
                    .zip(&outcome.transformation)
                    .map(|(n, &l)| ((*n).to_string(), serde_json::Value::from(l)))
                    .collect(),
            ),
            suppressed_records: outcome.suppressed_records,
            max_suppressed_records: outcome.max_suppressed_records,
            suppressed_records_removed: removed,
            privacy_models: models,
            metric: Some(outcome.metric.name()),
            loss: Some(outcome.metrics.get(outcome.metric)),
            metrics: Some(outcome.metrics),
            equivalence_classes: outcome.classes,
            search: Some(SearchReport {
                algorithm: outcome.search.algorithm,
                exact: outcome.search.exact,
                nodes_checked: outcome.search.nodes_checked,
                lattice_size: outcome.search.lattice_size.min(u64::MAX as u128) as u64,
                candidates: outcome.search.candidates,
                pruning: outcome.search.pruning,
                elapsed_ms,
            }),
            candidates: None,
            recoding: None,
            loss_measures,
            risk,
            achieved,
            fully_generalized_records: 0,
            warnings: Vec::new(),
            fragmentation: None,
            classification: None,
            dependencies: None,
            identifiers: Vec::new(),
            differential_privacy: None,
        }
    }

    /// Builds the report of a local recoding: `suppressed` marks the suppressed records, `class_sizes`
    /// are the sizes of the published table's classes (groups that publish the same cells are one).
    pub fn local(
        suppressed: &[bool],
        class_sizes: &[u64],
        models: Vec<String>,
        removed: bool,
        recoding: RecodingReport,
        analyses: Analyses,
    ) -> Self {
        let Analyses {
            loss_measures,
            risk,
            achieved,
        } = analyses;
        let records = suppressed.len() as u64;
        let suppressed_records = suppressed.iter().filter(|&&s| s).count() as u64;
        let kept = records - suppressed_records;
        Self {
            records,
            published_records: if removed { kept } else { records },
            transformation: None,
            suppressed_records,
            max_suppressed_records: suppressed_records,
            suppressed_records_removed: removed,
            privacy_models: models,
            metric: None,
            loss: None,
            metrics: None,
            equivalence_classes: ClassStatistics {
                count: class_sizes.len() as u64,
                min: class_sizes.iter().copied().min().unwrap_or(0),
                max: class_sizes.iter().copied().max().unwrap_or(0),
                mean: if class_sizes.is_empty() {
                    0.0
                } else {
                    kept as f64 / class_sizes.len() as f64
                },
            },
            search: None,
            candidates: None,
            recoding: Some(recoding),
            loss_measures,
            risk,
            achieved,
            fully_generalized_records: 0,
            warnings: Vec::new(),
            fragmentation: None,
            classification: None,
            dependencies: None,
            identifiers: Vec::new(),
            differential_privacy: None,
        }
    }
}
