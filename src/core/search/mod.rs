//! Global recoding: searches over the generalization lattice for the transformation that satisfies the
//! privacy models within the suppression limit at the least loss.
//!
//! Every exact algorithm yields a set of candidate nodes that provably contains an optimum (the minimal
//! solutions when the metric is monotone, every solution otherwise) and [`select`] picks the optimum with
//! metric bounds. When the privacy models are not monotone for the suppression setting, predictive tagging
//! is unsound and exact algorithms consider every node instead, skipping those below the solutions of
//! the minimum class size every model implies (found first with Flash, since that condition is
//! monotone) and those whose static lower bound exceeds the best loss found so far.

mod best_first;
mod datafly;
mod evaluator;
mod exhaustive;
mod flash;
mod incognito;
mod ola;
mod samarati;
mod select;
mod tags;

pub use evaluator::{Evaluator, NodeCheck};
pub use tags::{Tag, Tags, MAX_TAGGED_NODES};

use crate::core::error::CoreError;
use crate::core::lattice::NodeId;
use crate::core::privacy::{KAnonymity, PrivacyModel};

/// A search algorithm with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Issa's / El Emam et al.'s Optimal Lattice Anonymization, with the corrected base case.
    Ola,
    /// Kohlmayer et al. (2012), ARX's algorithm.
    Flash,
    /// LeFevre et al. (2005): all solutions via the subset property.
    Incognito,
    /// Samarati (2001): lowest solution height by binary search, then the best node on that height.
    Samarati,
    /// Sweeney's Datafly: generalize the attribute with most distinct values; ties broken by `seed`.
    Datafly {
        /// Seed of the tie-break.
        seed: u64,
    },
    /// Every node; the test oracle. Refuses lattices larger than `max_nodes`.
    Exhaustive {
        /// Largest lattice accepted.
        max_nodes: u64,
    },
    /// The engine's best-first bounded search (exact).
    BestFirst,
    /// The fastest exact algorithm for the job: best-first or Flash.
    Optimal,
}

impl Algorithm {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ola => "ola",
            Algorithm::Flash => "flash",
            Algorithm::Incognito => "incognito",
            Algorithm::Samarati => "samarati",
            Algorithm::Datafly { .. } => "datafly",
            Algorithm::Exhaustive { .. } => "exhaustive",
            Algorithm::BestFirst => "best_first",
            Algorithm::Optimal => "optimal",
        }
    }

    /// Whether the algorithm guarantees the minimum of the metric.
    pub fn is_exact(self) -> bool {
        !matches!(self, Algorithm::Samarati | Algorithm::Datafly { .. })
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// The chosen node and its loss, or `None` when no node is a solution.
    pub best: Option<(NodeId, f64)>,
    /// The algorithm that actually ran (`optimal` resolves to a concrete one).
    pub algorithm: &'static str,
    /// Candidate nodes considered by the selection step.
    pub candidates: u64,
    /// Whether predictive tagging was used.
    pub pruning: bool,
}

/// The concrete algorithm `optimal` stands for, chosen by measurement (see the README's benchmarks):
/// the best-first search wins when records may be suppressed and the metric's static bound is close to
/// the loss; Flash wins without suppression and for metrics whose bounds are weak before grouping.
fn resolve_optimal(ev: &Evaluator<'_>) -> Algorithm {
    let metric = ev.metric();
    // strong static bounds are monotone too, as best_first needs
    if ev.suppression_possible() && metric.has_strong_static_bound() {
        Algorithm::BestFirst
    } else {
        Algorithm::Flash
    }
}

/// Runs `algorithm` and selects the best candidate.
pub fn run(ev: &mut Evaluator<'_>, algorithm: Algorithm) -> Result<SearchResult, CoreError> {
    let size = ev.lattice().size();
    let algorithm = match algorithm {
        Algorithm::Optimal => resolve_optimal(ev),
        other => other,
    };
    let needs_tags = !matches!(algorithm, Algorithm::Datafly { .. });
    if needs_tags && size > MAX_TAGGED_NODES {
        return Err(CoreError::LatticeTooLarge {
            size,
            algorithm: algorithm.name(),
            limit: MAX_TAGGED_NODES,
        });
    }
    let pruning = ev.is_monotone();
    let candidates = match algorithm {
        Algorithm::Exhaustive { max_nodes } => {
            if size > max_nodes as u128 {
                return Err(CoreError::LatticeTooLarge {
                    size,
                    algorithm: "exhaustive",
                    limit: max_nodes as u128,
                });
            }
            exhaustive::search(ev)?
        }
        _ if algorithm.is_exact() && !pruning => {
            let floor = size_floor(ev)?;
            exhaustive::search_bounded(ev, |levels| {
                floor
                    .iter()
                    .any(|minimal| minimal.iter().zip(levels).all(|(m, l)| m <= l))
            })?
        }
        Algorithm::BestFirst if ev.metric().has_monotone_static_bound() => best_first::search(ev)?,
        Algorithm::Ola => ola::search(ev)?,
        Algorithm::Flash | Algorithm::Optimal | Algorithm::BestFirst => flash::search(ev)?,
        Algorithm::Incognito => incognito::search(ev)?,
        Algorithm::Samarati => samarati::search(ev)?,
        Algorithm::Datafly { seed } => datafly::search(ev, seed)?,
    };
    let best = select::select(ev, &candidates)?;
    Ok(SearchResult {
        best,
        algorithm: algorithm.name(),
        candidates: candidates.len() as u64,
        pruning,
    })
}

/// For non-monotone models: the nodes whose classes below the models' largest minimum class size fit
/// the suppression limit. That size condition is implied by every model and is monotone, so Flash finds
/// its solutions with predictive tagging; every solution of the full models lies above one of the
/// returned nodes. Without a minimum size above 1 every node qualifies (the bottom is returned).
fn size_floor(ev: &mut Evaluator<'_>) -> Result<Vec<Vec<u8>>, CoreError> {
    let lattice = ev.lattice().clone();
    let k = ev.min_class_size();
    if k <= 1 {
        return Ok(vec![vec![0; lattice.dimensions()]]);
    }
    let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
    let (floor, work) = {
        let mut sibling = ev.sibling(&models);
        let solutions = flash::search(&mut sibling)?;
        let floor: Vec<Vec<u8>> = solutions.iter().map(|&id| lattice.levels(id)).collect();
        (floor, (sibling.checks(), sibling.grouping_work()))
    };
    ev.absorb(work);
    Ok(floor)
}

/// The candidates an exact search must hand to [`select`] once every node is tagged: the minimal
/// solutions when the metric is monotone, all solutions otherwise. Unknown nodes are checked first.
fn candidates_from_tags(ev: &mut Evaluator<'_>, tags: &mut Tags) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let size = lattice.size() as u64;
    for id in 0..size {
        if tags.get(id) == Tag::Unknown {
            let c = ev.check(id)?;
            tags.tag(id, c.is_solution);
        }
    }
    let minimal_only = ev.metric().is_monotone(ev.suppression_possible());
    let dims = lattice.dimensions();
    let mut levels = vec![0u8; dims];
    let mut out = Vec::new();
    for id in 0..size {
        if tags.get(id) != Tag::Solution {
            continue;
        }
        if minimal_only {
            lattice.levels_into(id, &mut levels);
            let minimal = (0..dims)
                .all(|j| levels[j] == 0 || tags.get(id - lattice.stride(j)) == Tag::NonSolution);
            if !minimal {
                continue;
            }
        }
        out.push(id);
    }
    Ok(out)
}
