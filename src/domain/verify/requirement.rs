//! What the verifier checks on every published class: a [`ClassRequirement`] per privacy model, stated by
//! the model's entry in [`crate::domain::models`] with the spec's texts (values, categories, orders),
//! never engine codes, so the checks stay independent of the engine. The class-size requirement of
//! k-anonymity, [`MinClassSize`], lives here because the verifier reports it on its own.

use super::population::{PopulationBound, PopulationLabels};
use crate::core::risk::UniquenessModel;
use std::any::Any;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

/// One property every published class must have, checked on the rendered texts of the class (`Any` so
/// that a test can look at the concrete requirement a spec resolved to).
pub trait ClassRequirement: Any + fmt::Debug + Send + Sync {
    /// How a verification error names the requirement (no cell values).
    fn describe(&self) -> String;
    /// The output column whose values the requirement reads; `None` for a requirement on class sizes.
    fn column(&self) -> Option<&str>;
    /// Whether a class whose column holds these values (text → records) meets the requirement.
    fn is_met(&self, values: &HashMap<&str, u64>) -> bool;
    /// The least class size, for a requirement on class sizes (reported as a class too small).
    fn min_class_size(&self) -> Option<u64> {
        None
    }
    /// For a requirement on the whole published table: its limit (then [`ClassRequirement::is_met`]
    /// is never asked).
    fn table_limit(&self) -> Option<TableLimit> {
        None
    }
    /// For a requirement against a population table: the population and the bound on every class
    /// (then [`ClassRequirement::is_met`] is never asked).
    fn population_bound(&self) -> Option<(&PopulationLabels, PopulationBound)> {
        None
    }
}

/// A population model's requirement: `bound` on every published class's population count.
#[derive(Debug, Clone)]
pub struct PopulationRequirement {
    /// The population.
    pub labels: Arc<PopulationLabels>,
    /// The bound.
    pub bound: PopulationBound,
}

impl ClassRequirement for PopulationRequirement {
    fn describe(&self) -> String {
        match self.bound {
            PopulationBound::AtLeast(k) => format!("{k}-map"),
            PopulationBound::Presence { min, max } => format!("({min}, {max})-presence"),
        }
    }
    fn column(&self) -> Option<&str> {
        None
    }
    fn is_met(&self, _values: &HashMap<&str, u64>) -> bool {
        true
    }
    fn population_bound(&self) -> Option<(&PopulationLabels, PopulationBound)> {
        Some((&self.labels, self.bound))
    }
}

/// A risk threshold on the whole published table, over its classes (rows of `*` in every
/// quasi-identifier that are not suppressed form one class).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableLimit {
    /// Classes / records at most this.
    AverageRisk(f64),
    /// Records alone in their class / records at most this.
    UniqueShare(f64),
    /// The estimated share of population uniques at most `threshold`.
    PopulationUniques {
        /// The largest share.
        threshold: f64,
        /// The estimator.
        model: UniquenessModel,
        /// Records in the population.
        population: u64,
    },
}

impl ClassRequirement for TableLimit {
    fn describe(&self) -> String {
        match self {
            TableLimit::AverageRisk(r) => format!("average prosecutor risk ≤ {r}"),
            TableLimit::UniqueShare(u) => format!("sample uniques ≤ {u}"),
            TableLimit::PopulationUniques {
                threshold,
                model,
                population,
            } => format!(
                "population uniques ({}, population {population}) ≤ {threshold}",
                model.name()
            ),
        }
    }

    fn column(&self) -> Option<&str> {
        None
    }

    fn is_met(&self, _values: &HashMap<&str, u64>) -> bool {
        true
    }

    fn table_limit(&self) -> Option<TableLimit> {
        Some(*self)
    }
}

/// A requirement of one privacy model.
pub type Requirement = Box<dyn ClassRequirement>;

/// At least this many records in every class (k-anonymity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinClassSize(pub u64);

impl ClassRequirement for MinClassSize {
    fn describe(&self) -> String {
        format!("{}-anonymity", self.0)
    }

    fn column(&self) -> Option<&str> {
        None
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        values.values().sum::<u64>() >= self.0
    }

    fn min_class_size(&self) -> Option<u64> {
        Some(self.0)
    }
}

/// The categories and don't-care set of a categorical requirement, as the spec names their values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorySets {
    /// The categories S̄_i (in the spec's order of names).
    pub categories: Vec<BTreeSet<String>>,
    /// The don't-care set Y.
    pub dont_care: BTreeSet<String>,
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
