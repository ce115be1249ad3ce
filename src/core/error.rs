//! Errors the engine reports. Messages never contain cell values.

/// Why an engine run did not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoreError {
    /// A parameter outside its domain.
    #[error("invalid parameter {name}: {problem}")]
    InvalidParameter {
        /// Parameter name as in the spec.
        name: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The table has fewer records than the smallest class a model accepts.
    #[error("{model} needs at least {needed} records but the table has {rows}")]
    TooFewRecords {
        /// The model that cannot be met.
        model: String,
        /// Records needed.
        needed: u64,
        /// Records in the table.
        rows: u64,
    },
    /// The lattice is too large for the chosen algorithm.
    #[error("the generalization lattice has {size} transformations; {algorithm} accepts at most {limit}")]
    LatticeTooLarge {
        /// Lattice size.
        size: u128,
        /// Algorithm name.
        algorithm: &'static str,
        /// Largest accepted size.
        limit: u128,
    },
    /// No transformation satisfies the privacy models within the suppression limit.
    #[error("no transformation satisfies {models} within the suppression limit of {max_suppressed} records: even the most general transformation leaves {top_failing} records in classes that fail the models ({top_classes} classes, smallest {top_smallest_class} records)")]
    NoSolution {
        /// The requested models, described.
        models: String,
        /// Records that may be suppressed.
        max_suppressed: u64,
        /// Records failing at the top of the lattice.
        top_failing: u64,
        /// Classes at the top of the lattice.
        top_classes: u64,
        /// Smallest class at the top of the lattice.
        top_smallest_class: u64,
    },
    /// The operating system could not provide the secret randomness an algorithm needs.
    #[error("secure randomness is unavailable: {reason}")]
    RandomnessUnavailable {
        /// The operating system's error.
        reason: String,
    },
    /// The caller cancelled the run.
    #[error("the run was cancelled")]
    Cancelled,
}
