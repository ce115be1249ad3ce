//! Information-loss metrics of a full-domain generalization, with the lower bounds exact searches use to
//! skip candidates.
//!
//! Every value is computed from integer aggregates of the classes (or from per-column tables that depend
//! only on the data and the node), summed in a fixed column order, so the same node always gets the same
//! floating-point value, whichever path the search took to it.
//!
//! Definitions (n records, q quasi-identifiers, levels v, maximum levels H):
//! - `precision`: Sweeney's Prec, `mean_j v_j / H_j` (a column with `H_j = 0` contributes 0).
//! - `height`: `Σ_j v_j`.
//! - `dm_star`: `Σ |EC|²` over all classes, suppressed ones included (Issa 2009 §3.2).
//! - `discernibility`: `Σ_{kept} |EC|² + n · suppressed records` (Bayardo & Agrawal 2005, as in ARX).
//! - `nu_entropy`: non-uniform entropy as ARX computes it: `Σ_j Σ_records log2(#records whose value
//!   generalizes to the same label / #records with the same original value)`; suppressed records count as if
//!   generalized, so the value depends only on the data and the node.
//! - `aecs`: average equivalence class size of the published table, `n / (kept classes + [any suppressed])`:
//!   all suppressed records look alike (`*`) and form one class.
//! - `granularity`: Iyengar's loss metric, the mean over all n·q cells of `(leaves under the label − 1) /
//!   (leaves of the hierarchy − 1)`; a suppressed cell counts 1 (a one-leaf hierarchy counts 0).
//! - `arx_entropy`, `arx_loss`, `arx_precision`: ARX 3.9's default entropy (non-monotonic: `nu_entropy`
//!   plus `Σ_v c(v) · log2(S / c(v))` per column over the S suppressed records' generalized values),
//!   Loss (share of the hierarchy's leaves under a kept record's label, 1 per suppressed record,
//!   normalised per column and aggregated by the geometric mean) and precision (a suppressed cell
//!   counts as fully generalized), with ARX's default gs-factor 0.5 (`MetricMDNUNMEntropy`,
//!   `MetricMDNMLoss`, `MetricMDNMPrecision`).
//!
//! Attribute weights ([`AttributeFrame`]) scale each quasi-identifier's term of the seven metrics that
//! sum over attributes (precision, height, nu_entropy, granularity and the `arx_` ones), as ARX's attribute weights do
//! (normalized so that the largest is 1; Prasser et al., "Flexible data anonymization using ARX", 2020).
//! When the lattice is a window of each hierarchy (level bounds), `v_j` and `H_j` above are the
//! hierarchy's own levels, not the window's.

mod summary;

pub use summary::NodeSummary;

use super::input::EngineInput;

/// The metrics a search can minimise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Sweeney's precision.
    Precision,
    /// Sum of squared class sizes, suppressed classes included.
    DmStar,
    /// ARX's discernibility (suppressed records cost n each).
    Discernibility,
    /// Non-uniform entropy.
    NuEntropy,
    /// Average equivalence class size.
    Aecs,
    /// Sum of levels.
    Height,
    /// Iyengar's loss metric.
    Granularity,
    /// ARX's default entropy metric (non-monotonic non-uniform entropy): `nu_entropy` plus a penalty
    /// for the suppressed records.
    ArxEntropy,
    /// ARX's Loss metric with its default geometric-mean aggregation (ARX's default metric).
    ArxLoss,
    /// ARX's (non-monotonic) precision: a suppressed cell counts as fully generalized.
    ArxPrecision,
}

impl MetricKind {
    /// Every metric, in report order.
    pub const ALL: [MetricKind; 10] = [
        MetricKind::Precision,
        MetricKind::DmStar,
        MetricKind::Discernibility,
        MetricKind::NuEntropy,
        MetricKind::Aecs,
        MetricKind::Height,
        MetricKind::Granularity,
        MetricKind::ArxEntropy,
        MetricKind::ArxLoss,
        MetricKind::ArxPrecision,
    ];

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Precision => "precision",
            MetricKind::DmStar => "dm_star",
            MetricKind::Discernibility => "discernibility",
            MetricKind::NuEntropy => "nu_entropy",
            MetricKind::Aecs => "aecs",
            MetricKind::Height => "height",
            MetricKind::Granularity => "granularity",
            MetricKind::ArxEntropy => "arx_entropy",
            MetricKind::ArxLoss => "arx_loss",
            MetricKind::ArxPrecision => "arx_precision",
        }
    }

    /// Whether the value reads the suppressed records' generalized values (their share of spans, or
    /// their values' counts), which the class summary then collects.
    pub fn reads_suppressed_values(self) -> bool {
        matches!(
            self,
            MetricKind::Granularity | MetricKind::ArxEntropy | MetricKind::ArxLoss
        )
    }

    /// Whether the value depends on the node only (no grouping needed).
    pub fn is_data_independent(self) -> bool {
        matches!(
            self,
            MetricKind::Precision | MetricKind::Height | MetricKind::NuEntropy
        )
    }

    /// Whether [`LossModel::static_bound`] is informative and never decreases from a node to its
    /// generalizations (what the best-first search needs).
    pub fn has_monotone_static_bound(self) -> bool {
        matches!(
            self,
            MetricKind::Precision
                | MetricKind::Height
                | MetricKind::NuEntropy
                | MetricKind::Granularity
                | MetricKind::DmStar
                | MetricKind::Discernibility
                | MetricKind::Aecs
                | MetricKind::ArxEntropy
                | MetricKind::ArxLoss
                | MetricKind::ArxPrecision
        )
    }

    /// Whether the best-first search beats Flash with suppression (measured, see docs/benchmarks.md): the static
    /// bound is close to the loss itself (exact, or exact but for suppression), or, for discernibility,
    /// the bound of n per failing record spread down the lattice keeps the search away from regions that
    /// would suppress too much. Metrics with only a weak bound before grouping are left to Flash.
    pub fn suits_best_first(self) -> bool {
        matches!(
            self,
            MetricKind::Precision
                | MetricKind::Height
                | MetricKind::NuEntropy
                | MetricKind::Granularity
                | MetricKind::Discernibility
                | MetricKind::ArxEntropy
                | MetricKind::ArxLoss
                | MetricKind::ArxPrecision
        )
    }

    /// Whether `W ≥ V` implies `loss(W) ≥ loss(V)` for solutions, given whether solutions may suppress.
    /// When true, the optimum is among the minimal solutions.
    pub fn is_monotone(self, suppression_possible: bool) -> bool {
        match self {
            MetricKind::Precision
            | MetricKind::Height
            | MetricKind::NuEntropy
            | MetricKind::DmStar => true,
            MetricKind::Discernibility
            | MetricKind::Aecs
            | MetricKind::Granularity
            | MetricKind::ArxEntropy
            | MetricKind::ArxLoss
            | MetricKind::ArxPrecision => !suppression_possible,
        }
    }
}

/// Every metric of one node, as reported.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MetricValues {
    /// See [`MetricKind::Precision`].
    pub precision: f64,
    /// See [`MetricKind::DmStar`].
    pub dm_star: f64,
    /// See [`MetricKind::Discernibility`].
    pub discernibility: f64,
    /// See [`MetricKind::NuEntropy`].
    pub nu_entropy: f64,
    /// See [`MetricKind::Aecs`].
    pub aecs: f64,
    /// See [`MetricKind::Height`].
    pub height: f64,
    /// See [`MetricKind::Granularity`].
    pub granularity: f64,
    /// See [`MetricKind::ArxEntropy`].
    pub arx_entropy: f64,
    /// See [`MetricKind::ArxLoss`].
    pub arx_loss: f64,
    /// See [`MetricKind::ArxPrecision`].
    pub arx_precision: f64,
}

impl MetricValues {
    /// The value of one metric.
    pub fn get(&self, kind: MetricKind) -> f64 {
        match kind {
            MetricKind::Precision => self.precision,
            MetricKind::DmStar => self.dm_star,
            MetricKind::Discernibility => self.discernibility,
            MetricKind::NuEntropy => self.nu_entropy,
            MetricKind::Aecs => self.aecs,
            MetricKind::Height => self.height,
            MetricKind::Granularity => self.granularity,
            MetricKind::ArxEntropy => self.arx_entropy,
            MetricKind::ArxLoss => self.arx_loss,
            MetricKind::ArxPrecision => self.arx_precision,
        }
    }
}

/// How the lattice's levels stand for the hierarchies' levels, and how much each quasi-identifier weighs
/// in the metrics that sum over attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeFrame {
    /// The hierarchy level lattice level 0 stands for, per quasi-identifier.
    pub offsets: Vec<u8>,
    /// Each hierarchy's highest level (not the window's).
    pub heights: Vec<u8>,
    /// Each quasi-identifier's weight, in `[0, 1]`.
    pub weights: Vec<f64>,
}

impl AttributeFrame {
    /// Lattice levels are hierarchy levels (`heights` the lattice's), and every weight is 1.
    pub fn plain(heights: Vec<u8>) -> Self {
        Self {
            offsets: vec![0; heights.len()],
            weights: vec![1.0; heights.len()],
            heights,
        }
    }

    /// The hierarchy levels of lattice node `levels`.
    pub fn hierarchy_levels(&self, levels: &[u8]) -> Vec<u8> {
        levels
            .iter()
            .zip(&self.offsets)
            .map(|(&v, &o)| v + o)
            .collect()
    }
}

/// Per-run tables for computing metrics quickly.
#[derive(Debug, Clone)]
pub struct LossModel {
    rows: u64,
    min_class_size: u64,
    max_suppressed: u64,
    frame: AttributeFrame,
    /// `Σ_j weight_j`: what one suppressed record's cells weigh in granularity.
    weight_sum: f64,
    /// `entropy[j][level]`: column j's contribution to non-uniform entropy.
    entropy: Vec<Vec<f64>>,
    /// `spans[j][level]`: `Σ_records (leaves under the label − 1)` for column j.
    spans: Vec<Vec<u64>>,
    /// `leaves − 1` of column j's hierarchy.
    span_denominator: Vec<u64>,
    /// `distinct[j][level]`: distinct labels of column j's values at a level.
    distinct: Vec<Vec<u64>>,
}

impl LossModel {
    /// Precomputes the per-column tables. `min_class_size` is the largest minimum class size of the models;
    /// `max_suppressed` the suppression budget in records.
    pub fn new(input: &EngineInput<'_>, min_class_size: u64, max_suppressed: u64) -> Self {
        let mut entropy = Vec::new();
        let mut spans = Vec::new();
        let mut span_denominator = Vec::new();
        let mut distinct = Vec::new();
        for q in &input.quasi_identifiers {
            let map = q.hierarchy;
            let mut counts = vec![0u64; map.codes(0).len()];
            for &c in q.codes {
                counts[c as usize] += 1;
            }
            let hierarchy = map.hierarchy();
            let (mut e_levels, mut s_levels, mut d_levels) = (Vec::new(), Vec::new(), Vec::new());
            for level in 0..=map.max_level() {
                let labels = map.codes(level);
                let mut per_label = vec![0u64; map.label_count(level)];
                for (code, &n) in counts.iter().enumerate() {
                    per_label[labels[code] as usize] += n;
                }
                let mut e = 0.0;
                let mut s = 0u64;
                for (code, &n) in counts.iter().enumerate() {
                    if n == 0 {
                        continue;
                    }
                    let label = labels[code];
                    let generalized = per_label[label as usize];
                    e += n as f64 * (generalized as f64 / n as f64).log2();
                    s += n * (hierarchy.leaves_under(level, label) - 1);
                }
                e_levels.push(e);
                s_levels.push(s);
                d_levels.push(per_label.iter().filter(|&&n| n > 0).count() as u64);
            }
            entropy.push(e_levels);
            spans.push(s_levels);
            span_denominator.push(hierarchy.leaf_count() as u64 - 1);
            distinct.push(d_levels);
        }
        let frame = AttributeFrame::plain(input.max_levels());
        Self {
            rows: input.rows as u64,
            min_class_size,
            max_suppressed,
            weight_sum: frame.weights.iter().sum(),
            frame,
            entropy,
            spans,
            span_denominator,
            distinct,
        }
    }

    /// Reads lattice levels through `frame` (one entry per quasi-identifier).
    pub fn set_frame(&mut self, frame: AttributeFrame) {
        debug_assert_eq!(frame.weights.len(), self.entropy.len());
        self.weight_sum = frame.weights.iter().sum();
        self.frame = frame;
    }

    /// How lattice levels stand for hierarchy levels, and the attributes' weights.
    pub fn frame(&self) -> &AttributeFrame {
        &self.frame
    }

    /// Number of records.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The largest minimum class size of the privacy models.
    pub fn min_class_size(&self) -> u64 {
        self.min_class_size
    }

    fn precision(&self, levels: &[u8]) -> f64 {
        if levels.is_empty() {
            return 0.0;
        }
        let sum: f64 = levels
            .iter()
            .enumerate()
            .map(|(j, &v)| self.frame.weights[j] * self.level_share(j, v))
            .sum();
        sum / levels.len() as f64
    }

    /// Column j's hierarchy level at lattice level `v` over the hierarchy's height (0 for a height 0).
    fn level_share(&self, j: usize, v: u8) -> f64 {
        let h = self.frame.heights[j];
        if h == 0 {
            0.0
        } else {
            f64::from(v + self.frame.offsets[j]) / f64::from(h)
        }
    }

    fn height(&self, levels: &[u8]) -> f64 {
        let frame = &self.frame;
        levels
            .iter()
            .enumerate()
            .map(|(j, &v)| frame.weights[j] * (v + frame.offsets[j]) as f64)
            .sum()
    }

    fn nu_entropy(&self, levels: &[u8]) -> f64 {
        levels
            .iter()
            .zip(&self.entropy)
            .zip(&self.frame.weights)
            .map(|((&v, e), &w)| w * e[v as usize])
            .sum()
    }

    /// Granularity with `suppressed_spans[j]` (the suppressed records' share of `spans`) and `suppressed`
    /// records counted as 1 per cell.
    fn granularity(&self, levels: &[u8], suppressed_spans: Option<&[u64]>, suppressed: u64) -> f64 {
        let q = levels.len() as f64;
        if self.rows == 0 || levels.is_empty() {
            return 0.0;
        }
        let mut total = 0.0;
        for (j, &v) in levels.iter().enumerate() {
            let den = self.span_denominator[j];
            if den == 0 {
                continue;
            }
            let kept = self.spans[j][v as usize] - suppressed_spans.map_or(0, |s| s[j]);
            total += self.frame.weights[j] * (kept as f64 / den as f64);
        }
        (total + suppressed as f64 * self.weight_sum) / (self.rows as f64 * q)
    }

    /// ARX's precision (`MetricMDNMPrecision`, gs-factor 0.5): per quasi-identifier `(U · v/H + S) / n`
    /// with U kept and S suppressed records, averaged over the quasi-identifiers with their weights.
    fn arx_precision(&self, levels: &[u8], suppressed: u64) -> f64 {
        if levels.is_empty() || self.rows == 0 {
            return 0.0;
        }
        let (n, s) = (self.rows as f64, suppressed as f64);
        let sum: f64 = levels
            .iter()
            .enumerate()
            .map(|(j, &v)| self.frame.weights[j] * ((n - s) * self.level_share(j, v) + s) / n)
            .sum();
        sum / levels.len() as f64
    }

    /// ARX's Loss (`MetricMDNMLoss`, gs-factor 0.5, geometric mean): per quasi-identifier the raw loss
    /// is `Σ_kept records share + S`, a record's share being the hierarchy's leaves under its label over
    /// all leaves |D|, normalised to `(raw − n/|D|) / (n − n/|D|)` (0 when |D| = 1); the aggregate is
    /// `Π_j (w_j · L_j + 1)^(1/q) − 1`. `suppressed_spans` and `suppressed` give the suppressed
    /// records' part (`None`: none, the lower bound).
    fn arx_loss(&self, levels: &[u8], suppressed_spans: Option<&[u64]>, suppressed: u64) -> f64 {
        if levels.is_empty() || self.rows == 0 {
            return 0.0;
        }
        let n = self.rows as f64;
        let mut log_sum = 0.0;
        for (j, &v) in levels.iter().enumerate() {
            let leaves = (self.span_denominator[j] + 1) as f64;
            let floor = n / leaves;
            let normalised = if self.span_denominator[j] == 0 {
                0.0
            } else {
                // Σ_records leaves under the label = spans + n; the suppressed records' part leaves
                let all = (self.spans[j][v as usize] + self.rows) as f64;
                let removed = suppressed_spans.map_or(0, |s| s[j] + suppressed) as f64;
                let raw = (all - removed) / leaves + suppressed as f64;
                ((raw - floor) / (n - floor)).max(0.0)
            };
            log_sum += (self.frame.weights[j] * normalised + 1.0).ln();
        }
        (log_sum / levels.len() as f64).exp() - 1.0
    }

    /// The loss of `kind` at a node whose classes are summarised by `summary`.
    pub fn loss(&self, kind: MetricKind, levels: &[u8], summary: &NodeSummary) -> f64 {
        match kind {
            MetricKind::Precision => self.precision(levels),
            MetricKind::Height => self.height(levels),
            MetricKind::NuEntropy => self.nu_entropy(levels),
            MetricKind::DmStar => summary.sum_squares_all as f64,
            MetricKind::Discernibility => {
                summary.sum_squares_kept as f64
                    + self.rows as f64 * summary.suppressed_records as f64
            }
            MetricKind::Aecs => {
                let published = summary.kept_classes + u64::from(summary.suppressed_records > 0);
                if published == 0 {
                    0.0
                } else {
                    self.rows as f64 / published as f64
                }
            }
            MetricKind::Granularity => self.granularity(
                levels,
                Some(&summary.suppressed_spans),
                summary.suppressed_records,
            ),
            MetricKind::ArxEntropy => {
                self.nu_entropy(levels)
                    + summary
                        .suppressed_entropy
                        .iter()
                        .zip(&self.frame.weights)
                        .map(|(e, w)| w * e)
                        .sum::<f64>()
            }
            MetricKind::ArxLoss => self.arx_loss(
                levels,
                Some(&summary.suppressed_spans),
                summary.suppressed_records,
            ),
            MetricKind::ArxPrecision => self.arx_precision(levels, summary.suppressed_records),
        }
    }

    /// Every metric at once.
    pub fn all(&self, levels: &[u8], summary: &NodeSummary) -> MetricValues {
        let get = |k| self.loss(k, levels, summary);
        MetricValues {
            precision: get(MetricKind::Precision),
            dm_star: get(MetricKind::DmStar),
            discernibility: get(MetricKind::Discernibility),
            nu_entropy: get(MetricKind::NuEntropy),
            aecs: get(MetricKind::Aecs),
            height: get(MetricKind::Height),
            granularity: get(MetricKind::Granularity),
            arx_entropy: get(MetricKind::ArxEntropy),
            arx_loss: get(MetricKind::ArxLoss),
            arx_precision: get(MetricKind::ArxPrecision),
        }
    }

    /// Most classes the node can have: the product of distinct generalized values, at most n.
    fn class_bound(&self, levels: &[u8]) -> u64 {
        let mut classes: u64 = 1;
        for (j, &v) in levels.iter().enumerate() {
            classes = classes.saturating_mul(self.distinct[j][v as usize]);
        }
        classes.min(self.rows).max(1)
    }

    /// A lower bound on `kind` for every solution at this node, computed without grouping (exact for
    /// data-independent metrics). It never decreases from a node to its generalizations.
    pub fn static_bound(&self, kind: MetricKind, levels: &[u8]) -> f64 {
        let n = self.rows as f64;
        match kind {
            MetricKind::Precision => self.precision(levels),
            MetricKind::Height => self.height(levels),
            MetricKind::NuEntropy => self.nu_entropy(levels),
            // Σ|EC|² over C classes of n records is at least n²/C (Cauchy–Schwarz)
            MetricKind::DmStar => (n * n / self.class_bound(levels) as f64).max(n),
            // kept records: at least (n − budget)² / C; every record costs at least k
            MetricKind::Discernibility => {
                let kept = self.rows.saturating_sub(self.max_suppressed) as f64;
                (kept * kept / self.class_bound(levels) as f64)
                    .max(n * self.min_class_size.max(1) as f64)
            }
            MetricKind::Aecs => {
                if self.rows == 0 {
                    0.0
                } else {
                    n / (self.class_bound(levels) + 1) as f64
                }
            }
            MetricKind::Granularity => self.granularity(levels, None, 0),
            // the penalty is not negative
            MetricKind::ArxEntropy => self.nu_entropy(levels),
            // a suppressed record costs 1 ≥ its share, a suppressed cell 1 ≥ its level's share
            MetricKind::ArxLoss => self.arx_loss(levels, None, 0),
            MetricKind::ArxPrecision => self.arx_precision(levels, 0),
        }
    }

    /// A lower bound on `kind` for every solution `W ≤` a node where `failing` records fail the models:
    /// such a `W` suppresses at least as many records (classes only split going down), and suppressed
    /// records cost n each in discernibility and one whole record's cells in granularity.
    pub fn bound_below(&self, kind: MetricKind, failing: u64) -> f64 {
        match kind {
            MetricKind::Discernibility => self.rows as f64 * failing as f64,
            // a suppressed record's cells weigh Σ_j weight_j of the q its record would
            MetricKind::Granularity if self.rows > 0 => {
                let q = self.frame.weights.len().max(1) as f64;
                failing as f64 / self.rows as f64 * (self.weight_sum / q)
            }
            _ => f64::NEG_INFINITY,
        }
    }

    /// Discernibility of a solution `W` that suppresses at least `failing` records, when some node below it
    /// has `bound_above` = `up` (that is `Σ_records max(k, class size)`): either `W` costs more than
    /// `best`, or each of its classes has at most `√best` records, so every suppressed record adds at
    /// least `n − max(k, √best)` to `up`. A value above `best` therefore proves `loss(W) > best`.
    pub fn combined_bound(&self, kind: MetricKind, up: f64, failing: u64, best: f64) -> f64 {
        match kind {
            MetricKind::Discernibility if best.is_finite() && up.is_finite() && failing > 0 => {
                let cap = (self.min_class_size as f64).max(best.sqrt() + 1.0);
                up + failing as f64 * (self.rows as f64 - cap).max(0.0)
            }
            _ => f64::NEG_INFINITY,
        }
    }

    /// Whether [`LossModel::bound_below`] can be informative.
    pub fn has_bound_below(kind: MetricKind) -> bool {
        matches!(kind, MetricKind::Discernibility | MetricKind::Granularity)
    }

    /// A lower bound on `kind` valid for every node `W ≥` this node, from this node's classes.
    pub fn bound_above(&self, kind: MetricKind, levels: &[u8], summary: &NodeSummary) -> f64 {
        match kind {
            MetricKind::Precision
            | MetricKind::Height
            | MetricKind::NuEntropy
            | MetricKind::DmStar => self.loss(kind, levels, summary),
            // each record costs at least max(k, its class size here): a kept class at W is a union of
            // classes here with at least k records; a suppressed record costs n ≥ both.
            MetricKind::Discernibility => summary.discernibility_bound as f64,
            // classes at W number at most the distinct classes here, plus the class of suppressed records
            MetricKind::Aecs => {
                if self.rows == 0 {
                    0.0
                } else {
                    self.rows as f64 / (summary.classes + 1) as f64
                }
            }
            MetricKind::Granularity
            | MetricKind::ArxEntropy
            | MetricKind::ArxLoss
            | MetricKind::ArxPrecision => self.static_bound(kind, levels),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::input::QuasiIdentifier;

    /// The four records of `weights_scale_each_attribute_term` at node [1, 0] with k = 2: (A12, b1) holds r1 and r3; r2
    /// (A12, b2) and r4 (A3, b2) are suppressed (S = 2, U = 2):
    /// - arx_precision: a's (U · ½ + S) / n = ¾, b's (0 + 2) / 4 = ½, mean ⅝;
    /// - arx_entropy: nu_entropy 2 · log2(3/2) + log2(3), plus a's penalty 1 · log2(2/1) twice (A12,
    ///   A3) and b's 2 · log2(2/2) = 0;
    /// - arx_loss: a's shares A12 ⅔ (kept r1, r3), raw ⅔ + ⅔ + 2 = 10/3, floor 4/3, so (10/3 − 4/3) /
    ///   (4 − 4/3) = ¾; b's shares ½, raw ½ + ½ + 2 = 3, floor 2, (3 − 2) / (4 − 2) = ½; the geometric
    ///   aggregate √(1¾ · 1½) − 1.
    #[test]
    fn arx_metrics_on_a_hand_computed_table() {
        use crate::core::control::NoControl;
        use crate::core::privacy::{KAnonymity, PrivacyModel};
        use crate::core::search::Evaluator;
        let table = four_records();
        let maps = four_record_maps(&table);
        let input = four_record_input(&table, &maps);
        let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: 2 })];
        let mut ev = Evaluator::new(&input, &models, 2, MetricKind::ArxLoss, &NoControl);
        let (summary, _) = ev.summarize(&[1, 0]);
        assert_eq!(summary.suppressed_records, 2);
        let values = ev.loss_model().all(&[1, 0], &summary);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(values.arx_precision, 0.625), "{values:?}");
        let entropy = 2.0 * 1.5f64.log2() + 3f64.log2();
        assert!(close(values.nu_entropy, entropy), "{values:?}");
        assert!(close(values.arx_entropy, entropy + 2.0), "{values:?}");
        assert!(
            close(values.arx_loss, (1.75f64 * 1.5).sqrt() - 1.0),
            "{values:?}"
        );
        // the static bounds leave the suppressed records out, and stay below
        let model = ev.loss_model();
        assert!(close(
            model.static_bound(MetricKind::ArxEntropy, &[1, 0]),
            entropy
        ));
        // precision: a's ½, b's 0; Loss: a's raw 4 · … = (⅔ · 3 + ⅓) = 7/3, (7/3 − 4/3) / (8/3) = ⅜,
        // b's raw 2, 0
        assert!(close(
            model.static_bound(MetricKind::ArxPrecision, &[1, 0]),
            0.25
        ));
        assert!(close(
            model.static_bound(MetricKind::ArxLoss, &[1, 0]),
            1.375f64.sqrt() - 1.0
        ));
    }

    fn four_records() -> Table {
        Table::from_rows(
            &["a", "b"],
            &[
                vec!["a1", "b1"],
                vec!["a1", "b2"],
                vec!["a2", "b1"],
                vec!["a3", "b2"],
            ],
        )
    }

    fn four_record_maps(table: &Table) -> [GeneralizationMap; 2] {
        let a = Hierarchy::from_rows(&[
            vec!["a1", "A12", "*"],
            vec!["a2", "A12", "*"],
            vec!["a3", "A3", "*"],
        ])
        .unwrap();
        let b = Hierarchy::from_rows(&[vec!["b1", "*"], vec!["b2", "*"]]).unwrap();
        [
            GeneralizationMap::bind(a, table.column(0)).unwrap(),
            GeneralizationMap::bind(b, table.column(1)).unwrap(),
        ]
    }

    fn four_record_input<'a>(
        table: &'a Table,
        maps: &'a [GeneralizationMap; 2],
    ) -> EngineInput<'a> {
        EngineInput {
            rows: 4,
            quasi_identifiers: (0..2)
                .map(|j| QuasiIdentifier {
                    name: &table.column(j).name,
                    codes: &table.column(j).codes,
                    hierarchy: &maps[j],
                })
                .collect(),
            sensitive: Vec::new(),
        }
    }

    /// Four records: a ∈ {a1, a1, a2, a3} (a1, a2 → A12; a3 → A3; then *), b ∈ {b1, b2, b1, b2}
    /// (→ *). At node [1, 1] with weights [1, ½]:
    /// - precision (1 · ½ + ½ · 1) / 2 = ½ (unweighted ¾); height 1 + ½ = 1.5;
    /// - nu_entropy: a gives 2 · log2(3/2) + log2(3/1), b gives 4 · log2(4/2) = 4, so a's + 2;
    /// - granularity: a's spans 3 · (2 − 1) over 3 − 1 leaves = 1.5, b's 4 · 1 / 1 = 4, so
    ///   (1.5 + ½ · 4) / (4 · 2) = 0.4375.
    #[test]
    fn weights_scale_each_attribute_term() {
        let table = four_records();
        let maps = four_record_maps(&table);
        let input = four_record_input(&table, &maps);
        let mut model = LossModel::new(&input, 1, 0);
        let node = [1, 1];
        let plain = |kind| model.static_bound(kind, &node);
        let entropy_a = 2.0 * (1.5f64).log2() + 3f64.log2();
        assert_eq!(plain(MetricKind::Precision), 0.75);
        assert_eq!(plain(MetricKind::Height), 2.0);
        assert!((plain(MetricKind::NuEntropy) - (entropy_a + 4.0)).abs() < 1e-12);
        assert_eq!(plain(MetricKind::Granularity), 5.5 / 8.0);
        let mut frame = AttributeFrame::plain(vec![2, 1]);
        frame.weights = vec![1.0, 0.5];
        model.set_frame(frame);
        let weighted = |kind| model.static_bound(kind, &node);
        assert_eq!(weighted(MetricKind::Precision), 0.5);
        assert_eq!(weighted(MetricKind::Height), 1.5);
        assert!((weighted(MetricKind::NuEntropy) - (entropy_a + 2.0)).abs() < 1e-12);
        assert_eq!(weighted(MetricKind::Granularity), 0.4375);
        // a suppressed record weighs its weighted cells: (1 + ½) / (4 · 2) per record
        assert_eq!(
            model.bound_below(MetricKind::Granularity, 2),
            2.0 / 4.0 * (1.5 / 2.0)
        );
        // an offset reads level 0 of a window as the hierarchy's level 1 (precision and height)
        let mut frame = AttributeFrame::plain(vec![2, 1]);
        frame.offsets = vec![1, 0];
        model.set_frame(frame);
        assert_eq!(model.static_bound(MetricKind::Height, &[0, 1]), 2.0);
        assert_eq!(model.static_bound(MetricKind::Precision, &[1, 0]), 0.5);
    }
}
