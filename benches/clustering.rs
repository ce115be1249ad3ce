//! Clustering benchmarks on synthetic tables with planted functional dependencies (zip → city,
//! city → province; `anonymizer::synthetic::dependencies`): PAIR-ENUM, k-ASSEMBLE, greedy k-member and
//! top-down, printing the median, minimum and maximum time and the dependency loss Δ (with |Γ|,
//! utility and violations introduced) so runtime and Δ can be compared as in Gorla 2019 §6.
//!
//! `cargo bench --bench clustering` runs every case; `cargo bench --bench clustering -- k_assemble` runs
//! cases whose name contains `k_assemble`; `--runs N` sets the repetitions (default 3).

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use anonymizer::core::control::NoControl;
use anonymizer::core::data::GeneralizationMap;
use anonymizer::core::local::clustering::{
    k_assemble, k_member, pair_enum, top_down, ClusteringResult, FdAttribute, FunctionalDependency,
    KAssembleOptions, KMemberOptions, PairEnumOptions, TopDownOptions,
};
use anonymizer::core::local::{Domain, LocalAttribute, LocalInput};
use anonymizer::synthetic::dependencies::{
    dependency_table, DependencyTable, DependencyTableOptions,
};

#[derive(Clone, Copy)]
enum Algorithm {
    PairEnum,
    KAssemble,
    KMember,
    TopDown,
}

impl Algorithm {
    fn name(self) -> &'static str {
        match self {
            Algorithm::PairEnum => "pair_enum",
            Algorithm::KAssemble => "k_assemble",
            Algorithm::KMember => "k_member",
            Algorithm::TopDown => "top_down",
        }
    }
}

fn run(
    algorithm: Algorithm,
    data: &DependencyTable,
    maps: &[GeneralizationMap],
    k: usize,
) -> ClusteringResult {
    let input = LocalInput {
        rows: data.table.row_count(),
        quasi_identifiers: maps
            .iter()
            .enumerate()
            .map(|(j, map)| LocalAttribute {
                name: &data.hierarchies[j].0,
                codes: &data.table.column(j).codes,
                distinct: data.table.column(j).dictionary.len(),
                domain: Domain::Hierarchy(map),
            })
            .collect(),
        sensitive: vec![],
    };
    let fds = vec![
        FunctionalDependency {
            lhs: vec![FdAttribute::QuasiIdentifier(0)],
            rhs: vec![FdAttribute::QuasiIdentifier(1)],
        },
        FunctionalDependency {
            lhs: vec![FdAttribute::QuasiIdentifier(1)],
            rhs: vec![FdAttribute::QuasiIdentifier(2)],
        },
    ];
    let result = match algorithm {
        Algorithm::PairEnum => pair_enum(
            &input,
            &fds,
            &PairEnumOptions {
                k,
                ..Default::default()
            },
            &NoControl,
        ),
        Algorithm::KAssemble => k_assemble(
            &input,
            &fds,
            &KAssembleOptions {
                k,
                ..Default::default()
            },
            &NoControl,
        ),
        Algorithm::KMember => k_member(&input, &fds, &KMemberOptions { k, seed: 0 }, &NoControl),
        Algorithm::TopDown => top_down(&input, &fds, &TopDownOptions { k, seed: 0 }, &NoControl),
    };
    match result {
        Ok(r) => r,
        Err(e) => panic!("{} failed: {e}", algorithm.name()),
    }
}

fn main() {
    let args = support::Args::parse(3, "k_assemble/fd-6000-k5");
    let runs = args.runs;
    let k = 5;
    let cases = [
        (Algorithm::KAssemble, 30_000),
        (Algorithm::TopDown, 30_000),
        (Algorithm::KMember, 30_000),
        (Algorithm::PairEnum, 6_000),
        (Algorithm::KAssemble, 6_000),
        (Algorithm::TopDown, 6_000),
        (Algorithm::KMember, 6_000),
    ];
    println!("case | runs | median s | min s | max s | |Γ| | Δ | utility | violations introduced | suppressed");
    for (algorithm, rows) in cases {
        let name = format!("{}/fd-{rows}-k{k}", algorithm.name());
        if !args.selects(&name) {
            continue;
        }
        let data = match dependency_table(&DependencyTableOptions {
            rows,
            seed: 1,
            ..Default::default()
        }) {
            Ok(d) => d,
            Err(e) => panic!("generator failed: {e}"),
        };
        let maps: Vec<GeneralizationMap> = data
            .hierarchies
            .iter()
            .enumerate()
            .map(
                |(j, (_, h))| match GeneralizationMap::bind(h.clone(), data.table.column(j)) {
                    Ok(m) => m,
                    Err(e) => panic!("{e}"),
                },
            )
            .collect();
        let mut times = Vec::with_capacity(runs);
        let mut last = None;
        for _ in 0..runs {
            let start = Instant::now();
            let result = run(algorithm, &data, &maps, k);
            times.push(start.elapsed().as_secs_f64());
            last = Some(result);
        }
        let timing = support::Timing::of(&times);
        let Some(result) = last else { continue };
        let r = &result.report;
        println!(
            "{name} | {runs} | {:.3} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {} | {}",
            timing.median,
            timing.min,
            timing.max,
            r.dependency_instances,
            r.dependency_loss,
            r.utility,
            r.fd_violations_introduced,
            r.leftovers_suppressed,
        );
    }
}
