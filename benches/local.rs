//! Local-recoding benchmarks: runs Mondrian on the bundled adult table and on synthetic adult-shaped
//! tables of 1 M and 10 M records several times per case and prints the median, minimum and maximum time
//! of the algorithm alone (input building and data generation excluded) with the partition statistics.
//!
//! `cargo bench --bench local` runs every case; `cargo bench --bench local -- 1m` runs cases whose name
//! contains `1m`; `--runs N` sets the repetitions (default 7; the 10 M case runs at most 3 times). The
//! 10 M case also prints the process's peak resident memory (VmHWM), meaningful when run alone.

#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anonymizer::codec::{parse_arx_hierarchy, read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::core::data::{GeneralizationMap, Table};
use anonymizer::core::input::SensitiveAttribute;
use anonymizer::core::local::{
    mondrian, Domain, LocalAttribute, LocalInput, MondrianOptions, OrderedDomain,
};
use anonymizer::core::privacy::{DistinctLDiversity, KAnonymity, PrivacyModel};
use anonymizer::synthetic::AdultShape;

/// The quasi-identifiers: age on its numeric order, the rest on the ARX hierarchies.
const QUASI_IDENTIFIERS: [&str; 8] = [
    "age",
    "sex",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
];

#[derive(Clone, Copy)]
enum Data {
    Adult,
    Synthetic(usize),
}

struct Case {
    name: &'static str,
    data: Data,
    distinct2: bool,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "mondrian/adult-k5",
            data: Data::Adult,
            distinct2: false,
        },
        Case {
            name: "mondrian/adult-k5-distinct2",
            data: Data::Adult,
            distinct2: true,
        },
        Case {
            name: "mondrian/synthetic-1m-k5",
            data: Data::Synthetic(1_000_000),
            distinct2: false,
        },
        Case {
            name: "mondrian/synthetic-10m-k5",
            data: Data::Synthetic(10_000_000),
            distinct2: false,
        },
    ]
}

fn adult_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult")
}

fn load_adult() -> Table {
    let bytes = std::fs::read(adult_dir().join("adult.csv")).expect("adult.csv");
    read_table(
        bytes.as_slice(),
        &CsvOptions {
            delimiter: b';',
            ..CsvOptions::default()
        },
    )
    .expect("adult table")
}

/// Peak resident memory of this process, from /proc/self/status.
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn run(case: &Case, adult: &Table, runs: usize) {
    let start = Instant::now();
    let table = match case.data {
        Data::Adult => adult.clone(),
        Data::Synthetic(rows) => AdultShape::from_table(adult)
            .expect("adult shape")
            .generate(rows, 1),
    };
    let generated = start.elapsed().as_secs_f64();
    let column = |name: &str| table.column(table.column_index(name).expect("column"));
    let ages = column("age");
    let order = OrderedDomain::numeric(
        ages.dictionary
            .values()
            .map(|v| v.parse::<f64>().expect("numeric age"))
            .collect(),
    );
    let maps: Vec<GeneralizationMap> = QUASI_IDENTIFIERS[1..]
        .iter()
        .map(|name| {
            let text = std::fs::read(adult_dir().join(format!("adult_hierarchy_{name}.csv")))
                .expect("hierarchy file");
            let hierarchy = parse_arx_hierarchy(&text, b';').expect("hierarchy");
            GeneralizationMap::bind(hierarchy, column(name)).expect("covered")
        })
        .collect();
    let mut quasi_identifiers = vec![LocalAttribute {
        name: "age",
        codes: &ages.codes,
        distinct: ages.dictionary.len(),
        domain: Domain::Ordered(&order),
    }];
    for (name, map) in QUASI_IDENTIFIERS[1..].iter().zip(&maps) {
        let c = column(name);
        quasi_identifiers.push(LocalAttribute {
            name,
            codes: &c.codes,
            distinct: c.dictionary.len(),
            domain: Domain::Hierarchy(map),
        });
    }
    let salary = column("salary-class");
    let input = LocalInput {
        rows: table.row_count(),
        quasi_identifiers,
        sensitive: vec![SensitiveAttribute {
            name: "salary-class",
            codes: &salary.codes,
            distinct: salary.dictionary.len(),
        }],
    };
    let mut models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: 5 })];
    if case.distinct2 {
        models.push(Box::new(DistinctLDiversity {
            slot: 0,
            attribute: "salary-class".into(),
            l: 2,
        }));
    }
    let options = MondrianOptions::default();
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let result = mondrian(&input, &models, &options, &NoControl).expect("mondrian");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        last = Some(result);
    }
    let timing = support::Timing::of(&times);
    let report = last.expect("at least one run").report;
    print!(
        "{:<30} rows {:>9}  median {:>9.2} ms  min {:>9.2}  max {:>9.2}  runs {}  groups {}  splits {}  rejected {}  depth {}  sizes {}..{}  (generated in {:.2} s)",
        case.name,
        table.row_count(),
        timing.median,
        timing.min,
        timing.max,
        runs,
        report.groups,
        report.splits,
        report.rejected_cuts,
        report.max_depth,
        report.smallest_group,
        report.largest_group,
        generated,
    );
    if matches!(case.data, Data::Synthetic(rows) if rows >= 10_000_000) {
        print!("  peak memory {}", peak_memory());
    }
    println!();
}

fn main() {
    let args = support::Args::parse(7, "mondrian/adult-k5");
    let adult = load_adult();
    for case in cases() {
        if args.selects(case.name) {
            let runs = match case.data {
                Data::Synthetic(rows) if rows >= 10_000_000 => args.runs.min(3),
                _ => args.runs,
            };
            run(&case, &adult, runs);
        }
    }
}
