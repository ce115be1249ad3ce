//! Journalist and marketer risk against a population: the attacker links with a larger population
//! register, so a record in a sample class of `f` records whose population class holds `F ≥ f`
//! records is re-identified with probability `1/F` (El Emam 2013; ARX's `RiskModelSampleSummary`,
//! which uses the data's superset as the population and the sample itself when there is none).
//!
//! From `(f_j, F_j)` per sample class (suppressed records left out):
//! - journalist highest risk `1 / min F_j`;
//! - journalist records at risk: share of sample records whose `1/F_j` is strictly above the
//!   threshold (ARX's strict comparison);
//! - journalist average risk: ARX takes the larger of `classes / Σ F_j` and the marketer risk;
//! - marketer risk, the expected share of sample records re-identified when the attacker links every
//!   record: `Σ (f_j / F_j) / n`.
//!
//! When the population is the sample itself (`F_j = f_j`), the journalist figures equal the
//! prosecutor ones and the marketer risk is `classes / records`.

use serde::Serialize;

/// One sample class and the size of its class in the population.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchedClass {
    /// Records of the class in the sample (≥ 1).
    pub sample: u64,
    /// Records of the class in the population (≥ `sample`).
    pub population: u64,
}

/// Journalist risk figures, each in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JournalistRisk {
    /// `1 / smallest population class` among the sample's classes.
    pub highest: f64,
    /// ARX's average: `max(classes / Σ F_j, marketer risk)`.
    pub average: f64,
    /// Share of sample records whose risk `1/F_j` is strictly above the threshold.
    pub records_at_risk: f64,
}

/// Journalist risk of the matched classes; all zero without records. A population class smaller than
/// its sample class is read as the sample class (the population contains the sample).
pub fn journalist_risk(classes: &[MatchedClass], threshold: f64) -> JournalistRisk {
    let mut records = 0u64;
    let mut at_risk = 0u64;
    let mut population = 0u64;
    let mut count = 0u64;
    let mut min = u64::MAX;
    for c in classes.iter().filter(|c| c.sample > 0) {
        let big = c.population.max(c.sample);
        records += c.sample;
        population += big;
        count += 1;
        min = min.min(big);
        if 1.0 / big as f64 > threshold {
            at_risk += c.sample;
        }
    }
    if records == 0 {
        return JournalistRisk {
            highest: 0.0,
            average: 0.0,
            records_at_risk: 0.0,
        };
    }
    JournalistRisk {
        highest: 1.0 / min as f64,
        average: (count as f64 / population as f64).max(marketer_risk(classes)),
        records_at_risk: at_risk as f64 / records as f64,
    }
}

/// Marketer risk: `Σ (f_j / F_j) / n`, 0 without records.
pub fn marketer_risk(classes: &[MatchedClass]) -> f64 {
    let records: u64 = classes.iter().map(|c| c.sample).sum();
    if records == 0 {
        return 0.0;
    }
    let sum: f64 = classes
        .iter()
        .filter(|c| c.sample > 0)
        .map(|c| c.sample as f64 / c.population.max(c.sample) as f64)
        .sum();
    sum / records as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(pairs: &[(u64, u64)]) -> Vec<MatchedClass> {
        pairs
            .iter()
            .map(|&(sample, population)| MatchedClass { sample, population })
            .collect()
    }

    /// Sample classes {1, 1, 2, 4} in population classes {2, 10, 4, 4} (16 records).
    #[test]
    fn hand_computed_against_a_population() {
        let c = matched(&[(1, 2), (1, 10), (2, 4), (4, 4)]);
        let j = journalist_risk(&c, 0.2);
        assert_eq!(j.highest, 0.5);
        // risks 1/2, 1/10, 1/4, 1/4: records 1 + 2 + 4 = 7 of 8 above 0.2
        assert_eq!(j.records_at_risk, 7.0 / 8.0);
        // marketer: (1/2 + 1/10 + 2/4 + 4/4) / 8 = 2.1 / 8; classes / Σ F = 4/20 = 0.2
        let m = marketer_risk(&c);
        assert!((m - 2.1 / 8.0).abs() < 1e-15);
        assert!((j.average - 2.1 / 8.0).abs() < 1e-15);
    }

    /// The sample as its own population: journalist = prosecutor, marketer = classes / records.
    #[test]
    fn sample_as_population() {
        let c = matched(&[(1, 1), (1, 1), (2, 2), (4, 4)]);
        let j = journalist_risk(&c, 0.2);
        assert_eq!((j.highest, j.records_at_risk), (1.0, 1.0));
        assert_eq!(marketer_risk(&c), 4.0 / 8.0);
        assert_eq!(j.average, 4.0 / 8.0);
        assert_eq!(marketer_risk(&[]), 0.0);
        assert_eq!(journalist_risk(&[], 0.2).highest, 0.0);
    }
}
