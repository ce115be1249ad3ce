//! Classification utility of a published table (the measure of Zakerzadeh et al. §5.3, and ARX's
//! utility analysis): how well classifiers trained on the anonymized records predict a class column of
//! held-out original records, next to the same classifiers trained on the original records.
//!
//! The records are split once, seeded (a ChaCha20 stream of the seed): 70 % train, 30 % test by default.
//! Learners: smartcore's CART decision tree (Gini, no depth limit, like Weka's J48 without pruning),
//! and a 5-nearest-neighbour vote (Euclidean, Weka's IBk with k = 5) whose exhaustive neighbour search
//! is written here for speed (see [`nearest_neighbour_votes`]). Every feature enters as a number: an original
//! value is its number when the column holds numbers only, else its rank in the column's natural order;
//! a published cell is the midpoint of the smallest and largest of the values it covers (the midpoint of
//! a range; a hierarchy label's covered leaves), so a suppressed cell is the middle of the domain (note
//! gap A13). Features are scaled to [0, 1] by the original column's bounds, so no feature dominates the
//! distances. With several fragments (vertical fragmentation), one classifier is trained per fragment and
//! the class whose summed probabilities over the fragments is highest wins (the paper's weighted vote).
//! Scores: accuracy and the weighted F-measure Σ_c (n_c / N) · F1_c over the test records' true classes.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use serde::Serialize;
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::tree::decision_tree_classifier::{
    DecisionTreeClassifier, DecisionTreeClassifierParameters,
};

use crate::core::data::Column;
use crate::core::measures::CellColumn;
use crate::domain::column_values::natural_ranks;

/// Neighbours of the k-NN classifier (the paper's setting).
pub const NEIGHBOURS: usize = 5;
/// Share of the records held out for testing unless the spec says otherwise.
pub const DEFAULT_TEST_SHARE: f64 = 0.3;

/// Each code's place on a number line: its number when every value of the column is a number, else its
/// natural rank.
pub fn positions(column: &Column) -> Vec<f64> {
    let numbers: Option<Vec<f64>> = column
        .dictionary
        .values()
        .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    numbers.unwrap_or_else(|| {
        natural_ranks(&column.dictionary)
            .into_iter()
            .map(f64::from)
            .collect()
    })
}

/// Each record's published cell as the midpoint of the values the cell covers (`positions` by code).
pub fn published_values(cells: &CellColumn<'_>, positions: &[f64]) -> Vec<f64> {
    let midpoints: Vec<f64> = cells
        .cells
        .iter()
        .map(|cell| {
            let (low, high) = cell.covers.iter().fold(
                (f64::INFINITY, f64::NEG_INFINITY),
                |(low, high), &code| {
                    let p = positions.get(code as usize).copied().unwrap_or(0.0);
                    (low.min(p), high.max(p))
                },
            );
            if low.is_finite() {
                (low + high) / 2.0
            } else {
                0.0
            }
        })
        .collect();
    cells
        .cell_of
        .iter()
        .map(|id| midpoints.get(id as usize).copied().unwrap_or(0.0))
        .collect()
}

/// What one published table gives a learner: some features (indices into the original features) as
/// numbers per record, and each record's class label (`None` for a record not published).
#[derive(Debug, Clone)]
pub struct TrainingTable {
    /// The original features this table holds.
    pub features: Vec<usize>,
    /// Per feature, the published value of every record.
    pub values: Vec<Vec<f64>>,
    /// Per record, its published class code (in the original class dictionary), `None` if not published.
    pub labels: Vec<Option<u32>>,
}

/// The held-out truth: every original feature as numbers, and every record's class code.
#[derive(Debug, Clone)]
pub struct OriginalTable<'a> {
    /// Per feature, the original value of every record.
    pub values: Vec<Vec<f64>>,
    /// Per record, its class code.
    pub labels: &'a [u32],
    /// Distinct class codes (codes are `0..classes`).
    pub classes: usize,
}

/// Accuracy and weighted F-measure of one classifier on the test records.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scores {
    /// Share of test records predicted right.
    pub accuracy: f64,
    /// Σ over classes of (test records of the class / test records) · F1 of the class.
    pub weighted_f: f64,
}

/// One learner trained on the anonymized and on the original records.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LearnerScores {
    /// Trained on the published (anonymized) training records.
    pub anonymized: Scores,
    /// Trained on the same records' original values.
    pub original: Scores,
}

/// The report's `classification` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassificationReport {
    /// The class column.
    pub class: String,
    /// The split's seed.
    pub seed: u64,
    /// Records trained on (published training records).
    pub train_records: u64,
    /// Records tested on.
    pub test_records: u64,
    /// Classifiers combined (one per fragment; 1 for a single table).
    pub tables: usize,
    /// The decision tree (CART, Gini).
    pub decision_tree: LearnerScores,
    /// The 5-nearest-neighbour classifier (Euclidean, features scaled to [0, 1]).
    pub nearest_neighbours: LearnerScores,
    /// How cells became numbers.
    pub encoding: &'static str,
}

/// Why the measure could not be computed (too few records or classes); the report then carries no
/// section and says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ClassificationSkipped(pub String);

/// The seeded split: `true` for test records.
pub fn split(records: usize, test_share: f64, seed: u64) -> Vec<bool> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..records).collect();
    for i in (1..records).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let tests = ((records as f64) * test_share).round() as usize;
    let mut test = vec![false; records];
    for &r in &order[..tests.min(records)] {
        test[r] = true;
    }
    test
}

/// Scales every value by the original feature's bounds to [0, 1].
fn scale(value: f64, bounds: (f64, f64)) -> f64 {
    let width = bounds.1 - bounds.0;
    if width > 0.0 {
        (value - bounds.0) / width
    } else {
        0.0
    }
}

fn matrix(rows: Vec<Vec<f64>>) -> Result<DenseMatrix<f64>, ClassificationSkipped> {
    DenseMatrix::from_2d_vec(&rows)
        .map_err(|e| ClassificationSkipped(format!("the feature matrix could not be built: {e}")))
}

/// Per test record and class, the summed probabilities of the classifiers trained on each table.
type Votes = Vec<Vec<f64>>;

/// Trains both learners on `tables` (or, with `original_training`, on the original values of the same
/// records and features) and returns their summed class probabilities on the test records.
fn votes(
    tables: &[TrainingTable],
    original: &OriginalTable<'_>,
    test: &[bool],
    bounds: &[(f64, f64)],
    original_training: bool,
) -> Result<(Votes, Votes), ClassificationSkipped> {
    use smartcore::linalg::basic::arrays::Array;
    let tests: Vec<usize> = (0..test.len()).filter(|&r| test[r]).collect();
    let mut tree_votes = vec![vec![0.0; original.classes]; tests.len()];
    let mut knn_votes = vec![vec![0.0; original.classes]; tests.len()];
    for table in tables {
        let train: Vec<usize> = (0..test.len())
            .filter(|&r| !test[r] && table.labels[r].is_some())
            .collect();
        if train.is_empty() {
            continue;
        }
        let source = |f: usize, position: usize| -> f64 {
            if original_training {
                original.values[table.features[f]][position]
            } else {
                table.values[f][position]
            }
        };
        let x_train: Vec<Vec<f64>> = train
            .iter()
            .map(|&r| {
                (0..table.features.len())
                    .map(|f| scale(source(f, r), bounds[table.features[f]]))
                    .collect()
            })
            .collect();
        let y_train: Vec<u32> = train
            .iter()
            .map(|&r| {
                if original_training {
                    original.labels[r]
                } else {
                    table.labels[r].unwrap_or(0)
                }
            })
            .collect();
        let x_test: Vec<Vec<f64>> = tests
            .iter()
            .map(|&r| {
                table
                    .features
                    .iter()
                    .map(|&f| scale(original.values[f][r], bounds[f]))
                    .collect()
            })
            .collect();
        let x_train_rows = x_train.clone();
        let x_train = matrix(x_train)?;
        let width = table.features.len();
        let train_rows = Rows::new(&x_train_rows, width);
        let test_rows = Rows::new(&x_test, width);
        let x_test = matrix(x_test)?;
        let failed = |what: &str, e: smartcore::error::Failed| {
            ClassificationSkipped(format!("the {what} could not be trained: {e}"))
        };
        let parameters = DecisionTreeClassifierParameters {
            seed: Some(0),
            ..DecisionTreeClassifierParameters::default()
        };
        let tree = DecisionTreeClassifier::fit(&x_train, &y_train, parameters)
            .map_err(|e| failed("decision tree", e))?;
        let probabilities = tree
            .predict_proba(&x_test)
            .map_err(|e| failed("decision tree", e))?;
        let labels = sorted_labels(&y_train);
        for (i, row) in tree_votes.iter_mut().enumerate() {
            for (j, &label) in labels.iter().enumerate() {
                row[label as usize] += *Array::get(&probabilities, (i, j));
            }
        }
        let neighbours =
            nearest_neighbour_votes(&train_rows, &y_train, &test_rows, original.classes);
        for (row, votes) in knn_votes.iter_mut().zip(neighbours) {
            for (total, vote) in row.iter_mut().zip(votes) {
                *total += vote;
            }
        }
    }
    Ok((tree_votes, knn_votes))
}

/// Records' features as one flat `f32` array (`width` per record).
struct Rows {
    width: usize,
    values: Vec<f32>,
}

impl Rows {
    fn new(rows: &[Vec<f64>], width: usize) -> Self {
        Self {
            width,
            values: rows.iter().flatten().map(|&v| v as f32).collect(),
        }
    }

    fn len(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.values[i * self.width..(i + 1) * self.width]
    }
}

/// The 5-nearest-neighbour classifier: per test record, the share of each class among its
/// [`NEIGHBOURS`] nearest training records (squared Euclidean distance; ties to the earlier training
/// record). The search is exhaustive, test records on every core: smartcore's k-NN classifier answers
/// the same but its cover tree takes seconds at 20 dimensions and 20,000 records.
fn nearest_neighbour_votes(
    train: &Rows,
    labels: &[u32],
    test: &Rows,
    classes: usize,
) -> Vec<Vec<f64>> {
    let k = NEIGHBOURS.min(train.len());
    (0..test.len())
        .into_par_iter()
        .map(|t| {
            let query = test.row(t);
            // the k best (distance, index), sorted by distance
            let mut best: Vec<(f32, usize)> = Vec::with_capacity(k + 1);
            for i in 0..train.len() {
                let distance = squared_distance(train.row(i), query);
                if best.len() == k && best.last().is_some_and(|&(d, _)| distance >= d) {
                    continue;
                }
                let at = best.partition_point(|&(d, _)| d <= distance);
                best.insert(at, (distance, i));
                best.truncate(k);
            }
            let mut votes = vec![0.0; classes];
            for &(_, i) in &best {
                if let Some(v) = votes.get_mut(labels[i] as usize) {
                    *v += 1.0 / k as f64;
                }
            }
            votes
        })
        .collect()
}

/// Σ (a − b)² in eight independent lanes, so that the compiler can use vector instructions.
fn squared_distance(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut sums = [0f32; LANES];
    let chunks = a.len() / LANES;
    for c in 0..chunks {
        let (x, y) = (
            &a[c * LANES..(c + 1) * LANES],
            &b[c * LANES..(c + 1) * LANES],
        );
        for l in 0..LANES {
            let d = x[l] - y[l];
            sums[l] += d * d;
        }
    }
    let mut total: f32 = sums.iter().sum();
    for (x, y) in a[chunks * LANES..].iter().zip(&b[chunks * LANES..]) {
        total += (x - y) * (x - y);
    }
    total
}

/// The distinct labels in increasing order (the column order of smartcore's probabilities).
fn sorted_labels(labels: &[u32]) -> Vec<u32> {
    let mut distinct = labels.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
}

/// Accuracy and weighted F of the votes' winners (ties to the smallest class code) against `truth`.
pub fn scores(votes: &[Vec<f64>], truth: &[u32], classes: usize) -> Scores {
    let predicted: Vec<u32> = votes
        .iter()
        .map(|row| {
            let mut best = 0;
            for (c, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = c;
                }
            }
            best as u32
        })
        .collect();
    let total = truth.len();
    if total == 0 {
        return Scores {
            accuracy: 0.0,
            weighted_f: 0.0,
        };
    }
    let mut hits = vec![0u64; classes];
    let mut predicted_as = vec![0u64; classes];
    let mut actual = vec![0u64; classes];
    for (&p, &t) in predicted.iter().zip(truth) {
        predicted_as[p as usize] += 1;
        actual[t as usize] += 1;
        if p == t {
            hits[t as usize] += 1;
        }
    }
    let correct: u64 = hits.iter().sum();
    let mut weighted_f = 0.0;
    for c in 0..classes {
        if actual[c] == 0 {
            continue;
        }
        let precision = if predicted_as[c] == 0 {
            0.0
        } else {
            hits[c] as f64 / predicted_as[c] as f64
        };
        let recall = hits[c] as f64 / actual[c] as f64;
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        weighted_f += actual[c] as f64 / total as f64 * f1;
    }
    Scores {
        accuracy: correct as f64 / total as f64,
        weighted_f,
    }
}

/// The classification utility of the published `tables` (one, or one per fragment) against the
/// `original` records, split by `test` ([`split`]).
pub fn classification_utility(
    class: &str,
    seed: u64,
    tables: &[TrainingTable],
    original: &OriginalTable<'_>,
    test: &[bool],
) -> Result<ClassificationReport, ClassificationSkipped> {
    let tests = test.iter().filter(|&&t| t).count();
    let trains = (0..test.len())
        .filter(|&r| !test[r] && tables.iter().any(|t| t.labels[r].is_some()))
        .count();
    if tests == 0 || trains < NEIGHBOURS {
        return Err(ClassificationSkipped(format!(
            "{trains} training and {tests} test records are too few to train and test classifiers"
        )));
    }
    let bounds: Vec<(f64, f64)> = original
        .values
        .iter()
        .map(|v| {
            v.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                    (l.min(x), h.max(x))
                })
        })
        .collect();
    let truth: Vec<u32> = (0..test.len())
        .filter(|&r| test[r])
        .map(|r| original.labels[r])
        .collect();
    let (tree, knn) = votes(tables, original, test, &bounds, false)?;
    let (tree_original, knn_original) = votes(tables, original, test, &bounds, true)?;
    Ok(ClassificationReport {
        class: class.to_string(),
        seed,
        train_records: trains as u64,
        test_records: tests as u64,
        tables: tables.len(),
        decision_tree: LearnerScores {
            anonymized: scores(&tree, &truth, original.classes),
            original: scores(&tree_original, &truth, original.classes),
        },
        nearest_neighbours: LearnerScores {
            anonymized: scores(&knn, &truth, original.classes),
            original: scores(&knn_original, &truth, original.classes),
        },
        encoding: "midpoint",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_f_by_hand() {
        // truth a a a b; predicted a a b b: F1(a) = 2·1·(2/3)/(1 + 2/3) = 0.8, F1(b) = 2·0.5·1/1.5 = 2/3
        let votes = vec![
            vec![1.0, 0.0],
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![0.0, 1.0],
        ];
        let s = scores(&votes, &[0, 0, 0, 1], 2);
        assert!((s.accuracy - 0.75).abs() < 1e-12);
        assert!((s.weighted_f - (0.75 * 0.8 + 0.25 * 2.0 / 3.0)).abs() < 1e-12);
    }

    #[test]
    fn the_split_is_seeded_and_sized() {
        let a = split(1000, 0.3, 7);
        assert_eq!(a.iter().filter(|&&t| t).count(), 300);
        assert_eq!(a, split(1000, 0.3, 7));
        assert_ne!(a, split(1000, 0.3, 8));
    }

    /// A class that is a threshold of the first feature: trained on the exact values both learners
    /// are nearly perfect; trained on values generalized to two halves, the tree still is (the cut lies
    /// on the halves' border), and a feature generalized away entirely leaves the majority guess.
    #[test]
    fn learners_see_what_generalization_keeps() {
        let n = 400;
        let feature: Vec<f64> = (0..n).map(|r| ((r * 37) % 100) as f64).collect();
        let noise: Vec<f64> = (0..n).map(|r| ((r * 11) % 7) as f64).collect();
        let labels: Vec<u32> = feature.iter().map(|&x| u32::from(x >= 50.0)).collect();
        let original = OriginalTable {
            values: vec![feature.clone(), noise.clone()],
            labels: &labels,
            classes: 2,
        };
        let test = split(n, 0.3, 1);
        let halves: Vec<f64> = feature
            .iter()
            .map(|&x| if x < 50.0 { 24.5 } else { 74.5 })
            .collect();
        let published = |values: Vec<f64>| TrainingTable {
            features: vec![0, 1],
            values: vec![values, noise.clone()],
            labels: labels.iter().map(|&l| Some(l)).collect(),
        };
        let report =
            classification_utility("c", 1, &[published(halves)], &original, &test).unwrap();
        assert!(report.decision_tree.original.accuracy > 0.97, "{report:?}");
        assert!(
            report.decision_tree.anonymized.accuracy > 0.97,
            "{report:?}"
        );
        assert_eq!(report.test_records, 120);
        let flat = vec![49.5; n];
        let report = classification_utility("c", 1, &[published(flat)], &original, &test).unwrap();
        assert!(report.decision_tree.anonymized.accuracy < 0.8, "{report:?}");
    }
}
