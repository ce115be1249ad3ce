//! `"candidates": N`: the N best transformations of an exact search equal the exhaustive oracle's N best
//! solutions (by loss, then lower height, then the smaller node) on random small tables, for every
//! metric and exact algorithm; a heuristic lists the chosen node first and then solutions it checked.

use anonymizer::core::control::NoControl;
use anonymizer::core::engine::{anonymize, Outcome};
use anonymizer::core::loss::MetricKind;
use proptest::prelude::*;
use proptest::test_runner::Config;

use anonymizer::domain::prepare;

use anonymizer::core::engine::{Plan, Steering};
use anonymizer::core::privacy::KAnonymity;

use crate::properties::{
    build, failing_records_by, generate, recursive_passes, spec, steering_for, Job, ALGORITHMS,
    LIMITS_PERCENT,
};
use crate::support::close;

/// Runs every algorithm and metric on `job` asking for `n` candidates; `Err` describes the first
/// violation.
fn check_candidates(job: &Job, n: usize) -> Result<(), String> {
    let rows = job.rows.len() as u64;
    let budget = rows * job.percent / 100;
    let (table, mut prepared, dataset) = build(job)?;
    let nodes = dataset.all_nodes();
    let facts: Vec<_> = nodes.iter().map(|v| dataset.facts(v, job.k)).collect();
    let solutions: Vec<usize> = (0..nodes.len())
        .filter(|&i| facts[i].failing_records <= budget)
        .collect();
    let height = |i: usize| nodes[i].iter().map(|&l| u64::from(l)).sum::<u64>();
    for metric in MetricKind::ALL {
        let mut expected = solutions.clone();
        expected.sort_by(|&a, &b| {
            facts[a].metrics[&metric]
                .total_cmp(&facts[b].metrics[&metric])
                .then(height(a).cmp(&height(b)))
                .then(nodes[a].cmp(&nodes[b]))
        });
        expected.truncate(n);
        // metrics whose values are exact integers designate the nodes, ties included
        let integer_metric = matches!(
            metric,
            MetricKind::Height | MetricKind::DmStar | MetricKind::Discernibility
        );
        for algorithm in ALGORITHMS {
            let what = format!("{} / {} / n = {n}", algorithm.name(), metric.name());
            prepared.plan.metric = metric;
            prepared.plan.algorithm = algorithm;
            prepared.plan.candidates = n;
            let outcome = match anonymize(&prepared.input(&table), &prepared.plan, &NoControl) {
                Ok(o) => o,
                Err(_) if solutions.is_empty() => continue,
                Err(e) => return Err(format!("{what}: {e}")),
            };
            let listed = listed_nodes(&outcome, &nodes, &what)?;
            if listed.first()
                != nodes
                    .iter()
                    .position(|v| *v == outcome.transformation)
                    .as_ref()
            {
                return Err(format!(
                    "{what}: the first candidate is not the chosen node"
                ));
            }
            for (&i, c) in listed.iter().zip(&outcome.candidates) {
                let reported = c.metrics.get(metric);
                if !close(reported, facts[i].metrics[&metric])
                    || c.suppressed_records != facts[i].failing_records
                    || facts[i].failing_records > budget
                {
                    return Err(format!(
                        "{what}: candidate {:?} reports loss {reported} and {} suppressed; the \
                         checker finds {} and {} (budget {budget})",
                        nodes[i],
                        c.suppressed_records,
                        facts[i].metrics[&metric],
                        facts[i].failing_records
                    ));
                }
            }
            let proven = algorithm.is_exact();
            if outcome.candidates_exact != proven {
                return Err(format!(
                    "{what}: candidates_exact = {}",
                    outcome.candidates_exact
                ));
            }
            if !proven {
                continue;
            }
            if listed.len() != expected.len() {
                return Err(format!(
                    "{what}: {} candidates, the oracle has {} solutions within the {n} best",
                    listed.len(),
                    expected.len()
                ));
            }
            for (rank, (&got, &want)) in listed.iter().zip(&expected).enumerate() {
                let (g, w) = (facts[got].metrics[&metric], facts[want].metrics[&metric]);
                if !close(g, w) || (integer_metric && got != want) {
                    return Err(format!(
                        "{what}: candidate {} is {:?} (loss {g}), the oracle's is {:?} (loss {w}); \
                         listed {:?}, expected {:?}",
                        rank + 1,
                        nodes[got],
                        nodes[want],
                        listed.iter().map(|&i| &nodes[i]).collect::<Vec<_>>(),
                        expected.iter().map(|&i| &nodes[i]).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The oracle's index of every candidate, each listed once.
fn listed_nodes(outcome: &Outcome, nodes: &[Vec<u8>], what: &str) -> Result<Vec<usize>, String> {
    let mut listed = Vec::with_capacity(outcome.candidates.len());
    for c in &outcome.candidates {
        let i = nodes
            .iter()
            .position(|v| *v == c.transformation)
            .ok_or_else(|| format!("{what}: unknown candidate {:?}", c.transformation))?;
        if listed.contains(&i) {
            return Err(format!("{what}: {:?} listed twice", c.transformation));
        }
        listed.push(i);
    }
    Ok(listed)
}

/// With recursive (c,l)-diversity, not monotone under suppression (the bounded search ranks): every
/// exact algorithm lists the exhaustive search's candidates' losses, each a solution by the checker.
fn check_candidates_recursive(job: &Job, n: usize, c2: u64, l: u64) -> Result<(), String> {
    let budget = job.rows.len() as u64 * job.percent / 100;
    let (table, _, dataset) = build(job)?;
    let nodes = dataset.all_nodes();
    let failing: Vec<u64> = nodes
        .iter()
        .map(|v| {
            failing_records_by(&dataset, job.sensitive, v, job.k, |counts| {
                recursive_passes(counts, c2, l)
            })
        })
        .collect();
    let mut spec = spec(job);
    spec.privacy_models.push(
        serde_json::from_value(serde_json::json!({
            "type": "recursive_cl_diversity", "attribute": "diagnosis", "c": c2 as f64 / 2.0, "l": l
        }))
        .map_err(|e| e.to_string())?,
    );
    for metric in MetricKind::ALL {
        let mut oracle: Option<Vec<f64>> = None;
        for algorithm in ALGORITHMS.into_iter().filter(|a| a.is_exact()) {
            let what = format!(
                "{} / {} / c = {c2}/2, l = {l}",
                algorithm.name(),
                metric.name()
            );
            let mut prepared = prepare(&table, &spec, &|_| Err("inline only".into()))
                .map_err(|e| format!("{what}: prepare: {e}"))?;
            prepared.plan.metric = metric;
            prepared.plan.algorithm = algorithm;
            prepared.plan.candidates = n;
            let Ok(outcome) = anonymize(&prepared.input(&table), &prepared.plan, &NoControl) else {
                if failing.iter().any(|&f| f <= budget) {
                    return Err(format!("{what}: failed, but a solution exists"));
                }
                continue;
            };
            let listed = listed_nodes(&outcome, &nodes, &what)?;
            if listed.iter().any(|&i| failing[i] > budget) {
                return Err(format!("{what}: a candidate is not a solution"));
            }
            let losses: Vec<f64> = outcome
                .candidates
                .iter()
                .map(|c| c.metrics.get(metric))
                .collect();
            match &oracle {
                None => oracle = Some(losses),
                Some(want)
                    if want.len() != losses.len()
                        || want.iter().zip(&losses).any(|(&w, &g)| !close(w, g)) =>
                {
                    return Err(format!(
                        "{what}: losses {losses:?}, exhaustive ranks {want:?}"
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// With level bounds and weights: every exact algorithm lists the N best weighted losses among the
/// nodes within the bounds (the checker's brute force, filtered), as hierarchy levels within them.
fn check_steered_candidates(job: &Job, n: usize, seed: u64) -> Result<(), String> {
    let budget = job.rows.len() as u64 * job.percent / 100;
    let (table, prepared, dataset) = build(job)?;
    let input = prepared.input(&table);
    let (bounds, weights) = steering_for(job, &dataset, seed);
    let within = |v: &[u8]| {
        v.iter()
            .zip(&bounds)
            .all(|(&l, &(lo, hi))| lo <= l && l <= hi)
    };
    let facts: Vec<(Vec<u8>, _)> = dataset
        .all_nodes()
        .into_iter()
        .filter(|v| within(v))
        .map(|v| {
            let f = dataset.weighted_facts(&v, job.k, &weights);
            (v, f)
        })
        .filter(|(_, f)| f.failing_records <= budget)
        .collect();
    for metric in MetricKind::ALL {
        let mut expected: Vec<f64> = facts.iter().map(|(_, f)| f.metrics[&metric]).collect();
        expected.sort_by(f64::total_cmp);
        expected.truncate(n);
        for algorithm in ALGORITHMS.into_iter().filter(|a| a.is_exact()) {
            let what = format!(
                "{} / {} with bounds {bounds:?}, weights {weights:?}, n = {n}",
                algorithm.name(),
                metric.name()
            );
            let plan = Plan {
                privacy_models: vec![Box::new(KAnonymity { k: job.k })],
                suppression_limit: job.percent as f64 / 100.0,
                metric,
                algorithm,
                private_search: None,
                steering: Steering {
                    level_bounds: Some(bounds.clone()),
                    weights: Some(weights.clone()),
                },
                candidates: n,
            };
            let Ok(outcome) = anonymize(&input, &plan, &NoControl) else {
                if facts.is_empty() {
                    continue;
                }
                return Err(format!(
                    "{what}: failed, but a node within the bounds is a solution"
                ));
            };
            if outcome
                .candidates
                .iter()
                .any(|c| !within(&c.transformation))
            {
                return Err(format!("{what}: a candidate lies outside the bounds"));
            }
            let losses: Vec<f64> = outcome
                .candidates
                .iter()
                .map(|c| c.metrics.get(metric))
                .collect();
            if losses.len() != expected.len()
                || losses.iter().zip(&expected).any(|(&g, &w)| !close(g, w))
            {
                return Err(format!(
                    "{what}: losses {losses:?}, the oracle's {expected:?}"
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn exact_searches_rank_the_oracles_best_solutions(
        seed in any::<u64>(),
        qis in 1usize..=4,
        rows in 5usize..=40,
        k_pick in any::<u64>(),
        limit in 0usize..LIMITS_PERCENT.len(),
        n in 2usize..=8,
    ) {
        let job = generate(seed, qis, rows, k_pick, limit);
        if let Err(e) = check_candidates(&job, n) {
            prop_assert!(false, "{e}\nk = {}, limit = {}%, rows = {:?}", job.k, job.percent, job.rows);
        }
    }

    #[test]
    fn exact_searches_rank_as_exhaustive_under_recursive_diversity(
        seed in any::<u64>(),
        qis in 1usize..=3,
        rows in 5usize..=40,
        k_pick in any::<u64>(),
        limit in 1usize..LIMITS_PERCENT.len(),
        n in 2usize..=6,
        c2 in 2u64..=8,
        l in 2u64..=3,
    ) {
        let job = generate(seed, qis, rows, k_pick, limit);
        if let Err(e) = check_candidates_recursive(&job, n, c2, l) {
            prop_assert!(false, "{e}\nk = {}, limit = {}%, rows = {:?}", job.k, job.percent, job.rows);
        }
    }

    #[test]
    fn steered_exact_searches_rank_within_the_bounds(
        seed in any::<u64>(),
        qis in 1usize..=3,
        rows in 5usize..=40,
        k_pick in any::<u64>(),
        limit in 0usize..LIMITS_PERCENT.len(),
        n in 2usize..=6,
    ) {
        let job = generate(seed, qis, rows, k_pick, limit);
        if let Err(e) = check_steered_candidates(&job, n, seed) {
            prop_assert!(false, "{e}\nk = {}, limit = {}%, rows = {:?}", job.k, job.percent, job.rows);
        }
    }
}
