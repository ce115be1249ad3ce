//! Local recoding: algorithms that generalize each group of records on its own instead of one level per
//! column for the whole table (full-domain generalization, [`crate::core::search`]).
//!
//! Every algorithm here works on a [`LocalInput`] and produces a [`Recoding`]: a group per record (or
//! suppressed) and, for every group, one generalized [`RecodedCell`] per quasi-identifier. Most algorithms only
//! decide the partition and let [`Recoding::from_partition`] derive the cells (the lowest common hierarchy
//! value, or the range of ranks); an algorithm that relocates values (hybrid k-anonymization) gives the
//! cells itself. [`GroupChecker`] checks the privacy models on a group of records.

mod check;
pub mod clustering;
pub mod hybrid;
pub mod mdav;
mod measures;
mod mondrian;
mod recoding;
mod texts;

pub use crate::core::render::CellTexts;
pub use check::GroupChecker;
pub use measures::{local_metrics, LocalMetrics};
pub use mondrian::{mondrian, Mondrian, MondrianOptions, MondrianReport};
pub use recoding::{RecodedCell, Recoding, SUPPRESSED_GROUP};

use super::data::GeneralizationMap;
use super::input::SensitiveAttribute;

/// The value order of a numeric or ordinal quasi-identifier: every column code has a rank, equal values
/// sharing none (ranks are `0..distinct`).
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedDomain {
    rank_of: Vec<u32>,
    code_at_rank: Vec<u32>,
    numbers: Option<Vec<f64>>,
}

impl OrderedDomain {
    /// A domain from the rank of every column code (a permutation of `0..codes`) and, for a numeric
    /// column, the number of every code (non-decreasing along the ranks).
    ///
    /// # Panics
    /// When `rank_of` is not a permutation or `numbers` has the wrong length (a caller bug).
    pub fn new(rank_of: Vec<u32>, numbers: Option<Vec<f64>>) -> Self {
        let mut code_at_rank = vec![u32::MAX; rank_of.len()];
        for (code, &rank) in rank_of.iter().enumerate() {
            assert!(
                code_at_rank[rank as usize] == u32::MAX,
                "ranks must be a permutation"
            );
            code_at_rank[rank as usize] = code as u32;
        }
        if let Some(numbers) = &numbers {
            assert_eq!(numbers.len(), rank_of.len(), "one number per code");
        }
        Self {
            rank_of,
            code_at_rank,
            numbers,
        }
    }

    /// A numeric domain: codes ranked by their numbers (ties, which distinct values cannot have after
    /// parsing only when texts differ, e.g. `1` and `1.0`, broken by code).
    pub fn numeric(numbers: Vec<f64>) -> Self {
        let mut by_value: Vec<u32> = (0..numbers.len() as u32).collect();
        by_value.sort_by(|&a, &b| {
            numbers[a as usize]
                .total_cmp(&numbers[b as usize])
                .then(a.cmp(&b))
        });
        let mut rank_of = vec![0; numbers.len()];
        for (rank, &code) in by_value.iter().enumerate() {
            rank_of[code as usize] = rank as u32;
        }
        Self::new(rank_of, Some(numbers))
    }

    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.rank_of.len()
    }

    /// Whether the domain has no values.
    pub fn is_empty(&self) -> bool {
        self.rank_of.is_empty()
    }

    /// The rank of a column code.
    pub fn rank(&self, code: u32) -> u32 {
        self.rank_of[code as usize]
    }

    /// The column code at a rank.
    pub fn code_at(&self, rank: u32) -> u32 {
        self.code_at_rank[rank as usize]
    }

    /// The number of a column code, for numeric domains.
    pub fn number(&self, code: u32) -> Option<f64> {
        self.numbers.as_ref().map(|n| n[code as usize])
    }

    /// Whether the domain is numeric.
    pub fn is_numeric(&self) -> bool {
        self.numbers.is_some()
    }

    /// How extents are measured along the domain: the number at every rank and the numeric width of
    /// the domain, for a numeric domain of positive finite width; otherwise no numbers and `ranks − 1`
    /// (at least 1), so that widths are counted in ranks.
    pub fn scale(&self) -> (Option<Vec<f64>>, f64) {
        let len = self.len() as u32;
        let numbers: Option<Vec<f64>> = self.is_numeric().then(|| {
            (0..len)
                .map(|rank| self.number(self.code_at(rank)).unwrap_or(0.0))
                .collect()
        });
        let width = numbers
            .as_ref()
            .and_then(|v| Some(v.last()? - v.first()?))
            .filter(|w| w.is_finite() && *w > 0.0);
        match width {
            Some(w) => (numbers, w),
            None => (None, f64::from(len.saturating_sub(1).max(1))),
        }
    }
}

/// How a quasi-identifier may be generalized.
#[derive(Debug, Clone, Copy)]
pub enum Domain<'a> {
    /// Along a hierarchy: a cell is a hierarchy value (categorical attributes, or any attribute with a
    /// hierarchy).
    Hierarchy(&'a GeneralizationMap),
    /// Along a value order: a cell is a range of ranks (numeric or ordinal attributes).
    Ordered(&'a OrderedDomain),
}

/// A quasi-identifier of a local recoding.
#[derive(Debug, Clone, Copy)]
pub struct LocalAttribute<'a> {
    /// Column name (for reports only).
    pub name: &'a str,
    /// One column code per record.
    pub codes: &'a [u32],
    /// Number of distinct codes (codes are `0..distinct`).
    pub distinct: usize,
    /// How the attribute generalizes.
    pub domain: Domain<'a>,
}

/// The encoded input of one local recoding.
#[derive(Debug, Clone)]
pub struct LocalInput<'a> {
    /// Number of records.
    pub rows: usize,
    /// Quasi-identifiers.
    pub quasi_identifiers: Vec<LocalAttribute<'a>>,
    /// Sensitive attributes, addressed by index ("slot") from privacy models.
    pub sensitive: Vec<SensitiveAttribute<'a>>,
}
