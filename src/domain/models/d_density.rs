//! d-density control (Hsu 2008, Def 3.5.5): every category and the don't-care set hold at most the
//! fraction `d` of each class. With `mu`, μ-dilution (Def 3.5.6) overrides the bound on the don't-care
//! set: it must hold at least `mu` of each class and is exempt from `d`. Fractions are compared exactly
//! with the decimals as written.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::core::privacy::{DDensity, Decimal};
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, CategorySets, ClassRequirement};
use crate::error_code::ErrorCode;

use super::categories::resolve_categories;
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "d_density", "attribute": …, "d": …, "mu": …, "categories": {…}, "dont_care": […]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DDensitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The density bound, in [0, 1].
    pub d: f64,
    /// The dilution bound μ, in [0, 1].
    #[serde(default)]
    pub mu: Option<f64>,
    /// Named, possibly overlapping sets of sensitive values.
    pub categories: BTreeMap<String, Vec<String>>,
    /// Values no one minds disclosing (Y); disjoint from every category.
    #[serde(default)]
    pub dont_care: Vec<String>,
    /// Most categories accepted; [`super::categories::DEFAULT_MAX_CATEGORIES`] when absent, at most 64.
    #[serde(default)]
    pub max_categories: Option<u64>,
}

impl ModelSpec for DDensitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let d = at.fraction("d", ErrorCode::InvalidD, self.d)?;
        let mu = self
            .mu
            .map(|mu| at.fraction("mu", ErrorCode::InvalidMu, mu))
            .transpose()?;
        let (resolved, sets) = resolve_categories(
            at,
            protected.column,
            &self.categories,
            &self.dont_care,
            self.max_categories,
        )?;
        Ok(ResolvedModel::new(
            DDensity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                d,
                mu,
                categories: resolved,
            },
            DDensityCheck {
                column: self.attribute.clone(),
                d,
                mu,
                sets,
            },
        ))
    }
}

/// d-density control of `column`; with `mu`, Y holds at least `mu` and is exempt from `d`.
#[derive(Debug, Clone, PartialEq)]
pub struct DDensityCheck {
    /// Output column name.
    pub column: String,
    /// The density bound.
    pub d: Decimal,
    /// The dilution bound that overrides `d` on Y.
    pub mu: Option<Decimal>,
    /// The categories and Y.
    pub sets: CategorySets,
}

impl ClassRequirement for DDensityCheck {
    fn describe(&self) -> String {
        match self.mu {
            None => format!("{}-density on '{}'", self.d, self.column),
            Some(mu) => format!(
                "{}-density with {mu}-dilution on '{}'",
                self.d, self.column
            ),
        }
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::d_density(values, self.d, self.mu, &self.sets)
    }
}
