//! Clustering benchmarks on synthetic tables with planted functional dependencies (zip → city,
//! city → province; `anonymizer::synthetic::dependencies`).
//!
//! - Timing cases (`pair_enum/fd-6000-k5`, …): PAIR-ENUM, k-ASSEMBLE, greedy k-member and top-down,
//!   printing the median, minimum and maximum time and the dependency loss Δ (with |Γ|, utility and
//!   violations introduced) so runtime and Δ can be compared as in Gorla 2019 §6.
//! - The planted grid (`planted/…`, Gorla 2019's central claim: the dependency-preserving algorithms keep
//!   more dependency instances than the baselines): N = 1,000 and 3,000, k = 2, 3, 5, 10, 20, skewed and
//!   uniform zips; PAIR-ENUM (Opt-1 on), k-ASSEMBLE, k-member, top-down and Mondrian, each printing Δ,
//!   instances kept, GCP and time. PAIR-ENUM without Opt-1 is O(N³) rounds of candidates and runs only
//!   when the filter names it (`planted-unpruned`). `PLANTED_ROWS=300,1000` sets other sizes and
//!   `PLANTED_NEIGHBOURS=8` PAIR-ENUM's Opt-1 neighbours (default: the algorithm's, 1).
//!
//! `cargo bench --bench clustering` runs every case but the unpruned ones; `cargo bench --bench
//! clustering -- planted/skewed-3000` runs cases whose name contains the filter; `--runs N` sets the
//! repetitions (default 3; the grid's figures are of the last run, its time the median).

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use anonymizer::core::control::NoControl;
use anonymizer::core::data::GeneralizationMap;
use anonymizer::core::local::clustering::{
    k_assemble, k_member, measure_partition, pair_enum, top_down, ClusteringReport, FdAttribute,
    FunctionalDependency, KAssembleOptions, KMemberOptions, PairEnumOptions, TopDownOptions,
};
use anonymizer::core::local::{
    local_metrics, mondrian, Domain, LocalAttribute, LocalInput, MondrianOptions, Recoding,
    SUPPRESSED_GROUP,
};
use anonymizer::core::privacy::{KAnonymity, PrivacyModel};
use anonymizer::synthetic::dependencies::{
    dependency_table, DependencyTable, DependencyTableOptions,
};

#[derive(Clone, Copy)]
enum Algorithm {
    PairEnum,
    PairEnumUnpruned,
    KAssemble,
    KMember,
    TopDown,
    Mondrian,
}

impl Algorithm {
    fn name(self) -> &'static str {
        match self {
            Algorithm::PairEnum => "pair_enum",
            Algorithm::PairEnumUnpruned => "pair_enum_unpruned",
            Algorithm::KAssemble => "k_assemble",
            Algorithm::KMember => "k_member",
            Algorithm::TopDown => "top_down",
            Algorithm::Mondrian => "mondrian",
        }
    }
}

/// The generated table with its bound hierarchies.
struct Data {
    table: DependencyTable,
    maps: Vec<GeneralizationMap>,
}

impl Data {
    fn new(rows: usize, uniform: bool) -> Self {
        let table = match dependency_table(&DependencyTableOptions {
            rows,
            seed: 1,
            uniform,
            ..Default::default()
        }) {
            Ok(d) => d,
            Err(e) => panic!("generator failed: {e}"),
        };
        let maps = table
            .hierarchies
            .iter()
            .enumerate()
            .map(
                |(j, (_, h))| match GeneralizationMap::bind(h.clone(), table.table.column(j)) {
                    Ok(m) => m,
                    Err(e) => panic!("{e}"),
                },
            )
            .collect();
        Self { table, maps }
    }

    fn input(&self) -> LocalInput<'_> {
        let data = &self.table;
        LocalInput {
            rows: data.table.row_count(),
            quasi_identifiers: self
                .maps
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
        }
    }
}

/// zip → city and city → province, as planted.
fn dependencies() -> Vec<FunctionalDependency<'static>> {
    vec![
        FunctionalDependency {
            lhs: vec![FdAttribute::QuasiIdentifier(0)],
            rhs: vec![FdAttribute::QuasiIdentifier(1)],
        },
        FunctionalDependency {
            lhs: vec![FdAttribute::QuasiIdentifier(1)],
            rhs: vec![FdAttribute::QuasiIdentifier(2)],
        },
    ]
}

/// Runs `algorithm` and returns its recoding and dependency report.
fn run(algorithm: Algorithm, data: &Data, k: usize) -> (Recoding, ClusteringReport) {
    let input = data.input();
    let fds = dependencies();
    let result = match algorithm {
        Algorithm::PairEnum | Algorithm::PairEnumUnpruned => pair_enum(
            &input,
            &fds,
            &PairEnumOptions {
                k,
                neighbours: match algorithm {
                    Algorithm::PairEnum => std::env::var("PLANTED_NEIGHBOURS")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .or(PairEnumOptions::default().neighbours),
                    _ => None,
                },
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
        Algorithm::Mondrian => {
            let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: k as u64 })];
            let out = match mondrian(&input, &models, &MondrianOptions::default(), &NoControl) {
                Ok(out) => out,
                Err(e) => panic!("mondrian failed: {e}"),
            };
            let mut groups: Vec<Vec<u32>> = vec![Vec::new(); out.recoding.groups()];
            for (r, &g) in out.recoding.group_of().iter().enumerate() {
                if g != SUPPRESSED_GROUP {
                    groups[g as usize].push(r as u32);
                }
            }
            match measure_partition(&input, &fds, k, &groups, &NoControl) {
                Ok(report) => return (out.recoding, report),
                Err(e) => panic!("measuring failed: {e}"),
            }
        }
    };
    match result {
        Ok(r) => (r.recoding, r.report),
        Err(e) => panic!("{} failed: {e}", algorithm.name()),
    }
}

/// Runs a case `runs` times: the median time and the last run's recoding and report.
fn timed(
    algorithm: Algorithm,
    data: &Data,
    k: usize,
    runs: usize,
) -> (support::Timing, Recoding, ClusteringReport) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let result = run(algorithm, data, k);
        times.push(start.elapsed().as_secs_f64());
        last = Some(result);
    }
    let Some((recoding, report)) = last else {
        panic!("at least one run");
    };
    (support::Timing::of(&times), recoding, report)
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
    let selected: Vec<_> = cases
        .iter()
        .map(|&(algorithm, rows)| {
            (
                algorithm,
                rows,
                format!("{}/fd-{rows}-k{k}", algorithm.name()),
            )
        })
        .filter(|(_, _, name)| args.selects(name))
        .collect();
    if !selected.is_empty() {
        println!("case | runs | median s | min s | max s | |Γ| | Δ | utility | violations introduced | suppressed");
    }
    for (algorithm, rows, name) in selected {
        let data = Data::new(rows, false);
        let (timing, _, r) = timed(algorithm, &data, k, runs);
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
    planted(&args);
}

/// The planted-dependency grid (see the module documentation).
fn planted(args: &support::Args) {
    let algorithms = [
        Algorithm::PairEnum,
        Algorithm::PairEnumUnpruned,
        Algorithm::KAssemble,
        Algorithm::KMember,
        Algorithm::TopDown,
        Algorithm::Mondrian,
    ];
    let mut header = false;
    for uniform in [false, true] {
        let zips = if uniform { "uniform" } else { "skewed" };
        let sizes: Vec<usize> = match std::env::var("PLANTED_ROWS") {
            Ok(v) => v.split(',').filter_map(|x| x.parse().ok()).collect(),
            Err(_) => vec![1_000, 3_000],
        };
        for rows in sizes {
            let mut data = None;
            for k in [2, 3, 5, 10, 20] {
                for algorithm in algorithms {
                    let unpruned = matches!(algorithm, Algorithm::PairEnumUnpruned);
                    let family = if unpruned {
                        "planted-unpruned"
                    } else {
                        "planted"
                    };
                    let name = format!("{family}/{zips}-{rows}-k{k}/{}", algorithm.name());
                    if !args.selects(&name) || (unpruned && !args.filter.contains("unpruned")) {
                        continue;
                    }
                    if !header {
                        println!("case | |Γ| | Δ | utility | instances kept | GCP | suppressed | median s");
                        header = true;
                    }
                    let data = data.get_or_insert_with(|| Data::new(rows, uniform));
                    let (timing, recoding, r) = timed(algorithm, data, k, args.runs);
                    let sizes = recoding.group_sizes();
                    let metrics = local_metrics(&data.input(), &recoding, &sizes);
                    println!(
                        "{name} | {} | {:.2} | {:.2} | {} | {:.3} | {} | {:.3}",
                        r.dependency_instances,
                        r.dependency_loss,
                        r.utility,
                        r.instances_preserved,
                        metrics.gcp,
                        recoding.suppressed_records(),
                        timing.median,
                    );
                }
            }
        }
    }
}
