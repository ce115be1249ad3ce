//! The entropy measures of Hsu (2008, §4.2, after Gionis & Tassa): entropy loss `Π_e` (Def 4.2.1, not
//! monotone, Lemma 4.2.3), monotone entropy `Π_me` (Def 4.2.4, Lemma 4.2.5) and non-uniform entropy
//! `Π_ne` (Def 4.2.6, Lemma 4.2.7); `notes/hsu-2008-sensitive-attribute-protection.md` §3.2.
//!
//! All logarithms are base 2 and every probability comes from the original table: `Pr(a)` is the share of
//! records with value `a`, `Pr(B)` the share with a value in the cell `B`, and
//! `H(X|B) = −Σ_{a∈B} Pr(a|B)·log₂ Pr(a|B)` with `Pr(a|B) = count(a)/count(B)`. A cell `{a}` costs 0 in
//! every measure (`H(X|{a}) = 0`), and a whole-domain cell costs `H(X)`. Per record and column:
//! - `Π_e` adds `H(X|B)`;
//! - `Π_me` adds `Pr(B)·H(X|B)`;
//! - `Π_ne` adds `−log₂ Pr(a|B)` for the record's own value `a`.

use super::cells::CellColumn;

/// Entropy tables of one column: counts from the original table, conditional entropy per cell.
#[derive(Debug, Clone)]
pub struct ColumnEntropy {
    rows: u64,
    /// Records per original code.
    counts: Vec<u64>,
    /// Records whose value lies in each cell.
    cell_counts: Vec<u64>,
    /// `H(X|B)` per cell, in bits.
    cell_entropy: Vec<f64>,
}

impl ColumnEntropy {
    /// The tables of `column`.
    pub fn new(column: &CellColumn<'_>) -> Self {
        let mut counts = vec![0u64; column.domain];
        for &c in column.codes {
            counts[c as usize] += 1;
        }
        let mut cell_counts = Vec::with_capacity(column.cells.len());
        let mut cell_entropy = Vec::with_capacity(column.cells.len());
        for cell in &column.cells {
            let total: u64 = cell.covers.iter().map(|&a| counts[a as usize]).sum();
            let mut h = 0.0;
            if total > 0 {
                for &a in &cell.covers {
                    let n = counts[a as usize];
                    if n > 0 {
                        let p = n as f64 / total as f64;
                        h -= p * p.log2();
                    }
                }
            }
            cell_counts.push(total);
            cell_entropy.push(h);
        }
        Self {
            rows: column.codes.len() as u64,
            counts,
            cell_counts,
            cell_entropy,
        }
    }

    /// `Π_ne` of the column when every cell is suppressed (`Σ_a n_a·log₂(N/n_a)`): the most the column
    /// can lose, `N·H(X)`.
    pub fn suppressed_non_uniform_entropy(&self) -> f64 {
        self.counts
            .iter()
            .filter(|&&n| n > 0)
            .map(|&n| n as f64 * (self.rows as f64 / n as f64).log2())
            .sum()
    }

    /// `H(X|B)` of `cell`.
    pub fn entropy(&self, cell: u32) -> f64 {
        self.cell_entropy[cell as usize]
    }

    /// `Pr(B)·H(X|B)` of `cell`.
    pub fn monotone_entropy(&self, cell: u32) -> f64 {
        if self.rows == 0 {
            return 0.0;
        }
        self.cell_counts[cell as usize] as f64 / self.rows as f64 * self.entropy(cell)
    }

    /// `−log₂ Pr(a|B)` of value `code` published as `cell`.
    pub fn non_uniform_entropy(&self, code: u32, cell: u32) -> f64 {
        let (n, total) = (self.counts[code as usize], self.cell_counts[cell as usize]);
        if n == 0 || n >= total {
            0.0
        } else {
            (total as f64 / n as f64).log2()
        }
    }
}

/// The three entropy measures of one column, summed over its records.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EntropyLoss {
    /// `Π_e`.
    pub entropy: f64,
    /// `Π_me`.
    pub monotone_entropy: f64,
    /// `Π_ne`.
    pub non_uniform_entropy: f64,
}

impl EntropyLoss {
    /// Sums the measures over the records of `column`.
    pub fn of(column: &CellColumn<'_>, tables: &ColumnEntropy) -> Self {
        let mut out = Self::default();
        for (&code, cell) in column.codes.iter().zip(column.cell_of.iter()) {
            out.entropy += tables.entropy(cell);
            out.monotone_entropy += tables.monotone_entropy(cell);
            out.non_uniform_entropy += tables.non_uniform_entropy(code, cell);
        }
        out
    }
}

/// `Π_ne` of one record: the sum over columns of `−log₂ Pr(a|B)`.
pub fn record_non_uniform_entropy(
    columns: &[CellColumn<'_>],
    tables: &[ColumnEntropy],
    record: usize,
) -> f64 {
    columns
        .iter()
        .zip(tables)
        .map(|(c, t)| t.non_uniform_entropy(c.codes[record], c.cell_of.get(record)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::measures::cells::CellCover;

    /// One column of `counts[a]` records per value, every record kept as `{a}` except the first record of
    /// value `generalized`, published as the cell `covers`.
    fn column(
        counts: &[usize],
        generalized: u32,
        covers: &[u32],
    ) -> (Vec<u32>, Vec<u32>, Vec<CellCover>) {
        let mut codes = Vec::new();
        for (a, &n) in counts.iter().enumerate() {
            codes.extend(std::iter::repeat_n(a as u32, n));
        }
        let mut cells: Vec<CellCover> = (0..counts.len() as u32)
            .map(|a| CellCover {
                covers: vec![a],
                tree: None,
            })
            .collect();
        cells.push(CellCover {
            covers: covers.to_vec(),
            tree: None,
        });
        let mut cell_of = codes.clone();
        let first = codes.iter().position(|&c| c == generalized).unwrap();
        cell_of[first] = counts.len() as u32;
        (codes, cell_of, cells)
    }

    fn measures(counts: &[usize], generalized: u32, covers: &[u32]) -> EntropyLoss {
        let (codes, cell_of, cells) = column(counts, generalized, covers);
        let c = CellColumn {
            name: "a",
            codes: &codes,
            domain: counts.len(),
            cell_of: cell_of.into(),
            cells,
            position: Vec::new(),
        };
        EntropyLoss::of(&c, &ColumnEntropy::new(&c))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-6
    }

    /// Note §6.6, Lemma 4.2.3 at ε = 0.001: values a, b, c, d with 997, 1, 1, 1 records, x = {a,b},
    /// y = {c,d}. Generalizing d to y then to * makes Π_e fall from 1 to H(X): not monotone.
    #[test]
    fn lemma_4_2_3_entropy_loss_is_not_monotone() {
        let counts = [997, 1, 1, 1];
        let to_y = measures(&counts, 3, &[2, 3]);
        let to_root = measures(&counts, 3, &[0, 1, 2, 3]);
        assert!(close(to_y.entropy, 1.0));
        assert!(close(to_root.entropy, 0.0342189));
        assert!(to_root.entropy < to_y.entropy, "Π_e decreases along y ⊂ *");
        assert!(close(to_y.monotone_entropy, 0.002));
        assert!(close(to_root.monotone_entropy, 0.0342189));
        assert!(close(to_y.non_uniform_entropy, 1.0));
        assert!(close(to_root.non_uniform_entropy, 9.96578));
        assert!(to_y.monotone_entropy <= to_root.monotone_entropy);
        assert!(to_y.non_uniform_entropy <= to_root.non_uniform_entropy);
    }

    /// Note §6.6: a→x and b→x cost the same under Π_e and Π_me; only Π_ne tells them apart.
    #[test]
    fn non_uniform_entropy_separates_rare_values() {
        let counts = [997, 1, 1, 1];
        let a = measures(&counts, 0, &[0, 1]);
        let b = measures(&counts, 1, &[0, 1]);
        assert!(close(a.entropy, 0.0114277) && close(b.entropy, 0.0114277));
        assert!(close(a.monotone_entropy, 0.0114049) && close(b.monotone_entropy, 0.0114049));
        assert!(close(a.non_uniform_entropy, 0.0014463));
        assert!(close(b.non_uniform_entropy, 9.96290));
    }

    /// Note §6.6: China .1, India .1, Canada .45, US .35 (2, 2, 9, 7 of 20 records), Asia = {China,
    /// India}, Americas = {Canada, US}.
    #[test]
    fn asia_and_americas() {
        let counts = [2, 2, 9, 7];
        let china = measures(&counts, 0, &[0, 1]);
        let canada = measures(&counts, 2, &[2, 3]);
        let us = measures(&counts, 3, &[2, 3]);
        assert!(close(china.entropy, 1.0) && close(canada.entropy, 0.98870));
        assert!(close(china.monotone_entropy, 0.2) && close(canada.monotone_entropy, 0.79096));
        assert!(close(china.non_uniform_entropy, 1.0));
        assert!(close(canada.non_uniform_entropy, 0.83007));
        assert!(close(us.non_uniform_entropy, 1.19265));
    }
}
