//! End to end with the real binary on a random port, as an analyst would use it with curl: start
//! `anonymizer serve` on a fresh data directory with a bootstrap key, upload adult, submit 5-anonymity
//! with 4 % suppression, poll until it succeeds, download the CSV, and check it with code independent
//! of the engine: every published class has at least 5 records, at most floor(0.04 n) records are
//! suppressed, and every cell is its original value or an ancestor of it in the column's hierarchy
//! (read from the hierarchy files here, not through the crate).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");
const KEY: &str = "anz_e2e-bootstrap-key-0123456789abcdef0123456789";
const K: usize = 5;
const LIMIT: f64 = 0.04;

/// Kills the server when the test ends, however it ends.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn data(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/adult")).join(path)
}

async fn start(dir: &std::path::Path) -> Server {
    start_with(dir, Stdio::piped(), "info").await
}

/// `start` with the server's log going to `stderr` at the `RUST_LOG` level `level`.
async fn start_with(dir: &std::path::Path, stderr: Stdio, level: &str) -> Server {
    let port = free_port();
    let child = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env_remove("DATABASE_URL")
        .env("ANONYMIZER_DATA_DIR", dir)
        .env("ANONYMIZER_BOOTSTRAP_KEY", KEY)
        .env("ANONYMIZER_LOG_FORMAT", "json")
        .env("RUST_LOG", level)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("start the server");
    let server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    let started = Instant::now();
    loop {
        if let Ok(r) = client.get(format!("{}/readyz", server.base)).send().await {
            if r.status() == 200 {
                return server;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls the job at `url` until it succeeds (panics when it fails, is cancelled or takes over `limit`).
async fn until_succeeded(client: &reqwest::Client, url: &str, limit: Duration) -> Value {
    let started = Instant::now();
    loop {
        let job: Value = client
            .get(url)
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        match job["state"].as_str().unwrap() {
            "succeeded" => return job,
            "failed" | "cancelled" => panic!("the job did not succeed: {job}"),
            _ => {}
        }
        assert!(started.elapsed() < limit, "the job did not finish: {job}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

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

/// For each column: value → itself and every ancestor, from the ARX hierarchy file.
fn ancestors() -> HashMap<&'static str, HashMap<String, HashSet<String>>> {
    COLUMNS
        .iter()
        .map(|&column| {
            let text = std::fs::read_to_string(data(&format!("adult_hierarchy_{column}.csv")))
                .expect("hierarchy file");
            let map = text
                .lines()
                .filter(|l| !l.is_empty())
                .map(|line| {
                    let levels: Vec<String> = line.split(';').map(str::to_string).collect();
                    (levels[0].clone(), levels.into_iter().collect())
                })
                .collect();
            (column, map)
        })
        .collect()
}

fn rows(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("header")
        .split(';')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect();
    (header, rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_anonymize_poll_download_and_verify_independently() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start(dir.path()).await;
    let client = reqwest::Client::builder().no_gzip().build().unwrap();
    let url = |path: &str| format!("{}{path}", server.base);

    // no key, no data
    let denied = client.get(url("/v1/datasets")).send().await.unwrap();
    assert_eq!(denied.status(), 401);

    let csv = std::fs::read(data("adult.csv")).expect("adult");
    let dataset: Value = {
        let response = client
            .post(url("/v1/datasets?name=adult&delimiter=;"))
            .bearer_auth(KEY)
            .header("content-type", "text/csv")
            .body(csv.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        response.json().await.unwrap()
    };
    assert_eq!(dataset["row_count"], 30162);

    let attributes: serde_json::Map<String, Value> = COLUMNS
        .iter()
        .map(|&c| {
            let arx = std::fs::read_to_string(data(&format!("adult_hierarchy_{c}.csv"))).unwrap();
            (
                c.to_string(),
                json!({"role": "quasi_identifier", "hierarchy": {"arx": arx}}),
            )
        })
        .collect();
    let spec = json!({
        "dataset_id": dataset["id"],
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": K}],
        "suppression_limit": LIMIT,
        "suppressed_records": "mask",
        "algorithm": {"type": "optimal"},
        "metric": "nu_entropy",
    });
    let response = client
        .post(url("/v1/jobs"))
        .bearer_auth(KEY)
        .json(&spec)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let location = response.headers()["location"].to_str().unwrap().to_string();

    let job = until_succeeded(&client, &url(&location), Duration::from_secs(120)).await;
    assert_eq!(job["attempt"], 1);

    let report: Value = client
        .get(url(&format!("{location}/result")))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let response = client
        .get(url(&format!("{location}/output")))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let checksum = response.headers()["x-checksum-sha256"]
        .to_str()
        .unwrap()
        .to_string();
    let output = response.bytes().await.unwrap();
    {
        use sha2::Digest;
        let digest: String = sha2::Sha256::digest(&output)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(digest, checksum);
    }

    // independent verification
    let (input_header, input_rows) = rows(std::str::from_utf8(&csv).unwrap());
    let (header, output_rows) = rows(std::str::from_utf8(&output).unwrap());
    assert_eq!(header, input_header);
    assert_eq!(output_rows.len(), input_rows.len(), "masked rows are kept");
    let ancestors = ancestors();
    let mut classes: HashMap<&[String], usize> = HashMap::new();
    let mut suppressed = 0;
    for (original, published) in input_rows.iter().zip(&output_rows) {
        if published.iter().all(|v| v == "*") {
            suppressed += 1;
            continue;
        }
        for (c, column) in header.iter().enumerate() {
            let allowed = &ancestors[column.as_str()][&original[c]];
            assert!(
                allowed.contains(&published[c]),
                "column {column}: the published cell does not generalize the original"
            );
        }
        *classes.entry(published.as_slice()).or_default() += 1;
    }
    let smallest = classes.values().copied().min().unwrap();
    assert!(smallest >= K, "a published class has {smallest} records");
    let max_suppressed = (LIMIT * input_rows.len() as f64).floor() as usize;
    assert!(suppressed <= max_suppressed, "{suppressed} suppressed");
    assert_eq!(report["suppressed_records"], suppressed);
    assert_eq!(report["equivalence_classes"]["count"], classes.len());

    // the server logged no cell value
    drop(client);
    let mut server = server;
    let _ = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status();
    let _ = server.child.wait();
    let mut logs = String::new();
    if let Some(mut stderr) = server.child.stderr.take() {
        let _ = stderr.read_to_string(&mut logs);
    }
    for value in ["Never-married", "Adm-clerical", "United-States"] {
        assert!(!logs.contains(value), "a cell value was logged");
    }
    assert!(logs.contains("job queued"), "{logs}");
}

/// Pseudonyms through the real server: a job publishes record numbers as pseudonyms, the key is rotated
/// and a second job publishes others; neither key's secret (read from the database file afterwards) nor
/// any record number shows up in a response or in the server's debug-level log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pseudonym_keys_never_leave_the_database() {
    let dir = tempfile::tempdir().expect("temp dir");
    // the debug log goes to a file: a pipe read only at the end would fill up and block the server
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let mut server = start_with(dir.path(), log.into(), "debug").await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", server.base);
    let mut csv = String::from("mrn,age,sex\n");
    for i in 0..40 {
        csv.push_str(&format!(
            "MRN-{:05},{},{}\n",
            7919 * i % 100_000,
            20 + i % 7,
            ["F", "M"][i % 2]
        ));
    }
    let dataset: Value = client
        .post(url("/v1/datasets?name=patients&delimiter=,"))
        .bearer_auth(KEY)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let spec = json!({
        "dataset_id": dataset["id"],
        "attributes": {
            "mrn": {"role": "identifying", "operator": {"type": "pseudonym"}},
            "age": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "interval", "width": 5, "fanouts": [2]}}},
            "sex": {"role": "quasi_identifier",
                    "hierarchy": {"builder": {"type": "categories", "levels": []}}}
        },
        "privacy_models": [{"type": "k_anonymity", "k": 2}]
    });
    let mut responses = String::new();
    let run = |spec: Value| {
        let client = client.clone();
        let base = server.base.clone();
        async move {
            let job: Value = client
                .post(format!("{base}/v1/jobs"))
                .bearer_auth(KEY)
                .json(&spec)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let location = format!("{base}/v1/jobs/{}", job["id"].as_str().unwrap());
            until_succeeded(&client, &location, Duration::from_secs(60)).await;
            let report = client
                .get(format!("{location}/result"))
                .bearer_auth(KEY)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let output = client
                .get(format!("{location}/output"))
                .bearer_auth(KEY)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            (report, output)
        }
    };
    let (first_report, first) = run(spec.clone()).await;
    let rotated = client
        .post(url("/v1/pseudonym-key/rotate"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(rotated.status(), 201);
    let rotated = rotated.text().await.unwrap();
    let (second_report, second) = run(spec).await;
    assert_ne!(first, second, "a rotation changes the pseudonyms");
    responses.push_str(&first_report);
    responses.push_str(&first);
    responses.push_str(&rotated);
    responses.push_str(&second_report);
    responses.push_str(&second);

    drop(client);
    let _ = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status();
    let _ = server.child.wait();
    let logs = std::fs::read_to_string(&log_path).expect("the server's log");
    assert!(logs.contains("pseudonym key rotated"), "{logs}");
    // both keys' secrets, read from the database file
    let options =
        sqlx::sqlite::SqliteConnectOptions::new().filename(dir.path().join("anonymizer.db"));
    let pool = sqlx::SqlitePool::connect_with(options)
        .await
        .expect("the database file");
    let secrets: Vec<Vec<u8>> =
        sqlx::query_scalar("select secret from pseudonym_key order by version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(secrets.len(), 2);
    for secret in &secrets {
        let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        let listed = format!("{secret:?}");
        for text in [&logs, &responses] {
            assert!(!text.contains(&hex) && !text.contains(&listed[1..listed.len() - 1]));
        }
    }
    for text in [&logs, &responses] {
        assert!(!text.contains("MRN-"), "a record number leaked");
    }
}
