//! What the verifier checks per privacy model, as the spec resolution states it: a [`Requirement`] names
//! its column and parameters by the spec's texts (values, categories, orders), never by engine codes, so
//! the checks stay independent of the engine.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::core::privacy::{ClassFunction, Decimal, EntropyEstimator};

/// The categories and don't-care set of a categorical requirement, as the spec names their values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorySets {
    /// The categories S̄_i (in the spec's order of names).
    pub categories: Vec<BTreeSet<String>>,
    /// The don't-care set Y.
    pub dont_care: BTreeSet<String>,
}

/// One property every published class must have.
#[derive(Debug, Clone, PartialEq)]
pub enum Requirement {
    /// At least this many records.
    MinClassSize(u64),
    /// At least `l` distinct values in output column `column`.
    DistinctL {
        /// Output column name.
        column: String,
        /// Minimum number of distinct values.
        l: u64,
    },
    /// Entropy of the values of `column` at least `ln l` (and at least l distinct values).
    EntropyL {
        /// Output column name.
        column: String,
        /// The diversity parameter.
        l: u64,
        /// How the entropy is estimated.
        estimator: EntropyEstimator,
    },
    /// Recursive (c,l)-diversity of the values of `column` (strict inequality).
    RecursiveCL {
        /// Output column name.
        column: String,
        /// The constant c.
        c: Decimal,
        /// The diversity parameter.
        l: u64,
    },
    /// The earth mover's distance between the values of `column` in every class and their distribution
    /// over the whole input table is at most `t`.
    TCloseness {
        /// Output column name.
        column: String,
        /// The largest distance allowed.
        t: Decimal,
        /// The ground distance.
        ground: ClosenessGround,
        /// Records per value over the whole input table (suppressed records included).
        global: Arc<HashMap<String, u64>>,
    },
    /// For every value of `column` a class holds, `|log₂(class frequency / table frequency)| < delta`.
    DeltaDisclosure {
        /// Output column name.
        column: String,
        /// The bound in bits.
        delta: f64,
        /// Records per value over the whole input table.
        global: Arc<HashMap<String, u64>>,
    },
    /// For every value of `column` a class holds, the relative gain of its frequency over the table's
    /// is at most `beta` (and at most `−ln` of the table frequency when `enhanced`).
    BetaLikeness {
        /// Output column name.
        column: String,
        /// The bound on the relative gain.
        beta: Decimal,
        /// Whether the bound is also capped by `−ln q`.
        enhanced: bool,
        /// Records per value over the whole input table.
        global: Arc<HashMap<String, u64>>,
    },
    /// l-categorical diversity of `column` (Hsu 2008, Def 3.5.3): minimum cover of at least `l` sets.
    LCategorical {
        /// Output column name.
        column: String,
        /// Minimum cover size.
        l: u64,
        /// The categories and Y.
        sets: CategorySets,
    },
    /// d-density control (Def 3.5.5); with `mu`, Y holds at least `mu` and is exempt from `d`.
    DDensity {
        /// Output column name.
        column: String,
        /// The density bound.
        d: Decimal,
        /// The dilution bound that overrides `d` on Y.
        mu: Option<Decimal>,
        /// The categories and Y.
        sets: CategorySets,
    },
    /// μ-dilution (Def 3.5.6): Y holds at least `mu` of each class.
    MuDilution {
        /// Output column name.
        column: String,
        /// The dilution bound.
        mu: Decimal,
        /// The don't-care values.
        dont_care: BTreeSet<String>,
    },
    /// (c,l)-categorical recursive diversity (Def 3.5.8, non-strict, in counts).
    ClCategoricalRecursive {
        /// Output column name.
        column: String,
        /// The constant c.
        c: Decimal,
        /// Categories in the covering.
        l: u64,
        /// The categories and Y.
        sets: CategorySets,
    },
    /// (c,l)-density control (Def 3.5.10, sum from the l-th category).
    ClDensity {
        /// Output column name.
        column: String,
        /// The constant c.
        c: Decimal,
        /// Index of the first category of the tail.
        l: u64,
        /// The categories and Y.
        sets: CategorySets,
    },
    /// δ-range control (Def 3.6.2) of the numeric `column` through `class_function`.
    DeltaRange {
        /// Output column name.
        column: String,
        /// The minimum range.
        delta: f64,
        /// The class function.
        class_function: ClassFunction,
        /// Absolute tolerance of the comparison.
        tolerance: f64,
    },
    /// (l,r)-linear diversity (Def 3.6.4) of the numeric `column` through `class_function`.
    LrLinear {
        /// Output column name.
        column: String,
        /// Minimum number of r-covers.
        l: u64,
        /// Width of a cover.
        r: f64,
        /// The class function.
        class_function: ClassFunction,
        /// Absolute tolerance of the comparisons.
        tolerance: f64,
    },
}

/// The ground distance of a t-closeness requirement, on value texts.
#[derive(Debug, Clone, PartialEq)]
pub enum ClosenessGround {
    /// Distance 1 between distinct values.
    Equal,
    /// Rank difference over (number of values − 1); the rank of every value.
    Ordered(Arc<HashMap<String, usize>>),
    /// Height of the lowest common ancestor over the tree's height; every value's ancestor labels from
    /// level 1 up (a root is added above the top level when it has several labels).
    Hierarchical(Arc<HashMap<String, Vec<String>>>),
}

impl Requirement {
    pub(super) fn describe(&self) -> String {
        match self {
            Requirement::MinClassSize(k) => format!("{k}-anonymity"),
            Requirement::DistinctL { column, l } => format!("distinct-{l}-diversity on '{column}'"),
            Requirement::EntropyL {
                column,
                l,
                estimator: EntropyEstimator::Shannon,
            } => format!("entropy-{l}-diversity on '{column}'"),
            Requirement::EntropyL { column, l, .. } => {
                format!("entropy-{l}-diversity (Grassberger) on '{column}'")
            }
            Requirement::RecursiveCL { column, c, l } => {
                format!("recursive-({c},{l})-diversity on '{column}'")
            }
            Requirement::TCloseness { column, t, .. } => format!("{t}-closeness on '{column}'"),
            Requirement::DeltaDisclosure { column, delta, .. } => {
                format!("{delta}-disclosure privacy on '{column}'")
            }
            Requirement::BetaLikeness {
                column,
                beta,
                enhanced,
                ..
            } => {
                let variant = if *enhanced { "enhanced" } else { "basic" };
                format!("{variant}-{beta}-likeness on '{column}'")
            }
            Requirement::LCategorical { column, l, .. } => {
                format!("{l}-categorical-diversity on '{column}'")
            }
            Requirement::DDensity {
                column,
                d,
                mu: None,
                ..
            } => format!("{d}-density on '{column}'"),
            Requirement::DDensity {
                column,
                d,
                mu: Some(mu),
                ..
            } => format!("{d}-density with {mu}-dilution on '{column}'"),
            Requirement::MuDilution { column, mu, .. } => format!("{mu}-dilution on '{column}'"),
            Requirement::ClCategoricalRecursive { column, c, l, .. } => {
                format!("({c},{l})-categorical-recursive-diversity on '{column}'")
            }
            Requirement::ClDensity { column, c, l, .. } => {
                format!("({c},{l})-density on '{column}'")
            }
            Requirement::DeltaRange { column, delta, .. } => {
                format!("{delta}-range on '{column}'")
            }
            Requirement::LrLinear { column, l, r, .. } => {
                format!("({l},{r})-linear-diversity on '{column}'")
            }
        }
    }

    /// The output column a value requirement reads.
    pub(super) fn column(&self) -> Option<&str> {
        match self {
            Requirement::MinClassSize(_) => None,
            Requirement::DistinctL { column, .. }
            | Requirement::EntropyL { column, .. }
            | Requirement::RecursiveCL { column, .. }
            | Requirement::LCategorical { column, .. }
            | Requirement::DDensity { column, .. }
            | Requirement::MuDilution { column, .. }
            | Requirement::ClCategoricalRecursive { column, .. }
            | Requirement::ClDensity { column, .. }
            | Requirement::DeltaRange { column, .. }
            | Requirement::LrLinear { column, .. }
            | Requirement::TCloseness { column, .. }
            | Requirement::DeltaDisclosure { column, .. }
            | Requirement::BetaLikeness { column, .. } => Some(column),
        }
    }
}
