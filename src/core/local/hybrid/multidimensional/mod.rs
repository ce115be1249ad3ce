//! M-Hybrid: multidimensional generalization plus relocation of a bounded share of quasi-identifier
//! cells, the multidimensional counterpart of S-Hybrid (Nergiz, Gök & Özkanlı 2013, "Preservation of
//! Utility through Hybrid k-Anonymization", TrustBus, §4 end and §5; implementation note
//! `nergiz-2013-hybrid-k-anonymization.md` §2.5).
//!
//! The paper defers M-Hybrid to a technical report that is not available, and says only that the
//! relocation technique "can be used to utilize most generalizations regardless of the underlying
//! algorithm". This is our reconstruction, built on that sentence:
//!
//! 1. **Base generalization.** Strict Mondrian (LeFevre et al. 2006) with k-anonymity partitions the
//!    table; every group is k-anonymous and no median cut is allowable any more.
//! 2. **Hybrid cuts.** A group may still be cut so that one side holds fewer than k of its own records,
//!    when CreateHybrid's moves repair the cut: the small side's records move whole into the rest
//!    (distribution), or the rest gives it the records it lacks (completion). See [`splits`].
//! 3. **Budget.** At most `floor(p · N · |QI|)` cells may be left uncovered, as in S-Hybrid. Cuts are
//!    taken greedily across all groups by gain per changed cell (a priority queue; a group's next cut is
//!    searched again after each of its cuts, and again when the budget left no longer pays for it). The
//!    run is deterministic for one key; ties go to the lower group.
//!
//! Every hybrid cut publishes boxes inside the Mondrian group's box, so every record's cells are at most
//! as general as Mondrian's and the loss is at most Mondrian's; with `p = 0` no cell may change and the
//! output is Mondrian's. The statistical variant (α-hybrid) is not offered: its chi-square test compares
//! group sizes with those of the generalization before relocation, which a cut's new groups do not have.
//! The caveats of S-Hybrid hold: the output is not truthful once a cell moved, the report says how many
//! cells and records moved but never which, and the output order is a keyed shuffle.

mod geometry;
mod splits;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::Serialize;

use super::{HybridMode, HybridOptions};
use crate::core::control::{Control, Pace, Phase, Progress};
use crate::core::error::CoreError;
use crate::core::local::{mondrian, LocalInput, MondrianOptions, Recoding};
use crate::core::privacy::{KAnonymity, PrivacyModel};
use crate::core::secret_rng::SecretStream;
use geometry::Geometry;
use splits::{Cut, Group, Move, Rules, Scratch};

/// Stream number of the output order (cut searches use their own sequence numbers).
const ORDER_STREAM: u64 = u64::MAX - 1;

/// Aggregates of an M-Hybrid run; never says which records moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MHybridReport {
    /// The mode that ran.
    pub mode: HybridMode,
    /// The k of k-anonymity.
    pub k: u64,
    /// Mean cell penalty of the published table (ignores relocation damage, like S-Hybrid's LM).
    pub loss: f64,
    /// The same measure of the Mondrian partition the cuts started from.
    pub base_loss: f64,
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
    /// Groups of the Mondrian partition.
    pub base_groups: u64,
    /// Hybrid cuts whose small side moved into the rest.
    pub distributions: u64,
    /// Hybrid cuts whose small side was completed from the rest.
    pub completions: u64,
    /// False whenever a cell moved: the output then is perturbed, not a truthful generalization.
    pub truthful: bool,
}

/// What [`m_hybrid`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct MHybridResult {
    /// Groups and their cells, in a shuffled output order; relocated records carry their group's cells.
    pub recoding: Recoding,
    /// Aggregates for the report.
    pub report: MHybridReport,
}

/// Runs M-Hybrid: Mondrian, then the hybrid cuts of best gain per changed cell while at most
/// `floor(options.relocation_limit · N · |QI|)` cells change. Quasi-identifiers may be ordered or
/// hierarchical, as for Mondrian.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for k = 0, a limit outside `[0, 1]`, an α (no statistical variant) or
/// no quasi-identifier; Mondrian's errors ([`CoreError::TooFewRecords`] when the table has fewer than k
/// records); [`CoreError::Cancelled`].
pub fn m_hybrid(
    input: &LocalInput<'_>,
    k: u64,
    options: &HybridOptions,
    control: &dyn Control,
) -> Result<MHybridResult, CoreError> {
    let invalid = |name: &'static str, problem: &str| CoreError::InvalidParameter {
        name,
        problem: problem.to_string(),
    };
    if k == 0 {
        return Err(invalid("k", "must be at least 1"));
    }
    if options.alpha.is_some() {
        return Err(invalid(
            "alpha",
            "the multidimensional hybrid has no statistical variant",
        ));
    }
    let q = input.quasi_identifiers.len();
    if q == 0 {
        return Err(invalid(
            "quasi_identifiers",
            "hybrid k-anonymization needs at least one quasi-identifier",
        ));
    }
    let budget = super::cell_budget(options.relocation_limit, input.rows, q)?;
    let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
    let base = mondrian(input, &models, &MondrianOptions::default(), control)?;
    let geometry = Geometry::new(input);
    let mut state = State::new(&base.recoding, input.rows);
    let rules = Rules {
        geometry: &geometry,
        k: usize::try_from(k).unwrap_or(usize::MAX),
        completion: options.completion,
    };
    let base_loss = state.loss(&geometry);
    let base_groups = state.groups.len() as u64;
    let counts = state.cut(&rules, budget, options, control)?;
    Ok(publish(
        state,
        &geometry,
        options,
        MHybridReport {
            mode: options.mode,
            k,
            loss: 0.0,
            base_loss,
            cells_changed: 0,
            cells_total: input.rows as u64 * q as u64,
            budget,
            rows_relocated: 0,
            groups: 0,
            base_groups,
            distributions: counts.0,
            completions: counts.1,
            truthful: true,
        },
    ))
}

/// A group's best cut in the queue, valid while the group is at `version` and the budget pays for it.
struct Entry {
    priority: f64,
    gain: f64,
    group: usize,
    version: u32,
    cut: Cut,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Higher gain per cell first, then higher gain, then the lower group.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then(self.gain.total_cmp(&other.gain))
            .then(other.group.cmp(&self.group))
    }
}

/// The groups over one arena of record indices.
struct State {
    arena: Vec<u32>,
    groups: Vec<Group>,
    versions: Vec<u32>,
    mark: Vec<u8>,
}

impl State {
    /// One open group per group of `base`, members in record order.
    fn new(base: &Recoding, rows: usize) -> Self {
        let sizes = base.group_sizes();
        let mut start = Vec::with_capacity(sizes.len() + 1);
        let mut sum = 0usize;
        for &size in &sizes {
            start.push(sum);
            sum += size as usize;
        }
        let mut next = start.clone();
        let mut arena = vec![0u32; sum];
        for (row, &g) in base.group_of().iter().enumerate() {
            // Mondrian suppresses no record, so every record has a group
            debug_assert!((g as usize) < next.len(), "record {row} has no group");
            if let Some(slot) = next.get_mut(g as usize) {
                arena[*slot] = row as u32;
                *slot += 1;
            }
        }
        let groups: Vec<Group> = sizes
            .iter()
            .zip(&start)
            .map(|(&size, &start)| Group {
                start,
                members: size as usize,
                len: size as usize,
                open: true,
            })
            .collect();
        Self {
            arena,
            versions: vec![0; groups.len()],
            groups,
            mark: vec![0; rows],
        }
    }

    /// Mean cell penalty of the groups.
    fn loss(&self, geometry: &Geometry<'_>) -> f64 {
        let cells = self.arena.len() * geometry.q();
        if cells == 0 {
            return 0.0;
        }
        let total: f64 = self
            .groups
            .iter()
            .map(|g| {
                g.len as f64 * geometry.penalty(&geometry.bounding(&self.arena[g.member_range()]))
            })
            .sum();
        total / cells as f64
    }

    /// Makes the hybrid cuts within `budget`; returns the distributions and completions made.
    fn cut(
        &mut self,
        rules: &Rules<'_>,
        budget: u64,
        options: &HybridOptions,
        control: &dyn Control,
    ) -> Result<(u64, u64), CoreError> {
        let mut pace = Pace::new(control);
        let mut scratch = Scratch::default();
        let mut searches = 0u64;
        let mut search = |state: &State,
                          g: usize,
                          left: u64,
                          scratch: &mut Scratch,
                          pace: &mut Pace<'_>|
         -> Result<Option<Entry>, CoreError> {
            let group = state.groups[g];
            pace.step(group.len * rules.geometry.q())?;
            searches += 1;
            let mut rng = match options.mode {
                HybridMode::Deterministic => None,
                HybridMode::Randomized => Some(SecretStream::new(&options.key, searches)),
            };
            Ok(rules
                .best_cut(&state.arena, group, left, scratch, rng.as_mut())
                .map(|cut| Entry {
                    priority: cut.priority(),
                    gain: cut.gain,
                    group: g,
                    version: state.versions[g],
                    cut,
                }))
        };
        let mut left = budget;
        let mut made = (0u64, 0u64);
        if budget == 0 {
            return Ok(made);
        }
        let mut queue = BinaryHeap::new();
        for g in 0..self.groups.len() {
            if let Some(entry) = search(self, g, left, &mut scratch, &mut pace)? {
                queue.push(entry);
            }
        }
        while let Some(entry) = queue.pop() {
            let g = entry.group;
            if entry.version != self.versions[g] {
                continue;
            }
            if entry.cut.cost > left {
                // with no cell left only a cut that changes none may still come (on a hierarchy)
                if left == 0 && !rules.geometry.has_hierarchy() {
                    continue;
                }
                if let Some(entry) = search(self, g, left, &mut scratch, &mut pace)? {
                    queue.push(entry);
                }
                continue;
            }
            left -= entry.cut.cost;
            let (open, completed) =
                splits::apply(&mut self.arena, &mut self.mark, self.groups[g], &entry.cut);
            match entry.cut.action {
                Move::Distribution => made.0 += 1,
                Move::Completion { .. } => made.1 += 1,
            }
            self.groups[g] = open;
            self.versions[g] += 1;
            if let Some(done) = completed {
                self.groups.push(done);
                self.versions.push(0);
            }
            pace.report(Progress {
                phase: Phase::Relocating,
                done: budget - left,
                total: budget,
            });
            if let Some(entry) = search(self, g, left, &mut scratch, &mut pace)? {
                queue.push(entry);
            }
        }
        Ok(made)
    }
}

/// The recoding and the report's measured fields.
fn publish(
    state: State,
    geometry: &Geometry<'_>,
    options: &HybridOptions,
    mut report: MHybridReport,
) -> MHybridResult {
    let q = geometry.q();
    let rows = state.mark.len();
    let mut group_of = vec![0u32; rows];
    let mut cells = Vec::with_capacity(state.groups.len() * q);
    let mut changed = 0u64;
    let mut relocated = 0u64;
    let mut penalty = 0.0;
    for (id, group) in state.groups.iter().enumerate() {
        let extents = geometry.bounding(&state.arena[group.member_range()]);
        penalty += group.len as f64 * geometry.penalty(&extents);
        for &r in &state.arena[group.guest_range()] {
            changed += geometry.outside(&extents, r);
        }
        relocated += (group.len - group.members) as u64;
        for &r in &state.arena[group.start..group.start + group.len] {
            group_of[r as usize] = id as u32;
        }
        cells.extend(geometry.cells(&extents));
    }
    let mut order: Vec<u32> = (0..rows as u32).collect();
    SecretStream::new(&options.key, ORDER_STREAM).shuffle(&mut order);
    report.loss = if rows == 0 {
        0.0
    } else {
        penalty / (rows * q) as f64
    };
    report.cells_changed = changed;
    report.rows_relocated = relocated;
    report.groups = state.groups.len() as u64;
    report.truthful = changed == 0;
    MHybridResult {
        recoding: Recoding::new(q, group_of, cells).with_order(order),
        report,
    }
}
