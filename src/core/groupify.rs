//! Equivalence classes of a generalized table ("frequency sets", LeFevre et al. 2005; Issa 2009 §2.5 C–D).
//!
//! A [`FrequencySet`] keeps, per class, its size, the index of one representative record (whose original
//! codes let the class be generalized further: rollup) and, when privacy models ask for them, a histogram of each sensitive
//! attribute. Grouping packs the generalized codes of a class into one `u64` key in mixed radix; when the
//! radix product would overflow, the partial keys are first renumbered densely, so any number of columns
//! works. Classes are numbered in order of first appearance, which makes every result independent of hashing.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::input::EngineInput;
use super::key_numbering::number_keys;

/// Sorted `(sensitive code, count)` pairs of one class.
pub type Histogram = Vec<(u32, u32)>;

/// The histograms of one sensitive attribute for every class, stored flat: class `c` owns
/// `entries[offsets[c]..offsets[c + 1]]`, sorted by code. One allocation per grouping instead of one per
/// class.
#[derive(Debug, Clone, Default)]
struct ClassHistograms {
    offsets: Vec<u32>,
    entries: Vec<(u32, u32)>,
}

impl ClassHistograms {
    /// The histogram of class `class`.
    fn class(&self, class: usize) -> &[(u32, u32)] {
        match (self.offsets.get(class), self.offsets.get(class + 1)) {
            (Some(&start), Some(&end)) => &self.entries[start as usize..end as usize],
            _ => &[],
        }
    }

    /// Gathers the entries of the source items into `classes` classes: source `i` belongs to class
    /// `class_of[i]` and contributes the entries `entries_of(i)` (codes below `values`); equal codes of a
    /// class are summed.
    fn gather<'e>(
        classes: usize,
        values: usize,
        class_of: &[u32],
        entries_of: impl Fn(usize) -> &'e [(u32, u32)],
    ) -> Self {
        // counting sort of the entries by class
        let mut starts = vec![0u32; classes + 1];
        for (i, &c) in class_of.iter().enumerate() {
            starts[c as usize + 1] += entries_of(i).len() as u32;
        }
        for c in 0..classes {
            starts[c + 1] += starts[c];
        }
        let mut cursor = starts.clone();
        let mut entries = vec![(0u32, 0u32); starts[classes] as usize];
        for (i, &c) in class_of.iter().enumerate() {
            for &entry in entries_of(i) {
                let at = &mut cursor[c as usize];
                entries[*at as usize] = entry;
                *at += 1;
            }
        }
        // merge each class in place (the write position never passes the read position): equal codes
        // are summed through a dense code → slot table, then the class's distinct codes are sorted
        let codes = values.max(1);
        let mut slot_of = vec![u32::MAX; codes];
        let mut offsets = Vec::with_capacity(classes + 1);
        offsets.push(0u32);
        let mut write = 0usize;
        for c in 0..classes {
            let (start, end) = (starts[c] as usize, starts[c + 1] as usize);
            let first = write;
            // most classes gather one source's sorted entries: sort only when codes arrive out of order
            let mut sorted = true;
            for read in start..end {
                let (code, n) = entries[read];
                let slot = &mut slot_of[code as usize];
                if (*slot as usize) >= first && (*slot as usize) < write {
                    entries[*slot as usize].1 += n;
                } else {
                    *slot = write as u32;
                    sorted &= write == first || entries[write - 1].0 < code;
                    entries[write] = (code, n);
                    write += 1;
                }
            }
            if !sorted {
                entries[first..write].sort_unstable_by_key(|&(code, _)| code);
            }
            offsets.push(write as u32);
        }
        entries.truncate(write);
        Self { offsets, entries }
    }
}

/// The sets of values of one sensitive attribute for every class, as bitsets: class `c` owns the
/// `words` words `bits[c * words..(c + 1) * words]`, and bit `code % 64` of word `code / 64` is set when
/// the class holds `code`. Merging classes is a bitwise or, the number of distinct values a popcount.
#[derive(Debug, Clone, Default)]
struct ClassValueSets {
    words: usize,
    bits: Vec<u64>,
}

impl ClassValueSets {
    /// Words per class for codes below `values`.
    fn words_for(values: usize) -> usize {
        values.max(1).div_ceil(64)
    }

    /// The bitset of class `class`.
    fn class(&self, class: usize) -> &[u64] {
        self.bits
            .get(class * self.words..(class + 1) * self.words)
            .unwrap_or(&[])
    }

    /// Number of distinct values of class `class`.
    fn distinct(&self, class: usize) -> u64 {
        self.class(class)
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The value sets of `classes` classes when record `i` (code `codes[i]`, below `values`) belongs to
    /// class `class_of[i]`.
    fn from_codes(classes: usize, values: usize, class_of: &[u32], codes: &[u32]) -> Self {
        let words = Self::words_for(values);
        let mut bits = vec![0u64; classes * words];
        for (&c, &code) in class_of.iter().zip(codes) {
            bits[c as usize * words + (code / 64) as usize] |= 1u64 << (code % 64);
        }
        Self { words, bits }
    }

    /// Merges the classes of `source` into `classes` classes, source class `i` going to `class_of[i]`.
    fn gather(classes: usize, class_of: &[u32], source: &Self) -> Self {
        let words = source.words;
        let mut bits = vec![0u64; classes * words];
        if words == 1 {
            for (&c, &b) in class_of.iter().zip(&source.bits) {
                bits[c as usize] |= b;
            }
        } else {
            for (&c, from) in class_of.iter().zip(source.bits.chunks_exact(words)) {
                let to = &mut bits[c as usize * words..(c as usize + 1) * words];
                for (t, &f) in to.iter_mut().zip(from) {
                    *t |= f;
                }
            }
        }
        Self { words, bits }
    }
}

/// What a frequency set keeps of one sensitive attribute per class.
#[derive(Debug, Clone)]
enum ClassSensitive {
    /// Full `(code, count)` histograms, for models that read counts.
    Histograms(ClassHistograms),
    /// Only the sets of values, when every model reading the attribute needs no more.
    Sets(ClassValueSets),
}

/// The equivalence classes of the table generalized to one lattice node.
#[derive(Debug, Clone)]
pub struct FrequencySet {
    levels: Vec<u8>,
    rows: Vec<u32>,
    counts: Vec<u32>,
    histograms: Vec<ClassSensitive>,
}

impl FrequencySet {
    /// The node this set belongs to.
    pub fn levels(&self) -> &[u8] {
        &self.levels
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// True for a set without classes (an empty table).
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Class sizes.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Index of one record of each class (its representative).
    pub fn representative_rows(&self) -> &[u32] {
        &self.rows
    }

    /// Histogram of sensitive slot `slot` for class `class` (empty when histograms were not requested,
    /// or when only the value sets of the slot are kept).
    pub fn histogram(&self, slot: usize, class: usize) -> &[(u32, u32)] {
        match self.histograms.get(slot) {
            Some(ClassSensitive::Histograms(h)) => h.class(class),
            _ => &[],
        }
    }

    /// Number of distinct values of sensitive slot `slot` in class `class` (0 when neither histograms
    /// nor value sets were requested).
    pub fn distinct_values(&self, slot: usize, class: usize) -> u64 {
        match self.histograms.get(slot) {
            Some(ClassSensitive::Histograms(h)) => {
                h.class(class).iter().filter(|&&(_, n)| n > 0).count() as u64
            }
            Some(ClassSensitive::Sets(s)) => s.distinct(class),
            None => 0,
        }
    }

    /// Whether per-class histograms (or value sets) are kept.
    pub fn has_histograms(&self) -> bool {
        !self.histograms.is_empty()
    }

    /// A set with one class whose slot-0 histogram is `histogram` (unit tests of privacy models).
    #[cfg(test)]
    pub(crate) fn single_class_for_tests(row: u32, mut histogram: Histogram) -> Self {
        let size = histogram.iter().map(|&(_, n)| n).sum();
        compact(&mut histogram);
        Self {
            levels: vec![],
            rows: vec![row],
            counts: vec![size],
            histograms: vec![ClassSensitive::Histograms(ClassHistograms {
                offsets: vec![0, histogram.len() as u32],
                entries: histogram,
            })],
        }
    }

    /// A set at `levels` with `classes` classes of one record each (unit tests of caches).
    #[cfg(test)]
    pub(crate) fn with_classes_for_tests(levels: &[u8], classes: usize) -> Self {
        Self {
            levels: levels.to_vec(),
            rows: (0..classes as u32).collect(),
            counts: vec![1; classes],
            histograms: Vec::new(),
        }
    }

    /// Approximate heap size in bytes (for cache budgets).
    pub fn weight(&self) -> usize {
        let histograms: usize = self
            .histograms
            .iter()
            .map(|h| match h {
                ClassSensitive::Histograms(h) => h.offsets.len() * 4 + h.entries.len() * 8,
                ClassSensitive::Sets(s) => s.bits.len() * 8,
            })
            .sum();
        self.counts.len() * 8 + histograms + 64
    }
}

/// Reusable scratch space and per-run tables for grouping; keep one per thread and run.
///
/// Codes are read from the input's columns (no copy: the representatives of a frequency set's classes
/// come in ascending record order, so each column is read as a forward stream), and labels are
/// renumbered per level to the ones that occur in the data, so keys stay small enough for a
/// direct-address table more often.
#[derive(Debug, Default)]
pub struct Grouper {
    /// `labels[j][level][column code]`: dense label of the code at that level.
    labels: Vec<Vec<Vec<u32>>>,
    /// `widths[j][level]`: number of dense labels.
    widths: Vec<Vec<u64>>,
    keys: Vec<u64>,
    class_of: Vec<u32>,
    ids: KeyIds,
    /// Scratch: each grouped column's labels multiplied by the column's stride in the key.
    scaled: Vec<u64>,
    /// Largest radix product before keys are renumbered; 0 means `u64::MAX` (tests lower it).
    radix_limit: u64,
    /// Fewest entries grouped in partitions; 0 means [`PARTITION_MIN`] (tests lower it, which also
    /// sends small key ranges to the partitioned path).
    partition_min: usize,
    /// Source classes (or records) read so far: the work grouping has done.
    processed: u64,
    /// `value_sets[s]`: keep only the value sets of sensitive slot `s`, not its histograms.
    value_sets: Vec<bool>,
    /// Every record's codes in one word, when they fit (shared with sibling groupers).
    packed: Option<Arc<PackedRecords>>,
}

/// Every record's quasi-identifier codes packed into one `u64`, column `j` at bit `shifts[j]`. A rollup
/// reads its source's representatives sparsely, one cache miss per column and class when each column is
/// read on its own; from the packed words a class costs one miss, whatever the number of columns.
#[derive(Debug)]
struct PackedRecords {
    words: Vec<u64>,
    shifts: Vec<u32>,
    masks: Vec<u64>,
}

impl PackedRecords {
    /// The packed codes of `input`, or `None` when they need more than 64 bits or there is a single
    /// column (nothing to gain).
    fn of(input: &EngineInput<'_>) -> Option<Self> {
        let columns = &input.quasi_identifiers;
        if columns.len() < 2 {
            return None;
        }
        let bounds: Vec<u64> = columns
            .iter()
            .map(|qi| qi.hierarchy.codes(0).len() as u64)
            .collect();
        let (shifts, masks) = Self::layout(&bounds)?;
        let mut words = Vec::new();
        (0..input.rows)
            .into_par_iter()
            .map(|row| {
                columns
                    .iter()
                    .zip(&shifts)
                    .map(|(qi, &shift)| u64::from(qi.codes[row]) << shift)
                    .fold(0, |word, code| word | code)
            })
            .collect_into_vec(&mut words);
        Some(Self {
            words,
            shifts,
            masks,
        })
    }

    /// The shift and mask of each column whose codes are below `bounds[j]`, or `None` past 64 bits.
    fn layout(bounds: &[u64]) -> Option<(Vec<u32>, Vec<u64>)> {
        let mut shifts = Vec::with_capacity(bounds.len());
        let mut masks = Vec::with_capacity(bounds.len());
        let mut shift = 0u32;
        for &bound in bounds {
            let bits = u64::BITS - bound.saturating_sub(1).leading_zeros();
            if shift + bits > u64::BITS {
                return None;
            }
            // a column of one code takes no bits (and no shift, which could otherwise reach 64)
            shifts.push(if bits == 0 { 0 } else { shift });
            masks.push(if bits == 0 {
                0
            } else {
                u64::MAX >> (u64::BITS - bits)
            });
            shift += bits;
        }
        Some((shifts, masks))
    }
}

/// Where grouping reads classes from.
enum Source<'s> {
    Rows(&'s EngineInput<'s>),
    Set(&'s FrequencySet),
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Source::Rows(input) => input.rows,
            Source::Set(set) => set.len(),
        }
    }
    fn rows(&self) -> Option<&[u32]> {
        match self {
            Source::Rows(_) => None,
            Source::Set(set) => Some(&set.rows),
        }
    }
}

impl Grouper {
    /// A grouper for `input`.
    pub fn new(input: &EngineInput<'_>) -> Self {
        let q = input.quasi_identifiers.len();
        let mut labels = Vec::with_capacity(q);
        let mut widths = Vec::with_capacity(q);
        for qi in &input.quasi_identifiers {
            let map = qi.hierarchy;
            let distinct = map.codes(0).len();
            let mut present = vec![false; distinct];
            for &c in qi.codes {
                present[c as usize] = true;
            }
            let (mut per_level, mut per_width) = (Vec::new(), Vec::new());
            for level in 0..=map.max_level() {
                let raw = map.codes(level);
                let mut dense = vec![u32::MAX; map.label_count(level)];
                let mut next = 0u32;
                let mut table = vec![0u32; distinct];
                for code in 0..distinct {
                    if !present[code] {
                        continue;
                    }
                    let slot = &mut dense[raw[code] as usize];
                    if *slot == u32::MAX {
                        *slot = next;
                        next += 1;
                    }
                    table[code] = *slot;
                }
                per_level.push(table);
                per_width.push(next as u64);
            }
            labels.push(per_level);
            widths.push(per_width);
        }
        Self {
            labels,
            widths,
            packed: PackedRecords::of(input).map(Arc::new),
            ..Self::default()
        }
    }

    /// Reads the code of record `row` in quasi-identifier `j` of `input` (the grouper's input), from the
    /// packed words when there are: all of a record's codes then cost one cache miss.
    pub fn code_reader<'s>(
        &'s self,
        input: &'s EngineInput<'s>,
    ) -> impl Fn(u32, usize) -> u32 + 's {
        let packed = self.packed.as_deref();
        move |row, j| match packed {
            Some(p) => ((p.words[row as usize] >> p.shifts[j]) & p.masks[j]) as u32,
            None => input.quasi_identifiers[j].codes[row as usize],
        }
    }

    /// A grouper for the same input as `self`, sharing its packed records. Like a new grouper, it
    /// keeps histograms for every sensitive slot until told otherwise
    /// ([`Grouper::keep_value_sets_only`]).
    pub fn sibling(&self) -> Self {
        Self {
            labels: self.labels.clone(),
            widths: self.widths.clone(),
            packed: self.packed.clone(),
            ..Self::default()
        }
    }

    /// Keeps only the per-class value sets (not histograms) of the sensitive slots `s` with
    /// `value_sets[s]` in the sets grouped from records from now on; rollups follow their source. Meant
    /// for slots that only models reading value sets (for example distinct l-diversity) look at.
    pub fn keep_value_sets_only(&mut self, value_sets: Vec<bool>) {
        self.value_sets = value_sets;
    }

    /// Groups the original records at node `levels`. Histograms (or value sets, see
    /// [`Grouper::keep_value_sets_only`]) are built when `with_histograms`.
    pub fn group_rows(
        &mut self,
        input: &EngineInput<'_>,
        levels: &[u8],
        with_histograms: bool,
    ) -> FrequencySet {
        let (counts, first) = self.assign(input, &Source::Rows(input), levels, true);
        let classes = counts.len();
        let histograms = if with_histograms {
            input
                .sensitive
                .iter()
                .enumerate()
                .map(|(slot, s)| {
                    if self.value_sets.get(slot).copied().unwrap_or(false) {
                        return ClassSensitive::Sets(ClassValueSets::from_codes(
                            classes,
                            s.distinct,
                            &self.class_of,
                            s.codes,
                        ));
                    }
                    let single: Vec<(u32, u32)> = s.codes.iter().map(|&code| (code, 1)).collect();
                    ClassSensitive::Histograms(ClassHistograms::gather(
                        classes,
                        s.distinct,
                        &self.class_of,
                        |row| std::slice::from_ref(&single[row]),
                    ))
                })
                .collect()
        } else {
            Vec::new()
        };
        FrequencySet {
            levels: levels.to_vec(),
            rows: first,
            counts,
            histograms,
        }
    }

    fn partition_min(&self) -> usize {
        if self.partition_min == 0 {
            PARTITION_MIN
        } else {
            self.partition_min
        }
    }

    /// Source classes (or records) read by all groupings so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Whether quasi-identifier `j` takes a single value in the data at `level`.
    pub fn is_constant(&self, j: usize, level: u8) -> bool {
        self.widths[j][level as usize] <= 1
    }

    /// Generalizes `source` further to `levels` and merges classes. Every level must be ≥ the source's,
    /// except for attributes that are constant at the target level.
    pub fn rollup(
        &mut self,
        input: &EngineInput<'_>,
        source: &FrequencySet,
        levels: &[u8],
    ) -> FrequencySet {
        debug_assert!(source
            .levels
            .iter()
            .zip(levels)
            .enumerate()
            .all(|(j, (a, b))| a <= b || self.is_constant(j, *b)));
        let with_histograms = !source.histograms.is_empty();
        let (counts, rows) = self.assign(input, &Source::Set(source), levels, with_histograms);
        let classes = counts.len();
        let histograms = source
            .histograms
            .iter()
            .zip(&input.sensitive)
            .map(|(per_class, s)| match per_class {
                ClassSensitive::Histograms(h) => ClassSensitive::Histograms(
                    ClassHistograms::gather(classes, s.distinct, &self.class_of, |i| h.class(i)),
                ),
                ClassSensitive::Sets(sets) => {
                    ClassSensitive::Sets(ClassValueSets::gather(classes, &self.class_of, sets))
                }
            })
            .collect();
        FrequencySet {
            levels: levels.to_vec(),
            rows,
            counts,
            histograms,
        }
    }

    /// For each source entry, the index of its class (valid until the next call; filled by `group_rows`,
    /// and by `rollup` when the source carries histograms).
    pub fn class_of(&self) -> &[u32] {
        &self.class_of
    }

    /// Groups `source` at `levels`: returns the size and representative record of each class, classes
    /// numbered in order of first appearance, and fills `self.class_of` when `keep_class_of`.
    fn assign(
        &mut self,
        input: &EngineInput<'_>,
        source: &Source<'_>,
        levels: &[u8],
        keep_class_of: bool,
    ) -> (Vec<u32>, Vec<u32>) {
        let n = source.len();
        self.processed += n as u64;
        let limit = if self.radix_limit == 0 {
            u64::MAX
        } else {
            self.radix_limit
        };
        let mut product: Option<u64> = Some(1);
        for (widths, &level) in self.widths.iter().zip(levels) {
            product = product
                .and_then(|p| p.checked_mul(widths[level as usize].max(1)))
                .filter(|&p| p <= limit);
        }
        match (product, source) {
            (Some(radix), Source::Rows(_)) => self.assign_packed(
                input,
                levels,
                radix,
                (n, keep_class_of),
                |i| i as u32,
                |_| 1,
            ),
            (Some(radix), Source::Set(set)) => self.assign_packed(
                input,
                levels,
                radix,
                (n, keep_class_of),
                |i| set.rows[i],
                |i| set.counts[i],
            ),
            (None, _) => self.assign_by_columns(input, source, levels, limit),
        }
    }

    /// One pass when every key fits in `radix`: key, class id, size and representative per source entry.
    fn assign_packed(
        &mut self,
        input: &EngineInput<'_>,
        levels: &[u8],
        radix: u64,
        (n, keep_class_of): (usize, bool),
        row_at: impl Fn(usize) -> u32 + Sync,
        count_at: impl Fn(usize) -> u32 + Sync,
    ) -> (Vec<u32>, Vec<u32>) {
        // key = Σ_j label_j · stride_j (the mixed-radix number, most significant column first): each
        // column's labels are pre-multiplied by its stride once per grouping, so a key is a sum of
        // independent lookups instead of a chain of multiplications
        let q = input.quasi_identifiers.len();
        let mut scaled = std::mem::take(&mut self.scaled);
        scaled.clear();
        let mut columns: Vec<(usize, usize, usize)> = Vec::with_capacity(q);
        let mut stride = 1u64;
        for j in (0..q).rev() {
            let level = levels[j] as usize;
            let width = self.widths[j][level];
            if width <= 1 {
                continue;
            }
            let start = scaled.len();
            scaled.extend(
                self.labels[j][level]
                    .iter()
                    .map(|&label| label as u64 * stride),
            );
            columns.push((j, start, scaled.len()));
            stride = stride.wrapping_mul(width);
        }
        // each grouped column's codes (or their place in the packed words) beside its scaled labels
        let packed = self.packed.clone();
        let tables: Vec<(&[u32], u32, u64, &[u64])> = columns
            .iter()
            .map(|&(j, start, end)| {
                let (shift, mask) = packed
                    .as_ref()
                    .map_or((0, 0), |p| (p.shifts[j], p.masks[j]));
                let codes = input.quasi_identifiers[j].codes;
                (codes, shift, mask, &scaled[start..end])
            })
            .collect();
        let words = packed.as_ref().map(|p| p.words.as_slice());
        let key_of = |row: u32| match words {
            Some(words) => {
                let word = words[row as usize];
                tables
                    .iter()
                    .map(|&(_, shift, mask, table)| table[((word >> shift) & mask) as usize])
                    .sum::<u64>()
            }
            None => tables
                .iter()
                .map(|&(codes, _, _, table)| table[codes[row as usize] as usize])
                .sum::<u64>(),
        };
        let mut counts: Vec<u32> = Vec::new();
        let mut rows: Vec<u32> = Vec::new();
        self.class_of.clear();
        if keep_class_of {
            self.class_of.reserve(n);
        }
        // a direct table that stays in cache beats partitioning; a larger one misses the cache on most
        // entries, as a large hash table does, so those go to the partitioned numbering, on one thread
        // too (tests lower `partition_min` to send every key range there)
        let cached = radix <= DENSE_FLOOR && self.partition_min == 0;
        if n >= self.partition_min() && !cached {
            let numbered = number_keys(
                n,
                |i| key_of(row_at(i)),
                &count_at,
                keep_class_of.then_some(&mut self.class_of),
            );
            let rows = numbered
                .firsts
                .iter()
                .map(|&i| row_at(i as usize))
                .collect();
            drop(tables);
            self.scaled = scaled;
            return (numbered.counts, rows);
        }
        let dense = self.ids.begin(radix, n);
        for i in 0..n {
            let row = row_at(i);
            let (id, new) = self.ids.id(dense, key_of(row), counts.len() as u32);
            if new {
                counts.push(0);
                rows.push(row);
            }
            counts[id as usize] += count_at(i);
            if keep_class_of {
                self.class_of.push(id);
            }
        }
        self.ids.finish(dense, rows.iter().map(|&row| key_of(row)));
        drop(tables);
        self.scaled = scaled;
        (counts, rows)
    }

    /// Column by column, renumbering whenever the radix product would overflow.
    fn assign_by_columns(
        &mut self,
        input: &EngineInput<'_>,
        source: &Source<'_>,
        levels: &[u8],
        limit: u64,
    ) -> (Vec<u32>, Vec<u32>) {
        let n = source.len();
        self.keys.clear();
        self.keys.resize(n, 0);
        let mut radix: u64 = 1;
        for (j, qi) in input.quasi_identifiers.iter().enumerate() {
            let level = levels[j] as usize;
            let width = self.widths[j][level];
            if width <= 1 {
                continue;
            }
            if radix.checked_mul(width).is_none_or(|r| r > limit) {
                radix = self.densify() as u64;
            }
            let labels = &self.labels[j][level];
            let codes = qi.codes;
            match source.rows() {
                None => {
                    for (key, &code) in self.keys.iter_mut().zip(codes) {
                        *key = *key * width + labels[code as usize] as u64;
                    }
                }
                Some(rows) => {
                    for (key, &row) in self.keys.iter_mut().zip(rows) {
                        *key = *key * width + labels[codes[row as usize] as usize] as u64;
                    }
                }
            }
            radix *= width;
        }
        let classes = self.number_keys(radix);
        let mut counts = vec![0u32; classes];
        let mut rows = vec![u32::MAX; classes];
        for (i, &c) in self.class_of.iter().enumerate() {
            let c = c as usize;
            let (row, count) = match source {
                Source::Rows(_) => (i as u32, 1),
                Source::Set(set) => (set.rows[i], set.counts[i]),
            };
            counts[c] += count;
            if rows[c] == u32::MAX {
                rows[c] = row;
            }
        }
        (counts, rows)
    }

    /// Renumbers keys densely in first-appearance order; returns the number of distinct keys.
    fn densify(&mut self) -> usize {
        let classes = self.number_keys(u64::MAX);
        for (key, &c) in self.keys.iter_mut().zip(&self.class_of) {
            *key = c as u64;
        }
        classes
    }

    /// Assigns class ids to keys in first-appearance order; `radix` bounds the key values.
    fn number_keys(&mut self, radix: u64) -> usize {
        let n = self.keys.len();
        self.class_of.clear();
        self.class_of.reserve(n);
        let mut next: u32 = 0;
        let dense = self.ids.begin(radix, n);
        for &key in &self.keys {
            let (id, new) = self.ids.id(dense, key, next);
            if new {
                next += 1;
            }
            self.class_of.push(id);
        }
        self.ids.finish(dense, self.keys.iter().copied());
        next as usize
    }
}

/// Fewest source entries grouped in partitions on the job's threads (below, scattering them costs more
/// than it saves).
const PARTITION_MIN: usize = 1 << 16;

/// Key → class id: a direct-address table for small key ranges, a hash map otherwise. Between calls the
/// table is all empty (only the slots a call used are reset).
#[derive(Debug, Default)]
struct KeyIds {
    dense: Vec<u32>,
    map: FxHashMap<u64, u32>,
}

impl KeyIds {
    /// Whether keys below `radix` from `n` entries are numbered through the direct table.
    fn would_be_dense(&self, radix: u64, n: usize) -> bool {
        radix <= DENSE_LIMIT.min((4 * n as u64).max(DENSE_FLOOR))
    }

    /// Prepares for keys below `radix` from `n` entries; returns whether the direct table is used.
    fn begin(&mut self, radix: u64, n: usize) -> bool {
        let dense = self.would_be_dense(radix, n);
        if dense {
            if self.dense.len() < radix as usize {
                self.dense.resize(radix as usize, u32::MAX);
            }
        } else {
            self.map.clear();
        }
        dense
    }

    /// The id of `key`, or `next` when it is new (then the flag is true).
    #[inline]
    fn id(&mut self, dense: bool, key: u64, next: u32) -> (u32, bool) {
        if dense {
            let slot = &mut self.dense[key as usize];
            if *slot == u32::MAX {
                *slot = next;
                (next, true)
            } else {
                (*slot, false)
            }
        } else {
            let id = *self.map.entry(key).or_insert(next);
            (id, id == next)
        }
    }

    /// Empties the direct table again, touching only `used` keys.
    fn finish(&mut self, dense: bool, used: impl Iterator<Item = u64>) {
        if dense {
            used.for_each(|key| self.dense[key as usize] = u32::MAX);
        }
    }
}

/// Largest key range numbered through a direct-address table instead of a hash map.
const DENSE_LIMIT: u64 = 1 << 24;
/// Key ranges up to this size always use the direct-address table (it stays in cache).
const DENSE_FLOOR: u64 = 1 << 18;

/// Sorts a histogram by code and sums equal codes.
#[cfg(test)]
fn compact(h: &mut Histogram) {
    h.sort_unstable_by_key(|&(code, _)| code);
    let mut out = 0;
    for i in 0..h.len() {
        if out > 0 && h[out - 1].0 == h[i].0 {
            h[out - 1].1 += h[i].1;
        } else {
            h[out] = h[i];
            out += 1;
        }
    }
    h.truncate(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::input::{QuasiIdentifier, SensitiveAttribute};

    fn hierarchy(text: &str, table: &Table, col: usize) -> GeneralizationMap {
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
        GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(col)).unwrap()
    }

    #[test]
    fn issa_table_19_groups_into_table_20_sizes() {
        // Table 19 codes (race, marital, age), as strings.
        let rows = [
            "1-2-2", "1-3-0", "1-2-1", "1-2-2", "1-2-2", "0-0-2", "1-2-0", "0-0-2", "1-2-1",
        ];
        let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.split('-').collect()).collect();
        let table = Table::from_rows(&["race", "marital", "age"], &rows);
        let maps = [
            hierarchy("0;*\n1;*", &table, 0),
            hierarchy("0;*\n2;*\n3;*", &table, 1),
            hierarchy("0;*\n1;*\n2;*", &table, 2),
        ];
        let input = EngineInput {
            rows: 9,
            quasi_identifiers: (0..3)
                .map(|j| QuasiIdentifier {
                    name: "q",
                    codes: &table.column(j).codes,
                    hierarchy: &maps[j],
                })
                .collect(),
            sensitive: vec![],
        };
        let mut g = Grouper::new(&input);
        let set = g.group_rows(&input, &[0, 0, 0], false);
        let mut sizes = set.counts().to_vec();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![1, 1, 2, 2, 3]);
        // rollup to [0,1,0] merges the two marital codes of race 1 with age 0: 1-3-0 and 1-2-0
        let up = g.rollup(&input, &set, &[0, 1, 0]);
        let direct = g.group_rows(&input, &[0, 1, 0], false);
        assert_eq!(up.counts(), direct.counts());
        let mut sizes = up.counts().to_vec();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![2, 2, 2, 3]);
    }

    #[test]
    fn histograms_merge_on_rollup_and_dense_renumbering_is_exact() {
        let table = numeric_table((0..40u32).map(|i| (i % 7, i % 5)));
        let maps = [
            modulo_hierarchy(&table, 0, 2),
            modulo_hierarchy(&table, 1, 2),
        ];
        let codes: Vec<u32> = (0..40u32).map(|i| i % 3).collect();
        let input = two_column_input(&table, &maps, &codes, 3);
        let mut g = Grouper::new(&input);
        let bottom = g.group_rows(&input, &[0, 0], true);
        assert_eq!(bottom.len(), 35);
        let up = g.rollup(&input, &bottom, &[1, 1]);
        assert_eq!(up.len(), 4);
        let total: u32 = up.counts().iter().sum();
        assert_eq!(total, 40);
        for c in 0..up.len() {
            let h: u32 = up.histogram(0, c).iter().map(|&(_, n)| n).sum();
            assert_eq!(h, up.counts()[c]);
        }
        // forcing densification after every column gives the same classes
        g.radix_limit = 6;
        let direct = g.group_rows(&input, &[1, 1], true);
        assert_eq!(direct.counts(), up.counts());
        for c in 0..up.len() {
            assert_eq!(direct.histogram(0, c), up.histogram(0, c));
        }
    }

    /// A table of two numeric columns `a` and `b`, one record per pair.
    fn numeric_table(records: impl Iterator<Item = (u32, u32)>) -> Table {
        let rows: Vec<Vec<String>> = records
            .map(|(a, b)| vec![a.to_string(), b.to_string()])
            .collect();
        let rows_ref: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Table::from_rows(&["a", "b"], &rows_ref)
    }

    #[test]
    fn packed_layout_skips_single_code_columns_and_stops_past_64_bits() {
        // eight columns of 256 codes fill 64 bits; a constant column after them takes no bits
        let mut bounds = vec![256u64; 8];
        bounds.push(1);
        let (shifts, masks) = PackedRecords::layout(&bounds).unwrap();
        assert_eq!(shifts, [0, 8, 16, 24, 32, 40, 48, 56, 0]);
        assert_eq!(masks[..8], [255; 8]);
        assert_eq!(masks[8], 0);
        let (shifts, masks) = PackedRecords::layout(&[1 << 40, 1 << 24]).unwrap();
        assert_eq!(
            (shifts, masks),
            (vec![0, 40], vec![(1 << 40) - 1, (1 << 24) - 1])
        );
        assert!(PackedRecords::layout(&[1 << 40, (1 << 24) + 1]).is_none());
    }

    /// A three-level hierarchy over column `j`: the value, the value modulo `groups`, `*`.
    fn modulo_hierarchy(table: &Table, j: usize, groups: u32) -> GeneralizationMap {
        let text = table
            .column(j)
            .dictionary
            .values()
            .map(|v| {
                let n: u32 = v.parse().unwrap_or(0);
                format!("{v};{};*", n % groups)
            })
            .collect::<Vec<_>>()
            .join("\n");
        hierarchy(&text, table, j)
    }

    /// The engine input over the table's two columns and one sensitive attribute of `distinct` codes.
    fn two_column_input<'a>(
        table: &'a Table,
        maps: &'a [GeneralizationMap; 2],
        codes: &'a [u32],
        distinct: usize,
    ) -> EngineInput<'a> {
        EngineInput {
            rows: table.row_count(),
            quasi_identifiers: (0..2)
                .map(|j| QuasiIdentifier {
                    name: "q",
                    codes: &table.column(j).codes,
                    hierarchy: &maps[j],
                })
                .collect(),
            sensitive: vec![SensitiveAttribute {
                name: "s",
                codes,
                distinct,
            }],
        }
    }

    proptest::proptest! {
        /// Grouping on several threads gives the classes, sizes, first rows, histograms and class of
        /// every entry of the sequential pass, from records and after a rollup.
        #[test]
        fn parallel_grouping_equals_the_sequential_pass(
            records in proptest::collection::vec((0u32..9, 0u32..7, 0u32..4), 1..200),
            levels in (0u8..3, 0u8..3),
        ) {
            let table = numeric_table(records.iter().map(|&(a, b, _)| (a, b)));
            let maps = [modulo_hierarchy(&table, 0, 3), modulo_hierarchy(&table, 1, 3)];
            let codes: Vec<u32> = records.iter().map(|&(_, _, c)| c).collect();
            let input = two_column_input(&table, &maps, &codes, 4);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            pool.install(|| {
                let mut sequential = Grouper::new(&input);
                sequential.partition_min = usize::MAX;
                let mut parallel = Grouper::new(&input);
                parallel.partition_min = 1;
                // codes read column by column instead of from the packed words, and a sibling
                let mut unpacked = Grouper::new(&input);
                proptest::prop_assert!(unpacked.packed.is_some());
                unpacked.packed = None;
                unpacked.partition_min = 1;
                let mut sibling = parallel.sibling();
                sibling.partition_min = usize::MAX;
                let s0 = sequential.group_rows(&input, &[0, 0], true);
                let s0_classes = sequential.class_of().to_vec();
                let top = [levels.0, levels.1];
                let s1 = sequential.rollup(&input, &s0, &top);
                let s1_classes = sequential.class_of().to_vec();
                for other in [&mut parallel, &mut unpacked, &mut sibling] {
                    let o0 = other.group_rows(&input, &[0, 0], true);
                    proptest::prop_assert_eq!(&s0_classes[..], other.class_of());
                    let o1 = other.rollup(&input, &o0, &top);
                    proptest::prop_assert_eq!(&s1_classes[..], other.class_of());
                    for (s, p) in [(&s0, &o0), (&s1, &o1)] {
                        proptest::prop_assert_eq!(s.counts(), p.counts());
                        proptest::prop_assert_eq!(s.representative_rows(), p.representative_rows());
                        for c in 0..s.len() {
                            proptest::prop_assert_eq!(s.histogram(0, c), p.histogram(0, c));
                        }
                    }
                }
                Ok(())
            })?;
        }

        /// Value sets (bitsets) give every class the same number of distinct values as histograms, when
        /// grouped from records and after rollups, for domains of one and of several words.
        #[test]
        fn value_sets_count_distinct_values_like_histograms(
            records in proptest::collection::vec((0u32..6, 0u32..5, 0u32..3), 1..60),
            values in proptest::sample::select(vec![3usize, 64, 65, 130]),
            top in (0u8..3, 0u8..3),
        ) {
            let table = numeric_table(records.iter().map(|&(a, b, _)| (a, b)));
            // sensitive codes spread over the whole domain of `values` codes
            let codes: Vec<u32> = records
                .iter()
                .map(|&(a, b, s)| (s * 61 + a * 7 + b) % values as u32)
                .collect();
            let maps = [modulo_hierarchy(&table, 0, 2), modulo_hierarchy(&table, 1, 2)];
            let input = two_column_input(&table, &maps, &codes, values);
            let mut histograms = Grouper::new(&input);
            let mut sets = Grouper::new(&input);
            sets.keep_value_sets_only(vec![true]);
            let h0 = histograms.group_rows(&input, &[0, 0], true);
            let s0 = sets.group_rows(&input, &[0, 0], true);
            let levels = [top.0.min(2), top.1.min(2)];
            let h1 = histograms.rollup(&input, &h0, &levels);
            let s1 = sets.rollup(&input, &s0, &levels);
            for (h, s) in [(&h0, &s0), (&h1, &s1)] {
                proptest::prop_assert_eq!(h.counts(), s.counts());
                for c in 0..h.len() {
                    proptest::prop_assert!(s.histogram(0, c).is_empty());
                    proptest::prop_assert_eq!(
                        h.distinct_values(0, c),
                        h.histogram(0, c).len() as u64
                    );
                    proptest::prop_assert_eq!(h.distinct_values(0, c), s.distinct_values(0, c));
                }
            }
        }

        /// Gathering sums equal codes per class and keeps each class sorted by code, whether its
        /// entries arrive in order (one source) or not (several), like a reference map does.
        #[test]
        fn gather_sums_and_sorts_like_a_map(
            sources in proptest::collection::vec(
                (0u32..4, proptest::collection::btree_map(0u32..9, 1u32..5, 0..5)),
                0..12,
            ),
        ) {
            let class_of: Vec<u32> = sources.iter().map(|&(c, _)| c).collect();
            let entries: Vec<Vec<(u32, u32)>> =
                sources.iter().map(|(_, h)| h.iter().map(|(&k, &v)| (k, v)).collect()).collect();
            let gathered = ClassHistograms::gather(4, 9, &class_of, |i| &entries[i]);
            for class in 0..4u32 {
                let mut expected = std::collections::BTreeMap::new();
                for (_, h) in sources.iter().filter(|&&(c, _)| c == class) {
                    for (&code, &n) in h {
                        *expected.entry(code).or_insert(0u32) += n;
                    }
                }
                let expected: Vec<(u32, u32)> = expected.into_iter().collect();
                proptest::prop_assert_eq!(gathered.class(class as usize), expected.as_slice());
            }
        }
    }
}
