//! Privacy models: predicates on one equivalence class, plus the monotonicity facts the lattice searches
//! need to decide whether pruning is sound.
//!
//! A node of the lattice is a solution when the records of all classes that fail some model number at most
//! the suppression limit (those classes are suppressed). Searches prune with predictive tagging only if
//! every model is monotone for the suppression setting in use; otherwise they visit every node.

mod coverage;
mod emd;
pub mod grassberger;
mod k_anonymity;
mod l_diversity;
mod likeness;
mod population;
mod risk_threshold;
mod t_closeness;

mod categorical;
mod linear;

pub use coverage::ValueCoverage;
pub use emd::{EarthMovers, Ratio};

pub use categorical::{
    minimum_cover, Categories, ClCategoricalRecursiveDiversity, ClDensity, DDensity,
    LCategoricalDiversity, MuDilution, MAX_CATEGORIES,
};
pub use k_anonymity::{DerivedKAnonymity, HighestRisk, KAnonymity};
pub use l_diversity::{
    Decimal, DistinctLDiversity, EntropyEstimator, EntropyLDiversity, RecursiveCLDiversity,
    ENTROPY_TOLERANCE,
};
pub use likeness::{BetaLikeness, DeltaDisclosure, Likeness, TableDistribution, LOG_TOLERANCE};
pub use linear::{
    min_r_covers, normalized_security_estimate, security_estimate, tolerance_for, ClassFunction,
    DeltaRange, LrLinearDiversity, LINEAR_TOLERANCE,
};
pub use population::{
    derived_k, DeltaPresence, KMap, PopulationColumn, PopulationError, PopulationEstimator,
    PopulationIndex,
};
pub use risk_threshold::{TableMeasure, TableThreshold};
pub use t_closeness::{GroundDistanceKind, TCloseness};

use super::groupify::FrequencySet;
use super::risk::ClassSizes;

/// One equivalence class as privacy models see it: a class of a lattice node's frequency set, or a loose
/// group of records (local recoding) given by its size and sensitive histograms.
#[derive(Debug, Clone, Copy)]
pub struct ClassView<'a> {
    source: ClassSource<'a>,
}

#[derive(Debug, Clone, Copy)]
enum ClassSource<'a> {
    Set {
        set: &'a FrequencySet,
        class: usize,
    },
    Loose {
        size: u64,
        histograms: &'a [Vec<(u32, u32)>],
    },
}

impl<'a> ClassView<'a> {
    /// The class `class` of `set`.
    pub fn new(set: &'a FrequencySet, class: usize) -> Self {
        Self {
            source: ClassSource::Set { set, class },
        }
    }

    /// A group of `size` records whose sensitive slot `s` has the sorted `(code, count)` histogram
    /// `histograms[s]` (slots a model does not read may be left empty).
    pub fn loose(size: u64, histograms: &'a [Vec<(u32, u32)>]) -> Self {
        Self {
            source: ClassSource::Loose { size, histograms },
        }
    }

    /// Number of records in the class.
    pub fn size(&self) -> u64 {
        match self.source {
            ClassSource::Set { set, class } => set.counts()[class] as u64,
            ClassSource::Loose { size, .. } => size,
        }
    }

    /// Sorted `(code, count)` pairs of a sensitive attribute (its slot in the engine input).
    pub fn histogram(&self, slot: usize) -> &'a [(u32, u32)] {
        match self.source {
            ClassSource::Set { set, class } => set.histogram(slot, class),
            ClassSource::Loose { histograms, .. } => histograms.get(slot).map_or(&[], |h| h),
        }
    }

    /// One record of the class and the lattice node's levels, for a class of a node's frequency set;
    /// `None` for a loose group.
    pub fn representative(&self) -> Option<(u32, &'a [u8])> {
        match self.source {
            ClassSource::Set { set, class } => {
                Some((set.representative_rows()[class], set.levels()))
            }
            ClassSource::Loose { .. } => None,
        }
    }

    /// Number of distinct values of a sensitive attribute in the class (values with a positive count).
    /// Available whether the class keeps the attribute's histogram or only its set of values.
    pub fn distinct_values(&self, slot: usize) -> u64 {
        match self.source {
            ClassSource::Set { set, class } => set.distinct_values(slot, class),
            ClassSource::Loose { histograms, .. } => histograms
                .get(slot)
                .map_or(0, |h| h.iter().filter(|&&(_, n)| n > 0).count() as u64),
        }
    }
}

/// A privacy model checked class by class.
pub trait PrivacyModel: Send + Sync + std::fmt::Debug {
    /// A short description for reports and failure messages, e.g. `5-anonymity`.
    fn describe(&self) -> String;

    /// The smallest class that can pass (k for k-anonymity); used for bounds and early validation.
    fn min_class_size(&self) -> u64;

    /// The sensitive slot whose histograms the model reads, if any.
    fn sensitive_slot(&self) -> Option<usize> {
        None
    }

    /// Whether the model reads only which values of its sensitive slot a class holds
    /// ([`ClassView::distinct_values`]), never the histogram: grouping may then keep per-class value sets
    /// instead of histograms for that slot, when no other model reads the slot's counts.
    fn reads_value_sets_only(&self) -> bool {
        false
    }

    /// Whether generalizing a solution always yields a solution when failing classes may be suppressed
    /// (the number of records in failing classes never grows when classes merge).
    fn is_monotone_with_suppression(&self) -> bool;

    /// Whether merging passing classes always yields a passing class (no suppression).
    fn is_monotone_without_suppression(&self) -> bool;

    /// Whether the model passes exactly the classes with at least `min_class_size` records, so callers may
    /// classify by size alone.
    fn is_size_only(&self) -> bool {
        false
    }

    /// A model that is monotone with suppression and passes every class this one passes, for models
    /// that are not monotone themselves: searches find its solutions with pruning first, and every
    /// solution of this model lies at or above one of them. `None` when no such model is known.
    fn monotone_relaxation(&self) -> Option<Box<dyn PrivacyModel>> {
        None
    }

    /// Whether the class satisfies the model.
    fn is_class_private(&self, class: &ClassView<'_>) -> bool;

    /// For a model on the whole published table (a risk threshold): whether the classes kept after the
    /// class-level suppression satisfy it. Class-level models pass every table.
    fn is_table_private(&self, _table: &TableView) -> bool {
        true
    }

    /// Whether the model judges the whole table ([`PrivacyModel::is_table_private`]) rather than each
    /// class: algorithms that only form classes (local recodings) cannot enforce it.
    fn is_table_level(&self) -> bool {
        false
    }

    /// Whether [`PrivacyModel::is_table_private`] reads the kept classes' sizes
    /// ([`TableView::sizes`]), which are then counted for every node checked.
    fn needs_class_sizes(&self) -> bool {
        false
    }
}

/// The published table as table-level models see it: the classes kept after class-level suppression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableView {
    /// Records kept (published unsuppressed).
    pub records: u64,
    /// Classes kept.
    pub classes: u64,
    /// Kept classes of one record.
    pub uniques: u64,
    /// The kept classes' sizes, when a model asks for them ([`PrivacyModel::needs_class_sizes`]).
    pub sizes: Option<ClassSizes>,
    /// The node's levels, when some model judges the whole table.
    pub levels: Option<Vec<u8>>,
}

impl TableView {
    /// The average prosecutor risk of the kept records: the mean of 1 / |class| over records, which is
    /// classes / records (0 without records).
    pub fn average_risk(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.classes as f64 / self.records as f64
        }
    }

    /// The share of kept records that are unique (0 without records).
    pub fn unique_share(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.uniques as f64 / self.records as f64
        }
    }
}
