//! Vertical fragmentation against unfragmented Mondrian on creditcard (30,000 records, 23 integer-coded
//! features, the binary class `default-payment-next-month`), as the fragmentation paper's experiment
//! (Zakerzadeh et al., §6): for each k, the median time of Mondrian on all features, and of the
//! fragmentation core (MI matrix with 10 equal-frequency bins, FMRMR into 2 fragments, Mondrian per
//! fragment, DGBE), with the information loss (§5.3) of both. Reading the table is excluded; the
//! fragmented job's publication and verification do not exist yet, so this is the engine's share only.
//!
//! `cargo bench --bench fragmentation` runs every case; `-- k40` filters; `--runs N` (default 5).

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Instant;

use anonymizer::codec::{read_table, CsvOptions};
use anonymizer::core::control::NoControl;
use anonymizer::core::data::Table;
use anonymizer::core::fragmentation::apply::information_loss;
use anonymizer::core::fragmentation::fmrmr::{fragment, Diagonal};
use anonymizer::core::fragmentation::pipeline::{fragment_and_anonymize, Strategy};
use anonymizer::core::local::{
    mondrian, Domain, LocalAttribute, LocalInput, MondrianOptions, OrderedDomain, RecodedCell,
    Recoding,
};
use anonymizer::core::privacy::{KAnonymity, PrivacyModel};
use anonymizer::domain::fragmentation::{mi_matrix, DEFAULT_BINS};

fn load() -> Table {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/creditcard/creditcard_int.csv");
    let bytes = std::fs::read(path).expect("tests/data/creditcard");
    read_table(
        &bytes[..],
        &CsvOptions::with_delimiter(";").expect("delimiter"),
    )
    .expect("creditcard")
}

/// Every record's `(lower, upper)` per attribute of `recoding` (whose attributes are `attributes`).
fn bounds(
    recoding: &Recoding,
    attributes: &[usize],
    orders: &[OrderedDomain],
) -> Vec<Vec<(f64, f64)>> {
    attributes
        .iter()
        .enumerate()
        .map(|(q, &j)| {
            (0..recoding.group_of().len())
                .map(|r| match recoding.cell_of_record(r, q) {
                    Some(RecodedCell::Range { low, high }) => {
                        let order = &orders[j];
                        let at = |rank| order.number(order.code_at(rank)).unwrap_or(0.0);
                        (at(low), at(high))
                    }
                    _ => (0.0, 0.0),
                })
                .collect()
        })
        .collect()
}

fn main() {
    let args = support::Args::parse(5, "k40");
    let table = load();
    let columns = table.columns();
    let (class, features) = columns.split_last().expect("class column");
    let n = features.len();
    let orders: Vec<OrderedDomain> = features
        .iter()
        .map(|c| {
            OrderedDomain::numeric(
                c.dictionary
                    .values()
                    .map(|v| v.parse().unwrap_or(0.0))
                    .collect(),
            )
        })
        .collect();
    let ranges: Vec<(f64, f64)> = orders
        .iter()
        .map(|o| {
            let numbers: Vec<f64> = (0..o.len() as u32).filter_map(|c| o.number(c)).collect();
            let min = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let max = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (min, max)
        })
        .collect();
    let input = LocalInput {
        rows: table.row_count(),
        quasi_identifiers: (0..n)
            .map(|j| LocalAttribute {
                name: &features[j].name,
                codes: &features[j].codes,
                distinct: features[j].dictionary.len(),
                domain: Domain::Ordered(&orders[j]),
            })
            .collect(),
        sensitive: vec![],
    };
    println!(
        "case                 unfragmented: median (min-max), IL     fragmented DGBE: median (min-max), IL, changes"
    );
    for k in [10u64, 40, 100] {
        let name = format!("k{k}");
        if !args.selects(&name) {
            continue;
        }
        let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k })];
        let mut plain = Vec::new();
        let mut plain_loss = 0.0;
        for _ in 0..args.runs {
            let started = Instant::now();
            let result = mondrian(&input, &models, &MondrianOptions::default(), &NoControl)
                .expect("mondrian");
            plain.push(started.elapsed().as_secs_f64());
            let all: Vec<usize> = (0..n).collect();
            plain_loss = information_loss(&bounds(&result.recoding, &all, &orders), &ranges);
        }
        let mut split = Vec::new();
        let mut split_loss = 0.0;
        let mut changes = 0;
        for _ in 0..args.runs {
            let started = Instant::now();
            let feature_columns: Vec<_> = features.iter().collect();
            let mi = mi_matrix(&feature_columns, class, DEFAULT_BINS);
            let plan = fragment(&mi, 2, Diagonal::Included).expect("two fragments");
            let result = fragment_and_anonymize(
                &input,
                &plan,
                &class.codes,
                &models,
                k,
                Strategy::Dgbe,
                &NoControl,
            )
            .expect("fragmentation");
            split.push(started.elapsed().as_secs_f64());
            // the loss over every attribute, each from the fragment that holds it
            let mut all_bounds = vec![Vec::new(); n];
            for f in &result.fragments {
                for (q, column) in bounds(&f.recoding, &f.attributes, &orders)
                    .into_iter()
                    .enumerate()
                {
                    all_bounds[f.attributes[q]] = column;
                }
            }
            split_loss = information_loss(&all_bounds, &ranges);
            changes = result.changes.iter().map(|c| c.records).sum::<u64>();
        }
        let (a, b) = (support::Timing::of(&plain), support::Timing::of(&split));
        println!(
            "creditcard/{name:<9} {:>7.1} ms ({:.1}-{:.1}), IL {:.3}     {:>7.1} ms ({:.1}-{:.1}), IL {:.3}, {changes} changed",
            a.median * 1000.0,
            a.min * 1000.0,
            a.max * 1000.0,
            plain_loss,
            b.median * 1000.0,
            b.min * 1000.0,
            b.max * 1000.0,
            split_loss
        );
    }
}
