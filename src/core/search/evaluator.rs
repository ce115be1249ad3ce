//! Checks lattice nodes: groups the table at a node (rolling up from the closest cached frequency set below
//! it, Issa 2009 §2.5 D), classifies classes against the privacy models, and derives loss and bounds.
//! Results are memoised per node, so every algorithm's `nodes_checked` counts distinct groupings.

use rustc_hash::FxHashMap;

use super::set_cache::SetCache;
use crate::core::control::{Control, Pace, Phase, Progress};
use crate::core::error::CoreError;
use crate::core::groupify::{FrequencySet, Grouper};
use crate::core::input::EngineInput;
use crate::core::lattice::{Lattice, NodeId};
use crate::core::loss::{AttributeFrame, LossModel, MetricKind, NodeSummary};
use crate::core::privacy::{ClassView, PrivacyModel};
use crate::core::risk::ClassSizes;

/// What a check found out about a node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeCheck {
    /// Records in failing classes are within the suppression limit.
    pub is_solution: bool,
    /// Loss of the metric being minimised.
    pub loss: f64,
    /// Lower bound of that metric for every generalization of the node.
    pub bound_above: f64,
    /// Records in failing classes.
    pub failing_records: u64,
    /// Classes before suppression.
    pub classes: u64,
    /// Classes that pass every model.
    pub kept_classes: u64,
}

/// Byte budget of cached frequency sets.
const CACHE_BUDGET: usize = 128 << 20;
/// Most frequency sets kept (lookup scans their levels, a few bytes each).
const CACHE_ENTRIES: usize = 2048;

/// Node checker shared by all search algorithms of one run.
pub struct Evaluator<'a> {
    input: &'a EngineInput<'a>,
    lattice: Lattice,
    models: &'a [Box<dyn PrivacyModel>],
    max_suppressed: u64,
    loss: LossModel,
    metric: MetricKind,
    with_histograms: bool,
    with_spans: bool,
    /// Summaries count the suppressed records per generalized value (ARX's entropy penalty).
    with_value_counts: bool,
    /// Some model judges the whole table: checks give it the node's levels.
    with_table_levels: bool,
    /// Some model reads the kept classes' sizes: checks count them.
    with_class_sizes: bool,
    control: &'a dyn Control,
    grouper: Grouper,
    bottom: Option<FrequencySet>,
    cache: SetCache,
    /// Scratch: the levels a cached set may have to be rolled up to the node being grouped.
    ceiling: Vec<u8>,
    known: FxHashMap<NodeId, NodeCheck>,
    order: Vec<NodeId>,
    kept: Vec<bool>,
    levels: Vec<u8>,
    /// Checks and grouping work of pre-passes run on sibling evaluators (counted in the statistics).
    pre_pass: (u64, u64),
    /// The search reports its own progress (the settled share of the lattice, or how far its bound has
    /// come); checks then report nothing themselves (one counter per report stream).
    progress_by_tags: bool,
    /// Checks stop (as cancelled) once the caller's clock reaches this many milliseconds.
    stop_at_ms: Option<u64>,
    /// A check found the clock past `stop_at_ms`.
    out_of_time: bool,
    /// How many of the best solutions the search must rank (1: only the optimum).
    ranked: usize,
}

impl<'a> Evaluator<'a> {
    /// A checker for one run.
    pub fn new(
        input: &'a EngineInput<'a>,
        models: &'a [Box<dyn PrivacyModel>],
        max_suppressed: u64,
        metric: MetricKind,
        control: &'a dyn Control,
    ) -> Self {
        let mut ev = Self::with_grouper(
            input,
            models,
            (max_suppressed, metric),
            control,
            Grouper::new(input),
        );
        ev.keep_value_sets(models);
        ev
    }

    /// Slots read only by models that need the set of values keep bitsets instead of histograms.
    fn keep_value_sets(&mut self, models: &[Box<dyn PrivacyModel>]) {
        self.grouper.keep_value_sets_only(
            (0..self.input.sensitive.len())
                .map(|slot| {
                    let mut readers = models
                        .iter()
                        .filter(|m| m.sensitive_slot() == Some(slot))
                        .peekable();
                    readers.peek().is_some() && readers.all(|m| m.reads_value_sets_only())
                })
                .collect(),
        );
    }

    /// A checker grouping with `grouper` (made for `input`).
    fn with_grouper(
        input: &'a EngineInput<'a>,
        models: &'a [Box<dyn PrivacyModel>],
        (max_suppressed, metric): (u64, MetricKind),
        control: &'a dyn Control,
        grouper: Grouper,
    ) -> Self {
        let min_class_size = models.iter().map(|m| m.min_class_size()).max().unwrap_or(1);
        let lattice = Lattice::new(input.max_levels());
        let dims = lattice.dimensions();
        Self {
            input,
            lattice,
            models,
            max_suppressed,
            loss: LossModel::new(input, min_class_size, max_suppressed),
            metric,
            with_histograms: models.iter().any(|m| m.sensitive_slot().is_some()),
            with_spans: metric.reads_suppressed_values(),
            with_value_counts: metric == MetricKind::ArxEntropy,
            with_table_levels: models.iter().any(|m| m.is_table_level()),
            with_class_sizes: models.iter().any(|m| m.needs_class_sizes()),
            control,
            grouper,
            bottom: None,
            cache: SetCache::new(dims, CACHE_ENTRIES, CACHE_BUDGET),
            ceiling: vec![0; dims],
            known: FxHashMap::default(),
            order: Vec::new(),
            kept: Vec::new(),
            levels: vec![0; dims],
            pre_pass: (0, 0),
            progress_by_tags: false,
            stop_at_ms: None,
            out_of_time: false,
            ranked: 1,
        }
    }

    /// The lattice being searched.
    pub fn lattice(&self) -> &Lattice {
        &self.lattice
    }

    /// The privacy models checked.
    pub fn models(&self) -> &'a [Box<dyn PrivacyModel>] {
        self.models
    }

    /// The metric being minimised.
    pub fn metric(&self) -> MetricKind {
        self.metric
    }

    /// Precomputed metric tables.
    pub fn loss_model(&self) -> &LossModel {
        &self.loss
    }

    /// Whether predictive tagging is sound for these models and this suppression limit.
    pub fn is_monotone(&self) -> bool {
        self.models.iter().all(|m| {
            if self.max_suppressed > 0 {
                m.is_monotone_with_suppression()
            } else {
                m.is_monotone_without_suppression()
            }
        })
    }

    /// Whether solutions may contain suppressed records.
    pub fn suppression_possible(&self) -> bool {
        self.max_suppressed > 0
    }

    /// Number of distinct nodes checked so far.
    pub fn checks(&self) -> u64 {
        self.known.len() as u64
    }

    /// Classes and records read by all groupings so far (the grouping work).
    pub fn grouping_work(&self) -> u64 {
        self.grouper.processed()
    }

    /// An evaluator of the same input, suppression limit, metric and control for `models`, for a
    /// pre-pass; its checks are not cached here.
    pub fn sibling<'b>(&'b self, models: &'b [Box<dyn PrivacyModel>]) -> Evaluator<'b>
    where
        'a: 'b,
    {
        let mut sibling = Evaluator::with_grouper(
            self.input,
            models,
            (self.max_suppressed, self.metric),
            self.control,
            self.grouper.sibling(),
        );
        sibling.keep_value_sets(models);
        sibling.loss.set_frame(self.loss.frame().clone());
        sibling.stop_at_ms = self.stop_at_ms;
        sibling
    }

    /// Reads lattice levels through `frame` (level bounds and attribute weights) in every loss and
    /// bound; set before the search starts.
    pub fn set_frame(&mut self, frame: AttributeFrame) {
        debug_assert!(self.known.is_empty(), "the frame is set before any check");
        self.loss.set_frame(frame);
    }

    /// Asks the search for its `n` best solutions instead of the optimum alone: exact searches then
    /// enumerate until their bound exceeds the n-th best loss.
    pub fn rank_best(&mut self, n: usize) {
        self.ranked = n.max(1);
    }

    /// How many of the best solutions the search ranks (1: the optimum alone).
    pub fn ranked(&self) -> usize {
        self.ranked
    }

    /// Counts a sibling's `(checks, grouping work)` in this run's statistics.
    pub fn absorb(&mut self, (checks, work): (u64, u64)) {
        self.pre_pass.0 += checks;
        self.pre_pass.1 += work;
    }

    /// Checks and grouping work of absorbed pre-passes.
    pub fn pre_pass(&self) -> (u64, u64) {
        self.pre_pass
    }

    /// The largest minimum class size of the models: every class smaller than this fails some model.
    pub fn min_class_size(&self) -> u64 {
        self.loss.min_class_size()
    }

    /// Checked nodes in the order they were checked.
    pub fn check_order(&self) -> &[NodeId] {
        &self.order
    }

    /// Every node checked so far.
    pub fn known(&self) -> &FxHashMap<NodeId, NodeCheck> {
        &self.known
    }

    /// The result of an earlier check of `id`, if any.
    pub fn cached(&self, id: NodeId) -> Option<NodeCheck> {
        self.known.get(&id).copied()
    }

    /// Checks node `id` (memoised).
    pub fn check(&mut self, id: NodeId) -> Result<NodeCheck, CoreError> {
        if let Some(c) = self.known.get(&id) {
            return Ok(*c);
        }
        if self.control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        if let Some(stop) = self.stop_at_ms {
            if self.control.clock_ms().is_some_and(|now| now >= stop) {
                self.out_of_time = true;
                return Err(CoreError::Cancelled);
            }
        }
        let mut levels = std::mem::take(&mut self.levels);
        self.lattice.levels_into(id, &mut levels);
        let set = self.frequency_set(&levels);
        let summary = self.classify(&set);
        let mut table = summary.table_view(self.input.rows as u64);
        if self.with_table_levels {
            table.levels = Some(levels.clone());
        }
        if self.with_class_sizes {
            let kept = set
                .counts()
                .iter()
                .zip(&self.kept)
                .filter(|(_, &keep)| keep);
            table.sizes = Some(ClassSizes::from_sizes(kept.map(|(&c, _)| u64::from(c))));
        }
        let check = NodeCheck {
            is_solution: summary.suppressed_records <= self.max_suppressed
                && self.models.iter().all(|m| m.is_table_private(&table)),
            loss: self.loss.loss(self.metric, &levels, &summary),
            bound_above: self.loss.bound_above(self.metric, &levels, &summary),
            failing_records: summary.suppressed_records,
            classes: summary.classes,
            kept_classes: summary.kept_classes,
        };
        self.cache.insert(set);
        self.levels = levels;
        self.known.insert(id, check);
        self.order.push(id);
        let n = self.known.len() as u64;
        if !self.progress_by_tags && (n.is_power_of_two() || n % 256 == 0) {
            self.control.report(Progress {
                phase: Phase::Searching,
                done: n,
                total: self.lattice.size().min(u64::MAX as u128) as u64,
            });
        }
        Ok(check)
    }

    /// Computes node `id`'s frequency set and keeps it for later rollups, without checking the node
    /// (Incognito's super-root: the common lowest node of a family of candidates, LeFevre et al. 2005
    /// §3.3). Nothing is done for a node already checked.
    pub fn prime(&mut self, id: NodeId) -> Result<(), CoreError> {
        if self.known.contains_key(&id) {
            return Ok(());
        }
        if self.control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        if let Some(stop) = self.stop_at_ms {
            if self.control.clock_ms().is_some_and(|now| now >= stop) {
                self.out_of_time = true;
                return Err(CoreError::Cancelled);
            }
        }
        let mut levels = std::mem::take(&mut self.levels);
        self.lattice.levels_into(id, &mut levels);
        let set = self.frequency_set(&levels);
        self.cache.insert(set);
        self.levels = levels;
        Ok(())
    }

    /// From now on, checks report no progress: the search reports its own (the nodes its tags settled,
    /// or the share of its time limit spent).
    pub fn search_reports_progress(&mut self) {
        self.progress_by_tags = true;
    }

    /// Gives the following checks `ms` milliseconds on the caller's clock (`None`: no limit); once they
    /// are spent a check returns [`CoreError::Cancelled`] and [`Evaluator::ran_out_of_time`] says why.
    /// Without a clock there is no limit. The clock is read at each check, so a search overruns the limit
    /// by at most one check and the work it does between two checks.
    pub fn limit_checks_to(&mut self, ms: Option<u64>) {
        self.stop_at_ms = ms.and_then(|ms| Some(self.control.clock_ms()?.saturating_add(ms)));
        self.out_of_time = false;
    }

    /// Whether a check stopped because the time given by [`Evaluator::limit_checks_to`] was spent.
    pub fn ran_out_of_time(&self) -> bool {
        self.out_of_time
    }

    /// Lifts the time limit of [`Evaluator::limit_checks_to`] (the exact search ended in time; its
    /// selection runs to its end).
    pub fn lift_time_limit(&mut self) {
        self.stop_at_ms = None;
    }

    /// Records that a pre-pass on a [`Evaluator::sibling`] ran out of the time it inherited.
    pub fn mark_out_of_time(&mut self) {
        self.out_of_time = true;
    }

    /// The caller's control.
    pub fn control(&self) -> &'a dyn Control {
        self.control
    }

    /// A [`Pace`] on the caller's control, for search loops that visit many nodes without checking them.
    pub fn pace(&self) -> Pace<'a> {
        Pace::new(self.control)
    }

    /// Forwards progress to the caller's control.
    pub fn report(&self, progress: Progress) {
        self.control.report(progress);
    }

    /// Checks a node given by its levels.
    pub fn check_levels(&mut self, levels: &[u8]) -> Result<NodeCheck, CoreError> {
        let id = self.lattice.id(levels);
        self.check(id)
    }

    /// Distinct generalized values of each quasi-identifier at node `id` (Datafly's choice); it groups
    /// the table as a check does, so it polls the control first.
    pub fn distinct_values(&mut self, id: NodeId) -> Result<Vec<usize>, CoreError> {
        if self.control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        let levels = self.lattice.levels(id);
        let set = self.frequency_set(&levels);
        let distinct = self
            .input
            .quasi_identifiers
            .iter()
            .enumerate()
            .map(|(j, q)| {
                let codes = q.hierarchy.codes(levels[j] as usize);
                let mut seen = vec![false; q.hierarchy.label_count(levels[j] as usize)];
                let mut n = 0;
                for &row in set.representative_rows() {
                    let s = &mut seen[codes[q.codes[row as usize] as usize] as usize];
                    if !*s {
                        *s = true;
                        n += 1;
                    }
                }
                n
            })
            .collect();
        self.cache.insert(set);
        Ok(distinct)
    }

    /// Marks which classes of `set` pass every model and summarises them.
    fn classify(&mut self, set: &FrequencySet) -> NodeSummary {
        self.kept.clear();
        if self.models.iter().all(|m| m.is_size_only()) {
            let threshold = self.loss.min_class_size();
            self.kept
                .extend(set.counts().iter().map(|&c| c as u64 >= threshold));
        } else {
            for class in 0..set.len() {
                let view = ClassView::new(set, class);
                self.kept
                    .push(self.models.iter().all(|m| m.is_class_private(&view)));
            }
        }
        NodeSummary::new(
            self.input,
            set,
            &self.kept,
            self.loss.min_class_size(),
            self.with_spans
                .then(|| self.grouper.code_reader(self.input)),
            self.with_value_counts,
        )
    }

    /// Groups at `levels`, from the smallest cached set below it or from the bottom.
    fn frequency_set(&mut self, levels: &[u8]) -> FrequencySet {
        // A set can be rolled up to `levels` if it is at most as general in every attribute that still
        // distinguishes records there; attributes generalized to a single value may be anything.
        for (j, (limit, &want)) in self.ceiling.iter_mut().zip(levels).enumerate() {
            *limit = if self.grouper.is_constant(j, want) {
                u8::MAX
            } else {
                want
            };
        }
        if let Some(source) = self.cache.smallest_below(&self.ceiling) {
            if source.levels() == levels {
                return source.clone();
            }
            return self.grouper.rollup(self.input, source, levels);
        }
        let (input, with_histograms) = (self.input, self.with_histograms);
        let zeros = vec![0u8; levels.len()];
        let bottom = self
            .bottom
            .get_or_insert_with(|| self.grouper.group_rows(input, &zeros, with_histograms));
        // Nothing cached below: go through the projection onto the attributes that still distinguish
        // records (the others at the target level, where they are constant). It is far smaller than the
        // bottom when some attributes are fully generalized, and later targets with the same constant
        // attributes reuse it.
        let projection: Vec<u8> = levels
            .iter()
            .enumerate()
            .map(|(j, &l)| if self.grouper.is_constant(j, l) { l } else { 0 })
            .collect();
        if projection.as_slice() == levels || projection.iter().all(|&l| l == 0) {
            return self.grouper.rollup(self.input, bottom, levels);
        }
        let base = self.grouper.rollup(self.input, bottom, &projection);
        let set = self.grouper.rollup(self.input, &base, levels);
        self.cache.insert(base);
        set
    }

    /// Summarises the published table at `levels` (every metric's inputs, granularity's spans included)
    /// and the sizes of its kept classes, grouping through the cache.
    pub fn summarize(&mut self, levels: &[u8]) -> (NodeSummary, ClassSizes) {
        let with_spans = std::mem::replace(&mut self.with_spans, true);
        let with_value_counts = std::mem::replace(&mut self.with_value_counts, true);
        let set = self.frequency_set(levels);
        let summary = self.classify(&set);
        self.with_spans = with_spans;
        self.with_value_counts = with_value_counts;
        let kept = set
            .counts()
            .iter()
            .zip(&self.kept)
            .filter(|(_, &keep)| keep)
            .map(|(&c, _)| u64::from(c));
        let sizes = ClassSizes::from_sizes(kept);
        self.cache.insert(set);
        (summary, sizes)
    }

    /// Groups the original records at `levels` without the cache: the per-record class ids, the sizes, and
    /// which classes pass. Used for the final output.
    pub fn final_grouping(
        &mut self,
        levels: &[u8],
    ) -> (Vec<u32>, FrequencySet, Vec<bool>, NodeSummary) {
        let set = self
            .grouper
            .group_rows(self.input, levels, self.with_histograms);
        let class_of = self.grouper.class_of().to_vec();
        // the report needs every metric, granularity's spans included
        self.with_spans = true;
        self.with_value_counts = true;
        let summary = self.classify(&set);
        (class_of, set, self.kept.clone(), summary)
    }
}
