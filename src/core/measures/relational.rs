//! Relational information loss (Hsu 2008, §4.3, Example 4.3.1 and Table 4.3-3;
//! `notes/hsu-2008-sensitive-attribute-protection.md` §3.3 and §6.4): how well the published table
//! answers the group-by queries `GROUP BY A, S` that relate one quasi-identifier A to a sensitive
//! attribute S, which the volume-based measures ignore (Table 4.3-2's two tables lose the same under all
//! of them, yet one keeps every such relation and the other none).
//!
//! For each original value a of A, the original distribution D(S | A = a) is compared with its estimate
//! from the published table. A record whose cell covers a takes part with weight Pr(a | cell) (the share
//! of the cell's original records that have a: the thesis's independence-corrected estimate D^ic) or
//! with weight 1 (the uncorrected D^nc). The distance is the total variation ½ Σ_s |D − D̂| (the EMD with
//! equal ground distance); a value no published record covers is at distance 1. Each attribute's figure
//! is the mean over its values weighted by Pr(a); 0 keeps every relation, 1 none.
//!
//! Cost: records are aggregated into (cell, sensitive value) counts once per attribute; each value then
//! sums the counts of the cells covering it, `O(Σ_a Σ_{cells ∋ a} values of S in the cell)`.

use rayon::prelude::*;
use serde::Serialize;

use super::cells::CellColumn;
use super::variance::SensitiveColumn;

/// The relational loss of one sensitive attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelationalLoss {
    /// The sensitive attribute S.
    pub attribute: String,
    /// Mean over the quasi-identifiers of `corrected`.
    pub corrected: f64,
    /// Mean over the quasi-identifiers of `uncorrected`.
    pub uncorrected: f64,
    /// Per quasi-identifier A, in lattice order.
    pub attributes: Vec<RelationalAttribute>,
}

/// The relational loss between one quasi-identifier and one sensitive attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelationalAttribute {
    /// The quasi-identifier A.
    pub attribute: String,
    /// Σ_a Pr(a) · TV(D(S | a), D^ic(S | a)).
    pub corrected: f64,
    /// Σ_a Pr(a) · TV(D(S | a), D^nc(S | a)).
    pub uncorrected: f64,
}

/// The relational loss of every sensitive attribute against every published quasi-identifier column.
pub fn relational_loss(
    columns: &[CellColumn<'_>],
    sensitive: &[SensitiveColumn<'_>],
) -> Vec<RelationalLoss> {
    relational_loss_counting(columns, sensitive, DENSE_PAIRS)
}

/// [`relational_loss`], counting in dense tables of at most `dense` cells (tests set 0 to sort).
fn relational_loss_counting(
    columns: &[CellColumn<'_>],
    sensitive: &[SensitiveColumn<'_>],
    dense: usize,
) -> Vec<RelationalLoss> {
    sensitive
        .iter()
        .map(|s| {
            let attributes: Vec<RelationalAttribute> = columns
                .par_iter()
                .map(|column| of_attribute(column, s, dense))
                .collect();
            let mean = |f: fn(&RelationalAttribute) -> f64| {
                if attributes.is_empty() {
                    0.0
                } else {
                    attributes.iter().map(f).sum::<f64>() / attributes.len() as f64
                }
            };
            RelationalLoss {
                attribute: s.name.to_string(),
                corrected: mean(|a| a.corrected),
                uncorrected: mean(|a| a.uncorrected),
                attributes,
            }
        })
        .collect()
}

/// Most `(major, sensitive value)` cells counted in a dense table instead of by sorting.
const DENSE_PAIRS: usize = 1 << 22;

/// The `(major << 32 | s, count)` pairs of `rows` records, record `r` being `(major(r), s(r))` with
/// majors below `majors` and values below `values`, sorted by key with equal keys summed: counted in
/// a dense table when `majors · values` is at most `dense` and at most eight per record, else sorted.
fn counted(
    rows: usize,
    (majors, values, dense): (usize, usize, usize),
    major: impl Fn(usize) -> u32,
    s: impl Fn(usize) -> u32,
) -> Vec<(u64, u32)> {
    let key = |major: u32, s: u32| (u64::from(major) << 32) | u64::from(s);
    let cells = majors.saturating_mul(values);
    // a table far larger than the records would cost more to scan than sorting them
    if cells <= dense && cells <= rows.saturating_mul(8) {
        let mut table = vec![0u32; majors * values];
        for r in 0..rows {
            table[major(r) as usize * values + s(r) as usize] += 1;
        }
        return table
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(at, &n)| (key((at / values) as u32, (at % values) as u32), n))
            .collect();
    }
    let mut pairs: Vec<(u64, u32)> = (0..rows).map(|r| (key(major(r), s(r)), 1)).collect();
    pairs.sort_unstable_by_key(|p| p.0);
    let mut out: Vec<(u64, u32)> = Vec::with_capacity(pairs.len());
    for (key, n) in pairs {
        match out.last_mut() {
            Some(last) if last.0 == key => last.1 += n,
            _ => out.push((key, n)),
        }
    }
    out
}

fn of_attribute(
    column: &CellColumn<'_>,
    sensitive: &SensitiveColumn<'_>,
    dense: usize,
) -> RelationalAttribute {
    let rows = column.codes.len();
    let values = sensitive.codes.iter().max().map_or(0, |&m| m as usize + 1);
    let mut result = RelationalAttribute {
        attribute: column.name.to_string(),
        corrected: 0.0,
        uncorrected: 0.0,
    };
    if rows == 0 || values == 0 {
        return result;
    }
    // (original value, s) and (cell, s) counts, each sorted by its major key
    let s = |r: usize| sensitive.codes[r];
    let original = counted(rows, (column.domain, values, dense), |r| column.codes[r], s);
    let published = counted(
        rows,
        (column.cells.len(), values, dense),
        |r| column.cell_of.get(r),
        s,
    );
    let starts = |pairs: &[(u64, u32)], majors: usize| {
        let mut starts = vec![0usize; majors + 1];
        for &(k, _) in pairs {
            starts[(k >> 32) as usize + 1] += 1;
        }
        for i in 0..majors {
            starts[i + 1] += starts[i];
        }
        starts
    };
    let original_starts = starts(&original, column.domain);
    let cell_starts = starts(&published, column.cells.len());
    let mut value_count = vec![0f64; column.domain];
    for &code in column.codes {
        value_count[code as usize] += 1.0;
    }
    let cell_count: Vec<f64> = column
        .cells
        .iter()
        .map(|cell| cell.covers.iter().map(|&c| value_count[c as usize]).sum())
        .collect();
    let covering = column.covering();
    // per value: dense scratch over S with the values touched
    let mut truth = vec![0f64; values];
    let mut corrected = vec![0f64; values];
    let mut uncorrected = vec![0f64; values];
    let mut touched: Vec<u32> = Vec::new();
    let mut seen = vec![false; values];
    let n = rows as f64;
    for a in 0..column.domain {
        if value_count[a] == 0.0 {
            continue;
        }
        let mut touch = |s: u32, touched: &mut Vec<u32>| {
            if !seen[s as usize] {
                seen[s as usize] = true;
                touched.push(s);
            }
        };
        for &(k, count) in &original[original_starts[a]..original_starts[a + 1]] {
            let s = (k & 0xFFFF_FFFF) as u32;
            truth[s as usize] += f64::from(count);
            touch(s, &mut touched);
        }
        let (mut weight_c, mut weight_u) = (0.0, 0.0);
        for &cell in &covering[a] {
            let share = value_count[a] / cell_count[cell as usize];
            let cell = cell as usize;
            for &(k, count) in &published[cell_starts[cell]..cell_starts[cell + 1]] {
                let s = (k & 0xFFFF_FFFF) as u32;
                let count = f64::from(count);
                corrected[s as usize] += count * share;
                uncorrected[s as usize] += count;
                weight_c += count * share;
                weight_u += count;
                touch(s, &mut touched);
            }
        }
        let tv = |estimate: &[f64], weight: f64| -> f64 {
            if weight <= 0.0 {
                return 1.0;
            }
            touched
                .iter()
                .map(|&s| {
                    (truth[s as usize] / value_count[a] - estimate[s as usize] / weight).abs()
                })
                .sum::<f64>()
                / 2.0
        };
        let share = value_count[a] / n;
        result.corrected += share * tv(&corrected, weight_c);
        result.uncorrected += share * tv(&uncorrected, weight_u);
        for &s in &touched {
            truth[s as usize] = 0.0;
            corrected[s as usize] = 0.0;
            uncorrected[s as usize] = 0.0;
            seen[s as usize] = false;
        }
        touched.clear();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::measures::distance::EmdDistance;

    /// Hsu 2008, Table 4.3-1 (gender, nationality, disease) and a publication given by each record's
    /// cell per column (`covers` lists each cell's original codes).
    fn column<'a>(
        name: &'a str,
        codes: &'a [u32],
        ids: Vec<u32>,
        covers: &[&[u32]],
    ) -> CellColumn<'a> {
        CellColumn::from_cells(name, codes, 2, &ids, covers)
    }

    #[test]
    fn table_4_3_3_tells_the_two_tables_of_example_4_3_1_apart() {
        // gender M 0 / F 1; nationality U.S. 0 / Canada 1; disease Flu 0 / Cold 1
        let gender = [0, 0, 1, 1, 0, 0, 1, 1];
        let nationality = [0, 1, 0, 1, 0, 1, 0, 1];
        let disease = [0, 1, 0, 1, 0, 0, 1, 1];
        let distance = EmdDistance::equal(&disease, 2);
        let s = SensitiveColumn {
            name: "disease",
            codes: &disease,
            distance: &distance,
        };
        // cells: 0 and 1 the values, 2 = `*`
        let both: &[&[u32]] = &[&[0], &[1], &[0, 1]];
        // Table 4.3-2(1): rows 1–4 (*, nationality), rows 5–8 (gender, *)
        let one = [
            column("gender", &gender, vec![2, 2, 2, 2, 0, 0, 1, 1], both),
            column(
                "nationality",
                &nationality,
                vec![0, 1, 0, 1, 2, 2, 2, 2],
                both,
            ),
        ];
        let r = &relational_loss(&one, &[s])[0];
        // D^ic equals the original distribution for every group (3/4 against 1/4 each); D^nc does
        // not (M: Cold 2/6 against 1/4, a total variation of 1/12, and so for every group)
        assert!(r.corrected.abs() < 1e-12, "{r:?}");
        assert!((r.uncorrected - 1.0 / 12.0).abs() < 1e-12, "{r:?}");
        // Table 4.3-2(2): rows 1–4 (gender, *), rows 5–8 (*, nationality): every estimate is 2/4
        // (or 3/6), against 3/4 and 1/4: 1/4 each
        let two = [
            column("gender", &gender, vec![0, 0, 1, 1, 2, 2, 2, 2], both),
            column(
                "nationality",
                &nationality,
                vec![2, 2, 2, 2, 0, 1, 0, 1],
                both,
            ),
        ];
        let r = &relational_loss(&two, &[s])[0];
        assert!((r.corrected - 0.25).abs() < 1e-12, "{r:?}");
        assert!((r.uncorrected - 0.25).abs() < 1e-12, "{r:?}");
        assert_eq!(r.attributes.len(), 2);
        // the original table keeps everything; all `*` keeps nothing but the table's own distribution
        let original = [
            column("gender", &gender, gender.to_vec(), both),
            column("nationality", &nationality, nationality.to_vec(), both),
        ];
        let r = &relational_loss(&original, &[s])[0];
        assert!(r.corrected.abs() < 1e-12 && r.uncorrected.abs() < 1e-12);
        let flat = [
            column("gender", &gender, vec![2; 8], both),
            column("nationality", &nationality, vec![2; 8], both),
        ];
        let r = &relational_loss(&flat, &[s])[0];
        assert!((r.corrected - 0.25).abs() < 1e-12, "{r:?}");
    }

    /// Counting in dense tables and by sorting give the same pairs, hence the same figures, on random
    /// tables with overlapping cells.
    #[test]
    fn dense_counts_equal_sorted_counts() {
        let mut generator = crate::core::rng::SplitMix64(11);
        for _ in 0..20 {
            let rows = 1 + generator.below(300) as usize;
            let codes: Vec<u32> = (0..rows).map(|_| generator.below(7) as u32).collect();
            let disease: Vec<u32> = (0..rows).map(|_| generator.below(5) as u32).collect();
            // cells: the values 0..7, the pairs {v, v + 1} and `*`
            let mut covers: Vec<Vec<u32>> = (0..7).map(|v| vec![v]).collect();
            covers.extend((0..6).map(|v| vec![v, v + 1]));
            covers.push((0..7).collect());
            let cell_of: Vec<u32> = codes
                .iter()
                .map(|&v| match generator.below(3) {
                    0 => v,
                    1 if v < 6 => 7 + v,
                    _ => 13,
                })
                .collect();
            let list: Vec<&[u32]> = covers.iter().map(Vec::as_slice).collect();
            let columns = [CellColumn::from_cells("a", &codes, 7, &cell_of, &list)];
            let distance = EmdDistance::equal(&disease, 5);
            let s = [SensitiveColumn {
                name: "disease",
                codes: &disease,
                distance: &distance,
            }];
            let major = |r: usize| cell_of[r];
            let sensitive = |r: usize| disease[r];
            assert_eq!(
                counted(rows, (14, 5, DENSE_PAIRS), major, sensitive),
                counted(rows, (14, 5, 0), major, sensitive)
            );
            assert_eq!(
                relational_loss_counting(&columns, &s, DENSE_PAIRS),
                relational_loss_counting(&columns, &s, 0)
            );
        }
    }
}
