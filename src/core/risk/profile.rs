//! A table's re-identification risk profile, as ARX's risk analysis reports it: prosecutor, journalist
//! and marketer risk, sample uniques and the population-uniqueness estimates, all from the class-size
//! frequencies (suppressed records left out, see [`super::classes`]).

use serde::Serialize;

use super::classes::ClassSizes;
use super::histogram::{class_size_bins, ClassSizeBin};
use super::journalist::{journalist_risk, marketer_risk, JournalistRisk, MatchedClass};
use super::prosecutor::{prosecutor_risk, sample_uniques, ProsecutorRisk};
use super::uniqueness::{population_uniqueness, PopulationUniqueness};

/// What the risk analysis assumes about the attacker's population.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiskSettings {
    /// Records at risk are those whose re-identification probability is strictly above this.
    pub threshold: f64,
    /// Records in the population the table was sampled from; `None`: the table is the population
    /// (sampling fraction 1).
    pub population_size: Option<u64>,
}

impl Default for RiskSettings {
    fn default() -> Self {
        Self {
            threshold: super::prosecutor::DEFAULT_THRESHOLD,
            population_size: None,
        }
    }
}

/// The risk profile of one table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiskProfile {
    /// Records analysed (suppressed ones left out).
    pub records: u64,
    /// Equivalence classes.
    pub classes: u64,
    /// The records-at-risk threshold.
    pub threshold: f64,
    /// Prosecutor risk.
    pub prosecutor: ProsecutorRisk,
    /// Journalist risk against the population classes (the table itself when no population table
    /// is given, as ARX does; then it equals the prosecutor risk).
    pub journalist: JournalistRisk,
    /// Marketer risk: expected share of records re-identified.
    pub marketer: f64,
    /// Share of records in classes of size 1.
    pub sample_uniques: f64,
    /// Population-uniqueness estimates for the population size.
    pub population_uniques: PopulationUniqueness,
    /// The class-size distribution in fixed bins (1, 2, 3–4, 5–9, 10–19, 20–49, 50–99, 100–999,
    /// 1000+), empty bins included.
    pub class_sizes: Vec<ClassSizeBin>,
}

impl RiskProfile {
    /// The profile of `classes`; `population` gives, for every sample class, the size of its class
    /// in a population table (`None`: the sample is its own population for journalist and marketer
    /// risk).
    pub fn new(
        classes: &ClassSizes,
        population: Option<&[MatchedClass]>,
        settings: &RiskSettings,
    ) -> Self {
        let own: Vec<MatchedClass>;
        let matched = match population {
            Some(m) => m,
            None => {
                own = classes
                    .frequencies()
                    .iter()
                    .flat_map(|&(s, c)| {
                        (0..c).map(move |_| MatchedClass {
                            sample: s,
                            population: s,
                        })
                    })
                    .collect();
                &own
            }
        };
        let records = classes.records();
        Self {
            records,
            classes: classes.classes(),
            threshold: settings.threshold,
            prosecutor: prosecutor_risk(classes, settings.threshold),
            journalist: journalist_risk(matched, settings.threshold),
            marketer: marketer_risk(matched),
            sample_uniques: sample_uniques(classes),
            population_uniques: population_uniqueness(
                classes,
                settings.population_size.unwrap_or(records),
            ),
            class_sizes: class_size_bins(classes),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn profile_of_a_small_table() {
        let c = ClassSizes::from_sizes([1, 1, 2, 4]);
        let p = RiskProfile::new(&c, None, &RiskSettings::default());
        assert_eq!((p.records, p.classes), (8, 4));
        assert_eq!(p.prosecutor.highest, 1.0);
        assert_eq!(p.prosecutor.average, 0.5);
        assert_eq!(p.journalist.highest, 1.0);
        assert_eq!(p.marketer, 0.5);
        assert_eq!(p.sample_uniques, 0.25);
        assert_eq!(p.population_uniques.population_size, 8);
        assert_eq!(p.population_uniques.dankar.estimate.uniques, Some(2.0));
    }

    proptest! {
        /// Any class sizes and population size: no panic, every share in [0, 1], every estimate
        /// finite and within the population.
        #[test]
        fn never_panics_and_stays_in_range(
            sizes in proptest::collection::vec(0u64..40, 0..60),
            extra in 0u64..100_000,
            threshold in 0.0f64..1.0,
        ) {
            let c = ClassSizes::from_sizes(sizes);
            let population = c.records() + extra;
            let p = RiskProfile::new(&c, None, &RiskSettings { threshold, population_size: Some(population) });
            for v in [p.prosecutor.highest, p.prosecutor.average, p.prosecutor.records_at_risk,
                      p.prosecutor.records_at_highest_risk, p.journalist.highest, p.journalist.average,
                      p.journalist.records_at_risk, p.marketer, p.sample_uniques] {
                prop_assert!((0.0..=1.0).contains(&v), "{v}");
            }
            let u = &p.population_uniques;
            for e in [&u.pitman, &u.zayatz, &u.snb, &u.dankar.estimate] {
                if let Some(x) = e.uniques {
                    prop_assert!(x.is_finite() && x >= 0.0 && x <= population as f64, "{x}");
                    prop_assert!(e.not_applicable.is_none());
                } else {
                    prop_assert!(e.not_applicable.is_some());
                }
            }
        }
    }
}
