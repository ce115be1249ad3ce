//! Why an output may not be published.

/// The output breaks a privacy model: a bug in the engine, never expected. No values are included.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerificationError {
    /// A class is too small.
    #[error("the output failed verification: a published class has {size} records, fewer than the {needed} required")]
    ClassTooSmall {
        /// Records in the smallest offending class.
        size: u64,
        /// Records required.
        needed: u64,
    },
    /// A class breaks an l-diversity requirement.
    #[error(
        "the output failed verification: a published class of {size} records breaks {requirement}"
    )]
    NotDiverse {
        /// Records in the offending class.
        size: u64,
        /// The requirement, e.g. `distinct-2-diversity on 'diagnosis'` (a column name, no values).
        requirement: String,
    },
    /// The output does not list every input record exactly once.
    #[error("the output failed verification: it should list {expected} records once each, found {found}")]
    RecordsNotPreserved {
        /// Records expected.
        expected: u64,
        /// Records found (or the position of the first repeated one).
        found: u64,
    },
    /// Published cells do not cover their record's original value beyond the declared relocations.
    #[error("the output failed verification: {cells} published cells do not cover the original value, {allowed} allowed")]
    CellsNotCovering {
        /// Cells that do not cover.
        cells: u64,
        /// Cells the algorithm declared relocated.
        allowed: u64,
    },
    /// A join of published fragments on the class singles out fewer than k tuples.
    #[error("the output failed verification: a join of fragments on the class holds {tuples} tuples, fewer than k = {k}")]
    Reconstructible {
        /// Tuples of the offending join.
        tuples: u64,
        /// The k of the job.
        k: u64,
    },
    /// A join of published fragments on the class holds fewer distinct class values than ℓ.
    #[error("the output failed verification: a join of fragments on the class holds {distinct} distinct class values, fewer than l = {l}")]
    JoinNotDiverse {
        /// Distinct class values of the offending join.
        distinct: u64,
        /// The ℓ of the job.
        l: u64,
    },
    /// The fragments do not partition the features, or share a row order.
    #[error("the output failed verification: {0}")]
    FragmentLayout(String),
    /// A risk threshold on the whole published table is exceeded.
    #[error("the output failed verification: {requirement} does not hold (the published table has {value})")]
    TableRiskExceeded {
        /// The requirement, e.g. `average prosecutor risk ≤ 0.05`.
        requirement: String,
        /// The published table's figure.
        value: f64,
    },
    /// The published labels cannot be matched to the population through the hierarchies.
    #[error("the output failed verification: {0}")]
    PopulationUnmatched(String),
    /// A published class's population count fails a population model.
    #[error("the output failed verification: a class of {size} records matches {population} population records, which {requirement} does not allow")]
    PopulationBoundFailed {
        /// Published records of the class.
        size: u64,
        /// Population records of the class.
        population: u64,
        /// The requirement.
        requirement: String,
    },
    /// A requirement names a column the output does not have.
    #[error("the output failed verification: it has no column '{0}'")]
    MissingColumn(String),
}
