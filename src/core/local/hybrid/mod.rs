//! Hybrid k-anonymization: full-domain generalization plus relocation of a bounded share of the
//! quasi-identifier cells (Nergiz, Gök & Özkanlı 2013, "Preservation of Utility through Hybrid
//! k-Anonymization", TrustBus 2013, LNCS 8058, §3–§4; implementation note
//! `nergiz-2013-hybrid-k-anonymization.md`, whose ambiguity resolutions A1–A11 are followed).
//!
//! [`hybrid`] walks the generalization lattice top-down (S-Hybrid, `search.rs`), repairs every node with
//! CreateHybrid (`create.rs`) by moving the records of too-small groups into other existing groups while
//! at most `floor(p · N · |QI|)` cells change (and, in the statistical variant, while the group sizes
//! pass a chi-square test, `statistic.rs`), and keeps the repaired node of lowest loss (`loss.rs`).
//!
//! **The output is not truthful** when a cell moved: a relocated record publishes its target group's
//! values, which need not cover its own. The report says how many cells and records moved, never which;
//! the output order is a keyed shuffle so positions do not reveal it either. Protection is k-anonymity
//! only. The deterministic mode can be replayed by anyone who knows the algorithm and the population; the
//! randomized mode (the default) makes that hard only in practice (no formal bound), and only while its
//! key stays secret: every draw comes from a ChaCha20 stream of a 256-bit key (`core::secret_rng`), which
//! callers draw from the operating system and never publish.

mod create;
mod groups;
mod loss;
pub mod multidimensional;
mod output;
mod search;
mod statistic;
mod targets;
#[cfg(test)]
mod tests;

pub use create::Completion;
pub use loss::COST_TOLERANCE;
pub use multidimensional::{m_hybrid, MHybridReport, MHybridResult};
pub use statistic::{critical_value, p_value};

use super::{Domain, LocalInput, Recoding};
use crate::core::control::Control;
use crate::core::data::GeneralizationMap;
use crate::core::error::CoreError;
use crate::core::privacy::Decimal;
use crate::core::secret_rng::{SecretKey, SecretStream};
use create::Limits;
use groups::{BaseTuples, NodeGroups};
use loss::Penalties;

/// How CreateHybrid picks targets, sources and moved records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HybridMode {
    /// The closest group, the cheapest records, exactly `k − |g|` records per completion (canonical
    /// tie-breaks): reproducible, and replayable by an adversary who knows the algorithm.
    Deterministic,
    /// Uniform choices among the eligible groups and records, and a uniform number of records per
    /// completion, from the secret key's streams.
    #[default]
    Randomized,
}

/// Parameters of [`hybrid`] besides k.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridOptions {
    /// The paper's p as a fraction in `[0, 1]` (0.01 = 1 %): at most `floor(p · N · |QI|)`
    /// quasi-identifier cells may change. Read as the decimal it was written as (0.29 is exactly
    /// 29/100), so the budget is exact.
    pub relocation_limit: f64,
    /// Significance level in `(0, 1)` of the statistical variant (α-hybrid): every relocation must
    /// leave group sizes whose chi-square p-value is at least α. A lower α allows more relocation.
    /// `None` runs without the test.
    pub alpha: Option<f64>,
    /// Deterministic or randomized choices.
    pub mode: HybridMode,
    /// Key whose ChaCha20 streams (one per lattice node, plus one for dealing records and one for the
    /// output order) drive the randomized choices; in the deterministic mode it decides the output
    /// order only. Must be secret and unpredictable in the randomized mode: whoever knows it can replay
    /// the run.
    pub key: SecretKey,
    /// Completion source rule (note A3).
    pub completion: Completion,
}

impl Default for HybridOptions {
    /// p = 1 % (the paper's experiments), no statistical test, randomized, completion sources keeping
    /// more than k records; the key is expanded from 0 and must be replaced by a secret one.
    fn default() -> Self {
        Self {
            relocation_limit: 0.01,
            alpha: None,
            mode: HybridMode::Randomized,
            key: SecretKey::from_u64(0),
            completion: Completion::MoreThan,
        }
    }
}

/// The chi-square test of the statistical variant, at the chosen node.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChiSquareReport {
    /// Pearson's statistic of the published group sizes against the sizes before relocation.
    pub statistic: f64,
    /// Groups of the generalization before relocation, minus one.
    pub degrees_of_freedom: u64,
    /// The significance level asked for.
    pub alpha: f64,
    /// Probability of a statistic at least this large under the original distribution.
    pub p_value: f64,
    /// `χ²_{1−α}` at these degrees of freedom.
    pub critical_value: f64,
}

/// Aggregates of a hybrid run; never says which records moved.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HybridReport {
    /// The mode that ran.
    pub mode: HybridMode,
    /// The k of k-anonymity.
    pub k: u64,
    /// Generalization level per quasi-identifier.
    pub levels: Vec<u8>,
    /// Iyengar's loss metric of the published table (ignores relocation damage).
    pub loss: f64,
    /// Quasi-identifier cells published with a value that does not cover the original.
    pub cells_changed: u64,
    /// Quasi-identifier cells in the table (`N · |QI|`).
    pub cells_total: u64,
    /// Cells that were allowed to change.
    pub budget: u64,
    /// Records published in a group other than their own.
    pub rows_relocated: u64,
    /// Published groups.
    pub groups: u64,
    /// False whenever a cell moved: the output then is perturbed, not a truthful generalization.
    pub truthful: bool,
    /// The chi-square test, when the statistical variant ran.
    pub statistic: Option<ChiSquareReport>,
    /// Lattice nodes repaired (pruned nodes excluded).
    pub nodes_evaluated: u64,
    /// Lattice nodes.
    pub lattice_size: u64,
}

/// What [`hybrid`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridResult {
    /// Groups and their cells, in a shuffled output order; relocated records carry their target
    /// group's cells.
    pub recoding: Recoding,
    /// Generalization level per quasi-identifier.
    pub levels: Vec<u8>,
    /// Aggregates for the report.
    pub report: HybridReport,
}

/// Runs hybrid k-anonymization: the lowest-loss full-domain generalization that CreateHybrid makes
/// k-anonymous by changing at most `floor(options.relocation_limit · N · |QI|)` cells (and passing the
/// chi-square test at `options.alpha`). Every quasi-identifier needs a hierarchy.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for k = 0, a limit outside `[0, 1]`, α outside `(0, 1)`, no
/// quasi-identifier or one without a hierarchy; [`CoreError::TooFewRecords`] when the table has fewer
/// than k records; [`CoreError::LatticeTooLarge`]; [`CoreError::NoSolution`] when no node can be
/// repaired; [`CoreError::Cancelled`].
pub fn hybrid(
    input: &LocalInput<'_>,
    k: u64,
    options: &HybridOptions,
    control: &dyn Control,
) -> Result<HybridResult, CoreError> {
    let prepared = Prepared::new(input, k, options)?;
    let found = search::walk(&prepared, control)?;
    Ok(output::publish(&prepared, found))
}

/// The cells that may change, `floor(limit · rows · quasi_identifiers)`, with the limit read as the
/// decimal it was written as (0.29 is exactly 29/100).
///
/// # Errors
/// [`CoreError::InvalidParameter`] when the limit is not a fraction in `[0, 1]`.
pub(super) fn cell_budget(
    limit: f64,
    rows: usize,
    quasi_identifiers: usize,
) -> Result<u64, CoreError> {
    let fraction = Decimal::from_f64(limit)
        .filter(|_| limit <= 1.0)
        .ok_or_else(|| CoreError::InvalidParameter {
            name: "relocation_limit",
            problem: "must be a fraction between 0 and 1".to_string(),
        })?;
    let cells = rows as u128 * quasi_identifiers as u128;
    let (numerator, denominator) = fraction.as_fraction();
    Ok(u64::try_from(numerator.saturating_mul(cells) / denominator).unwrap_or(u64::MAX))
}

/// Everything a node evaluation needs, computed once per run.
#[derive(Debug)]
pub(super) struct Prepared<'a> {
    maps: Vec<&'a GeneralizationMap>,
    base: BaseTuples,
    penalties: Penalties,
    rows: usize,
    limits: Limits,
    alpha: Option<f64>,
    options: HybridOptions,
}

/// The groups of a node one level more general in one attribute than the node being evaluated.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parent<'p> {
    /// Its group of every base tuple.
    group_of_tuple: &'p [u32],
    /// Its number of groups.
    groups: usize,
    /// The attribute in which it is one level more general.
    attribute: usize,
}

/// A repaired node.
#[derive(Debug, Clone)]
pub(super) struct NodeResult {
    levels: Vec<u8>,
    groups: NodeGroups,
    relocation: create::Relocation,
    loss: f64,
}

impl<'a> Prepared<'a> {
    fn new(input: &LocalInput<'a>, k: u64, options: &HybridOptions) -> Result<Self, CoreError> {
        let invalid = |name: &'static str, problem: &str| CoreError::InvalidParameter {
            name,
            problem: problem.to_string(),
        };
        if k == 0 {
            return Err(invalid("k", "must be at least 1"));
        }
        let budget = cell_budget(
            options.relocation_limit,
            input.rows,
            input.quasi_identifiers.len(),
        )?;
        if let Some(alpha) = options.alpha {
            if !(alpha > 0.0 && alpha < 1.0) {
                return Err(invalid("alpha", "must lie strictly between 0 and 1"));
            }
        }
        if input.quasi_identifiers.is_empty() {
            return Err(invalid(
                "quasi_identifiers",
                "hybrid k-anonymization needs at least one quasi-identifier",
            ));
        }
        let mut maps = Vec::with_capacity(input.quasi_identifiers.len());
        for attribute in &input.quasi_identifiers {
            match attribute.domain {
                Domain::Hierarchy(map) => maps.push(map),
                Domain::Ordered(_) => {
                    return Err(CoreError::InvalidParameter {
                        name: "quasi_identifiers",
                        problem: format!(
                        "hybrid k-anonymization generalizes along hierarchies only; '{}' has none",
                        attribute.name
                    ),
                    })
                }
            }
        }
        if (input.rows as u64) < k {
            return Err(CoreError::TooFewRecords {
                model: format!("{k}-anonymity"),
                needed: k,
                rows: input.rows as u64,
            });
        }
        let columns: Vec<&[u32]> = input.quasi_identifiers.iter().map(|a| a.codes).collect();
        let distinct: Vec<usize> = input
            .quasi_identifiers
            .iter()
            .zip(&maps)
            .map(|(a, m)| a.distinct.max(m.codes(0).len()))
            .collect();
        Ok(Self {
            base: BaseTuples::new(&columns, &distinct, input.rows),
            penalties: Penalties::new(&maps),
            maps,
            rows: input.rows,
            limits: Limits {
                k,
                budget,
                critical: None,
                completion: options.completion,
            },
            alpha: options.alpha,
            options: options.clone(),
        })
    }

    /// The generator of node `id` (or of another stream): the key's ChaCha20 stream of that number, so
    /// every node's choices are independent of the order nodes are visited in.
    fn stream(&self, id: u64) -> SecretStream {
        SecretStream::new(&self.options.key, id)
    }

    /// Groups the node `levels` from the tuples `base` (the base tuples or a projection the node may use,
    /// see [`BaseTuples::split_projection`]) and repairs it, rolling its groups up from `parent` when given (see
    /// [`Parent`], whose groups must number the same tuples); `None` in the relocation when it cannot be
    /// repaired.
    fn evaluate(
        &self,
        base: &BaseTuples,
        levels: &[u8],
        id: u64,
        parent: Option<Parent<'_>>,
        scratch: &mut Vec<u32>,
    ) -> (NodeGroups, Option<create::Relocation>) {
        let mut groups = match parent {
            Some(parent) => base.refine_from(
                &self.maps,
                levels,
                parent.group_of_tuple,
                parent.groups,
                parent.attribute,
                scratch,
            ),
            None => base.group(&self.maps, levels, scratch),
        };
        let k = self.limits.k;
        if groups.sizes.iter().all(|&s| u64::from(s) >= k) {
            // k-anonymous as it is: nothing moves (groups may stay in first-appearance order)
            let relocation = create::Relocation::unchanged(&groups.sizes);
            return (groups, Some(relocation));
        }
        if create::cells_needed(&groups.sizes, k) > self.limits.budget {
            return (groups, None);
        }
        groups.canonicalize(&self.maps, levels);
        let mut limits = self.limits;
        if let Some(alpha) = self.alpha {
            limits.critical = Some(critical_value(alpha, groups.len() as u64 - 1));
        }
        let mut rng = match self.options.mode {
            HybridMode::Deterministic => None,
            HybridMode::Randomized => Some(self.stream(id)),
        };
        let rng = rng.as_mut();
        let relocation =
            create::create_hybrid(&groups.keys, self.maps.len(), &groups.sizes, limits, rng);
        (groups, relocation)
    }
}
