//! One anonymization run: validate the plan, search the lattice, and describe the chosen transformation.

use super::control::Control;
use super::data::GeneralizationMap;
use super::differential::PrivateSearch;
use super::error::CoreError;
use super::input::{EngineInput, QuasiIdentifier};
use super::lattice::Lattice;
use super::loss::{AttributeFrame, MetricKind, MetricValues, NodeSummary};
use super::privacy::PrivacyModel;
use super::risk::ClassSizes;
use super::search::{self, Algorithm, Evaluator};

/// A resolved job: what to guarantee and how to search.
#[derive(Debug)]
pub struct Plan {
    /// Privacy models every published class must satisfy (at least one).
    pub privacy_models: Vec<Box<dyn PrivacyModel>>,
    /// Fraction of records that may be suppressed, in `[0, 1]`.
    pub suppression_limit: f64,
    /// The metric to minimise.
    pub metric: MetricKind,
    /// The search algorithm.
    pub algorithm: Algorithm,
    /// SafePub's differentially private search, which replaces `algorithm` when given (the input is
    /// then the sampled table and the models suppress every class below its k).
    pub private_search: Option<PrivateSearch>,
    /// The user's level bounds and attribute weights.
    pub steering: Steering,
    /// How many of the best transformations to rank and describe (0 or 1: the chosen one only).
    pub candidates: usize,
}

/// What a user steers in a full-domain search, per quasi-identifier in lattice order (ARX's minimum and
/// maximum generalization levels and attribute weights).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Steering {
    /// The lowest and highest hierarchy level each quasi-identifier may take (`None`: every level).
    /// The search runs on the lattice of the allowed levels only.
    pub level_bounds: Option<Vec<(u8, u8)>>,
    /// Each quasi-identifier's weight in the metrics that sum over attributes (`None`: all equal);
    /// non-negative, at least one positive, normalized so that the largest is 1.
    pub weights: Option<Vec<f64>>,
}

impl Steering {
    /// Whether the search is steered at all.
    pub fn is_set(&self) -> bool {
        self.level_bounds.is_some() || self.weights.is_some()
    }

    /// Checks the bounds and weights against the input's quasi-identifiers.
    fn validate(&self, input: &EngineInput<'_>) -> Result<(), CoreError> {
        let q = input.quasi_identifiers.len();
        let invalid = |name, problem: String| Err(CoreError::InvalidParameter { name, problem });
        if let Some(bounds) = &self.level_bounds {
            if bounds.len() != q {
                return invalid(
                    "level_bounds",
                    format!("{} bounds for {q} quasi-identifiers", bounds.len()),
                );
            }
            for ((lowest, highest), height) in bounds.iter().zip(input.max_levels()) {
                if lowest > highest || *highest > height {
                    return invalid(
                        "level_bounds",
                        format!("levels {lowest}..={highest} are not within 0..={height}"),
                    );
                }
            }
        }
        if let Some(weights) = &self.weights {
            if weights.len() != q {
                return invalid(
                    "weights",
                    format!("{} weights for {q} quasi-identifiers", weights.len()),
                );
            }
            if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
                return invalid("weights", "weights must be finite and non-negative".into());
            }
            if q > 0 && weights.iter().all(|&w| w == 0.0) {
                return invalid("weights", "at least one weight must be positive".into());
            }
        }
        Ok(())
    }

    /// The frame of the loss model: offsets of the windows, the hierarchies' heights, and the weights
    /// divided by the largest.
    fn frame(&self, input: &EngineInput<'_>) -> AttributeFrame {
        let mut frame = AttributeFrame::plain(input.max_levels());
        if let Some(bounds) = &self.level_bounds {
            frame.offsets = bounds.iter().map(|&(lowest, _)| lowest).collect();
        }
        if let Some(weights) = &self.weights {
            let largest = weights.iter().copied().fold(0.0, f64::max);
            if largest > 0.0 {
                frame.weights = weights.iter().map(|w| w / largest).collect();
            }
        }
        frame
    }
}

/// Sizes of the published equivalence classes (suppressed records excluded).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ClassStatistics {
    /// Number of classes.
    pub count: u64,
    /// Smallest class.
    pub min: u64,
    /// Largest class.
    pub max: u64,
    /// Mean class size.
    pub mean: f64,
}

impl ClassStatistics {
    /// The kept classes of `summary`, which hold `kept_rows` records.
    fn of(summary: &NodeSummary, kept_rows: u64) -> Self {
        Self {
            count: summary.kept_classes,
            min: summary.min_kept_class,
            max: summary.max_kept_class,
            mean: if summary.kept_classes == 0 {
                0.0
            } else {
                kept_rows as f64 / summary.kept_classes as f64
            },
        }
    }
}

/// How the search went.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchStatistics {
    /// The algorithm that ran.
    pub algorithm: &'static str,
    /// Distinct nodes grouped and checked.
    pub nodes_checked: u64,
    /// Nodes in the lattice.
    pub lattice_size: u128,
    /// Candidates handed to the selection step.
    pub candidates: u64,
    /// Classes and records read while grouping (the search's work).
    pub grouping_work: u64,
    /// Whether predictive tagging was used.
    pub pruning: bool,
    /// Whether the algorithm guarantees the optimum.
    pub exact: bool,
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Chosen level per quasi-identifier.
    pub transformation: Vec<u8>,
    /// Whether each record is suppressed.
    pub suppressed: Vec<bool>,
    /// Number of suppressed records.
    pub suppressed_records: u64,
    /// Most records the limit allowed to suppress.
    pub max_suppressed_records: u64,
    /// Every metric at the chosen node.
    pub metrics: MetricValues,
    /// The metric that was minimised.
    pub metric: MetricKind,
    /// Published classes.
    pub classes: ClassStatistics,
    /// Search statistics.
    pub search: SearchStatistics,
    /// The best transformations, the chosen one first, when the plan asked for more than one.
    pub candidates: Vec<Candidate>,
    /// Whether `candidates` are proven to be the best (an exact search ranked them), rather than the best
    /// a heuristic search checked.
    pub candidates_exact: bool,
}

/// One of the best transformations a search ranked, described for comparison.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Level per quasi-identifier (the hierarchies' levels).
    pub transformation: Vec<u8>,
    /// Every metric at the transformation.
    pub metrics: MetricValues,
    /// Records it suppresses.
    pub suppressed_records: u64,
    /// Its published classes.
    pub classes: ClassStatistics,
    /// The sizes of its published classes (for the risk profile).
    pub class_sizes: ClassSizes,
}

/// `floor(limit × rows)`, robust to binary fractions (0.29 × 100 is 29, not 28).
pub fn max_suppressed_records(limit: f64, rows: u64) -> u64 {
    let exact = limit * rows as f64;
    let nearest = exact.round();
    if (exact - nearest).abs() <= 1e-9 * (rows.max(1) as f64) {
        nearest as u64
    } else {
        exact.floor() as u64
    }
}

/// Validates the plan against the input.
fn validate(input: &EngineInput<'_>, plan: &Plan) -> Result<(), CoreError> {
    if plan.privacy_models.is_empty() {
        return Err(CoreError::InvalidParameter {
            name: "privacy_models",
            problem: "at least one privacy model is required".into(),
        });
    }
    if !(0.0..=1.0).contains(&plan.suppression_limit) {
        return Err(CoreError::InvalidParameter {
            name: "suppression_limit",
            problem: "must be a number between 0 and 1".into(),
        });
    }
    plan.steering.validate(input)?;
    if plan.steering.is_set() && plan.private_search.is_some() {
        return Err(CoreError::InvalidParameter {
            name: "steering",
            problem: "level bounds and weights do not apply to the differentially private search"
                .into(),
        });
    }
    for model in &plan.privacy_models {
        if model.min_class_size() > input.rows as u64 {
            return Err(CoreError::TooFewRecords {
                model: model.describe(),
                needed: model.min_class_size(),
                rows: input.rows as u64,
            });
        }
    }
    Ok(())
}

/// Runs the plan on the input.
pub fn anonymize(
    input: &EngineInput<'_>,
    plan: &Plan,
    control: &dyn Control,
) -> Result<Outcome, CoreError> {
    validate(input, plan)?;
    let frame = plan.steering.frame(input);
    // with level bounds the search runs on each hierarchy's window of allowed levels
    let windows: Option<Vec<GeneralizationMap>> =
        plan.steering.level_bounds.as_ref().map(|bounds| {
            input
                .quasi_identifiers
                .iter()
                .zip(bounds)
                .map(|(q, &(lowest, highest))| {
                    q.hierarchy.window(lowest as usize, highest as usize)
                })
                .collect()
        });
    let windowed: EngineInput<'_>;
    let input = match &windows {
        Some(maps) => {
            windowed = EngineInput {
                rows: input.rows,
                quasi_identifiers: input
                    .quasi_identifiers
                    .iter()
                    .zip(maps)
                    .map(|(q, map)| QuasiIdentifier {
                        hierarchy: map,
                        ..*q
                    })
                    .collect(),
                sensitive: input.sensitive.clone(),
            };
            &windowed
        }
        None => input,
    };
    let rows = input.rows as u64;
    let max_suppressed = max_suppressed_records(plan.suppression_limit, rows);
    let mut ev = Evaluator::new(
        input,
        &plan.privacy_models,
        max_suppressed,
        plan.metric,
        control,
    );
    ev.set_frame(frame.clone());
    ev.rank_best(plan.candidates);
    let result = match &plan.private_search {
        Some(private) => search::run_private(&mut ev, private)?,
        None => search::run(&mut ev, plan.algorithm)?,
    };
    let lattice = ev.lattice().clone();
    let Some((best, _)) = result.best else {
        let mut error = no_solution(&mut ev, plan, max_suppressed, rows);
        if let CoreError::NoSolution { models, .. } = &mut error {
            if !result.exact && matches!(result.algorithm, "lightning" | "genetic") {
                models.push_str(&format!(
                    " (the {} search is a heuristic: it found no solution it could check within its \
                     limits)",
                    result.algorithm
                ));
            }
        }
        return Err(error);
    };
    let levels = lattice.levels(best);
    let (pre_pass_checks, pre_pass_work) = ev.pre_pass();
    let nodes_checked = ev.checks() + pre_pass_checks;
    let grouping_work = ev.grouping_work() + pre_pass_work;
    let (class_of, set, kept, summary) = ev.final_grouping(&levels);
    let suppressed: Vec<bool> = class_of.iter().map(|&c| !kept[c as usize]).collect();
    let kept_rows = rows - summary.suppressed_records;
    let metrics = ev.loss_model().all(&levels, &summary);
    debug_assert!(set.len() as u64 == summary.classes);
    let mut candidates = Vec::new();
    if plan.candidates > 1 {
        for &(id, _) in &result.ranked {
            // one grouping each: a cancel is honoured between them
            if control.is_cancelled() {
                return Err(CoreError::Cancelled);
            }
            candidates.push(describe(&mut ev, &frame, &lattice.levels(id), rows));
        }
    }
    Ok(Outcome {
        candidates,
        candidates_exact: result.ranked_exact,
        suppressed,
        suppressed_records: summary.suppressed_records,
        max_suppressed_records: max_suppressed,
        metrics,
        metric: plan.metric,
        classes: ClassStatistics::of(&summary, kept_rows),
        search: SearchStatistics {
            algorithm: result.algorithm,
            nodes_checked,
            lattice_size: lattice.size(),
            candidates: result.candidates,
            grouping_work,
            pruning: result.pruning,
            exact: result.exact,
        },
        // the hierarchies' levels, not the window's
        transformation: frame.hierarchy_levels(&levels),
    })
}

/// Describes the transformation at lattice `levels` for the candidates' comparison.
fn describe(ev: &mut Evaluator<'_>, frame: &AttributeFrame, levels: &[u8], rows: u64) -> Candidate {
    let (summary, class_sizes) = ev.summarize(levels);
    Candidate {
        transformation: frame.hierarchy_levels(levels),
        metrics: ev.loss_model().all(levels, &summary),
        suppressed_records: summary.suppressed_records,
        classes: ClassStatistics::of(&summary, rows - summary.suppressed_records),
        class_sizes,
    }
}

/// Explains why nothing satisfies the models, from the top of the lattice.
fn no_solution(ev: &mut Evaluator<'_>, plan: &Plan, max_suppressed: u64, rows: u64) -> CoreError {
    let top = ev.lattice().max_levels().to_vec();
    let (_, set, _, summary) = ev.final_grouping(&top);
    let mut models = plan
        .privacy_models
        .iter()
        .map(|m| m.describe())
        .collect::<Vec<_>>()
        .join(" and ");
    if let Some(bounds) = &plan.steering.level_bounds {
        let heights = ev.loss_model().frame().heights.clone();
        if ev.lattice().size() == 1 {
            models.push_str(" (the transformation is fixed: the search was skipped)");
        } else if bounds
            .iter()
            .zip(&heights)
            .any(|(&(_, highest), &top)| highest < top)
        {
            models.push_str(
                " (some quasi-identifier's max_level is below its hierarchy's top: the most general \
                 transformation below is the most general the level bounds allow)",
            );
        }
    }
    if plan.privacy_models.iter().any(|m| m.is_table_level()) {
        models.push_str(&format!(
            " (the thresholds on the whole table are checked after suppression: the most general \
             transformation publishes {} classes over {} records)",
            summary.kept_classes,
            rows - summary.suppressed_records
        ));
    }
    CoreError::NoSolution {
        models,
        max_suppressed,
        top_failing: summary.suppressed_records,
        top_classes: summary.classes,
        top_smallest_class: set.counts().iter().copied().min().unwrap_or(0) as u64,
    }
}

/// Height of a node; re-exported for reports.
pub fn height(levels: &[u8]) -> usize {
    Lattice::height(levels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppression_budget_is_floor_of_fraction() {
        assert_eq!(max_suppressed_records(0.04, 30162), 1206);
        assert_eq!(max_suppressed_records(0.02, 30162), 603);
        assert_eq!(max_suppressed_records(0.29, 100), 29);
        assert_eq!(max_suppressed_records(0.0, 100), 0);
        assert_eq!(max_suppressed_records(1.0, 7), 7);
        assert_eq!(max_suppressed_records(0.5, 7), 3);
    }
}
