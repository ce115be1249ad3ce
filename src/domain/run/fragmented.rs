//! A fragmentation job's run (Zakerzadeh et al.; implementation note §3.1 and §3.10): the MI matrix of
//! the features and the class, FMRMR fragments (Algorithm 1, bounded in size on request), then per
//! fragment its own job (the features of the fragment and the class, derived from the spec with the
//! anonymizer as algorithm) anonymized on every core, the repair of the joins on the class, and each
//! fragment's publication: its own copy of the class column (per record, or per equivalence class as a
//! set of values under δ-selectivity) and its own secret row order, so that fragments can be linked by
//! the class only.

use rayon::prelude::*;
use serde::Serialize;

use super::local::{run_local, secret_key, LocalRun};
use super::local_output::Publication;
use super::RunError;
use crate::core::control::Control;
use crate::core::data::{Column, Dictionary, Table};
use crate::core::error::CoreError;
use crate::core::fragmentation::apply::information_loss as core_information_loss;
use crate::core::fragmentation::fmrmr::{bounded, fmrmr, fragment, relevance_and_redundancy};
use crate::core::fragmentation::mutual_information::MiMatrix;
use crate::core::fragmentation::pipeline::{repair_joins, Fragment, Strategy};
use crate::core::fragmentation::selectivity::eta;
use crate::core::local::{RecodedCell, Recoding, SUPPRESSED_GROUP};
use crate::core::secret_rng::SecretStream;
use crate::domain::fragmentation::mi_matrix;
use crate::domain::models::distinct_l_diversity::DistinctLDiversitySpec;
use crate::domain::models::PrivacyModelSpec;
use crate::domain::resolve::fragmentation::FragmentationPlan;
use crate::domain::resolve::local::{LocalDomain, LocalPlan};
use crate::domain::resolve::ResolvedJob;
use crate::domain::Report;
use crate::domain::{prepare, HierarchyResolver, JobKind, JobSpec, Prepared};

/// How often a fragment's secret order is drawn again when it equals another fragment's.
const ORDER_DRAWS: usize = 64;

/// One published fragment: its own table (the fragment's features and its copy of the class), its
/// resolved job and what the anonymizer produced.
#[derive(Debug)]
pub(super) struct Part {
    /// The fragment's features and class, in table order, the class last.
    pub table: Table,
    /// The fragment's job, resolved against `table`.
    pub job: ResolvedJob,
    /// Its local plan (the fragment's features and the anonymizer).
    pub plan: LocalPlan,
    /// The anonymizer's recoding, in the fragment's secret order.
    pub run: LocalRun,
    /// Its published form.
    pub publication: Publication,
    /// Each record's class as a learner trains on it (original class codes): the repaired value, or
    /// under δ-selectivity one value of its class's published set, drawn uniformly (note gap A12).
    pub labels: Vec<u32>,
}

/// A fragmentation run: the parts and what the report says about the fragmentation.
#[derive(Debug)]
pub(super) struct FragmentedRun {
    /// The published fragments, in FMRMR order.
    pub parts: Vec<Part>,
    /// The report's fragmentation section (without the verifier's figures).
    pub report: FragmentationReport,
}

/// The report's `fragmentation` section.
#[derive(Debug, Clone, Serialize)]
pub struct FragmentationReport {
    /// The class column.
    pub class: String,
    /// The repair (`naive`, `dgbe` or `delta_selectivity`).
    pub strategy: &'static str,
    /// δ of δ-selectivity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// The anonymizer of each fragment.
    pub anonymizer: &'static str,
    /// FMRMR of the fragmentation (Σ over fragments of relevance minus redundancy).
    pub fmrmr: f64,
    /// Equal-frequency bins of numeric features in the MI estimate.
    pub bins: usize,
    /// Whether the redundancy counts I(k; k) = H(k).
    pub diagonal_included: bool,
    /// Mutual information (nats) of each feature with the class, in table order.
    pub relevance: Vec<FeatureRelevance>,
    /// The fragments, in the order of their files.
    pub fragments: Vec<FragmentSummary>,
    /// Class values changed by the repair, over all fragments.
    pub class_values_changed: u64,
    /// Whether no join could fail before the repair (every class set of a fragment nested in or
    /// disjoint from every other fragment's, e.g. a binary class): then DGBE and δ-selectivity change
    /// nothing.
    pub nested_class_sets: bool,
    /// The smallest non-empty join of one published class per fragment on the class, as the
    /// independent verifier counted it (`null` under δ-selectivity, whose fragments publish class sets).
    pub smallest_join: Option<u64>,
    /// Under δ-selectivity, the smallest η of a joinable pair of equivalence classes of two fragments
    /// after the repair (at least δ); `null` otherwise, or when there are too many pairs to list.
    pub smallest_eta: Option<f64>,
    /// The information loss of §5.3 over the features with ordered values (numbers, dates, ordinals):
    /// the mean over their cells of the published range's width over the feature's, in [0, 1].
    pub information_loss: Option<f64>,
    /// Features the information loss covers (hierarchy-generalized features are left out).
    pub information_loss_features: usize,
    /// The fragment whose risk, achieved privacy and loss measures the report's top level shows (the
    /// one with the smallest classes, 1-based).
    pub reported_fragment: usize,
    /// The ℓ of the job's ℓ-diversity of the class, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diversity: Option<u64>,
    /// The segments of an ℓ-diverse fragmentation (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<SegmentSummary>,
}

/// One segment of an ℓ-diverse fragmentation: records whose class is one of a set of values.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentSummary {
    /// Class values in the segment (every published class of the segment holds all of them).
    pub class_values: u64,
    /// Records in the segment.
    pub records: u64,
}

/// The `fragmentation` section of a fragmentation job's report: the fragmentation and each fragment's
/// own report (classes, loss measures, risk and achieved privacy of its table).
#[derive(Debug, Clone, Serialize)]
pub struct FragmentationSection {
    /// How the features were split and the joins repaired.
    #[serde(flatten)]
    pub summary: FragmentationReport,
    /// Each fragment's report, in the order of the fragments.
    pub fragment_reports: Vec<Report>,
}

/// One feature's relevance to the class.
#[derive(Debug, Clone, Serialize)]
pub struct FeatureRelevance {
    /// The feature.
    pub feature: String,
    /// I(class; feature) in nats.
    pub mutual_information: f64,
}

/// One fragment in the report.
#[derive(Debug, Clone, Serialize)]
pub struct FragmentSummary {
    /// The features it holds, in table order.
    pub features: Vec<String>,
    /// Mean relevance of its features to the class (Vₜ).
    pub relevance: f64,
    /// Mean mutual information over its ordered feature pairs (Wₜ).
    pub redundancy: f64,
    /// Published equivalence classes.
    pub classes: u64,
    /// Records in its smallest class.
    pub smallest_class: u64,
    /// Class values the repair changed in this fragment.
    pub class_values_changed: u64,
}

/// Runs the fragmentation job `plan` of `spec` on `table`.
pub(super) fn run_fragmentation(
    table: &Table,
    spec: &JobSpec,
    plan: &FragmentationPlan,
    resolve: &HierarchyResolver<'_>,
    control: &dyn Control,
) -> Result<FragmentedRun, RunError> {
    let features: Vec<&Column> = plan
        .local
        .attributes
        .iter()
        .map(|(c, _)| table.column(*c))
        .collect();
    let class = table.column(plan.class);
    let mi = mi_matrix(&features, class, plan.bins);
    let groups =
        fragment(&mi, plan.fragments, plan.diagonal).ok_or(CoreError::InvalidParameter {
            name: "fragments",
            problem: "more fragments than features".into(),
        })?;
    let mut groups = bounded(&mi, groups, plan.size_bounds, plan.diagonal);
    for group in &mut groups {
        group.sort_unstable();
    }
    // each fragment is a job of its own: its features and the class, anonymized by the anonymizer
    let mut jobs: Vec<(Table, Prepared)> = Vec::with_capacity(groups.len());
    let mut specs: Vec<JobSpec> = Vec::with_capacity(groups.len());
    for group in &groups {
        let mut columns: Vec<Column> = group.iter().map(|&j| features[j].clone()).collect();
        columns.push(class.clone());
        let sub_table = Table::new(columns, table.row_count());
        let mut sub_spec = spec.clone();
        sub_spec.attributes.retain(|name, _| {
            name == &class.name || group.iter().any(|&j| &features[j].name == name)
        });
        sub_spec.algorithm = plan.anonymizer.clone();
        sub_spec.strict = false;
        sub_spec.utility = None;
        let prepared = prepare(&sub_table, &sub_spec, resolve)?;
        jobs.push((sub_table, prepared));
        specs.push(sub_spec);
    }
    let (runs, segments): (Vec<LocalRun>, Vec<SegmentSummary>) = match plan.diversity {
        None => (
            jobs.par_iter()
                .map(|(sub_table, prepared)| run_job_of(sub_table, prepared, control))
                .collect::<Result<_, _>>()?,
            Vec::new(),
        ),
        Some(l) => {
            let segments = segments(class, l, plan.k, plan.single_segment)?;
            let runs = jobs
                .iter()
                .zip(&specs)
                .map(|((sub_table, _), sub_spec)| {
                    run_segmented(sub_table, sub_spec, &segments, resolve, control)
                })
                .collect::<Result<_, RunError>>()?;
            let summaries = segments
                .iter()
                .map(|s| SegmentSummary {
                    class_values: s.values.len() as u64,
                    records: s.rows.len() as u64,
                })
                .collect();
            (runs, summaries)
        }
    };
    let (recodings, runs): (Vec<Recoding>, Vec<(serde_json::Value, u64)>) = runs
        .into_iter()
        .map(|r| (r.recoding, (r.details, r.relocated_cells)))
        .unzip();
    let repaired = repair_joins(&groups, recodings, &class.codes, plan.k, plan.strategy)?;
    let key = secret_key()?;
    let label_seed = spec.utility.as_ref().map_or(0, |u| u.seed);
    let mut orders: Vec<Vec<u32>> = Vec::with_capacity(groups.len());
    for t in 0..groups.len() {
        let mut draw = 0;
        let order = loop {
            let mut stream = SecretStream::new(&key, (t * ORDER_DRAWS + draw) as u64);
            let mut order: Vec<u32> = (0..table.row_count() as u32).collect();
            stream.shuffle(&mut order);
            draw += 1;
            let identity = order.iter().enumerate().all(|(i, &r)| i == r as usize);
            let repeated = orders.contains(&order);
            if (!identity && !repeated) || draw == ORDER_DRAWS || table.row_count() < 2 {
                break order;
            }
        };
        orders.push(order);
    }
    let smallest_eta = match plan.strategy {
        Strategy::DeltaSelective(_) => smallest_eta(&repaired.fragments, plan.k),
        _ => None,
    };
    let summaries = summaries(
        &mi,
        &groups,
        &features,
        &repaired.fragments,
        &repaired.changes,
        plan,
    );
    let information = information_loss(plan, &repaired.fragments);
    let mut parts = Vec::with_capacity(groups.len());
    for (((fragment, (mut sub_table, prepared)), (details, relocated_cells)), order) in repaired
        .fragments
        .into_iter()
        .zip(jobs)
        .zip(runs)
        .zip(orders)
    {
        let last = sub_table.columns().len() - 1;
        let labels = training_labels(&fragment, plan.strategy, label_seed);
        let published_class = match plan.strategy {
            Strategy::DeltaSelective(_) => class_sets(class, &fragment),
            Strategy::Naive | Strategy::Dgbe => Column {
                name: class.name.clone(),
                dictionary: class.dictionary.clone(),
                codes: fragment.class,
            },
        };
        sub_table.replace_column(last, published_class);
        let recoding = fragment.recoding.with_order(order);
        let Prepared { job, kind } = prepared;
        let JobKind::Local(local) = kind else {
            return Err(not_local().into());
        };
        let publication = Publication::new(&sub_table, &local, &recoding, None);
        parts.push(Part {
            table: sub_table,
            job,
            plan: local,
            run: LocalRun {
                recoding,
                details,
                relocated_cells,
                centroids: None,
            },
            publication,
            labels,
        });
    }
    let report = FragmentationReport {
        class: class.name.clone(),
        strategy: plan.strategy.name(),
        delta: match plan.strategy {
            Strategy::DeltaSelective(delta) => Some(delta),
            _ => None,
        },
        anonymizer: plan.local.algorithm.name(),
        fmrmr: fmrmr(&mi, &groups, plan.diagonal),
        bins: plan.bins,
        diagonal_included: plan.diagonal == crate::core::fragmentation::fmrmr::Diagonal::Included,
        relevance: features
            .iter()
            .enumerate()
            .map(|(j, f)| FeatureRelevance {
                feature: f.name.clone(),
                mutual_information: mi.get(mi.class(), j),
            })
            .collect(),
        class_values_changed: repaired.changes.iter().map(|c| c.records).sum(),
        fragments: summaries,
        nested_class_sets: repaired.nested,
        smallest_join: None,
        smallest_eta,
        information_loss: information.0,
        information_loss_features: information.1,
        reported_fragment: 1,
        diversity: plan.diversity,
        segments,
    };
    Ok(FragmentedRun { parts, report })
}

/// Runs one fragment's job on every record.
fn run_job_of(
    sub_table: &Table,
    prepared: &Prepared,
    control: &dyn Control,
) -> Result<LocalRun, CoreError> {
    let JobKind::Local(local) = &prepared.kind else {
        return Err(not_local());
    };
    let input = local.input(sub_table, prepared.input(sub_table).sensitive);
    run_local(
        sub_table,
        &input,
        local,
        &prepared.plan.privacy_models,
        control,
    )
}

/// A segment of an ℓ-diverse fragmentation: its class values and its records.
#[derive(Debug, Clone)]
struct Segment {
    values: Vec<u32>,
    rows: Vec<usize>,
}

/// The class-disjoint segmentation of the note (§3.9, gap A8): the class values are split top-down into
/// two groups as long as each keeps at least `l` values and `k` records (values by decreasing count,
/// each to the group with fewer records so far, ties to the first), so that every segment is as close to
/// `l` values as the counts allow. Records follow their class value; joins across segments are empty.
/// `single` keeps one segment (t-closeness).
fn segments(class: &Column, l: u64, k: u64, single: bool) -> Result<Vec<Segment>, CoreError> {
    let mut counts = vec![0u64; class.dictionary.len()];
    for &c in &class.codes {
        counts[c as usize] += 1;
    }
    let present: Vec<u32> = (0..counts.len() as u32)
        .filter(|&c| counts[c as usize] > 0)
        .collect();
    if (present.len() as u64) < l {
        return Err(CoreError::InvalidParameter {
            name: "l",
            problem: format!(
                "the class has {} distinct values, fewer than l = {l}",
                present.len()
            ),
        });
    }
    let mut done: Vec<Vec<u32>> = Vec::new();
    let mut open = vec![present];
    while let Some(values) = open.pop() {
        let mut sorted = values.clone();
        sorted.sort_by(|&a, &b| counts[b as usize].cmp(&counts[a as usize]).then(a.cmp(&b)));
        let mut halves: [(Vec<u32>, u64); 2] = [(Vec::new(), 0), (Vec::new(), 0)];
        for value in sorted {
            let side = usize::from(halves[1].1 < halves[0].1);
            halves[side].0.push(value);
            halves[side].1 += counts[value as usize];
        }
        let fits = |(v, n): &(Vec<u32>, u64)| v.len() as u64 >= l && *n >= k;
        if !single && fits(&halves[0]) && fits(&halves[1]) {
            let [first, second] = halves;
            open.push(second.0);
            open.push(first.0);
        } else {
            done.push(values);
        }
    }
    let mut segment_of = vec![usize::MAX; counts.len()];
    for (s, values) in done.iter().enumerate() {
        for &v in values {
            segment_of[v as usize] = s;
        }
    }
    let mut segments: Vec<Segment> = done
        .into_iter()
        .map(|mut values| {
            values.sort_unstable();
            Segment {
                values,
                rows: Vec::new(),
            }
        })
        .collect();
    for (r, &c) in class.codes.iter().enumerate() {
        if let Some(segment) = segments.get_mut(segment_of[c as usize]) {
            segment.rows.push(r);
        }
    }
    Ok(segments)
}

/// A fragment's recoding of an ℓ-diverse fragmentation: each segment's records (the chunk) anonymized on
/// their own, with distinct ℓₛ-diversity of the class added (ℓₛ the segment's class values, so every
/// published class holds all of them), then the chunks' groups merged into one recoding of every record.
fn run_segmented(
    sub_table: &Table,
    sub_spec: &JobSpec,
    segments: &[Segment],
    resolve: &HierarchyResolver<'_>,
    control: &dyn Control,
) -> Result<LocalRun, RunError> {
    let class = sub_table.columns().len() - 1;
    let class_name = sub_table.column(class).name.clone();
    let mut chunks = Vec::with_capacity(segments.len());
    for segment in segments {
        let columns: Vec<Column> = sub_table
            .columns()
            .iter()
            .map(|c| Column {
                name: c.name.clone(),
                dictionary: c.dictionary.clone(),
                codes: segment.rows.iter().map(|&r| c.codes[r]).collect(),
            })
            .collect();
        let chunk = Table::new(columns, segment.rows.len());
        let mut chunk_spec = sub_spec.clone();
        chunk_spec
            .privacy_models
            .push(PrivacyModelSpec::DistinctLDiversity(
                DistinctLDiversitySpec {
                    attribute: class_name.clone(),
                    l: segment.values.len() as u64,
                },
            ));
        let prepared = prepare(&chunk, &chunk_spec, resolve)?;
        chunks.push((chunk, prepared));
    }
    let runs: Vec<LocalRun> = chunks
        .par_iter()
        .map(|(chunk, prepared)| run_job_of(chunk, prepared, control))
        .collect::<Result<_, _>>()?;
    let rows = sub_table.row_count();
    let qis = runs.first().map_or(0, |r| r.recoding.quasi_identifiers());
    let mut group_of = vec![SUPPRESSED_GROUP; rows];
    let mut cells: Vec<RecodedCell> = Vec::new();
    let mut offset = 0u32;
    let mut details = Vec::with_capacity(runs.len());
    let mut relocated = 0;
    for (segment, run) in segments.iter().zip(runs) {
        for (i, &r) in segment.rows.iter().enumerate() {
            group_of[r] = match run.recoding.group_of()[i] {
                SUPPRESSED_GROUP => SUPPRESSED_GROUP,
                g => g + offset,
            };
        }
        for g in 0..run.recoding.groups() as u32 {
            for q in 0..qis {
                cells.push(run.recoding.cell(g, q));
            }
        }
        offset += run.recoding.groups() as u32;
        details.push(run.details);
        relocated += run.relocated_cells;
    }
    Ok(LocalRun {
        recoding: Recoding::new(qis, group_of, cells),
        details: serde_json::Value::Array(details),
        relocated_cells: relocated,
        centroids: None,
    })
}

/// The error of a fragment job that resolved to another kind than a local recoding (the anonymizer is
/// checked to be one when the spec is resolved).
fn not_local() -> CoreError {
    CoreError::InvalidParameter {
        name: "anonymizer",
        problem: "a fragment's anonymizer is not a local recoding".into(),
    }
}

/// Pairs of equivalence classes beyond which the smallest η is not listed.
const MOST_ETA_PAIRS: usize = 4_000_000;

/// The smallest η over the joinable pairs of equivalence classes of every two fragments (each pair of
/// distinct (size, class set) shapes once).
fn smallest_eta(fragments: &[Fragment], k: u64) -> Option<f64> {
    let shapes: Vec<Vec<(u64, Vec<u32>)>> = fragments
        .iter()
        .map(|f| {
            let mut shapes: Vec<(u64, Vec<u32>)> = f
                .counts
                .iter()
                .filter(|eq| !eq.is_empty())
                .map(|eq| {
                    (
                        eq.iter().map(|&(_, n)| n).sum(),
                        eq.iter().map(|&(c, _)| c).collect(),
                    )
                })
                .collect();
            shapes.sort_unstable();
            shapes.dedup();
            shapes
        })
        .collect();
    let mut smallest: Option<f64> = None;
    for (t, first) in shapes.iter().enumerate() {
        for second in &shapes[t + 1..] {
            if first.len().saturating_mul(second.len()) > MOST_ETA_PAIRS {
                return None;
            }
            for (size1, values1) in first {
                for (size2, values2) in second {
                    if let Some(eta) = eta(*size1, values1, *size2, values2, k) {
                        smallest = Some(smallest.map_or(eta, |s: f64| s.min(eta)));
                    }
                }
            }
        }
    }
    smallest
}

/// Each fragment's features, V, W, class counts and changes.
fn summaries(
    mi: &MiMatrix,
    groups: &[Vec<usize>],
    features: &[&Column],
    fragments: &[Fragment],
    changes: &[crate::core::fragmentation::repair::Change],
    plan: &FragmentationPlan,
) -> Vec<FragmentSummary> {
    groups
        .iter()
        .zip(fragments)
        .enumerate()
        .map(|(t, (group, fragment))| {
            let (relevance, redundancy) = relevance_and_redundancy(mi, group, plan.diagonal);
            let sizes: Vec<u64> = fragment
                .counts
                .iter()
                .map(|eq| eq.iter().map(|&(_, n)| n).sum())
                .filter(|&n| n > 0)
                .collect();
            FragmentSummary {
                features: group.iter().map(|&j| features[j].name.clone()).collect(),
                relevance,
                redundancy,
                classes: sizes.len() as u64,
                smallest_class: sizes.iter().copied().min().unwrap_or(0),
                class_values_changed: changes
                    .iter()
                    .filter(|c| c.fragment == t)
                    .map(|c| c.records)
                    .sum(),
            }
        })
        .collect()
}

/// The class a learner trains on per record: the repaired class, or under δ-selectivity a value drawn
/// uniformly from its equivalence class's published set (seeded, per group in order).
fn training_labels(fragment: &Fragment, strategy: Strategy, seed: u64) -> Vec<u32> {
    if !matches!(strategy, Strategy::DeltaSelective(_)) {
        return fragment.class.clone();
    }
    let mut stream = SecretStream::new(&crate::core::secret_rng::SecretKey::from_u64(seed), 0);
    fragment
        .recoding
        .group_of()
        .iter()
        .zip(&fragment.class)
        .map(|(&g, &own)| match fragment.counts.get(g as usize) {
            Some(set) if !set.is_empty() => set[stream.below(set.len() as u64) as usize].0,
            _ => own,
        })
        .collect()
}

/// The class column of a δ-selective fragment: every record shows the set of class values of its
/// equivalence class (`{a, b}`, values in dictionary order; one value as it is).
fn class_sets(class: &Column, fragment: &Fragment) -> Column {
    let mut dictionary = Dictionary::new();
    let texts: Vec<u32> = fragment
        .counts
        .iter()
        .map(|eq| {
            let text = match eq.as_slice() {
                [(only, _)] => class.dictionary.value(*only).to_string(),
                values => {
                    let names: Vec<&str> = values
                        .iter()
                        .map(|&(c, _)| class.dictionary.value(c))
                        .collect();
                    format!("{{{}}}", names.join(", "))
                }
            };
            dictionary.intern(&text)
        })
        .collect();
    let suppressed = dictionary.intern(crate::core::render::SUPPRESSED);
    let codes = fragment
        .recoding
        .group_of()
        .iter()
        .map(|&g| match g {
            SUPPRESSED_GROUP => suppressed,
            g => texts[g as usize],
        })
        .collect();
    Column {
        name: class.name.clone(),
        dictionary,
        codes,
    }
}

/// The §5.3 information loss over the features with ordered values (numbers, else ranks), each group's
/// cell weighted by its records and a suppressed cell spanning the feature. Returns the loss and how many
/// features it covers.
fn information_loss(plan: &FragmentationPlan, fragments: &[Fragment]) -> (Option<f64>, usize) {
    let mut cells: Vec<Vec<(f64, f64, u64)>> = Vec::new();
    let mut ranges: Vec<(f64, f64)> = Vec::new();
    for fragment in fragments {
        let recoding = &fragment.recoding;
        let mut sizes = vec![0u64; recoding.groups()];
        let mut suppressed = 0u64;
        for &g in recoding.group_of() {
            match sizes.get_mut(g as usize) {
                Some(n) => *n += 1,
                None => suppressed += 1,
            }
        }
        for (q, &j) in fragment.attributes.iter().enumerate() {
            let LocalDomain::Ordered(order) = &plan.local.attributes[j].1 else {
                continue;
            };
            let position =
                |rank: u32| -> f64 { order.number(order.code_at(rank)).unwrap_or(f64::from(rank)) };
            let range = (position(0), position(order.len().saturating_sub(1) as u32));
            let mut column: Vec<(f64, f64, u64)> = sizes
                .iter()
                .enumerate()
                .filter_map(|(g, &n)| match recoding.cell(g as u32, q) {
                    RecodedCell::Range { low, high } => Some((position(low), position(high), n)),
                    RecodedCell::Node { .. } => None,
                })
                .collect();
            column.push((range.0, range.1, suppressed));
            cells.push(column);
            ranges.push(range);
        }
    }
    let covered = cells.len();
    let loss = (covered > 0).then(|| core_information_loss(&cells, &ranges));
    (loss, covered)
}

#[cfg(test)]
mod tests {
    use crate::codec::CsvOptions;
    use crate::core::control::NoControl;
    use crate::core::data::Table;
    use crate::domain::run::run_job;
    use crate::domain::JobSpec;

    /// 300 records, four numeric features, a class of three values tied to `a` and `c`.
    fn table() -> Table {
        let rows: Vec<Vec<String>> = (0..300u32)
            .map(|r| {
                let a = (r * 7) % 30;
                let b = (r * 11 + 3) % 17;
                let c = (a + r % 5) % 30;
                let d = (r * 13) % 23;
                let class = ["x", "y", "z"][((a + c) / 20) as usize];
                vec![a, b, c, d]
                    .into_iter()
                    .map(|v| v.to_string())
                    .chain([class.to_string()])
                    .collect()
            })
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Table::from_rows(&["a", "b", "c", "d", "class"], &rows)
    }

    fn spec(algorithm: &str) -> JobSpec {
        let json = format!(
            r#"{{"attributes": {{"a": {{"role": "quasi_identifier"}}, "b": {{"role": "quasi_identifier"}},
                 "c": {{"role": "quasi_identifier"}}, "d": {{"role": "quasi_identifier"}},
                 "class": {{"role": "sensitive"}}}},
               "privacy_models": [{{"type": "k_anonymity", "k": 6}}],
               "algorithm": {algorithm}}}"#
        );
        JobSpec::from_json(json.as_bytes()).unwrap()
    }

    fn outputs(algorithm: &str) -> (Vec<String>, serde_json::Value) {
        let table = table();
        let done = run_job(
            &table,
            &spec(algorithm),
            &|_| Err("inline only".into()),
            &NoControl,
        )
        .unwrap();
        assert!(done.is_fragmented());
        let mut csvs = Vec::new();
        for i in 0..done.outputs() {
            let mut bytes = Vec::new();
            done.write_output(i, &mut bytes, &CsvOptions::default())
                .unwrap();
            csvs.push(String::from_utf8(bytes).unwrap());
        }
        assert!(done.write_csv(Vec::new(), &CsvOptions::default()).is_err());
        (csvs, serde_json::to_value(done.report()).unwrap())
    }

    #[test]
    fn every_strategy_publishes_two_fragments() {
        for strategy in ["naive", "dgbe", "delta_selectivity"] {
            let (csvs, report) = outputs(&format!(
                r#"{{"type": "fragmentation", "class": "class", "strategy": "{strategy}"}}"#
            ));
            assert_eq!(csvs.len(), 2);
            let section = &report["fragmentation"];
            assert_eq!(section["strategy"], strategy);
            assert_eq!(section["fragment_reports"].as_array().unwrap().len(), 2);
            assert!(report["equivalence_classes"]["min"].as_u64().unwrap() >= 6);
            for csv in &csvs {
                assert!(csv.lines().next().unwrap().ends_with(",class"), "{csv}");
                assert_eq!(csv.lines().count(), 301);
            }
            let sets = csvs.iter().any(|c| c.contains('{'));
            match strategy {
                // δ-selectivity publishes the class values of each class as a set
                "delta_selectivity" => {
                    assert!(sets || section["class_values_changed"].as_u64() > Some(0));
                    assert!(section["smallest_join"].is_null());
                    assert_eq!(section["delta"], 0.5);
                    assert!(
                        section["smallest_eta"].as_f64().unwrap() >= 0.5,
                        "{section}"
                    );
                }
                _ => {
                    assert!(!sets);
                    assert!(section["smallest_join"].as_u64().unwrap() >= 6);
                }
            }
            if strategy == "naive" {
                assert!(section["class_values_changed"].as_u64().unwrap() > 0);
            }
        }
    }

    #[test]
    fn other_anonymizers_and_bounds_apply() {
        let (csvs, report) = outputs(
            r#"{"type": "fragmentation", "class": "class", "fragments": 2, "max_fragment_size": 2,
                "anonymizer": {"type": "mondrian", "relaxed": true}}"#,
        );
        assert_eq!(csvs.len(), 2);
        for fragment in report["fragmentation"]["fragments"].as_array().unwrap() {
            assert_eq!(fragment["features"].as_array().unwrap().len(), 2);
        }
    }

    /// The classification utility of a fragmentation job trains one learner per fragment; that of a
    /// Mondrian job one. The class follows `a` and `c`, which Mondrian keeps in ranges, so both learn
    /// better than the majority guess, and trained on the original values about as well as possible.
    #[test]
    fn classification_utility_is_reported() {
        let table = table();
        let majority = {
            let mut counts = [0u64; 3];
            for &c in &table.column(4).codes {
                counts[c as usize] += 1;
            }
            *counts.iter().max().unwrap() as f64 / 300.0
        };
        for (algorithm, tables) in [
            (r#"{"type": "fragmentation", "class": "class"}"#, 2),
            (r#"{"type": "mondrian"}"#, 1),
        ] {
            let mut spec = spec(algorithm);
            spec.utility = Some(crate::domain::spec::UtilitySpec {
                class: "class".into(),
                seed: 3,
                test_share: None,
            });
            let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
            let report = done.report();
            let section = report.classification.expect("classification");
            assert_eq!(section.tables, tables);
            assert_eq!((section.train_records, section.test_records), (210, 90));
            for learner in [section.decision_tree, section.nearest_neighbours] {
                assert!(learner.original.accuracy > 0.9, "{algorithm}: {learner:?}");
                assert!(
                    learner.anonymized.accuracy > majority,
                    "{algorithm}: {learner:?}"
                );
                assert!(learner.anonymized.weighted_f <= 1.0);
            }
        }
        // a quasi-identifier cannot be the class
        let mut spec = spec(r#"{"type": "mondrian"}"#);
        spec.utility = Some(crate::domain::spec::UtilitySpec {
            class: "a".into(),
            seed: 0,
            test_share: None,
        });
        match run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl) {
            Err(crate::domain::run::RunError::Spec(e)) => {
                assert_eq!(e.pointer, "/utility/class");
            }
            other => panic!("{other:?}"),
        }
    }

    /// ℓ-diversity of the class: the three class values cannot be split into two segments of at least
    /// two values each, so there is one segment, every published class of every fragment holds all
    /// three values, and every join is 3-diverse and k-anonymous.
    #[test]
    fn l_diverse_fragmentation_publishes_whole_segments() {
        let table = table();
        for model in [
            r#"{"type": "distinct_l_diversity", "attribute": "class", "l": 2}"#,
            r#"{"type": "entropy_l_diversity", "attribute": "class", "l": 2}"#,
        ] {
            let json = format!(
                r#"{{"attributes": {{"a": {{"role": "quasi_identifier"}}, "b": {{"role": "quasi_identifier"}},
                     "c": {{"role": "quasi_identifier"}}, "d": {{"role": "quasi_identifier"}},
                     "class": {{"role": "sensitive"}}}},
                   "privacy_models": [{{"type": "k_anonymity", "k": 6}}, {model}],
                   "algorithm": {{"type": "fragmentation", "class": "class"}}}}"#
            );
            let spec = JobSpec::from_json(json.as_bytes()).unwrap();
            let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
            let report = serde_json::to_value(done.report()).unwrap();
            let section = &report["fragmentation"];
            assert_eq!(section["diversity"], 2, "{model}");
            assert_eq!(section["segments"].as_array().unwrap().len(), 1);
            assert_eq!(section["segments"][0]["class_values"], 3);
            assert_eq!(section["class_values_changed"], 0);
            assert!(section["smallest_join"].as_u64().unwrap() >= 6);
            for i in 0..done.outputs() {
                let mut bytes = Vec::new();
                done.write_output(i, &mut bytes, &CsvOptions::default())
                    .unwrap();
                let text = String::from_utf8(bytes).unwrap();
                let mut classes: std::collections::HashMap<
                    String,
                    std::collections::BTreeSet<String>,
                > = std::collections::HashMap::new();
                for line in text.lines().skip(1) {
                    let (features, class) = line.rsplit_once(',').unwrap();
                    classes
                        .entry(features.to_string())
                        .or_default()
                        .insert(class.to_string());
                }
                assert!(classes.values().all(|values| values.len() == 3), "{model}");
            }
        }
    }

    /// t-closeness of the class: one segment, every published class holds every class value.
    #[test]
    fn t_close_fragmentation_keeps_one_segment() {
        let table = table();
        let spec = JobSpec::from_json(
            br#"{"attributes": {"a": {"role": "quasi_identifier"}, "b": {"role": "quasi_identifier"},
                 "c": {"role": "quasi_identifier"}, "d": {"role": "quasi_identifier"},
                 "class": {"role": "sensitive"}},
               "privacy_models": [{"type": "k_anonymity", "k": 6},
                                  {"type": "t_closeness", "attribute": "class", "t": 0.3}],
               "algorithm": {"type": "fragmentation", "class": "class"}}"#,
        )
        .unwrap();
        let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
        let report = serde_json::to_value(done.report()).unwrap();
        let section = &report["fragmentation"];
        assert_eq!(section["segments"].as_array().unwrap().len(), 1);
        assert_eq!(section["segments"][0]["class_values"], 3);
        for fragment in section["fragment_reports"].as_array().unwrap() {
            let t = fragment["achieved"]["sensitive_attributes"]["class"]["t_equal"]
                .as_f64()
                .unwrap();
            assert!(t <= 0.3, "{t}");
        }
    }

    /// Two segments: six class values of equal counts split into {v0, v2, v4} and {v1, v3, v5}-like
    /// halves of three values each (ℓ = 3), so every published class holds exactly its segment's three
    /// values and joins across segments are empty.
    #[test]
    fn segments_split_the_class_values() {
        let rows: Vec<Vec<String>> = (0..360u32)
            .map(|r| {
                vec![
                    ((r * 7) % 40).to_string(),
                    ((r * 13) % 31).to_string(),
                    format!("v{}", r % 6),
                ]
            })
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&["a", "b", "class"], &rows);
        let spec = JobSpec::from_json(
            br#"{"attributes": {"a": {"role": "quasi_identifier"}, "b": {"role": "quasi_identifier"},
                 "class": {"role": "sensitive"}},
               "privacy_models": [{"type": "k_anonymity", "k": 5},
                                  {"type": "distinct_l_diversity", "attribute": "class", "l": 3}],
               "algorithm": {"type": "fragmentation", "class": "class"}}"#,
        )
        .unwrap();
        let done = run_job(&table, &spec, &|_| Err("inline only".into()), &NoControl).unwrap();
        let report = serde_json::to_value(done.report()).unwrap();
        let segments = report["fragmentation"]["segments"].as_array().unwrap();
        assert_eq!(segments.len(), 2);
        assert!(segments
            .iter()
            .all(|s| s["class_values"] == 3 && s["records"] == 180));
        // naive would break the segments' diversity: refused
        let naive = JobSpec::from_json(
            br#"{"attributes": {"a": {"role": "quasi_identifier"}, "b": {"role": "quasi_identifier"},
                 "class": {"role": "sensitive"}},
               "privacy_models": [{"type": "k_anonymity", "k": 5},
                                  {"type": "distinct_l_diversity", "attribute": "class", "l": 3}],
               "algorithm": {"type": "fragmentation", "class": "class", "strategy": "naive"}}"#,
        )
        .unwrap();
        match run_job(&table, &naive, &|_| Err("inline only".into()), &NoControl) {
            Err(crate::domain::run::RunError::Spec(e)) => {
                assert_eq!(e.code.as_str(), "unsupported_option")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let table = table();
        for (algorithm, code) in [
            (
                r#"{"type": "fragmentation", "class": "nope"}"#,
                "unknown_column",
            ),
            (r#"{"type": "fragmentation", "class": "a"}"#, "invalid_spec"),
            (
                r#"{"type": "fragmentation", "class": "class", "fragments": 5}"#,
                "invalid_parameter",
            ),
            (
                r#"{"type": "fragmentation", "class": "class", "delta": 0.3}"#,
                "unsupported_option",
            ),
            (
                r#"{"type": "fragmentation", "class": "class", "strategy": "delta_selectivity", "delta": 0}"#,
                "invalid_parameter",
            ),
            (
                r#"{"type": "fragmentation", "class": "class", "min_fragment_size": 3}"#,
                "invalid_parameter",
            ),
            (
                r#"{"type": "fragmentation", "class": "class", "anonymizer": {"type": "flash"}}"#,
                "missing_hierarchy",
            ),
            (
                r#"{"type": "fragmentation", "class": "class", "anonymizer": {"type": "hybrid"}}"#,
                "missing_hierarchy",
            ),
        ] {
            let error = match run_job(
                &table,
                &spec(algorithm),
                &|_| Err("inline only".into()),
                &NoControl,
            ) {
                Err(crate::domain::run::RunError::Spec(e)) => e,
                other => panic!("{algorithm}: {other:?}"),
            };
            assert_eq!(error.code.as_str(), code, "{algorithm}: {error}");
        }
    }
}
