//! One anonymization run on a loaded table, shared by the CLI and the service's workers: validate the spec
//! against the table, run the engine under the caller's [`Control`], and verify the output independently
//! of the engine before anything can be published. Writing the CSV and building the report are separate
//! steps, so each caller decides where the bytes go.

pub mod fragmented;
pub mod local;
pub mod local_output;
pub mod memory;
pub mod private;
pub mod progress;

use std::io::Write;
use std::time::Instant;

use crate::codec::{write_rendering, CodecError, CsvOptions};
use crate::core::control::{Control, Stage};
use crate::core::data::Table;
use crate::core::engine::{anonymize, Outcome};
use crate::core::error::CoreError;
use crate::core::identifiers::PseudonymKey;
use crate::core::local::local_metrics;
use crate::core::render::Rendering;

use crate::core::measures::CellColumn;
use crate::domain::analysis::candidates::candidates_report;
use crate::domain::analysis::classification::{
    self, ClassificationReport, ClassificationSkipped, OriginalTable, TrainingTable,
};
use crate::domain::analysis::dependencies::dependency_report;
use crate::domain::analysis::loss_measures::{full_domain_cells, loss_measures};
use crate::domain::analysis::warnings;
use crate::domain::report::{Analyses, RecodingReport};
use crate::domain::resolve::local::LocalPlan;
use crate::domain::resolve::{ResolvedJob, UtilityPlan};
use crate::domain::run::local::{run_local, secret_key, LocalRun};
use crate::domain::verify::fragments::verify_fragments;
use crate::domain::verify::{verify, verify_recoded, VerificationError};
use crate::domain::{
    prepare_with, HierarchyResolver, JobKind, JobSpec, Prepared, Report, SpecError,
};
pub use fragmented::FragmentationSection;
use fragmented::{run_fragmentation, FragmentedRun, Part};
use local_output::{coverage, Publication};
use private::{check_sample, draw_sample, DifferentialPrivacyReport};

/// Why a run produced nothing. Every variant's message is free of cell values.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The spec does not fit the table.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// The engine found no result, or was cancelled.
    #[error("{0}")]
    Core(#[from] CoreError),
    /// The output broke a privacy model (an engine bug); nothing may be published.
    #[error("{0}")]
    Verification(#[from] VerificationError),
}

/// A finished, verified run.
#[derive(Debug)]
pub struct Completed<'t> {
    source: Source<'t>,
    /// The guarantee of a differentially private run.
    private: Option<DifferentialPrivacyReport>,
    /// The prepared job with what the engine produced.
    prepared: Prepared<Anonymized>,
    elapsed_ms: f64,
}

/// The table a run anonymized: the caller's, or the random sample a differentially private job drew
/// from it.
#[derive(Debug)]
enum Source<'t> {
    Given(&'t Table),
    Sampled(Box<Table>),
}

impl Source<'_> {
    fn table(&self) -> &Table {
        match self {
            Source::Given(table) => table,
            Source::Sampled(table) => table,
        }
    }
}

/// What the engine produced.
#[derive(Debug)]
enum Anonymized {
    /// A full-domain transformation.
    FullDomain(Outcome),
    /// A local recoding and its published form.
    Local {
        /// The local part of the spec.
        plan: LocalPlan,
        /// The recoding.
        run: LocalRun,
        /// Its published form.
        publication: Publication,
    },
    /// The fragments of a fragmentation job, each a local recoding of its own table.
    Fragmented(Box<FragmentedRun>),
}

/// Validates `spec` against `table`, runs the engine and verifies its output (without a pseudonym key:
/// a spec that asks for pseudonyms fails with `pseudonym_key_missing`).
pub fn run_job<'t>(
    table: &'t Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
    control: &dyn Control,
) -> Result<Completed<'t>, RunError> {
    run_job_with_key(table, spec, resolve, control, None)
}

/// [`run_job`] with the key of the spec's pseudonyms.
pub fn run_job_with_key<'t>(
    table: &'t Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
    control: &dyn Control,
    key: Option<&PseudonymKey>,
) -> Result<Completed<'t>, RunError> {
    let inputs = JobInputs {
        pseudonym_key: key,
        population: None,
    };
    run_job_with(table, spec, resolve, control, inputs)
}

/// What a job may need besides its table and spec.
#[derive(Debug, Clone, Copy, Default)]
pub struct JobInputs<'a> {
    /// The key of the spec's pseudonyms.
    pub pseudonym_key: Option<&'a PseudonymKey>,
    /// The population table of `k_map` and `delta_presence`.
    pub population: Option<&'a Table>,
}

/// [`run_job`] with a pseudonym key and a population table.
pub fn run_job_with<'t>(
    table: &'t Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
    control: &dyn Control,
    inputs: JobInputs<'_>,
) -> Result<Completed<'t>, RunError> {
    let mut prepared = prepare_with(table, spec, resolve, inputs.population)?;
    prepared.operate(table, inputs.pseudonym_key)?;
    let (source, private) = match prepared.private.clone() {
        Some(job) => {
            let (sample, report) = draw_sample(table, &mut prepared, &job, secret_key()?);
            check_sample(&sample, &report)?;
            (Source::Sampled(Box::new(sample)), Some(report))
        }
        None => (Source::Given(table), None),
    };
    let table = source.table();
    let started = Instant::now();
    let prepared = prepared.then(|parts, kind| -> Result<Anonymized, RunError> {
        Ok(match kind {
            JobKind::FullDomain => {
                control.enter(Stage::Searching);
                Anonymized::FullDomain(anonymize(&parts.input(table), &parts.plan, control)?)
            }
            JobKind::Local(plan) => {
                control.enter(Stage::Recoding);
                let input = plan.input(table, parts.input(table).sensitive);
                let run = run_local(table, &input, &plan, &parts.plan.privacy_models, control)?;
                let publication =
                    Publication::new(table, &plan, &run.recoding, run.centroids.as_deref());
                Anonymized::Local {
                    plan,
                    run,
                    publication,
                }
            }
            JobKind::Fragmentation(plan) => {
                control.enter(Stage::Recoding);
                Anonymized::Fragmented(Box::new(run_fragmentation(
                    table, spec, &plan, resolve, control,
                )?))
            }
        })
    })?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut prepared = prepared;
    if let Anonymized::FullDomain(outcome) = &prepared.kind {
        prepared.job.aggregate(table, outcome);
    }
    let mut completed = Completed {
        source,
        private,
        prepared,
        elapsed_ms,
    };
    control.enter(Stage::Verifying);
    for view in completed.views() {
        view.verify()?;
    }
    if let Anonymized::Fragmented(run) = &completed.prepared.kind {
        let views = completed.views();
        let renderings: Vec<Rendering<'_>> = views.iter().map(View::rendering).collect();
        let features: Vec<&str> = run
            .report
            .relevance
            .iter()
            .map(|f| f.feature.as_str())
            .collect();
        let k = completed.prepared.requested_k();
        let hard = run.report.delta.is_none();
        let l = run.report.diversity.unwrap_or(1);
        let check = verify_fragments(&renderings, &run.report.class, &features, k, l, hard)?;
        drop(renderings);
        drop(views);
        if let Anonymized::Fragmented(run) = &mut completed.prepared.kind {
            run.report.smallest_join = check.smallest_join;
        }
    }
    Ok(completed)
}

/// One published table of a run and what it was made from: the whole run of a one-table job, or one
/// fragment of a fragmentation job.
#[derive(Debug, Clone, Copy)]
struct View<'a> {
    table: &'a Table,
    job: &'a ResolvedJob,
    kind: ViewKind<'a>,
    elapsed_ms: f64,
}

/// What one published table was made from.
#[derive(Debug, Clone, Copy)]
enum ViewKind<'a> {
    FullDomain(&'a Outcome),
    Local {
        plan: &'a LocalPlan,
        run: &'a LocalRun,
        publication: &'a Publication,
    },
}

impl<'a> View<'a> {
    /// The view of one fragment of a fragmentation job.
    fn part(part: &'a Part, elapsed_ms: f64) -> Self {
        View {
            table: &part.table,
            job: &part.job,
            kind: ViewKind::Local {
                plan: &part.plan,
                run: &part.run,
                publication: &part.publication,
            },
            elapsed_ms,
        }
    }
}

impl Completed<'_> {
    /// The engine's outcome of a full-domain run.
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.prepared.kind {
            Anonymized::FullDomain(outcome) => Some(outcome),
            _ => None,
        }
    }

    /// The recoding of a local run.
    pub fn recoding(&self) -> Option<&LocalRun> {
        match &self.prepared.kind {
            Anonymized::Local { run, .. } => Some(run),
            _ => None,
        }
    }

    /// Engine time in milliseconds.
    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// The number of published tables: the fragments of a fragmentation job, else 1.
    pub fn outputs(&self) -> usize {
        match &self.prepared.kind {
            Anonymized::Fragmented(run) => run.parts.len(),
            _ => 1,
        }
    }

    /// Whether the run published fragments (one table each) rather than one table.
    pub fn is_fragmented(&self) -> bool {
        matches!(self.prepared.kind, Anonymized::Fragmented(_))
    }

    /// The view of the one published table, or the fragments of a fragmentation job.
    fn single(&self) -> Result<View<'_>, &FragmentedRun> {
        let kind = match &self.prepared.kind {
            Anonymized::FullDomain(outcome) => ViewKind::FullDomain(outcome),
            Anonymized::Local {
                plan,
                run,
                publication,
            } => ViewKind::Local {
                plan,
                run,
                publication,
            },
            Anonymized::Fragmented(run) => return Err(run),
        };
        Ok(View {
            table: self.source.table(),
            job: &self.prepared.job,
            kind,
            elapsed_ms: self.elapsed_ms,
        })
    }

    /// Every published table's view, in output order.
    fn views(&self) -> Vec<View<'_>> {
        match self.single() {
            Ok(view) => vec![view],
            Err(run) => run
                .parts
                .iter()
                .map(|p| View::part(p, self.elapsed_ms))
                .collect(),
        }
    }

    /// Writes the anonymized table as CSV (header first). A fragmentation job publishes one table per
    /// fragment ([`Completed::write_output`]); this refuses it rather than write one of them.
    pub fn write_csv<W: Write>(&self, output: W, options: &CsvOptions) -> Result<(), CodecError> {
        if self.is_fragmented() {
            return Err(CodecError::Write(
                "a fragmentation job publishes one table per fragment".into(),
            ));
        }
        self.write_output(0, output, options)
    }

    /// Writes published table `index` (0-based, below [`Completed::outputs`]) as CSV, header first.
    pub fn write_output<W: Write>(
        &self,
        index: usize,
        output: W,
        options: &CsvOptions,
    ) -> Result<(), CodecError> {
        let views = self.views();
        let view = views
            .get(index)
            .ok_or_else(|| CodecError::Write(format!("the run has no output {}", index + 1)))?;
        write_rendering(output, &view.rendering(), options)
    }

    /// The run's report, with the loss measures of the published table and the guard rails' warnings
    /// (computed here, once per call). A fragmentation job reports each fragment and shows at the top
    /// level the figures of the fragment with the smallest classes (see [`fragmented`]).
    pub fn report(&self) -> Report {
        let mut report = match self.single() {
            Ok(view) => view.report(),
            Err(run) => {
                let reports: Vec<Report> = self.views().iter().map(View::report).collect();
                let mut combined =
                    combined_report(self.source.table(), run, reports, self.elapsed_ms);
                combined.identifiers = self.prepared.identifier_report().to_vec();
                combined
            }
        };
        if let Some(private) = &self.private {
            report.warnings.extend(warnings::hierarchies_from_data(
                &private.hierarchies_from_data,
            ));
            report.differential_privacy = Some(private.clone());
        }
        if let Some(utility) = self.prepared.utility {
            let class = &self.source.table().column(utility.class).name;
            match self.classification(utility) {
                Ok(section) => report.classification = Some(section),
                Err(skipped) => report
                    .warnings
                    .push(warnings::classification_skipped(class, &skipped.0)),
            }
        }
        report
    }

    /// The classification utility of the published table (or fragments) against the original records.
    fn classification(
        &self,
        utility: UtilityPlan,
    ) -> Result<ClassificationReport, ClassificationSkipped> {
        let table = self.source.table();
        let class = table.column(utility.class);
        let test = classification::split(table.row_count(), utility.test_share, utility.seed);
        // the features in the job's quasi-identifier order, with their places on a number line
        let (features, tables): (Vec<usize>, Vec<TrainingTable>) = match self.single() {
            Ok(view) => {
                let (columns, cells) = view.cells();
                let positions: Vec<Vec<f64>> = columns
                    .iter()
                    .map(|&c| classification::positions(table.column(c)))
                    .collect();
                let suppressed = view.suppressed();
                let removed = self.prepared.remove_suppressed;
                let training = TrainingTable {
                    features: (0..columns.len()).collect(),
                    values: cells
                        .iter()
                        .zip(&positions)
                        .map(|(cells, positions)| {
                            classification::published_values(cells, positions)
                        })
                        .collect(),
                    labels: class
                        .codes
                        .iter()
                        .enumerate()
                        .map(|(r, &c)| (!(removed && suppressed[r])).then_some(c))
                        .collect(),
                };
                (columns, vec![training])
            }
            Err(run) => {
                let features: Vec<usize> = run
                    .report
                    .relevance
                    .iter()
                    .filter_map(|f| table.column_index(&f.feature))
                    .collect();
                let tables = run
                    .parts
                    .iter()
                    .map(|part| {
                        let view = View::part(part, self.elapsed_ms);
                        let (columns, cells) = view.cells();
                        let indices: Vec<usize> = columns
                            .iter()
                            .filter_map(|&c| {
                                let name = &part.table.column(c).name;
                                features.iter().position(|&f| &table.column(f).name == name)
                            })
                            .collect();
                        let values = cells
                            .iter()
                            .zip(&columns)
                            .map(|(cells, &c)| {
                                classification::published_values(
                                    cells,
                                    &classification::positions(part.table.column(c)),
                                )
                            })
                            .collect();
                        TrainingTable {
                            features: indices,
                            values,
                            labels: part.labels.iter().map(|&c| Some(c)).collect(),
                        }
                    })
                    .collect();
                (features, tables)
            }
        };
        let original = OriginalTable {
            values: features
                .iter()
                .map(|&c| {
                    let column = table.column(c);
                    let positions = classification::positions(column);
                    column
                        .codes
                        .iter()
                        .map(|&code| positions[code as usize])
                        .collect()
                })
                .collect(),
            labels: &class.codes,
            classes: class.dictionary.len(),
        };
        classification::classification_utility(&class.name, utility.seed, &tables, &original, &test)
    }
}

/// The report of a fragmentation job from its fragments' reports: the fragment with the smallest
/// classes (then the highest risk) gives risk, achieved privacy and loss measures; classes, warnings and
/// the cell-level metrics cover every fragment.
fn combined_report(
    table: &Table,
    run: &FragmentedRun,
    reports: Vec<Report>,
    elapsed_ms: f64,
) -> Report {
    let worst = (0..reports.len())
        .min_by(|&a, &b| {
            let (x, y) = (&reports[a], &reports[b]);
            x.achieved
                .k
                .cmp(&y.achieved.k)
                .then(
                    y.risk
                        .after
                        .prosecutor
                        .highest
                        .total_cmp(&x.risk.after.prosecutor.highest),
                )
                .then(a.cmp(&b))
        })
        .unwrap_or(0);
    let mut section = run.report.clone();
    section.reported_fragment = worst + 1;
    let mut combined = reports[worst].clone();
    let records = table.row_count() as u64;
    let classes: Vec<&crate::core::engine::ClassStatistics> =
        reports.iter().map(|r| &r.equivalence_classes).collect();
    let count: u64 = classes.iter().map(|c| c.count).sum();
    combined.equivalence_classes = crate::core::engine::ClassStatistics {
        count,
        min: classes.iter().map(|c| c.min).min().unwrap_or(0),
        max: classes.iter().map(|c| c.max).max().unwrap_or(0),
        mean: if count == 0 {
            0.0
        } else {
            reports.iter().map(|r| r.published_records).sum::<u64>() as f64 / count as f64
        },
    };
    combined.suppressed_records = reports
        .iter()
        .map(|r| r.suppressed_records)
        .max()
        .unwrap_or(0);
    combined.max_suppressed_records = combined.suppressed_records;
    combined.fully_generalized_records = reports
        .iter()
        .map(|r| r.fully_generalized_records)
        .max()
        .unwrap_or(0);
    if let Some(recoding) = &mut combined.recoding {
        let features: usize = section.fragments.iter().map(|f| f.features.len()).sum();
        let mut ncp = 0.0;
        let mut nu_entropy = 0.0;
        let mut groups = 0;
        for report in &reports {
            if let Some(r) = &report.recoding {
                ncp += r.metrics.ncp;
                nu_entropy += r.metrics.nu_entropy;
                groups += r.groups;
            }
        }
        recoding.algorithm = "fragmentation";
        recoding.groups = groups;
        recoding.metrics.ncp = ncp;
        recoding.metrics.nu_entropy = nu_entropy;
        recoding.metrics.gcp = if records == 0 || features == 0 {
            0.0
        } else {
            ncp / (records as f64 * features as f64)
        };
        recoding.details = serde_json::json!({
            "anonymizer": section.anonymizer,
            "fragments": reports.iter().map(|r| r.recoding.as_ref().map(|x| x.details.clone())).collect::<Vec<_>>(),
        });
        recoding.elapsed_ms = elapsed_ms;
    }
    let mut warnings = Vec::new();
    for report in &reports {
        for warning in &report.warnings {
            if !warnings.contains(warning) {
                warnings.push(warning.clone());
            }
        }
    }
    combined.warnings = warnings;
    combined.fragmentation = Some(Box::new(FragmentationSection {
        summary: section,
        fragment_reports: reports,
    }));
    combined
}

impl View<'_> {
    fn rendering(&self) -> Rendering<'_> {
        match self.kind {
            ViewKind::Local {
                plan,
                run,
                publication,
            } => local_output::rendering(self.table, self.job, plan, &run.recoding, publication),
            ViewKind::FullDomain(outcome) => self.job.rendering(self.table, outcome),
        }
    }

    /// Checks the published table against the privacy models and, for a local recoding, that it lists
    /// every record once with cells that cover the original values.
    fn verify(&self) -> Result<(), VerificationError> {
        let rendering = self.rendering();
        let ViewKind::Local {
            plan,
            run,
            publication,
        } = self.kind
        else {
            return verify(&rendering, &self.job.requirements);
        };
        let expected = if self.job.remove_suppressed {
            publication.suppressed().iter().filter(|&&s| !s).count()
        } else {
            self.table.row_count()
        };
        // the class checks and the coverage checks side by side
        let (classes, recoded) = rayon::join(
            || verify(&rendering, &self.job.requirements),
            || {
                verify_recoded(
                    &rendering,
                    &coverage(self.table, self.job, plan, run.centroids.is_some()),
                    expected,
                    run.relocated_cells,
                )
            },
        );
        classes.and(recoded)
    }

    /// The quasi-identifiers' table columns and their published cells.
    fn cells(&self) -> (Vec<usize>, Vec<CellColumn<'_>>) {
        match self.kind {
            ViewKind::FullDomain(outcome) => {
                let columns = self
                    .job
                    .input(self.table)
                    .quasi_identifiers
                    .iter()
                    .filter_map(|q| self.table.column_index(q.name))
                    .collect();
                (columns, full_domain_cells(self.table, self.job, outcome))
            }
            ViewKind::Local { plan, run, .. } => {
                let columns = plan.attributes.iter().map(|(c, _)| *c).collect();
                (
                    columns,
                    local_output::cells(self.table, plan, &run.recoding),
                )
            }
        }
    }

    /// Whether each record is suppressed.
    fn suppressed(&self) -> &[bool] {
        match self.kind {
            ViewKind::FullDomain(outcome) => &outcome.suppressed,
            ViewKind::Local { publication, .. } => publication.suppressed(),
        }
    }

    fn report(&self) -> Report {
        let mut report = self.analysed_report();
        let suppressed = match self.kind {
            ViewKind::FullDomain(outcome) => &outcome.suppressed[..],
            ViewKind::Local { publication, .. } => publication.suppressed(),
        };
        let findings = warnings::check(
            &self.rendering(),
            suppressed,
            self.job.requested_k(),
            report.achieved.k,
        );
        report.fully_generalized_records = findings.fully_generalized_records;
        report.warnings = findings.warnings;
        report.identifiers = self.job.identifier_report().to_vec();
        report.warnings.extend(warnings::repeated_hierarchy_rows(
            &self.job.repeated_hierarchy_rows,
        ));
        if !self.job.dependencies.is_empty() {
            let (columns, cells) = self.cells();
            let removed = self.job.remove_suppressed;
            let published: Vec<bool> = suppressed.iter().map(|&s| !(removed && s)).collect();
            report.dependencies = Some(dependency_report(
                self.table,
                &self.job.dependencies,
                &columns,
                &cells,
                &published,
            ));
        }
        report
    }
    fn analysed_report(&self) -> Report {
        let models = self
            .job
            .plan
            .privacy_models
            .iter()
            .map(|m| m.describe())
            .collect();
        match self.kind {
            ViewKind::Local {
                plan,
                run,
                publication,
            } => {
                let input = plan.input(self.table, self.job.input(self.table).sensitive);
                Report::local(
                    publication.suppressed(),
                    publication.class_sizes(),
                    models,
                    self.job.remove_suppressed,
                    RecodingReport {
                        algorithm: plan.algorithm.name(),
                        groups: run.recoding.groups() as u64,
                        metrics: local_metrics(&input, &run.recoding, publication.class_sizes()),
                        details: run.details.clone(),
                        elapsed_ms: self.elapsed_ms,
                    },
                    local_output::analyses(self.table, self.job, plan, &run.recoding, publication),
                )
            }
            ViewKind::FullDomain(outcome) => {
                // the original table is grouped once for the loss measures and the risk before,
                // which then run side by side; the achieved privacy, which reads neither, runs beside
                // all three on the caller's rayon pool
                let ((loss_measures, risk), achieved) = rayon::join(
                    || {
                        let original = self.job.original_classes(self.table);
                        rayon::join(
                            || loss_measures(self.table, self.job, outcome, &original),
                            || self.job.risk_report(self.table, &original, outcome),
                        )
                    },
                    || self.job.achieved(self.table, outcome),
                );
                let names = self.job.quasi_identifier_names(self.table);
                let mut report = Report::new(
                    outcome,
                    &names,
                    models,
                    self.job.remove_suppressed,
                    self.elapsed_ms,
                    Analyses {
                        loss_measures,
                        risk,
                        achieved,
                    },
                );
                report.candidates = candidates_report(
                    outcome,
                    self.job.plan.candidates as u64,
                    &names,
                    &self.job.risk,
                );
                report
            }
        }
    }
}

#[cfg(test)]
mod aggregate_tests;
#[cfg(test)]
mod identifier_tests;
#[cfg(test)]
mod mdav_tests;
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod population_tests;
#[cfg(test)]
mod private_tests;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::core::control::NoControl;

    /// Zip codes 1301–1304 roll up to 130*; the diagnoses make the original classes homogeneous, so
    /// 2-diversity needs the generalization (or suppression).
    #[test]
    fn output_is_l_diverse() {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301", "flu"],
            vec!["1301", "flu"],
            vec!["1302", "cold"],
            vec!["1302", "cold"],
            vec!["1303", "flu"],
            vec!["1304", "cancer"],
        ];
        let table = Table::from_rows(&["zip", "diagnosis"], &rows);
        for model in [
            r#"{"type": "distinct_l_diversity", "attribute": "diagnosis", "l": 2}"#,
            r#"{"type": "entropy_l_diversity", "attribute": "diagnosis", "l": 2}"#,
            r#"{"type": "recursive_cl_diversity", "attribute": "diagnosis", "c": 3, "l": 2}"#,
            // each original class is at distance ≥ 1/2 from (flu 3, cold 2, cancer 1)
            r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2}"#,
            r#"{"type": "t_closeness", "attribute": "diagnosis", "t": 0.2, "distance": "ordered"}"#,
        ] {
            let json = format!(
                r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels":
                     [["1301", "130*", "*"], ["1302", "130*", "*"], ["1303", "130*", "*"], ["1304", "130*", "*"]]}}}},
                     "diagnosis": {{"role": "sensitive"}}}},
                   "privacy_models": [{{"type": "k_anonymity", "k": 2}}, {model}],
                   "algorithm": {{"type": "exhaustive"}}}}"#
            );
            let spec = JobSpec::from_json(json.as_bytes()).unwrap();
            let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
            assert_eq!(done.outcome().unwrap().transformation, [1], "{model}");
            let mut csv = Vec::new();
            done.write_csv(&mut csv, &CsvOptions::default()).unwrap();
            let text = String::from_utf8(csv).unwrap();
            let mut classes: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for line in text.lines().skip(1) {
                let (zip, diagnosis) = line.split_once(',').unwrap();
                classes.entry(zip).or_default().insert(diagnosis);
            }
            assert_eq!(classes.len(), 1);
            assert!(classes.values().all(|d| d.len() >= 2), "{text}");
            let report = done.report();
            assert!(report
                .privacy_models
                .iter()
                .any(|m| m.ends_with("on 'diagnosis'")));
            // the variance loss uses the t-closeness model's ground distance, else the equal one
            let ground = if model.contains("ordered") {
                "ordered"
            } else {
                "equal"
            };
            assert_eq!(report.loss_measures.variance[0].ground_distance, ground);
            // one published class of all six records: the table's own distribution
            let achieved = &report.achieved.sensitive_attributes["diagnosis"];
            assert_eq!(report.achieved.k, 6);
            assert_eq!(achieved.distinct_l, Some(3));
            assert_eq!(achieved.t_equal, Some(0.0));
            assert_eq!(achieved.beta, Some(0.0));
        }
    }

    /// Hsu (2008) §3.5–3.6 models on a small table: zip codes 1301–1304 roll up to 130*. The classes at
    /// level 0 are {cold, cancer}, {TB, hepatitis}, {AIDS, flu} and {cancer, TB}, with salaries
    /// {10, 11}, {20, 21}, {30, 31}, {40, 41}. Categories: Y = {cold, flu}, terminal = {cancer, AIDS},
    /// infectious = {AIDS, TB, hepatitis}.
    #[test]
    fn output_meets_categorical_and_linear_models() {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301", "cold", "10"],
            vec!["1301", "cancer", "11"],
            vec!["1302", "TB", "20"],
            vec!["1302", "hepatitis", "21"],
            vec!["1303", "AIDS", "30"],
            vec!["1303", "flu", "31"],
            vec!["1304", "cancer", "40"],
            vec!["1304", "TB", "41"],
        ];
        let table = Table::from_rows(&["zip", "diagnosis", "salary"], &rows);
        let categories = r#""categories": {"terminal": ["cancer", "AIDS"], "infectious": ["AIDS", "TB", "hepatitis"]},
                            "dont_care": ["cold", "flu"]"#;
        // (model, expected level): level 0 passes unless a class breaks the model
        let cases = [
            // {TB, hepatitis} is covered by infectious alone
            (format!(r#"{{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 2, {categories}}}"#), 1),
            (format!(r#"{{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 1, {categories}}}"#), 0),
            // {TB, hepatitis} is all infectious: density 1
            (format!(r#"{{"type": "d_density", "attribute": "diagnosis", "d": 0.5, {categories}}}"#), 1),
            (format!(r#"{{"type": "d_density", "attribute": "diagnosis", "d": 1, {categories}}}"#), 0),
            // only {cold, cancer} and {AIDS, flu} hold a don't-care value
            (r#"{"type": "mu_dilution", "attribute": "diagnosis", "mu": 0.1, "dont_care": ["cold", "flu"]}"#.to_string(), 1),
            (format!(r#"{{"type": "cl_categorical_recursive_diversity", "attribute": "diagnosis", "c": 1, "l": 1, {categories}}}"#), 1),
            // {cold, cancer} has one category (tail 0); all records: [4, 3] and 4 ≤ 1.5 · 3
            (format!(r#"{{"type": "cl_density", "attribute": "diagnosis", "c": 1.5, "l": 2, {categories}}}"#), 1),
            // salary ranges are 1 per class at level 0, 31 at level 1
            (r#"{"type": "delta_range", "attribute": "salary", "delta": 1}"#.to_string(), 0),
            (r#"{"type": "delta_range", "attribute": "salary", "delta": 5}"#.to_string(), 1),
            (r#"{"type": "lr_linear_diversity", "attribute": "salary", "l": 2, "r": 0.5}"#.to_string(), 0),
            (r#"{"type": "lr_linear_diversity", "attribute": "salary", "l": 3, "r": 9.5,
                 "class_function": {"type": "piecewise_linear", "points": [[0, 0], [100, 100]]}}"#.to_string(), 1),
        ];
        for (model, level) in cases {
            let json = format!(
                r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels":
                     [["1301", "130*", "*"], ["1302", "130*", "*"], ["1303", "130*", "*"], ["1304", "130*", "*"]]}}}},
                     "diagnosis": {{"role": "sensitive"}}, "salary": {{"role": "sensitive"}}}},
                   "privacy_models": [{model}],
                   "algorithm": {{"type": "exhaustive"}}}}"#
            );
            let spec = JobSpec::from_json(json.as_bytes()).unwrap();
            let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl)
                .unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!(done.outcome().unwrap().transformation, [level], "{model}");
            assert_eq!(done.outcome().unwrap().suppressed_records, 0, "{model}");
            let mut csv = Vec::new();
            done.write_csv(&mut csv, &CsvOptions::default()).unwrap();
            assert_eq!(String::from_utf8(csv).unwrap().lines().count(), 9);
            // ψ is reported for the salary under a linear model only; at level 0 every class holds two
            // salaries 1 apart, so every value has ψ = 1 + exp(−1 / (2σ²))
            let estimates = &done.report().achieved.security_estimates;
            let published = serde_json::to_value(done.report()).unwrap();
            let serialized = &published["achieved"]["security_estimates"];
            if !model.contains("\"salary\"") {
                assert!(estimates.is_empty(), "{model}");
                assert!(serialized.is_null(), "{model}");
                continue;
            }
            assert!(serialized["salary"]["sigma"].is_number(), "{model}");
            let psi = &estimates["salary"];
            let pair = |sigma: f64| 1.0 + (-1.0 / (2.0 * sigma * sigma)).exp();
            let sigma = match model.as_str() {
                m if m.contains(r#""delta": 1}"#) => Some(1.0),
                m if m.contains(r#""r": 0.5}"#) => Some(0.5),
                _ => None,
            };
            if let Some(sigma) = sigma {
                assert_eq!(psi.sigma, sigma);
                for value in [psi.lowest, psi.highest] {
                    assert!((value.unwrap() - pair(sigma)).abs() < 1e-12, "{model}");
                }
                assert!((psi.highest_share.unwrap() - pair(sigma) / 2.0).abs() < 1e-12);
            } else {
                // one class of all eight salaries
                assert!(
                    psi.lowest.unwrap() >= 1.0 && psi.highest.unwrap() <= 8.0,
                    "{model}"
                );
                assert!(psi.highest_share.unwrap() <= 1.0);
            }
        }
    }

    /// The same table at 2-anonymity: every zip is published as 130* (level 1 of 2), nothing is suppressed.
    /// Hand-derived: zips 1301 ×2, 1302 ×2, 1303, 1304 in one cell give Π_e = Π_me = Π_ne =
    /// 4·log2 3 + 2·log2 6 (the cell is the whole column); the tree measure is 6 · 1/2; the diagnoses flu
    /// 1/2, cold 1/3, cancer 1/6 give Var_T = 2·1/2 + 2·2/3 + 1/2 + 5/6 = 11/3 over the original zips and
    /// 0 over the single published class.
    #[test]
    fn report_carries_the_loss_measures() {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301", "flu"],
            vec!["1301", "flu"],
            vec!["1302", "cold"],
            vec!["1302", "cold"],
            vec!["1303", "flu"],
            vec!["1304", "cancer"],
        ];
        let table = Table::from_rows(&["zip", "diagnosis"], &rows);
        let json = r#"{"attributes": {"zip": {"role": "quasi_identifier", "hierarchy": {"levels":
                 [["1301", "130*", "*"], ["1302", "130*", "*"], ["1303", "130*", "*"], ["1304", "130*", "*"]]}},
                 "diagnosis": {"role": "sensitive"}},
               "privacy_models": [{"type": "k_anonymity", "k": 3}],
               "algorithm": {"type": "exhaustive"},
               "query_workload": {"queries": 20, "seed": 5}}"#;
        let spec = JobSpec::from_json(json.as_bytes()).unwrap();
        let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
        assert_eq!(done.outcome().unwrap().transformation, [1]);
        let m = done.report().loss_measures;
        let entropy = 4.0 * 3f64.log2() + 2.0 * 6f64.log2();
        for value in [m.entropy, m.monotone_entropy, m.non_uniform_entropy] {
            assert!((value - entropy).abs() < 1e-9, "{value}");
        }
        assert_eq!(m.redactions, 0);
        assert!((m.tree.unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(m.attributes[0].attribute, "zip");
        let v = &m.variance[0];
        assert_eq!(v.attribute, "diagnosis");
        assert!((v.original - 11.0 / 3.0).abs() < 1e-12, "{}", v.original);
        assert!(v.anonymized.abs() < 1e-12);
        assert!((v.loss - 11.0 / 3.0).abs() < 1e-12);
        let w = m.query_workload.as_ref().unwrap();
        assert_eq!((w.queries, w.seed, w.max_dimensions), (20, 5, 3));
        let value = serde_json::to_value(done.report()).unwrap();
        let measures = &value["loss_measures"];
        assert_eq!(measures["volume_inflation"]["basis"], "empirical_joint");
        assert!(measures["query_workload"]["mean_relative_error"].is_number());
    }

    /// Zip codes {1301 ×2, 1302 ×2, 1303, 1304}: before, classes {2, 2, 1, 1} (highest risk 1, average
    /// 4/6, sample uniques 2/6); 2-anonymity generalizes to 130* (one class of 6): highest 1/6 ≤ 1/k.
    #[test]
    fn report_carries_risk_before_and_after() {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301"],
            vec!["1301"],
            vec!["1302"],
            vec!["1302"],
            vec!["1303"],
            vec!["1304"],
        ];
        let table = Table::from_rows(&["zip"], &rows);
        let spec = JobSpec::from_json(
            br#"{"attributes": {"zip": {"role": "quasi_identifier", "hierarchy": {"levels":
                  [["1301", "130*", "*"], ["1302", "130*", "*"], ["1303", "130*", "*"], ["1304", "130*", "*"]]}}},
                 "privacy_models": [{"type": "k_anonymity", "k": 2}],
                 "algorithm": {"type": "exhaustive"},
                 "risk": {"population_size": 600}}"#,
        )
        .unwrap();
        let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
        let report = done.report();
        let before = &report.risk.before;
        assert_eq!((before.records, before.classes), (6, 4));
        assert_eq!(before.prosecutor.highest, 1.0);
        assert_eq!(before.prosecutor.average, 4.0 / 6.0);
        assert_eq!(before.sample_uniques, 2.0 / 6.0);
        assert_eq!(before.population_uniques.population_size, 600);
        let after = &report.risk.after;
        assert!(after.prosecutor.highest <= 1.0 / 2.0);
        assert_eq!((after.records, after.classes), (6, 1));
        assert_eq!(after.prosecutor.highest, 1.0 / 6.0);
        assert_eq!(after.sample_uniques, 0.0);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["risk"]["after"]["prosecutor"]["highest"], 1.0 / 6.0);
    }

    /// Zip codes {1301 ×2, 1302 ×2, 1303} with 2-anonymity and one record of suppression: the original
    /// codes with 1303 suppressed lose least, so "after" holds the 4 published records in classes
    /// {2, 2} (suppressed records left out, masked or not), while "before" still counts all 5.
    #[test]
    fn risk_after_leaves_suppressed_records_out() {
        let rows: Vec<Vec<&str>> = vec![
            vec!["1301"],
            vec!["1301"],
            vec!["1302"],
            vec!["1302"],
            vec!["1303"],
        ];
        let table = Table::from_rows(&["zip"], &rows);
        let spec = JobSpec::from_json(
            br#"{"attributes": {"zip": {"role": "quasi_identifier", "hierarchy": {"levels":
                  [["1301", "130*", "*"], ["1302", "130*", "*"], ["1303", "130*", "*"]]}}},
                 "privacy_models": [{"type": "k_anonymity", "k": 2}],
                 "suppression_limit": 0.2,
                 "algorithm": {"type": "exhaustive"}}"#,
        )
        .unwrap();
        let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
        assert_eq!(done.outcome().unwrap().transformation, [0]);
        assert_eq!(done.outcome().unwrap().suppressed_records, 1);
        let report = done.report();
        assert_eq!(
            (report.risk.before.records, report.risk.before.classes),
            (5, 3)
        );
        assert_eq!(report.risk.before.sample_uniques, 1.0 / 5.0);
        let after = &report.risk.after;
        assert_eq!((after.records, after.classes), (4, 2));
        assert_eq!(after.prosecutor.highest, 0.5);
        assert_eq!(after.prosecutor.average, 0.5);
        assert_eq!(after.sample_uniques, 0.0);
    }
}
