//! (c,l)-density control (Hsu 2008, Def 3.5.10, sum from the l-th category): with a class's category
//! counts sorted f1 ≥ f2 ≥ …, f1 ≤ c · (f_l + … + f_n).

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::core::privacy::{ClDensity, Decimal};
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, CategorySets, ClassRequirement};

use super::categories::resolve_categories;
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "cl_density", "attribute": …, "c": …, "l": …, "categories": {…}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClDensitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The constant c, > 0.
    pub c: f64,
    /// Index of the first category in the tail, ≥ 1.
    pub l: u64,
    /// Named, possibly overlapping sets of sensitive values.
    pub categories: BTreeMap<String, Vec<String>>,
    /// Values no one minds disclosing (Y); disjoint from every category.
    #[serde(default)]
    pub dont_care: Vec<String>,
    /// Most categories accepted; [`super::categories::DEFAULT_MAX_CATEGORIES`] when absent, at most 64.
    #[serde(default)]
    pub max_categories: Option<u64>,
}

impl ModelSpec for ClDensitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let c = at.positive_c(self.c)?;
        let l = at.diversity_l(self.l)?;
        let (resolved, sets) = resolve_categories(
            at,
            protected.column,
            &self.categories,
            &self.dont_care,
            self.max_categories,
        )?;
        Ok(ResolvedModel::new(
            ClDensity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                c,
                l,
                categories: resolved,
            },
            ClDensityCheck {
                column: self.attribute.clone(),
                c,
                l,
                sets,
            },
        ))
    }
}

/// (c,l)-density control of `column`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClDensityCheck {
    /// Output column name.
    pub column: String,
    /// The constant c.
    pub c: Decimal,
    /// Index of the first category of the tail.
    pub l: u64,
    /// The categories and Y.
    pub sets: CategorySets,
}

impl ClassRequirement for ClDensityCheck {
    fn describe(&self) -> String {
        format!("({},{})-density on '{}'", self.c, self.l, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::cl_density(values, self.c, self.l, &self.sets)
    }
}
