//! k-anonymity (Samarati & Sweeney 1998): every class has at least k records.

use super::{ClassView, PrivacyModel};

/// Every equivalence class holds at least `k` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KAnonymity {
    /// Minimum class size, at least 1.
    pub k: u64,
}

impl PrivacyModel for KAnonymity {
    fn describe(&self) -> String {
        format!("{}-anonymity", self.k)
    }
    fn min_class_size(&self) -> u64 {
        self.k
    }
    fn is_monotone_with_suppression(&self) -> bool {
        // A merged class is at least as large as each part, so records in small classes can only decrease.
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_size_only(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        class.size() >= self.k
    }
}
