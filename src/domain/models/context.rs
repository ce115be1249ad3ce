//! What a model's resolution sees: its index in `privacy_models` (for JSON pointers), the table and its
//! sensitive attributes, and the parameter checks several models share.

use crate::core::data::{Column, GeneralizationMap, Table};
use crate::core::privacy::Decimal;
use crate::domain::spec::SpecError;
use crate::error_code::ErrorCode;

/// A sensitive column and its hierarchy, if one was declared.
#[derive(Debug, Clone, Copy)]
pub struct SensitiveColumn<'t> {
    /// The column.
    pub column: &'t Column,
    /// Its hierarchy, bound to the column.
    pub hierarchy: Option<&'t GeneralizationMap>,
}

/// The sensitive attribute a model protects.
#[derive(Debug, Clone, Copy)]
pub struct Protected<'t> {
    /// The engine's sensitive slot of the attribute.
    pub slot: usize,
    /// The attribute's column.
    pub column: &'t Column,
    /// The attribute's hierarchy, bound to the column, if one was declared.
    pub hierarchy: Option<&'t GeneralizationMap>,
}

/// What every model of a spec is resolved against: the table, its sensitive attributes, its
/// quasi-identifiers with their hierarchies (full-domain jobs; lattice order), and the population table
/// the job was given, if any.
#[derive(Clone, Copy)]
pub struct ModelInputs<'a> {
    /// The loaded table.
    pub table: &'a Table,
    /// The sensitive attributes.
    pub sensitive: &'a [SensitiveColumn<'a>],
    /// The quasi-identifiers (column index and hierarchy), for a full-domain job.
    pub quasi_identifiers: &'a [(usize, GeneralizationMap)],
    /// The population table.
    pub population: Option<&'a Table>,
}

/// Model `index` of a spec, with the table it is resolved against.
pub struct ModelContext<'a> {
    /// Index of the model in `privacy_models`.
    pub index: usize,
    /// The loaded table.
    pub table: &'a Table,
    sensitive: &'a [SensitiveColumn<'a>],
    /// The quasi-identifiers (column index and hierarchy) of a full-domain job, in lattice order.
    pub quasi_identifiers: &'a [(usize, GeneralizationMap)],
    /// The population table the job was given.
    pub population: Option<&'a Table>,
}

impl<'a> ModelContext<'a> {
    /// The context of model `index`, without quasi-identifiers or a population.
    pub fn new(index: usize, table: &'a Table, sensitive: &'a [SensitiveColumn<'a>]) -> Self {
        Self {
            index,
            table,
            sensitive,
            quasi_identifiers: &[],
            population: None,
        }
    }

    /// The context of model `index` of a job with these inputs.
    pub fn of(index: usize, inputs: ModelInputs<'a>) -> Self {
        Self {
            index,
            table: inputs.table,
            sensitive: inputs.sensitive,
            quasi_identifiers: inputs.quasi_identifiers,
            population: inputs.population,
        }
    }

    /// The JSON pointer of the model's field `field` (of the model itself when empty).
    pub fn pointer(&self, field: &str) -> String {
        if field.is_empty() {
            format!("/privacy_models/{}", self.index)
        } else {
            format!("/privacy_models/{}/{field}", self.index)
        }
    }

    /// A problem with the model's field `field`.
    pub fn error(&self, field: &str, code: ErrorCode, message: impl Into<String>) -> SpecError {
        SpecError::new(self.pointer(field), code, message)
    }

    /// The model's `threshold` when it is a share in [0, 1] (`invalid_threshold` otherwise, with
    /// `message`).
    pub fn share_threshold(&self, value: f64, message: &str) -> Result<f64, SpecError> {
        if (0.0..=1.0).contains(&value) {
            Ok(value)
        } else {
            Err(self.error("threshold", ErrorCode::InvalidThreshold, message))
        }
    }

    /// The sensitive attribute named by the model's `attribute` field.
    pub fn sensitive(&self, attribute: &str) -> Result<Protected<'a>, SpecError> {
        if let Some(slot) = self
            .sensitive
            .iter()
            .position(|s| s.column.name == attribute)
        {
            let s = self.sensitive[slot];
            return Ok(Protected {
                slot,
                column: s.column,
                hierarchy: s.hierarchy,
            });
        }
        if self.table.column_index(attribute).is_none() {
            return Err(self.error(
                "attribute",
                ErrorCode::UnknownColumn,
                format!("the dataset has no column '{attribute}'"),
            ));
        }
        Err(self.error(
            "attribute",
            ErrorCode::NotSensitive,
            format!(
                "column '{attribute}' must have the role sensitive to be protected by a privacy model"
            ),
        ))
    }

    /// The model's `l`, at least 1.
    pub fn diversity_l(&self, l: u64) -> Result<u64, SpecError> {
        if l < 1 {
            return Err(self.error("l", ErrorCode::InvalidL, "l must be at least 1"));
        }
        Ok(l)
    }

    /// The model's `c`, a positive decimal.
    pub fn positive_c(&self, c: f64) -> Result<Decimal, SpecError> {
        match Decimal::from_f64(c) {
            Some(c) if !c.is_zero() => Ok(c),
            _ => Err(self.error(
                "c",
                ErrorCode::InvalidC,
                "c must be a positive number (at most 18 decimal places)",
            )),
        }
    }

    /// A fraction parameter (`d`, `mu`) of the model: a decimal in [0, 1].
    pub fn fraction(&self, name: &str, code: ErrorCode, value: f64) -> Result<Decimal, SpecError> {
        match Decimal::from_f64(value) {
            Some(v) if value <= 1.0 => Ok(v),
            _ => Err(self.error(
                name,
                code,
                format!("{name} must be a fraction between 0 and 1"),
            )),
        }
    }

    /// A finite parameter of at least 0 (`delta`, `r`) of the model.
    pub fn non_negative(&self, name: &str, code: ErrorCode, value: f64) -> Result<f64, SpecError> {
        if value.is_finite() && value >= 0.0 {
            Ok(value)
        } else {
            Err(self.error(name, code, format!("{name} must be a number of at least 0")))
        }
    }
}
