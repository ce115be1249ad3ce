//! Incognito (LeFevre, DeWitt, Ramakrishnan: "Incognito: Efficient Full-Domain K-Anonymity", SIGMOD 2005).
//!
//! Iterates over quasi-identifier subsets of growing size. For subsets of size i it walks the candidate
//! nodes bottom-up (by height); a node with an anonymous direct specialization is anonymous without a check
//! (generalization property), any other node is checked. The anonymous nodes of size i seed the candidates
//! of size i + 1: pairs that agree on all but their last attribute are joined, and a joined node survives
//! only if each of its size-i projections is anonymous (subset property). The subset property holds with
//! suppression too: the classes of a projection are unions of the classes of the full node.
//!
//! A node over the subset S is checked as the full-lattice node whose other attributes are at their top
//! level (a single label, so the projection). The last iteration yields every solution of the full lattice.

use rustc_hash::{FxHashMap, FxHashSet};

use super::{candidates_from_tags, Evaluator, Tags};
use crate::core::control::Pace;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;

/// A node over an attribute subset: the sorted attributes and their levels.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SubsetNode {
    attributes: Vec<u8>,
    levels: Vec<u8>,
}

/// Runs Incognito and returns the candidates for selection; with `super_root`, each family of candidates
/// (same attributes) primes the frequency set of its common lowest node before its first check.
pub fn search(ev: &mut Evaluator<'_>, super_root: bool) -> Result<Vec<NodeId>, CoreError> {
    let lattice = ev.lattice().clone();
    let max = lattice.max_levels().to_vec();
    let dims = max.len();
    let mut tags = Tags::for_search(ev);
    if dims == 0 {
        let check = ev.check(0)?;
        tags.tag(0, check.is_solution, &mut ev.pace())?;
        return candidates_from_tags(ev, &mut tags);
    }
    let mut candidates: Vec<SubsetNode> = (0..dims)
        .flat_map(|j| {
            (0..=max[j]).map(move |l| SubsetNode {
                attributes: vec![j as u8],
                levels: vec![l],
            })
        })
        .collect();
    // most subset nodes of a large lattice are settled by a node below them, without a check; the
    // bookkeeping between sizes (ordering, indexing, joining) touches every candidate, so it counts on the
    // pace too: at the widest sizes a lattice of 790,560 nodes has 1.6 million candidates
    let mut pace = ev.pace();
    let mut anonymous: Vec<SubsetNode> = Vec::new();
    for size in 1..=dims {
        let index = index_of(&candidates, &mut pace)?;
        // each family's super-root is primed just before the family's first check (none when every
        // member is settled without one), so the cache still holds it for the family's other checks
        let mut roots: FxHashMap<Vec<u8>, SubsetNode> = if super_root && size > 1 {
            super_roots(&candidates, &mut pace)?
                .into_iter()
                .map(|root| (root.attributes.clone(), root))
                .collect()
        } else {
            FxHashMap::default()
        };
        let mut marked = vec![false; candidates.len()];
        for at in by_height(&candidates, &mut pace)? {
            let node = &candidates[at];
            pace.step(node.levels.len())?;
            let inherited = (0..node.levels.len()).any(|p| {
                if node.levels[p] == 0 {
                    return false;
                }
                let mut below = node.clone();
                below.levels[p] -= 1;
                index.get(&below).is_some_and(|&b| marked[b])
            });
            let is_anonymous = inherited || {
                if let Some(root) = roots.remove(&node.attributes) {
                    ev.prime(embed(&lattice, &max, &root))?;
                }
                let id = embed(&lattice, &max, node);
                let solution = ev.check(id)?.is_solution;
                if size == dims {
                    tags.tag(id, solution, &mut pace)?;
                }
                solution
            };
            if size == dims && inherited {
                tags.tag_solution(embed(&lattice, &max, node), &mut pace)?;
            }
            marked[at] = is_anonymous;
        }
        drop(index);
        anonymous.clear();
        for (node, is_anonymous) in std::mem::take(&mut candidates).into_iter().zip(marked) {
            pace.step(1)?;
            if is_anonymous {
                anonymous.push(node);
            }
        }
        if size < dims {
            candidates = generate(&anonymous, &mut pace)?;
        }
    }
    drop(anonymous);
    // Every full node that was not a candidate has a non-anonymous projection: a non-solution.
    let mut pace = ev.pace();
    for id in 0..lattice.size() as u64 {
        pace.step(1)?;
        if tags.get(id) == super::Tag::Unknown {
            tags.tag_non_solution(id, &mut pace)?;
        }
    }
    candidates_from_tags(ev, &mut tags)
}

/// The super-root of every family of `candidates` (the nodes over one attribute subset): the lowest level
/// of each attribute among them. Families whose super-root is itself a candidate are left out: checking
/// that candidate computes the same set.
fn super_roots(
    candidates: &[SubsetNode],
    pace: &mut Pace<'_>,
) -> Result<Vec<SubsetNode>, CoreError> {
    let mut lowest: FxHashMap<&[u8], Vec<u8>> = FxHashMap::default();
    let mut members: FxHashSet<&SubsetNode> = FxHashSet::default();
    for node in candidates {
        pace.step(1)?;
        members.insert(node);
        lowest
            .entry(&node.attributes[..])
            .and_modify(|levels| {
                for (l, &n) in levels.iter_mut().zip(&node.levels) {
                    *l = (*l).min(n);
                }
            })
            .or_insert_with(|| node.levels.clone());
    }
    let mut roots: Vec<SubsetNode> = lowest
        .into_iter()
        .map(|(attributes, levels)| SubsetNode {
            attributes: attributes.to_vec(),
            levels,
        })
        .filter(|root| !members.contains(root))
        .collect();
    roots.sort_by(|a, b| a.attributes.cmp(&b.attributes));
    Ok(roots)
}

/// Each candidate's position in `candidates`.
fn index_of<'n>(
    candidates: &'n [SubsetNode],
    pace: &mut Pace<'_>,
) -> Result<FxHashMap<&'n SubsetNode, usize>, CoreError> {
    let mut index = FxHashMap::default();
    index.reserve(candidates.len());
    for (at, node) in candidates.iter().enumerate() {
        pace.step(1)?;
        index.insert(node, at);
    }
    Ok(index)
}

/// The positions of `candidates` bottom-up: by height (the sum of levels), and in their given order
/// within one height. Every direct specialization of a node comes before it.
fn by_height(candidates: &[SubsetNode], pace: &mut Pace<'_>) -> Result<Vec<usize>, CoreError> {
    let height = |n: &SubsetNode| n.levels.iter().map(|&l| l as usize).sum::<usize>();
    let tallest = candidates.iter().map(height).max().unwrap_or(0);
    let mut starts = vec![0usize; tallest + 2];
    for node in candidates {
        pace.step(1)?;
        starts[height(node) + 1] += 1;
    }
    for h in 1..starts.len() {
        starts[h] += starts[h - 1];
    }
    let mut order = vec![0usize; candidates.len()];
    for (at, node) in candidates.iter().enumerate() {
        pace.step(1)?;
        let slot = &mut starts[height(node)];
        order[*slot] = at;
        *slot += 1;
    }
    Ok(order)
}

/// The full-lattice id of a subset node (attributes outside the subset at their top level).
fn embed(lattice: &crate::core::lattice::Lattice, max: &[u8], node: &SubsetNode) -> NodeId {
    let mut levels = max.to_vec();
    for (&a, &l) in node.attributes.iter().zip(&node.levels) {
        levels[a as usize] = l;
    }
    lattice.id(&levels)
}

/// Joins anonymous size-i nodes into size-(i+1) candidates and prunes by the subset property; the pairs
/// joined count on `pace`.
fn generate(anonymous: &[SubsetNode], pace: &mut Pace<'_>) -> Result<Vec<SubsetNode>, CoreError> {
    let mut present: FxHashSet<&SubsetNode> = FxHashSet::default();
    present.reserve(anonymous.len());
    // nodes that agree on all but their last attribute, the groups in order of first appearance
    let mut groups: FxHashMap<(&[u8], &[u8]), Vec<&SubsetNode>> = FxHashMap::default();
    let mut keys = Vec::new();
    for n in anonymous {
        pace.step(1)?;
        present.insert(n);
        let i = n.attributes.len() - 1;
        let key = (&n.attributes[..i], &n.levels[..i]);
        groups
            .entry(key)
            .or_insert_with(|| {
                keys.push(key);
                Vec::new()
            })
            .push(n);
    }
    let mut out = Vec::new();
    for key in keys {
        let group = &groups[&key];
        for p in group {
            pace.step(group.len() * (p.attributes.len() + 1))?;
            for q in group {
                let (pa, qa) = (
                    *p.attributes.last().unwrap_or(&0),
                    *q.attributes.last().unwrap_or(&0),
                );
                if pa >= qa {
                    continue;
                }
                let mut joined = (*p).clone();
                joined.attributes.push(qa);
                joined.levels.push(*q.levels.last().unwrap_or(&0));
                let all_subsets_anonymous = (0..joined.attributes.len()).all(|drop| {
                    let sub = SubsetNode {
                        attributes: without(&joined.attributes, drop),
                        levels: without(&joined.levels, drop),
                    };
                    present.contains(&sub)
                });
                if all_subsets_anonymous {
                    out.push(joined);
                }
            }
        }
    }
    Ok(out)
}

fn without(v: &[u8], index: usize) -> Vec<u8> {
    v.iter()
        .enumerate()
        .filter(|&(i, _)| i != index)
        .map(|(_, &x)| x)
        .collect()
}
