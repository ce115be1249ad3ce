//! Encoded data: per-column dictionaries, the column-major table and generalization hierarchies.

pub mod dictionary;
pub mod hierarchy;
pub mod table;

pub use dictionary::Dictionary;
pub use hierarchy::{GeneralizationMap, Hierarchy, HierarchyError, UncoveredValues};
pub use table::{Column, Table};
