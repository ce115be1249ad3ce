//! Population uniqueness: the Pitman, Zayatz and SNB estimates side by side, and Dankar et al.'s
//! decision rule choosing among them (Dankar, El Emam, Neisa & Roffey, "Estimating the
//! re-identification risk of clinical data sets", BMC Medical Informatics and Decision Making 12:66,
//! 2012; ARX's `RiskModelPopulationUniqueness`).
//!
//! The rule, with the sampling fraction `f = n / N`:
//! - `f ≤ 0.1`: Pitman's estimate; Zayatz's when Pitman's is not available (ARX's fallback);
//! - `f > 0.1`: the smaller of Zayatz's and the SNB estimate; Zayatz's when SNB is not available.
//!
//! As in ARX an estimate of exactly 0 counts as "not available" to the rule, and with no sample uniques
//! every estimate is 0. When the population is the sample itself (`f = 1`) the population uniques are
//! the sample uniques, exactly: the models do not apply, and the rule reports the sample's count with
//! the model `sample`.

use serde::Serialize;

use super::classes::ClassSizes;
use super::pitman::pitman_uniques;
use super::snb::snb_uniques;
use super::zayatz::zayatz_uniques;

/// Sampling fraction up to which Dankar et al.'s rule uses Pitman's model.
pub const DANKAR_PITMAN_LIMIT: f64 = 0.1;

/// One model's estimate, or why it does not apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UniquenessEstimate {
    /// Estimated number of records unique in the population; null when not applicable.
    pub uniques: Option<f64>,
    /// `uniques / population size` (ARX's "fraction of unique tuples"); null when not applicable.
    pub fraction: Option<f64>,
    /// Why the model does not apply; absent when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<&'static str>,
}

impl UniquenessEstimate {
    fn new(result: Result<f64, &'static str>, population: u64) -> Self {
        match result {
            Ok(u) => Self {
                uniques: Some(u),
                fraction: Some(if population == 0 {
                    0.0
                } else {
                    u / population as f64
                }),
                not_applicable: None,
            },
            Err(reason) => Self {
                uniques: None,
                fraction: None,
                not_applicable: Some(reason),
            },
        }
    }

    fn available(&self) -> Option<f64> {
        self.uniques.filter(|&u| u != 0.0)
    }
}

/// Dankar et al.'s choice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DankarEstimate {
    /// The model the rule chose: `pitman`, `zayatz`, `snb`, `sample` (f = 1) or `none` (no sample
    /// uniques, or nothing available).
    pub model: &'static str,
    /// The chosen estimate.
    #[serde(flatten)]
    pub estimate: UniquenessEstimate,
}

/// The population-uniqueness section of a risk profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopulationUniqueness {
    /// Population size N.
    pub population_size: u64,
    /// n / N.
    pub sampling_fraction: f64,
    /// Pitman's model.
    pub pitman: UniquenessEstimate,
    /// Zayatz's model.
    pub zayatz: UniquenessEstimate,
    /// The SNB model.
    pub snb: UniquenessEstimate,
    /// Dankar et al.'s decision rule.
    pub dankar: DankarEstimate,
}

/// Every estimate for `classes` drawn from a population of `population ≥ records` records.
pub fn population_uniqueness(classes: &ClassSizes, population: u64) -> PopulationUniqueness {
    let n = classes.records();
    let population = population.max(n);
    let f = if population == 0 {
        1.0
    } else {
        n as f64 / population as f64
    };
    let c1 = classes.classes_of_size(1);
    if population == n {
        let reason = if n == 0 {
            "no records"
        } else {
            "the sample is the whole population: its uniques are the population uniques"
        };
        let na = UniquenessEstimate::new(Err(reason), population);
        return PopulationUniqueness {
            population_size: population,
            sampling_fraction: f,
            pitman: na.clone(),
            zayatz: na.clone(),
            snb: na,
            dankar: DankarEstimate {
                model: if n == 0 { "none" } else { "sample" },
                estimate: UniquenessEstimate::new(Ok(c1 as f64), population),
            },
        };
    }
    let pitman = UniquenessEstimate::new(pitman_uniques(classes, population), population);
    let zayatz = UniquenessEstimate::new(zayatz_uniques(classes, population), population);
    let snb = UniquenessEstimate::new(snb_uniques(classes, population), population);
    let chosen = if c1 == 0 {
        None
    } else if f <= DANKAR_PITMAN_LIMIT {
        match (pitman.available(), zayatz.available()) {
            (Some(_), _) => Some(("pitman", pitman.clone())),
            (None, Some(_)) => Some(("zayatz", zayatz.clone())),
            _ => None,
        }
    } else {
        match (snb.available(), zayatz.available()) {
            (Some(s), Some(z)) if z < s => Some(("zayatz", zayatz.clone())),
            (Some(_), _) => Some(("snb", snb.clone())),
            (None, Some(_)) => Some(("zayatz", zayatz.clone())),
            _ => None,
        }
    };
    let dankar = match chosen {
        Some((model, estimate)) => DankarEstimate { model, estimate },
        None if c1 == 0 => DankarEstimate {
            model: "none",
            estimate: UniquenessEstimate::new(Ok(0.0), population),
        },
        None => DankarEstimate {
            model: "none",
            estimate: UniquenessEstimate::new(Err("no model applies"), population),
        },
    };
    PopulationUniqueness {
        population_size: population,
        sampling_fraction: f,
        pitman,
        zayatz,
        snb,
        dankar,
    }
}

/// A population-uniqueness model a threshold is stated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniquenessModel {
    /// Pitman's model.
    Pitman,
    /// Zayatz's model.
    Zayatz,
    /// The SNB model.
    Snb,
    /// Dankar et al.'s decision rule among the three.
    Dankar,
}

impl UniquenessModel {
    /// The model's name in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            UniquenessModel::Pitman => "pitman",
            UniquenessModel::Zayatz => "zayatz",
            UniquenessModel::Snb => "snb",
            UniquenessModel::Dankar => "dankar",
        }
    }
}

/// The estimated share of population records unique in the population (estimated uniques / population
/// size) under `model`, for `classes` drawn from `population` records; `None` when the model does not
/// apply to these classes. Without sample uniques, or without records, the share is 0 whatever the model;
/// when the population is the sample, it is the sample's share of uniques, exactly.
pub fn population_unique_share(
    classes: &ClassSizes,
    population: u64,
    model: UniquenessModel,
) -> Option<f64> {
    let n = classes.records();
    let population = population.max(n);
    let c1 = classes.classes_of_size(1);
    if n == 0 || c1 == 0 {
        return Some(0.0);
    }
    if population == n {
        return Some(c1 as f64 / population as f64);
    }
    let uniques = match model {
        UniquenessModel::Pitman => pitman_uniques(classes, population).ok(),
        UniquenessModel::Zayatz => zayatz_uniques(classes, population).ok(),
        UniquenessModel::Snb => snb_uniques(classes, population).ok(),
        UniquenessModel::Dankar => {
            population_uniqueness(classes, population)
                .dankar
                .estimate
                .uniques
        }
    }?;
    Some(uniques / population as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_b() -> ClassSizes {
        let mut s = vec![1; 30];
        s.extend([2; 6]);
        s.extend([3; 2]);
        s.extend([4, 6]);
        ClassSizes::from_sizes(s)
    }

    /// Values from `python3 scripts/risk_reference.py` (sample B, n = 58).
    #[test]
    fn decision_rule() {
        let c = sample_b();
        // f = 0.058 ≤ 0.1: Pitman (113.31181623203188)
        let p = population_uniqueness(&c, 1000);
        assert_eq!(p.dankar.model, "pitman");
        let u = p.dankar.estimate.uniques.unwrap();
        assert!((u - 113.311_816_232_031_88).abs() < 1e-6, "{u}");
        assert!((p.dankar.estimate.fraction.unwrap() - u / 1000.0).abs() < 1e-15);
        // f = 0.58: min(Zayatz 42.489741279966821, SNB 41.018344101827818) = SNB
        let p = population_uniqueness(&c, 100);
        assert_eq!(p.dankar.model, "snb");
        assert!((p.zayatz.uniques.unwrap() - 42.489_741_279_966_82).abs() < 1e-9);
        assert!((p.dankar.estimate.uniques.unwrap() - 41.018_344_101_827_818).abs() < 1e-6);
        assert!((p.sampling_fraction - 0.58).abs() < 1e-15);
    }

    /// Sampling fraction 1: the population uniques are the sample uniques; close to 1 (N = n + 1)
    /// Zayatz's estimate is close to them (30.308219178082192 from the reference script).
    #[test]
    fn sampling_fraction_one_gives_sample_uniques() {
        let c = sample_b();
        let p = population_uniqueness(&c, 58);
        assert_eq!(p.dankar.model, "sample");
        assert_eq!(p.dankar.estimate.uniques, Some(30.0));
        assert!(p.pitman.not_applicable.is_some() && p.snb.uniques.is_none());
        let p = population_uniqueness(&c, 59);
        assert!((p.zayatz.uniques.unwrap() - 30.308_219_178_082_192).abs() < 1e-9);
    }

    #[test]
    fn no_uniques_no_population_uniques() {
        let p = population_uniqueness(&ClassSizes::from_sizes([2, 2, 5]), 1000);
        assert_eq!(p.dankar.model, "none");
        assert_eq!(p.dankar.estimate.uniques, Some(0.0));
        let p = population_uniqueness(&ClassSizes::from_sizes([]), 0);
        assert_eq!(p.dankar.model, "none");
    }

    #[test]
    fn unique_share_of_each_model() {
        let c = sample_b();
        let share = |m| population_unique_share(&c, 1000, m).unwrap();
        assert!((share(UniquenessModel::Pitman) - 0.113_311_816_232_031_88).abs() < 1e-9);
        assert_eq!(
            share(UniquenessModel::Dankar),
            share(UniquenessModel::Pitman)
        );
        let p = population_uniqueness(&c, 1000);
        assert_eq!(
            Some(share(UniquenessModel::Zayatz)),
            p.zayatz.fraction,
            "Zayatz's share is its fraction"
        );
        assert_eq!(Some(share(UniquenessModel::Snb)), p.snb.fraction);
        // the sample as its own population: 30 uniques of 58 records
        let whole = population_unique_share(&c, 58, UniquenessModel::Snb);
        assert_eq!(whole, Some(30.0 / 58.0));
        // no uniques, no records
        let none = ClassSizes::from_sizes([2, 3]);
        assert_eq!(
            population_unique_share(&none, 1000, UniquenessModel::Pitman),
            Some(0.0)
        );
        assert_eq!(
            population_unique_share(&ClassSizes::default(), 10, UniquenessModel::Dankar),
            Some(0.0)
        );
        // SNB needs classes of size 2: not applicable, so no share
        let no_pairs = ClassSizes::from_sizes([1, 1, 3]);
        assert_eq!(
            population_unique_share(&no_pairs, 1000, UniquenessModel::Snb),
            None
        );
    }
}
