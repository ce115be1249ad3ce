//! The user's steering of a full-domain search, per quasi-identifier (ARX's minimum and maximum
//! generalization levels and attribute weights): `min_level`, `max_level` and `weight` validated against
//! the hierarchy, the job's algorithm and metric, and gathered into the engine's [`Steering`].

use crate::core::data::GeneralizationMap;
use crate::core::engine::Steering;
use crate::core::loss::MetricKind;
use crate::domain::spec::{AttributeSpec, Problems, Role, SpecError};
use crate::error_code::ErrorCode;

/// The metrics whose value sums a term per quasi-identifier, which weights scale.
const WEIGHTED_METRICS: [MetricKind; 7] = [
    MetricKind::Precision,
    MetricKind::Height,
    MetricKind::NuEntropy,
    MetricKind::Granularity,
    MetricKind::ArxEntropy,
    MetricKind::ArxLoss,
    MetricKind::ArxPrecision,
];

/// Refuses the steering fields of a column that is not a generalized quasi-identifier of a full-domain
/// job (`why` says what it is instead).
pub fn refuse_unsteered(
    attribute: &AttributeSpec,
    pointer: &str,
    why: &str,
    problems: &mut Problems,
) {
    let set = [
        ("weight", attribute.weight.is_some()),
        ("min_level", attribute.min_level.is_some()),
        ("max_level", attribute.max_level.is_some()),
    ];
    for (field, _) in set.iter().filter(|(_, given)| *given) {
        problems.push(SpecError::new(
            format!("{pointer}/{field}"),
            ErrorCode::UnsupportedOption,
            format!(
                "{field} steers the full-domain search of a generalized quasi-identifier; {why}"
            ),
        ));
    }
}

/// Why a column takes no steering, when it does not: its role, or the job's algorithm.
pub fn unsteerable(attribute: &AttributeSpec, full_domain: bool) -> Option<&'static str> {
    if attribute.role != Role::QuasiIdentifier {
        Some("this column is not a quasi-identifier")
    } else if attribute.aggregate.is_some() {
        Some("this quasi-identifier is aggregated, not generalized")
    } else if !full_domain {
        Some("local recodings and fragmentation choose each record's generalization themselves")
    } else {
        None
    }
}

/// The lowest and highest level a full-domain quasi-identifier may take, within its hierarchy.
pub fn level_bounds(
    attribute: &AttributeSpec,
    map: &GeneralizationMap,
    pointer: &str,
) -> Result<(u8, u8), SpecError> {
    let top = map.max_level() as u64;
    let within = |field: &str, level: u64| {
        if level > top {
            Err(SpecError::new(
                format!("{pointer}/{field}"),
                ErrorCode::InvalidParameter,
                format!("{field} {level} is above the hierarchy's highest level {top}"),
            ))
        } else {
            Ok(level as u8)
        }
    };
    let lowest = within("min_level", attribute.min_level.unwrap_or(0))?;
    let highest = within("max_level", attribute.max_level.unwrap_or(top))?;
    if lowest > highest {
        return Err(SpecError::new(
            format!("{pointer}/max_level"),
            ErrorCode::InvalidParameter,
            format!("max_level {highest} is below min_level {lowest}"),
        ));
    }
    Ok((lowest, highest))
}

/// The level bounds of every quasi-identifier with the spec's fixed `transformation` applied: each
/// named column's bounds become its level (which must lie within its `min_level`..`max_level`), every
/// generalized quasi-identifier must be named, and no other column may be. `columns[i]` belongs to the
/// quasi-identifier `names[i]`, whose hierarchy's top is `heights[i]`.
pub fn fix_transformation(
    transformation: &std::collections::BTreeMap<String, u64>,
    columns: &mut [SteeredColumn],
    names: &[&str],
    heights: &[usize],
) -> Result<(), SpecError> {
    let mut problems = Problems::new();
    for (name, &level) in transformation {
        let pointer = format!(
            "/transformation/{}",
            crate::domain::spec::pointer_segment(name)
        );
        let Some(i) = names.iter().position(|n| n == name) else {
            problems.push(SpecError::new(
                pointer,
                ErrorCode::InvalidParameter,
                format!(
                    "'{name}' is not a generalized quasi-identifier of this job; the transformation \
                     gives a level to each of them"
                ),
            ));
            continue;
        };
        let (lowest, highest) = columns[i].bounds;
        if level > heights[i] as u64 {
            problems.push(SpecError::new(
                pointer,
                ErrorCode::InvalidParameter,
                format!(
                    "level {level} is above the hierarchy's highest level {}",
                    heights[i]
                ),
            ));
        } else if level < u64::from(lowest) || level > u64::from(highest) {
            problems.push(SpecError::new(
                pointer,
                ErrorCode::InvalidParameter,
                format!("level {level} is outside the column's min_level..max_level {lowest}..{highest}"),
            ));
        } else {
            columns[i].bounds = (level as u8, level as u8);
        }
    }
    for name in names {
        if !transformation.contains_key(*name) {
            problems.push(SpecError::new(
                "/transformation",
                ErrorCode::InvalidParameter,
                format!("the transformation gives no level to quasi-identifier '{name}'"),
            ));
        }
    }
    problems.finish()
}

/// One quasi-identifier's steering, as declared.
#[derive(Debug, Clone)]
pub struct SteeredColumn {
    /// Where the attribute is declared (`/attributes/<name>`).
    pub pointer: String,
    /// Its allowed levels.
    pub bounds: (u8, u8),
    /// Its declared weight.
    pub weight: Option<f64>,
}

/// The engine's steering of the job's quasi-identifiers (in lattice order): level bounds when one is
/// narrower than its hierarchy, weights when one is declared (each finite and non-negative, one
/// positive, and the metric one that sums over attributes); `private` jobs take none, and jobs whose
/// models read a population table take no `min_level` (their population index reads the hierarchies'
/// own levels, not a window's).
pub fn steering(
    columns: &[SteeredColumn],
    heights: &[usize],
    metric: MetricKind,
    (private, reads_population): (bool, bool),
) -> Result<Steering, SpecError> {
    let mut problems = Problems::new();
    if reads_population {
        if let Some(column) = columns.iter().find(|c| c.bounds.0 > 0) {
            problems.push(SpecError::new(
                format!("{}/min_level", column.pointer),
                ErrorCode::UnsupportedOption,
                "min_level does not apply with a model that reads a population table (k_map with \
                 a population, delta_presence)",
            ));
        }
    }
    let bounded = columns
        .iter()
        .zip(heights)
        .any(|(c, &h)| c.bounds != (0, h as u8));
    let weighted: Vec<&SteeredColumn> = columns.iter().filter(|c| c.weight.is_some()).collect();
    if private {
        let steered = columns.iter().zip(heights).find_map(|(c, &h)| {
            if c.weight.is_some() {
                Some((c, "weight"))
            } else if c.bounds.0 > 0 {
                Some((c, "min_level"))
            } else if usize::from(c.bounds.1) < h {
                Some((c, "max_level"))
            } else {
                None
            }
        });
        if let Some((column, field)) = steered {
            return Err(SpecError::new(
                format!("{}/{field}", column.pointer),
                ErrorCode::UnsupportedOption,
                "differential privacy searches the whole lattice with its own score; level bounds \
                 and weights do not apply",
            ));
        }
        return Ok(Steering::default());
    }
    for column in &weighted {
        if let Some(w) = column.weight.filter(|w| !w.is_finite() || *w < 0.0) {
            problems.push(SpecError::new(
                format!("{}/weight", column.pointer),
                ErrorCode::InvalidParameter,
                format!("weight {w} is negative; weights are non-negative numbers"),
            ));
        }
    }
    if let Some(first) = weighted.first() {
        if !WEIGHTED_METRICS.contains(&metric) {
            problems.push(SpecError::new(
                format!("{}/weight", first.pointer),
                ErrorCode::UnsupportedOption,
                format!(
                    "weights scale the metrics that sum over attributes (precision, height, \
                     nu_entropy, granularity); metric '{}' does not",
                    metric.name()
                ),
            ));
        }
        if columns.iter().all(|c| c.weight.unwrap_or(1.0) == 0.0) {
            problems.push(SpecError::new(
                "/attributes",
                ErrorCode::InvalidParameter,
                "every quasi-identifier has weight 0: at least one needs a positive weight",
            ));
        }
    }
    problems.finish()?;
    Ok(Steering {
        level_bounds: bounded.then(|| columns.iter().map(|c| c.bounds).collect()),
        weights: (!weighted.is_empty())
            .then(|| columns.iter().map(|c| c.weight.unwrap_or(1.0)).collect()),
    })
}

#[cfg(test)]
mod tests {
    use crate::core::control::NoControl;
    use crate::core::data::Table;
    use crate::domain::run::run_job;
    use crate::domain::{prepare, JobSpec};
    use crate::error_code::ErrorCode;

    /// Eight ages 21–28 (ranges of 2, then 4, then 21-28, then *) and a sex (f up to 24, m above);
    /// 2-anonymity.
    fn table() -> Table {
        let rows: Vec<Vec<String>> = (21..=28)
            .map(|age| {
                vec![
                    age.to_string(),
                    if age <= 24 { "f" } else { "m" }.to_string(),
                ]
            })
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Table::from_rows(&["age", "sex"], &rows)
    }

    fn spec(age: &str, sex: &str, rest: &str) -> JobSpec {
        let levels: Vec<String> = (21..=28)
            .map(|a: u32| {
                let two = (a - 1) / 2 * 2 + 1;
                let four = (a - 1) / 4 * 4 + 1;
                format!(
                    r#"["{a}", "{two}-{}", "{four}-{}", "21-28", "*"]"#,
                    two + 1,
                    four + 3
                )
            })
            .collect();
        let json = format!(
            r#"{{"attributes": {{
                  "age": {{"role": "quasi_identifier", "hierarchy": {{"levels": [{}]}} {age}}},
                  "sex": {{"role": "quasi_identifier",
                           "hierarchy": {{"levels": [["f", "*"], ["m", "*"]]}} {sex}}}}},
                "privacy_models": [{{"type": "k_anonymity", "k": 2}}],
                "algorithm": {{"type": "exhaustive"}} {rest}}}"#,
            levels.join(", ")
        );
        JobSpec::from_json(json.as_bytes()).unwrap()
    }

    fn problems(spec: &JobSpec) -> Vec<(String, ErrorCode)> {
        let error = prepare(&table(), spec, &|_| Err("inline only".into())).unwrap_err();
        error.all().map(|e| (e.pointer.clone(), e.code)).collect()
    }

    /// Without bounds, 2-anonymity publishes pairs of ages and keeps sex; a min_level of 2 on age
    /// publishes ranges of four (the transformation in the hierarchy's levels, the lattice the window's);
    /// a max_level of 0 leaves no solution; a min_level of 1 on sex keeps the pairs.
    #[test]
    fn bounds_restrict_the_published_levels() {
        let table = table();
        let run = |spec: &JobSpec| {
            let done = run_job(&table, spec, &|_| Err("inline only".into()), &NoControl).unwrap();
            let outcome = done.outcome().unwrap().clone();
            let mut csv = Vec::new();
            done.write_csv(&mut csv, &crate::codec::CsvOptions::default())
                .unwrap();
            (outcome, String::from_utf8(csv).unwrap())
        };
        let (free, _) = run(&spec("", "", ""));
        assert_eq!(free.transformation, [1, 0]);
        let (bounded, csv) = run(&spec(r#", "min_level": 2"#, "", ""));
        assert_eq!(bounded.transformation, [2, 0]);
        assert!(
            csv.lines()
                .skip(1)
                .all(|l| l.starts_with("21-24,") || l.starts_with("25-28,")),
            "{csv}"
        );
        assert_eq!(bounded.search.lattice_size, 3 * 2);
        // ages kept as they are: every class has one record, and the limit is 0
        let capped = spec(r#", "max_level": 0"#, "", "");
        let error = run_job(&table, &capped, &|_| Err("inline only".into()), &NoControl)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("max_level is below its hierarchy's top"),
            "{error}"
        );
        // sex at its top: the age pairs still decide
        let (top, _) = run(&spec("", r#", "min_level": 1"#, ""));
        assert_eq!(top.transformation, [1, 1]);
    }

    /// A fixed transformation publishes exactly the table the search publishes at that node, skips the
    /// search (a one-node lattice), and is refused when incomplete, out of range or on a local job.
    #[test]
    fn a_fixed_transformation_publishes_that_node() {
        let table = table();
        let write = |spec: &JobSpec| {
            let done = run_job(&table, spec, &|_| Err("inline only".into()), &NoControl).unwrap();
            let mut csv = Vec::new();
            done.write_csv(&mut csv, &crate::codec::CsvOptions::default())
                .unwrap();
            (done.outcome().unwrap().clone(), csv)
        };
        let (searched, searched_csv) = write(&spec(r#", "min_level": 2"#, "", ""));
        let fixed = spec("", "", r#", "transformation": {"age": 2, "sex": 0}"#);
        let (outcome, csv) = write(&fixed);
        assert_eq!(outcome.transformation, searched.transformation);
        assert_eq!(csv, searched_csv);
        assert_eq!(outcome.metrics, searched.metrics);
        assert_eq!(
            (outcome.search.lattice_size, outcome.search.nodes_checked),
            (1, 1)
        );
        // a node that needs suppression beyond the limit: no solution, saying why
        let bare = spec("", "", r#", "transformation": {"age": 0, "sex": 0}"#);
        let error = run_job(&table, &bare, &|_| Err("inline only".into()), &NoControl)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("the transformation is fixed"), "{error}");
        for (extra, pointer) in [
            (r#", "transformation": {"age": 1}"#, "/transformation"),
            (
                r#", "transformation": {"age": 5, "sex": 0}"#,
                "/transformation/age",
            ),
            (
                r#", "transformation": {"age": 1, "sex": 0, "x": 0}"#,
                "/transformation/x",
            ),
        ] {
            let found = problems(&spec("", "", extra));
            assert!(
                found
                    .iter()
                    .any(|(p, c)| p == pointer && *c == ErrorCode::InvalidParameter),
                "{extra}: {found:?}"
            );
        }
        let outside = spec(
            r#", "max_level": 1"#,
            "",
            r#", "transformation": {"age": 2, "sex": 0}"#,
        );
        assert!(problems(&outside)
            .iter()
            .any(|(p, _)| p == "/transformation/age"));
        let local = JobSpec::from_json(
            br#"{"attributes": {"age": {"role": "quasi_identifier"},
                 "sex": {"role": "quasi_identifier"}},
                 "privacy_models": [{"type": "k_anonymity", "k": 2}],
                 "algorithm": {"type": "mondrian"}, "transformation": {"age": 1}}"#,
        )
        .unwrap();
        assert!(problems(&local)
            .iter()
            .any(|(p, c)| p == "/transformation" && *c == ErrorCode::UnsupportedOption));
    }

    /// With height as the metric and a weight of ½ on age (sex 1), the pairs of ages cost ½.
    #[test]
    fn weights_change_the_optimum_and_the_reported_loss() {
        let table = table();
        let weighted = spec(r#", "weight": 0.5"#, "", r#", "metric": "height""#);
        let done = run_job(
            &table,
            &weighted,
            &|_| Err("inline only".into()),
            &NoControl,
        )
        .unwrap();
        let outcome = done.outcome().unwrap();
        assert_eq!(outcome.transformation, [1, 0]);
        assert_eq!(outcome.metrics.height, 0.5);
        let report = done.report();
        assert_eq!(report.metrics.unwrap().height, 0.5);
        // weights are divided by the largest: 2 and 1 weigh as 1 and ½
        let doubled = spec(r#", "weight": 2"#, "", r#", "metric": "height""#);
        let done = run_job(&table, &doubled, &|_| Err("inline only".into()), &NoControl).unwrap();
        assert_eq!(done.outcome().unwrap().metrics.height, 1.0);
        let sex_heavy = spec(
            "",
            r#", "weight": 4, "min_level": 1"#,
            r#", "metric": "height""#,
        );
        let done = run_job(
            &table,
            &sex_heavy,
            &|_| Err("inline only".into()),
            &NoControl,
        )
        .unwrap();
        // age 1 · ¼ + sex 1 · 1
        assert_eq!(done.outcome().unwrap().metrics.height, 1.25);
    }

    /// A population model's index reads the hierarchies' own levels: min_level is refused with it.
    #[test]
    fn min_level_is_refused_with_a_population_model() {
        let column = |lowest| super::SteeredColumn {
            pointer: "/attributes/age".into(),
            bounds: (lowest, 2),
            weight: None,
        };
        let metric = crate::core::loss::MetricKind::Height;
        let error = super::steering(&[column(1)], &[3], metric, (false, true)).unwrap_err();
        assert_eq!(
            (error.pointer.as_str(), error.code),
            ("/attributes/age/min_level", ErrorCode::UnsupportedOption)
        );
        let steering = super::steering(&[column(0)], &[3], metric, (false, true)).unwrap();
        assert_eq!(steering.level_bounds, Some(vec![(0, 2)]));
    }

    #[test]
    fn invalid_steering_is_refused_with_pointers() {
        let cases: [(JobSpec, &str, ErrorCode); 7] = [
            (spec(r#", "max_level": 5"#, "", ""), "/attributes/age/max_level", ErrorCode::InvalidParameter),
            (spec(r#", "min_level": 3, "max_level": 2"#, "", ""), "/attributes/age/max_level", ErrorCode::InvalidParameter),
            (spec(r#", "weight": -1"#, "", r#", "metric": "height""#), "/attributes/age/weight", ErrorCode::InvalidParameter),
            (spec(r#", "weight": 0"#, r#", "weight": 0"#, r#", "metric": "height""#), "/attributes", ErrorCode::InvalidParameter),
            (spec(r#", "weight": 2"#, "", r#", "metric": "discernibility""#), "/attributes/age/weight", ErrorCode::UnsupportedOption),
            (
                JobSpec::from_json(
                    br#"{"attributes": {"age": {"role": "quasi_identifier", "min_level": 1},
                         "sex": {"role": "quasi_identifier"}},
                         "privacy_models": [{"type": "k_anonymity", "k": 2}],
                         "algorithm": {"type": "mondrian"}}"#,
                )
                .unwrap(),
                "/attributes/age/min_level",
                ErrorCode::UnsupportedOption,
            ),
            (
                JobSpec::from_json(
                    br#"{"attributes": {"age": {"role": "insensitive", "weight": 1},
                         "sex": {"role": "quasi_identifier", "hierarchy": {"levels": [["f", "*"], ["m", "*"]]}}},
                         "privacy_models": [{"type": "k_anonymity", "k": 2}]}"#,
                )
                .unwrap(),
                "/attributes/age/weight",
                ErrorCode::UnsupportedOption,
            ),
        ];
        for (spec, pointer, code) in cases {
            let found = problems(&spec);
            assert!(
                found.iter().any(|(p, c)| p == pointer && *c == code),
                "{pointer}: {found:?}"
            );
        }
    }
}
