//! MDAV, Maximum Distance to Average Vector (Domingo-Ferrer & Mateo-Sanz 2002, "Practical data-oriented
//! microaggregation for statistical disclosure control", IEEE TKDE 14(1); the fixed-size heuristic as
//! sdcMicro implements it): microaggregation of the numeric quasi-identifiers into groups of at least k
//! records, each record then published with its group's centroid.
//!
//! On the standardized numeric attributes (z-scores; an attribute of one value is left out of the
//! distance), while at least 3k records remain: take their centroid, the record r farthest from it, the
//! record s farthest from r; r with its k − 1 nearest records forms a group, then s with its k − 1
//! nearest among the rest. With 2k to 3k − 1 records left, the record farthest from their centroid and its
//! k − 1 nearest form a group and the rest another; with fewer, the rest is one group. Ties go to the
//! lowest record index, so a table always gives the same groups.
//!
//! Categorical quasi-identifiers are not in the distance: each group publishes their lowest common
//! hierarchy label ([`Recoding::from_partition`]). The report gives the within-group sum of squares
//! against the total (SSE/SST, on the standardized attributes), the usual measure of microaggregation's
//! information loss. The search is quadratic in the records (n²/k distance evaluations), as MDAV is.

use rayon::prelude::*;
use serde::Serialize;

use super::{Domain, LocalInput, Recoding};
use crate::core::control::Control;
use crate::core::error::CoreError;

/// MDAV's parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MdavOptions {
    /// The smallest group.
    pub k: usize,
}

/// What MDAV reports (aggregates only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MdavReport {
    /// Groups formed.
    pub groups: u64,
    /// The smallest group.
    pub smallest_group: u64,
    /// The largest group (below 2k).
    pub largest_group: u64,
    /// Numeric quasi-identifiers in the distance.
    pub numeric_attributes: u64,
    /// Within-group sum of squares of the standardized attributes.
    pub sse: f64,
    /// Total sum of squares of the standardized attributes.
    pub sst: f64,
    /// SSE / SST (0 when SST is 0): the share of the variance the centroids remove.
    pub sse_sst: f64,
}

/// MDAV's result: the groups (categorical cells as lowest common labels, numeric cells as ranges) and
/// every group's centroid per numeric quasi-identifier.
#[derive(Debug, Clone)]
pub struct MdavResult {
    /// The groups and their generalized cells.
    pub recoding: Recoding,
    /// `centroids[j][g]`: group g's mean of quasi-identifier j (`None` for a categorical one).
    pub centroids: Vec<Option<Vec<f64>>>,
    /// The figures.
    pub report: MdavReport,
}

/// Row-major standardized values of the numeric attributes.
struct Points {
    dims: usize,
    values: Vec<f64>,
}

impl Points {
    fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.dims..(i + 1) * self.dims]
    }

    fn distance(&self, i: usize, to: &[f64]) -> f64 {
        self.row(i)
            .iter()
            .zip(to)
            .map(|(a, b)| (a - b) * (a - b))
            .sum()
    }

    fn centroid(&self, rows: &[u32]) -> Vec<f64> {
        let mut sum = vec![0.0; self.dims];
        for &i in rows {
            self.add(&mut sum, i, 1.0);
        }
        let n = rows.len().max(1) as f64;
        sum.iter().map(|s| s / n).collect()
    }

    /// Adds `sign` times record `i` to `sum`.
    fn add(&self, sum: &mut [f64], i: u32, sign: f64) {
        for (s, v) in sum.iter_mut().zip(self.row(i as usize)) {
            *s += sign * v;
        }
    }

    /// The record of `rows` farthest from `to` (the lowest index among ties).
    fn farthest(&self, rows: &[u32], to: &[f64]) -> u32 {
        farthest_of(rows.par_iter().map(|&i| (self.distance(i as usize, to), i)))
    }

    /// One pass over `rows`: the `k` records nearest to record `center` (ties by index) and the
    /// farthest one (the lowest index among ties), each with its position in `rows`.
    fn around(&self, rows: &[u32], center: u32, k: usize) -> Around {
        let to = self.row(center as usize).to_vec();
        rows.par_iter()
            .enumerate()
            .fold(
                || Around::new(k),
                |mut around, (at, &index)| {
                    around.push(Keyed {
                        distance: self.distance(index as usize, &to),
                        index,
                        at: at as u32,
                    });
                    around
                },
            )
            .reduce(|| Around::new(k), Around::merge)
    }
}

/// A record with its distance and its position in the remaining records.
#[derive(Debug, Clone, Copy)]
struct Keyed {
    distance: f64,
    index: u32,
    at: u32,
}

impl Keyed {
    /// Nearer, ties by index.
    fn nearer(&self, other: &Keyed) -> bool {
        self.distance < other.distance
            || (self.distance == other.distance && self.index < other.index)
    }

    /// Farther, ties to the lower index.
    fn farther(&self, other: &Keyed) -> bool {
        self.distance > other.distance
            || (self.distance == other.distance && self.index < other.index)
    }
}

/// The k nearest records seen (nearest first) and the farthest.
struct Around {
    k: usize,
    nearest: Vec<Keyed>,
    farthest: Option<Keyed>,
}

impl Around {
    fn new(k: usize) -> Self {
        Self {
            k,
            nearest: Vec::with_capacity(k + 1),
            farthest: None,
        }
    }

    fn push(&mut self, x: Keyed) {
        if self.farthest.is_none_or(|f| x.farther(&f)) {
            self.farthest = Some(x);
        }
        if self.nearest.len() < self.k || self.nearest.last().is_some_and(|l| x.nearer(l)) {
            let at = self.nearest.partition_point(|y| y.nearer(&x));
            self.nearest.insert(at, x);
            self.nearest.truncate(self.k);
        }
    }

    fn merge(mut self, other: Around) -> Around {
        for x in other.nearest {
            self.push(x);
        }
        if let Some(f) = other.farthest {
            if self.farthest.is_none_or(|g| f.farther(&g)) {
                self.farthest = Some(f);
            }
        }
        self
    }
}

/// The farthest of keyed records (the lowest index among ties; `u32::MAX` when there is none).
fn farthest_of(keyed: impl ParallelIterator<Item = (f64, u32)>) -> u32 {
    keyed
        .reduce(
            || (f64::NEG_INFINITY, u32::MAX),
            |a, b| {
                if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            },
        )
        .1
}

/// The standardized numeric attributes of `input` and, per quasi-identifier, its numbers by code.
fn points(input: &LocalInput<'_>) -> (Points, Vec<Option<Vec<f64>>>) {
    let numbers: Vec<Option<Vec<f64>>> = input
        .quasi_identifiers
        .iter()
        .map(|a| match a.domain {
            Domain::Ordered(order) if order.is_numeric() => Some(
                (0..order.len() as u32)
                    .map(|code| order.number(code).unwrap_or(0.0))
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    let mut columns: Vec<Vec<f64>> = Vec::new();
    for (a, numbers) in input.quasi_identifiers.iter().zip(&numbers) {
        let Some(numbers) = numbers else { continue };
        let values: Vec<f64> = a.codes.iter().map(|&c| numbers[c as usize]).collect();
        let n = values.len().max(1) as f64;
        let mean = values.iter().sum::<f64>() / n;
        let sd = (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
        if sd > 0.0 && sd.is_finite() {
            columns.push(values.iter().map(|v| (v - mean) / sd).collect());
        }
    }
    let dims = columns.len();
    let mut values = vec![0.0; input.rows * dims];
    for (j, column) in columns.iter().enumerate() {
        for (i, v) in column.iter().enumerate() {
            values[i * dims + j] = *v;
        }
    }
    (Points { dims, values }, numbers)
}

/// Runs MDAV on `input` (at least one numeric quasi-identifier; `k` at most the records).
pub fn mdav(
    input: &LocalInput<'_>,
    options: &MdavOptions,
    control: &dyn Control,
) -> Result<MdavResult, CoreError> {
    let k = options.k.max(1);
    if k > input.rows {
        return Err(CoreError::TooFewRecords {
            model: format!("MDAV with groups of {k}"),
            needed: k as u64,
            rows: input.rows as u64,
        });
    }
    let (points, numbers) = points(input);
    if numbers.iter().all(Option::is_none) {
        return Err(CoreError::InvalidParameter {
            name: "algorithm",
            problem:
                "MDAV aggregates numeric quasi-identifiers: declare at least one with data_type \
                      numeric"
                    .into(),
        });
    }
    let mut remaining: Vec<u32> = (0..input.rows as u32).collect();
    let mut sum = vec![0.0; points.dims];
    for &i in &remaining {
        points.add(&mut sum, i, 1.0);
    }
    let mut groups: Vec<Vec<u32>> = Vec::new();
    // the k nearest around a record form a group, taken out of the remaining records and their sum
    let mut take = |around: &Around, remaining: &mut Vec<u32>, sum: &mut [f64]| {
        let mut group: Vec<u32> = around.nearest.iter().map(|x| x.index).collect();
        let mut places: Vec<u32> = around.nearest.iter().map(|x| x.at).collect();
        places.sort_unstable_by(|a, b| b.cmp(a));
        for at in places {
            remaining.swap_remove(at as usize);
        }
        group.sort_unstable();
        for &i in &group {
            points.add(sum, i, -1.0);
        }
        groups.push(group);
    };
    // three passes per round: the farthest from the centroid (r); around r, its group and the
    // farthest from it (s); around s, its group
    while remaining.len() >= 3 * k {
        if control.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        let m = remaining.len() as f64;
        let centroid: Vec<f64> = sum.iter().map(|s| s / m).collect();
        let r = points.farthest(&remaining, &centroid);
        let around_r = points.around(&remaining, r, k);
        let mut s = around_r.farthest.map_or(r, |f| f.index);
        let s_in_group = around_r.nearest.iter().any(|x| x.index == s);
        take(&around_r, &mut remaining, &mut sum);
        if s_in_group {
            // every record equally far from r: the farthest of the others
            s = points.farthest(&remaining, points.row(r as usize));
        }
        let around_s = points.around(&remaining, s, k);
        take(&around_s, &mut remaining, &mut sum);
    }
    if remaining.len() >= 2 * k {
        let centroid = points.centroid(&remaining);
        let r = points.farthest(&remaining, &centroid);
        let around_r = points.around(&remaining, r, k);
        take(&around_r, &mut remaining, &mut sum);
    }
    if !remaining.is_empty() {
        remaining.sort_unstable();
        groups.push(remaining);
    }
    let mut group_of = vec![0u32; input.rows];
    for (g, rows) in groups.iter().enumerate() {
        for &i in rows {
            group_of[i as usize] = g as u32;
        }
    }
    let centroids = numbers
        .iter()
        .zip(&input.quasi_identifiers)
        .map(|(numbers, a)| {
            numbers.as_ref().map(|numbers| {
                groups
                    .iter()
                    .map(|rows| {
                        let sum: f64 = rows
                            .iter()
                            .map(|&i| numbers[a.codes[i as usize] as usize])
                            .sum();
                        sum / rows.len() as f64
                    })
                    .collect()
            })
        })
        .collect();
    let report = report(&points, &groups, input.rows);
    let recoding = Recoding::from_partition(input, group_of, groups.len());
    Ok(MdavResult {
        recoding,
        centroids,
        report,
    })
}

/// The group sizes and SSE/SST of `groups`.
fn report(points: &Points, groups: &[Vec<u32>], rows: usize) -> MdavReport {
    let all: Vec<u32> = (0..rows as u32).collect();
    let mean = points.centroid(&all);
    let sst: f64 = (0..rows).map(|i| points.distance(i, &mean)).sum();
    let sse: f64 = groups
        .par_iter()
        .map(|rows| {
            let c = points.centroid(rows);
            rows.iter()
                .map(|&i| points.distance(i as usize, &c))
                .sum::<f64>()
        })
        .sum();
    let sizes = groups.iter().map(|g| g.len() as u64);
    MdavReport {
        groups: groups.len() as u64,
        smallest_group: sizes.clone().min().unwrap_or(0),
        largest_group: sizes.max().unwrap_or(0),
        numeric_attributes: points.dims as u64,
        sse,
        sst,
        sse_sst: if sst > 0.0 { sse / sst } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::core::control::NoControl;
    use crate::core::local::{LocalAttribute, OrderedDomain};

    /// One numeric quasi-identifier whose codes are the positions of `values` in their distinct list.
    fn run(values: &[f64], k: usize) -> MdavResult {
        let mut distinct: Vec<f64> = values.to_vec();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        let codes: Vec<u32> = values
            .iter()
            .map(|v| distinct.iter().position(|d| d == v).unwrap_or(0) as u32)
            .collect();
        let order = OrderedDomain::numeric(distinct.clone());
        let input = LocalInput {
            rows: values.len(),
            quasi_identifiers: vec![LocalAttribute {
                name: "x",
                codes: &codes,
                distinct: distinct.len(),
                domain: Domain::Ordered(&order),
            }],
            sensitive: Vec::new(),
        };
        mdav(&input, &MdavOptions { k }, &NoControl).unwrap()
    }

    /// The paper's procedure by hand on nine values, k = 3: the centroid is 11.33, the farthest record
    /// 22 (10.67 away, against 10.33 for 1); 22 takes 21 and 20; the farthest from 22 is 1, which
    /// takes 2 and 3; the three left (fewer than 2k) form the last group. SSE = 3 × 2 = 6 and
    /// SST = 1704 − 9 × (102/9)² = 548 (the ratio is the same on standardized values).
    #[test]
    fn groups_the_farthest_records_with_their_nearest_as_the_paper_does() {
        let values = [10.0, 1.0, 21.0, 2.0, 11.0, 22.0, 3.0, 12.0, 20.0];
        let result = run(&values, 3);
        let groups = result.recoding.group_of();
        let group_of_value = |v: f64| groups[values.iter().position(|&x| x == v).unwrap()];
        assert_eq!(result.report.groups, 3);
        for triple in [[1.0, 2.0, 3.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0]] {
            assert!(triple
                .iter()
                .all(|&v| group_of_value(v) == group_of_value(triple[0])));
        }
        // the first group formed is 22's, then 1's, then the rest
        assert_eq!(group_of_value(22.0), 0);
        assert_eq!(group_of_value(1.0), 1);
        let centroids = result.centroids[0].as_ref().unwrap();
        assert_eq!(centroids, &vec![21.0, 2.0, 11.0]);
        assert!((result.report.sse_sst - 6.0 / 548.0).abs() < 1e-12);
        assert_eq!(result.report.smallest_group, 3);
    }

    #[test]
    fn refuses_a_table_without_numeric_quasi_identifiers() {
        let input = LocalInput {
            rows: 3,
            quasi_identifiers: Vec::new(),
            sensitive: Vec::new(),
        };
        let e = mdav(&input, &MdavOptions { k: 2 }, &NoControl).unwrap_err();
        assert!(matches!(e, CoreError::InvalidParameter { .. }), "{e}");
    }

    /// MDAV as the paper states it, one record at a time and the centroid recomputed every round, on
    /// one attribute (distances compare the same on raw and standardized values).
    fn reference(values: &[f64], k: usize) -> Vec<Vec<u32>> {
        let d = |i: u32, to: f64| (values[i as usize] - to).powi(2);
        let farthest = |rows: &[u32], to: f64| -> u32 {
            let mut best = rows[0];
            for &i in rows {
                if d(i, to) > d(best, to) {
                    best = i;
                }
            }
            best
        };
        let nearest = |rows: &mut Vec<u32>, center: u32| -> Vec<u32> {
            let to = values[center as usize];
            let mut sorted = rows.clone();
            sorted.sort_by(|&a, &b| d(a, to).total_cmp(&d(b, to)).then(a.cmp(&b)));
            let mut group: Vec<u32> = sorted.into_iter().take(k).collect();
            group.sort_unstable();
            rows.retain(|i| !group.contains(i));
            group
        };
        let mean = |rows: &[u32]| {
            rows.iter().map(|&i| values[i as usize]).sum::<f64>() / rows.len() as f64
        };
        let mut rows: Vec<u32> = (0..values.len() as u32).collect();
        let mut groups = Vec::new();
        while rows.len() >= 3 * k {
            let r = farthest(&rows, mean(&rows));
            groups.push(nearest(&mut rows, r));
            let s = farthest(&rows, values[r as usize]);
            groups.push(nearest(&mut rows, s));
        }
        if rows.len() >= 2 * k {
            let r = farthest(&rows, mean(&rows));
            groups.push(nearest(&mut rows, r));
        }
        if !rows.is_empty() {
            groups.push(rows);
        }
        groups
    }

    proptest! {
        /// On values without ties, the groups are the reference's, in the same order (k from 2: two
        /// records are always equally far from their mean, a tie the standardized distances may break
        /// either way).
        #[test]
        fn groups_are_the_papers(
            values in proptest::collection::vec(0.0f64..1000.0, 1..90),
            k in 2usize..6,
        ) {
            prop_assume!(k <= values.len());
            let result = run(&values, k);
            let mut groups: Vec<Vec<u32>> = vec![Vec::new(); result.report.groups as usize];
            for (i, &g) in result.recoding.group_of().iter().enumerate() {
                groups[g as usize].push(i as u32);
            }
            prop_assert_eq!(groups, reference(&values, k));
        }

        /// Every record is in one group, every group holds k to 2k − 1 records, and the centroids are
        /// the groups' means.
        #[test]
        fn groups_hold_k_to_2k_minus_1_records_and_centroids_are_means(
            values in proptest::collection::vec(0u8..20, 1..80),
            k in 1usize..7,
        ) {
            let values: Vec<f64> = values.into_iter().map(f64::from).collect();
            prop_assume!(k <= values.len());
            let result = run(&values, k);
            let groups = result.report.groups as usize;
            let mut sizes = vec![0usize; groups];
            let mut sums = vec![0.0; groups];
            for (&g, &v) in result.recoding.group_of().iter().zip(&values) {
                sizes[g as usize] += 1;
                sums[g as usize] += v;
            }
            prop_assert!(sizes.iter().all(|&s| s >= k && s < 2 * k.max(1) || (k == 1 && s == 1)), "{sizes:?}");
            let centroids = result.centroids[0].as_ref().unwrap();
            for g in 0..groups {
                prop_assert!((centroids[g] - sums[g] / sizes[g] as f64).abs() < 1e-9);
            }
            prop_assert!(result.report.sse_sst >= 0.0 && result.report.sse_sst <= 1.0 + 1e-12);
        }
    }
}
