//! A genetic search over level vectors, for lattices too large for the exact searches. It follows the
//! design of ARX 3.9's genetic algorithm (two subpopulations exchanging their fittest members, elitism,
//! uniform crossover of parents drawn by fitness, random mutation), stated here in full:
//!
//! - Each subpopulation has `d + 100` individuals (d quasi-identifiers). The first is seeded with a
//!   "triangle" covering the lattice (individual i < d has the first i + 1 attributes at their top level,
//!   the rest at the bottom, so the top node is among them) and random nodes; the second with random nodes.
//! - Fitness: solutions before non-solutions; solutions by loss, non-solutions by the records they would
//!   have to suppress, then by loss; ties to the lower height, then the smaller node id.
//! - A generation, in each subpopulation sorted by fitness: the fittest 20 % stay; the last 20 % are
//!   replaced by children of uniform crossover (each level taken from either parent with probability
//!   1/2), both parents drawn from the fittest 20 % with weights falling linearly with rank; every other
//!   individual is replaced by a mutant of a random member of the previous generation (between one and
//!   ⌈d / 5⌉ attributes set to a random level). Every tenth generation the fittest 20 % of each
//!   subpopulation replace the least fit of the other.
//! - The search ends at its time limit, after `generations` generations when the spec caps them, once
//!   every node of the lattice has been checked (the incumbent is then optimal), or when 100 generations
//!   in a row produced no node not checked before (the population has converged).
//!
//! The result is the best solution any check confirmed (the [`Incumbent`]), so every output is a
//! solution; a seed fixes every random draw, so a run limited by generations rather than time is
//! reproducible.

use super::anytime::{self, AnytimeResult, Incumbent, TimeLimit};
use super::{Evaluator, NodeCheck};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};
use crate::core::rng::SplitMix64;

/// Individuals per subpopulation beyond one per quasi-identifier.
const SUBPOPULATION: usize = 100;
/// Generations in a row without a new node after which the population counts as converged.
const PATIENCE: u32 = 100;
/// Generations between two exchanges of the fittest between the subpopulations.
const IMMIGRATION_INTERVAL: u32 = 10;

/// The genetic search's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeneticOptions {
    /// Milliseconds the search may run, on the caller's clock.
    pub time_limit_ms: u64,
    /// Seed of every random draw.
    pub seed: u64,
    /// Most generations; unlimited when `None`.
    pub generations: Option<u32>,
}

/// An individual: a node and its fitness key (smaller is fitter).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Individual {
    id: NodeId,
    key: (bool, f64, f64, usize),
}

impl Individual {
    fn new(lattice: &Lattice, id: NodeId, check: &NodeCheck) -> Self {
        let (first, second) = if check.is_solution {
            (check.loss, 0.0)
        } else {
            (check.failing_records as f64, check.loss)
        };
        Self {
            id,
            key: (!check.is_solution, first, second, lattice.height_of(id)),
        }
    }

    fn fitter(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (self.key, other.key);
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.total_cmp(&b.2))
            .then(a.3.cmp(&b.3))
            .then(self.id.cmp(&other.id))
    }
}

/// The search's state.
struct Population<'l> {
    lattice: &'l Lattice,
    rng: SplitMix64,
    incumbent: Incumbent,
    /// Whether the current generation checked a node for the first time.
    fresh: bool,
}

impl Population<'_> {
    /// Checks the node at `levels` and returns it as an individual.
    fn individual(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        levels: &[u8],
    ) -> Result<Individual, CoreError> {
        let id = self.lattice.id(levels);
        self.fresh |= ev.cached(id).is_none();
        let check = anytime::check(ev, &mut self.incumbent, id)?;
        // one clock read per check; the callers stop on `limit.passed()`
        limit.expired();
        Ok(Individual::new(self.lattice, id, &check))
    }

    fn random_level(&mut self, j: usize) -> u8 {
        self.rng.below(u64::from(self.lattice.max_levels()[j]) + 1) as u8
    }

    /// A parent drawn from the fittest `range` individuals of `sorted`, with weight `range - rank`.
    fn parent(&mut self, sorted: &[Individual], range: usize) -> NodeId {
        let total = (range * (range + 1) / 2) as u64;
        let mut draw = self.rng.below(total);
        for (rank, individual) in sorted[..range].iter().enumerate() {
            let weight = (range - rank) as u64;
            if draw < weight {
                return individual.id;
            }
            draw -= weight;
        }
        sorted[0].id
    }

    /// Replaces `population` (sorted, fittest first) by its next generation.
    fn breed(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        population: &mut [Individual],
    ) -> Result<(), CoreError> {
        let n = population.len();
        let dims = self.lattice.dimensions();
        let share = n.div_ceil(5);
        let old = population.to_vec();
        let mut a = vec![0u8; dims];
        let mut b = vec![0u8; dims];
        let (kept, children) = population.split_at_mut((n - share).max(share));
        for slot in children.iter_mut() {
            let (p, q) = (self.parent(&old, share), self.parent(&old, share));
            self.lattice.levels_into(p, &mut a);
            self.lattice.levels_into(q, &mut b);
            for j in 0..dims {
                if self.rng.next_u64() & 1 == 1 {
                    a[j] = b[j];
                }
            }
            *slot = self.individual(ev, limit, &a)?;
            if limit.passed() {
                return Ok(());
            }
        }
        let most = dims.div_ceil(5).max(1);
        let mut order: Vec<usize> = (0..dims).collect();
        for slot in kept[share..].iter_mut() {
            let source = old[self.rng.index(n)].id;
            self.lattice.levels_into(source, &mut a);
            self.rng.shuffle(&mut order);
            let count = 1 + self.rng.index(most);
            for &j in &order[..count] {
                a[j] = self.random_level(j);
            }
            *slot = self.individual(ev, limit, &a)?;
            if limit.passed() {
                return Ok(());
            }
        }
        population.sort_by(Individual::fitter);
        Ok(())
    }

    /// A subpopulation of `size`: the triangle first when `triangle`, then random nodes.
    fn seed(
        &mut self,
        ev: &mut Evaluator<'_>,
        limit: &TimeLimit<'_>,
        size: usize,
        triangle: bool,
    ) -> Result<Vec<Individual>, CoreError> {
        let dims = self.lattice.dimensions();
        let max = self.lattice.max_levels().to_vec();
        let mut out = Vec::with_capacity(size);
        for i in 0..size {
            let levels: Vec<u8> = if triangle && i < dims {
                (0..dims).map(|j| if j <= i { max[j] } else { 0 }).collect()
            } else {
                (0..dims).map(|j| self.random_level(j)).collect()
            };
            out.push(self.individual(ev, limit, &levels)?);
            if limit.passed() {
                break;
            }
        }
        out.sort_by(Individual::fitter);
        Ok(out)
    }
}

/// Runs the genetic search.
pub fn search(ev: &mut Evaluator<'_>, options: GeneticOptions) -> Result<AnytimeResult, CoreError> {
    let lattice = ev.lattice().clone();
    ev.search_reports_progress();
    let limit = TimeLimit::start(ev.control(), options.time_limit_ms);
    let mut state = Population {
        lattice: &lattice,
        rng: SplitMix64(options.seed),
        incumbent: Incumbent::default(),
        fresh: false,
    };
    let stopped = |state: &Population<'_>| {
        Ok(AnytimeResult {
            best: state.incumbent.node(),
            proven: false,
        })
    };
    let size = lattice.dimensions() + SUBPOPULATION;
    let mut first = state.seed(ev, &limit, size, true)?;
    if limit.passed() {
        return stopped(&state);
    }
    let mut second = state.seed(ev, &limit, size, false)?;
    if limit.passed() {
        return stopped(&state);
    }
    let mut stale = 0u32;
    let mut generation = 0u32;
    loop {
        if u128::from(ev.checks()) >= lattice.size() {
            return Ok(AnytimeResult {
                best: state.incumbent.node(),
                proven: true,
            });
        }
        if options.generations.is_some_and(|g| generation >= g) || stale >= PATIENCE {
            return stopped(&state);
        }
        if generation > 0 && generation % IMMIGRATION_INTERVAL == 0 {
            exchange(&mut first, &mut second);
        }
        state.fresh = false;
        for population in [&mut first, &mut second] {
            state.breed(ev, &limit, population)?;
            if limit.passed() {
                return stopped(&state);
            }
        }
        stale = if state.fresh { 0 } else { stale + 1 };
        generation += 1;
    }
}

/// The fittest fifth of each subpopulation (both sorted) replaces the least fit of the other.
fn exchange(first: &mut [Individual], second: &mut [Individual]) {
    let n = first.len();
    let share = n.div_ceil(5);
    let from_first = first[..share].to_vec();
    let from_second = second[..share].to_vec();
    first[n - share..].copy_from_slice(&from_second);
    second[n - share..].copy_from_slice(&from_first);
    first.sort_by(Individual::fitter);
    second.sort_by(Individual::fitter);
}
