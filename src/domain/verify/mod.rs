//! Verifies an anonymized table before it is published, independently of the engine: the rendered
//! quasi-identifier texts of every output record are grouped with hash maps (no engine dictionaries, no
//! hierarchies, no lattice), and every class must meet the requested privacy models. Records whose
//! quasi-identifiers are all `*` reveal nothing and are exempt (they are the suppressed records, or the
//! single class of the most general transformation).
//!
//! Each privacy model states its [`ClassRequirement`] (see [`crate::domain::models`]); the checks it
//! runs on a class are written again from the definitions in the modules here ([`diversity`],
//! [`closeness`], [`likeness`], [`sensitive`]), on value texts, without the engine's models. The
//! fragments of a fragmentation job are checked together by [`fragments`].

pub(crate) mod closeness;
pub(crate) mod diversity;
mod error;
pub mod fragments;
pub(crate) mod likeness;
mod population;
mod recoded;
mod requirement;
pub(crate) mod sensitive;

pub use error::VerificationError;
pub use population::{PopulationBound, PopulationLabels};
pub use recoded::{verify_recoded, ColumnCoverage, Coverage};
pub use requirement::{
    CategorySets, ClassRequirement, ClosenessGround, MinClassSize, PopulationRequirement,
    Requirement, TableLimit,
};

use std::collections::HashMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::core::render::{Rendering, SUPPRESSED};
use crate::core::risk::{population_unique_share, ClassSizes};

/// Checks that every published class has at least `min_class_size` records.
pub fn verify_min_class_size(
    rendering: &Rendering<'_>,
    min_class_size: u64,
) -> Result<(), VerificationError> {
    verify(rendering, &[Box::new(MinClassSize(min_class_size))])
}

/// Checks every requirement on every published class.
pub fn verify(
    rendering: &Rendering<'_>,
    requirements: &[Requirement],
) -> Result<(), VerificationError> {
    let header = rendering.header();
    let width = header.len();
    let quasi: Vec<usize> = (0..width)
        .filter(|&c| rendering.is_generalized(c))
        .collect();
    let classes = rendered_classes(rendering, &quasi);
    let column_of = |name: &str| {
        header
            .iter()
            .position(|&h| h == name)
            .ok_or_else(|| VerificationError::MissingColumn(name.to_string()))
    };
    for requirement in requirements {
        if let Some(limit) = requirement.table_limit() {
            check_table(rendering, &quasi, &classes, limit)?;
            continue;
        }
        if let Some((labels, bound)) = requirement.population_bound() {
            population::check_population(rendering, &classes, labels, bound, || {
                requirement.describe()
            })?;
            continue;
        }
        if let Some(needed) = requirement.min_class_size() {
            if let Some(size) = classes
                .iter()
                .map(|rows| rows.len() as u64)
                .filter(|&n| n < needed)
                .min()
            {
                return Err(VerificationError::ClassTooSmall { size, needed });
            }
            continue;
        }
        let Some(column) = requirement.column() else {
            continue;
        };
        let column = column_of(column)?;
        for rows in classes.iter() {
            let mut counts: HashMap<&str, u64> = HashMap::new();
            for &row in rows {
                *counts.entry(rendering.cell(row, column)).or_insert(0) += 1;
            }
            let satisfied = requirement.is_met(&counts);
            if !satisfied {
                return Err(VerificationError::NotDiverse {
                    size: rows.len() as u64,
                    requirement: requirement.describe(),
                });
            }
        }
    }
    Ok(())
}

/// Checks a risk threshold on the whole published table: its classes are `classes` plus, when some
/// unsuppressed records show `*` in every quasi-identifier, one class of those records.
fn check_table(
    rendering: &Rendering<'_>,
    quasi: &[usize],
    classes: &RenderedClasses,
    limit: TableLimit,
) -> Result<(), VerificationError> {
    let mut sizes: Vec<u64> = classes.iter().map(|rows| rows.len() as u64).collect();
    let starred = rendering
        .rows()
        .filter(|&row| {
            !rendering.is_suppressed(row)
                && quasi.iter().all(|&c| rendering.cell(row, c) == SUPPRESSED)
        })
        .count() as u64;
    if starred > 0 {
        sizes.push(starred);
    }
    let records: u64 = sizes.iter().sum();
    let share = |part: u64| {
        if records == 0 {
            0.0
        } else {
            part as f64 / records as f64
        }
    };
    let (value, bound) = match limit {
        TableLimit::AverageRisk(r) => (Some(share(sizes.len() as u64)), r),
        TableLimit::UniqueShare(u) => (
            Some(share(sizes.iter().filter(|&&s| s == 1).count() as u64)),
            u,
        ),
        TableLimit::PopulationUniques {
            threshold,
            model,
            population,
        } => (
            population_unique_share(&ClassSizes::from_sizes(sizes), population, model),
            threshold,
        ),
    };
    match value {
        Some(value) if value <= bound => Ok(()),
        _ => Err(VerificationError::TableRiskExceeded {
            requirement: limit.describe(),
            value: value.unwrap_or(f64::NAN),
        }),
    }
}

/// The records of every class of a rendered table, class after class.
struct RenderedClasses {
    /// `starts[c]..starts[c + 1]`: class `c`'s slice of `members`.
    starts: Vec<usize>,
    /// Records, class after class, in output order within a class.
    members: Vec<usize>,
}

impl RenderedClasses {
    fn iter(&self) -> impl Iterator<Item = &[usize]> {
        self.starts.windows(2).map(|w| &self.members[w[0]..w[1]])
    }
}

/// The records of every class of the rendered table: records are grouped by the texts of their
/// `quasi` cells (records whose cells are all `*` are left out), classes in order of first appearance.
/// Each column's texts are numbered first, column by column on the caller's pool; a record's key is
/// its row of numbers, packed into one integer when the columns' counts allow.
fn rendered_classes(rendering: &Rendering<'_>, quasi: &[usize]) -> RenderedClasses {
    rendered_classes_packed_below(rendering, quasi, u64::MAX)
}

/// [`rendered_classes`] with keys packed only when the product of the columns' text counts is at most
/// `limit` (tests lower it to reach the unpacked keys).
fn rendered_classes_packed_below(
    rendering: &Rendering<'_>,
    quasi: &[usize],
    limit: u64,
) -> RenderedClasses {
    let rows: Vec<usize> = rendering.rows().collect();
    // per column: the number of each listed record's text, the count of texts and the number of `*`
    let columns: Vec<(Vec<u32>, u64, Option<u32>)> = quasi
        .par_iter()
        .map(|&c| {
            // a text is numbered by its contents once per place it is stored at (equal places hold
            // equal texts), so most records cost a hash of two integers instead of their text
            let mut seen: FxHashMap<&str, u32> = FxHashMap::default();
            let mut at: FxHashMap<(usize, usize), u32> = FxHashMap::default();
            let numbers = rows
                .iter()
                .map(|&row| {
                    let text = rendering.cell(row, c);
                    *at.entry((text.as_ptr() as usize, text.len()))
                        .or_insert_with(|| {
                            let next = seen.len() as u32;
                            *seen.entry(text).or_insert(next)
                        })
                })
                .collect();
            (numbers, seen.len() as u64, seen.get(SUPPRESSED).copied())
        })
        .collect();
    let numbers: Vec<&[u32]> = columns.iter().map(|c| c.0.as_slice()).collect();
    let widths: Vec<u64> = columns.iter().map(|c| c.1).collect();
    let stars: Vec<Option<u32>> = columns.iter().map(|c| c.2).collect();
    let exempt = |k: usize| {
        stars
            .iter()
            .zip(&numbers)
            .all(|(star, column)| *star == Some(column[k]))
    };
    let packed = widths
        .iter()
        .try_fold(1u64, |product, &w| product.checked_mul(w.max(1)))
        .filter(|&product| product <= limit);
    let (class_of, sizes) = if packed.is_some() {
        number_classes(rows.len(), exempt, |k| {
            numbers.iter().zip(&widths).fold(0u64, |key, (column, &w)| {
                key * w.max(1) + u64::from(column[k])
            })
        })
    } else {
        let width = quasi.len();
        let keys: Vec<u32> = (0..rows.len())
            .flat_map(|k| numbers.iter().map(move |column| column[k]))
            .collect();
        number_classes(rows.len(), exempt, |k| &keys[k * width..(k + 1) * width])
    };
    let mut starts = Vec::with_capacity(sizes.len() + 1);
    starts.push(0);
    for size in &sizes {
        starts.push(starts[starts.len() - 1] + size);
    }
    let mut fill: Vec<usize> = starts[..sizes.len()].to_vec();
    let mut members = vec![0usize; starts[sizes.len()]];
    for (k, &class) in class_of.iter().enumerate() {
        if class != u32::MAX {
            members[fill[class as usize]] = rows[k];
            fill[class as usize] += 1;
        }
    }
    RenderedClasses { starts, members }
}

/// Classes of `records` listed records by `key`, numbered in order of first appearance, leaving out the
/// `exempt` ones: each record's class (`u32::MAX` when exempt) and each class's size.
fn number_classes<K: std::hash::Hash + Eq>(
    records: usize,
    exempt: impl Fn(usize) -> bool,
    key: impl Fn(usize) -> K,
) -> (Vec<u32>, Vec<usize>) {
    let mut class_of: Vec<u32> = vec![u32::MAX; records];
    let mut sizes: Vec<usize> = Vec::new();
    let mut ids: FxHashMap<K, u32> = FxHashMap::default();
    for k in (0..records).filter(|&k| !exempt(k)) {
        let next = sizes.len() as u32;
        let id = *ids.entry(key(k)).or_insert(next);
        if id == next {
            sizes.push(0);
        }
        class_of[k] = id;
        sizes[id as usize] += 1;
    }
    (class_of, sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::privacy::{Decimal, EntropyEstimator};
    use crate::core::render::OutputColumn;
    use crate::domain::models::d_density::DDensityCheck;
    use crate::domain::models::distinct_l_diversity::DistinctLCheck;
    use crate::domain::models::entropy_l_diversity::EntropyLCheck;
    use crate::domain::models::l_categorical_diversity::LCategoricalCheck;
    use crate::domain::models::recursive_cl_diversity::RecursiveClCheck;
    use std::sync::Arc;

    fn boxed(requirement: impl ClassRequirement + 'static) -> Requirement {
        Box::new(requirement)
    }

    #[test]
    fn counts_rendered_classes_and_exempts_suppressed_records() {
        let table = Table::from_rows(&["zip"], &[vec!["1"], vec!["1"], vec!["2"], vec!["3"]]);
        let rows: Vec<Vec<&str>> = vec![
            vec!["1", "1x", "*"],
            vec!["2", "2x", "*"],
            vec!["3", "3x", "*"],
        ];
        let map =
            GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(0)).unwrap();
        let column = |level| OutputColumn::Generalized {
            column: table.column(0),
            hierarchy: &map,
            level,
        };
        let none = [false; 4];
        // level 0: classes of sizes 2, 1, 1
        let r = Rendering::new(vec![column(0)], &none, false);
        assert_eq!(
            verify_min_class_size(&r, 2),
            Err(VerificationError::ClassTooSmall { size: 1, needed: 2 })
        );
        assert!(verify_min_class_size(&r, 1).is_ok());
        // suppressing the two singletons leaves one class of 2 plus exempt `*` records
        let suppressed = [false, false, true, true];
        let r = Rendering::new(vec![column(0)], &suppressed, false);
        assert!(verify_min_class_size(&r, 2).is_ok());
        // the top level is exempt as a whole
        let r = Rendering::new(vec![column(2)], &none, false);
        assert!(verify_min_class_size(&r, 5).is_ok());
    }

    /// Classes of sizes 2, 1, 1: average risk 3 / 4, sample uniques 2 / 4, and, with the table as its
    /// own population, population uniques 2 / 4; at the top one class of `*` (no uniques).
    #[test]
    fn table_limits_are_measured_on_the_rendered_classes() {
        use crate::core::risk::UniquenessModel;
        let table = Table::from_rows(&["zip"], &[vec!["1"], vec!["1"], vec!["2"], vec!["3"]]);
        let rows: Vec<Vec<&str>> = vec![vec!["1", "*"], vec!["2", "*"], vec!["3", "*"]];
        let map =
            GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), table.column(0)).unwrap();
        let column = |level| OutputColumn::Generalized {
            column: table.column(0),
            hierarchy: &map,
            level,
        };
        let none = [false; 4];
        let bottom = Rendering::new(vec![column(0)], &none, false);
        let top = Rendering::new(vec![column(1)], &none, false);
        let population = |threshold, population| {
            boxed(TableLimit::PopulationUniques {
                threshold,
                model: UniquenessModel::Zayatz,
                population,
            })
        };
        assert!(verify(&bottom, &[boxed(TableLimit::AverageRisk(0.75))]).is_ok());
        assert!(verify(&bottom, &[boxed(TableLimit::AverageRisk(0.7))]).is_err());
        assert!(verify(&bottom, &[boxed(TableLimit::UniqueShare(0.5))]).is_ok());
        assert!(verify(&bottom, &[population(0.5, 4)]).is_ok());
        match verify(&bottom, &[population(0.4, 4)]) {
            Err(VerificationError::TableRiskExceeded { value, requirement }) => {
                assert_eq!(value, 0.5);
                assert!(requirement.contains("zayatz"), "{requirement}");
            }
            other => panic!("{other:?}"),
        }
        assert!(verify(&top, &[population(0.0, 1000)]).is_ok());
        assert!(verify(&top, &[boxed(TableLimit::AverageRisk(0.25))]).is_ok());
    }

    /// zip 1, 1, 2, 3 against a population 1, 1, 1, 2, 3, 3 (leaves 0, 0, 0, 1, 2, 2): at level 0
    /// the classes match 3, 1 and 2 population records (δ 2/3, 1, 1/2); at the top all 6 (δ 2/3).
    #[test]
    fn population_bounds_count_the_population_under_the_published_labels() {
        let table = Table::from_rows(&["zip"], &[vec!["1"], vec!["1"], vec!["2"], vec!["3"]]);
        let rows: Vec<Vec<&str>> = vec![vec!["1", "*"], vec!["2", "*"], vec!["3", "*"]];
        let hierarchy = Hierarchy::from_rows(&rows).unwrap();
        let map = GeneralizationMap::bind(hierarchy.clone(), table.column(0)).unwrap();
        let labels = Arc::new(PopulationLabels::new(vec![(
            "zip".into(),
            hierarchy,
            vec![0, 0, 0, 1, 2, 2],
        )]));
        let bound = |bound| {
            boxed(PopulationRequirement {
                labels: Arc::clone(&labels),
                bound,
            })
        };
        let column = |level| OutputColumn::Generalized {
            column: table.column(0),
            hierarchy: &map,
            level,
        };
        let none = [false; 4];
        let bottom = Rendering::new(vec![column(0)], &none, false);
        assert!(verify(&bottom, &[bound(PopulationBound::AtLeast(1))]).is_ok());
        assert_eq!(
            verify(&bottom, &[bound(PopulationBound::AtLeast(2))]),
            Err(VerificationError::PopulationBoundFailed {
                size: 1,
                population: 1,
                requirement: "2-map".into()
            })
        );
        let presence = |min, max| bound(PopulationBound::Presence { min, max });
        assert!(verify(&bottom, &[presence(0.5, 1.0)]).is_ok());
        assert!(verify(&bottom, &[presence(0.0, 0.9)]).is_err());
        // a label repeated across levels (`A` is a leaf and the parent of `A` and `B`): published at
        // level 1 the column shows only `A`, which reads as level 0 (1 population record) or level 1
        // (4); the bound must hold under both readings
        let repeated = Table::from_rows(&["zip"], &[vec!["A"], vec!["A"], vec!["B"]]);
        let rows: Vec<Vec<&str>> = vec![vec!["A", "A", "*"], vec!["B", "A", "*"]];
        let hierarchy = Hierarchy::from_rows(&rows).unwrap();
        let map = GeneralizationMap::bind(hierarchy.clone(), repeated.column(0)).unwrap();
        let labels = Arc::new(PopulationLabels::new(vec![(
            "zip".into(),
            hierarchy,
            vec![0, 0, 1, 1],
        )]));
        let up = Rendering::new(
            vec![OutputColumn::Generalized {
                column: repeated.column(0),
                hierarchy: &map,
                level: 1,
            }],
            &[false; 3],
            false,
        );
        let at_least = |k| {
            boxed(PopulationRequirement {
                labels: Arc::clone(&labels),
                bound: PopulationBound::AtLeast(k),
            })
        };
        assert!(verify(&up, &[at_least(2)]).is_ok());
        assert!(verify(&up, &[at_least(3)]).is_err());
        // suppressing the record of zip 2 leaves classes of δ 2/3 and 1/2
        let suppressed = [false, false, true, false];
        let r = Rendering::new(vec![column(0)], &suppressed, false);
        assert!(verify(&r, &[presence(0.5, 0.7)]).is_ok());
        // no record of zip 2 at all: its population class has a share of 0, which δ_min > 0 refuses
        // at level 0 (the top holds every record)
        let without_2 = Table::from_rows(&["zip"], &[vec!["1"], vec!["1"], vec!["3"]]);
        let rows: Vec<Vec<&str>> = vec![vec!["1", "*"], vec!["2", "*"], vec!["3", "*"]];
        let map =
            GeneralizationMap::bind(Hierarchy::from_rows(&rows).unwrap(), without_2.column(0))
                .unwrap();
        let at = |level| {
            Rendering::new(
                vec![OutputColumn::Generalized {
                    column: without_2.column(0),
                    hierarchy: &map,
                    level,
                }],
                &[false; 3],
                false,
            )
        };
        assert_eq!(
            verify(&at(0), &[presence(0.1, 1.0)]),
            Err(VerificationError::PopulationBoundFailed {
                size: 0,
                population: 1,
                requirement: "(0.1, 1)-presence".into()
            })
        );
        assert!(verify(&at(0), &[presence(0.0, 1.0)]).is_ok());
        assert_eq!(verify(&at(1), &[presence(0.1, 1.0)]), Ok(()));
    }

    /// Two generalized columns, one record suppressed: classes in order of first appearance, members
    /// in output order, the same with packed and unpacked keys.
    #[test]
    fn packed_and_unpacked_keys_give_the_same_classes() {
        let table = Table::from_rows(
            &["a", "b"],
            &[
                vec!["1", "1"],
                vec!["2", "1"],
                vec!["1", "1"],
                vec!["3", "2"],
                vec!["2", "1"],
                vec!["1", "2"],
            ],
        );
        let rows: Vec<Vec<&str>> = vec![vec!["1", "*"], vec!["2", "*"], vec!["3", "*"]];
        let maps: Vec<GeneralizationMap> = (0..2)
            .map(|c| {
                let hierarchy = Hierarchy::from_rows(&rows[..if c == 0 { 3 } else { 2 }]).unwrap();
                GeneralizationMap::bind(hierarchy, table.column(c)).unwrap()
            })
            .collect();
        let columns = (0..2)
            .map(|c| OutputColumn::Generalized {
                column: table.column(c),
                hierarchy: &maps[c],
                level: 0,
            })
            .collect();
        let suppressed = [false, false, false, true, false, false];
        let r = Rendering::new(columns, &suppressed, false);
        let lists = |classes: RenderedClasses| -> Vec<Vec<usize>> {
            classes.iter().map(<[usize]>::to_vec).collect()
        };
        let expected = vec![vec![0, 2], vec![1, 4], vec![5]];
        assert_eq!(lists(rendered_classes(&r, &[0, 1])), expected);
        assert_eq!(
            lists(rendered_classes_packed_below(&r, &[0, 1], 1)),
            expected
        );
    }

    #[test]
    fn checks_l_diversity_on_rendered_classes() {
        let table = Table::from_rows(
            &["zip", "diagnosis"],
            &[
                vec!["1", "flu"],
                vec!["1", "cold"],
                vec!["1", "flu"],
                vec!["2", "flu"],
                vec!["2", "flu"],
                vec!["3", "cancer"],
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
        let distinct = |l| {
            boxed(DistinctLCheck {
                column: "diagnosis".into(),
                l,
            })
        };
        let recursive = |c: f64, l| {
            boxed(RecursiveClCheck {
                column: "diagnosis".into(),
                c: Decimal::from_f64(c).unwrap(),
                l,
            })
        };
        // classes {flu, cold, flu}, {flu, flu}, {cancer}: the last two fail with l = 2
        let none = [false; 6];
        let r = Rendering::new(columns(), &none, false);
        let e = verify(&r, &[distinct(2)]).unwrap_err();
        assert!(matches!(e, VerificationError::NotDiverse { .. }));
        assert!(!e.to_string().contains("flu") && !e.to_string().contains("cancer"));
        // suppressing them leaves {flu, cold, flu}
        let suppressed = [false, false, false, true, true, true];
        let r = Rendering::new(columns(), &suppressed, false);
        assert!(verify(&r, &[distinct(2), boxed(MinClassSize(3))]).is_ok());
        assert!(verify(&r, &[distinct(3)]).is_err());
        // entropy of (2, 1) is 0.6365 nats < ln 2
        let entropy = |l| {
            boxed(EntropyLCheck {
                column: "diagnosis".into(),
                l,
                estimator: EntropyEstimator::Shannon,
            })
        };
        assert!(verify(&r, &[entropy(2)]).is_err());
        assert!(verify(&r, &[entropy(1)]).is_ok());
        // recursive: 2 < c · 1 is strict
        assert!(verify(&r, &[recursive(2.0, 2)]).is_err());
        assert!(verify(&r, &[recursive(2.5, 2)]).is_ok());
        assert!(verify(&r, &[recursive(0.1, 1)]).is_ok());
        assert_eq!(
            verify(
                &r,
                &[boxed(DistinctLCheck {
                    column: "other".into(),
                    l: 1
                })]
            ),
            Err(VerificationError::MissingColumn("other".into()))
        );
    }

    /// Classes {flu, cold, flu}, {flu, flu}, {cancer} under Y = {cold}, respiratory = {flu},
    /// severe = {cancer}.
    #[test]
    fn checks_categorical_models_on_rendered_classes() {
        let table = Table::from_rows(
            &["zip", "diagnosis"],
            &[
                vec!["1", "flu"],
                vec!["1", "cold"],
                vec!["1", "flu"],
                vec!["2", "flu"],
                vec!["2", "flu"],
                vec!["3", "cancer"],
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
        let set = |values: &[&str]| values.iter().map(|v| v.to_string()).collect();
        let sets = CategorySets {
            categories: vec![set(&["flu"]), set(&["cancer"])],
            dont_care: set(&["cold"]),
        };
        let categorical = |l| {
            boxed(LCategoricalCheck {
                column: "diagnosis".into(),
                l,
                sets: sets.clone(),
            })
        };
        let r = Rendering::new(columns(), &[false; 6], false);
        let e = verify(&r, &[categorical(2)]).unwrap_err();
        assert!(e
            .to_string()
            .contains("2-categorical-diversity on 'diagnosis'"));
        assert!(!e.to_string().contains("flu") && !e.to_string().contains("cancer"));
        assert!(verify(&r, &[categorical(1)]).is_ok());
        // suppressing the homogeneous classes leaves {flu, cold, flu}: cover {Y, respiratory}
        let suppressed = [false, false, false, true, true, true];
        let r = Rendering::new(columns(), &suppressed, false);
        assert!(verify(&r, &[categorical(2)]).is_ok());
        assert!(verify(&r, &[categorical(3)]).is_err());
        let density = |d: f64| {
            boxed(DDensityCheck {
                column: "diagnosis".into(),
                d: Decimal::from_f64(d).unwrap(),
                mu: None,
                sets: sets.clone(),
            })
        };
        // respiratory holds 2 of 3
        assert!(verify(&r, &[density(0.67)]).is_ok());
        assert!(verify(&r, &[density(0.66)]).is_err());
    }
}
