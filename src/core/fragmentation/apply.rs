//! Class changes applied to records, and the information loss of a fragmented publication.
//!
//! A repair ([`super::repair`], [`super::selectivity`]) decides how many records of an equivalence class
//! change from one class value to another; [`apply`] picks them, the smallest row ids of the changed
//! value first (note §3.7: which records change does not affect the published quasi-identifiers), in
//! that fragment's own copy of the class column.
//!
//! [`information_loss`] is the measure of Zakerzadeh et al. §5.3 (note §5.3): over n records and m
//! numeric attributes, I = Σᵢ Σⱼ |upperᵢⱼ − lowerᵢⱼ| / (n · m · |maxⱼ − minⱼ|), a term being 0 when an
//! attribute holds one value; 0 for raw data, 1 when every attribute is generalized to its whole range.

use super::repair::Change;

/// Applies `changes` of one fragment to its class column: `class[r]` is record r's class value in the
/// fragment, `group[r]` its equivalence class there. Changes of other fragments are skipped.
pub fn apply(fragment: usize, changes: &[Change], group: &[u32], class: &mut [u32]) {
    for change in changes.iter().filter(|c| c.fragment == fragment) {
        let mut left = change.records;
        for r in 0..class.len() {
            if left == 0 {
                break;
            }
            if group[r] as usize == change.class && class[r] == change.from {
                class[r] = change.to;
                left -= 1;
            }
        }
    }
}

/// The information loss of generalized numeric attributes: `cells[j]` lists attribute j's published
/// cells as `(lower, upper, records)` (every record in exactly one cell of each attribute) and
/// `ranges[j]` is the attribute's `(min, max)` over all records; an attribute of one value loses 0.
pub fn information_loss(cells: &[Vec<(f64, f64, u64)>], ranges: &[(f64, f64)]) -> f64 {
    let m = cells.len();
    let n: u64 = cells
        .first()
        .map_or(0, |c| c.iter().map(|&(_, _, n)| n).sum());
    if m == 0 || n == 0 {
        return 0.0;
    }
    let mut total = 0.0;
    for (column, &(min, max)) in cells.iter().zip(ranges) {
        let width = (max - min).abs();
        if width == 0.0 {
            continue;
        }
        total += column
            .iter()
            .map(|&(lower, upper, records)| (upper - lower).abs() / width * records as f64)
            .sum::<f64>();
    }
    total / (n as f64 * m as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_take_the_smallest_row_ids_of_their_value() {
        // fragment 1, equivalence class 0 = records 1, 3, 4; class 2 = records 0, 2
        let group = [2, 0, 2, 0, 0];
        let mut class = [7, 5, 5, 5, 9];
        let changes = [
            Change {
                fragment: 1,
                class: 0,
                from: 5,
                to: 9,
                records: 1,
            },
            Change {
                fragment: 0,
                class: 2,
                from: 7,
                to: 5,
                records: 1,
            },
        ];
        apply(1, &changes, &group, &mut class);
        assert_eq!(class, [7, 9, 5, 5, 9]);
    }

    #[test]
    fn the_information_loss_toy() {
        // one attribute over [0, 10], two records generalized to [0, 10]: 1; raw data: 0
        assert_eq!(
            information_loss(&[vec![(0.0, 10.0, 1), (0.0, 10.0, 1)]], &[(0.0, 10.0)]),
            1.0
        );
        assert_eq!(
            information_loss(&[vec![(3.0, 3.0, 1), (7.0, 7.0, 1)]], &[(0.0, 10.0)]),
            0.0
        );
        // a constant attribute counts 0; half-wide cells 0.5
        let loss = information_loss(
            &[vec![(0.0, 5.0, 1), (5.0, 10.0, 1)], vec![(1.0, 1.0, 2)]],
            &[(0.0, 10.0), (1.0, 1.0)],
        );
        assert_eq!(loss, 0.25);
        // a cell of two records weighs twice
        assert_eq!(
            information_loss(&[vec![(0.0, 10.0, 2), (4.0, 4.0, 2)]], &[(0.0, 10.0)]),
            0.5
        );
    }

    #[test]
    fn applied_repairs_give_the_repaired_counts() {
        use super::super::reconstruction::ClassCounts;
        use super::super::repair::dgbe;
        // the note's 6.4 fragments as records: per fragment, (equivalence class, class value) per record
        let counts: Vec<Vec<ClassCounts>> = vec![
            vec![vec![(0, 2), (1, 1)], vec![(1, 3)], vec![(1, 1), (2, 2)]],
            vec![
                vec![(0, 1), (1, 2)],
                vec![(0, 1), (1, 1), (2, 1)],
                vec![(1, 2), (2, 1)],
            ],
        ];
        let mut repaired = counts.clone();
        let changes = dgbe(&mut repaired, 3);
        for (t, eqs) in counts.iter().enumerate() {
            let mut group = Vec::new();
            let mut class = Vec::new();
            for (i, eq) in eqs.iter().enumerate() {
                for &(c, n) in eq {
                    for _ in 0..n {
                        group.push(i as u32);
                        class.push(c);
                    }
                }
            }
            apply(t, &changes, &group, &mut class);
            for (i, eq) in repaired[t].iter().enumerate() {
                for &(c, n) in eq {
                    let found = (0..class.len())
                        .filter(|&r| group[r] == i as u32 && class[r] == c)
                        .count() as u64;
                    assert_eq!(found, n, "fragment {t}, class {i}, value {c}");
                }
            }
        }
    }
}
