//! Validates a [`JobSpec`] against a loaded table and resolves it into what the engine runs: bound
//! hierarchies, the engine plan, and the output layout. Every problem is a [`SpecError`] with the JSON
//! pointer of the offending field; messages name columns, never cell values.

pub mod aggregate;
pub mod default_hierarchy;
pub mod differential;
pub mod document;
pub mod fragmentation;
pub mod identifiers;
pub mod local;
pub mod roles;
pub mod steering;

use std::ops::{Deref, DerefMut};

use crate::codec::{parse_arx_hierarchy, CsvOptions};
use crate::core::data::{Column, GeneralizationMap, Hierarchy, Table};
use crate::core::engine::{Outcome, Plan};
use crate::core::input::{EngineInput, QuasiIdentifier, SensitiveAttribute};
use crate::core::local::Domain;
use crate::core::measures::{Classes, QueryWorkload};
use crate::error_code::ErrorCode;

use crate::core::privacy::{EarthMovers, GroundDistanceKind};
use crate::core::render::{OutputColumn, Rendering};
use crate::core::risk::RiskSettings;
use crate::core::search::Algorithm;

use crate::core::identifiers::{OperatedTexts, PseudonymKey};
use crate::domain::analysis::achieved::{achieved, Achieved, PopulationAchieved};
use crate::domain::analysis::candidates::MAX_CANDIDATES;
use crate::domain::analysis::dependencies::DependencyColumns;
use crate::domain::analysis::loss_measures::original_classes;
use crate::domain::analysis::risk::{risk_settings, run_risk, RiskReport};
use crate::domain::analysis::security_estimate::{linear_diagnostics, LinearDiagnostic};
use crate::domain::analysis::warnings;
use crate::domain::builders::BuilderSpec;
use crate::domain::models::{resolve_models, ModelInputs, SensitiveColumn, SlotGroundDistance};
use crate::domain::resolve::local::{
    by_quasi_identifier, dependency_columns, local_algorithm, local_domain, LocalAlgorithm,
    LocalDomain, LocalPlan,
};
use crate::domain::spec::{
    pointer_segment, AlgorithmSpec, CsvSpec, HierarchySpec, JobSpec, LocalAlgorithmSpec, Method,
    Problems, QueryWorkloadSpec, Role, SpecError, SuppressedRecords, MAX_WORKLOAD_QUERIES,
};
use crate::domain::verify::Requirement;
use aggregate::{AggregatedColumn, Aggregates};
use default_hierarchy::default_hierarchy;
use differential::PrivateJob;
use fragmentation::{fragmentation_plan, FragmentationPlan};
use identifiers::{IdentifierColumn, IdentifierReport, Operated, OperatorChoice};
use roles::declared_columns;
use steering::SteeredColumn;

/// Loads hierarchies given by reference (a path for the CLI, an id for the service). Returns a message
/// on failure; the caller adds the pointer.
pub type HierarchyResolver<'r> = dyn Fn(&HierarchySpec) -> Result<Resolved, String> + 'r;

/// What a hierarchy reference stands for: a hierarchy as it is, or a builder that is built against the
/// column it generalizes (a stored builder, or a JSON file holding one).
#[derive(Debug, Clone)]
pub enum Resolved {
    /// A complete hierarchy.
    Hierarchy(Hierarchy),
    /// A builder's parameters.
    Builder(BuilderSpec),
}

impl From<Hierarchy> for Resolved {
    fn from(hierarchy: Hierarchy) -> Self {
        Resolved::Hierarchy(hierarchy)
    }
}

/// The two kinds of job a spec can ask for.
#[derive(Debug)]
pub enum JobKind {
    /// A search of the full-domain generalization lattice (`plan.algorithm`).
    FullDomain,
    /// A local recoding (then `plan.algorithm` is unused and the full-domain quasi-identifiers are
    /// empty).
    Local(LocalPlan),
    /// A vertical fragmentation whose fragments are each recoded locally (as for `Local`).
    Fragmentation(Box<FragmentationPlan>),
}

/// A spec resolved against a table: what every kind of job has ([`ResolvedJob`], reached through
/// `Deref`) and the kind `K`: a [`JobKind`] once prepared, which the run replaces with what the engine
/// produced ([`Prepared::then`]).
#[derive(Debug)]
pub struct Prepared<K = JobKind> {
    /// Everything but the kind.
    pub job: ResolvedJob,
    /// The kind of job, or what its run produced.
    pub kind: K,
}

impl<K> Prepared<K> {
    /// Replaces the kind by `next(job, kind)`.
    pub fn then<N, E>(
        self,
        next: impl FnOnce(&ResolvedJob, K) -> Result<N, E>,
    ) -> Result<Prepared<N>, E> {
        let kind = next(&self.job, self.kind)?;
        Ok(Prepared {
            job: self.job,
            kind,
        })
    }
}

impl<K> Deref for Prepared<K> {
    type Target = ResolvedJob;

    fn deref(&self) -> &ResolvedJob {
        &self.job
    }
}

impl<K> DerefMut for Prepared<K> {
    fn deref_mut(&mut self) -> &mut ResolvedJob {
        &mut self.job
    }
}

/// What a resolved spec holds whatever the kind of job.
#[derive(Debug)]
pub struct ResolvedJob {
    quasi_identifiers: Vec<(usize, GeneralizationMap)>,
    sensitive: Vec<usize>,
    pub(super) output: Vec<usize>,
    /// The engine plan.
    pub plan: Plan,
    /// Whether suppressed records are left out of the output.
    pub remove_suppressed: bool,
    /// What the independent verification checks on every published class, one per privacy model.
    pub requirements: Vec<Requirement>,
    /// The ground distance of each sensitive slot protected by t-closeness (the first such model's), for
    /// the variance-based loss measures.
    pub ground_distances: Vec<SlotGroundDistance>,
    /// The query workload of the report's loss measures.
    pub query_workload: QueryWorkload,
    /// Settings of the report's risk analysis.
    pub risk: RiskSettings,
    /// The numeric sensitive attributes whose ψ security estimate the report gives.
    pub linear_diagnostics: Vec<LinearDiagnostic>,
    /// Columns whose hierarchy repeated rows, with how many (the report warns about them).
    pub repeated_hierarchy_rows: Vec<(String, usize)>,
    /// The population table of the job's population models, for the report.
    pub population: Option<crate::domain::models::population::Population>,
    /// The parameters of a differentially private job.
    pub private: Option<PrivateJob>,
    /// The quasi-identifiers published as their classes' aggregate (full-domain jobs).
    pub aggregated: Vec<AggregatedColumn>,
    /// Their texts, once the run has chosen the classes ([`ResolvedJob::aggregate`]).
    aggregates: Option<Aggregates>,
    /// The classification-utility measure, when the spec asks for it.
    pub utility: Option<UtilityPlan>,
    /// The functional dependencies the report measures, as table columns (every algorithm; the
    /// clustering algorithms also optimise for them).
    pub dependencies: Vec<DependencyColumns>,
    /// The identifying columns and their operators, in table order.
    identifiers: Vec<IdentifierColumn>,
    /// The texts of the identifying columns published through an operator, once applied
    /// ([`ResolvedJob::operate`]).
    operated: Operated,
}

/// The classification-utility measure resolved against the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UtilityPlan {
    /// The table index of the class column.
    pub class: usize,
    /// Seed of the split.
    pub seed: u64,
    /// Share of records tested on.
    pub test_share: f64,
}

/// Resolves `"utility"`: the class must be a column published as it is.
fn utility_plan(spec: &JobSpec, table: &Table) -> Result<Option<UtilityPlan>, SpecError> {
    let Some(utility) = &spec.utility else {
        return Ok(None);
    };
    let Some(class) = table.column_index(&utility.class) else {
        return Err(SpecError::new(
            "/utility/class",
            ErrorCode::UnknownColumn,
            format!("the dataset has no column '{}'", utility.class),
        ));
    };
    if !matches!(
        spec.attributes.get(&utility.class).map(|a| a.role),
        Some(Role::Sensitive | Role::Insensitive)
    ) {
        return Err(SpecError::new(
            "/utility/class",
            ErrorCode::InvalidParameter,
            format!(
                "the utility class '{}' must be published as it is: declare it sensitive or insensitive",
                utility.class
            ),
        ));
    }
    let test_share = utility
        .test_share
        .unwrap_or(crate::domain::analysis::classification::DEFAULT_TEST_SHARE);
    if !(test_share > 0.0 && test_share < 1.0) {
        return Err(SpecError::new(
            "/utility/test_share",
            ErrorCode::InvalidParameter,
            "test_share must be strictly between 0 and 1",
        ));
    }
    Ok(Some(UtilityPlan {
        class,
        seed: utility.seed,
        test_share,
    }))
}

impl ResolvedJob {
    /// The engine's view of `table` (the table `prepare` validated).
    pub fn input<'a>(&'a self, table: &'a Table) -> EngineInput<'a> {
        EngineInput {
            rows: table.row_count(),
            quasi_identifiers: self
                .quasi_identifiers
                .iter()
                .map(|(c, map)| QuasiIdentifier {
                    name: &table.column(*c).name,
                    codes: &table.column(*c).codes,
                    hierarchy: map,
                })
                .collect(),
            sensitive: self
                .sensitive
                .iter()
                .map(|&c| SensitiveAttribute {
                    name: &table.column(c).name,
                    codes: &table.column(c).codes,
                    distinct: table.column(c).dictionary.len(),
                })
                .collect(),
        }
    }

    /// The quasi-identifiers of a full-domain job with their hierarchies, in lattice order (empty for a
    /// local recoding, whose plan holds its domains).
    pub fn full_domain_hierarchies(&self) -> Vec<(usize, Domain<'_>)> {
        self.quasi_identifiers
            .iter()
            .map(|(c, map)| (*c, Domain::Hierarchy(map)))
            .collect()
    }

    /// The table columns of the output, in output order. Identifying columns published through an
    /// operator are among them only after [`ResolvedJob::operate`]: assessing a published table
    /// (`assess --published`, job assessments) resolves the spec without it, so their columns are not
    /// read (a pseudonym is no value of the original column).
    pub fn output_columns(&self) -> &[usize] {
        &self.output
    }

    /// Applies the identifier operators (a pseudonym needs `key`, else `pseudonym_key_missing`): the
    /// columns they publish join the output at their place in the table.
    pub fn operate(&mut self, table: &Table, key: Option<&PseudonymKey>) -> Result<(), SpecError> {
        let operated = identifiers::operate(table, &self.identifiers, key)?;
        // applied again: the columns of the first application leave the output first
        let before: Vec<usize> = self.operated.texts.iter().map(|(c, _)| *c).collect();
        self.output.retain(|c| !before.contains(c));
        for (c, _) in &operated.texts {
            let at = self.output.partition_point(|o| o < c);
            self.output.insert(at, *c);
        }
        self.operated = operated;
        Ok(())
    }

    /// The published texts of table column `c` when it is an identifying column with an operator.
    pub fn operated_texts(&self, c: usize) -> Option<&OperatedTexts> {
        self.operated
            .texts
            .iter()
            .find(|(o, _)| *o == c)
            .map(|(_, texts)| texts)
    }

    /// What the report says about the identifying columns (empty before [`ResolvedJob::operate`]).
    pub fn identifier_report(&self) -> &[IdentifierReport] {
        &self.operated.report
    }

    /// The output column of table column `c` that is neither generalized nor recoded: an identifier's
    /// operated texts, or the column as it is.
    pub(crate) fn plain_output<'a>(&'a self, table: &'a Table, c: usize) -> OutputColumn<'a> {
        let operator = self.identifiers.iter().find(|i| i.column == c);
        match (self.operated_texts(c), operator) {
            (Some(texts), Some(identifier)) => OutputColumn::Operated {
                column: table.column(c),
                texts,
                operator: identifier.choice.name(),
            },
            _ => OutputColumn::Verbatim(table.column(c)),
        }
    }

    /// The smallest class size the privacy models require (1 when none requires one).
    pub fn requested_k(&self) -> u64 {
        self.plan
            .privacy_models
            .iter()
            .map(|m| m.min_class_size())
            .max()
            .unwrap_or(1)
    }

    /// The original table's classes over the quasi-identifiers (shared by the report's analyses).
    pub fn original_classes(&self, table: &Table) -> Classes {
        let columns: Vec<usize> = self.quasi_identifiers.iter().map(|(c, _)| *c).collect();
        original_classes(table, &columns)
    }

    /// Quasi-identifier column names in lattice order.
    pub fn quasi_identifier_names<'a>(&self, table: &'a Table) -> Vec<&'a str> {
        self.quasi_identifiers
            .iter()
            .map(|(c, _)| table.column(*c).name.as_str())
            .collect()
    }

    /// The risk profiles of `table` before (its classes `original`) and after `outcome`.
    pub fn risk_report(&self, table: &Table, original: &Classes, outcome: &Outcome) -> RiskReport {
        run_risk(
            table,
            original,
            &self.quasi_identifiers,
            &outcome.transformation,
            &outcome.suppressed,
            &self.risk,
        )
    }

    /// What the published table of `outcome` achieves (see [`super::achieved`]).
    pub fn achieved(&self, table: &Table, outcome: &Outcome) -> Achieved {
        let sensitive = self.sensitive_with_hierarchical_emd();
        let mut achieved = achieved(
            table,
            &self.quasi_identifiers,
            &outcome.transformation,
            &outcome.suppressed,
            &sensitive,
            &self.linear_diagnostics,
        );
        achieved.population = self.population.as_ref().map(|population| {
            let index = &population.index;
            let classes =
                index.published_classes(&outcome.transformation, |row| !outcome.suppressed[row]);
            PopulationAchieved::new(index.population_rows() as u64, &classes)
        });
        achieved
    }

    /// Each sensitive column with the hierarchical EMD of its t-closeness model, when it has one.
    pub(super) fn sensitive_with_hierarchical_emd(&self) -> Vec<(usize, Option<EarthMovers>)> {
        self.sensitive
            .iter()
            .enumerate()
            .map(|(slot, &c)| {
                let hierarchical = self
                    .ground_distances
                    .iter()
                    .find(|(s, kind, _)| *s == slot && *kind == GroundDistanceKind::Hierarchical)
                    .map(|(_, _, emd)| emd.clone());
                (c, hierarchical)
            })
            .collect()
    }

    /// Computes the aggregated quasi-identifiers' texts for the classes of `outcome` (a no-op without
    /// aggregated columns).
    pub fn aggregate(&mut self, table: &Table, outcome: &Outcome) {
        if self.aggregated.is_empty() {
            return;
        }
        self.aggregates = Some(aggregate::aggregate(
            table,
            &self.quasi_identifiers,
            &outcome.transformation,
            &outcome.suppressed,
            &self.aggregated,
        ));
    }

    /// The output table of `outcome`.
    pub fn rendering<'a>(&'a self, table: &'a Table, outcome: &'a Outcome) -> Rendering<'a> {
        let columns = self
            .output
            .iter()
            .map(|&c| {
                if let Some(j) = self.quasi_identifiers.iter().position(|(q, _)| *q == c) {
                    return OutputColumn::Generalized {
                        column: table.column(c),
                        hierarchy: &self.quasi_identifiers[j].1,
                        level: outcome.transformation[j] as usize,
                    };
                }
                let aggregated = self.aggregated.iter().position(|a| a.column == c);
                match (aggregated, &self.aggregates) {
                    (Some(i), Some(aggregates)) => OutputColumn::Recoded {
                        column: table.column(c),
                        group_of: &aggregates.class_of,
                        texts: &aggregates.texts[i],
                    },
                    _ => self.plain_output(table, c),
                }
            })
            .collect();
        Rendering::new(columns, &outcome.suppressed, self.remove_suppressed)
    }
}

/// How a spec's `csv` settings read an input: the delimiter it names (`None`: sniffed from the header
/// line) and its encoding (`None`: UTF-8, read as it is).
#[derive(Debug, Clone, Copy)]
pub struct InputFormat {
    /// The options of the named delimiter.
    pub delimiter: Option<CsvOptions>,
    /// The encoding to decode from.
    pub encoding: Option<&'static encoding_rs::Encoding>,
}

/// The input format `csv` asks for; problems point into `/csv`.
pub fn input_format(csv: &CsvSpec) -> Result<InputFormat, SpecError> {
    let delimiter = match &csv.delimiter {
        None => None,
        Some(d) => Some(CsvOptions::with_delimiter(d).map_err(|e| {
            SpecError::new("/csv/delimiter", ErrorCode::InvalidDelimiter, e.to_string())
        })?),
    };
    let encoding = match &csv.encoding {
        None => None,
        Some(label) => crate::codec::encoding::encoding_for(label)
            .map_err(|m| SpecError::new("/csv/encoding", ErrorCode::InvalidEncoding, m))?,
    };
    Ok(InputFormat {
        delimiter,
        encoding,
    })
}

/// The encoding `csv.output_encoding` asks for (`None`: UTF-8); problems point at it.
pub fn output_encoding(csv: &CsvSpec) -> Result<Option<&'static encoding_rs::Encoding>, SpecError> {
    match &csv.output_encoding {
        None => Ok(None),
        Some(label) => crate::codec::encoding::encoding_for(label)
            .map_err(|m| SpecError::new("/csv/output_encoding", ErrorCode::InvalidEncoding, m)),
    }
}

fn delimiter_byte(d: &Option<String>, pointer: &str) -> Result<u8, SpecError> {
    match d {
        None => Ok(b';'),
        Some(d) => CsvOptions::with_delimiter(d)
            .map(|o| o.delimiter)
            .map_err(|e| SpecError::new(pointer, ErrorCode::InvalidDelimiter, e.to_string())),
    }
}

/// Validates `spec` against `table` and resolves it.
pub fn prepare(
    table: &Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
) -> Result<Prepared, SpecError> {
    prepare_with(table, spec, resolve, None)
}

/// [`prepare`] with the population table that `k_map` and `delta_presence` read (the table's
/// individuals must be among its records).
pub fn prepare_with(
    table: &Table,
    spec: &JobSpec,
    resolve: &HierarchyResolver<'_>,
    population: Option<&Table>,
) -> Result<Prepared, SpecError> {
    // independent mistakes are collected and reported together; a part that depends on a failed part
    // is skipped rather than reported again
    let mut problems = Problems::new();
    let declared = declared_columns(table, &spec.attributes, &mut problems);
    let mut quasi_identifiers = Vec::new();
    let mut sensitive = Vec::new();
    let mut sensitive_hierarchies = Vec::new();
    let mut output = Vec::new();
    let method = spec.algorithm.method();
    let mut local_attributes = Vec::new();
    let mut identifying = Vec::new();
    let mut repeated_hierarchy_rows = Vec::new();
    let mut identifiers = Vec::new();
    let mut aggregated = Vec::new();
    let mut steered: Vec<SteeredColumn> = Vec::new();
    for (index, attribute) in declared {
        let column = table.column(index);
        let pointer = format!("/attributes/{}", pointer_segment(&column.name));
        let operator = problems
            .keep(identifiers::resolve_operator(attribute, &pointer))
            .flatten();
        if let Some(why) = steering::unsteerable(attribute, matches!(method, Method::FullDomain(_)))
        {
            steering::refuse_unsteered(attribute, &pointer, why, &mut problems);
        }
        if let Some(function) = attribute.aggregate {
            if attribute.role != Role::QuasiIdentifier || !matches!(method, Method::FullDomain(_)) {
                problems.push(SpecError::new(
                    format!("{pointer}/aggregate"),
                    ErrorCode::UnsupportedOption,
                    "aggregate applies to quasi-identifiers of full-domain jobs (mdav aggregates \
                     numeric quasi-identifiers of a local recoding)",
                ));
                continue;
            }
            if attribute.hierarchy.is_some() {
                problems.push(SpecError::new(
                    format!("{pointer}/hierarchy"),
                    ErrorCode::UnsupportedOption,
                    format!(
                        "quasi-identifier '{}' is aggregated, not generalized: leave out its hierarchy",
                        column.name
                    ),
                ));
                continue;
            }
            if problems
                .keep(aggregate::check_aggregate(column, function, &pointer))
                .is_some()
            {
                aggregated.push(AggregatedColumn {
                    column: index,
                    function,
                });
                output.push(index);
            }
            continue;
        }
        match attribute.role {
            Role::QuasiIdentifier => {
                let mondrian = matches!(
                    method,
                    Method::Local(LocalAlgorithmSpec::Mondrian { .. } | LocalAlgorithmSpec::Mdav)
                );
                let map = match &attribute.hierarchy {
                    Some(source) => {
                        match problems.keep(bind_hierarchy(source, column, &pointer, resolve)) {
                            Some(map) => {
                                note_repeated_rows(&mut repeated_hierarchy_rows, column, &map);
                                Some(map)
                            }
                            None => continue,
                        }
                    }
                    // an ordered type without a hierarchy: ranges of a fixed grid, unless Mondrian
                    // or MDAV range the values themselves
                    None if !mondrian => match attribute
                        .data_type
                        .and_then(|t| default_hierarchy(column, t, &pointer))
                    {
                        Some(built) => match problems.keep(built) {
                            Some(map) => Some(map),
                            None => continue,
                        },
                        None => None,
                    },
                    None => None,
                };
                match (&method, map) {
                    (Method::Local(algorithm), map) => {
                        let domain = local_domain(column, attribute, map, &pointer, algorithm);
                        if let Some(domain) = problems.keep(domain) {
                            local_attributes.push((index, domain));
                        }
                    }
                    (Method::FullDomain(_), Some(map)) => {
                        // a bound outside the hierarchy is reported; the column still counts
                        let bounds = problems
                            .keep(steering::level_bounds(attribute, &map, &pointer))
                            .unwrap_or((0, map.max_level() as u8));
                        steered.push(SteeredColumn {
                            pointer: pointer.clone(),
                            bounds,
                            weight: attribute.weight,
                        });
                        quasi_identifiers.push((index, map));
                    }
                    (Method::FullDomain(_), None) => problems.push(SpecError::new(
                        format!("{pointer}/hierarchy"),
                        ErrorCode::MissingHierarchy,
                        format!("quasi-identifier '{}' needs a hierarchy", column.name),
                    )),
                }
                output.push(index);
            }
            Role::Sensitive => {
                // a hierarchy is optional here; models that need one (hierarchical t-closeness) say so
                let map = match &attribute.hierarchy {
                    Some(source) => {
                        let map = problems.keep(bind_hierarchy(source, column, &pointer, resolve));
                        if let Some(map) = &map {
                            note_repeated_rows(&mut repeated_hierarchy_rows, column, map);
                        }
                        map
                    }
                    None => None,
                };
                sensitive.push(index);
                sensitive_hierarchies.push(map);
                output.push(index);
            }
            Role::Insensitive => output.push(index),
            Role::Identifying => {
                identifying.push(index);
                identifiers.push(IdentifierColumn {
                    column: index,
                    choice: operator.unwrap_or(OperatorChoice::Drop),
                });
            }
        }
    }
    let sensitive_attributes: Vec<SensitiveColumn<'_>> = sensitive
        .iter()
        .zip(&sensitive_hierarchies)
        .map(|(&c, hierarchy)| SensitiveColumn {
            column: table.column(c),
            hierarchy: hierarchy.as_ref(),
        })
        .collect();
    if population.is_some() && !spec.privacy_models.iter().any(|m| m.reads_population()) {
        problems.push(SpecError::new(
            "/population_dataset_id",
            ErrorCode::PopulationMissing,
            "a population table was given (population_dataset_id, or --population on the command \
             line), but no privacy model reads one (k_map without an estimator, delta_presence)",
        ));
    }
    let models = problems.keep(resolve_models(
        &spec.privacy_models,
        ModelInputs {
            table,
            sensitive: &sensitive_attributes,
            quasi_identifiers: &quasi_identifiers,
            population,
        },
    ));
    // every algorithm's report measures the dependencies (as table columns); a local plan also takes
    // them by quasi-identifier
    let dependency_columns = problems.keep(dependency_columns(
        &spec.functional_dependencies,
        table,
        &identifying,
    ));
    let kind = match method {
        Method::FullDomain(_) => Some(JobKind::FullDomain),
        Method::Local(ref algorithm) => {
            let columns: Vec<usize> = local_attributes.iter().map(|(c, _)| *c).collect();
            let names: Vec<&str> = columns
                .iter()
                .map(|&c| table.column(c).name.as_str())
                .collect();
            if spec.suppression_limit != 0.0 {
                problems.push(SpecError::new(
                    "/suppression_limit",
                    ErrorCode::UnsupportedOption,
                    format!(
                        "{} decides suppression itself; suppression_limit applies to full-domain algorithms only",
                        algorithm.name()
                    ),
                ));
            }
            // a risk threshold on the whole table needs a search over whole-table transformations
            let mut table_level = false;
            for (i, model) in spec.privacy_models.iter().enumerate() {
                // a population model says itself that it needs a full-domain job
                table_level |= model.reads_population();
                if model.is_table_level() {
                    table_level = true;
                    problems.push(SpecError::new(
                        format!("/privacy_models/{i}"),
                        ErrorCode::UnsupportedModel,
                        format!(
                            "{} forms classes one by one and cannot enforce a risk threshold on the \
                             whole table; use a full-domain algorithm (optimal, flash, …)",
                            algorithm.name()
                        ),
                    ));
                }
            }
            let algorithm = if table_level {
                None
            } else {
                problems.keep(local_algorithm(algorithm, &names, &spec.privacy_models))
            };
            let numeric = local_attributes
                .iter()
                .any(|(_, d)| matches!(d, LocalDomain::Ordered(o) if o.is_numeric()));
            if matches!(algorithm, Some(LocalAlgorithm::Mdav(_))) && !numeric {
                problems.push(SpecError::new(
                    "/algorithm",
                    ErrorCode::InvalidParameter,
                    "mdav aggregates numeric quasi-identifiers: declare at least one with data_type \
                     numeric",
                ));
            }
            match (algorithm, &dependency_columns) {
                (Some(algorithm), Some(dependencies)) => {
                    let plan = LocalPlan {
                        algorithm,
                        dependencies: by_quasi_identifier(dependencies, &columns),
                        attributes: local_attributes,
                    };
                    match &spec.algorithm {
                        AlgorithmSpec::Fragmentation(fragmentation) => problems
                            .keep(fragmentation_plan(table, spec, fragmentation, plan))
                            .map(|plan| JobKind::Fragmentation(Box::new(plan))),
                        _ => Some(JobKind::Local(plan)),
                    }
                }
                _ => None,
            }
        }
    };
    let fragmentation = matches!(spec.algorithm, AlgorithmSpec::Fragmentation(_));
    if fragmentation {
        identifiers::refuse_operators(
            table,
            &identifiers,
            "a fragmentation publishes fragments that must not link: an identifying column can \
             only be dropped",
            &mut problems,
        );
    }
    if fragmentation && !spec.functional_dependencies.is_empty() {
        problems.push(SpecError::new(
            "/functional_dependencies",
            ErrorCode::UnsupportedOption,
            "functional dependencies are not measured across the fragments of a fragmentation job",
        ));
    }
    let dependency_columns = if fragmentation {
        Some(Vec::new())
    } else {
        dependency_columns
    };
    differential::check_private_spec(spec, table, &identifiers, &mut problems);
    let heights: Vec<usize> = quasi_identifiers
        .iter()
        .map(|(_, map)| map.max_level())
        .collect();
    if let Some(transformation) = &spec.transformation {
        if matches!(method, Method::FullDomain(_)) && !differential::is_private(spec) {
            let names: Vec<&str> = quasi_identifiers
                .iter()
                .map(|(c, _)| table.column(*c).name.as_str())
                .collect();
            problems.keep(steering::fix_transformation(
                transformation,
                &mut steered,
                &names,
                &heights,
            ));
        } else {
            problems.push(SpecError::new(
                "/transformation",
                ErrorCode::UnsupportedOption,
                "a fixed transformation applies to full-domain jobs (not local recodings, \
                 fragmentation or differential privacy)",
            ));
        }
    }
    problems.keep(candidates(spec, &method));
    let steering = problems.keep(steering::steering(
        &steered,
        &heights,
        spec.metric,
        (
            differential::is_private(spec),
            spec.privacy_models.iter().any(|m| m.reads_population()),
        ),
    ));
    let limit = problems.keep(suppression_limit(spec.suppression_limit));
    problems.keep(anytime_limits(&spec.algorithm));
    let risk = problems.keep(risk_settings(&spec.risk, table.row_count() as u64, "/risk"));
    let query_workload = problems.keep(query_workload(&spec.query_workload));
    let utility = problems.keep(utility_plan(spec, table));
    if spec.strict {
        problems.keep(warnings::refuse(&warnings::input_warnings(table, spec)));
    }
    // a local job without its local plan failed in a part that recorded its problem
    let resolved = match (
        models,
        limit,
        risk,
        query_workload,
        kind,
        utility,
        dependency_columns,
    ) {
        (
            Some(models),
            Some(limit),
            Some(risk),
            Some(workload),
            Some(kind),
            Some(utility),
            Some(dependencies),
        ) => Some((models, limit, risk, workload, kind, utility, dependencies)),
        _ => None,
    };
    let (models, limit, mut risk, query_workload, kind, utility, dependency_columns) =
        problems.finish_with(resolved)?;
    let steering = steering.unwrap_or_default();
    // a population model's population is the risk analysis's, unless the job names another
    if risk.population_size.is_none() {
        risk.population_size = models.iter().find_map(|m| m.population_size);
    }
    let mut privacy_models = Vec::with_capacity(models.len());
    let mut requirements = Vec::with_capacity(models.len());
    let mut ground_distances: Vec<SlotGroundDistance> = Vec::new();
    let mut linear_scales = Vec::new();
    let mut population = None;
    let mut private = None;
    for model in models {
        population = population.or(model.population);
        private = private.or(model.differential_privacy);
        privacy_models.push(model.criterion);
        requirements.push(model.requirement);
        // the first t-closeness model of a slot gives its ground distance
        if let Some(ground) = model.ground_distance {
            if ground_distances.iter().all(|(s, _, _)| *s != ground.0) {
                ground_distances.push(ground);
            }
        }
        linear_scales.extend(model.linear_scale);
    }
    let private = private.map(|settings| PrivateJob {
        settings,
        hierarchies_from_data: differential::hierarchies_from_data(spec),
    });
    let plan = Plan {
        privacy_models,
        // SafePub suppresses every class below its k, whatever the share
        suppression_limit: if private.is_some() { 1.0 } else { limit },
        metric: spec.metric,
        algorithm: match method {
            Method::FullDomain(algorithm) => algorithm,
            Method::Local(_) => Algorithm::Optimal,
        },
        private_search: None,
        steering,
        candidates: spec.candidates.unwrap_or(1) as usize,
    };
    Ok(Prepared {
        job: ResolvedJob {
            quasi_identifiers,
            sensitive,
            output,
            plan,
            remove_suppressed: spec.suppressed_records == SuppressedRecords::Remove
                || private.is_some(),
            linear_diagnostics: linear_diagnostics(table, &linear_scales),
            requirements,
            ground_distances,
            query_workload,
            risk,
            repeated_hierarchy_rows,
            utility,
            dependencies: dependency_columns,
            identifiers,
            operated: Operated::default(),
            population,
            private,
            aggregated,
            aggregates: None,
        },
        kind,
    })
}

/// Notes a hierarchy that repeated rows of one original value.
fn note_repeated_rows(notes: &mut Vec<(String, usize)>, column: &Column, map: &GeneralizationMap) {
    let repeated = map.hierarchy().repeated_rows();
    if repeated > 0 {
        notes.push((column.name.clone(), repeated));
    }
}

/// Resolves the workload spec, with the documented defaults.
fn query_workload(spec: &QueryWorkloadSpec) -> Result<QueryWorkload, SpecError> {
    let defaults = QueryWorkload::default();
    let queries = spec.queries.unwrap_or(u64::from(defaults.queries));
    if !(1..=MAX_WORKLOAD_QUERIES).contains(&queries) {
        return Err(SpecError::new(
            "/query_workload/queries",
            ErrorCode::InvalidQueryWorkload,
            format!("the workload needs between 1 and {MAX_WORKLOAD_QUERIES} queries"),
        ));
    }
    let max_dimensions = spec
        .max_dimensions
        .unwrap_or(u64::from(defaults.max_dimensions));
    if max_dimensions < 1 {
        return Err(SpecError::new(
            "/query_workload/max_dimensions",
            ErrorCode::InvalidQueryWorkload,
            "a query constrains at least 1 quasi-identifier",
        ));
    }
    Ok(QueryWorkload {
        queries: queries as u32,
        seed: spec.seed.unwrap_or(defaults.seed),
        max_dimensions: max_dimensions.min(u64::from(u32::MAX)) as u32,
    })
}

/// Loads the hierarchy `source` of `column` (declared at `pointer`) and binds it to the column (jobs and
/// assessments alike).
pub fn bind_hierarchy(
    source: &HierarchySpec,
    column: &Column,
    pointer: &str,
    resolve: &HierarchyResolver<'_>,
) -> Result<GeneralizationMap, SpecError> {
    let hierarchy_pointer = format!("{pointer}/hierarchy");
    let hierarchy = load(source, column, &hierarchy_pointer, resolve)?;
    if hierarchy.height() > u8::MAX as usize {
        return Err(SpecError::new(
            hierarchy_pointer,
            ErrorCode::InvalidHierarchy,
            "a hierarchy may have at most 255 levels",
        ));
    }
    GeneralizationMap::bind(hierarchy, column)
        .map_err(|e| SpecError::new(hierarchy_pointer, ErrorCode::UncoveredValues, e.to_string()))
}

fn load(
    source: &HierarchySpec,
    column: &Column,
    pointer: &str,
    resolve: &HierarchyResolver<'_>,
) -> Result<Hierarchy, SpecError> {
    let invalid = |m: String| SpecError::new(pointer, ErrorCode::InvalidHierarchy, m);
    match source {
        HierarchySpec::Levels { levels } => {
            Hierarchy::from_rows(levels).map_err(|e| invalid(e.to_string()))
        }
        HierarchySpec::Arx { arx, delimiter } => {
            let d = delimiter_byte(delimiter, &format!("{pointer}/delimiter"))?;
            parse_arx_hierarchy(arx.as_bytes(), d).map_err(|e| invalid(e.to_string()))
        }
        HierarchySpec::Builder { builder } => build(builder, column, &format!("{pointer}/builder")),
        HierarchySpec::Path { .. } | HierarchySpec::Id { .. } => {
            match resolve(source).map_err(invalid)? {
                Resolved::Hierarchy(hierarchy) => Ok(hierarchy),
                Resolved::Builder(builder) => build(&builder, column, pointer),
            }
        }
    }
}

/// Runs `builder` on the distinct values of `column`; errors point at `pointer`.
fn build(builder: &BuilderSpec, column: &Column, pointer: &str) -> Result<Hierarchy, SpecError> {
    let values: Vec<&str> = column.dictionary.values().collect();
    let rows = builder
        .build(&values)
        .map_err(|e| SpecError::new(pointer, e.code(), e.to_string()))?;
    Hierarchy::from_rows(&rows)
        .map_err(|e| SpecError::new(pointer, ErrorCode::InvalidHierarchy, e.to_string()))
}

/// Longest time limit an anytime search accepts: one day, in milliseconds.
pub const MAX_TIME_LIMIT_MS: u64 = 86_400_000;

/// `candidates` is 1 to [`MAX_CANDIDATES`], on a full-domain job that is not differentially private.
fn candidates(spec: &JobSpec, method: &Method) -> Result<(), SpecError> {
    let Some(n) = spec.candidates else {
        return Ok(());
    };
    if !(1..=MAX_CANDIDATES).contains(&n) {
        return Err(SpecError::new(
            "/candidates",
            ErrorCode::InvalidParameter,
            format!("candidates is a number of transformations from 1 to {MAX_CANDIDATES}"),
        ));
    }
    if !matches!(method, Method::FullDomain(_)) || differential::is_private(spec) {
        return Err(SpecError::new(
            "/candidates",
            ErrorCode::UnsupportedOption,
            "candidates are transformations of a full-domain search (not local recodings, \
             fragmentation or differential privacy)",
        ));
    }
    Ok(())
}

/// An anytime search's time limit is between 1 ms and a day, and its generation cap at least 1.
fn anytime_limits(algorithm: &AlgorithmSpec) -> Result<(), SpecError> {
    let (algorithm, at) = match algorithm {
        AlgorithmSpec::Fragmentation(fragmentation) => match &fragmentation.anonymizer {
            Some(anonymizer) => (anonymizer, "/algorithm/anonymizer"),
            None => return Ok(()),
        },
        other => (other, "/algorithm"),
    };
    let (time_limit_ms, generations) = match algorithm {
        AlgorithmSpec::Lightning { time_limit_ms } => (*time_limit_ms, None),
        AlgorithmSpec::Genetic {
            time_limit_ms,
            generations,
            ..
        } => (*time_limit_ms, *generations),
        _ => return Ok(()),
    };
    if time_limit_ms.is_some_and(|t| !(1..=MAX_TIME_LIMIT_MS).contains(&t)) {
        return Err(SpecError::new(
            format!("{at}/time_limit_ms"),
            ErrorCode::InvalidParameter,
            format!("time_limit_ms must be between 1 and {MAX_TIME_LIMIT_MS} (one day)"),
        ));
    }
    if generations == Some(0) {
        return Err(SpecError::new(
            format!("{at}/generations"),
            ErrorCode::InvalidParameter,
            "generations must be at least 1",
        ));
    }
    Ok(())
}

fn suppression_limit(limit: f64) -> Result<f64, SpecError> {
    if limit.is_finite() && (0.0..=1.0).contains(&limit) {
        Ok(limit)
    } else {
        Err(SpecError::new(
            "/suppression_limit",
            ErrorCode::InvalidSuppressionLimit,
            "the suppression limit is a fraction of records between 0 and 1",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::models::categories::{binomial, covers_work, MAX_CATEGORY_WORK};
    use crate::domain::models::delta_range::DeltaRangeCheck;
    use crate::domain::models::l_categorical_diversity::LCategoricalCheck;
    use std::any::Any;

    #[test]
    fn anytime_limits_are_checked_where_they_are_given() {
        let pointer = |json: serde_json::Value| {
            let algorithm: AlgorithmSpec = serde_json::from_value(json).unwrap();
            anytime_limits(&algorithm)
                .err()
                .map(|e| (e.pointer, e.code))
        };
        assert_eq!(
            pointer(serde_json::json!({"type": "lightning", "time_limit_ms": 1})),
            None
        );
        assert_eq!(pointer(serde_json::json!({"type": "genetic"})), None);
        assert_eq!(
            pointer(serde_json::json!({"type": "lightning", "time_limit_ms": 86_400_001u64})),
            Some((
                "/algorithm/time_limit_ms".to_string(),
                ErrorCode::InvalidParameter
            ))
        );
        assert_eq!(
            pointer(serde_json::json!({"type": "genetic", "generations": 0})),
            Some((
                "/algorithm/generations".to_string(),
                ErrorCode::InvalidParameter
            ))
        );
        assert_eq!(
            pointer(serde_json::json!({"type": "fragmentation", "class": "c",
                "anonymizer": {"type": "lightning", "time_limit_ms": 0}})),
            Some((
                "/algorithm/anonymizer/time_limit_ms".to_string(),
                ErrorCode::InvalidParameter
            ))
        );
    }

    fn table() -> Table {
        Table::from_rows(
            &["zip", "diagnosis", "note"],
            &[vec!["1", "flu", "a"], vec!["2", "cold", "b"]],
        )
    }

    fn prepare_with(model: &str) -> Result<Prepared, SpecError> {
        let json = format!(
            r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels": [["1", "*"], ["2", "*"]]}}}},
                               "diagnosis": {{"role": "sensitive"}}, "note": {{"role": "insensitive"}}}},
                "privacy_models": [{{"type": "k_anonymity", "k": 1}}, {model}]}}"#
        );
        let spec = JobSpec::from_json(json.as_bytes())?;
        prepare(&table(), &spec, &|_| Err("inline only".into()))
    }

    fn error(model: &str) -> (String, &'static str) {
        let e = prepare_with(model).unwrap_err();
        (e.pointer, e.code.as_str())
    }

    /// Every problem of `json` against the test table, as (pointer, code).
    fn all_problems(json: &str) -> Vec<(String, &'static str)> {
        let spec = JobSpec::from_json(json.as_bytes()).unwrap();
        let e = prepare(&table(), &spec, &|_| Err("inline only".into())).unwrap_err();
        e.all()
            .map(|p| (p.pointer.clone(), p.code.as_str()))
            .collect()
    }

    #[test]
    fn independent_mistakes_are_reported_together_with_leaf_pointers() {
        let problems = all_problems(
            r#"{"attributes": {"zip": {"role": "quasi_identifier"},
                              "diagnosis": {"role": "sensitive"}, "note": {"role": "insensitive"}},
                "privacy_models": [{"type": "k_anonymity", "k": 0},
                                   {"type": "distinct_l_diversity", "attribute": "diagnosis", "l": 0}],
                "suppression_limit": 1.5}"#,
        );
        assert_eq!(
            problems,
            [
                ("/attributes/zip/hierarchy".to_string(), "missing_hierarchy"),
                ("/privacy_models/0/k".to_string(), "invalid_k"),
                ("/privacy_models/1/l".to_string(), "invalid_l"),
                (
                    "/suppression_limit".to_string(),
                    "invalid_suppression_limit"
                ),
            ]
        );
    }

    #[test]
    fn builders_bind_to_their_column_or_say_what_they_miss() {
        let spec = |zip: &str, note: &str| {
            format!(
                r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"builder": {zip}}}}},
                                    "note": {{"role": "quasi_identifier", "hierarchy": {{"builder": {note}}}}},
                                    "diagnosis": {{"role": "sensitive"}}}},
                    "privacy_models": [{{"type": "k_anonymity", "k": 1}}]}}"#
            )
        };
        let good = spec(
            r#"{"type": "interval", "width": 5}"#,
            r#"{"type": "categories", "levels": [{"a": "vowel", "b": "consonant"}]}"#,
        );
        let spec_ok = JobSpec::from_json(good.as_bytes()).unwrap();
        let prepared = prepare(&table(), &spec_ok, &|_| Err("inline only".into())).unwrap();
        assert_eq!(prepared.quasi_identifiers[1].1.max_level(), 2);
        // letters are not numbers; a builder with a bad parameter
        let problems = all_problems(&spec(
            r#"{"type": "interval", "width": -5}"#,
            r#"{"type": "interval", "width": 5}"#,
        ));
        assert_eq!(
            problems,
            [
                (
                    "/attributes/zip/hierarchy/builder".to_string(),
                    "invalid_hierarchy"
                ),
                (
                    "/attributes/note/hierarchy/builder".to_string(),
                    "uncovered_values"
                ),
            ]
        );
    }

    #[test]
    fn a_misspelt_quasi_identifier_is_not_also_reported_as_missing() {
        // "zipp" is unknown and "zip" has no role: two problems, not a third "no quasi-identifier"
        let problems = all_problems(
            r#"{"attributes": {"zipp": {"role": "quasi_identifier", "hierarchy": {"levels": [["1", "*"]]}},
                              "diagnosis": {"role": "sensitive"}, "note": {"role": "insensitive"}},
                "privacy_models": [{"type": "k_anonymity", "k": 2}]}"#,
        );
        assert_eq!(
            problems,
            [
                ("/attributes/zipp".to_string(), "unknown_column"),
                ("/attributes".to_string(), "undeclared_column"),
            ]
        );
    }

    #[test]
    fn resolves_l_diversity_models_to_sensitive_slots() {
        let p = prepare_with(
            r#"{"type": "recursive_cl_diversity", "attribute": "diagnosis", "c": 1.5, "l": 2}"#,
        )
        .unwrap();
        let model = &p.plan.privacy_models[1];
        assert_eq!(model.sensitive_slot(), Some(0));
        assert_eq!(
            model.describe(),
            "recursive-(1.5,2)-diversity on 'diagnosis'"
        );
        assert_eq!(p.requirements.len(), 2);
        for kind in ["distinct_l_diversity", "entropy_l_diversity"] {
            let p = prepare_with(&format!(
                r#"{{"type": "{kind}", "attribute": "diagnosis", "l": 2}}"#
            ))
            .unwrap();
            assert_eq!(p.plan.privacy_models[1].min_class_size(), 2);
        }
    }

    const CATEGORIES: &str = r#""categories": {"respiratory": ["flu", "cold"]}"#;

    #[test]
    fn resolves_categorical_and_linear_models() {
        let p = prepare_with(&format!(
            r#"{{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 1, {CATEGORIES}}}"#
        ))
        .unwrap();
        assert_eq!(
            p.plan.privacy_models[1].describe(),
            "1-categorical-diversity on 'diagnosis'"
        );
        let requirement: &dyn Any = &*p.requirements[1];
        assert!(matches!(
            requirement.downcast_ref::<LCategoricalCheck>(),
            Some(LCategoricalCheck { l: 1, .. })
        ));
        let p = prepare_with(
            r#"{"type": "d_density", "attribute": "diagnosis", "d": 0.5, "mu": 0.1,
                 "categories": {"respiratory": ["flu"], "unseen": ["rash"]}, "dont_care": ["cold"]}"#,
        )
        .unwrap();
        assert_eq!(
            p.plan.privacy_models[1].describe(),
            "0.5-density with 0.1-dilution on 'diagnosis'"
        );
        let p = prepare_with(
            r#"{"type": "mu_dilution", "attribute": "diagnosis", "mu": 0.5, "dont_care": ["x"]}"#,
        )
        .unwrap();
        assert_eq!(
            p.plan.privacy_models[1].describe(),
            "0.5-dilution on 'diagnosis'"
        );
        for kind in ["cl_categorical_recursive_diversity", "cl_density"] {
            let p = prepare_with(&format!(
                r#"{{"type": "{kind}", "attribute": "diagnosis", "c": 2, "l": 2, {CATEGORIES}}}"#
            ))
            .unwrap();
            assert_eq!(p.plan.privacy_models[1].sensitive_slot(), Some(0));
        }
        let p = prepare_with(r#"{"type": "delta_range", "attribute": "zip", "delta": 1}"#);
        assert_eq!(p.unwrap_err().code, "not_sensitive");
    }

    /// A table with a numeric sensitive column.
    fn prepare_numeric(model: &str) -> Result<Prepared, SpecError> {
        let table = Table::from_rows(
            &["zip", "salary"],
            &[vec!["1", "8000"], vec!["2", " 25000.5"], vec!["2", "-3"]],
        );
        let json = format!(
            r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels": [["1", "*"], ["2", "*"]]}}}},
                               "salary": {{"role": "sensitive"}}}},
                "privacy_models": [{model}]}}"#
        );
        prepare(&table, &JobSpec::from_json(json.as_bytes())?, &|_| {
            Err("inline only".into())
        })
    }

    #[test]
    fn resolves_linear_models_on_numbers() {
        let p = prepare_numeric(r#"{"type": "delta_range", "attribute": "salary", "delta": 100}"#)
            .unwrap();
        assert_eq!(p.plan.privacy_models[0].describe(), "100-range on 'salary'");
        let requirement: &dyn Any = &*p.requirements[0];
        match requirement.downcast_ref::<DeltaRangeCheck>() {
            Some(DeltaRangeCheck { tolerance, .. }) => {
                assert!((tolerance - 25000.5e-9).abs() < 1e-12)
            }
            None => panic!("{:?}", p.requirements[0]),
        }
        let p = prepare_numeric(
            r#"{"type": "lr_linear_diversity", "attribute": "salary", "l": 2, "r": 0.5,
                "class_function": {"type": "piecewise_linear", "points": [[0, 0], [8000, 1], [25000, 2]]}}"#,
        )
        .unwrap();
        assert_eq!(p.plan.privacy_models[0].min_class_size(), 2);
        let e = prepare_numeric(r#"{"type": "delta_range", "attribute": "salary", "delta": -1}"#)
            .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/privacy_models/0/delta", "invalid_delta")
        );
        for r in ["-0.5", "-1e300"] {
            let e = prepare_numeric(&format!(
                r#"{{"type": "lr_linear_diversity", "attribute": "salary", "l": 2, "r": {r}}}"#
            ))
            .unwrap_err();
            assert_eq!(
                (e.pointer.as_str(), e.code.as_str()),
                ("/privacy_models/0/r", "invalid_r"),
                "r = {r}"
            );
        }
        let e = prepare_numeric(
            r#"{"type": "lr_linear_diversity", "attribute": "salary", "l": 0, "r": 1}"#,
        )
        .unwrap_err();
        assert_eq!(e.code, "invalid_l");
        for points in ["[[0, 0]]", "[[0, 0], [0, 1]]", "[[0, 1], [5, 0]]"] {
            let e = prepare_numeric(&format!(
                r#"{{"type": "delta_range", "attribute": "salary", "delta": 1,
                    "class_function": {{"type": "piecewise_linear", "points": {points}}}}}"#
            ))
            .unwrap_err();
            assert_eq!(
                (e.pointer.as_str(), e.code.as_str()),
                (
                    "/privacy_models/0/class_function/points",
                    "invalid_class_function"
                ),
                "{points}"
            );
        }
    }

    #[test]
    fn refuses_values_that_are_not_numbers_without_echoing_them() {
        let e = prepare_with(r#"{"type": "delta_range", "attribute": "diagnosis", "delta": 1}"#)
            .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/privacy_models/1/attribute", "not_numeric")
        );
        assert!(e.message.contains("2 distinct values"), "{}", e.message);
        assert!(!e.message.contains("flu") && !e.message.contains("cold"));
    }

    #[test]
    fn rejects_bad_categorical_parameters() {
        // cold is in no category and not don't-care
        let e = prepare_with(
            r#"{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 2,
                "categories": {"a": ["flu"]}}"#,
        )
        .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/privacy_models/1/categories", "uncovered_values")
        );
        assert!(
            e.message
                .contains("1 distinct values of column 'diagnosis'"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("cold"));
        assert_eq!(
            error(
                r#"{"type": "d_density", "attribute": "diagnosis", "d": 0.5,
                    "categories": {"a/b": ["flu", "cold"]}, "dont_care": ["cold"]}"#
            ),
            (
                "/privacy_models/1/categories/a~1b".into(),
                "dont_care_overlap"
            )
        );
        for d in ["-0.1", "1.5"] {
            assert_eq!(
                error(&format!(
                    r#"{{"type": "d_density", "attribute": "diagnosis", "d": {d}, {CATEGORIES}}}"#
                )),
                ("/privacy_models/1/d".into(), "invalid_d"),
                "d = {d}"
            );
        }
        assert_eq!(
            error(&format!(
                r#"{{"type": "d_density", "attribute": "diagnosis", "d": 0.5, "mu": 2, {CATEGORIES}}}"#
            )),
            ("/privacy_models/1/mu".into(), "invalid_mu")
        );
        assert_eq!(
            error(
                r#"{"type": "mu_dilution", "attribute": "diagnosis", "mu": -1, "dont_care": []}"#
            ),
            ("/privacy_models/1/mu".into(), "invalid_mu")
        );
        for kind in ["cl_categorical_recursive_diversity", "cl_density"] {
            assert_eq!(
                error(&format!(
                    r#"{{"type": "{kind}", "attribute": "diagnosis", "c": 0, "l": 2, {CATEGORIES}}}"#
                )),
                ("/privacy_models/1/c".into(), "invalid_c")
            );
            assert_eq!(
                error(&format!(
                    r#"{{"type": "{kind}", "attribute": "diagnosis", "c": 1, "l": 0, {CATEGORIES}}}"#
                )),
                ("/privacy_models/1/l".into(), "invalid_l")
            );
        }
        assert_eq!(
            error(&format!(
                r#"{{"type": "l_categorical_diversity", "attribute": "note", "l": 2, {CATEGORIES}}}"#
            )),
            ("/privacy_models/1/attribute".into(), "not_sensitive")
        );
        for cap in ["0", "65"] {
            assert_eq!(
                error(&format!(
                    r#"{{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 2,
                        "max_categories": {cap}, {CATEGORIES}}}"#
                )),
                (
                    "/privacy_models/1/max_categories".into(),
                    "invalid_max_categories"
                )
            );
        }
    }

    /// The category cap: 16 by default, raised up to 64; and the work bound of the exact checks.
    #[test]
    fn caps_the_number_of_categories() {
        let categories = |n: usize| {
            let mut map = serde_json::Map::new();
            map.insert("all".into(), serde_json::json!(["flu", "cold"]));
            for c in 1..n {
                map.insert(
                    format!("c{c}"),
                    serde_json::json!(["flu", "cold", format!("v{c}")]),
                );
            }
            serde_json::Value::Object(map).to_string()
        };
        let model = |n: usize, extra: &str| {
            format!(
                r#"{{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 2,
                    "categories": {}{extra}}}"#,
                categories(n)
            )
        };
        assert!(prepare_with(&model(16, "")).is_ok());
        let e = prepare_with(&model(17, "")).unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/privacy_models/1/categories", "too_many_categories")
        );
        assert!(prepare_with(&model(17, r#", "max_categories": 17"#)).is_ok());
        assert!(prepare_with(&model(64, r#", "max_categories": 64"#)).is_ok());
        // the cover search is at most as deep as the column has values (2 here), so l = 7 is cheap
        let deep = format!(
            r#"{{"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 7,
                "max_categories": 40, "categories": {}}}"#,
            categories(40)
        );
        assert!(prepare_with(&deep).is_ok());
        // values in 40 categories each and a search 6 deep: up to 40^6 nodes
        assert!(covers_work(40, 6) > MAX_CATEGORY_WORK);
        // MC(l) over C(64, 32) subsets is refused, C(64, 2) accepted
        let coverage = |l: u64| {
            format!(
                r#"{{"type": "cl_categorical_recursive_diversity", "attribute": "diagnosis", "c": 1,
                    "l": {l}, "max_categories": 64, "categories": {}}}"#,
                categories(64)
            )
        };
        assert_eq!(error(&coverage(32)).1, "too_many_categories");
        assert!(prepare_with(&coverage(2)).is_ok());
        assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
        assert_eq!(binomial(5, 2), 10);
        assert_eq!(binomial(3, 7), 1);
        assert_eq!(covers_work(3, 2), 1 + 3 + 9);
        assert_eq!(covers_work(1, 1_000_000), 1);
    }

    #[test]
    fn resolves_the_query_workload() {
        let p = prepare_with(r#"{"type": "k_anonymity", "k": 1}"#).unwrap();
        assert_eq!(p.query_workload, QueryWorkload::default());
        assert_eq!(
            (
                p.query_workload.queries,
                p.query_workload.seed,
                p.query_workload.max_dimensions
            ),
            (1000, 1, 3)
        );
        let with = |workload: &str| {
            let json = format!(
                r#"{{"attributes": {{"zip": {{"role": "quasi_identifier", "hierarchy": {{"levels": [["1", "*"], ["2", "*"]]}}}},
                                   "diagnosis": {{"role": "sensitive"}}, "note": {{"role": "insensitive"}}}},
                    "privacy_models": [{{"type": "k_anonymity", "k": 1}}], "query_workload": {workload}}}"#
            );
            let spec = JobSpec::from_json(json.as_bytes())?;
            prepare(&table(), &spec, &|_| Err("inline only".into()))
        };
        let p = with(r#"{"queries": 10, "seed": 4}"#).unwrap();
        assert_eq!(
            p.query_workload,
            QueryWorkload {
                queries: 10,
                seed: 4,
                max_dimensions: 3
            }
        );
        for (workload, pointer) in [
            (r#"{"queries": 0}"#, "/query_workload/queries"),
            (r#"{"queries": 100001}"#, "/query_workload/queries"),
            (r#"{"max_dimensions": 0}"#, "/query_workload/max_dimensions"),
        ] {
            let e = with(workload).unwrap_err();
            assert_eq!(
                (e.pointer.as_str(), e.code.as_str()),
                (pointer, "invalid_query_workload")
            );
        }
    }

    #[test]
    fn rejects_bad_l_diversity_parameters() {
        assert_eq!(
            error(r#"{"type": "distinct_l_diversity", "attribute": "age", "l": 2}"#),
            ("/privacy_models/1/attribute".into(), "unknown_column")
        );
        assert_eq!(
            error(r#"{"type": "entropy_l_diversity", "attribute": "note", "l": 2}"#),
            ("/privacy_models/1/attribute".into(), "not_sensitive")
        );
        assert_eq!(
            error(r#"{"type": "distinct_l_diversity", "attribute": "zip", "l": 2}"#),
            ("/privacy_models/1/attribute".into(), "not_sensitive")
        );
        assert_eq!(
            error(r#"{"type": "entropy_l_diversity", "attribute": "diagnosis", "l": 0}"#),
            ("/privacy_models/1/l".into(), "invalid_l")
        );
        for c in ["0", "-1", "1e-30"] {
            assert_eq!(
                error(&format!(
                    r#"{{"type": "recursive_cl_diversity", "attribute": "diagnosis", "c": {c}, "l": 2}}"#
                )),
                ("/privacy_models/1/c".into(), "invalid_c"),
                "c = {c}"
            );
        }
    }
}
