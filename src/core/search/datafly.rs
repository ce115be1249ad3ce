//! Datafly (Sweeney 1997/2002), as Issa 2009 §2.2.2 states it: while the records in classes smaller than
//! k exceed the suppression limit, generalize by one level the attribute with the most distinct values in
//! the current generalized table; then suppress the rest. Ties are broken uniformly at random by a seeded
//! generator, so a given seed always gives the same path. Attributes at their top level are never chosen.
//! A heuristic: one greedy path, not exact.

use super::Evaluator;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;
use crate::core::rng::SplitMix64;

/// Runs Datafly and returns its end node when it is a solution.
pub fn search(ev: &mut Evaluator<'_>, seed: u64) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let max = lattice.max_levels().to_vec();
    let mut rng = SplitMix64(seed);
    let mut levels = vec![0u8; max.len()];
    loop {
        let id = lattice.id(&levels);
        if ev.check(id)?.is_solution {
            return Ok(vec![id]);
        }
        let distinct = ev.distinct_values(id)?;
        let open: Vec<usize> = (0..max.len()).filter(|&j| levels[j] < max[j]).collect();
        let Some(most) = open.iter().map(|&j| distinct[j]).max() else {
            return Ok(Vec::new());
        };
        let tied: Vec<usize> = open.into_iter().filter(|&j| distinct[j] == most).collect();
        let pick = tied[(rng.next_u64() % tied.len() as u64) as usize];
        levels[pick] += 1;
    }
}
