//! l-categorical diversity (Hsu 2008, Def 3.5.3): the smallest number of sets of
//! `{dont_care} ∪ categories` that cover a class's distinct sensitive values is at least `l`. The
//! verifier searches covers by brute force over the sets that hold a value of the class
//! ([`crate::domain::verify::sensitive`]).

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::core::privacy::LCategoricalDiversity;
use crate::domain::spec::SpecError;
use crate::domain::verify::{sensitive, CategorySets, ClassRequirement};

use super::categories::{check_work, covers_work, resolve_categories};
use super::{ModelContext, ModelSpec, ResolvedModel};

/// `{"type": "l_categorical_diversity", "attribute": …, "l": …, "categories": {…}, "dont_care": […]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LCategoricalDiversitySpec {
    /// The sensitive attribute (a column with role `sensitive`).
    pub attribute: String,
    /// Minimum cover size, ≥ 1.
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

impl ModelSpec for LCategoricalDiversitySpec {
    fn resolve(&self, at: &ModelContext<'_>) -> Result<ResolvedModel, SpecError> {
        let protected = at.sensitive(&self.attribute)?;
        let l = at.diversity_l(self.l)?;
        let (resolved, sets) = resolve_categories(
            at,
            protected.column,
            &self.categories,
            &self.dont_care,
            self.max_categories,
        )?;
        // the exact check branches over the categories of one value, at most l − 1 deep
        let depth = (l - 1).min(resolved.codes() as u64);
        let work = covers_work(resolved.largest_overlap(), depth);
        check_work(at, "the minimum cover", work)?;
        Ok(ResolvedModel::new(
            LCategoricalDiversity {
                slot: protected.slot,
                attribute: self.attribute.clone(),
                l,
                categories: resolved,
            },
            LCategoricalCheck {
                column: self.attribute.clone(),
                l,
                sets,
            },
        ))
    }
}

/// l-categorical diversity of `column`: minimum cover of at least `l` sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LCategoricalCheck {
    /// Output column name.
    pub column: String,
    /// Minimum cover size.
    pub l: u64,
    /// The categories and Y.
    pub sets: CategorySets,
}

impl ClassRequirement for LCategoricalCheck {
    fn describe(&self) -> String {
        format!("{}-categorical-diversity on '{}'", self.l, self.column)
    }

    fn column(&self) -> Option<&str> {
        Some(&self.column)
    }

    fn is_met(&self, values: &HashMap<&str, u64>) -> bool {
        sensitive::l_categorical(values, self.l, &self.sets)
    }
}
