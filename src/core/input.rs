//! What the engine runs on: borrowed, already validated and encoded columns. The caller (CLI, worker)
//! resolves a spec into this; the engine never sees strings or files.

use super::data::GeneralizationMap;

/// A quasi-identifier: its codes and its bound hierarchy.
#[derive(Debug, Clone, Copy)]
pub struct QuasiIdentifier<'a> {
    /// Column name (for reports only).
    pub name: &'a str,
    /// One column code per record.
    pub codes: &'a [u32],
    /// Generalization of those codes by level.
    pub hierarchy: &'a GeneralizationMap,
}

/// A sensitive attribute whose per-class value histograms privacy models may inspect.
#[derive(Debug, Clone, Copy)]
pub struct SensitiveAttribute<'a> {
    /// Column name (for reports only).
    pub name: &'a str,
    /// One column code per record.
    pub codes: &'a [u32],
    /// Number of distinct codes.
    pub distinct: usize,
}

/// The encoded input of one run.
#[derive(Debug, Clone)]
pub struct EngineInput<'a> {
    /// Number of records.
    pub rows: usize,
    /// Quasi-identifiers in lattice order.
    pub quasi_identifiers: Vec<QuasiIdentifier<'a>>,
    /// Sensitive attributes, addressed by index ("slot") from privacy models.
    pub sensitive: Vec<SensitiveAttribute<'a>>,
}

impl EngineInput<'_> {
    /// Maximum generalization level of each quasi-identifier.
    pub fn max_levels(&self) -> Vec<u8> {
        self.quasi_identifiers
            .iter()
            .map(|q| q.hierarchy.max_level().min(u8::MAX as usize) as u8)
            .collect()
    }
}
