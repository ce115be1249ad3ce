//! Fragmentation jobs through the service: the job runs, the output is an archive of one CSV per
//! fragment, `?fragment=i` serves each alone, and independent code checks what was published: every
//! fragment is k-anonymous over its features, the features partition exactly with the class in every
//! fragment, every join of one class per fragment on the class holds 0 or at least k tuples, and the
//! fragments do not share a row order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::api_cases;
use crate::harness::{expect_problem, Service};
use crate::jobs::{run_to_success, toy_dataset, toy_spec};

api_cases!(
    fragments_are_published_and_checked,
    fragment_queries_are_checked,
);

/// 400 records, six numeric features, a class of three values carried mostly by `a` and `d`.
fn dataset_csv() -> Vec<u8> {
    let mut csv = String::from("a,b,c,d,e,f,outcome\n");
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    for _ in 0..400 {
        let a = next(30);
        let d = (a + next(6)) % 30;
        let class = match (a + d) / 20 {
            0 => "low",
            1 => "mid",
            _ => "high",
        };
        let class = if next(10) == 0 { "mid" } else { class };
        csv.push_str(&format!(
            "{a},{},{},{d},{},{},{class}\n",
            next(40),
            next(12),
            next(25),
            next(8)
        ));
    }
    csv.into_bytes()
}

fn spec(dataset: &str, strategy: &str) -> Value {
    let mut attributes = serde_json::Map::new();
    for feature in ["a", "b", "c", "d", "e", "f"] {
        attributes.insert(feature.into(), json!({"role": "quasi_identifier"}));
    }
    attributes.insert("outcome".into(), json!({"role": "sensitive"}));
    json!({
        "dataset_id": dataset,
        "attributes": attributes,
        "privacy_models": [{"type": "k_anonymity", "k": 5}],
        "algorithm": {"type": "fragmentation", "class": "outcome", "fragments": 2, "strategy": strategy},
    })
}

/// A published CSV as its header and rows.
fn parse(csv: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::str::from_utf8(csv).expect("UTF-8");
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

/// Per published class (the feature cells), the count of each class value.
fn classes(header: &[String], rows: &[Vec<String>]) -> Vec<BTreeMap<String, u64>> {
    let class = header.iter().position(|h| h == "outcome").expect("class");
    let mut by_key: HashMap<Vec<&str>, BTreeMap<String, u64>> = HashMap::new();
    for row in rows {
        let key: Vec<&str> = row
            .iter()
            .enumerate()
            .filter(|(c, _)| *c != class)
            .map(|(_, v)| v.as_str())
            .collect();
        *by_key
            .entry(key)
            .or_default()
            .entry(row[class].clone())
            .or_default() += 1;
    }
    by_key.into_values().collect()
}

async fn fragments_are_published_and_checked(service: Service) {
    let dataset = service.upload("fragmentable", &dataset_csv()).await;
    let dataset = dataset["id"].as_str().unwrap();
    for strategy in ["naive", "dgbe"] {
        let (job, report) = run_to_success(&service, &spec(dataset, strategy)).await;
        let section = &report["fragmentation"];
        assert_eq!(section["strategy"], strategy, "{section}");
        assert_eq!(section["fragments"].as_array().unwrap().len(), 2);
        assert_eq!(section["fragment_reports"].as_array().unwrap().len(), 2);
        assert!(report["achieved"]["k"].as_u64().unwrap() >= 5);
        // the archive
        let response = service
            .get(&format!("/v1/jobs/{job}/output"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "application/x-tar");
        let archive = response.bytes().await.unwrap();
        let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
        for entry in tar::Archive::new(&archive[..]).entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            entries.push((name, bytes));
        }
        let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["fragment-1.csv", "fragment-2.csv"]);
        // each fragment alone equals its archive entry
        for (i, (_, bytes)) in entries.iter().enumerate() {
            let response = service
                .get(&format!("/v1/jobs/{job}/output?fragment={}", i + 1))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            assert!(response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/csv"));
            assert_eq!(&response.bytes().await.unwrap()[..], &bytes[..]);
        }
        // independently: the layout, k-anonymity, the joins and the orders
        let parsed: Vec<(Vec<String>, Vec<Vec<String>>)> =
            entries.iter().map(|(_, b)| parse(b)).collect();
        let mut features = BTreeSet::new();
        for (header, rows) in &parsed {
            assert_eq!(header.last().map(String::as_str), Some("outcome"));
            assert_eq!(rows.len(), 400);
            for feature in &header[..header.len() - 1] {
                assert!(features.insert(feature.clone()), "{feature} twice");
            }
        }
        let expected: BTreeSet<String> = ["a", "b", "c", "d", "e", "f"].map(String::from).into();
        assert_eq!(features, expected);
        let published: Vec<Vec<BTreeMap<String, u64>>> =
            parsed.iter().map(|(h, r)| classes(h, r)).collect();
        for fragment in &published {
            assert!(fragment.iter().all(|c| c.values().sum::<u64>() >= 5));
        }
        let mut smallest = u64::MAX;
        for x in &published[0] {
            for y in &published[1] {
                let j: u64 = x
                    .iter()
                    .map(|(value, n)| n * y.get(value).copied().unwrap_or(0))
                    .sum();
                assert!(j == 0 || j >= 5, "{strategy}: a join of {j}");
                if j > 0 {
                    smallest = smallest.min(j);
                }
            }
        }
        assert_eq!(section["smallest_join"], smallest, "{strategy}");
        // the class column of each fragment holds the input's class values (repaired per strategy)
        let original: BTreeSet<&str> = ["low", "mid", "high"].into();
        for (header, rows) in &parsed {
            let class = header.len() - 1;
            assert!(rows.iter().all(|r| original.contains(r[class].as_str())));
        }
        // the fragments do not share the row order: the class columns read differently
        let column = |t: usize| -> Vec<&str> {
            parsed[t]
                .1
                .iter()
                .map(|r| r.last().unwrap().as_str())
                .collect()
        };
        assert_ne!(column(0), column(1));
        if strategy == "naive" {
            // every published class holds one class value
            assert!(published.iter().flatten().all(|c| c.len() == 1));
        }
    }
}

async fn fragment_queries_are_checked(service: Service) {
    let dataset = service.upload("fragmentable", &dataset_csv()).await;
    let dataset = dataset["id"].as_str().unwrap();
    let (job, _) = run_to_success(&service, &spec(dataset, "dgbe")).await;
    let get = |query: &str| {
        service
            .get(&format!("/v1/jobs/{job}/output?{query}"))
            .send()
    };
    expect_problem(get("fragment=3").await.unwrap(), 404, "unknown_fragment").await;
    expect_problem(get("fragment=0").await.unwrap(), 400, "invalid_query").await;
    expect_problem(get("fragment=x").await.unwrap(), 400, "invalid_query").await;
    // a one-table job has no fragments
    let toy = toy_dataset(&service).await;
    let (single, _) = run_to_success(&service, &toy_spec(&toy, 2)).await;
    let response = service
        .get(&format!("/v1/jobs/{single}/output?fragment=1"))
        .send()
        .await
        .unwrap();
    expect_problem(response, 404, "unknown_fragment").await;
    // a spec whose class is not sensitive, or with another published column, is refused
    let mut wrong = spec(dataset, "dgbe");
    wrong["attributes"]["outcome"]["role"] = json!("insensitive");
    let response = service.post("/v1/jobs").json(&wrong).send().await.unwrap();
    expect_problem(response, 422, "invalid_spec").await;
    let mut shared = spec(dataset, "dgbe");
    shared["attributes"]["f"] = json!({"role": "insensitive"});
    let response = service.post("/v1/jobs").json(&shared).send().await.unwrap();
    expect_problem(response, 422, "unsupported_option").await;
}
