//! An independent k-anonymity checker and metric oracle for the integration tests.
//!
//! Nothing here uses the engine's encoding, grouping or loss code: records are plain strings, each
//! quasi-identifier is generalized by looking its original value up in the hierarchy's own rows (a
//! `HashMap` from original value to its label at every level), equivalence classes are counted with a
//! `HashMap` keyed by the generalized quasi-identifier tuple, and the metrics are recomputed from the
//! definitions in the doc comment of `src/core/loss/mod.rs`. The tests compare the engine against it.
//!
//! Used with `mod support;` from the test files; each file uses only part of it.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use anonymizer::core::loss::MetricKind;

/// A generalization hierarchy as plain rows (`row[0]` is the original value, the last entry the top).
#[derive(Debug, Clone)]
pub struct PlainHierarchy {
    /// Original value → its label at every level (level 0 = the value itself).
    by_value: HashMap<String, Vec<String>>,
    /// Per level, label → number of distinct leaves (original values) below it.
    leaves_under: Vec<HashMap<String, u64>>,
    /// Number of distinct original values the hierarchy defines.
    leaves: u64,
    /// Number of levels, the original values included.
    height: usize,
}

impl PlainHierarchy {
    /// Indexes hierarchy rows. Panics on ragged rows (the tests only build valid hierarchies).
    pub fn new<S: AsRef<str>>(rows: &[Vec<S>]) -> Self {
        let height = rows[0].len();
        let mut by_value: HashMap<String, Vec<String>> = HashMap::new();
        for row in rows {
            assert_eq!(row.len(), height, "ragged hierarchy row");
            let labels: Vec<String> = row.iter().map(|s| s.as_ref().to_string()).collect();
            by_value.entry(labels[0].clone()).or_insert(labels);
        }
        let mut leaves_under = vec![HashMap::new(); height];
        for labels in by_value.values() {
            for (level, label) in labels.iter().enumerate() {
                *leaves_under[level].entry(label.clone()).or_insert(0) += 1;
            }
        }
        Self {
            leaves: by_value.len() as u64,
            by_value,
            leaves_under,
            height,
        }
    }

    /// Reads an ARX hierarchy file (`;`-separated, no header) with the `csv` crate.
    pub fn from_arx_file(path: &std::path::Path) -> Self {
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(b';')
            .has_headers(false)
            .flexible(true)
            .from_path(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let rows: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        Self::new(&rows)
    }

    /// Highest generalization level (number of levels − 1).
    pub fn max_level(&self) -> usize {
        self.height - 1
    }

    /// The label of original value `value` at `level`.
    pub fn label(&self, value: &str, level: usize) -> &str {
        let labels = self
            .by_value
            .get(value)
            .unwrap_or_else(|| panic!("value {value:?} is not in the hierarchy"));
        &labels[level]
    }

    /// Distinct original values below the label `value` takes at `level`.
    pub fn leaves_under(&self, value: &str, level: usize) -> u64 {
        self.leaves_under[level][self.label(value, level)]
    }

    /// Number of distinct original values.
    pub fn leaf_count(&self) -> u64 {
        self.leaves
    }
}

/// The original records and which columns are quasi-identifiers, in lattice order.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Column names.
    pub header: Vec<String>,
    /// Original records, one string per column.
    pub rows: Vec<Vec<String>>,
    /// `(column index, hierarchy)` per quasi-identifier, in lattice order (table order).
    pub qis: Vec<(usize, PlainHierarchy)>,
}

/// What the checker computes for one node, independently of the engine.
#[derive(Debug, Clone)]
pub struct NodeFacts {
    /// Class sizes before suppression, largest first.
    pub class_sizes: Vec<u64>,
    /// Records in classes smaller than k.
    pub failing_records: u64,
    /// Every metric, per the definitions in `src/core/loss/mod.rs`, with the failing classes suppressed.
    pub metrics: HashMap<MetricKind, f64>,
}

impl Dataset {
    /// The generalized quasi-identifier tuple of record `r` at `levels`.
    pub fn generalized_key(&self, r: usize, levels: &[u8]) -> Vec<String> {
        self.qis
            .iter()
            .zip(levels)
            .map(|((c, h), &l)| h.label(&self.rows[r][*c], l as usize).to_string())
            .collect()
    }

    /// Number of distinct quasi-identifier tuples of the original records.
    pub fn distinct_original_tuples(&self) -> usize {
        let set: HashSet<Vec<&str>> = self
            .rows
            .iter()
            .map(|row| self.qis.iter().map(|(c, _)| row[*c].as_str()).collect())
            .collect();
        set.len()
    }

    /// Class sizes, failing records and every metric at `levels` for k-anonymity with `k`.
    pub fn facts(&self, levels: &[u8], k: u64) -> NodeFacts {
        self.weighted_facts(levels, k, &vec![1.0; self.qis.len()])
    }

    /// [`Dataset::facts`] with quasi-identifier j's term of precision, height, nu_entropy and
    /// granularity multiplied by `weights[j]` (already normalized).
    pub fn weighted_facts(&self, levels: &[u8], k: u64, weights: &[f64]) -> NodeFacts {
        let n = self.rows.len();
        let q = self.qis.len();
        let keys: Vec<Vec<String>> = (0..n).map(|r| self.generalized_key(r, levels)).collect();
        let mut classes: HashMap<&Vec<String>, u64> = HashMap::new();
        for key in &keys {
            *classes.entry(key).or_insert(0) += 1;
        }
        let suppressed: Vec<bool> = keys.iter().map(|key| classes[key] < k).collect();
        let failing_records = suppressed.iter().filter(|&&s| s).count() as u64;
        let mut class_sizes: Vec<u64> = classes.values().copied().collect();
        class_sizes.sort_unstable_by(|a, b| b.cmp(a));
        let kept: Vec<u64> = class_sizes.iter().copied().filter(|&s| s >= k).collect();

        let precision = if q == 0 {
            0.0
        } else {
            self.qis
                .iter()
                .zip(levels)
                .zip(weights)
                .map(|(((_, h), &l), w)| {
                    if h.max_level() == 0 {
                        0.0
                    } else {
                        w * l as f64 / h.max_level() as f64
                    }
                })
                .sum::<f64>()
                / q as f64
        };
        let height: f64 = levels.iter().zip(weights).map(|(&l, w)| w * l as f64).sum();
        let dm_star: f64 = class_sizes.iter().map(|&s| (s * s) as f64).sum();
        let discernibility: f64 =
            kept.iter().map(|&s| (s * s) as f64).sum::<f64>() + n as f64 * failing_records as f64;
        // non-uniform entropy over all records (suppressed ones count as if generalized)
        let mut nu_entropy = 0.0;
        for (((c, h), &l), w) in self.qis.iter().zip(levels).zip(weights) {
            let mut per_value: HashMap<&str, u64> = HashMap::new();
            let mut per_label: HashMap<&str, u64> = HashMap::new();
            for row in &self.rows {
                *per_value.entry(row[*c].as_str()).or_insert(0) += 1;
                *per_label.entry(h.label(&row[*c], l as usize)).or_insert(0) += 1;
            }
            for row in &self.rows {
                let same_label = per_label[h.label(&row[*c], l as usize)] as f64;
                let same_value = per_value[row[*c].as_str()] as f64;
                nu_entropy += w * (same_label / same_value).log2();
            }
        }
        let published = kept.len() as u64 + u64::from(failing_records > 0);
        let aecs = if published == 0 {
            0.0
        } else {
            n as f64 / published as f64
        };
        let granularity = if n == 0 || q == 0 {
            0.0
        } else {
            let mut total = 0.0;
            for (r, &s) in suppressed.iter().enumerate() {
                for (((c, h), &l), w) in self.qis.iter().zip(levels).zip(weights) {
                    total += w * if s {
                        1.0
                    } else if h.leaf_count() <= 1 {
                        0.0
                    } else {
                        (h.leaves_under(&self.rows[r][*c], l as usize) - 1) as f64
                            / (h.leaf_count() - 1) as f64
                    };
                }
            }
            total / (n * q) as f64
        };
        let (arx_entropy, arx_loss, arx_precision) =
            self.arx_metrics(levels, &suppressed, nu_entropy, weights);
        let metrics = HashMap::from([
            (MetricKind::ArxEntropy, arx_entropy),
            (MetricKind::ArxLoss, arx_loss),
            (MetricKind::ArxPrecision, arx_precision),
            (MetricKind::Precision, precision),
            (MetricKind::Height, height),
            (MetricKind::DmStar, dm_star),
            (MetricKind::Discernibility, discernibility),
            (MetricKind::NuEntropy, nu_entropy),
            (MetricKind::Aecs, aecs),
            (MetricKind::Granularity, granularity),
        ]);
        NodeFacts {
            class_sizes,
            failing_records,
            metrics,
        }
    }

    /// ARX's non-monotonic entropy, Loss (geometric mean) and precision, record by record, from the
    /// definitions in `src/core/loss/mod.rs` (ARX's `MetricMDNUNMEntropy`, `MetricMDNMLoss`,
    /// `MetricMDNMPrecision` with the default gs-factor 0.5).
    fn arx_metrics(
        &self,
        levels: &[u8],
        suppressed: &[bool],
        nu_entropy: f64,
        weights: &[f64],
    ) -> (f64, f64, f64) {
        let n = self.rows.len() as f64;
        let q = self.qis.len();
        let s_total = suppressed.iter().filter(|&&s| s).count() as f64;
        let (mut penalty, mut log_loss, mut precision) = (0.0, 0.0, 0.0);
        for (((c, h), &l), w) in self.qis.iter().zip(levels).zip(weights) {
            let mut by_label: HashMap<&str, u64> = HashMap::new();
            let (mut raw, mut cells) = (0.0, 0.0);
            for (row, &s) in self.rows.iter().zip(suppressed) {
                let label = h.label(&row[*c], l as usize);
                if s {
                    *by_label.entry(label).or_insert(0) += 1;
                    raw += 1.0;
                    cells += 1.0;
                } else {
                    raw += h.leaves_under(&row[*c], l as usize) as f64 / h.leaf_count() as f64;
                    if h.max_level() > 0 {
                        cells += l as f64 / h.max_level() as f64;
                    }
                }
            }
            penalty += w * by_label
                .values()
                .map(|&c| c as f64 * (s_total / c as f64).log2())
                .sum::<f64>();
            let floor = n / h.leaf_count() as f64;
            let normalised = if h.leaf_count() <= 1 || n == 0.0 {
                0.0
            } else {
                ((raw - floor) / (n - floor)).max(0.0)
            };
            log_loss += (w * normalised + 1.0).ln();
            if n > 0.0 {
                precision += w * cells / n;
            }
        }
        if q == 0 {
            return (nu_entropy, 0.0, 0.0);
        }
        (
            nu_entropy + penalty,
            (log_loss / q as f64).exp() - 1.0,
            precision / q as f64,
        )
    }

    /// Every node of the lattice spanned by the hierarchies, in mixed-radix order.
    pub fn all_nodes(&self) -> Vec<Vec<u8>> {
        let max: Vec<u8> = self.qis.iter().map(|(_, h)| h.max_level() as u8).collect();
        let mut out = vec![vec![0u8; max.len()]];
        for (j, &m) in max.iter().enumerate() {
            out = out
                .into_iter()
                .flat_map(|node| {
                    (0..=m).map(move |l| {
                        let mut v = node.clone();
                        v[j] = l;
                        v
                    })
                })
                .collect();
        }
        out
    }

    /// Brute force over the whole lattice: the least `metric` loss among nodes whose failing records fit in
    /// `max_suppressed`, or `None` when no node qualifies.
    pub fn brute_force_minimum(
        &self,
        k: u64,
        max_suppressed: u64,
        metric: MetricKind,
    ) -> Option<f64> {
        self.all_nodes()
            .iter()
            .map(|v| self.facts(v, k))
            .filter(|f| f.failing_records <= max_suppressed)
            .map(|f| f.metrics[&metric])
            .min_by(|a, b| a.total_cmp(b))
    }

    /// Checks a published table (the output CSV, parsed, in "mask" mode: one output row per record).
    ///
    /// - the output has the original header and one row per record, in order;
    /// - a suppressed record shows `*` in every quasi-identifier, any other record shows the label its
    ///   original value takes at `levels` according to the hierarchy rows;
    /// - every column that is not a quasi-identifier is unchanged;
    /// - the records not suppressed form classes (identical quasi-identifier tuples, counted with a
    ///   `HashMap` over the output cells) of at least `k` records;
    /// - at most `max_suppressed` records are suppressed, and exactly those in classes smaller than `k`
    ///   before suppression (the engine suppresses whole failing classes and nothing else).
    pub fn check_output(
        &self,
        levels: &[u8],
        suppressed: &[bool],
        output_header: &[String],
        output_rows: &[Vec<String>],
        k: u64,
        max_suppressed: u64,
    ) -> Result<(), String> {
        if output_header != self.header.as_slice() {
            return Err(format!(
                "output header {output_header:?} differs from {:?}",
                self.header
            ));
        }
        if output_rows.len() != self.rows.len() || suppressed.len() != self.rows.len() {
            return Err(format!(
                "{} output rows and {} suppression flags for {} records",
                output_rows.len(),
                suppressed.len(),
                self.rows.len()
            ));
        }
        let qi_of_column: HashMap<usize, usize> = self
            .qis
            .iter()
            .enumerate()
            .map(|(j, (c, _))| (*c, j))
            .collect();
        for (r, (original, out)) in self.rows.iter().zip(output_rows).enumerate() {
            if out.len() != original.len() {
                return Err(format!("output row {r} has {} fields", out.len()));
            }
            for (c, (value, cell)) in original.iter().zip(out).enumerate() {
                let expected = match qi_of_column.get(&c) {
                    Some(_) if suppressed[r] => "*",
                    Some(&j) => self.qis[j].1.label(value, levels[j] as usize),
                    None => value.as_str(),
                };
                if cell != expected {
                    return Err(format!(
                        "record {r}, column {:?}: output {cell:?}, expected {expected:?}",
                        self.header[c]
                    ));
                }
            }
        }
        let suppressed_count = suppressed.iter().filter(|&&s| s).count() as u64;
        if suppressed_count > max_suppressed {
            return Err(format!(
                "{suppressed_count} records suppressed, the budget is {max_suppressed}"
            ));
        }
        // classes of the published records, from the output cells
        let mut published: HashMap<Vec<&str>, u64> = HashMap::new();
        for (r, out) in output_rows.iter().enumerate() {
            if !suppressed[r] {
                let key: Vec<&str> = self.qis.iter().map(|(c, _)| out[*c].as_str()).collect();
                *published.entry(key).or_insert(0) += 1;
            }
        }
        for (r, out) in output_rows.iter().enumerate() {
            if suppressed[r] {
                continue;
            }
            let key: Vec<&str> = self.qis.iter().map(|(c, _)| out[*c].as_str()).collect();
            if published[&key] < k {
                return Err(format!(
                    "record {r} is published in a class of {} < k = {k} records",
                    published[&key]
                ));
            }
        }
        // suppression is exactly the records of classes smaller than k before suppression
        let mut before: HashMap<Vec<String>, u64> = HashMap::new();
        let keys: Vec<Vec<String>> = (0..self.rows.len())
            .map(|r| self.generalized_key(r, levels))
            .collect();
        for key in &keys {
            *before.entry(key.clone()).or_insert(0) += 1;
        }
        for (r, key) in keys.iter().enumerate() {
            let small = before[key] < k;
            if small != suppressed[r] {
                return Err(format!(
                    "record {r} is in a class of {} records before suppression (k = {k}) but suppressed = {}",
                    before[key], suppressed[r]
                ));
            }
        }
        Ok(())
    }
}

/// Parses CSV bytes written by the engine (header line first).
pub fn parse_csv(bytes: &[u8], delimiter: u8) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .from_reader(bytes);
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// `a` and `b` agree to a relative 1e-9 (absolute 1e-9 near zero).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}
