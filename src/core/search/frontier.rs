//! The queue entry of the searches that visit lattice nodes in increasing order of a lower bound of the
//! metric (`best_first`, `bounded`): smallest bound first, ties to the lower height, then the smaller
//! node id, so the visiting order is deterministic.

use std::cmp::Ordering;

use crate::core::lattice::NodeId;

/// A node waiting in a `BinaryHeap`, which pops the smallest `(bound, height, id)` first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// The metric's lower bound at the node.
    pub bound: f64,
    /// The node's height (sum of levels).
    pub height: usize,
    /// The node.
    pub id: NodeId,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse everything to pop the smallest key first
        other
            .bound
            .total_cmp(&self.bound)
            .then(other.height.cmp(&self.height))
            .then(other.id.cmp(&self.id))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BinaryHeap;

    #[test]
    fn pops_the_smallest_bound_then_the_lower_height_then_the_smaller_id() {
        let entry = |bound, height, id| Entry { bound, height, id };
        let mut heap: BinaryHeap<Entry> = [
            entry(2.0, 0, 0),
            entry(1.0, 3, 5),
            entry(1.0, 2, 9),
            entry(1.0, 2, 4),
        ]
        .into_iter()
        .collect();
        let order: Vec<NodeId> = std::iter::from_fn(|| heap.pop().map(|e| e.id)).collect();
        assert_eq!(order, vec![4, 9, 5, 0]);
    }
}
