//! The categories and don't-care set shared by Hsu 2008's categorical models (§3.5; note
//! `notes/hsu-2008-sensitive-attribute-protection.md` §2.5): their validation against the sensitive
//! column, the engine's per-value bitmasks, the verifier's sets of texts, and the bound on the work of the
//! exact checks.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::data::Column;
use crate::core::privacy::{Categories, MAX_CATEGORIES};
use crate::domain::spec::{pointer_segment, SpecError};
use crate::domain::verify::CategorySets;
use crate::error_code::ErrorCode;

use super::ModelContext;

/// Default cap on the number of categories of a categorical model.
pub const DEFAULT_MAX_CATEGORIES: u64 = 16;

/// Most candidate covers or coverings the exact categorical checks may examine per class.
pub const MAX_CATEGORY_WORK: u64 = 1 << 20;

/// Resolves the categories and don't-care set of model `at` against column `attribute`: at most
/// `max_categories` categories, Y disjoint from every category, and every value of the column in Y or
/// some category (values of the spec that the column lacks are fine).
pub fn resolve_categories(
    at: &ModelContext<'_>,
    column: &Column,
    categories: &BTreeMap<String, Vec<String>>,
    dont_care: &[String],
    max_categories: Option<u64>,
) -> Result<(Categories, CategorySets), SpecError> {
    let pointer = at.pointer("");
    let cap = max_categories.unwrap_or(DEFAULT_MAX_CATEGORIES);
    if cap < 1 || cap > MAX_CATEGORIES as u64 {
        return Err(SpecError::new(
            format!("{pointer}/max_categories"),
            ErrorCode::InvalidMaxCategories,
            format!("max_categories must be between 1 and {MAX_CATEGORIES}"),
        ));
    }
    if categories.len() as u64 > cap {
        return Err(SpecError::new(
            format!("{pointer}/categories"),
            ErrorCode::TooManyCategories,
            format!(
                "{} categories exceed the limit of {cap} (raise max_categories, at most {MAX_CATEGORIES})",
                categories.len()
            ),
        ));
    }
    let dont_care: BTreeSet<String> = dont_care.iter().cloned().collect();
    let mut sets = Vec::with_capacity(categories.len());
    for (name, values) in categories {
        if values.iter().any(|v| dont_care.contains(v)) {
            return Err(SpecError::new(
                format!("{pointer}/categories/{}", pointer_segment(name)),
                ErrorCode::DontCareOverlap,
                format!("category '{name}' shares values with dont_care; they must be disjoint"),
            ));
        }
        sets.push(values.iter().cloned().collect::<BTreeSet<String>>());
    }
    let mut masks = Vec::with_capacity(column.dictionary.len());
    let mut flags = Vec::with_capacity(column.dictionary.len());
    let mut uncovered = 0usize;
    for value in column.dictionary.values() {
        let mask = sets
            .iter()
            .enumerate()
            .filter(|(_, set)| set.contains(value))
            .fold(0u64, |m, (b, _)| m | 1u64 << b);
        let is_dont_care = dont_care.contains(value);
        if mask == 0 && !is_dont_care {
            uncovered += 1;
        }
        masks.push(mask);
        flags.push(is_dont_care);
    }
    if uncovered > 0 {
        return Err(SpecError::new(
            format!("{pointer}/categories"),
            ErrorCode::UncoveredValues,
            format!(
                "{uncovered} distinct values of column '{}' are in no category and not in dont_care",
                column.name
            ),
        ));
    }
    let resolved = Categories::new(sets.len(), masks, flags).ok_or_else(|| {
        SpecError::new(
            format!("{pointer}/categories"),
            ErrorCode::TooManyCategories,
            format!("at most {MAX_CATEGORIES} categories are supported"),
        )
    })?;
    Ok((
        resolved,
        CategorySets {
            categories: sets,
            dont_care,
        },
    ))
}

/// Nodes the branching cover search may visit: `Σ_{j ≤ depth} overlap^j` (saturating).
pub fn covers_work(overlap: u64, depth: u64) -> u64 {
    let mut total: u64 = 1;
    let mut level: u64 = 1;
    if overlap <= 1 {
        // one branch per level: linear in the class's values
        return 1;
    }
    for _ in 0..depth {
        level = level.saturating_mul(overlap);
        total = total.saturating_add(level);
        if level == 0 || total >= MAX_CATEGORY_WORK {
            break;
        }
    }
    total
}

/// `C(n, k)`, saturating.
pub fn binomial(n: u64, k: u64) -> u64 {
    if k >= n {
        return 1;
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for j in 0..k {
        result = result * u128::from(n - j) / u128::from(j + 1);
        if result > u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    result as u64
}

/// Refuses a categorical model whose exact check could examine more than [`MAX_CATEGORY_WORK`]
/// candidates per class.
pub fn check_work(at: &ModelContext<'_>, what: &str, work: u64) -> Result<(), SpecError> {
    if work > MAX_CATEGORY_WORK {
        return Err(at.error(
            "categories",
            ErrorCode::TooManyCategories,
            format!(
                "{what} would examine up to {work} candidates per class (limit {MAX_CATEGORY_WORK}); \
                 use fewer or less overlapping categories, or a smaller l"
            ),
        ));
    }
    Ok(())
}
