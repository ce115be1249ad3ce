//! The report's comparison of the best transformations a full-domain search found (`"candidates": N`),
//! for a data steward who weighs loss against risk before publishing one: each with every metric, its
//! suppression, classes and prosecutor risk, and the Pareto fronts of loss against the average and the
//! highest risk.

use serde::Serialize;

use crate::core::engine::{Candidate, ClassStatistics, Outcome};
use crate::core::loss::MetricValues;
use crate::core::risk::{prosecutor_risk, ProsecutorRisk, RiskSettings};

/// Most candidates a job may ask for: each is grouped once more after the search.
pub const MAX_CANDIDATES: u64 = 100;

/// The `candidates` section of a report.
#[derive(Debug, Clone, Serialize)]
pub struct CandidatesReport {
    /// How many the job asked for.
    pub requested: u64,
    /// Whether the list is proven to be the best solutions (an exact search ranked them); otherwise
    /// it is the best a heuristic search checked, after the chosen one.
    pub exact: bool,
    /// The candidates, the chosen transformation first, then by loss (ties: lower height, then the
    /// lexicographically smaller levels in lattice order).
    pub list: Vec<CandidateReport>,
    /// The ranks of the candidates no other beats in both loss and risk.
    pub pareto_front: ParetoFront,
}

/// One candidate.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateReport {
    /// Its place in the list, from 1 (the chosen transformation).
    pub rank: u64,
    /// The level of every quasi-identifier: publish it with `POST /v1/jobs/{id}/publish` or a job's
    /// `transformation`.
    pub transformation: serde_json::Map<String, serde_json::Value>,
    /// The job's metric at this transformation.
    pub loss: f64,
    /// Every metric at this transformation.
    pub metrics: MetricValues,
    /// Records it suppresses.
    pub suppressed_records: u64,
    /// Its published classes.
    pub equivalence_classes: ClassStatistics,
    /// Prosecutor risk of its published table (suppressed records left out), at the job's risk
    /// threshold.
    pub risk: ProsecutorRisk,
}

/// Pareto fronts over the candidates (ranks, in list order): a candidate is on a front when no other
/// has at most its loss and at most its risk, one of them strictly less.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ParetoFront {
    /// Loss against the average prosecutor risk.
    pub average_risk: Vec<u64>,
    /// Loss against the highest prosecutor risk.
    pub highest_risk: Vec<u64>,
}

/// The section for `outcome`, when the job asked for candidates; `names` are the quasi-identifiers in
/// lattice order.
pub fn candidates_report(
    outcome: &Outcome,
    requested: u64,
    names: &[&str],
    settings: &RiskSettings,
) -> Option<CandidatesReport> {
    if requested <= 1 || outcome.candidates.is_empty() {
        return None;
    }
    let list: Vec<CandidateReport> = outcome
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| describe(i as u64 + 1, c, outcome, names, settings))
        .collect();
    let points = |risk: fn(&ProsecutorRisk) -> f64| -> Vec<(f64, f64)> {
        list.iter().map(|c| (c.loss, risk(&c.risk))).collect()
    };
    Some(CandidatesReport {
        requested,
        exact: outcome.candidates_exact,
        pareto_front: ParetoFront {
            average_risk: front(&points(|r| r.average)),
            highest_risk: front(&points(|r| r.highest)),
        },
        list,
    })
}

fn describe(
    rank: u64,
    candidate: &Candidate,
    outcome: &Outcome,
    names: &[&str],
    settings: &RiskSettings,
) -> CandidateReport {
    CandidateReport {
        rank,
        transformation: names
            .iter()
            .zip(&candidate.transformation)
            .map(|(n, &l)| ((*n).to_string(), serde_json::Value::from(l)))
            .collect(),
        loss: candidate.metrics.get(outcome.metric),
        metrics: candidate.metrics,
        suppressed_records: candidate.suppressed_records,
        equivalence_classes: candidate.classes,
        risk: prosecutor_risk(&candidate.class_sizes, settings.threshold),
    }
}

/// Ranks (from 1) of the points no other point dominates, minimising both coordinates.
fn front(points: &[(f64, f64)]) -> Vec<u64> {
    let dominates =
        |a: (f64, f64), b: (f64, f64)| a.0 <= b.0 && a.1 <= b.1 && (a.0 < b.0 || a.1 < b.1);
    points
        .iter()
        .enumerate()
        .filter(|&(_, &p)| !points.iter().any(|&q| dominates(q, p)))
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_keeps_the_undominated_points_and_ties() {
        // 1 is best in loss, 3 in risk, 2 dominated by 1, 4 equal to 3
        let points = [(1.0, 0.5), (2.0, 0.5), (3.0, 0.1), (3.0, 0.1), (4.0, 0.2)];
        assert_eq!(front(&points), vec![1, 3, 4]);
        assert_eq!(front(&[]), Vec::<u64>::new());
        assert_eq!(front(&[(1.0, 1.0)]), vec![1]);
    }
}
