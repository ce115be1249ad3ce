//! Resolves δ-disclosure privacy and β-likeness models of a job spec against the table: the attribute's
//! distribution over the whole table, the validated parameter, the engine model and the independent
//! verification requirement.

use crate::core::data::Column;
use crate::core::privacy::{BetaLikeness, Decimal, DeltaDisclosure, Likeness, TableDistribution};
use crate::error_code::ErrorCode;

use crate::domain::column_values::distribution_by_text;
use crate::domain::spec::{LikenessVariant, SpecError};
use crate::domain::verify::Requirement;

/// δ-disclosure privacy of model `index` on the sensitive `column` (engine slot `slot`).
pub fn delta_disclosure(
    index: usize,
    slot: usize,
    column: &Column,
    delta: f64,
) -> Result<(DeltaDisclosure, Requirement), SpecError> {
    if !(delta.is_finite() && delta > 0.0) {
        return Err(SpecError::new(
            format!("/privacy_models/{index}/delta"),
            ErrorCode::InvalidDelta,
            "delta must be a positive number",
        ));
    }
    let model = DeltaDisclosure {
        slot,
        attribute: column.name.clone(),
        delta,
        table: TableDistribution::new(column.value_counts()),
    };
    let requirement = Requirement::DeltaDisclosure {
        column: column.name.clone(),
        delta,
        global: distribution_by_text(column),
    };
    Ok((model, requirement))
}

/// β-likeness of model `index` on the sensitive `column` (engine slot `slot`).
pub fn beta_likeness(
    index: usize,
    slot: usize,
    column: &Column,
    beta: f64,
    variant: LikenessVariant,
) -> Result<(BetaLikeness, Requirement), SpecError> {
    let beta = match Decimal::from_f64(beta) {
        Some(b) if !b.is_zero() => b,
        _ => {
            return Err(SpecError::new(
                format!("/privacy_models/{index}/beta"),
                ErrorCode::InvalidBeta,
                "beta must be a positive number (at most 18 decimal places)",
            ))
        }
    };
    let enhanced = variant == LikenessVariant::Enhanced;
    let model = BetaLikeness {
        slot,
        attribute: column.name.clone(),
        beta,
        variant: if enhanced {
            Likeness::Enhanced
        } else {
            Likeness::Basic
        },
        table: TableDistribution::new(column.value_counts()),
    };
    let requirement = Requirement::BetaLikeness {
        column: column.name.clone(),
        beta,
        enhanced,
        global: distribution_by_text(column),
    };
    Ok((model, requirement))
}
