//! Published classes against a population table (k-map, δ-presence), from texts: each published
//! quasi-identifier column shows the labels of one hierarchy level (a full-domain transformation); the
//! levels holding every label the column shows are its possible levels (the bound must hold at each),
//! every population value is
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

    /// The hierarchy levels each population column may be published at: those holding every label
    /// its column shows (several when a hierarchy repeats a text across levels).
    fn candidate_levels(
        &self,
        rendering: &Rendering<'_>,
        classes: &RenderedClasses,
    ) -> Result<Vec<(usize, Vec<usize>)>, VerificationError> {
        let header = rendering.header();
        let mut columns = Vec::with_capacity(self.columns.len());
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
            // no class shows a label (every record suppressed or `*` throughout): the top
            if shown.is_empty() {
                columns.push((position, vec![hierarchy.height().saturating_sub(1)]));
                continue;
            }
            let levels: Vec<usize> = (0..hierarchy.height())
                .filter(|&level| {
                    shown
                        .iter()
                        .all(|t| hierarchy.labels(level).code(t).is_some())
                })
                .collect();
            if levels.is_empty() {
                return Err(VerificationError::PopulationUnmatched(format!(
                    "the labels of column '{name}' are not those of one level of its hierarchy"
                )));
            }
            columns.push((position, levels));
        }
        Ok(columns)
    }

    /// The population's records per combination of labels when the columns are read at `levels`.
    fn counts_at(&self, levels: &[usize]) -> HashMap<Vec<u32>, u64> {
        let mut counts: HashMap<Vec<u32>, u64> = HashMap::new();
        for row in 0..self.records() {
            let key: Vec<u32> = self
                .columns
                .iter()
                .zip(levels)
                .map(|((_, hierarchy, leaves), &level)| hierarchy.ancestor(leaves[row], level))
                .collect();
            *counts.entry(key).or_default() += 1;
        }
        counts
    }

    /// `(published records, population records)` of every published class of `rendering` (classes
    /// in the order of `classes`), when the columns are read at `levels` (the population's `counts`
    /// there).
    fn match_classes_at(
        &self,
        rendering: &Rendering<'_>,
        classes: &RenderedClasses,
        positions: &[usize],
        levels: &[usize],
        counts: &HashMap<Vec<u32>, u64>,
    ) -> Vec<(u64, u64)> {
        classes
            .iter()
            .map(|rows| {
                let key: Vec<u32> = self
                    .columns
                    .iter()
                    .zip(levels)
                    .zip(positions)
                    .map(|(((_, hierarchy, _), &level), &position)| {
                        let text = rendering.cell(rows[0], position);
                        hierarchy.labels(level).code(text).unwrap_or(u32::MAX)
                    })
                    .collect();
                (rows.len() as u64, counts.get(&key).copied().unwrap_or(0))
            })
            .collect()
    }

    /// The output positions of the population's columns and every reading of their published levels
    /// (one in all but contrived hierarchies; at most [`MAX_READINGS`]).
    fn readings(
        &self,
        rendering: &Rendering<'_>,
        classes: &RenderedClasses,
    ) -> Result<(Vec<usize>, Vec<Vec<usize>>), VerificationError> {
        let columns = self.candidate_levels(rendering, classes)?;
        let readings: usize = columns
            .iter()
            .map(|(_, levels)| levels.len())
            .try_fold(1usize, |n, m| {
                n.checked_mul(m).filter(|&n| n <= MAX_READINGS)
            })
            .ok_or_else(|| {
                VerificationError::PopulationUnmatched(
                    "the published labels fit too many levels of their hierarchies".into(),
                )
            })?;
        let positions: Vec<usize> = columns.iter().map(|(p, _)| *p).collect();
        let levels = (0..readings)
            .map(|mut reading| {
                columns
                    .iter()
                    .map(|(_, levels)| {
                        let level = levels[reading % levels.len()];
                        reading /= levels.len();
                        level
                    })
                    .collect()
            })
            .collect();
        Ok((positions, levels))
    }

    /// The population records of a population class that no input record falls in (published or
    /// suppressed) when the columns are read at `levels`, if there is one. Input records are read
    /// from their original values (suppressed ones show none) through the population's hierarchies.
    fn population_only_at(
        &self,
        rendering: &Rendering<'_>,
        positions: &[usize],
        levels: &[usize],
        counts: &HashMap<Vec<u32>, u64>,
    ) -> Option<u64> {
        let key_of = |row: usize| -> Vec<u32> {
            self.columns
                .iter()
                .zip(levels)
                .zip(positions)
                .map(|(((_, hierarchy, _), &level), &position)| {
                    let source = rendering.source(position);
                    let text = source.dictionary.value(source.codes[row]);
                    hierarchy
                        .labels(0)
                        .code(text)
                        .map_or(u32::MAX, |leaf| hierarchy.ancestor(leaf, level))
                })
                .collect()
        };
        let input_rows = positions
            .first()
            .map_or(0, |&p| rendering.source(p).codes.len());
        let sample: std::collections::HashSet<Vec<u32>> = (0..input_rows).map(key_of).collect();
        counts
            .iter()
            .filter(|(key, _)| !sample.contains(*key))
            .map(|(_, &n)| n)
            .max()
    }
}

/// The most readings of the published levels the verifier tries.
const MAX_READINGS: usize = 64;

/// Checks `bound` on every published class.
pub(super) fn check_population(
    rendering: &Rendering<'_>,
    classes: &RenderedClasses,
    labels: &PopulationLabels,
    bound: PopulationBound,
    describe: impl Fn() -> String,
) -> Result<(), VerificationError> {
    // the bound must hold under every reading of the published levels; with δ_min > 0 a population
    // class no input record falls in has a share of 0
    let (positions, readings) = labels.readings(rendering, classes)?;
    let population_only = matches!(bound, PopulationBound::Presence { min, .. } if min > 0.0);
    for levels in &readings {
        let counts = labels.counts_at(levels);
        for (size, population) in
            labels.match_classes_at(rendering, classes, &positions, levels, &counts)
        {
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
        if population_only {
            if let Some(population) =
                labels.population_only_at(rendering, &positions, levels, &counts)
            {
                return Err(VerificationError::PopulationBoundFailed {
                    size: 0,
                    population,
                    requirement: describe(),
                });
            }
        }
    }
    Ok(())
}
