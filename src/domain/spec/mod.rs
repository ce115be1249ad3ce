//! The job specification, as JSON: which columns play which role, the privacy models, the suppression
//! limit, the algorithm and the metric. Parameters are typed (a tagged enum per model and algorithm) and
//! unknown fields are rejected, so a typo is an error rather than a silent default.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::core::loss::MetricKind;
use crate::core::search::{Algorithm, GeneticOptions, DEFAULT_TIME_LIMIT_MS};
use crate::error_code::ErrorCode;

pub use crate::domain::models::beta_likeness::LikenessVariant;
pub use crate::domain::models::categories::DEFAULT_MAX_CATEGORIES;
pub use crate::domain::models::class_function::ClassFunctionSpec;
pub use crate::domain::models::t_closeness::GroundDistance;
pub use crate::domain::models::PrivacyModelSpec;

/// Default node limit of the exhaustive search.
pub const DEFAULT_EXHAUSTIVE_LIMIT: u64 = 1_000_000;

/// A whole job specification (the HTTP API adds the dataset id).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// How the dataset's CSV is read.
    #[serde(default)]
    pub csv: CsvSpec,
    /// Role (and hierarchy) of every column.
    pub attributes: BTreeMap<String, AttributeSpec>,
    /// Privacy models the output must satisfy.
    pub privacy_models: Vec<PrivacyModelSpec>,
    /// Fraction of records that may be suppressed, 0 to 1.
    #[serde(default)]
    pub suppression_limit: f64,
    /// Whether suppressed records are masked with `*` or removed from the output.
    #[serde(default)]
    pub suppressed_records: SuppressedRecords,
    /// The search algorithm.
    #[serde(default)]
    pub algorithm: AlgorithmSpec,
    /// The metric to minimise.
    #[serde(default = "default_metric")]
    pub metric: MetricKind,
    /// The query workload of the reported loss measures (every field has a default).
    #[serde(default)]
    pub query_workload: QueryWorkloadSpec,
    /// Settings of the re-identification risk analysis in the report.
    #[serde(default)]
    pub risk: RiskSpec,
    /// Functional dependencies the dependency-preserving clustering algorithms (`pair_enum`,
    /// `k_assemble`) keep; the clustering baselines report their dependency loss too.
    #[serde(default)]
    pub functional_dependencies: Vec<FunctionalDependencySpec>,
    /// Turns the guard rails' warnings into errors: those the input shows (a near-unique column
    /// published unchanged, the suppression marker in a quasi-identifier) refuse the spec, and any
    /// warning of the finished run refuses its output (code `strict_warnings`).
    #[serde(default)]
    pub strict: bool,
    /// Classification utility in the report: classifiers trained on the published records predict this
    /// class of held-out original records (skipped when absent).
    #[serde(default)]
    pub utility: Option<UtilitySpec>,
    /// The service's id of the population table that `k_map` and `delta_presence` read (a dataset of
    /// the same tenant). The CLI takes `--population` instead.
    #[serde(default)]
    pub population_dataset_id: Option<String>,
    /// A full-domain job's transformation, fixed: the hierarchy level of every quasi-identifier, by
    /// column name. The search is skipped (the lattice holds that one node); the job fails with
    /// `no_solution` when the node needs more suppression than the limit allows.
    #[serde(default)]
    pub transformation: Option<BTreeMap<String, u64>>,
    /// How many of the best transformations a full-domain job's report lists for comparison (2 to
    /// 100; absent or 1: the chosen one only), each with every metric, suppression, classes and risk.
    #[serde(default)]
    pub candidates: Option<u64>,
}

/// The classification-utility measure (`"utility"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UtilitySpec {
    /// The column the classifiers predict (published as it is: sensitive or insensitive).
    pub class: String,
    /// Seed of the train/test split (0 when absent).
    #[serde(default)]
    pub seed: u64,
    /// Share of records held out for testing, in (0, 1) (0.3 when absent).
    pub test_share: Option<f64>,
}

/// A functional dependency `lhs → rhs` between columns of the dataset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionalDependencySpec {
    /// Determining columns (at least one).
    pub lhs: Vec<String>,
    /// Determined columns (at least one).
    pub rhs: Vec<String>,
}

/// Settings of the re-identification risk analysis (`"risk"`). Everything is optional: by default the
/// table is its own population (sampling fraction 1) and the records-at-risk threshold is 0.2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskSpec {
    /// Records in the population the table was sampled from (at least the table's records).
    pub population_size: Option<u64>,
    /// The table's records as a fraction of the population, in (0, 1]; the population size is
    /// `round(records / sampling_fraction)`. Give this or `population_size`, not both.
    pub sampling_fraction: Option<f64>,
    /// A record is at risk when its re-identification probability is strictly above this, in (0, 1].
    pub threshold: Option<f64>,
}

fn default_metric() -> MetricKind {
    MetricKind::Granularity
}

/// CSV settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsvSpec {
    /// One-character delimiter (`\t` for tab); sniffed from the header line when absent.
    pub delimiter: Option<String>,
    /// The input's character encoding (a WHATWG label such as `windows-1252`); UTF-8 when absent. The
    /// CLI decodes its input with it; the service decodes at upload (`?encoding=`) and stores UTF-8, so
    /// a job's spec may only say `utf-8` there.
    pub encoding: Option<String>,
    /// The output's character encoding for the CLI (a WHATWG label); UTF-8 when absent. A character the
    /// encoding cannot write fails the run. The service publishes UTF-8.
    pub output_encoding: Option<String>,
}

/// The role of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Generalized along its hierarchy; needs one.
    QuasiIdentifier,
    /// Kept as is; privacy models may protect it.
    Sensitive,
    /// Kept as is.
    Insensitive,
    /// Removed from the output.
    Identifying,
}

/// One column's declaration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttributeSpec {
    /// The column's role.
    pub role: Role,
    /// Its generalization hierarchy (quasi-identifiers; sensitive attributes for some models).
    pub hierarchy: Option<HierarchySpec>,
    /// How local recoding generalizes a quasi-identifier: `numeric` and `ordinal` ones by ranges of
    /// values, `categorical` ones along their hierarchy. When absent: categorical if a hierarchy is
    /// given, else numeric (every value must then be a number).
    pub data_type: Option<DataType>,
    /// For an `ordinal` quasi-identifier: every value of the column, lowest first; absent means the
    /// column's natural order (numeric when every value is a number, else text).
    pub order: Option<Vec<String>>,
    /// For an `identifying` column: what is published instead of its values (dropped when absent).
    pub operator: Option<OperatorSpec>,
    /// For a quasi-identifier of a full-domain job: not generalized, but replaced within each
    /// published class by the class's aggregate (ARX's microaggregation).
    pub aggregate: Option<AggregateFunction>,
    /// For a quasi-identifier of a full-domain job: its weight in the metrics that sum over attributes
    /// (precision, height, nu_entropy, granularity); 1 when absent, the weights then divided by the
    /// largest (ARX's attribute weights).
    pub weight: Option<f64>,
    /// For a quasi-identifier of a full-domain job: the lowest hierarchy level it may be published at
    /// (0 when absent).
    pub min_level: Option<u64>,
    /// For a quasi-identifier of a full-domain job: the highest hierarchy level it may be published at
    /// (the hierarchy's top when absent).
    pub max_level: Option<u64>,
}

/// How an aggregated quasi-identifier summarises a published class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregateFunction {
    /// The arithmetic mean (numbers).
    Mean,
    /// The geometric mean (positive numbers).
    GeometricMean,
    /// The median: the lower middle value (numbers).
    Median,
    /// The most frequent value (any values; ties to the lowest number, else the first in text order).
    Mode,
    /// `[min .. max]` (numbers).
    Interval,
}

impl AggregateFunction {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            AggregateFunction::Mean => "mean",
            AggregateFunction::GeometricMean => "geometric_mean",
            AggregateFunction::Median => "median",
            AggregateFunction::Mode => "mode",
            AggregateFunction::Interval => "interval",
        }
    }
}

/// What an identifying column publishes ([`crate::core::identifiers`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum OperatorSpec {
    /// Left out of the output (the default).
    Drop {},
    /// A keyed pseudonym of each value (HMAC-SHA-256 under the tenant's key, or the CLI's key file).
    Pseudonym {},
    /// Some characters kept, the others replaced by a fill character.
    Mask {
        /// Characters kept (default 4).
        keep: Option<u64>,
        /// `start` or `end` (default): which characters are kept.
        from: Option<MaskFrom>,
        /// The character written for each hidden one (default `*`).
        fill: Option<String>,
    },
    /// The same text in every cell.
    Replace {
        /// The text.
        value: String,
    },
}

/// Which end of a value a mask keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskFrom {
    /// The first characters.
    Start,
    /// The last characters.
    End,
}

/// The kind of values of a quasi-identifier, for local recoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    /// Generalized along the hierarchy.
    Categorical,
    /// Numbers; generalized to ranges `[low .. high]`.
    Numeric,
    /// Ordered values; generalized to ranges of the order.
    Ordinal,
    /// ISO dates (`YYYY-MM-DD`); generalized to ranges of days by Mondrian, and along a default date
    /// hierarchy (month, year, decade) by the algorithms that need one when none is given.
    Date,
    /// ISO date-times (`YYYY-MM-DDTHH:MM[:SS]`, or a space for the `T`; plain dates are midnight);
    /// generalized to ranges of time by Mondrian.
    Datetime,
}

/// Where a hierarchy comes from.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum HierarchySpec {
    /// A file (ARX CSV, or JSON when it ends in `.json`), relative to the spec file (CLI only).
    Path {
        /// File path.
        path: String,
        /// Delimiter of an ARX CSV file; `;` when absent.
        delimiter: Option<String>,
    },
    /// A stored hierarchy (service only).
    Id {
        /// Hierarchy id.
        id: String,
    },
    /// Inline rows, original value first.
    Levels {
        /// One row per original value.
        levels: Vec<Vec<String>>,
    },
    /// Inline ARX CSV text.
    Arx {
        /// The file's text.
        arx: String,
        /// Delimiter; `;` when absent.
        delimiter: Option<String>,
    },
    /// Built from parameters against the column's values (see [`crate::domain::builders`]).
    Builder {
        /// The builder.
        builder: crate::domain::builders::BuilderSpec,
    },
}

/// The seeded COUNT-query workload whose mean relative error the report gives (see
/// [`crate::core::measures::QueryWorkload`]); absent fields take the defaults.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryWorkloadSpec {
    /// Number of queries, 1 to [`MAX_WORKLOAD_QUERIES`]; 1000 when absent.
    pub queries: Option<u64>,
    /// Seed of the query generator; 1 when absent.
    pub seed: Option<u64>,
    /// Most quasi-identifiers one query constrains, at least 1 (capped at the number of
    /// quasi-identifiers); 3 when absent.
    pub max_dimensions: Option<u64>,
}

/// Most queries a workload may ask for.
pub const MAX_WORKLOAD_QUERIES: u64 = 100_000;

/// What happens to suppressed records in the output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuppressedRecords {
    /// Written with `*` in every quasi-identifier (ARX's behaviour).
    #[default]
    Mask,
    /// Left out of the output.
    Remove,
}

/// The algorithm with its parameters: a full-domain search over the generalization lattice, or a local
/// recoding.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AlgorithmSpec {
    /// The fastest exact algorithm.
    #[default]
    Optimal,
    /// The engine's best-first bounded search.
    BestFirst,
    /// Optimal Lattice Anonymization.
    Ola,
    /// Flash.
    Flash,
    /// Incognito.
    Incognito {
        /// Super-Root Incognito (LeFevre et al. 2005 §3.3): each family of candidates rolls up from the
        /// frequency set of its common lowest node.
        #[serde(default)]
        super_root: bool,
    },
    /// Samarati's binary search (heuristic).
    Samarati,
    /// Datafly (heuristic).
    Datafly {
        /// Tie-break seed; 0 when absent.
        #[serde(default)]
        seed: u64,
    },
    /// Lightning-style best-effort search (heuristic, anytime): the best solution found within the time
    /// limit, proven optimal when the search ends first.
    Lightning {
        /// Milliseconds the search may run; 30 000 when absent.
        time_limit_ms: Option<u64>,
    },
    /// Genetic search over level vectors (heuristic, anytime).
    Genetic {
        /// Milliseconds the search may run; 30 000 when absent.
        time_limit_ms: Option<u64>,
        /// Seed of every random draw; 0 when absent.
        #[serde(default)]
        seed: u64,
        /// Most generations; unlimited when absent (the time limit or convergence ends the search).
        generations: Option<u32>,
    },
    /// Every node (small lattices only).
    Exhaustive {
        /// Largest lattice accepted.
        #[serde(default)]
        max_nodes: Option<u64>,
    },
    /// Mondrian multidimensional partitioning (LeFevre et al. 2006), local recoding.
    Mondrian {
        /// Relaxed partitioning: records with the median value may go to either side.
        #[serde(default)]
        relaxed: bool,
        /// Quasi-identifiers to split first, in order (the others by widest normalized range).
        #[serde(default)]
        split_preference: Vec<String>,
    },
    /// MDAV microaggregation (Domingo-Ferrer & Mateo-Sanz 2002), local recoding: groups of at least k
    /// records, numeric quasi-identifiers published as their group's centroid.
    Mdav,
    /// Greedy k-member clustering (Byun et al. 2007), local recoding.
    KMember {
        /// Seed of the first record; 0 when absent.
        #[serde(default)]
        seed: u64,
    },
    /// Top-down partitioning (Xu et al. 2006), local recoding.
    TopDown {
        /// Seed of the first records and assignment orders; 0 when absent.
        #[serde(default)]
        seed: u64,
    },
    /// PAIR-ENUM (Gorla 2019): clustering that keeps functional dependencies.
    PairEnum {
        /// Measure distances by exact match (0 or 1) instead of the entropy distance.
        #[serde(default)]
        exact_match: bool,
        /// Break utility ties by the dependency instances preserved; true when absent.
        #[serde(default = "default_true")]
        prefer_preserved: bool,
        /// Opt-1: candidate partners per cluster (8 when absent); `all_pairs` considers every pair.
        nearest_clusters: Option<u64>,
        /// Consider every pair of clusters (slow; the thesis's unoptimized algorithm).
        #[serde(default)]
        all_pairs: bool,
        /// Opt-2: incremental evaluation of candidates; true when absent.
        #[serde(default = "default_true")]
        incremental: bool,
    },
    /// k-ASSEMBLE (Gorla 2019): randomized clustering that keeps functional dependencies.
    KAssemble {
        /// Seed of the random seeds drawn; 0 when absent.
        #[serde(default)]
        seed: u64,
        /// Seeds drawn per round (3 when absent).
        pool: Option<u64>,
        /// Measure distances by exact match (0 or 1) instead of the entropy distance.
        #[serde(default)]
        exact_match: bool,
        /// Break utility ties by the dependency instances preserved; true when absent.
        #[serde(default = "default_true")]
        prefer_preserved: bool,
        /// Opt-2: incremental evaluation of candidates; true when absent.
        #[serde(default = "default_true")]
        incremental: bool,
    },
    /// Hybrid k-anonymization (Nergiz et al. 2013): full-domain generalization plus relocation of a
    /// bounded share of quasi-identifier cells.
    Hybrid {
        /// Share of quasi-identifier cells that may change, in [0, 1] (0.01 when absent).
        relocation_limit: Option<f64>,
        /// Significance level of the chi-square test on group sizes (α-hybrid), in (0, 1).
        alpha: Option<f64>,
        /// `randomized` (default) or `deterministic`.
        #[serde(default)]
        mode: HybridModeSpec,
        /// Completion sources: `more_than` (the paper's rule, default) or `at_least`.
        #[serde(default)]
        completion: CompletionSpec,
        /// M-Hybrid: Mondrian's multidimensional partition plus relocation, instead of a full-domain
        /// generalization (false when absent).
        #[serde(default)]
        multidimensional: bool,
    },
    /// Vertical fragmentation (Zakerzadeh et al.): the quasi-identifiers are split into fragments that
    /// share only the class column, each fragment is anonymized on its own, and joins on the class are
    /// repaired. Publishes one table per fragment.
    Fragmentation(Box<FragmentationSpec>),
}

/// The parameters of a fragmentation job (`"algorithm": {"type": "fragmentation", ...}`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FragmentationSpec {
    /// The class column: a `sensitive` attribute, published in every fragment.
    pub class: String,
    /// Fragments to build (2 when absent).
    pub fragments: Option<u64>,
    /// How joins on the class are repaired (`dgbe` when absent).
    #[serde(default)]
    pub strategy: RepairStrategySpec,
    /// δ of `delta_selectivity`, in (0, 1] (0.5 when absent).
    pub delta: Option<f64>,
    /// Equal-frequency bins of numeric features in the mutual-information estimate (10 when absent).
    pub bins: Option<u64>,
    /// Whether FMRMR's redundancy counts each feature with itself (`included`, the default) or not.
    #[serde(default)]
    pub diagonal: DiagonalSpec,
    /// Fewest features in a fragment (1 when absent).
    pub min_fragment_size: Option<u64>,
    /// Most features in a fragment (unbounded when absent).
    pub max_fragment_size: Option<u64>,
    /// The local recoding that anonymizes each fragment (Mondrian when absent).
    pub anonymizer: Option<AlgorithmSpec>,
}

/// The repair of joins on the class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairStrategySpec {
    /// Every equivalence class takes its majority class value.
    Naive,
    /// Dependency-graph-based enforcement (Algorithm 3).
    #[default]
    Dgbe,
    /// δ-selectivity (Algorithm 4): class values published per equivalence class, as sets.
    DeltaSelectivity,
}

/// Whether FMRMR's redundancy term counts I(k; k) = H(k).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagonalSpec {
    /// Counted (the paper's literal formula).
    #[default]
    Included,
    /// Left out.
    Excluded,
}

fn default_true() -> bool {
    true
}

/// How hybrid k-anonymization makes its choices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HybridModeSpec {
    /// Random targets, sources and records from a secret key (ChaCha20).
    #[default]
    Randomized,
    /// Closest groups and cheapest records (reproducible, and replayable by an adversary).
    Deterministic,
}

/// Which groups may give records to complete a nearly full group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionSpec {
    /// Sources with more than `2k − |g|` records (they keep more than k).
    #[default]
    MoreThan,
    /// Sources with at least `2k − |g|` records (they may keep exactly k).
    AtLeast,
}

/// Whether an algorithm searches the lattice or recodes locally.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// Full-domain generalization by a lattice search.
    FullDomain(Algorithm),
    /// Local recoding.
    Local(LocalAlgorithmSpec),
}

/// A local-recoding algorithm with its parameters as the spec gives them (the same variants as
/// [`AlgorithmSpec`]'s local ones).
pub type LocalAlgorithmSpec = AlgorithmSpec;

impl AlgorithmSpec {
    /// The method the spec asks for.
    pub fn method(&self) -> Method {
        match self {
            AlgorithmSpec::Optimal => Method::FullDomain(Algorithm::Optimal),
            AlgorithmSpec::BestFirst => Method::FullDomain(Algorithm::BestFirst),
            AlgorithmSpec::Ola => Method::FullDomain(Algorithm::Ola),
            AlgorithmSpec::Flash => Method::FullDomain(Algorithm::Flash),
            AlgorithmSpec::Incognito { super_root } => Method::FullDomain(Algorithm::Incognito {
                super_root: *super_root,
            }),
            AlgorithmSpec::Samarati => Method::FullDomain(Algorithm::Samarati),
            &AlgorithmSpec::Datafly { seed } => Method::FullDomain(Algorithm::Datafly { seed }),
            &AlgorithmSpec::Lightning { time_limit_ms } => {
                Method::FullDomain(Algorithm::Lightning {
                    time_limit_ms: time_limit_ms.unwrap_or(DEFAULT_TIME_LIMIT_MS),
                })
            }
            &AlgorithmSpec::Genetic {
                time_limit_ms,
                seed,
                generations,
            } => Method::FullDomain(Algorithm::Genetic(GeneticOptions {
                time_limit_ms: time_limit_ms.unwrap_or(DEFAULT_TIME_LIMIT_MS),
                seed,
                generations,
            })),
            &AlgorithmSpec::Exhaustive { max_nodes } => Method::FullDomain(Algorithm::Exhaustive {
                max_nodes: max_nodes.unwrap_or(DEFAULT_EXHAUSTIVE_LIMIT),
            }),
            AlgorithmSpec::Fragmentation(spec) => spec
                .anonymizer
                .as_ref()
                .map_or(Method::Local(AlgorithmSpec::default_anonymizer()), |a| {
                    a.method()
                }),
            local => Method::Local(local.clone()),
        }
    }

    /// The time limit an anytime search runs with (its default when the spec gives none; a
    /// fragmentation job's anonymizer's); `None` for the other algorithms.
    pub fn time_limit_ms(&self) -> Option<u64> {
        match self {
            AlgorithmSpec::Fragmentation(fragmentation) => fragmentation
                .anonymizer
                .as_ref()
                .and_then(AlgorithmSpec::time_limit_ms),
            AlgorithmSpec::Lightning { time_limit_ms }
            | AlgorithmSpec::Genetic { time_limit_ms, .. } => {
                Some(time_limit_ms.unwrap_or(DEFAULT_TIME_LIMIT_MS))
            }
            _ => None,
        }
    }

    /// The per-fragment anonymizer of a fragmentation job when the spec names none.
    pub fn default_anonymizer() -> AlgorithmSpec {
        AlgorithmSpec::Mondrian {
            relaxed: false,
            split_preference: Vec::new(),
        }
    }

    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            AlgorithmSpec::Optimal => "optimal",
            AlgorithmSpec::BestFirst => "best_first",
            AlgorithmSpec::Ola => "ola",
            AlgorithmSpec::Flash => "flash",
            AlgorithmSpec::Incognito { .. } => "incognito",
            AlgorithmSpec::Samarati => "samarati",
            AlgorithmSpec::Datafly { .. } => "datafly",
            AlgorithmSpec::Lightning { .. } => "lightning",
            AlgorithmSpec::Genetic { .. } => "genetic",
            AlgorithmSpec::Exhaustive { .. } => "exhaustive",
            AlgorithmSpec::Mondrian { .. } => "mondrian",
            AlgorithmSpec::Mdav => "mdav",
            AlgorithmSpec::KMember { .. } => "k_member",
            AlgorithmSpec::TopDown { .. } => "top_down",
            AlgorithmSpec::PairEnum { .. } => "pair_enum",
            AlgorithmSpec::KAssemble { .. } => "k_assemble",
            AlgorithmSpec::Hybrid { .. } => "hybrid",
            AlgorithmSpec::Fragmentation(_) => "fragmentation",
        }
    }
}

/// A spec problem, located by a JSON pointer, with a stable code. A validation that finds several
/// independent problems in one pass returns the first with the others in [`SpecError::others`], so a
/// user fixes them all in one round trip.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct SpecError {
    /// JSON pointer of the offending field (`""` for the whole document).
    pub pointer: String,
    /// Stable snake_case code.
    pub code: ErrorCode,
    /// Human-readable explanation, without cell values.
    pub message: String,
    /// Further problems found in the same pass, in the order they were found.
    pub others: Vec<SpecError>,
}

impl SpecError {
    /// A new error.
    pub fn new(pointer: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            code,
            message: message.into(),
            others: Vec::new(),
        }
    }

    /// Every problem: this one, then the others.
    pub fn all(&self) -> impl Iterator<Item = &SpecError> {
        std::iter::once(self).chain(&self.others)
    }

    /// Every problem, owned and without nesting.
    fn into_all(mut self) -> Vec<SpecError> {
        let others = std::mem::take(&mut self.others);
        let mut all = vec![self];
        all.extend(others.into_iter().flat_map(SpecError::into_all));
        all
    }
}

/// Collects the problems of one validation pass, so that independent mistakes are reported together.
#[derive(Debug, Default)]
pub struct Problems(Vec<SpecError>);

impl Problems {
    /// No problems yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a problem (and the others it carries).
    pub fn push(&mut self, error: SpecError) {
        self.0.extend(error.into_all());
    }

    /// The value of `result`, or `None` with its problems recorded.
    pub fn keep<T>(&mut self, result: Result<T, SpecError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.push(error);
                None
            }
        }
    }

    /// `Ok` when no problem was recorded; otherwise the first problem carrying the rest.
    pub fn finish(self) -> Result<(), SpecError> {
        let mut problems = self.0.into_iter();
        match problems.next() {
            None => Ok(()),
            Some(mut first) => {
                first.others = problems.collect();
                Err(first)
            }
        }
    }

    /// `value` when no problem was recorded; otherwise the first problem carrying the rest. A part
    /// that yields no value records a problem, so a missing value without one is a bug, reported as
    /// `invalid_spec` rather than passed on.
    pub fn finish_with<T>(self, value: Option<T>) -> Result<T, SpecError> {
        self.finish()?;
        value.ok_or_else(|| {
            SpecError::new(
                "",
                ErrorCode::InvalidSpec,
                "the spec could not be resolved against the dataset",
            )
        })
    }
}

/// Escapes one JSON-pointer segment (RFC 6901).
pub fn pointer_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

impl JobSpec {
    /// Whether an identifying column asks for pseudonyms (the job then needs the tenant's key).
    pub fn uses_pseudonyms(&self) -> bool {
        self.attributes
            .values()
            .any(|a| a.operator == Some(OperatorSpec::Pseudonym {}))
    }

    /// Parses a spec, reporting the location of the first problem.
    pub fn from_json(bytes: &[u8]) -> Result<Self, SpecError> {
        parse_json(bytes)
    }
}

/// Parses a JSON document into `T`, reporting the JSON pointer of the first problem (`malformed_json`
/// for syntax errors, `invalid_spec` otherwise).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, SpecError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let pointer: String = e
            .path()
            .iter()
            .filter_map(|seg| match seg {
                serde_path_to_error::Segment::Seq { index } => Some(format!("/{index}")),
                serde_path_to_error::Segment::Map { key } => {
                    Some(format!("/{}", pointer_segment(key)))
                }
                serde_path_to_error::Segment::Enum { variant } => {
                    Some(format!("/{}", pointer_segment(variant)))
                }
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        let inner = e.into_inner();
        let code = if inner.is_syntax() || inner.is_eof() {
            ErrorCode::MalformedJson
        } else {
            ErrorCode::InvalidSpec
        };
        let mut message = inner.to_string();
        if message.contains("untagged enum HierarchySpec") {
            message =
                "a hierarchy is one of {\"path\": ...}, {\"id\": ...}, {\"levels\": [[...], ...]}, \
                       {\"arx\": \"...\"} or {\"builder\": {\"type\": ...}}"
                    .into();
        }
        SpecError::new(pointer, code, message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::models::d_density::DDensitySpec;
    use crate::domain::models::delta_range::DeltaRangeSpec;
    use crate::domain::models::distinct_l_diversity::DistinctLDiversitySpec;
    use crate::domain::models::entropy_l_diversity::EntropyLDiversitySpec;
    use crate::domain::models::l_categorical_diversity::LCategoricalDiversitySpec;
    use crate::domain::models::lr_linear_diversity::LrLinearDiversitySpec;
    use crate::domain::models::recursive_cl_diversity::RecursiveClDiversitySpec;

    #[test]
    fn parses_the_issue_example() {
        let spec = JobSpec::from_json(
            br#"{"csv": {"delimiter": ";"},
                 "attributes": {"age": {"role": "quasi_identifier", "hierarchy": {"path": "age.csv"}},
                                "salary-class": {"role": "sensitive"}},
                 "privacy_models": [{"type": "k_anonymity", "k": 5}],
                 "suppression_limit": 0.04,
                 "algorithm": {"type": "flash"},
                 "metric": "nu_entropy"}"#,
        )
        .unwrap();
        assert_eq!(spec.metric, MetricKind::NuEntropy);
        assert!(matches!(spec.algorithm, AlgorithmSpec::Flash));
        assert!(matches!(
            spec.attributes["age"].hierarchy,
            Some(HierarchySpec::Path { .. })
        ));
        assert!(spec.query_workload.queries.is_none());
    }

    #[test]
    fn incognito_takes_the_super_root_option() {
        let method = |algorithm: &str| {
            let json = format!(
                r#"{{"attributes": {{}}, "privacy_models": [], "algorithm": {algorithm}}}"#
            );
            JobSpec::from_json(json.as_bytes()).map(|s| s.algorithm.method())
        };
        assert_eq!(
            method(r#"{"type": "incognito"}"#).unwrap(),
            Method::FullDomain(Algorithm::Incognito { super_root: false })
        );
        assert_eq!(
            method(r#"{"type": "incognito", "super_root": true}"#).unwrap(),
            Method::FullDomain(Algorithm::Incognito { super_root: true })
        );
        assert!(method(r#"{"type": "incognito", "superroot": true}"#).is_err());
    }

    #[test]
    fn parses_the_query_workload() {
        let spec = JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [],
                 "query_workload": {"queries": 50, "seed": 9, "max_dimensions": 2}}"#,
        )
        .unwrap();
        let w = spec.query_workload;
        assert_eq!(
            (w.queries, w.seed, w.max_dimensions),
            (Some(50), Some(9), Some(2))
        );
        let e = JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [], "query_workload": {"querys": 5}}"#,
        )
        .unwrap_err();
        assert_eq!(
            (e.pointer.as_str(), e.code.as_str()),
            ("/query_workload/querys", "invalid_spec")
        );
    }

    #[test]
    fn parses_l_diversity_models() {
        let spec = JobSpec::from_json(
            br#"{"attributes": {},
                 "privacy_models": [{"type": "distinct_l_diversity", "attribute": "diagnosis", "l": 2},
                                    {"type": "entropy_l_diversity", "attribute": "diagnosis", "l": 3},
                                    {"type": "recursive_cl_diversity", "attribute": "diagnosis", "c": 3, "l": 2}]}"#,
        )
        .unwrap();
        assert!(matches!(
            &spec.privacy_models[0],
            PrivacyModelSpec::DistinctLDiversity(DistinctLDiversitySpec { attribute, l: 2 }) if attribute == "diagnosis"
        ));
        assert!(matches!(
            spec.privacy_models[1],
            PrivacyModelSpec::EntropyLDiversity(EntropyLDiversitySpec { l: 3, .. })
        ));
        assert!(matches!(
            spec.privacy_models[2],
            PrivacyModelSpec::RecursiveClDiversity(RecursiveClDiversitySpec { c, l: 2, .. }) if c == 3.0
        ));
        let e = JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [{"type": "distinct_l_diversity", "attribute": "d", "l": 2, "c": 1}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.code, "invalid_spec");
    }

    #[test]
    fn parses_categorical_and_linear_models() {
        let spec = JobSpec::from_json(
            br#"{"attributes": {},
                 "privacy_models": [
                   {"type": "l_categorical_diversity", "attribute": "diagnosis", "l": 2,
                    "categories": {"terminal": ["cancer", "AIDS"], "infectious": ["AIDS", "TB"]},
                    "dont_care": ["cold"]},
                   {"type": "d_density", "attribute": "diagnosis", "d": 0.5, "mu": 0.2,
                    "categories": {"terminal": ["cancer"]}, "max_categories": 20},
                   {"type": "mu_dilution", "attribute": "diagnosis", "mu": 0.1, "dont_care": ["cold"]},
                   {"type": "cl_categorical_recursive_diversity", "attribute": "diagnosis", "c": 2, "l": 2,
                    "categories": {}},
                   {"type": "cl_density", "attribute": "diagnosis", "c": 2, "l": 2, "categories": {}},
                   {"type": "delta_range", "attribute": "salary", "delta": 1000},
                   {"type": "lr_linear_diversity", "attribute": "salary", "l": 3, "r": 0.5,
                    "class_function": {"type": "piecewise_linear", "points": [[0, 0], [8000, 1]]}}]}"#,
        )
        .unwrap();
        assert!(matches!(
            &spec.privacy_models[0],
            PrivacyModelSpec::LCategoricalDiversity(LCategoricalDiversitySpec { categories, dont_care, max_categories: None, .. })
                if categories.len() == 2 && dont_care.len() == 1
        ));
        assert!(matches!(
            spec.privacy_models[1],
            PrivacyModelSpec::DDensity(DDensitySpec {
                mu: Some(_),
                max_categories: Some(20),
                ..
            })
        ));
        assert!(matches!(
            spec.privacy_models[5],
            PrivacyModelSpec::DeltaRange(DeltaRangeSpec {
                class_function: ClassFunctionSpec::Identity,
                ..
            })
        ));
        assert!(matches!(
            &spec.privacy_models[6],
            PrivacyModelSpec::LrLinearDiversity(LrLinearDiversitySpec {
                class_function: ClassFunctionSpec::PiecewiseLinear { points }, ..
            }) if points.len() == 2
        ));
        let e = JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [{"type": "delta_range", "attribute": "s", "delta": 1,
                 "class_function": {"type": "cubic"}}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.code, "invalid_spec");
    }

    #[test]
    fn errors_carry_a_pointer() {
        let e = JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [{"type": "k_anonymity", "k": "5"}]}"#,
        )
        .unwrap_err();
        // internally tagged enums are buffered, so the pointer stops at the model
        assert_eq!(e.pointer, "/privacy_models/0");
        let e = JobSpec::from_json(br#"{"attributes": {}, "privacy_models": [], "metrc": "x"}"#)
            .unwrap_err();
        assert_eq!(e.code, "invalid_spec");
        assert!(e.message.contains("metrc"));
        let e = JobSpec::from_json(br#"{"attributes": "#).unwrap_err();
        assert_eq!(e.code, "malformed_json");
        let e = JobSpec::from_json(
            br#"{"attributes": {}, "privacy_models": [], "algorithm": {"type": "simulated_annealing"}}"#,
        )
        .unwrap_err();
        assert_eq!(e.pointer, "/algorithm/type");
    }
}
