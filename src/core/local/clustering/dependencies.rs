//! Functional dependencies, their instances Γ and their violations (Gorla 2019, §3.2 and Example 3.2;
//! note §1.2 and [GAP-2]).
//!
//! An instance of a dependency X → Y is a distinct value combination of X ∪ Y in the original table, in
//! order of first occurrence and tagged with its dependency (instances of different dependencies are never
//! merged). When a dependency does not hold, a left-hand value with two right-hand values yields two
//! instances. A violation is a distinct left-hand value with more than one right-hand value; on the output
//! the values compared are the published ones (a hierarchy value per quasi-identifier, the original value
//! of any other column), over the published records only.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::Prepared;
use crate::core::control::Pace;
use crate::core::error::CoreError;
use crate::core::local::LocalInput;

/// An attribute of a functional dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdAttribute<'a> {
    /// Quasi-identifier number `i` of the [`LocalInput`] (generalized by the clustering).
    QuasiIdentifier(usize),
    /// A column that is never generalized (sensitive or insensitive), one code per record; its value
    /// distance is 0 for equal codes and 1 otherwise.
    Column(&'a [u32]),
}

/// A functional dependency `lhs → rhs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionalDependency<'a> {
    /// Left-hand side X.
    pub lhs: Vec<FdAttribute<'a>>,
    /// Right-hand side Y.
    pub rhs: Vec<FdAttribute<'a>>,
}

/// A resolved dependency attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attr {
    /// Quasi-identifier index.
    Qi(usize),
    /// Index into [`Gamma::columns`].
    Col(usize),
}

/// One dependency: its attributes X ∪ Y (each once) and which of them form X and Y.
#[derive(Debug, Clone)]
pub(crate) struct Fd {
    /// X ∪ Y without repeats.
    pub attrs: Vec<Attr>,
    /// Positions in `attrs` of X.
    pub lhs: Vec<usize>,
    /// Positions in `attrs` of Y.
    pub rhs: Vec<usize>,
}

/// The dependency instances Γ of a table.
pub(crate) struct Gamma<'a> {
    /// Never-generalized columns the dependencies use.
    pub columns: Vec<&'a [u32]>,
    /// The dependencies.
    pub fds: Vec<Fd>,
    /// Dependency of every instance.
    inst_fd: Vec<u32>,
    /// Start of every instance's values in `values` (one more entry than instances).
    offsets: Vec<u32>,
    /// Instance values, one per attribute of its dependency: the column code (for a quasi-identifier,
    /// the code of its column, i.e. a hierarchy leaf).
    values: Vec<u32>,
}

impl<'a> Gamma<'a> {
    /// Resolves the dependencies against the input and collects their instances.
    pub fn new(
        input: &LocalInput<'a>,
        dependencies: &[FunctionalDependency<'a>],
    ) -> Result<Self, CoreError> {
        let mut columns: Vec<&'a [u32]> = Vec::new();
        let mut fds = Vec::with_capacity(dependencies.len());
        for fd in dependencies {
            if fd.lhs.is_empty() || fd.rhs.is_empty() {
                return Err(CoreError::InvalidParameter {
                    name: "functional_dependencies",
                    problem: "a functional dependency needs attributes on both sides".into(),
                });
            }
            let mut attrs = Vec::new();
            let mut resolve = |a: &FdAttribute<'a>| -> Result<usize, CoreError> {
                let attr = match *a {
                    FdAttribute::QuasiIdentifier(i) => {
                        if i >= input.quasi_identifiers.len() {
                            return Err(CoreError::InvalidParameter {
                                name: "functional_dependencies",
                                problem: format!(
                                    "quasi-identifier {i} does not exist (there are {})",
                                    input.quasi_identifiers.len()
                                ),
                            });
                        }
                        Attr::Qi(i)
                    }
                    FdAttribute::Column(codes) => {
                        if codes.len() != input.rows {
                            return Err(CoreError::InvalidParameter {
                                name: "functional_dependencies",
                                problem: "a dependency column does not have one value per record"
                                    .into(),
                            });
                        }
                        let index = match columns.iter().position(|c| std::ptr::eq(*c, codes)) {
                            Some(index) => index,
                            None => {
                                columns.push(codes);
                                columns.len() - 1
                            }
                        };
                        Attr::Col(index)
                    }
                };
                Ok(match attrs.iter().position(|&x| x == attr) {
                    Some(p) => p,
                    None => {
                        attrs.push(attr);
                        attrs.len() - 1
                    }
                })
            };
            let lhs = fd
                .lhs
                .iter()
                .map(&mut resolve)
                .collect::<Result<Vec<_>, _>>()?;
            let rhs = fd
                .rhs
                .iter()
                .map(&mut resolve)
                .collect::<Result<Vec<_>, _>>()?;
            fds.push(Fd { attrs, lhs, rhs });
        }
        let mut gamma = Self {
            columns,
            fds,
            inst_fd: Vec::new(),
            offsets: vec![0],
            values: Vec::new(),
        };
        for f in 0..gamma.fds.len() {
            let a = gamma.fds[f].attrs.len();
            let mut keys = vec![0u32; input.rows * a];
            for r in 0..input.rows {
                for (i, &attr) in gamma.fds[f].attrs.iter().enumerate() {
                    keys[r * a + i] = gamma.value(input, attr, r);
                }
            }
            let mut seen: HashMap<&[u32], ()> = HashMap::new();
            for r in 0..input.rows {
                let key = &keys[r * a..(r + 1) * a];
                if seen.insert(key, ()).is_none() {
                    gamma.inst_fd.push(f as u32);
                    gamma.values.extend_from_slice(key);
                    gamma.offsets.push(gamma.values.len() as u32);
                }
            }
        }
        Ok(gamma)
    }

    /// The original value of a dependency attribute for a record.
    pub fn value(&self, input: &LocalInput<'_>, attr: Attr, row: usize) -> u32 {
        match attr {
            Attr::Qi(j) => input.quasi_identifiers[j].codes[row],
            Attr::Col(c) => self.columns[c][row],
        }
    }

    /// Number of instances |Γ|.
    pub fn len(&self) -> usize {
        self.inst_fd.len()
    }

    /// The dependency of instance `p`.
    pub fn fd_of(&self, p: usize) -> &Fd {
        &self.fds[self.inst_fd[p] as usize]
    }

    /// The dependency index of instance `p`.
    pub fn fd_index(&self, p: usize) -> usize {
        self.inst_fd[p] as usize
    }

    /// Instance `p`'s values, one per attribute of its dependency.
    pub fn values(&self, p: usize) -> &[u32] {
        &self.values[self.offsets[p] as usize..self.offsets[p + 1] as usize]
    }

    /// Largest number of attributes of a dependency.
    pub fn max_arity(&self) -> usize {
        self.fds.iter().map(|f| f.attrs.len()).max().unwrap_or(0)
    }

    /// Violations of the input: per dependency, distinct left-hand values with more than one
    /// right-hand value (instances are distinct X ∪ Y values, so two instances with one X differ in Y).
    pub fn input_violations(&self, pace: &mut Pace<'_>) -> Result<u64, CoreError> {
        let mut total = 0;
        for (f, fd) in self.fds.iter().enumerate() {
            pace.step(self.len())?;
            let mut mine: Vec<usize> = (0..self.len()).filter(|&p| self.fd_index(p) == f).collect();
            let lhs_cmp = |a: &usize, b: &usize| -> Ordering {
                let (va, vb) = (self.values(*a), self.values(*b));
                fd.lhs
                    .iter()
                    .map(|&i| va[i].cmp(&vb[i]))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            };
            mine.sort_by(lhs_cmp);
            pace.check()?;
            let mut i = 0;
            while i < mine.len() {
                let mut j = i + 1;
                while j < mine.len() && lhs_cmp(&mine[i], &mine[j]).is_eq() {
                    j += 1;
                }
                pace.step(j - i)?;
                if j - i > 1 {
                    total += 1;
                }
                i = j;
            }
        }
        Ok(total)
    }

    /// Violations of the published rows of `clusters` (records in no cluster are suppressed and left
    /// out): per dependency, distinct published left-hand values whose published right-hand values
    /// contradict each other. A quasi-identifier publishes its cluster's lowest common hierarchy value;
    /// two right-hand hierarchy values contradict when neither covers the other (`ibuprofen` and `*` do
    /// not: the generalized value is less precise, not different), two values of another column when
    /// they differ. So a published table that keeps every instance somewhere (Δ = 0) introduces no
    /// violation by generalizing other rows of the same left-hand value.
    pub fn output_violations(
        &self,
        prep: &Prepared<'_>,
        clusters: &[Vec<u32>],
        pace: &mut Pace<'_>,
    ) -> Result<u64, CoreError> {
        let mut nodes = Vec::new();
        let mut total = 0;
        for fd in &self.fds {
            let a = fd.attrs.len();
            // per published row and attribute: a sort key (level and label, or the column code) and the
            // anchor code that locates a hierarchy value
            let mut keys: Vec<u64> = Vec::new();
            let mut anchors: Vec<u32> = Vec::new();
            for members in clusters {
                pace.step(members.len() * (a + prep.maps.len()))?;
                prep.lca(members, &mut nodes);
                for &r in members {
                    for &attr in &fd.attrs {
                        let (key, anchor) = match attr {
                            Attr::Qi(j) => {
                                let (level, anchor) = nodes[j];
                                let label = prep.maps[j].codes(level as usize)[anchor as usize];
                                (((level as u64) << 32) | label as u64, anchor)
                            }
                            Attr::Col(c) => (self.columns[c][r as usize] as u64, 0),
                        };
                        keys.push(key);
                        anchors.push(anchor);
                    }
                }
            }
            let rows = keys.len().checked_div(a).unwrap_or(0);
            let order_of = |x: usize, y: usize, side: &[usize]| -> Ordering {
                side.iter()
                    .map(|&i| keys[x * a + i].cmp(&keys[y * a + i]))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            };
            let mut order: Vec<usize> = (0..rows).collect();
            order.sort_by(|&x, &y| order_of(x, y, &fd.lhs).then_with(|| order_of(x, y, &fd.rhs)));
            pace.check()?;
            // the right-hand values of one left-hand value agree when, per attribute, every value covers
            // the most specific one (they lie on one root-to-leaf path)
            let agree = |group: &[usize], i: usize| -> bool {
                match fd.attrs[i] {
                    Attr::Qi(j) => {
                        let map = prep.maps[j];
                        let level_of = |x: usize| (keys[x * a + i] >> 32) as usize;
                        let Some(&lowest) = group.iter().min_by_key(|&&x| level_of(x)) else {
                            return true;
                        };
                        let anchor = anchors[lowest * a + i] as usize;
                        group.iter().all(|&x| {
                            let level = level_of(x);
                            map.codes(level)[anchor] as u64 == keys[x * a + i] & 0xFFFF_FFFF
                        })
                    }
                    Attr::Col(_) => group
                        .windows(2)
                        .all(|w| keys[w[0] * a + i] == keys[w[1] * a + i]),
                }
            };
            let mut i = 0;
            while i < order.len() {
                let mut j = i + 1;
                while j < order.len() && order_of(order[i], order[j], &fd.lhs).is_eq() {
                    j += 1;
                }
                pace.step(j - i)?;
                let group = &order[i..j];
                if !fd.rhs.iter().all(|&attr| agree(group, attr)) {
                    total += 1;
                }
                i = j;
            }
        }
        Ok(total)
    }
}
