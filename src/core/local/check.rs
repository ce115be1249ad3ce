//! Checks the privacy models on a group of records, for algorithms that form groups themselves (Mondrian's
//! "allowable cut", clustering) instead of grouping a generalized table.

use super::LocalInput;
use crate::core::input::SensitiveAttribute;
use crate::core::privacy::{ClassView, PrivacyModel};

/// Checks groups of records against every privacy model of a run. Keeps scratch space between calls, so
/// one checker per thread.
#[derive(Debug)]
pub struct GroupChecker<'a> {
    models: &'a [Box<dyn PrivacyModel>],
    sensitive: Vec<SensitiveAttribute<'a>>,
    slots: Vec<usize>,
    min_size: u64,
    size_only: bool,
    counts: Vec<Vec<u32>>,
    histograms: Vec<Vec<(u32, u32)>>,
}

impl<'a> GroupChecker<'a> {
    /// A checker of `models` over the sensitive attributes of `input`.
    pub fn new(input: &LocalInput<'a>, models: &'a [Box<dyn PrivacyModel>]) -> Self {
        let mut slots: Vec<usize> = models.iter().filter_map(|m| m.sensitive_slot()).collect();
        slots.sort_unstable();
        slots.dedup();
        let sensitive = input.sensitive.clone();
        Self {
            min_size: models.iter().map(|m| m.min_class_size()).max().unwrap_or(1),
            size_only: models.iter().all(|m| m.is_size_only()),
            counts: sensitive.iter().map(|s| vec![0; s.distinct]).collect(),
            histograms: vec![Vec::new(); sensitive.len()],
            models,
            sensitive,
            slots,
        }
    }

    /// The smallest group any model can accept.
    pub fn min_group_size(&self) -> u64 {
        self.min_size
    }

    /// Whether the models depend on nothing but the group's size.
    pub fn is_size_only(&self) -> bool {
        self.size_only
    }

    /// Whether the group of `rows` satisfies every model.
    pub fn is_private(&mut self, rows: &[u32]) -> bool {
        let size = rows.len();
        if (size as u64) < self.min_size {
            return false;
        }
        if self.size_only {
            return true;
        }
        for &slot in &self.slots {
            let codes = self.sensitive[slot].codes;
            let counts = &mut self.counts[slot];
            let histogram = &mut self.histograms[slot];
            histogram.clear();
            for &r in rows {
                let code = codes[r as usize];
                if counts[code as usize] == 0 {
                    histogram.push((code, 0));
                }
                counts[code as usize] += 1;
            }
            for entry in histogram.iter_mut() {
                entry.1 = std::mem::take(&mut counts[entry.0 as usize]);
            }
            histogram.sort_unstable_by_key(|e| e.0);
        }
        let view = ClassView::loose(size as u64, &self.histograms);
        self.models.iter().all(|m| m.is_class_private(&view))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::privacy::{DistinctLDiversity, KAnonymity};

    #[test]
    fn checks_size_and_sensitive_models_on_loose_groups() {
        let diagnosis = [0u32, 0, 1, 2, 1];
        let input = LocalInput {
            rows: 5,
            quasi_identifiers: vec![],
            sensitive: vec![SensitiveAttribute {
                name: "diagnosis",
                codes: &diagnosis,
                distinct: 3,
            }],
        };
        let models: Vec<Box<dyn PrivacyModel>> = vec![
            Box::new(KAnonymity { k: 2 }),
            Box::new(DistinctLDiversity {
                slot: 0,
                attribute: "diagnosis".into(),
                l: 2,
            }),
        ];
        let mut checker = GroupChecker::new(&input, &models);
        assert_eq!(checker.min_group_size(), 2);
        assert!(!checker.is_size_only());
        assert!(!checker.is_private(&[0, 1]), "one distinct value");
        assert!(checker.is_private(&[0, 2]));
        assert!(!checker.is_private(&[2]), "too small");
        assert!(checker.is_private(&[0, 1, 3]));
        assert!(!checker.is_private(&[0, 1]), "scratch counts were reset");
        let k_only: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: 3 })];
        let mut checker = GroupChecker::new(&input, &k_only);
        assert!(checker.is_size_only());
        assert!(checker.is_private(&[0, 1, 4]));
        assert!(!checker.is_private(&[0, 1]));
    }
}
