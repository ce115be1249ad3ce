//! Dense numbering of `u64` keys in order of first appearance, on the threads of the caller's rayon pool.
//!
//! One hash table over hundreds of thousands of distinct keys misses the cache on nearly every lookup.
//! Here the entries are first scattered, chunk by chunk, into partitions by a hash of their key (each
//! partition keeps its entries in their original order), then every partition is numbered on its own
//! with a table small enough to stay in a core's cache: the radix-partitioned hashing of main-memory
//! hash joins (Manegold, Boncz, Kersten: "Optimizing Main-Memory Join on Modern Hardware", IEEE TKDE
//! 2002). A class's global id is the rank of its first entry among all first entries, so the result is
//! the one of a single sequential pass: ids in order of first appearance, whatever the number of
//! partitions, chunks or threads.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Classes of numbered entries, in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Numbered {
    /// Index of each class's first entry (ascending).
    pub firsts: Vec<u32>,
    /// Size of each class: the sum of its entries' counts.
    pub counts: Vec<u32>,
}

/// Entries per partition aimed at: a partition's table then holds about this many keys at most (about
/// 16 bytes each with the table's slack), well inside a core's L2 cache. Past 2^24 entries the cap on
/// partitions makes them larger.
const PARTITION_ENTRIES: usize = 1 << 13;
/// Most partitions (as a power of two): beyond this, scattering writes to more streams than a core
/// keeps in flight.
const MAX_PARTITION_BITS: u32 = 11;
/// Entries per scatter chunk; chunk-relative indices are stored as `u16`.
const CHUNK: usize = 1 << 16;
/// Classes whose first entries and sizes are gathered together (their outputs stay in cache).
const CLASS_RANGE: usize = 1 << 15;

/// Numbers the keys of entries `0..n` (`key_at(i)`) densely in order of first appearance. Returns each
/// class's first entry and size (the sum of `count_at` over its entries) and, when `ids` is given, fills
/// it with each entry's class.
///
/// # Panics
/// When `n` does not fit a `u32` (entries are numbered as `u32`).
pub fn number_keys(
    n: usize,
    key_at: impl Fn(usize) -> u64 + Sync,
    count_at: impl Fn(usize) -> u32 + Sync,
    ids: Option<&mut Vec<u32>>,
) -> Numbered {
    assert!(u32::try_from(n).is_ok(), "{n} entries do not fit u32 ids");
    let wanted = n.div_ceil(PARTITION_ENTRIES).next_power_of_two();
    let bits = wanted.trailing_zeros().clamp(1, MAX_PARTITION_BITS);
    let layout = Layout {
        bits,
        chunk: CHUNK,
        class_range: CLASS_RANGE,
    };
    number_in_partitions(n, layout, key_at, count_at, ids)
}

/// How the work is cut: `2^bits` partitions, scatter chunks of `chunk` entries (at most 2^16), and
/// ranges of `class_range` classes gathered together.
#[derive(Debug, Clone, Copy)]
struct Layout {
    bits: u32,
    chunk: usize,
    class_range: usize,
}

/// One chunk's entries in partition order: partition `p` owns `keys[offsets[p]..offsets[p + 1]]`, with
/// the chunk-relative index of each entry in `rows` and its count in `counts` (read here in entry
/// order, so a partition never reads counts scattered over the whole input).
struct Scattered {
    offsets: Vec<u32>,
    keys: Vec<u64>,
    rows: Vec<u16>,
    counts: Vec<u32>,
}

/// One partition's classes in local first-appearance order.
struct Partition {
    /// First entry of each local class (ascending).
    firsts: Vec<u32>,
    counts: Vec<u32>,
    /// Local class of each of the partition's entries, chunk after chunk (when ids are wanted).
    locals: Vec<u32>,
}

/// [`number_keys`] cut as `layout` says.
fn number_in_partitions(
    n: usize,
    layout: Layout,
    key_at: impl Fn(usize) -> u64 + Sync,
    count_at: impl Fn(usize) -> u32 + Sync,
    ids: Option<&mut Vec<u32>>,
) -> Numbered {
    let Layout {
        bits,
        chunk,
        class_range,
    } = layout;
    debug_assert!(chunk > 0 && chunk <= CHUNK && class_range > 0 && n <= u32::MAX as usize);
    let parts = 1usize << bits;
    // the high bits of a multiplicative hash: another multiplier than the tables' own hash, so the
    // keys of one partition still spread over its table
    let part_of = |key: u64| (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
    let chunks = n.div_ceil(chunk);
    // 1. every chunk's entries in partition order (a counting sort by partition)
    let mut scattered: Vec<Scattered> = (0..chunks)
        .into_par_iter()
        .map_init(Vec::new, |keys: &mut Vec<u64>, c| {
            let range = c * chunk..((c + 1) * chunk).min(n);
            keys.clear();
            keys.extend(range.clone().map(&key_at));
            let mut offsets = vec![0u32; parts + 1];
            for &key in keys.iter() {
                offsets[part_of(key) + 1] += 1;
            }
            for p in 0..parts {
                offsets[p + 1] += offsets[p];
            }
            let mut cursor = offsets.clone();
            let mut out = Scattered {
                offsets,
                keys: vec![0; keys.len()],
                rows: vec![0; keys.len()],
                counts: vec![0; keys.len()],
            };
            for ((r, &key), i) in keys.iter().enumerate().zip(range) {
                let at = &mut cursor[part_of(key)];
                out.keys[*at as usize] = key;
                out.rows[*at as usize] = r as u16;
                out.counts[*at as usize] = count_at(i);
                *at += 1;
            }
            out
        })
        .collect();
    // 2. each partition numbered on its own, its first entries marked in a bitmap of all entries
    let keep = ids.is_some();
    let is_first: Vec<AtomicU64> = (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    let mut partitions: Vec<Partition> = (0..parts)
        .into_par_iter()
        .map_init(FxHashMap::<u64, u32>::default, |table, p| {
            table.clear();
            let entries = if keep {
                scattered
                    .iter()
                    .map(|s| (s.offsets[p + 1] - s.offsets[p]) as usize)
                    .sum()
            } else {
                0
            };
            let mut part = Partition {
                firsts: Vec::new(),
                counts: Vec::new(),
                locals: Vec::with_capacity(entries),
            };
            for (c, s) in scattered.iter().enumerate() {
                let (start, end) = (s.offsets[p] as usize, s.offsets[p + 1] as usize);
                let entries = s.keys[start..end].iter().zip(&s.rows[start..end]);
                for ((&key, &r), &count) in entries.zip(&s.counts[start..end]) {
                    let i = c * chunk + r as usize;
                    let next = part.firsts.len() as u32;
                    let local = *table.entry(key).or_insert(next);
                    if local == next {
                        part.firsts.push(i as u32);
                        part.counts.push(0);
                        is_first[i / 64].fetch_or(1 << (i % 64), Ordering::Relaxed);
                    }
                    part.counts[local as usize] += count;
                    if keep {
                        part.locals.push(local);
                    }
                }
            }
            part
        })
        .collect();
    // the keys and counts are read: only the entries' places are needed from here on
    for s in &mut scattered {
        s.keys = Vec::new();
        s.counts = Vec::new();
    }
    // 3. a class's global id is the number of first entries before its own
    let words: Vec<u64> = is_first.into_iter().map(AtomicU64::into_inner).collect();
    let mut before = Vec::with_capacity(words.len());
    let mut total = 0u32;
    for &word in &words {
        before.push(total);
        total += word.count_ones();
    }
    let rank = |i: u32| {
        let (w, b) = ((i / 64) as usize, i % 64);
        before[w] + (words[w] & ((1u64 << b) - 1)).count_ones()
    };
    let globals: Vec<Vec<u32>> = partitions
        .par_iter()
        .map(|part| part.firsts.iter().map(|&i| rank(i)).collect())
        .collect();
    // each partition's global ids ascend, so a range of global ids takes a contiguous run of every
    // partition's classes; ranges small enough to stay in cache are filled on their own
    let classes = total as usize;
    let mut numbered = Numbered {
        firsts: vec![0; classes],
        counts: vec![0; classes],
    };
    numbered
        .firsts
        .par_chunks_mut(class_range)
        .zip(numbered.counts.par_chunks_mut(class_range))
        .enumerate()
        .for_each(|(range, (firsts, counts))| {
            let low = (range * class_range) as u32;
            let high = low + firsts.len() as u32;
            for (part, global) in partitions.iter().zip(&globals) {
                let start = global.partition_point(|&g| g < low);
                let end = global.partition_point(|&g| g < high);
                let run = global[start..end]
                    .iter()
                    .zip(&part.firsts[start..end])
                    .zip(&part.counts[start..end]);
                for ((&g, &first), &count) in run {
                    let at = (g - low) as usize;
                    firsts[at] = first;
                    counts[at] = count;
                }
            }
        });
    for part in &mut partitions {
        part.firsts = Vec::new();
        part.counts = Vec::new();
    }
    // 4. each entry's class, chunk by chunk: a partition's locals are stored chunk after chunk
    if let Some(ids) = ids {
        let mut starts = vec![0u32; parts];
        let chunk_starts: Vec<Vec<u32>> = scattered
            .iter()
            .map(|s| {
                let here = starts.clone();
                for (p, start) in starts.iter_mut().enumerate() {
                    *start += s.offsets[p + 1] - s.offsets[p];
                }
                here
            })
            .collect();
        ids.clear();
        ids.resize(n, 0);
        ids.par_chunks_mut(chunk)
            .zip(scattered.par_iter().zip(&chunk_starts))
            .for_each(|(out, (s, starts))| {
                for p in 0..parts {
                    let (start, end) = (s.offsets[p] as usize, s.offsets[p + 1] as usize);
                    let locals = &partitions[p].locals[starts[p] as usize..][..end - start];
                    for (&r, &local) in s.rows[start..end].iter().zip(locals) {
                        out[r as usize] = globals[p][local as usize];
                    }
                }
            });
    }
    numbered
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The sequential pass the partitioned numbering must equal.
    fn sequential(keys: &[u64], counts: &[u32]) -> (Numbered, Vec<u32>) {
        let mut table: FxHashMap<u64, u32> = FxHashMap::default();
        let mut numbered = Numbered::default();
        let mut ids = Vec::new();
        for (i, (&key, &count)) in keys.iter().zip(counts).enumerate() {
            let next = numbered.firsts.len() as u32;
            let id = *table.entry(key).or_insert(next);
            if id == next {
                numbered.firsts.push(i as u32);
                numbered.counts.push(0);
            }
            numbered.counts[id as usize] += count;
            ids.push(id);
        }
        (numbered, ids)
    }

    #[test]
    fn small_example_is_numbered_in_order_of_first_appearance() {
        let keys = [7u64, 3, 7, 9, 3, 3, 1];
        let mut ids = Vec::new();
        let layout = Layout {
            bits: 2,
            chunk: 3,
            class_range: 2,
        };
        let numbered = number_in_partitions(keys.len(), layout, |i| keys[i], |_| 1, Some(&mut ids));
        assert_eq!(ids, vec![0, 1, 0, 2, 1, 1, 3]);
        assert_eq!(numbered.firsts, vec![0, 1, 3, 6]);
        assert_eq!(numbered.counts, vec![2, 3, 1, 1]);
    }

    #[test]
    fn no_entries_give_no_classes() {
        let mut ids = vec![5];
        let numbered = number_keys(0, |_| 0, |_| 1, Some(&mut ids));
        assert_eq!(numbered, Numbered::default());
        assert!(ids.is_empty());
    }

    #[test]
    fn several_chunks_and_class_ranges_equal_the_sequential_pass() {
        // past one scatter chunk (u16 places) and one class range, on a pool of three threads
        let n = 3 * CHUNK + 17;
        let keys: Vec<u64> = (0..n as u64)
            .map(|i| (i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 20) % 150_000)
            .collect();
        let counts: Vec<u32> = (0..n).map(|i| (i % 3) as u32 + 1).collect();
        let (expected, expected_ids) = sequential(&keys, &counts);
        assert!(expected.firsts.len() > 2 * CLASS_RANGE);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut ids = Vec::new();
        let numbered = pool.install(|| number_keys(n, |i| keys[i], |i| counts[i], Some(&mut ids)));
        assert_eq!(numbered, expected);
        assert_eq!(ids, expected_ids);
    }

    proptest! {
        /// Any partitioning and chunking gives the sequential pass's ids, first entries and sizes.
        #[test]
        fn partitions_equal_the_sequential_pass(
            keys in prop::collection::vec(0u64..40, 0..400),
            spread in prop::bool::ANY,
            bits in 1u32..7,
            chunk in 1usize..70,
            class_range in 1usize..50,
        ) {
            // spread: the same classes under keys far apart (high bits set)
            let keys: Vec<u64> = keys
                .iter()
                .map(|&k| if spread { k.wrapping_mul(0xD6E8_FEB8_6659_FD93) } else { k })
                .collect();
            let counts: Vec<u32> = (0..keys.len()).map(|i| (i % 5) as u32 + 1).collect();
            let (expected, expected_ids) = sequential(&keys, &counts);
            let mut ids = Vec::new();
            let layout = Layout { bits, chunk, class_range };
            let numbered =
                number_in_partitions(keys.len(), layout, |i| keys[i], |i| counts[i], Some(&mut ids));
            prop_assert_eq!(&numbered, &expected);
            prop_assert_eq!(ids, expected_ids);
            let without_ids = number_keys(keys.len(), |i| keys[i], |i| counts[i], None);
            prop_assert_eq!(without_ids, expected);
        }
    }
}
