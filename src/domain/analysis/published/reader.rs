//! Reads the texts of a published quasi-identifier back as the sets of original values they cover
//! (the inverse of the engine's rendering, `core::local::texts` and the hierarchy labels): a value of
//! the column; a label of its hierarchy at the lowest level that has it; `[low .. high]` over an ordered
//! column, by position when both ends are values (every way to split the text is tried, as values may
//! hold ` .. `), else by number on a numeric column; `*`, every value.

use rustc_hash::FxHashMap;

use crate::core::data::{Column, Dictionary};
use crate::core::local::{Domain, OrderedDomain};
use crate::core::measures::{CellCover, TreePosition};
use crate::core::render::SUPPRESSED;

/// Reads published texts as cells of one quasi-identifier.
pub(super) struct CellReader<'a> {
    values: &'a Dictionary,
    domain: Domain<'a>,
    /// Hierarchy labels: text → every (level, label code) it stands for, the lowest level first (a
    /// hierarchy may repeat a text on several levels, `80;[80,84];[80,99];[80,99]`).
    labels: FxHashMap<&'a str, Vec<(usize, u32)>>,
    /// Per level, the column codes under each label (ascending).
    members: Vec<Vec<Vec<u32>>>,
    /// The one level every published text is a label of, when there is one ([`Self::settle`]).
    level: Option<usize>,
}

impl<'a> CellReader<'a> {
    pub(super) fn new(column: &'a Column, domain: Domain<'a>) -> Self {
        let mut labels = FxHashMap::default();
        let mut members = Vec::new();
        if let Domain::Hierarchy(map) = domain {
            for level in 0..=map.max_level() {
                for (label, text) in map.hierarchy().labels(level).values().enumerate() {
                    labels
                        .entry(text)
                        .or_insert_with(Vec::new)
                        .push((level, label as u32));
                }
                let mut under = vec![Vec::new(); map.label_count(level)];
                for (code, &label) in map.codes(level).iter().enumerate() {
                    under[label as usize].push(code as u32);
                }
                members.push(under);
            }
        }
        Self {
            values: &column.dictionary,
            domain,
            labels,
            members,
            level: None,
        }
    }

    /// Settles the level of a hierarchy column whose published `texts` (`*` aside) are all labels of one
    /// level, the lowest such: a full-domain output. Texts are then read at that level. Otherwise (a
    /// local recoding mixes levels) a text standing for labels of several levels covers all of them.
    pub(super) fn settle<'t>(&mut self, texts: impl Iterator<Item = &'t str>) {
        let Domain::Hierarchy(map) = self.domain else {
            return;
        };
        let mut possible = vec![true; map.max_level() + 1];
        for text in texts.filter(|&t| t != SUPPRESSED) {
            let at = self.labels.get(text).map_or(&[][..], |o| &o[..]);
            for (level, ok) in possible.iter_mut().enumerate() {
                *ok &= at.iter().any(|&(l, _)| l == level);
            }
        }
        self.level = possible.iter().position(|&ok| ok);
    }

    /// The cell covering every value (removed records).
    pub(super) fn root(&self) -> CellCover {
        CellCover {
            covers: (0..self.values.len() as u32).collect(),
            tree: match self.domain {
                Domain::Hierarchy(map) => Some(TreePosition {
                    level: map.max_level() as u32,
                    top: map.max_level() as u32,
                }),
                Domain::Ordered(_) => None,
            },
        }
    }

    /// The cell `text` stands for, if it is one.
    pub(super) fn read(&self, text: &str) -> Option<CellCover> {
        match self.domain {
            Domain::Hierarchy(map) => {
                let top = map.max_level() as u32;
                let occurrences = self.labels.get(text).map_or(&[][..], |o| &o[..]);
                if text == SUPPRESSED {
                    // `*` is the root (suppressed records), unless the settled level is a single `*`
                    let single = self.level.filter(|&level| {
                        map.label_count(level) == 1 && occurrences.iter().any(|&(l, _)| l == level)
                    });
                    return Some(match single {
                        Some(level) => CellCover {
                            covers: self.members[level][0].clone(),
                            tree: Some(TreePosition {
                                level: level as u32,
                                top,
                            }),
                        },
                        None => self.root(),
                    });
                }
                let chosen: Vec<(usize, u32)> = match self.level {
                    Some(level) => occurrences
                        .iter()
                        .copied()
                        .filter(|&(l, _)| l == level)
                        .collect(),
                    None => occurrences.to_vec(),
                };
                let &(lowest, _) = chosen.first()?;
                let mut covers: Vec<u32> = chosen
                    .iter()
                    .flat_map(|&(level, label)| self.members[level][label as usize].iter().copied())
                    .collect();
                covers.sort_unstable();
                covers.dedup();
                Some(CellCover {
                    covers,
                    tree: Some(TreePosition {
                        level: lowest as u32,
                        top,
                    }),
                })
            }
            Domain::Ordered(order) => {
                if let Some(code) = self.values.code(text) {
                    return Some(CellCover {
                        covers: vec![code],
                        tree: None,
                    });
                }
                if text == SUPPRESSED {
                    return Some(self.root());
                }
                let (low, high) = self.rank_range(order, text)?;
                let mut covers: Vec<u32> = (low..=high).map(|rank| order.code_at(rank)).collect();
                covers.sort_unstable();
                Some(CellCover { covers, tree: None })
            }
        }
    }

    /// The ranks `[low .. high]` covers: by position when both ends are values (every way to split the
    /// text is tried, as values may hold ` .. `), else by number on a numeric column.
    fn rank_range(&self, order: &OrderedDomain, text: &str) -> Option<(u32, u32)> {
        let inner = text.strip_prefix('[')?.strip_suffix(']')?;
        let splits = || {
            inner
                .match_indices(" .. ")
                .map(move |(i, _)| (&inner[..i], &inner[i + 4..]))
        };
        for (low, high) in splits() {
            if let (Some(low), Some(high)) = (self.values.code(low), self.values.code(high)) {
                let (low, high) = (order.rank(low), order.rank(high));
                if low <= high {
                    return Some((low, high));
                }
            }
        }
        if !order.is_numeric() || order.is_empty() {
            return None;
        }
        for (low, high) in splits() {
            let (Ok(low), Ok(high)) = (low.trim().parse::<f64>(), high.trim().parse::<f64>())
            else {
                continue;
            };
            // numbers are non-decreasing along the ranks
            let number = |rank: u32| order.number(order.code_at(rank)).unwrap_or(f64::NAN);
            let ranks = order.len() as u32;
            let first = first_rank(ranks, |r| number(r) >= low);
            let end = first_rank(ranks, |r| number(r) > high);
            if first < end {
                return Some((first, end - 1));
            }
            return None;
        }
        None
    }
}

/// The first rank in `0..ranks` where `reached` holds (`ranks` when none does); `reached` is false and
/// then true along the ranks.
fn first_rank(ranks: u32, reached: impl Fn(u32) -> bool) -> u32 {
    let (mut low, mut high) = (0u32, ranks);
    while low < high {
        let middle = low + (high - low) / 2;
        if reached(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    low
}
