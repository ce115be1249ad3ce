//! The class function of Hsu 2008's linear models (§3.6; note
//! `notes/hsu-2008-sensitive-attribute-protection.md` §2.6): its spec, its validation, and the cf value
//! of every value of a numeric sensitive column.

use serde::Deserialize;

use crate::core::data::Column;
use crate::core::privacy::ClassFunction;
use crate::domain::spec::SpecError;
use crate::error_code::ErrorCode;

use super::ModelContext;

/// The class function of a linear model: how numeric sensitive values map to a similarity scale.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClassFunctionSpec {
    /// cf(x) = x.
    #[default]
    Identity,
    /// Linear between `[x, y]` breakpoints (x strictly increasing, y non-decreasing, at least two),
    /// constant beyond the first and last.
    PiecewiseLinear {
        /// The breakpoints.
        points: Vec<[f64; 2]>,
    },
}

/// The class function of model `at`.
pub fn class_function_of(
    at: &ModelContext<'_>,
    spec: &ClassFunctionSpec,
) -> Result<ClassFunction, SpecError> {
    match spec {
        ClassFunctionSpec::Identity => Ok(ClassFunction::Identity),
        ClassFunctionSpec::PiecewiseLinear { points } => {
            ClassFunction::piecewise_linear(points.iter().map(|&[x, y]| (x, y)).collect())
                .ok_or_else(|| {
                    at.error(
                        "class_function/points",
                        ErrorCode::InvalidClassFunction,
                        "a piecewise-linear class function needs at least two [x, y] points with \
                         strictly increasing x and non-decreasing y",
                    )
                })
        }
    }
}

/// cf of every value of `column` (by code); every value must be a finite number.
pub fn class_values(
    at: &ModelContext<'_>,
    column: &Column,
    function: &ClassFunction,
) -> Result<Vec<f64>, SpecError> {
    let parsed: Vec<Option<f64>> = column
        .dictionary
        .values()
        .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let bad = parsed.iter().filter(|p| p.is_none()).count();
    if bad > 0 {
        return Err(at.error(
            "attribute",
            ErrorCode::NotNumeric,
            format!(
                "column '{}' has {bad} distinct values that are not numbers",
                column.name
            ),
        ));
    }
    Ok(parsed
        .into_iter()
        .map(|x| function.apply(x.unwrap_or_default()))
        .collect())
}
