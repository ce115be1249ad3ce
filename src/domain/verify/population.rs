//! Published classes against a population table (k-map, δ-presence), from texts: each published
//! quasi-identifier column shows the labels of one hierarchy level (a full-domain transformation); the
//! lowest level holding every label the column shows is taken as that level, every population value is
//! generalized to its label there through the hierarchy (records suppressed as a whole are no class and
//! are not matched), and the population's records are counted per
//! combination of labels. A published class's population count is the count of its own labels.

use std::collections::HashMap;

use crate::core::data::Hierarchy;
use crate::core::render::Rendering;

use super::{RenderedClasses, VerificationError};

/// The population's quasi-identifiers: per column its name, its hierarchy and the hierarchy leaf of
/// every population record.
#[derive(Debug)]
pub struct PopulationLabels {
    columns: Vec<(String, Hierarchy, Vec<u32>)>,
}

/// What a population model requires of every published class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PopulationBound {
    /// At least this many population records (k-map).
    AtLeast(u64),
    /// Published records / population records within `[min, max]` (δ-presence).
    Presence {
        /// δ_min.
        min: f64,
        /// δ_max.
        max: f64,
    },
}

impl PopulationLabels {
    /// The population's columns, as `(name, hierarchy, leaf of every record)`.
    pub fn new(columns: Vec<(String, Hierarchy, Vec<u32>)>) -> Self {
        Self { columns }
    }

    /// Records of the population.
    pub fn records(&self) -> usize {
        self.columns.first().map_or(0, |c| c.2.len())
    }

    /// `(published records, population records)` of every published class of `rendering` (classes
    /// in the order of `classes`); an error when a column's labels are no hierarchy level's.
    pub(super) fn match_classes(
        &self,
        rendering: &Rendering<'_>,
        classes: &RenderedClasses,
    ) -> Result<Vec<(u64, u64)>, VerificationError> {
        let header = rendering.header();
        let mut levels = Vec::with_capacity(self.columns.len());
        let mut positions = Vec::with_capacity(self.columns.len());
        for (name, hierarchy, _) in &self.columns {
            let position = header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| VerificationError::MissingColumn(name.clone()))?;
            let mut shown: Vec<&str> = Vec::new();
            for rows in classes.iter() {
                let text = rendering.cell(rows[0], position);
                if !shown.contains(&text) {
                    shown.push(text);
                }
            }
            let level = (0..hierarchy.height())
                .find(|&level| {
                    shown
                        .iter()
                        .all(|t| hierarchy.labels(level).code(t).is_some())
                })
                .ok_or_else(|| {
                    VerificationError::PopulationUnmatched(format!(
                        "the labels of column '{name}' are not those of one level of its hierarchy"
                    ))
                })?;
            levels.push(level);
            positions.push(position);
        }
        let mut counts: HashMap<Vec<u32>, u64> = HashMap::new();
        for row in 0..self.records() {
            let key: Vec<u32> = self
                .columns
                .iter()
                .zip(&levels)
                .map(|((_, hierarchy, leaves), &level)| hierarchy.ancestor(leaves[row], level))
                .collect();
            *counts.entry(key).or_default() += 1;
        }
        let mut matched = Vec::new();
        for rows in classes.iter() {
            let mut key = Vec::with_capacity(levels.len());
            for (((_, hierarchy, _), &level), &position) in
                self.columns.iter().zip(&levels).zip(&positions)
            {
                let text = rendering.cell(rows[0], position);
                key.push(hierarchy.labels(level).code(text).unwrap_or(u32::MAX));
            }
            matched.push((rows.len() as u64, counts.get(&key).copied().unwrap_or(0)));
        }
        Ok(matched)
    }
}

/// Checks `bound` on every published class.
pub(super) fn check_population(
    rendering: &Rendering<'_>,
    classes: &RenderedClasses,
    labels: &PopulationLabels,
    bound: PopulationBound,
    describe: impl Fn() -> String,
) -> Result<(), VerificationError> {
    for (size, population) in labels.match_classes(rendering, classes)? {
        let met = match bound {
            PopulationBound::AtLeast(k) => population >= k,
            PopulationBound::Presence { min, max } => {
                population > 0 && {
                    let delta = size as f64 / population as f64;
                    min <= delta && delta <= max
                }
            }
        };
        if !met {
            return Err(VerificationError::PopulationBoundFailed {
                size,
                population,
                requirement: describe(),
            });
        }
    }
    Ok(())
}
