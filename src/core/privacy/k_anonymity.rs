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

/// k-anonymity with a k another model derived (estimated k-map, differential privacy), described as
/// that model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedKAnonymity {
    /// The class size the model derived.
    pub k: KAnonymity,
    /// The model and how it derived k, for reports.
    pub description: String,
}

impl PrivacyModel for DerivedKAnonymity {
    fn describe(&self) -> String {
        self.description.clone()
    }
    fn min_class_size(&self) -> u64 {
        self.k.min_class_size()
    }
    fn is_monotone_with_suppression(&self) -> bool {
        true
    }
    fn is_monotone_without_suppression(&self) -> bool {
        true
    }
    fn is_size_only(&self) -> bool {
        true
    }
    fn is_class_private(&self, class: &ClassView<'_>) -> bool {
        self.k.is_class_private(class)
    }
}

/// Highest prosecutor risk at most `threshold` (ARX's "highest risk" model): a record's prosecutor
/// re-identification risk is 1 / |its class|, so the model is k-anonymity with `k = ⌈1 / threshold⌉`
/// (the smallest k with 1 / k ≤ threshold), and monotone as k-anonymity is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HighestRisk {
    /// The largest risk allowed, in (0, 1].
    pub threshold: f64,
    /// The class size it takes.
    pub k: u64,
}

impl HighestRisk {
    /// The model for `threshold` in (0, 1]; `None` otherwise.
    pub fn new(threshold: f64) -> Option<Self> {
        // beyond 2^53 records no table is large enough, and k would leave the exact integers
        if !(threshold > 0.0 && threshold <= 1.0) || 1.0 / threshold >= (1u64 << 53) as f64 {
            return None;
        }
        // ⌈1 / r⌉ in floating point, then corrected to the smallest k with 1 / k ≤ r exactly as compared
        let mut k = (1.0 / threshold).ceil().max(1.0) as u64;
        while k > 1 && 1.0 / (k - 1) as f64 <= threshold {
            k -= 1;
        }
        while 1.0 / k as f64 > threshold {
            k += 1;
        }
        Some(Self { threshold, k })
    }
}

impl PrivacyModel for HighestRisk {
    fn describe(&self) -> String {
        format!(
            "highest prosecutor risk ≤ {} ({}-anonymity)",
            self.threshold, self.k
        )
    }
    fn min_class_size(&self) -> u64 {
        self.k
    }
    fn is_monotone_with_suppression(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_risk_takes_the_smallest_k_whose_risk_is_within_it() {
        let k = |r: f64| HighestRisk::new(r).map(|m| m.k);
        assert_eq!(k(0.2), Some(5));
        assert_eq!(k(0.25), Some(4));
        assert_eq!(k(0.3), Some(4));
        assert_eq!(k(1.0 / 3.0), Some(3));
        assert_eq!(k(0.33), Some(4));
        assert_eq!(k(0.1), Some(10));
        assert_eq!(k(0.5), Some(2));
        assert_eq!(k(1.0), Some(1));
        assert_eq!(k(0.0001), Some(10_000));
        for bad in [
            0.0,
            -0.1,
            1.01,
            f64::NAN,
            f64::INFINITY,
            1e-30,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(k(bad), None, "{bad}");
        }
        // every k is the smallest whose risk 1 / k stays within the threshold
        for r in (1..=1000).map(|i| i as f64 / 1000.0) {
            let m = HighestRisk::new(r).unwrap();
            assert!(1.0 / m.k as f64 <= r, "{r}");
            assert!(m.k == 1 || 1.0 / (m.k - 1) as f64 > r, "{r}");
        }
    }
}
