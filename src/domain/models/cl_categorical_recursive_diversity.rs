//! (c,l)-categorical recursive diversity (Hsu 2008, Def 3.5.8): the largest category count of a class is
//! at most `c` times the records outside its best `l` categories (non-strict, in counts). The verifier
//! enumerates the l-subsets of the categories that hold a value of the class.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::core::privacy::{ClCategoricalRecursiveDiversity, Decimal};
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, CategorySets, ClassRequirement};

use super::categories::{binomial, check_work, resolve_categories};
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "cl_categorical_recursive_diversity", "attribute": …, "c": …, "l": …, "categories": {…}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClCategoricalRecursiveDiversitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// The constant c, > 0.
    pub c: f64,
    /// Categories in the covering, ≥ 1.
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

impl ModelSpec for ClCategoricalRecursiveDiversitySpec {
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
        // MC(l) enumerates the l-subsets of the categories
        check_work(
            at,
            "the maximum l-coverage",
            binomial(resolved.count() as u64, l),
        )?;
        Ok(ResolvedModel::new(
            ClCategoricalRecursiveDiversity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                c,
                l,
                categories: resolved,
            },
            ClCategoricalRecursiveCheck {
                column: self.attribute.clone(),
                c,
                l,
                sets,
            },
        ))
    }
}

/// (c,l)-categorical recursive diversity of `column`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClCategoricalRecursiveCheck {
    /// Output column name.
    pub column: String,
    /// The constant c.
    pub c: Decimal,
    /// Categories in the covering.
    pub l: u64,
    /// The categories and Y.
    pub sets: CategorySets,
}

impl ClassRequirement for ClCategoricalRecursiveCheck {
    fn describe(&self) -> String {
        format!(
            "({},{})-categorical-recursive-diversity on '{}'",
            self.c, self.l, self.column
        )
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::cl_categorical_recursive(values, self.c, self.l, &self.sets)
    }
}
