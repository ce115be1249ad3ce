//! Pairs the rows of a published table with the records of its original (see the parent module): by
//! order when the rows are the records in their original order, else by content, as a maximum flow
//! from groups of equal records to the published classes whose cells cover them (found through a hash
//! index of every prefix of the class keys, column by column).

use rustc_hash::FxHashMap;

use super::{unreadable, Pairing, QuasiColumn, VerbatimColumn, REMOVED};
use crate::core::measures::{covering, Classes};
use crate::domain::spec::SpecError;
use crate::error_code::ErrorCode;

/// The published rows as the pairing sees them.
pub(super) struct Rows<'c, 'a> {
    pub(super) quasi: &'c [QuasiColumn<'a>],
    pub(super) verbatim: &'c [VerbatimColumn<'a>],
}

impl Rows<'_, '_> {
    /// Whether published row `row` can be original record `record`.
    fn matches(&self, row: usize, record: usize) -> bool {
        self.quasi.iter().all(|q| q.covers(row, record))
            && self
                .verbatim
                .iter()
                .all(|v| v.code(row) == v.original[record])
    }
}

/// The published row of every original record (`REMOVED` for a record left out).
pub(super) fn pair(
    rows: &Rows<'_, '_>,
    records: usize,
    published: usize,
    removal_allowed: bool,
) -> Result<(Vec<u32>, Pairing), SpecError> {
    if published > records {
        return Err(unreadable(format!(
            "the published table has {published} rows, more than the original's {records} records"
        )));
    }
    if published < records && !removal_allowed {
        return Err(unreadable(format!(
            "the published table has {published} rows for {records} records, but the spec keeps suppressed records (suppressed_records: \"keep\")"
        )));
    }
    if let Some(row_of) = pair_by_order(rows, records, published) {
        return Ok((row_of, Pairing::Order));
    }
    pair_by_content(rows, records, published).map(|row_of| (row_of, Pairing::Content))
}

/// Rows in record order, skipping the records the next row does not cover when rows are missing.
fn pair_by_order(rows: &Rows<'_, '_>, records: usize, published: usize) -> Option<Vec<u32>> {
    let mut row_of = Vec::with_capacity(records);
    let mut next = 0usize;
    for record in 0..records {
        if next < published && rows.matches(next, record) {
            row_of.push(next as u32);
            next += 1;
        } else if records - record > published - next {
            row_of.push(REMOVED);
        } else {
            return None;
        }
    }
    (next == published).then_some(row_of)
}

/// Records given to the published classes that cover them; see the module documentation.
fn pair_by_content(
    rows: &Rows<'_, '_>,
    records: usize,
    published: usize,
) -> Result<Vec<u32>, SpecError> {
    // published classes: same cells, same verbatim values
    let mut bounds: Vec<u64> = rows.quasi.iter().map(|q| q.cells.len() as u64).collect();
    bounds.extend(rows.verbatim.iter().map(|v| v.bound));
    let quasi_count = rows.quasi.len();
    let classes = Classes::group(published, &bounds, |row, j| {
        if j < quasi_count {
            rows.quasi[j].published[row]
        } else {
            rows.verbatim[j - quasi_count].code(row)
        }
    });
    // original groups: same values
    let mut original_bounds: Vec<u64> = rows.quasi.iter().map(|q| q.domain as u64).collect();
    original_bounds.extend(rows.verbatim.iter().map(|v| v.bound));
    let groups = Classes::group(records, &original_bounds, |record, j| {
        if j < quasi_count {
            rows.quasi[j].original[record]
        } else {
            rows.verbatim[j - quasi_count].original[record]
        }
    });
    // per column: the cells covering each value (the root cell of removed records left out)
    let covering: Vec<Vec<Vec<u32>>> = rows
        .quasi
        .iter()
        .map(|q| covering(&q.cells[..q.cells.len() - 1], q.domain))
        .collect();
    let index = ClassIndex::new(rows, &classes.representative);
    let candidates: Vec<Vec<u32>> = groups
        .representative
        .iter()
        .map(|&record| {
            let record = record as usize;
            let options: Vec<&[u32]> = (0..rows.quasi.len())
                .map(|j| &covering[j][rows.quasi[j].original[record] as usize][..])
                .collect();
            let verbatim: Vec<u32> = rows.verbatim.iter().map(|v| v.original[record]).collect();
            let mut found = Vec::new();
            index.search(&options, &verbatim, PREFIX_SEED, 0, &mut |class| {
                if rows.matches(classes.representative[class as usize] as usize, record) {
                    found.push(class);
                }
            });
            found
        })
        .collect();
    let (given, unpaired) = transport(&groups.sizes, &classes.sizes, &candidates);
    let left_out = (records - published) as u64;
    if unpaired != left_out {
        return Err(SpecError::new(
            "",
            ErrorCode::PublishedUnpaired,
            format!(
                "{} published rows cannot be paired with an original record whose values they cover and whose other columns they repeat",
                unpaired - left_out
            ),
        ));
    }
    // every class's rows are interchangeable: records take them in turn
    let mut next_row: Vec<usize> = vec![0; classes.sizes.len()];
    let mut rows_of: Vec<Vec<u32>> = vec![Vec::new(); classes.sizes.len()];
    for (row, &class) in classes.class_of.iter().enumerate() {
        rows_of[class as usize].push(row as u32);
    }
    let mut row_of = vec![REMOVED; records];
    let mut cursor: Vec<(usize, u64)> = vec![(0, 0); given.len()];
    for (record, slot) in row_of.iter_mut().enumerate() {
        let g = groups.class_of[record] as usize;
        let (at, used) = &mut cursor[g];
        let Some(&(class, take)) = given[g].get(*at) else {
            continue; // removed
        };
        let class = class as usize;
        *slot = rows_of[class][next_row[class]];
        next_row[class] += 1;
        *used += 1;
        if *used == take {
            *at += 1;
            *used = 0;
        }
    }
    Ok(row_of)
}

/// The hash a class key starts from.
const PREFIX_SEED: u64 = 0x243F_6A88_85A3_08D3;

/// The key hash of a class after one more column (`depth` keeps equal cells of different columns apart).
fn extend(hash: u64, depth: usize, value: u32) -> u64 {
    let mixed = (hash ^ (u64::from(value) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .rotate_left(23)
        .wrapping_mul(0xD6E8_FEB8_6659_FD93);
    mixed ^ depth as u64
}

/// The published classes by their cells then verbatim values, as hashes of every key prefix: the
/// classes covering a record are found by walking the columns, taking at each only the cells that cover
/// the record's value and that some class shows after the cells taken so far. A hash collision only
/// adds a candidate that [`Rows::matches`] then drops.
struct ClassIndex {
    prefixes: rustc_hash::FxHashSet<u64>,
    classes: FxHashMap<u64, Vec<u32>>,
}

impl ClassIndex {
    fn new(rows: &Rows<'_, '_>, representative: &[u32]) -> Self {
        let mut prefixes = rustc_hash::FxHashSet::default();
        let mut classes: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (class, &row) in representative.iter().enumerate() {
            let row = row as usize;
            let mut hash = PREFIX_SEED;
            let keys = rows
                .quasi
                .iter()
                .map(|q| q.published[row])
                .chain(rows.verbatim.iter().map(|v| v.code(row)));
            for (depth, key) in keys.enumerate() {
                prefixes.insert(hash);
                hash = extend(hash, depth, key);
            }
            classes.entry(hash).or_default().push(class as u32);
        }
        Self { prefixes, classes }
    }

    /// Calls `found` with every class whose key hash matches one of the quasi-identifier `options`
    /// (cells per column) followed by the `verbatim` codes, from column `depth` on with prefix `hash`.
    fn search(
        &self,
        options: &[&[u32]],
        verbatim: &[u32],
        hash: u64,
        depth: usize,
        found: &mut impl FnMut(u32),
    ) {
        if depth == options.len() + verbatim.len() {
            for &class in self.classes.get(&hash).map_or(&[][..], |c| &c[..]) {
                found(class);
            }
            return;
        }
        if !self.prefixes.contains(&hash) {
            return;
        }
        if depth < options.len() {
            for &cell in options[depth] {
                self.search(
                    options,
                    verbatim,
                    extend(hash, depth, cell),
                    depth + 1,
                    found,
                );
            }
        } else {
            let code = verbatim[depth - options.len()];
            self.search(
                options,
                verbatim,
                extend(hash, depth, code),
                depth + 1,
                found,
            );
        }
    }
}

/// How many units of each group go to which class: a maximum flow from the groups (`supply`) to the
/// classes (`capacity`) along `candidates`. The groups with the fewest candidates choose first, each
/// taking the classes with the most room; the units left are then moved by augmenting paths (a group
/// takes a full class's unit from another group that can go elsewhere), so the flow is maximum.
/// Returns each group's shares and the units no class could take.
pub(super) fn transport(
    supply: &[u64],
    capacity: &[u64],
    candidates: &[Vec<u32>],
) -> (Vec<Vec<(u32, u64)>>, u64) {
    let mut room = capacity.to_vec();
    let mut flow = Flow::default();
    // the groups sending into each class (entries may have dropped to zero)
    let mut senders: Vec<Vec<u32>> = vec![Vec::new(); capacity.len()];
    type Flow = FxHashMap<(u32, u32), u64>;
    fn send(flow: &mut Flow, senders: &mut [Vec<u32>], g: u32, c: u32, units: u64) {
        let entry = flow.entry((g, c)).or_insert(0);
        if *entry == 0 {
            senders[c as usize].push(g);
        }
        *entry += units;
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&g| candidates[g].len());
    let mut left = supply.to_vec();
    for &g in &order {
        let mut choices = candidates[g].clone();
        choices.sort_by_key(|&c| std::cmp::Reverse(room[c as usize]));
        for class in choices {
            let take = left[g].min(room[class as usize]);
            if take > 0 {
                room[class as usize] -= take;
                send(&mut flow, &mut senders, g as u32, class, take);
                left[g] -= take;
            }
        }
    }
    // augmenting paths: group → candidate class → a group sending into it → another class …
    let groups = candidates.len();
    let mut class_from = vec![u32::MAX; capacity.len()];
    let mut group_from = vec![u32::MAX; groups];
    let mut seen_class = vec![u32::MAX; capacity.len()];
    let mut seen_group = vec![u32::MAX; groups];
    let mut search = 0u32;
    for &start in &order {
        while left[start] > 0 {
            search += 1;
            let mut queue = std::collections::VecDeque::from([start as u32]);
            seen_group[start] = search;
            let mut end = None;
            'bfs: while let Some(g) = queue.pop_front() {
                for &c in &candidates[g as usize] {
                    if seen_class[c as usize] == search {
                        continue;
                    }
                    seen_class[c as usize] = search;
                    class_from[c as usize] = g;
                    if room[c as usize] > 0 {
                        end = Some(c);
                        break 'bfs;
                    }
                    for &other in &senders[c as usize] {
                        if seen_group[other as usize] != search
                            && flow.get(&(other, c)).copied().unwrap_or(0) > 0
                        {
                            seen_group[other as usize] = search;
                            group_from[other as usize] = c;
                            queue.push_back(other);
                        }
                    }
                }
            }
            let Some(end) = end else {
                break; // no path: the rest of this group cannot be paired
            };
            // the bottleneck along the path
            let mut units = left[start].min(room[end as usize]);
            let mut c = end;
            loop {
                let g = class_from[c as usize];
                if g as usize == start {
                    break;
                }
                let back = group_from[g as usize];
                units = units.min(flow.get(&(g, back)).copied().unwrap_or(0));
                c = back;
            }
            let mut c = end;
            loop {
                let g = class_from[c as usize];
                send(&mut flow, &mut senders, g, c, units);
                if g as usize == start {
                    break;
                }
                let back = group_from[g as usize];
                if let Some(f) = flow.get_mut(&(g, back)) {
                    *f -= units;
                }
                c = back;
            }
            room[end as usize] -= units;
            left[start] -= units;
        }
    }
    let mut given: Vec<Vec<(u32, u64)>> = vec![Vec::new(); groups];
    for ((g, c), units) in flow {
        if units > 0 {
            given[g as usize].push((c, units));
        }
    }
    (given, left.iter().sum())
}
