//! Global recoding: searches over the generalization lattice for the transformation that satisfies the
//! privacy models within the suppression limit at the least loss.
//!
//! Every exact algorithm yields a set of candidate nodes that provably contains an optimum (the minimal
//! solutions when the metric is monotone, every solution otherwise) and [`select`] picks the optimum with
//! metric bounds. When the privacy models are not monotone for the suppression setting, predictive tagging
//! is unsound and exact algorithms consider every node instead, skipping those below the solutions of
//! a monotone condition every model implies (the minimum class size and the models' monotone
//! relaxations, found first with Flash); the others are visited in increasing order of the metric's static lower bound until it
//! exceeds the best loss found ([`bounded`]), which for data-independent metrics is the first solution.

mod anytime;
mod best_first;
mod border;
mod bounded;
mod datafly;
mod dominance;
mod evaluator;
mod exhaustive;
mod flash;
mod frontier;
mod genetic;
mod incognito;
mod known;
mod lightning;
mod ola;
mod ranking;
mod safepub;
mod samarati;
mod select;
mod set_cache;
mod tags;

pub use evaluator::{Evaluator, NodeCheck};
pub use genetic::GeneticOptions;
pub use safepub::Walk;
pub use tags::{Tag, Tags, MAX_TAGGED_NODES};

use crate::core::error::CoreError;
use crate::core::lattice::NodeId;
#[cfg(doc)]
use crate::core::loss::MetricKind;
use crate::core::privacy::{KAnonymity, PrivacyModel};

/// A search algorithm with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Issa's / El Emam et al.'s Optimal Lattice Anonymization, with the corrected base case.
    Ola,
    /// Kohlmayer et al. (2012), ARX's algorithm.
    Flash,
    /// LeFevre et al. (2005): all solutions via the subset property.
    Incognito {
        /// Super-Root Incognito: before each family of candidates (one attribute subset) is checked,
        /// the frequency set of their common lowest node is computed and kept, so the checks roll up from
        /// it rather than from larger sets.
        super_root: bool,
    },
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
    /// The fastest exact algorithm for the job: best-first or Flash. On a lattice of more than
    /// [`OPTIMAL_UNTIMED_NODES`] the exact search gets [`DEFAULT_TIME_LIMIT_MS`] on the caller's clock;
    /// if it has not ended by then, Lightning runs with the same limit (without a clock: the genetic
    /// search, seed 0, with its generations capped).
    Optimal,
    /// Lightning-style best-effort search (Prasser et al. 2016), anytime: the best solution found within
    /// the time limit; optimal when it ends before the limit.
    Lightning {
        /// Milliseconds the search may run, on the caller's clock.
        time_limit_ms: u64,
    },
    /// A genetic search over level vectors ([`genetic`]), anytime.
    Genetic(GeneticOptions),
}

/// The time limit of the anytime searches when the spec gives none (ARX's default for its heuristics).
pub const DEFAULT_TIME_LIMIT_MS: u64 = 30_000;

/// Generations of a genetic search that runs without a clock and without a cap of its own (ARX's
/// default number of iterations), so that it ends.
pub const NO_CLOCK_GENERATIONS: u32 = 50;

/// Largest lattice the searches without a per-node array accept (the anytime searches, best-first, and
/// Flash with a monotone metric): node ids are 64-bit.
pub const MAX_ANYTIME_NODES: u128 = u64::MAX as u128;

/// Largest lattice on which `optimal` runs its exact search without a time limit; above it the exact
/// search gets [`DEFAULT_TIME_LIMIT_MS`] before an anytime search takes over.
pub const OPTIMAL_UNTIMED_NODES: u128 = 1 << 28;

impl Algorithm {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ola => "ola",
            Algorithm::Flash => "flash",
            Algorithm::Incognito { .. } => "incognito",
            Algorithm::Samarati => "samarati",
            Algorithm::Datafly { .. } => "datafly",
            Algorithm::Exhaustive { .. } => "exhaustive",
            Algorithm::BestFirst => "best_first",
            Algorithm::Optimal => "optimal",
            Algorithm::Lightning { .. } => "lightning",
            Algorithm::Genetic(_) => "genetic",
        }
    }

    /// Whether the algorithm guarantees the minimum of the metric.
    pub fn is_exact(self) -> bool {
        !matches!(
            self,
            Algorithm::Samarati
                | Algorithm::Datafly { .. }
                | Algorithm::Lightning { .. }
                | Algorithm::Genetic(_)
        )
    }

    /// Whether the search keeps no per-node array over the lattice (and ends by its time limit).
    fn is_anytime(self) -> bool {
        matches!(self, Algorithm::Lightning { .. } | Algorithm::Genetic(_))
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
    /// Whether the result is proven optimal: an exact algorithm ran, or an anytime search ended before
    /// its time limit with nothing left to explore.
    pub exact: bool,
    /// The best solutions with their losses, `best` first, as many as [`Evaluator::rank_best`] asked
    /// for (fewer when there are fewer solutions): the proven N best when `exact`, else the best the
    /// search checked.
    pub ranked: Vec<(NodeId, f64)>,
    /// Whether `ranked` is proven to be the best solutions (an exact search ranked them).
    pub ranked_exact: bool,
}

/// The concrete algorithm `optimal` stands for, chosen by measurement (see docs/benchmarks.md):
/// the best-first search wins when records may be suppressed and the metric's bounds prune well
/// ([`MetricKind::suits_best_first`]); Flash wins without suppression and for metrics whose bounds are
/// weak before grouping.
///
/// Measured on adult, fars and adult_full at 0 and 2 % (docs/benchmarks.md).
fn resolve_optimal(ev: &Evaluator<'_>) -> Algorithm {
    // those metrics' static bounds are monotone too, as best_first needs
    if ev.suppression_possible() && ev.metric().suits_best_first() {
        Algorithm::BestFirst
    } else {
        Algorithm::Flash
    }
}

/// The anytime search `optimal` falls back to on a large lattice: Lightning, which came closest to the
/// optimum at 1, 5 and 30 s on every table of the benchmark (`benches/heuristics.rs`). Without a clock
/// nothing would end Lightning on such a lattice, so the genetic search (seed 0), whose generations are
/// then capped, runs instead.
fn optimal_fallback(has_clock: bool) -> Algorithm {
    if has_clock {
        Algorithm::Lightning {
            time_limit_ms: DEFAULT_TIME_LIMIT_MS,
        }
    } else {
        Algorithm::Genetic(GeneticOptions {
            time_limit_ms: DEFAULT_TIME_LIMIT_MS,
            seed: 0,
            generations: None,
        })
    }
}

/// `optimal` on a lattice of more than [`OPTIMAL_UNTIMED_NODES`]: the exact search while its time limit
/// lasts (what it checked stays memoised), then [`optimal_fallback`].
fn run_optimal_timed(ev: &mut Evaluator<'_>) -> Result<SearchResult, CoreError> {
    let has_clock = ev.control().clock_ms().is_some();
    if has_clock {
        ev.limit_checks_to(Some(DEFAULT_TIME_LIMIT_MS));
        let exact = run(ev, resolve_optimal(ev));
        let out_of_time = ev.ran_out_of_time();
        ev.limit_checks_to(None);
        match exact {
            Err(CoreError::Cancelled) if out_of_time => {}
            // the exact search refuses this lattice with this metric (Flash listing every solution)
            Err(CoreError::LatticeTooLarge { .. }) => {}
            other => return other,
        }
    }
    run(ev, optimal_fallback(has_clock))
}

/// Runs `algorithm` and selects the best candidate.
pub fn run(ev: &mut Evaluator<'_>, algorithm: Algorithm) -> Result<SearchResult, CoreError> {
    let size = ev.lattice().size();
    let algorithm = match algorithm {
        Algorithm::Optimal if size > OPTIMAL_UNTIMED_NODES => return run_optimal_timed(ev),
        Algorithm::Optimal => resolve_optimal(ev),
        other => other,
    };
    // the literature's level-wise searches tag a per-node array; the others keep what they met
    let dense = matches!(
        algorithm,
        Algorithm::Ola | Algorithm::Incognito { .. } | Algorithm::Samarati
    );
    let pruning = ev.is_monotone();
    // Flash hands every solution to the selection when the metric is not monotone (without pruning
    // the exact searches run the bounded search, which keeps only what it met)
    let every_solution = matches!(algorithm, Algorithm::Flash)
        && pruning
        && !ev.metric().is_monotone(ev.suppression_possible());
    let limit = if dense || every_solution {
        MAX_TAGGED_NODES
    } else {
        MAX_ANYTIME_NODES
    };
    if !matches!(algorithm, Algorithm::Datafly { .. }) && !algorithm.is_anytime() && size > limit {
        return Err(CoreError::LatticeTooLarge {
            size,
            algorithm: algorithm.name(),
            limit,
        });
    }
    let candidates = match algorithm {
        Algorithm::Lightning { time_limit_ms } => {
            return run_anytime(ev, algorithm, |ev| lightning::search(ev, time_limit_ms));
        }
        Algorithm::Genetic(options) => {
            // without a clock the time limit cannot end the search: cap its generations
            let options = match (ev.control().clock_ms(), options.generations) {
                (None, None) => GeneticOptions {
                    generations: Some(NO_CLOCK_GENERATIONS),
                    ..options
                },
                _ => options,
            };
            return run_anytime(ev, algorithm, |ev| genetic::search(ev, options));
        }
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
            let floor = relaxed_floor(ev)?;
            bounded::search(ev, &floor)?
        }
        Algorithm::BestFirst if ev.metric().has_monotone_static_bound() => best_first::search(ev)?,
        Algorithm::Ola => ola::search(ev)?,
        Algorithm::Flash | Algorithm::Optimal | Algorithm::BestFirst => flash::search(ev)?,
        Algorithm::Incognito { super_root } => incognito::search(ev, super_root)?,
        Algorithm::Samarati => samarati::search(ev)?,
        Algorithm::Datafly { seed } => datafly::search(ev, seed)?,
    };
    // the candidates are proven: a time limit on the search does not cut their selection short
    ev.lift_time_limit();
    let n = ev.ranked();
    let (best, ranked) = if n > 1 && algorithm.is_exact() {
        // minimal solutions stand for the solutions above them (monotone models and metric)
        let expand = pruning && ev.metric().is_monotone(ev.suppression_possible());
        let ranked = ranking::rank(ev, &candidates, n, expand)?;
        (ranked.first().copied(), ranked)
    } else {
        let best = select::select(ev, &candidates)?;
        let ranked = best.map_or_else(Vec::new, |b| ranking::best_seen(ev, b, n));
        (best, ranked)
    };
    Ok(SearchResult {
        best,
        algorithm: algorithm.name(),
        candidates: candidates.len() as u64,
        pruning,
        exact: algorithm.is_exact(),
        ranked_exact: algorithm.is_exact(),
        ranked,
    })
}

/// Runs an anytime search: its result is the best solution it checked, not a selection among candidates.
fn run_anytime(
    ev: &mut Evaluator<'_>,
    algorithm: Algorithm,
    search: impl FnOnce(&mut Evaluator<'_>) -> Result<anytime::AnytimeResult, CoreError>,
) -> Result<SearchResult, CoreError> {
    let size = ev.lattice().size();
    if size > MAX_ANYTIME_NODES {
        return Err(CoreError::LatticeTooLarge {
            size,
            algorithm: algorithm.name(),
            limit: MAX_ANYTIME_NODES,
        });
    }
    let found = search(ev)?;
    let best = match found.best {
        Some(id) => Some((id, ev.check(id)?.loss)),
        // out of time before any solution: the most general transformation, a solution whenever any
        // node is one under monotone models
        None if !found.proven => {
            let top = ev.lattice().id(ev.lattice().max_levels());
            let check = ev.check(top)?;
            check.is_solution.then_some((top, check.loss))
        }
        None => None,
    };
    let ranked = best.map_or_else(Vec::new, |b| ranking::best_seen(ev, b, ev.ranked()));
    Ok(SearchResult {
        best,
        algorithm: algorithm.name(),
        candidates: u64::from(best.is_some()),
        pruning: false,
        exact: found.proven,
        ranked_exact: found.proven && ev.ranked() == 1,
        ranked,
    })
}

/// Runs SafePub's differentially private search ([`safepub`]) in place of an optimizing one: the
/// published node is drawn, not selected, so the result is randomized and not exact.
pub fn run_private(
    ev: &mut Evaluator<'_>,
    private: &crate::core::differential::PrivateSearch,
) -> Result<SearchResult, CoreError> {
    // the walk visits its nodes one by one and keeps no per-node array: node ids need only fit 64 bits
    let limit = u128::from(u64::MAX);
    if ev.lattice().size() > limit {
        return Err(CoreError::LatticeTooLarge {
            size: ev.lattice().size(),
            algorithm: "safepub",
            limit,
        });
    }
    let walk = safepub::search(ev, private)?;
    let loss = ev.check(walk.chosen)?.loss;
    Ok(SearchResult {
        best: Some((walk.chosen, loss)),
        algorithm: "safepub",
        candidates: walk.pivots.len() as u64,
        pruning: false,
        exact: false,
        ranked: vec![(walk.chosen, loss)],
        ranked_exact: false,
    })
}

/// For non-monotone models: the minimal solutions of a monotone necessary condition, the classes below
/// the models' largest minimum class size together with the classes failing a model's
/// [`PrivacyModel::monotone_relaxation`] fitting the suppression limit. Every model implies it and it is
/// monotone, so Flash finds its solutions with predictive tagging; every solution of the full models
/// lies above one of the returned nodes. Without such a condition every node qualifies (the bottom is
/// returned).
fn relaxed_floor(ev: &mut Evaluator<'_>) -> Result<Vec<Vec<u8>>, CoreError> {
    let lattice = ev.lattice().clone();
    let k = ev.min_class_size();
    let relaxations: Vec<Box<dyn PrivacyModel>> = ev
        .models()
        .iter()
        .filter(|m| !m.is_monotone_with_suppression())
        .filter_map(|m| m.monotone_relaxation())
        .collect();
    if k <= 1 && relaxations.is_empty() {
        return Ok(vec![vec![0; lattice.dimensions()]]);
    }
    let mut models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
    models.extend(relaxations);
    let (floor, work, out_of_time) = {
        let mut sibling = ev.sibling(&models);
        let floor = flash::minimal_solutions(&mut sibling)
            .map(|solutions| solutions.iter().map(|&id| lattice.levels(id)).collect());
        let work = (sibling.checks(), sibling.grouping_work());
        (floor, work, sibling.ran_out_of_time())
    };
    ev.absorb(work);
    if out_of_time {
        ev.mark_out_of_time();
    }
    floor
}

/// The candidates an exact search must hand to [`select`] once every node is tagged: the minimal
/// solutions when the metric is monotone, all solutions otherwise. Unknown nodes are checked first.
fn candidates_from_tags(ev: &mut Evaluator<'_>, tags: &mut Tags) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let size = lattice.size() as u64;
    let mut pace = ev.pace();
    for id in 0..size {
        pace.step(1)?;
        if tags.get(id) == Tag::Unknown {
            let c = ev.check(id)?;
            tags.tag(id, c.is_solution, &mut pace)?;
        }
    }
    let minimal_only = ev.metric().is_monotone(ev.suppression_possible());
    let dims = lattice.dimensions();
    let mut levels = vec![0u8; dims];
    let mut out = Vec::new();
    for id in 0..size {
        pace.step(1)?;
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
