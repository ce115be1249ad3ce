//! (l,r)-linear diversity (Hsu 2008, Def 3.6.4) on a numeric sensitive attribute: a class's cf values
//! need at least `l` intervals of width `r` to be covered. The report's ψ security estimate takes `r` as
//! its scale.

use std::collections::HashMap;

use serde::Deserialize;

use crate::core::privacy::{tolerance_for, ClassFunction, LrLinearDiversity};
use crate::domain::analysis::security_estimate::LinearScale;
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, ClassRequirement};
use crate::error_code::ErrorCode;

use super::class_function::{class_function_of, class_values, ClassFunctionSpec};
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "lr_linear_diversity", "attribute": …, "l": …, "r": …, "class_function": {…}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LrLinearDiversitySpec {
    /// The sensitive attribute (a numeric column with role `sensitive`).
    pub attribute: String,
    /// Minimum number of intervals, ≥ 1.
    pub l: u64,
    /// Interval width in cf-space, ≥ 0.
    pub r: f64,
    /// The class function; the identity when absent.
    #[serde(default)]
    pub class_function: ClassFunctionSpec,
}

impl ModelSpec for LrLinearDiversitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let l = at.diversity_l(self.l)?;
        let r = at.non_negative("r", ErrorCode::InvalidR, self.r)?;
        let function = class_function_of(at, &self.class_function)?;
        let cf = class_values(at, protected.column, &function)?;
        let tolerance = tolerance_for(&cf);
        let mut resolved = ResolvedModel::new(
            LrLinearDiversity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                l,
                r,
                cf,
                tolerance,
            },
            LrLinearCheck {
                column: self.attribute.clone(),
                l,
                r,
                class_function: function.clone(),
                tolerance,
            },
        );
        resolved.linear_scale = Some(LinearScale {
            column: self.attribute.clone(),
            from_cover: true,
            sigma: r,
            function,
        });
        Ok(resolved)
    }
}

/// (l,r)-linear diversity of the numeric `column` through `class_function`.
#[derive(Debug, Clone, PartialEq)]
pub struct LrLinearCheck {
    /// Output column name.
    pub column: String,
    /// Minimum number of r-covers.
    pub l: u64,
    /// Width of a cover.
    pub r: f64,
    /// The class function.
    pub class_function: ClassFunction,
    /// Absolute tolerance of the comparisons.
    pub tolerance: f64,
}

impl ClassRequirement for LrLinearCheck {
    fn describe(&self) -> String {
        format!("({},{})-linear-diversity on '{}'", self.l, self.r, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::lr_linear(
            values,
            self.l,
            self.r,
            &self.class_function,
            self.tolerance,
        )
    }
}
