//! Every engine loop polls its `Control`: each algorithm, started on an input it needs far longer than
//! the test waits for, stops with `CoreError::Cancelled` within a second of a cancel request made from
//! another thread, and within a second of its deadline (a control whose check reports expiry from a
//! given instant, as the worker's job control does). An algorithm that ran to the end would return its
//! result instead, so a `Cancelled` answer also shows that the input was long enough.
//!
//! The uncancelled times quoted per input were measured once on a 2-core machine shared with other
//! builds (test profile; `--ignored uncancelled_times` prints them, capped at 30 s); each case here
//! stops after about half a second, so the whole file takes seconds plus building the inputs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anonymizer::codec::{parse_arx_hierarchy, read_table, CsvOptions};
use anonymizer::core::control::{Control, Progress};
use anonymizer::core::data::{Column, Dictionary, GeneralizationMap, Hierarchy, Table};
use anonymizer::core::engine::anonymize;
use anonymizer::core::error::CoreError;
use anonymizer::core::input::SensitiveAttribute;
use anonymizer::core::local::clustering::{
    k_assemble, k_member, pair_enum, top_down, FdAttribute, FunctionalDependency, KAssembleOptions,
    KMemberOptions, PairEnumOptions, TopDownOptions,
};
use anonymizer::core::local::hybrid::{hybrid, HybridOptions};
use anonymizer::core::local::{mondrian, Domain, LocalAttribute, LocalInput, MondrianOptions};
use anonymizer::core::privacy::{DistinctLDiversity, KAnonymity, PrivacyModel};
use anonymizer::core::secret_rng::SecretKey;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::{prepare, JobSpec};
use anonymizer::synthetic::dependencies::{
    dependency_table, DependencyTable, DependencyTableOptions,
};
use anonymizer::synthetic::{AdultShape, ADULT_COLUMNS};

/// When the test asks a run to stop, counted from the start of the engine call.
const STOP_AFTER: Duration = Duration::from_millis(400);

/// The longest a run may take to return once asked to stop.
const STOP_WITHIN: Duration = Duration::from_secs(1);

/// A control like the worker's: a stop flag set from another thread, and an optional deadline that
/// `is_cancelled` compares with the clock.
struct Stopper {
    cancelled: AtomicBool,
    deadline: Option<Instant>,
    /// When a poll first saw the request, for the failure message.
    noticed: Mutex<Option<Instant>>,
}

impl Stopper {
    fn new(deadline: Option<Instant>) -> Self {
        Self {
            cancelled: AtomicBool::new(false),
            deadline,
            noticed: Mutex::new(None),
        }
    }
}

impl Control for Stopper {
    fn is_cancelled(&self) -> bool {
        let stop = self.cancelled.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d);
        if stop {
            self.noticed
                .lock()
                .unwrap()
                .get_or_insert_with(Instant::now);
        }
        stop
    }
    fn report(&self, _progress: Progress) {}
}

/// One engine call on prepared data.
type Job<'a> = Box<dyn Fn(&dyn Control) -> Result<(), CoreError> + Sync + 'a>;

/// How a run is asked to stop.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// A cancel request from another thread.
    Cancel,
    /// The deadline passes.
    Deadline,
}

/// Starts `job` on a thread, asks it to stop `STOP_AFTER` later, and returns how long it took to
/// return after the request and how long until a poll saw the request; the run must have returned
/// `Cancelled`.
fn stop_latency(name: &str, job: &Job<'_>, how: Stop) -> (Duration, Duration) {
    let started = Instant::now();
    let control = Stopper::new(match how {
        Stop::Cancel => None,
        Stop::Deadline => Some(started + STOP_AFTER),
    });
    let (result, returned, requested) = std::thread::scope(|scope| {
        let runner = scope.spawn(|| {
            let result = job(&control);
            (result, Instant::now())
        });
        let requested = match how {
            Stop::Cancel => {
                std::thread::sleep(STOP_AFTER);
                let at = Instant::now();
                control.cancelled.store(true, Ordering::Relaxed);
                at
            }
            Stop::Deadline => started + STOP_AFTER,
        };
        let (result, returned) = runner.join().expect("the run does not panic");
        (result, returned, requested)
    });
    assert_eq!(
        result,
        Err(CoreError::Cancelled),
        "{name} ({how:?}): the run ended {:?} after its start without being stopped; the input is too small",
        returned - started
    );
    let noticed = control.noticed.lock().unwrap().unwrap_or(returned);
    (
        returned.saturating_duration_since(requested),
        noticed.saturating_duration_since(requested),
    )
}

/// Asserts that `job` stops within `STOP_WITHIN` of a cancel request and of its deadline.
fn assert_stops(name: &str, job: &Job<'_>) {
    for how in [Stop::Cancel, Stop::Deadline] {
        let (latency, noticed) = stop_latency(name, job, how);
        eprintln!(
            "{name} ({how:?}): returned {latency:?} after the request (seen after {noticed:?})"
        );
        assert!(
            latency < STOP_WITHIN,
            "{name} ({how:?}) took {latency:?} to stop (a poll saw the request after {noticed:?})"
        );
    }
}

fn adult_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult")
}

fn adult() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let bytes = std::fs::read(adult_dir().join("adult.csv")).expect("adult.csv");
        read_table(
            bytes.as_slice(),
            &CsvOptions {
                delimiter: b';',
                ..CsvOptions::default()
            },
        )
        .expect("adult table")
    })
}

fn adult_hierarchy(name: &str) -> Hierarchy {
    let path = adult_dir().join(format!("adult_hierarchy_{name}.csv"));
    parse_arx_hierarchy(&std::fs::read(path).expect("hierarchy file"), b';').expect("hierarchy")
}

/// An adult-shaped table of `rows` records.
fn synthetic_adult(rows: usize) -> Table {
    AdultShape::from_table(adult())
        .expect("adult shape")
        .generate(rows, 7)
}

// ---- full-domain searches ----

/// The full-domain algorithms that walk the lattice with predictive tagging (and the exhaustive
/// oracle), by wire name.
const SEARCHES: [&str; 7] = [
    "optimal",
    "best_first",
    "flash",
    "ola",
    "incognito",
    "samarati",
    "exhaustive",
];

/// The full-domain input: adult-shaped records with one chain column of `SEARCH_CHAIN` values, whose
/// 60 levels make the lattice 61 times adult's (790,560 nodes, under the exhaustive search's limit).
/// Uncancelled: optimal 21 s, best_first 20 s, flash 25 s, ola, incognito, samarati and exhaustive more
/// than 30 s.
const SEARCH_ROWS: usize = 300_000;
const SEARCH_CHAIN: usize = 60;

/// Datafly's input: Datafly makes one check per generalization step, so its input gets `DATAFLY_CHAINS`
/// columns of `DATAFLY_CHAIN` values whose hierarchies merge one more value per level (levels are
/// bytes, so a hierarchy has at most 255 levels).
/// Uncancelled: 22 s.
const DATAFLY_ROWS: usize = 300_000;
const DATAFLY_CHAINS: usize = 4;
const DATAFLY_CHAIN: usize = 250;

/// `table` with `count` columns `chain0`, `chain1`, … of `height` values each, spread over the records
/// independently of each other.
fn with_chains(table: &Table, count: usize, height: usize) -> Table {
    let mut dictionary = Dictionary::new();
    for v in 0..height {
        dictionary.intern(&v.to_string());
    }
    let rows = table.row_count();
    let mut columns = table.columns().to_vec();
    for (i, step) in [7_919u64, 104_729, 1_299_709, 15_485_863]
        .into_iter()
        .cycle()
        .take(count)
        .enumerate()
    {
        let codes = (0..rows)
            .map(|r| (((r as u64 + i as u64) * step) % height as u64) as u32)
            .collect();
        columns.push(Column {
            name: format!("chain{i}"),
            dictionary: dictionary.clone(),
            codes,
        });
    }
    Table::new(columns, rows)
}

/// The hierarchy of the `chain` column: at level l the values from `height − l` up share one label.
fn chain_hierarchy(height: usize) -> Hierarchy {
    let rows: Vec<Vec<String>> = (0..height)
        .map(|v| {
            let mut row: Vec<String> = (0..height)
                .map(|l| {
                    if v + l < height {
                        v.to_string()
                    } else {
                        format!(">={}", height - l)
                    }
                })
                .collect();
            row.push("*".into());
            row
        })
        .collect();
    Hierarchy::from_rows(&rows).expect("chain hierarchy")
}

/// A full-domain job: every adult column (and every chain column) a quasi-identifier.
fn search_job<'t>(table: &'t Table, algorithm: &str) -> Job<'t> {
    let mut attributes: serde_json::Map<String, serde_json::Value> = ADULT_COLUMNS
        .iter()
        .map(|c| {
            let hierarchy = serde_json::json!({"path": format!("adult_hierarchy_{c}.csv")});
            (
                c.to_string(),
                serde_json::json!({"role": "quasi_identifier", "hierarchy": hierarchy}),
            )
        })
        .collect();
    let mut chain = 0;
    for column in table.columns() {
        if column.name.starts_with("chain") {
            chain = column.dictionary.len();
            attributes.insert(
                column.name.clone(),
                serde_json::json!({"role": "quasi_identifier", "hierarchy": {"path": "chain"}}),
            );
        }
    }
    let spec = serde_json::json!({
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": 5}],
        "suppression_limit": 0.02,
        "algorithm": {"type": algorithm},
        "metric": "discernibility",
    });
    let spec = JobSpec::from_json(spec.to_string().as_bytes()).expect("spec");
    let resolve = |source: &HierarchySpec| -> Result<anonymizer::domain::Resolved, String> {
        match source {
            HierarchySpec::Path { path, .. } if path == "chain" => {
                Ok(chain_hierarchy(chain).into())
            }
            HierarchySpec::Path { path, .. } => Ok(adult_hierarchy(
                path.trim_start_matches("adult_hierarchy_")
                    .trim_end_matches(".csv"),
            )
            .into()),
            _ => Err("paths only".into()),
        }
    };
    let prepared = prepare(table, &spec, &resolve).expect("prepared");
    Box::new(move |control| anonymize(&prepared.input(table), &prepared.plan, control).map(|_| ()))
}

#[test]
fn every_full_domain_search_stops_within_a_second() {
    let table = with_chains(&synthetic_adult(SEARCH_ROWS), 1, SEARCH_CHAIN);
    for algorithm in SEARCHES {
        assert_stops(algorithm, &search_job(&table, algorithm));
    }
}

#[test]
fn datafly_stops_within_a_second() {
    let table = with_chains(
        &synthetic_adult(DATAFLY_ROWS),
        DATAFLY_CHAINS,
        DATAFLY_CHAIN,
    );
    assert_stops("datafly", &search_job(&table, "datafly"));
}

// ---- local recoding ----

/// An adult-shaped table as a local-recoding input: the named columns as quasi-identifiers with their
/// bundled hierarchies and, when given, one sensitive attribute.
struct AdultLocal {
    table: Table,
    names: &'static [&'static str],
    sensitive: Option<&'static str>,
    maps: Vec<GeneralizationMap>,
}

/// Mondrian's quasi-identifiers: the adult columns with a hierarchy but occupation, its sensitive
/// attribute, and four chain columns (wide hierarchies whose cuts are tried prefix by prefix).
const MONDRIAN_QIS: [&str; 11] = [
    "sex",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
    "chain0",
    "chain1",
    "chain2",
    "chain3",
];

impl AdultLocal {
    fn new(rows: usize, names: &'static [&'static str], sensitive: Option<&'static str>) -> Self {
        let chains = names.iter().filter(|n| n.starts_with("chain")).count();
        let table = with_chains(&synthetic_adult(rows), chains, DATAFLY_CHAIN);
        let maps = names
            .iter()
            .map(|name| {
                let column = table.column(table.column_index(name).expect("column"));
                let hierarchy = if name.starts_with("chain") {
                    chain_hierarchy(DATAFLY_CHAIN)
                } else {
                    adult_hierarchy(name)
                };
                GeneralizationMap::bind(hierarchy, column).expect("covered")
            })
            .collect();
        Self {
            table,
            names,
            sensitive,
            maps,
        }
    }

    fn input(&self) -> LocalInput<'_> {
        let column = |name: &str| {
            self.table
                .column(self.table.column_index(name).expect("column"))
        };
        LocalInput {
            rows: self.table.row_count(),
            quasi_identifiers: self
                .names
                .iter()
                .zip(&self.maps)
                .map(|(name, map)| LocalAttribute {
                    name,
                    codes: &column(name).codes,
                    distinct: column(name).dictionary.len(),
                    domain: Domain::Hierarchy(map),
                })
                .collect(),
            sensitive: self
                .sensitive
                .iter()
                .map(|&name| SensitiveAttribute {
                    name,
                    codes: &column(name).codes,
                    distinct: column(name).dictionary.len(),
                })
                .collect(),
        }
    }
}

/// Rows of the Mondrian input and the distinct l-diversity of occupation it asks for: most candidate cuts
/// leave a side with too few occupations, and each rejected cut scans its partition. Uncancelled on the
/// idle machine: 12.4 s, with at most 103 ms between two polls (the setup: one check of the whole table
/// and the row-major key copy); 2,000,000 records took 5–6 s. A larger l barely changes the time (l = 8,
/// 10, 12 on 2,000,000 records: 5.2, 4.8, 5.5 s).
const MONDRIAN_ROWS: usize = 4_000_000;
const MONDRIAN_L: u64 = 8;

fn mondrian_job(data: &AdultLocal, l: u64) -> Job<'_> {
    let models: Vec<Box<dyn PrivacyModel>> = vec![
        Box::new(KAnonymity { k: 5 }),
        Box::new(DistinctLDiversity {
            slot: 0,
            attribute: "occupation".into(),
            l,
        }),
    ];
    Box::new(move |control| {
        mondrian(&data.input(), &models, &MondrianOptions::default(), control).map(|_| ())
    })
}

#[test]
fn mondrian_stops_within_a_second() {
    let data = AdultLocal::new(MONDRIAN_ROWS, &MONDRIAN_QIS, Some("occupation"));
    assert_stops("mondrian", &mondrian_job(&data, MONDRIAN_L));
}

/// Rows, k and relocation limit of the hybrid input (every adult column a quasi-identifier).
/// Uncancelled: more than 30 s.
const HYBRID_ROWS: usize = 300_000;
const HYBRID_K: u64 = 5;
const HYBRID_LIMIT: f64 = 0.2;

fn hybrid_job(data: &AdultLocal, k: u64, relocation_limit: f64) -> Job<'_> {
    Box::new(move |control| {
        let options = HybridOptions {
            key: SecretKey::from_u64(0x5EED),
            relocation_limit,
            ..HybridOptions::default()
        };
        hybrid(&data.input(), k, &options, control).map(|_| ())
    })
}

#[test]
fn hybrid_stops_within_a_second() {
    let data = AdultLocal::new(HYBRID_ROWS, &ADULT_COLUMNS, None);
    assert_stops("hybrid", &hybrid_job(&data, HYBRID_K, HYBRID_LIMIT));
}

/// A table with planted dependencies zip → city → province, bound to its hierarchies.
struct Dependencies {
    data: DependencyTable,
    maps: Vec<GeneralizationMap>,
}

impl Dependencies {
    fn new(rows: usize) -> Self {
        let data = dependency_table(&DependencyTableOptions {
            rows,
            seed: 1,
            ..Default::default()
        })
        .expect("generated");
        let maps = data
            .hierarchies
            .iter()
            .enumerate()
            .map(|(j, (_, h))| GeneralizationMap::bind(h.clone(), data.table.column(j)).unwrap())
            .collect();
        Self { data, maps }
    }

    fn input(&self) -> LocalInput<'_> {
        LocalInput {
            rows: self.data.table.row_count(),
            quasi_identifiers: self
                .maps
                .iter()
                .enumerate()
                .map(|(j, map)| LocalAttribute {
                    name: &self.data.hierarchies[j].0,
                    codes: &self.data.table.column(j).codes,
                    distinct: self.data.table.column(j).dictionary.len(),
                    domain: Domain::Hierarchy(map),
                })
                .collect(),
            sensitive: vec![],
        }
    }

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
}

/// Rows of each clustering input. Uncancelled: PAIR-ENUM (both), k-ASSEMBLE and k-member more than 30 s
/// each; top-down 23 s.
const PAIR_ENUM_ROWS: usize = 12_000;
const PAIR_ENUM_ALL_PAIRS_ROWS: usize = 2_000;
const K_ASSEMBLE_ROWS: usize = 200_000;
const K_MEMBER_ROWS: usize = 100_000;
const TOP_DOWN_ROWS: usize = 2_000_000;

fn clustering_job<'d>(data: &'d Dependencies, algorithm: &'static str) -> Job<'d> {
    let fds = Dependencies::dependencies();
    Box::new(move |control| {
        let input = data.input();
        let k = 5;
        match algorithm {
            "pair_enum" => pair_enum(
                &input,
                &fds,
                &PairEnumOptions {
                    k,
                    ..Default::default()
                },
                control,
            ),
            "pair_enum_all_pairs" => pair_enum(
                &input,
                &fds,
                &PairEnumOptions {
                    k,
                    neighbours: None,
                    ..Default::default()
                },
                control,
            ),
            "k_assemble" => k_assemble(
                &input,
                &fds,
                &KAssembleOptions {
                    k,
                    ..Default::default()
                },
                control,
            ),
            "k_member" => k_member(&input, &fds, &KMemberOptions { k, seed: 0 }, control),
            _ => top_down(&input, &fds, &TopDownOptions { k, seed: 0 }, control),
        }
        .map(|_| ())
    })
}

#[test]
fn pair_enum_stops_within_a_second() {
    let data = Dependencies::new(PAIR_ENUM_ROWS);
    assert_stops("pair_enum", &clustering_job(&data, "pair_enum"));
    let data = Dependencies::new(PAIR_ENUM_ALL_PAIRS_ROWS);
    assert_stops(
        "pair_enum (all pairs)",
        &clustering_job(&data, "pair_enum_all_pairs"),
    );
}

#[test]
fn k_assemble_stops_within_a_second() {
    let data = Dependencies::new(K_ASSEMBLE_ROWS);
    assert_stops("k_assemble", &clustering_job(&data, "k_assemble"));
}

#[test]
fn k_member_stops_within_a_second() {
    let data = Dependencies::new(K_MEMBER_ROWS);
    assert_stops("k_member", &clustering_job(&data, "k_member"));
}

#[test]
fn top_down_stops_within_a_second() {
    let data = Dependencies::new(TOP_DOWN_ROWS);
    assert_stops("top_down", &clustering_job(&data, "top_down"));
}

/// Polls with the clock like [`Stopper`]'s deadline and records the longest stretch between two polls,
/// with where the poll that ended it came from (the engine's frames of its backtrace).
struct Gaps {
    started: Instant,
    cap: Instant,
    /// The last poll, the longest gap and when it began (from the start).
    polls: Mutex<(Instant, Duration, Duration)>,
    /// The engine source lines of the poll that ended the longest gap.
    ended_by: Mutex<String>,
}

/// Gaps shorter than this are not traced (a backtrace costs milliseconds).
const TRACED_GAP: Duration = Duration::from_millis(100);

impl Control for Gaps {
    fn is_cancelled(&self) -> bool {
        let now = Instant::now();
        let mut polls = self.polls.lock().unwrap();
        let gap = now - polls.0;
        if gap > polls.1 {
            *polls = (polls.0, gap, polls.0 - self.started);
            if gap > TRACED_GAP {
                let trace = std::backtrace::Backtrace::force_capture().to_string();
                let frames: Vec<&str> = trace
                    .lines()
                    .filter(|l| l.contains("src/core/"))
                    .map(str::trim)
                    .collect();
                *self.ended_by.lock().unwrap() = frames.join(" < ");
            }
        }
        polls.0 = Instant::now();
        now >= self.cap
    }
    fn report(&self, _progress: Progress) {}
}

/// Prints how long every input takes without a stop request (capped at 30 s, or at
/// `RESPONSIVENESS_CAP_SECS`) and the longest stretch between two polls, with the engine frames of the
/// poll that ended it: the figures quoted above. Slow; run with
/// `cargo test --test engine responsiveness::uncancelled_times -- --ignored --nocapture`, optionally with a case-name filter in
/// `RESPONSIVENESS_CASES`.
#[test]
#[ignore]
fn uncancelled_times() {
    let filter = std::env::var("RESPONSIVENESS_CASES").unwrap_or_default();
    let cap = Duration::from_secs(
        std::env::var("RESPONSIVENESS_CAP_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
    );
    let time = |name: &str, job: &dyn Fn() -> Job<'static>| {
        if !name.contains(&filter) {
            return;
        }
        let job = job();
        let started = Instant::now();
        let control = Gaps {
            started,
            cap: started + cap,
            polls: Mutex::new((started, Duration::ZERO, Duration::ZERO)),
            ended_by: Mutex::new(String::new()),
        };
        let result = job(&control);
        let took = started.elapsed();
        let (last, gap, at) = *control.polls.lock().unwrap();
        let outcome = match result {
            Err(CoreError::Cancelled) => format!("more than {cap:?}"),
            other => format!("{took:?} ({:?})", other.map(|_| "done")),
        };
        eprintln!(
            "{name}: {outcome}; longest stretch without a poll {gap:?} from {at:?}, {:?} from the last poll to the end",
            started + took - last
        );
        let ended_by = control.ended_by.lock().unwrap();
        if !ended_by.is_empty() {
            eprintln!("  the poll that ended it: {ended_by}");
        }
    };
    fn leak<T>(value: T) -> &'static T {
        Box::leak(Box::new(value))
    }
    time("pair_enum", &|| {
        clustering_job(leak(Dependencies::new(PAIR_ENUM_ROWS)), "pair_enum")
    });
    time("pair_enum (all pairs)", &|| {
        clustering_job(
            leak(Dependencies::new(PAIR_ENUM_ALL_PAIRS_ROWS)),
            "pair_enum_all_pairs",
        )
    });
    time("k_assemble", &|| {
        clustering_job(leak(Dependencies::new(K_ASSEMBLE_ROWS)), "k_assemble")
    });
    time("k_member", &|| {
        clustering_job(leak(Dependencies::new(K_MEMBER_ROWS)), "k_member")
    });
    time("top_down", &|| {
        clustering_job(leak(Dependencies::new(TOP_DOWN_ROWS)), "top_down")
    });
    time("mondrian", &|| {
        mondrian_job(
            leak(AdultLocal::new(
                MONDRIAN_ROWS,
                &MONDRIAN_QIS,
                Some("occupation"),
            )),
            MONDRIAN_L,
        )
    });
    time("hybrid", &|| {
        hybrid_job(
            leak(AdultLocal::new(HYBRID_ROWS, &ADULT_COLUMNS, None)),
            HYBRID_K,
            HYBRID_LIMIT,
        )
    });
    time("datafly", &|| {
        search_job(
            leak(with_chains(
                &synthetic_adult(DATAFLY_ROWS),
                DATAFLY_CHAINS,
                DATAFLY_CHAIN,
            )),
            "datafly",
        )
    });
    for algorithm in SEARCHES {
        time(algorithm, &|| {
            search_job(
                leak(with_chains(&synthetic_adult(SEARCH_ROWS), 1, SEARCH_CHAIN)),
                algorithm,
            )
        });
    }
}
