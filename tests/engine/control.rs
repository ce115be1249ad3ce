//! Cooperative cancellation and progress: every algorithm stops with `CoreError::Cancelled` soon after the
//! caller's `Control` asks it to, and reports typed progress (searching: nodes checked out of the lattice
//! size) while it runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anonymizer::codec::{parse_arx_hierarchy, read_table, CsvOptions};
use anonymizer::core::control::{Control, Phase, Progress};
use anonymizer::core::engine::{anonymize, Outcome};
use anonymizer::core::error::CoreError;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::{prepare, JobSpec};

const COLUMNS: [&str; 9] = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
];

/// Cancels once it has been polled `after` times; records every progress report.
struct CancelAfter {
    after: u64,
    polls: AtomicU64,
    reports: Mutex<Vec<Progress>>,
}

impl CancelAfter {
    fn new(after: u64) -> Self {
        Self {
            after,
            polls: AtomicU64::new(0),
            reports: Mutex::new(Vec::new()),
        }
    }
}

impl Control for CancelAfter {
    fn is_cancelled(&self) -> bool {
        self.polls.fetch_add(1, Ordering::Relaxed) >= self.after
    }
    fn report(&self, progress: Progress) {
        self.reports.lock().unwrap().push(progress);
    }
}

fn run(algorithm: &str, control: &dyn Control) -> Result<u64, CoreError> {
    run_adult(serde_json::json!({"type": algorithm}), control).map(|o| o.search.nodes_checked)
}

/// Runs `algorithm` (its spec object) on adult, 9 quasi-identifiers, k = 5 at 2 %, discernibility.
pub(crate) fn run_adult(
    algorithm: serde_json::Value,
    control: &dyn Control,
) -> Result<Outcome, CoreError> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adult");
    let bytes = std::fs::read(dir.join("adult.csv")).unwrap();
    let table = read_table(
        bytes.as_slice(),
        &CsvOptions {
            delimiter: b';',
            ..CsvOptions::default()
        },
    )
    .unwrap();
    let attributes: serde_json::Map<String, serde_json::Value> = COLUMNS
        .iter()
        .map(|c| {
            let hierarchy = serde_json::json!({"path": format!("adult_hierarchy_{c}.csv")});
            (
                c.to_string(),
                serde_json::json!({"role": "quasi_identifier", "hierarchy": hierarchy}),
            )
        })
        .collect();
    let spec = serde_json::json!({
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": 5}],
        "suppression_limit": 0.02,
        "algorithm": algorithm,
        "metric": "discernibility",
    });
    let spec = JobSpec::from_json(spec.to_string().as_bytes()).unwrap();
    let resolve = |source: &HierarchySpec| -> Result<anonymizer::domain::Resolved, String> {
        match source {
            HierarchySpec::Path { path, .. } => {
                parse_arx_hierarchy(&std::fs::read(dir.join(path)).unwrap(), b';')
                    .map(Into::into)
                    .map_err(|e| e.to_string())
            }
            _ => Err("paths only".into()),
        }
    };
    let prepared = prepare(&table, &spec, &resolve).unwrap();
    anonymize(&prepared.input(&table), &prepared.plan, control)
}

#[test]
fn every_algorithm_stops_when_cancelled() {
    for algorithm in [
        "optimal",
        "ola",
        "flash",
        "incognito",
        "samarati",
        "datafly",
        "exhaustive",
        "lightning",
        "genetic",
    ] {
        let control = CancelAfter::new(2);
        assert_eq!(
            run(algorithm, &control),
            Err(CoreError::Cancelled),
            "{algorithm} ignored the cancellation"
        );
        // it stopped at the first poll after the request, not at the end of the search
        assert_eq!(control.polls.load(Ordering::Relaxed), 3, "{algorithm}");
    }
}

#[test]
fn cancelled_before_start_does_no_work() {
    let control = CancelAfter::new(0);
    assert_eq!(run("flash", &control), Err(CoreError::Cancelled));
    assert!(control.reports.lock().unwrap().is_empty());
}

#[test]
fn progress_counts_settled_nodes_of_the_lattice() {
    // Flash tags as it checks: its progress is the share of the lattice settled by a check or a tag,
    // which only grows and reaches the whole lattice when the search ends
    let control = CancelAfter::new(u64::MAX);
    let checked = run("flash", &control).expect("completes");
    let reports = control.reports.lock().unwrap();
    let searching: Vec<&Progress> = reports
        .iter()
        .filter(|p| p.phase == Phase::Searching)
        .collect();
    assert!(!searching.is_empty());
    assert!(searching
        .iter()
        .all(|p| p.total == 12_960 && p.done <= p.total));
    assert!(searching.windows(2).all(|w| w[0].done <= w[1].done));
    assert_eq!(searching.last().unwrap().done, 12_960);
    assert!(checked < 12_960, "tags settled most nodes without a check");
}
