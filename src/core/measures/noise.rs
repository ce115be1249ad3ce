//! Noise scanning, **experimental** (Hsu 2008, §4.5 and Fig. 4.5-1;
//! `notes/hsu-2008-sensitive-attribute-protection.md` §3.5 and §6.5): how much unwanted sensitive values
//! a published class returns to a query that, on the original table, would have selected only part of it.
//!
//! The thesis defines the noise of a class (a q*-block) B as `N = Σ_τ Pr(τ) · N_τ` over the subsets τ of
//! B a query on the original table could select, with `N_τ` the EMD between τ's sensitive distribution and
//! B's, and gives no algorithm (2^|B| subsets, and Pr(τ) is unknown). Following the note's resolution,
//! this measure restricts τ to one-attribute interval queries, weighted uniformly: on every
//! quasi-identifier, every prefix `A ≤ c` and suffix `A ≥ c` of B's records (in the value order the
//! query workload uses: numbers numerically, other values by text) that is neither empty nor all of B.
//! The queries depend on the original values and the published classes only, not on how cells are
//! written.
//!
//! `N_τ` is the total variation `½ Σ_s |D_τ(s) − D_B(s)|` (the EMD under the equal ground distance). A
//! class's noise is the mean over its queries (0 when no query splits it: its records share every
//! quasi-identifier value); the table's is the record-weighted mean over classes. With every sensitive
//! value distinct, a query selecting m of n records has `N_τ = 1 − m/n`; Fig. 4.5-1's query `A1 ≤ 3`
//! selects 4 of 6 and has 1/3.
//!
//! Cost: per class and quasi-identifier a sort of its records (`O(n log n)` overall) and one pass over
//! the class's sensitive values per threshold. A class with more than [`MAX_THRESHOLDS`] distinct
//! values on an ordered quasi-identifier is scanned at that many thresholds, evenly spaced, and the
//! result says it was sampled.

use rayon::prelude::*;
use serde::Serialize;

use super::cells::CellColumn;
use super::classes::Classes;
use super::variance::SensitiveColumn;

/// Most thresholds scanned per class and ordered quasi-identifier.
pub const MAX_THRESHOLDS: usize = 256;

/// The noise of one sensitive attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseScan {
    /// The sensitive attribute.
    pub attribute: String,
    /// Record-weighted mean of the classes' noise, in [0, 1].
    pub mean: f64,
    /// The largest noise of a class.
    pub max: f64,
    /// Classes with some noise.
    pub noisy_classes: u64,
    /// Queries scanned, over all classes.
    pub queries: u64,
    /// Whether some class was scanned at evenly spaced thresholds only.
    pub sampled: bool,
}

/// The noise of one class.
#[derive(Debug, Clone, Copy, Default)]
struct ClassNoise {
    total: f64,
    queries: u64,
    sampled: bool,
}

/// Scratch of one class scan.
#[derive(Default)]
struct Scan {
    /// `(key, local sensitive index)` of the class's records.
    items: Vec<(u32, u32)>,
    /// The class's sensitive histogram.
    histogram: Vec<(u32, u32)>,
    /// Counts of the current query per local sensitive index.
    counts: Vec<u32>,
    /// The class's sensitive codes, sorted.
    sorted: Vec<u32>,
    /// The local sensitive index of each of the class's records, in the class's order.
    locals: Vec<u32>,
    /// Query boundaries (positions in `items`).
    boundaries: Vec<usize>,
}

/// Records per block of classes: a block's sensitive codes and quasi-identifier keys are copied out in
/// tight loops (many loads in flight at once) before its classes are scanned from those copies.
const BLOCK_RECORDS: usize = 1 << 14;

/// The noise of every sensitive attribute in the published classes `published` of `columns`;
/// `ranks[j][code]` orders quasi-identifier j's values (`None`: by code).
pub fn noise_scan(
    columns: &[CellColumn<'_>],
    ranks: Option<&[Vec<u32>]>,
    published: &Classes,
    sensitive: &[SensitiveColumn<'_>],
) -> Vec<NoiseScan> {
    noise_scan_in_blocks(columns, ranks, published, sensitive, BLOCK_RECORDS)
}

/// [`noise_scan`] with blocks of about `block_records` records (tests make them small).
fn noise_scan_in_blocks(
    columns: &[CellColumn<'_>],
    ranks: Option<&[Vec<u32>]>,
    published: &Classes,
    sensitive: &[SensitiveColumn<'_>],
    block_records: usize,
) -> Vec<NoiseScan> {
    let rows = published.class_of.len();
    let bounds = published.starts();
    let members = published.members(&bounds);
    let starts: Vec<usize> = bounds.iter().map(|&s| s as usize).collect();
    let blocks = class_blocks(&starts, block_records);
    let orders: Vec<Option<&[u32]>> = (0..columns.len())
        .map(|j| {
            ranks
                .and_then(|r| r.get(j))
                .filter(|r| !r.is_empty())
                .map(Vec::as_slice)
        })
        .collect();
    sensitive
        .iter()
        .map(|s| {
            let noise: Vec<ClassNoise> = blocks
                .par_windows(2)
                .map_init(Block::default, |block, w| {
                    let classes = w[0]..w[1];
                    block.scan(
                        columns,
                        &orders,
                        s.codes,
                        &members,
                        &starts,
                        classes,
                        block_records,
                    )
                })
                .flatten_iter()
                .collect();
            let mut weighted = 0.0;
            let mut out = NoiseScan {
                attribute: s.name.to_string(),
                mean: 0.0,
                max: 0.0,
                noisy_classes: 0,
                queries: 0,
                sampled: false,
            };
            for (class, n) in noise.iter().enumerate() {
                let value = if n.queries == 0 {
                    0.0
                } else {
                    n.total / n.queries as f64
                };
                weighted += value * (starts[class + 1] - starts[class]) as f64;
                out.max = out.max.max(value);
                out.noisy_classes += u64::from(value > 0.0);
                out.queries += n.queries;
                out.sampled |= n.sampled;
            }
            if rows > 0 {
                out.mean = weighted / rows as f64;
            }
            out
        })
        .collect()
}

/// The first class of each block of consecutive classes, then the number of classes: block `b` is
/// classes `blocks[b]..blocks[b + 1]`. A block closes once it holds at least `records` records, and a
/// class of more than `records` records is a block of its own (scanned from the table, not copied).
fn class_blocks(starts: &[usize], records: usize) -> Vec<usize> {
    let classes = starts.len().saturating_sub(1);
    let mut blocks = vec![0];
    for class in 1..classes {
        let open = starts[class] - starts[*blocks.last().unwrap_or(&0)];
        let large = starts[class + 1] - starts[class] > records;
        if open >= records || large {
            blocks.push(class);
        }
    }
    if classes > 0 {
        blocks.push(classes);
    }
    blocks
}

/// A block's copies and a class scan's scratch, one per thread.
#[derive(Default)]
struct Block {
    /// The block's sensitive codes, in class order.
    codes: Vec<u32>,
    /// The block's keys (ranks, or codes), column by column, in class order.
    keys: Vec<Vec<u32>>,
    scan: Scan,
}

impl Block {
    /// The noise of classes `classes` (records `members[starts[c]..starts[c + 1]]` each). A block of one
    /// class larger than `records` reads its keys from the table directly, so that no copy of its
    /// quasi-identifier columns grows with the class.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &mut self,
        columns: &[CellColumn<'_>],
        orders: &[Option<&[u32]>],
        codes: &[u32],
        members: &[u32],
        starts: &[usize],
        classes: std::ops::Range<usize>,
        records: usize,
    ) -> Vec<ClassNoise> {
        let first = starts[classes.start];
        let rows = &members[first..starts[classes.end]];
        let key = |j: usize, r: u32| {
            let code = columns[j].codes[r as usize];
            orders[j].map_or(code, |order| order[code as usize])
        };
        self.codes.clear();
        self.codes.extend(rows.iter().map(|&r| codes[r as usize]));
        if classes.len() == 1 && rows.len() > records {
            let noise = self
                .scan
                .class(&self.codes, columns.len(), |j, i| key(j, rows[i]));
            return vec![noise];
        }
        self.keys.resize_with(columns.len(), Vec::new);
        for (j, keys) in self.keys.iter_mut().enumerate() {
            keys.clear();
            keys.extend(rows.iter().map(|&r| key(j, r)));
        }
        classes
            .map(|class| {
                let at = starts[class] - first..starts[class + 1] - first;
                let keys = &self.keys;
                let offset = at.start;
                self.scan
                    .class(&self.codes[at], columns.len(), |j, i| keys[j][offset + i])
            })
            .collect()
    }
}

impl Scan {
    /// The noise of a class of records with sensitive codes `codes`; `key(j, i)` is the key of the
    /// class's record `i` on quasi-identifier `j` (of `columns`).
    fn class(
        &mut self,
        codes: &[u32],
        columns: usize,
        key: impl Fn(usize, usize) -> u32,
    ) -> ClassNoise {
        let mut noise = ClassNoise::default();
        let n = codes.len();
        if n < 2 {
            return noise;
        }
        self.sorted.clear();
        self.sorted.extend_from_slice(codes);
        self.sorted.sort_unstable();
        self.histogram.clear();
        for &code in &self.sorted {
            match self.histogram.last_mut() {
                Some((last, n)) if *last == code => *n += 1,
                _ => self.histogram.push((code, 1)),
            }
        }
        if self.histogram.len() < 2 {
            // one sensitive value: every subset has the class's distribution
            return noise;
        }
        self.locals.clear();
        for &code in codes {
            let local = self
                .histogram
                .binary_search_by_key(&code, |&(c, _)| c)
                .unwrap_or(0);
            self.locals.push(local as u32);
        }
        for j in 0..columns {
            self.items.clear();
            self.items.extend(
                self.locals
                    .iter()
                    .enumerate()
                    .map(|(i, &local)| (key(j, i), local)),
            );
            self.items.sort_unstable();
            self.ranges(n, &mut noise);
        }
        noise
    }

    /// Prefix and suffix queries at the boundaries between distinct keys of `items`.
    fn ranges(&mut self, n: usize, noise: &mut ClassNoise) {
        let items = &self.items;
        self.boundaries.clear();
        self.boundaries
            .extend((1..n).filter(|&b| items[b - 1].0 != items[b].0));
        let found = self.boundaries.len();
        if found > MAX_THRESHOLDS {
            noise.sampled = true;
            // evenly spaced, ascending: the i-th kept boundary never comes before its slot
            for i in 0..MAX_THRESHOLDS {
                self.boundaries[i] = self.boundaries[i * found / MAX_THRESHOLDS];
            }
            self.boundaries.truncate(MAX_THRESHOLDS);
        }
        self.counts.clear();
        self.counts.resize(self.histogram.len(), 0);
        let mut next = 0;
        for &b in &self.boundaries {
            for &(_, local) in &self.items[next..b] {
                self.counts[local as usize] += 1;
            }
            next = b;
            let (mut prefix, mut suffix) = (0.0, 0.0);
            let (m, rest) = (b as f64, (n - b) as f64);
            for (&(_, total), &count) in self.histogram.iter().zip(&self.counts) {
                let whole = f64::from(total) / n as f64;
                prefix += (f64::from(count) / m - whole).abs();
                suffix += (f64::from(total - count) / rest - whole).abs();
            }
            noise.total += (prefix + suffix) / 2.0;
            noise.queries += 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::measures::distance::EmdDistance;

    /// A column published as one cell covering every record, with its original codes.
    fn whole<'a>(name: &'a str, codes: &'a [u32]) -> CellColumn<'a> {
        let domain = codes.iter().max().map_or(0, |&m| m as usize + 1);
        let all: Vec<u32> = (0..domain as u32).collect();
        CellColumn::from_cells(name, codes, domain, &vec![0; codes.len()], &[&all[..]])
    }

    fn scan(columns: &[CellColumn<'_>], codes: &[u32]) -> NoiseScan {
        let published = Classes::published(columns, codes.len());
        let distinct = codes.iter().max().map_or(0, |&m| m as usize + 1);
        let distance = EmdDistance::equal(codes, distinct);
        let s = SensitiveColumn {
            name: "S",
            codes,
            distance: &distance,
        };
        noise_scan(columns, None, &published, &[s]).remove(0)
    }

    /// Blocks of one record, of a few classes and of the whole table give the same figures, class by
    /// class in the same order (the table's mean and max): nine classes of about 44 records each, in
    /// blocks of several classes (50, 100 records) and as classes too large for a block (1, 3, 10
    /// records), which are read from the table.
    #[test]
    fn blocks_of_any_size_give_the_same_noise() {
        let mut generator = crate::core::rng::SplitMix64(3);
        let rows = 400;
        let a: Vec<u32> = (0..rows).map(|_| generator.below(9) as u32).collect();
        let b: Vec<u32> = (0..rows).map(|_| generator.below(5) as u32).collect();
        let c: Vec<u32> = (0..rows).map(|_| generator.below(7) as u32).collect();
        let codes: Vec<u32> = (0..rows).map(|_| generator.below(4) as u32).collect();
        // published classes: a as it is (nine cells); b and c whole
        let singletons: Vec<Vec<u32>> = (0..9).map(|v| vec![v]).collect();
        let list: Vec<&[u32]> = singletons.iter().map(Vec::as_slice).collect();
        let columns = [
            CellColumn::from_cells("A", &a, 9, &a, &list),
            whole("B", &b),
            whole("C", &c),
        ];
        let published = Classes::published(&columns, rows);
        assert_eq!(published.len(), 9);
        let distance = EmdDistance::equal(&codes, 4);
        let s = [SensitiveColumn {
            name: "S",
            codes: &codes,
            distance: &distance,
        }];
        let ranks = vec![
            (0..9).collect(),
            (0..5).rev().collect::<Vec<u32>>(),
            (0..7).collect(),
        ];
        let whole_table = noise_scan_in_blocks(&columns, Some(&ranks), &published, &s, rows);
        assert!(whole_table[0].queries > 0);
        for block in [1, 3, 10, 50, 100] {
            let blocked = noise_scan_in_blocks(&columns, Some(&ranks), &published, &s, block);
            assert_eq!(blocked, whole_table, "blocks of {block}");
        }
        // classes of 2, 3, 1 and 4 records in blocks of 3: 2 3 | 1 | 4 (the last too large to share)
        assert_eq!(class_blocks(&[0, 2, 5, 6, 10], 3), [0, 2, 3, 4]);
        assert_eq!(class_blocks(&[0, 2, 5, 6, 10], 1), [0, 1, 2, 3, 4]);
        // a class larger than a block stands alone: 2 | 9 | 1 1
        assert_eq!(class_blocks(&[0, 2, 11, 12, 13], 4), [0, 1, 2, 4]);
        assert_eq!(class_blocks(&[0], 3), [0]);
    }

    // Fig. 4.5-1 (note §6.5): t1..t6 = (1,3,s1) (2,4,s2) (2,5,s3) (3,2,s4) (7,4,s5) (8,1,s6) in one block.
    // Codes are the values themselves. Every sensitive value is distinct, so a query selecting m of the
    // 6 records has noise 1 − m/6. A1 splits at 1 | 2 2 | 3 | 7 | 8: prefixes of 1, 3, 4, 5 records and
    // suffixes of 5, 3, 2, 1; A2 (3 4 5 2 4 1) at 1 | 2 | 3 | 4 4 | 5: prefixes of 1, 2, 3, 5 and suffixes
    // of 5, 4, 3, 1. Each attribute's 8 queries select 24 of 48 records in all: mean 1 − 24/48 = 1/2.
    #[test]
    fn figure_4_5_1_block_has_noise_one_half_over_sixteen_queries() {
        let (a1, a2) = ([1, 2, 2, 3, 7, 8], [3, 4, 5, 2, 4, 1]);
        let columns = [whole("A1", &a1), whole("A2", &a2)];
        let result = scan(&columns, &[0, 1, 2, 3, 4, 5]);
        assert_eq!(result.queries, 16);
        assert!((result.mean - 0.5).abs() < 1e-12, "{result:?}");
        assert!((result.max - 0.5).abs() < 1e-12);
        assert_eq!(result.noisy_classes, 1);
        assert!(!result.sampled);
    }

    // Only the split 1 2 2 3 | 7 8 of A1: the query A1 ≤ 3 selects 4 of 6 records (noise 1/3, the note's
    // value) and A1 ≥ 7 the other 2 (2/3): mean 1/2.
    #[test]
    fn the_query_a1_at_most_3_has_the_notes_noise_one_third() {
        let a1 = [0, 0, 0, 0, 1, 1];
        let result = scan(&[whole("A1", &a1)], &[0, 1, 2, 3, 4, 5]);
        assert_eq!(result.queries, 2);
        assert!((result.mean - 0.5).abs() < 1e-12, "{result:?}");
    }

    // A = 0 0 1 1 1 1 with sensitive x x y y y y: A ≤ 0 selects the two x (½(|1 − 1/3| + 2/3) = 2/3)
    // and A ≥ 1 the four y (½(|1 − 2/3| + 1/3) = 1/3): mean 1/2. With one sensitive value there is no
    // noise.
    #[test]
    fn one_boundary_and_quiet_classes() {
        let a = [0, 0, 1, 1, 1, 1];
        let result = scan(&[whole("A", &a)], &[0, 0, 1, 1, 1, 1]);
        assert_eq!(result.queries, 2);
        assert!((result.mean - 0.5).abs() < 1e-12, "{result:?}");
        let result = scan(&[whole("A", &a)], &[3; 6]);
        assert_eq!(
            (result.mean, result.noisy_classes, result.queries),
            (0.0, 0, 0)
        );
    }

    // The value order comes from `ranks`, not the codes. Sensitive 0 1 0 0 on codes 0 1 2 3 (x y x x):
    // by code, the prefixes {0} {0,1} {0,1,2} and suffixes {1,2,3} {2,3} {3} have noise 1/4, 1/4, 1/12,
    // 1/12, 1/4, 1/4 (mean 7/36); ranked 1 0 2 3 (code 1 first) the prefixes {1} {1,0} {1,0,2} have 3/4,
    // 1/4, 1/12 and the suffixes {0,2,3} {2,3} {3} 1/4 each (mean 11/36).
    #[test]
    fn queries_follow_the_given_value_order() {
        let a = [0, 1, 2, 3];
        let columns = [whole("A", &a)];
        let published = Classes::published(&columns, 4);
        let sensitive = [0, 1, 0, 0];
        let distance = EmdDistance::equal(&sensitive, 2);
        let s = || SensitiveColumn {
            name: "S",
            codes: &sensitive,
            distance: &distance,
        };
        let by_code = noise_scan(&columns, None, &published, &[s()]).remove(0);
        assert_eq!(by_code.queries, 6);
        assert!((by_code.mean - 7.0 / 36.0).abs() < 1e-12, "{by_code:?}");
        let ranks = vec![vec![1, 0, 2, 3]];
        let ranked = noise_scan(&columns, Some(&ranks), &published, &[s()]).remove(0);
        assert!((ranked.mean - 11.0 / 36.0).abs() < 1e-12, "{ranked:?}");
    }

    // Two classes: {0, 1} on A (ordered) with sensitive 0 1 → both queries select 1 of 2: noise 1/2;
    // {2, 2} with sensitive 0 1 → no query splits it: 0. Record-weighted mean 1/4, max 1/2.
    #[test]
    fn the_table_figure_weights_classes_by_records() {
        let a = [0, 1, 2, 2];
        let column = CellColumn::from_cells("A", &a, 3, &[0, 0, 1, 1], &[&[0, 1], &[2]]);
        let result = scan(&[column], &[0, 1, 0, 1]);
        assert_eq!(result.queries, 2);
        assert!((result.mean - 0.25).abs() < 1e-12, "{result:?}");
        assert!((result.max - 0.5).abs() < 1e-12);
        assert_eq!(result.noisy_classes, 1);
    }

    // A class with more distinct ordered values than MAX_THRESHOLDS is scanned at that many boundaries.
    #[test]
    fn wide_classes_are_sampled() {
        let n = 2 * MAX_THRESHOLDS + 3;
        let a: Vec<u32> = (0..n as u32).collect();
        let s: Vec<u32> = (0..n as u32).map(|v| v % 2).collect();
        let result = scan(&[whole("A", &a)], &s);
        assert!(result.sampled);
        assert_eq!(result.queries, 2 * MAX_THRESHOLDS as u64);
    }
}
