//! δ-range control (Hsu 2008, Def 3.6.2) on a numeric sensitive attribute: `cf(max) − cf(min) ≥ δ` in
//! every class, through the model's class function. The report's ψ security estimate takes δ as its
//! scale when the attribute has no (l,r)-linear model.

use std::collections::HashMap;

use serde::Deserialize;

use crate::core::privacy::{tolerance_for, ClassFunction, DeltaRange};
use crate::domain::analysis::security_estimate::LinearScale;
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, ClassRequirement};
use crate::error_code::ErrorCode;

use super::class_function::{class_function_of, class_values, ClassFunctionSpec};
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "delta_range", "attribute": …, "delta": …, "class_function": {…}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaRangeSpec {
    /// The sensitive attribute (a numeric column with role `sensitive`).
    pub attribute: String,
    /// The minimum range, ≥ 0.
    pub delta: f64,
    /// The class function; the identity when absent.
    #[serde(default)]
    pub class_function: ClassFunctionSpec,
}

impl ModelSpec for DeltaRangeSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let delta = at.non_negative("delta", ErrorCode::InvalidDelta, self.delta)?;
        let function = class_function_of(at, &self.class_function)?;
        let cf = class_values(at, protected.column, &function)?;
        let tolerance = tolerance_for(&cf);
        let mut resolved = ResolvedModel::new(
            DeltaRange {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                delta,
                cf,
                tolerance,
            },
            DeltaRangeCheck {
                column: self.attribute.clone(),
                delta,
                class_function: function.clone(),
                tolerance,
            },
        );
        resolved.linear_scale = Some(LinearScale {
            column: self.attribute.clone(),
            from_cover: false,
            sigma: delta,
            function,
        });
        Ok(resolved)
    }
}

/// δ-range control of the numeric `column` through `class_function`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaRangeCheck {
    /// Output column name.
    pub column: String,
    /// The minimum range.
    pub delta: f64,
    /// The class function.
    pub class_function: ClassFunction,
    /// Absolute tolerance of the comparison.
    pub tolerance: f64,
}

impl ClassRequirement for DeltaRangeCheck {
    fn describe(&self) -> String {
        format!("{}-range on '{}'", self.delta, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::delta_range(values, self.delta, &self.class_function, self.tolerance)
    }
}
