//! The population table of `k_map` and `delta_presence`, prepared twice from the same texts: once as
//! the engine's [`PopulationIndex`] (hierarchy leaves, grouped per lattice node), once as the
//! verifier's [`PopulationLabels`] (which matches published label texts to population values through
//! the hierarchies, without the engine's grouping).

use std::sync::Arc;

use crate::core::data::{Column, GeneralizationMap, Hierarchy};
use crate::core::privacy::{PopulationColumn, PopulationError, PopulationIndex};
use crate::domain::spec::SpecError;
use crate::domain::verify::PopulationLabels;
use crate::error_code::ErrorCode;

use super::ModelContext;

/// The population as both the engine and the verifier read it.
#[derive(Debug, Clone)]
pub struct Population {
    /// The engine's index.
    pub index: Arc<PopulationIndex>,
    /// The verifier's texts.
    pub labels: Arc<PopulationLabels>,
}

/// The hierarchy leaf of every value of `column` (codes of the column's dictionary), or how many
/// distinct values the hierarchy lacks.
fn leaves(hierarchy: &Hierarchy, column: &Column) -> Result<Vec<u32>, usize> {
    let mut missing = 0;
    let by_code: Vec<u32> = column
        .dictionary
        .values()
        .map(|value| {
            hierarchy.labels(0).code(value).unwrap_or_else(|| {
                missing += 1;
                0
            })
        })
        .collect();
    if missing > 0 {
        return Err(missing);
    }
    Ok(column.codes.iter().map(|&c| by_code[c as usize]).collect())
}

/// The population of model `at`, prepared for the job's quasi-identifiers: `population_missing`
/// without a population table or without quasi-identifiers to match (a local recoding), the model's
/// pointer otherwise for `missing_in_population`, `uncovered_values` (a population value no hierarchy
/// leaf has) and `sample_not_in_population`.
pub fn population(at: &ModelContext<'_>, name: &str) -> Result<Population, SpecError> {
    let Some(table) = at.population else {
        return Err(at.error(
            "",
            ErrorCode::PopulationMissing,
            format!(
                "{name} reads a population table: give population_dataset_id (service) or \
                 --population (command line)"
            ),
        ));
    };
    if at.quasi_identifiers.is_empty() {
        return Err(at.error(
            "",
            ErrorCode::UnsupportedModel,
            format!("{name} matches the population at the levels of a full-domain transformation: use a full-domain algorithm (optimal, flash, …)"),
        ));
    }
    let mut engine = Vec::with_capacity(at.quasi_identifiers.len());
    let mut verifier = Vec::with_capacity(at.quasi_identifiers.len());
    for (index, map) in at.quasi_identifiers {
        let column = at.table.column(*index);
        let Some(in_population) = table.columns().iter().find(|c| c.name == column.name) else {
            return Err(at.error(
                "",
                ErrorCode::MissingInPopulation,
                format!("the population table has no column '{}'", column.name),
            ));
        };
        let hierarchy = map.hierarchy();
        let uncovered = |whose: &'static str| {
            let name = &column.name;
            move |missing: usize| {
                at.error(
                    "",
                    ErrorCode::UncoveredValues,
                    format!("the hierarchy of '{name}' does not cover {missing} distinct values of {whose}"),
                )
            }
        };
        let population = leaves(hierarchy, in_population).map_err(uncovered("the population"))?;
        // the table's values are covered (its hierarchy was bound to it); refused all the same if not
        let sample = leaves(hierarchy, column).map_err(uncovered("the table"))?;
        engine.push(PopulationColumn {
            ancestors: ancestors(map),
            sample,
            population: population.clone(),
        });
        verifier.push((column.name.clone(), hierarchy.clone(), population));
    }
    let index = PopulationIndex::new(engine).map_err(|e| match e {
        PopulationError::NotContained { .. } => {
            at.error("", ErrorCode::SampleNotInPopulation, e.to_string())
        }
        PopulationError::TooWide { .. } => {
            at.error("", ErrorCode::UnsupportedOption, e.to_string())
        }
    })?;
    Ok(Population {
        index: Arc::new(index),
        labels: Arc::new(PopulationLabels::new(verifier)),
    })
}

/// `ancestors[level][leaf]` of the map's hierarchy.
fn ancestors(map: &GeneralizationMap) -> Vec<Vec<u32>> {
    let hierarchy = map.hierarchy();
    (0..hierarchy.height())
        .map(|level| {
            (0..hierarchy.leaf_count() as u32)
                .map(|leaf| hierarchy.ancestor(leaf, level))
                .collect()
        })
        .collect()
}
