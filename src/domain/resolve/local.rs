//! Resolves the local-recoding part of a spec: how each quasi-identifier generalizes (a hierarchy, or a
//! numeric or ordinal value order), the algorithm's options with column names turned into indices, and
//! the functional dependencies. Errors name columns and counts, never cell values.

use std::collections::HashMap;

use crate::core::data::{Column, GeneralizationMap, Table};
use crate::core::input::SensitiveAttribute;
use crate::core::local::clustering::{
    KAssembleOptions, KMemberOptions, PairEnumOptions, PreserveMode, TopDownOptions,
};
use crate::core::local::hybrid::{Completion, HybridMode};
use crate::core::local::mdav::MdavOptions;
use crate::core::local::{Domain, LocalAttribute, LocalInput, MondrianOptions, OrderedDomain};
use crate::error_code::ErrorCode;

use crate::domain::analysis::dependencies::DependencyColumns;
use crate::domain::column_values::natural_ranks;
use crate::domain::dates::{date_seconds, datetime_seconds};
use crate::domain::spec::{
    AttributeSpec, CompletionSpec, DataType, FunctionalDependencySpec, HybridModeSpec,
    LocalAlgorithmSpec, PrivacyModelSpec, SpecError,
};

/// How a quasi-identifier generalizes in a local recoding (owned).
#[derive(Debug, Clone)]
pub enum LocalDomain {
    /// Along a bound hierarchy.
    Hierarchy(GeneralizationMap),
    /// Along a value order; `numeric` when the values are numbers.
    Ordered(OrderedDomain),
}

impl LocalDomain {
    /// The engine's borrowed view.
    pub fn view(&self) -> Domain<'_> {
        match self {
            LocalDomain::Hierarchy(map) => Domain::Hierarchy(map),
            LocalDomain::Ordered(order) => Domain::Ordered(order),
        }
    }
}

/// A column a functional dependency names: a quasi-identifier (by its index among the
/// quasi-identifiers) or another column (by its table index), which is never generalized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DependencyColumn {
    /// The `index`-th quasi-identifier.
    QuasiIdentifier(usize),
    /// A column of the table that is published as it is.
    Other(usize),
}

/// A functional dependency resolved to columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedDependency {
    /// Determining columns.
    pub lhs: Vec<DependencyColumn>,
    /// Determined columns.
    pub rhs: Vec<DependencyColumn>,
}

/// The local-recoding part of a prepared job.
#[derive(Debug, Clone)]
pub struct LocalPlan {
    /// Quasi-identifiers: table column and domain, in spec order of the table's columns.
    pub attributes: Vec<(usize, LocalDomain)>,
    /// The algorithm and its options.
    pub algorithm: LocalAlgorithm,
    /// The functional dependencies (may be empty).
    pub dependencies: Vec<ResolvedDependency>,
}

/// A local algorithm with its options resolved against the table, as the engine takes them (hybrid
/// k-anonymization's secret key is drawn when the job runs).
#[derive(Debug, Clone, PartialEq)]
pub enum LocalAlgorithm {
    /// Mondrian.
    Mondrian(MondrianOptions),
    /// MDAV microaggregation.
    Mdav(MdavOptions),
    /// Greedy k-member clustering.
    KMember(KMemberOptions),
    /// Top-down partitioning.
    TopDown(TopDownOptions),
    /// PAIR-ENUM.
    PairEnum(PairEnumOptions),
    /// k-ASSEMBLE.
    KAssemble(KAssembleOptions),
    /// Hybrid k-anonymization.
    Hybrid {
        /// The k of the job's k-anonymity.
        k: u64,
        /// Share of quasi-identifier cells that may change.
        relocation_limit: f64,
        /// Significance level of the chi-square variant.
        alpha: Option<f64>,
        /// Deterministic or randomized choices.
        mode: HybridMode,
        /// Whether completion sources may be left with exactly k records.
        completion: Completion,
        /// M-Hybrid (Mondrian plus relocation) instead of S-Hybrid.
        multidimensional: bool,
    },
}

impl LocalAlgorithm {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            LocalAlgorithm::Mondrian { .. } => "mondrian",
            LocalAlgorithm::Mdav(_) => "mdav",
            LocalAlgorithm::KMember { .. } => "k_member",
            LocalAlgorithm::TopDown { .. } => "top_down",
            LocalAlgorithm::PairEnum { .. } => "pair_enum",
            LocalAlgorithm::KAssemble { .. } => "k_assemble",
            LocalAlgorithm::Hybrid { .. } => "hybrid",
        }
    }
}

impl LocalPlan {
    /// The engine's view of `table`; `sensitive` are the sensitive attributes in slot order.
    pub fn input<'a>(
        &'a self,
        table: &'a Table,
        sensitive: Vec<SensitiveAttribute<'a>>,
    ) -> LocalInput<'a> {
        LocalInput {
            rows: table.row_count(),
            quasi_identifiers: self
                .attributes
                .iter()
                .map(|(c, domain)| {
                    let column = table.column(*c);
                    LocalAttribute {
                        name: &column.name,
                        codes: &column.codes,
                        distinct: column.dictionary.len(),
                        domain: domain.view(),
                    }
                })
                .collect(),
            sensitive,
        }
    }
}

/// The domain of quasi-identifier `column` declared at `pointer` for `algorithm`; `map` is its bound
/// hierarchy, if any. Mondrian and the multidimensional hybrid honour `data_type`; the clustering
/// algorithms and the single-dimensional hybrid generalize along hierarchies only.
pub fn local_domain(
    column: &Column,
    attribute: &AttributeSpec,
    map: Option<GeneralizationMap>,
    pointer: &str,
    algorithm: &LocalAlgorithmSpec,
) -> Result<LocalDomain, SpecError> {
    let partitions = matches!(
        algorithm,
        LocalAlgorithmSpec::Mondrian { .. }
            | LocalAlgorithmSpec::Mdav
            | LocalAlgorithmSpec::Hybrid {
                multidimensional: true,
                ..
            }
    );
    if !partitions {
        return match map {
            Some(map) => Ok(LocalDomain::Hierarchy(map)),
            None => Err(SpecError::new(
                format!("{pointer}/hierarchy"),
                ErrorCode::MissingHierarchy,
                format!(
                    "quasi-identifier '{}' needs a hierarchy: {} generalizes along hierarchies only",
                    column.name,
                    algorithm.name()
                ),
            )),
        };
    }
    let data_type = attribute.data_type.unwrap_or(if map.is_some() {
        DataType::Categorical
    } else {
        DataType::Numeric
    });
    if attribute.order.is_some() && data_type != DataType::Ordinal {
        return Err(SpecError::new(
            format!("{pointer}/order"),
            ErrorCode::InvalidOrder,
            format!(
                "column '{}': an order applies to ordinal quasi-identifiers only",
                column.name
            ),
        ));
    }
    match data_type {
        DataType::Categorical => match map {
            Some(map) => Ok(LocalDomain::Hierarchy(map)),
            None => Err(SpecError::new(
                format!("{pointer}/hierarchy"),
                ErrorCode::MissingHierarchy,
                format!(
                    "categorical quasi-identifier '{}' needs a hierarchy (or declare data_type numeric or ordinal)",
                    column.name
                ),
            )),
        },
        DataType::Numeric => {
            let values: Vec<&str> = column.dictionary.values().collect();
            let numbers: Vec<Option<f64>> = values
                .iter()
                .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
                .collect();
            let bad = numbers.iter().filter(|n| n.is_none()).count();
            if bad > 0 {
                let hint = if attribute.data_type.is_none() {
                    " (a quasi-identifier without a hierarchy is numeric unless declared ordinal)"
                } else {
                    ""
                };
                return Err(SpecError::new(
                    pointer.to_string(),
                    ErrorCode::NotNumeric,
                    format!(
                        "column '{}' is numeric but {bad} of its {} distinct values are not numbers{hint}",
                        column.name,
                        values.len()
                    ),
                ));
            }
            let ranks = natural_ranks(&column.dictionary);
            let numbers = numbers.into_iter().map(|n| n.unwrap_or(0.0)).collect();
            Ok(LocalDomain::Ordered(OrderedDomain::new(ranks, Some(numbers))))
        }
        DataType::Date | DataType::Datetime => {
            let (read, what): (fn(&str) -> Option<i64>, &str) = if data_type == DataType::Date {
                (date_seconds, "ISO dates (YYYY-MM-DD)")
            } else {
                (datetime_seconds, "ISO date-times (YYYY-MM-DDTHH:MM[:SS])")
            };
            let seconds: Vec<Option<i64>> = column.dictionary.values().map(read).collect();
            let bad = seconds.iter().filter(|s| s.is_none()).count();
            if bad > 0 {
                return Err(SpecError::new(
                    pointer.to_string(),
                    ErrorCode::NotDate,
                    format!(
                        "column '{}' holds {what} but {bad} of its {} distinct values are not",
                        column.name,
                        seconds.len()
                    ),
                ));
            }
            let seconds: Vec<i64> = seconds.into_iter().map(|s| s.unwrap_or(0)).collect();
            let mut order: Vec<u32> = (0..seconds.len() as u32).collect();
            order.sort_by_key(|&c| seconds[c as usize]);
            let mut ranks = vec![0u32; order.len()];
            for (rank, &code) in order.iter().enumerate() {
                ranks[code as usize] = rank as u32;
            }
            let numbers = seconds.iter().map(|&s| s as f64).collect();
            Ok(LocalDomain::Ordered(OrderedDomain::new(ranks, Some(numbers))))
        }
        DataType::Ordinal => {
            let ranks = match &attribute.order {
                None => natural_ranks(&column.dictionary),
                Some(order) => declared_ranks(column, order, &format!("{pointer}/order"))?,
            };
            Ok(LocalDomain::Ordered(OrderedDomain::new(ranks, None)))
        }
    }
}

/// The rank of every code of `column` in the declared `order` (values the column lacks are skipped).
fn declared_ranks(column: &Column, order: &[String], pointer: &str) -> Result<Vec<u32>, SpecError> {
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(order.len());
    for (i, value) in order.iter().enumerate() {
        if position.insert(value.as_str(), i).is_some() {
            return Err(SpecError::new(
                pointer,
                ErrorCode::InvalidOrder,
                format!("the order of '{}' lists a value twice", column.name),
            ));
        }
    }
    let positions: Vec<Option<usize>> = column
        .dictionary
        .values()
        .map(|v| position.get(v).copied())
        .collect();
    let missing = positions.iter().filter(|p| p.is_none()).count();
    if missing > 0 {
        return Err(SpecError::new(
            pointer,
            ErrorCode::IncompleteOrder,
            format!(
                "the order of '{}' misses {missing} of the column's {} distinct values",
                column.name,
                positions.len()
            ),
        ));
    }
    let mut codes: Vec<u32> = (0..positions.len() as u32).collect();
    codes.sort_by_key(|&c| positions[c as usize]);
    Ok(crate::domain::column_values::ranks_of(&codes))
}

/// Resolves the algorithm's options; `names` are the quasi-identifiers' column names in order, `models`
/// the spec's privacy models (the clustering and hybrid algorithms support k-anonymity only).
pub fn local_algorithm(
    spec: &LocalAlgorithmSpec,
    names: &[&str],
    models: &[PrivacyModelSpec],
) -> Result<LocalAlgorithm, SpecError> {
    let k = || only_k_anonymity(spec.name(), models);
    Ok(match spec {
        LocalAlgorithmSpec::Mondrian {
            relaxed,
            split_preference,
        } => {
            let mut indices = Vec::with_capacity(split_preference.len());
            for (i, name) in split_preference.iter().enumerate() {
                let Some(index) = names.iter().position(|n| n == name) else {
                    return Err(SpecError::new(
                        format!("/algorithm/split_preference/{i}"),
                        ErrorCode::UnknownQuasiIdentifier,
                        format!("'{name}' is not a quasi-identifier"),
                    ));
                };
                if indices.contains(&index) {
                    return Err(SpecError::new(
                        format!("/algorithm/split_preference/{i}"),
                        ErrorCode::DuplicateQuasiIdentifier,
                        format!("'{name}' is listed twice"),
                    ));
                }
                indices.push(index);
            }
            LocalAlgorithm::Mondrian(MondrianOptions {
                relaxed: *relaxed,
                split_preference: indices,
            })
        }
        LocalAlgorithmSpec::Mdav => LocalAlgorithm::Mdav(MdavOptions { k: size(k()?) }),
        &LocalAlgorithmSpec::KMember { seed } => LocalAlgorithm::KMember(KMemberOptions {
            k: size(k()?),
            seed,
        }),
        &LocalAlgorithmSpec::TopDown { seed } => LocalAlgorithm::TopDown(TopDownOptions {
            k: size(k()?),
            seed,
        }),
        &LocalAlgorithmSpec::PairEnum {
            exact_match,
            prefer_preserved,
            nearest_clusters,
            all_pairs,
            incremental,
        } => {
            if nearest_clusters == Some(0) {
                return Err(SpecError::new(
                    "/algorithm/nearest_clusters",
                    ErrorCode::InvalidParameter,
                    "nearest_clusters must be at least 1",
                ));
            }
            if all_pairs && nearest_clusters.is_some() {
                return Err(SpecError::new(
                    "/algorithm",
                    ErrorCode::UnsupportedOption,
                    "give nearest_clusters or all_pairs, not both",
                ));
            }
            LocalAlgorithm::PairEnum(PairEnumOptions {
                k: size(k()?),
                mode: preserve_mode(exact_match),
                prefer_exact: prefer_preserved,
                neighbours: if all_pairs {
                    None
                } else {
                    Some(size(nearest_clusters.unwrap_or(DEFAULT_NEAREST_CLUSTERS)))
                },
                incremental,
            })
        }
        &LocalAlgorithmSpec::KAssemble {
            seed,
            pool,
            exact_match,
            prefer_preserved,
            incremental,
        } => {
            if pool == Some(0) {
                return Err(SpecError::new(
                    "/algorithm/pool",
                    ErrorCode::InvalidParameter,
                    "pool must be at least 1",
                ));
            }
            LocalAlgorithm::KAssemble(KAssembleOptions {
                k: size(k()?),
                pool: size(pool.unwrap_or(DEFAULT_POOL)),
                seed,
                mode: preserve_mode(exact_match),
                prefer_exact: prefer_preserved,
                incremental,
            })
        }
        &LocalAlgorithmSpec::Hybrid {
            relocation_limit,
            alpha,
            mode,
            completion,
            multidimensional,
        } => {
            let relocation_limit = relocation_limit.unwrap_or(DEFAULT_RELOCATION_LIMIT);
            if !(0.0..=1.0).contains(&relocation_limit) {
                return Err(SpecError::new(
                    "/algorithm/relocation_limit",
                    ErrorCode::InvalidParameter,
                    "relocation_limit must be a number between 0 and 1",
                ));
            }
            if multidimensional && alpha.is_some() {
                return Err(SpecError::new(
                    "/algorithm/alpha",
                    ErrorCode::UnsupportedOption,
                    "the multidimensional hybrid has no statistical variant: leave out alpha",
                ));
            }
            if alpha.is_some_and(|a| !(a > 0.0 && a < 1.0)) {
                return Err(SpecError::new(
                    "/algorithm/alpha",
                    ErrorCode::InvalidParameter,
                    "alpha must be strictly between 0 and 1",
                ));
            }
            LocalAlgorithm::Hybrid {
                k: k()?,
                relocation_limit,
                alpha,
                mode: match mode {
                    HybridModeSpec::Deterministic => HybridMode::Deterministic,
                    HybridModeSpec::Randomized => HybridMode::Randomized,
                },
                completion: match completion {
                    CompletionSpec::AtLeast => Completion::AtLeast,
                    CompletionSpec::MoreThan => Completion::MoreThan,
                },
                multidimensional,
            }
        }
        full_domain => {
            return Err(SpecError::new(
                "/algorithm/type",
                ErrorCode::InvalidSpec,
                format!("{} is not a local-recoding algorithm", full_domain.name()),
            ))
        }
    })
}

/// The clustering distance: exact match, or the entropy distance that keeps values continuous.
fn preserve_mode(exact_match: bool) -> PreserveMode {
    if exact_match {
        PreserveMode::Exact
    } else {
        PreserveMode::Continuous
    }
}

/// A count from the spec as a size (saturating on 32-bit targets).
fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Default Opt-1 candidate partners of PAIR-ENUM.
pub const DEFAULT_NEAREST_CLUSTERS: u64 = 1;
/// Default seeds per round of k-ASSEMBLE.
pub const DEFAULT_POOL: u64 = 3;
/// Default share of relocatable cells of hybrid k-anonymization (the paper's experiments: 1 %).
pub const DEFAULT_RELOCATION_LIMIT: f64 = 0.01;

/// The k of the spec's single k-anonymity model, for algorithms that support nothing else.
fn only_k_anonymity(algorithm: &str, models: &[PrivacyModelSpec]) -> Result<u64, SpecError> {
    let mut k = None;
    for (i, model) in models.iter().enumerate() {
        let Some(value) = model.class_size() else {
            return Err(SpecError::new(
                format!("/privacy_models/{i}"),
                ErrorCode::UnsupportedModel,
                format!("{algorithm} supports k-anonymity (or highest_risk) only"),
            ));
        };
        k = Some(k.map_or(value, |old: u64| old.max(value)));
    }
    k.ok_or_else(|| {
        SpecError::new(
            "/privacy_models",
            ErrorCode::MissingPrivacyModel,
            format!("{algorithm} needs a k_anonymity model"),
        )
    })
}

/// Resolves the functional dependencies as table columns: every named column must exist and not be
/// removed (identifying).
pub fn dependency_columns(
    specs: &[FunctionalDependencySpec],
    table: &Table,
    identifying: &[usize],
) -> Result<Vec<DependencyColumns>, SpecError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, fd)| {
            let side = |names: &[String], side: &str| -> Result<Vec<usize>, SpecError> {
                if names.is_empty() {
                    return Err(SpecError::new(
                        format!("/functional_dependencies/{i}/{side}"),
                        ErrorCode::InvalidDependency,
                        format!("the {side} of a functional dependency names at least one column"),
                    ));
                }
                names
                    .iter()
                    .enumerate()
                    .map(|(j, name)| {
                        let pointer = format!("/functional_dependencies/{i}/{side}/{j}");
                        let Some(c) = table.column_index(name) else {
                            return Err(SpecError::new(
                                pointer,
                                ErrorCode::UnknownColumn,
                                format!("the dataset has no column '{name}'"),
                            ));
                        };
                        if identifying.contains(&c) {
                            return Err(SpecError::new(
                                pointer,
                                ErrorCode::InvalidDependency,
                                format!("column '{name}' is identifying and is not published"),
                            ));
                        }
                        Ok(c)
                    })
                    .collect()
            };
            Ok(DependencyColumns {
                lhs: side(&fd.lhs, "lhs")?,
                rhs: side(&fd.rhs, "rhs")?,
            })
        })
        .collect()
}

/// The dependencies as a local plan takes them: `quasi_identifiers` are the table indices of the
/// quasi-identifiers in order.
pub fn by_quasi_identifier(
    dependencies: &[DependencyColumns],
    quasi_identifiers: &[usize],
) -> Vec<ResolvedDependency> {
    let side = |columns: &[usize]| {
        columns
            .iter()
            .map(|&c| match quasi_identifiers.iter().position(|&q| q == c) {
                Some(q) => DependencyColumn::QuasiIdentifier(q),
                None => DependencyColumn::Other(c),
            })
            .collect()
    };
    dependencies
        .iter()
        .map(|fd| ResolvedDependency {
            lhs: side(&fd.lhs),
            rhs: side(&fd.rhs),
        })
        .collect()
}
