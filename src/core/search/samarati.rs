//! Samarati (2001), as described by Issa 2009 §2.2.1: binary search over heights for the lowest height
//! with a solution (sound because every generalization of a solution is a solution), then every solution on
//! that height is a candidate and the metric picks among them. Not exact: the optimum may lie higher.

use super::{Evaluator, Tag, Tags};
use crate::core::error::CoreError;
use crate::core::lattice::{Lattice, NodeId};

/// Runs Samarati's search and returns the solutions on the lowest solution height.
pub fn search(ev: &mut Evaluator<'_>) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let mut tags = Tags::for_search(ev);
    let top = lattice.max_levels().to_vec();
    let top_id = lattice.id(&top);
    if !resolve(ev, &mut tags, top_id)? {
        return Ok(Vec::new());
    }
    let (mut low, mut high) = (0usize, lattice.top_height());
    while low < high {
        let mid = (low + high) / 2;
        if !solutions_at(ev, &mut tags, &lattice, mid, true)?.is_empty() {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    solutions_at(ev, &mut tags, &lattice, low, false)
}

fn resolve(ev: &mut Evaluator<'_>, tags: &mut Tags, id: NodeId) -> Result<bool, CoreError> {
    Ok(match tags.get(id) {
        Tag::Solution => true,
        Tag::NonSolution => false,
        Tag::Unknown => {
            let s = ev.check(id)?.is_solution;
            tags.tag(id, s, &mut ev.pace())?;
            s
        }
    })
}

/// Solutions at `height`; with `first_only`, stops at the first one.
fn solutions_at(
    ev: &mut Evaluator<'_>,
    tags: &mut Tags,
    lattice: &Lattice,
    height: usize,
    first_only: bool,
) -> Result<Vec<NodeId>, CoreError> {
    let bottom = vec![0u8; lattice.dimensions()];
    let mut nodes = Vec::new();
    Lattice::for_each_at_height(&bottom, lattice.max_levels(), height, &mut |v| {
        nodes.push(lattice.id(v));
        true
    });
    let mut out = Vec::new();
    for id in nodes {
        if resolve(ev, tags, id)? {
            out.push(id);
            if first_only {
                break;
            }
        }
    }
    Ok(out)
}
