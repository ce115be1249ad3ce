//! Prosecutor risk: the attacker knows the target is in the published table, so a record in a class of
//! `s` records is re-identified with probability `1/s` (El Emam, "Guide to the De-Identification of
//! Personal Health Information", 2013, ch. "Measuring the Probability of Re-identification"; ARX's
//! `RiskModelSampleSummary` reports the same three figures, plus `RiskModelSampleRisks` for the share
//! of records at the highest risk).
//!
//! From the class-size frequencies (suppressed records already left out, see [`super::classes`]):
//! - highest risk `1 / min size`;
//! - average risk, the record-weighted mean of `1/s`: `Σ s·(1/s) / n = classes / records`;
//! - records at risk: the share of records in classes whose risk `1/s` is **strictly greater** than
//!   the threshold, as ARX tests it (`1d / size > threshold`), so with threshold 0.2 a class of 5
//!   records (risk exactly 0.2) is not at risk. The comparison is ARX's, in double precision.
//! - records at the highest risk: the share of records in classes of the smallest size;
//! - sample uniques: the share of records in classes of size 1.
//!
//! With no records (everything suppressed) every figure is 0: nothing published, nothing to link.

use serde::Serialize;

use super::classes::ClassSizes;

/// Default threshold of the records-at-risk figure: a record is at risk when its re-identification
/// probability exceeds 0.2 (a class smaller than 5).
pub const DEFAULT_THRESHOLD: f64 = 0.2;

/// Prosecutor risk figures; every value is a probability or a share of records in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProsecutorRisk {
    /// `1 / smallest class size`.
    pub highest: f64,
    /// Mean of `1/s` over records: classes / records.
    pub average: f64,
    /// Share of records whose risk `1/s` is strictly above the threshold.
    pub records_at_risk: f64,
    /// Share of records in classes of the smallest size.
    pub records_at_highest_risk: f64,
}

/// The prosecutor risk of `classes` for `threshold`.
pub fn prosecutor_risk(classes: &ClassSizes, threshold: f64) -> ProsecutorRisk {
    let records = classes.records();
    let Some(min) = classes.min_size() else {
        return ProsecutorRisk {
            highest: 0.0,
            average: 0.0,
            records_at_risk: 0.0,
            records_at_highest_risk: 0.0,
        };
    };
    let n = records as f64;
    let at_risk: u64 = classes
        .frequencies()
        .iter()
        .filter(|&&(s, _)| 1.0 / s as f64 > threshold)
        .map(|&(s, c)| s * c)
        .sum();
    ProsecutorRisk {
        highest: 1.0 / min as f64,
        average: classes.classes() as f64 / n,
        records_at_risk: at_risk as f64 / n,
        records_at_highest_risk: (min * classes.classes_of_size(min)) as f64 / n,
    }
}

/// Share of records in classes of size 1 (0 without records).
pub fn sample_uniques(classes: &ClassSizes) -> f64 {
    match classes.records() {
        0 => 0.0,
        n => classes.classes_of_size(1) as f64 / n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class sizes {1, 1, 2, 4}: 8 records in 4 classes.
    #[test]
    fn hand_computed_profile() {
        let c = ClassSizes::from_sizes([1, 1, 2, 4]);
        let r = prosecutor_risk(&c, DEFAULT_THRESHOLD);
        assert_eq!(r.highest, 1.0);
        assert_eq!(r.average, 4.0 / 8.0);
        // risks 1, 1, 1/2 (> 0.2) and 1/4 (> 0.2): every record is at risk
        assert_eq!(r.records_at_risk, 1.0);
        assert_eq!(r.records_at_highest_risk, 2.0 / 8.0);
        assert_eq!(sample_uniques(&c), 2.0 / 8.0);
        // threshold 0.3: the class of 4 (risk 0.25) is not at risk: 4 of 8 records are
        assert_eq!(prosecutor_risk(&c, 0.3).records_at_risk, 4.0 / 8.0);
    }

    /// The threshold comparison is strict: a class of 5 has risk exactly 0.2 and is not at risk.
    #[test]
    fn threshold_is_strict() {
        let c = ClassSizes::from_sizes([5, 5, 4]);
        let r = prosecutor_risk(&c, 0.2);
        assert_eq!(r.records_at_risk, 4.0 / 14.0);
        assert_eq!(r.highest, 0.25);
        assert_eq!(r.records_at_highest_risk, 4.0 / 14.0);
        assert_eq!(r.average, 3.0 / 14.0);
        assert_eq!(prosecutor_risk(&c, 0.25).records_at_risk, 0.0);
        assert_eq!(sample_uniques(&c), 0.0);
    }

    #[test]
    fn no_records_no_risk() {
        let c = ClassSizes::from_sizes([]);
        let r = prosecutor_risk(&c, 0.2);
        assert_eq!((r.highest, r.average, r.records_at_risk), (0.0, 0.0, 0.0));
        assert_eq!(sample_uniques(&c), 0.0);
    }
}
