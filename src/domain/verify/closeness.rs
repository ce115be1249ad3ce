//! The earth mover's distance of a published class, recomputed from value texts for verification,
//! independently of the engine's [`crate::core::privacy::EarthMovers`]: values are looked up by text,
//! and the hierarchical distance uses the tree-metric form instead of Li et al.'s per-node minimum.
//!
//! With `s` class records and `N` table records, every term is scaled by `s·N` so that the distance is an
//! exact fraction (note `notes/hsu-2008-sensitive-attribute-protection.md` §1.4):
//! - equal: `½ Σ_v |p_v − q_v|`;
//! - ordered: `Σ_i |Σ_{rank ≤ i} (p − q)| / (m − 1)`;
//! - hierarchical: `d(x, y) = height(LCA)/H` is the path length in the tree whose edges all weigh
//!   `1/(2H)`, and the EMD on a tree metric is `Σ_edges weight · |mass difference below the edge|`, so
//!   `EMD = Σ_{nodes v ≠ root} |Σ_{leaves under v} (p − q)| / (2H)`.

use std::collections::HashMap;

use crate::core::privacy::Ratio;

use super::requirement::ClosenessGround;

/// EMD between the class with `values` (text → records) and the table distribution `global`.
pub(crate) fn earth_movers_distance(
    values: &HashMap<&str, u64>,
    global: &HashMap<String, u64>,
    ground: &ClosenessGround,
) -> Ratio {
    let size: u64 = values.values().sum();
    let total: u64 = global.values().sum();
    let zero = Ratio {
        numerator: 0,
        denominator: 1,
    };
    if size == 0 || total == 0 {
        return zero;
    }
    // (p − q)·s·N for every value of the table (a class holds no value the table lacks)
    let difference = |value: &str, table_count: u64| -> i128 {
        let class_count = values.get(value).copied().unwrap_or(0);
        i128::from(class_count) * i128::from(total) - i128::from(table_count) * i128::from(size)
    };
    let scale = u128::from(size) * u128::from(total);
    match ground {
        ClosenessGround::Equal => {
            let sum: u128 = global
                .iter()
                .map(|(v, &n)| difference(v, n).unsigned_abs())
                .sum();
            Ratio {
                numerator: sum,
                denominator: 2 * scale,
            }
        }
        ClosenessGround::Ordered(rank) => {
            let m = rank.len();
            if m <= 1 {
                return zero;
            }
            let mut by_rank = vec![0i128; m];
            for (v, &n) in global {
                if let Some(&r) = rank.get(v) {
                    by_rank[r] += difference(v, n);
                }
            }
            let mut cumulative = 0i128;
            let mut sum = 0u128;
            for d in by_rank {
                cumulative += d;
                sum += cumulative.unsigned_abs();
            }
            Ratio {
                numerator: sum,
                denominator: (m as u128 - 1) * scale,
            }
        }
        ClosenessGround::Hierarchical(paths) => {
            let levels = paths.values().map(Vec::len).max().unwrap_or(0);
            let top_labels: std::collections::HashSet<&str> = paths
                .values()
                .filter_map(|p| p.last().map(String::as_str))
                .collect();
            // the top level is the root when it has one label; else a root is added above it
            let (height, counted_levels) = if top_labels.len() == 1 {
                (levels, levels.saturating_sub(1))
            } else {
                (levels + 1, levels)
            };
            if height == 0 {
                return zero;
            }
            // |extra| of the leaves, then of every inner node below the root
            let mut sum = 0u128;
            let mut inner: HashMap<(usize, &str), i128> = HashMap::new();
            for (v, &n) in global {
                let d = difference(v, n);
                sum += d.unsigned_abs();
                if let Some(path) = paths.get(v) {
                    for (level, label) in path.iter().take(counted_levels).enumerate() {
                        *inner.entry((level, label.as_str())).or_insert(0) += d;
                    }
                }
            }
            sum += inner.values().map(|d| d.unsigned_abs()).sum::<u128>();
            Ratio {
                numerator: sum,
                denominator: 2 * height as u128 * scale,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn global(pairs: &[(&str, u64)]) -> HashMap<String, u64> {
        pairs.iter().map(|&(v, n)| (v.to_string(), n)).collect()
    }

    fn value(r: Ratio) -> f64 {
        r.to_f64()
    }

    /// The note's vectors (§6.1, §7) recomputed by the verifier's own formulas.
    #[test]
    fn reproduces_the_worked_examples() {
        let table = global(&[("HD", 3), ("VI", 4), ("C", 5)]);
        let block: HashMap<&str, u64> = [("HD", 2), ("VI", 2)].into();
        let emd = earth_movers_distance(&block, &table, &ClosenessGround::Equal);
        assert_eq!(emd.numerator * 12, emd.denominator * 5);

        let salaries: Vec<String> = (3..=11).map(|k| format!("{k}k")).collect();
        let uniform = global(&salaries.iter().map(|s| (s.as_str(), 1)).collect::<Vec<_>>());
        let rank = Arc::new(
            salaries
                .iter()
                .enumerate()
                .map(|(r, s)| (s.clone(), r))
                .collect(),
        );
        let p1: HashMap<&str, u64> = [("3k", 1), ("4k", 1), ("5k", 1)].into();
        let ordered = ClosenessGround::Ordered(rank);
        assert!((value(earth_movers_distance(&p1, &uniform, &ordered)) - 0.375).abs() < 1e-12);
        let p2: HashMap<&str, u64> = [("6k", 1), ("8k", 1), ("11k", 1)].into();
        let emd = earth_movers_distance(&p2, &uniform, &ordered);
        assert_eq!(emd.numerator * 6, emd.denominator);

        let tree = global(&[("a1", 1), ("a2", 1), ("b1", 1), ("b2", 1)]);
        let path = |parent: &str| vec![parent.to_string(), "*".to_string()];
        let paths = Arc::new(HashMap::from([
            ("a1".to_string(), path("A")),
            ("a2".to_string(), path("A")),
            ("b1".to_string(), path("B")),
            ("b2".to_string(), path("B")),
        ]));
        let class: HashMap<&str, u64> = [("a1", 1)].into();
        let emd = earth_movers_distance(&class, &tree, &ClosenessGround::Hierarchical(paths));
        assert_eq!(emd.numerator * 8, emd.denominator * 5);
        // without the root level, one is added: the same tree
        let rootless = Arc::new(HashMap::from([
            ("a1".to_string(), vec!["A".to_string()]),
            ("a2".to_string(), vec!["A".to_string()]),
            ("b1".to_string(), vec!["B".to_string()]),
            ("b2".to_string(), vec!["B".to_string()]),
        ]));
        let emd = earth_movers_distance(&class, &tree, &ClosenessGround::Hierarchical(rootless));
        assert_eq!(emd.numerator * 8, emd.denominator * 5);
    }

    /// The requirement through `verify`: classes are read from the rendering, suppressed ones exempt.
    #[test]
    fn verify_checks_every_published_class() {
        use crate::core::data::{GeneralizationMap, Hierarchy, Table};
        use crate::core::privacy::Decimal;
        use crate::core::render::{OutputColumn, Rendering};
        use crate::domain::models::t_closeness::ClosenessCheck;
        use crate::domain::verify::{verify, Requirement, VerificationError};

        let table = Table::from_rows(
            &["zip", "diagnosis"],
            &[
                vec!["1", "flu"],
                vec!["1", "cold"],
                vec!["2", "flu"],
                vec!["2", "cold"],
                vec!["3", "flu"],
                vec!["3", "flu"],
            ],
        );
        let rows: Vec<Vec<&str>> = vec![vec!["1", "*"], vec!["2", "*"], vec!["3", "*"]];
        let map =
            GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(0)).unwrap();
        let columns = || {
            vec![
                OutputColumn::Generalized {
                    column: table.column(0),
                    hierarchy: &map,
                    level: 0,
                },
                OutputColumn::Verbatim(table.column(1)),
            ]
        };
        let close = |t: f64| -> Requirement {
            Box::new(ClosenessCheck {
                column: "diagnosis".into(),
                t: Decimal::from_f64(t).unwrap(),
                ground: ClosenessGround::Equal,
                global: Arc::new(global(&[("flu", 4), ("cold", 2)])),
            })
        };
        // D_T = (2/3, 1/3); {flu, cold} is 1/6 away, {flu, flu} 1/3
        let none = [false; 6];
        let r = Rendering::new(columns(), &none, false);
        assert!(verify(&r, &[close(1.0 / 3.0 + 1e-9)]).is_ok());
        let e = verify(&r, &[close(0.3)]).unwrap_err();
        assert!(matches!(e, VerificationError::NotDiverse { .. }));
        assert!(e.to_string().contains("0.3-closeness on 'diagnosis'"));
        assert!(!e.to_string().contains("flu"));
        // suppressing {flu, flu} leaves classes at 1/6, still measured against the whole table
        let suppressed = [false, false, false, false, true, true];
        let r = Rendering::new(columns(), &suppressed, true);
        assert!(verify(&r, &[close(0.17)]).is_ok());
        assert!(verify(&r, &[close(0.16)]).is_err());
    }
}
