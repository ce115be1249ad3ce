//! β-likeness (Cao & Karras 2012): the relative gain of every value's frequency in a class over its table
//! frequency is at most β (enhanced: at most `min(β, −ln table frequency)`), compared exactly with β as
//! the decimal it is written as. The verifier recomputes the frequencies from value texts
//! ([`crate::domain::verify::likeness`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::core::privacy::{BetaLikeness, Decimal, Likeness, TableDistribution};
use crate::domain::column_values::distribution_by_text;
use crate::domain::spec::SpecError;
use crate::domain::verify::{likeness, ClassRequirement};
use crate::error_code::ErrorCode;

use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "beta_likeness", "attribute": …, "beta": …, "variant": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BetaLikenessSpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The bound on the relative gain, > 0, read as the decimal it is written as.
    pub beta: f64,
    /// `basic` (default) or `enhanced`.
    #[serde(default)]
    pub variant: LikenessVariant,
}

/// The variant of β-likeness (Cao & Karras 2012).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LikenessVariant {
    /// Relative gain at most β.
    #[default]
    Basic,
    /// Relative gain at most `min(β, −ln q)`.
    Enhanced,
}

impl ModelSpec for BetaLikenessSpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let beta = match Decimal::from_f64(self.beta) {
            Some(b) if !b.is_zero() => b,
            _ => {
                return Err(at.error(
                    "beta",
                    ErrorCode::InvalidBeta,
                    "beta must be a positive number (at most 18 decimal places)",
                ))
            }
        };
        let column = protected.column;
        let enhanced = self.variant == LikenessVariant::Enhanced;
        Ok(ResolvedModel::new(
            BetaLikeness {
                slot: protected.slot,
                attribute: column.name.clone(),
                beta,
                variant: if enhanced {
                    Likeness::Enhanced
                } else {
                    Likeness::Basic
                },
                table: TableDistribution::new(column.value_counts()),
            },
            BetaLikenessCheck {
                column: column.name.clone(),
                beta,
                enhanced,
                global: distribution_by_text(column),
            },
        ))
    }
}

/// For every value of `column` a class holds, the relative gain of its frequency over the table's is at
/// most `beta` (and at most `−ln` of the table frequency when `enhanced`).
#[derive(Debug, Clone, PartialEq)]
pub struct BetaLikenessCheck {
    /// Output column name.
    pub column: String,
    /// The bound on the relative gain.
    pub beta: Decimal,
    /// Whether the bound is also capped by `−ln q`.
    pub enhanced: bool,
    /// Records per value over the whole input table.
    pub global: Arc<HashMap<String, u64>>,
}

impl ClassRequirement for BetaLikenessCheck {
    fn describe(&self) -> String {
        let variant = if self.enhanced { "enhanced" } else { "basic" };
        format!("{variant}-{}-likeness on '{}'", self.beta, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        likeness::is_beta_like(values, &self.global, self.beta, self.enhanced)
    }
}
