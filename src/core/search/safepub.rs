//! SafePub's search (Bild, Kuhn & Prasser 2018, PoPETs 2018(1):67–87, §4.3): a walk down the
//! generalization lattice whose every step is an exponential-mechanism draw. It starts with the most
//! general node as pivot; each step adds the pivot's direct specializations (its predecessors) to the
//! candidates, removes the pivot, and draws the next pivot among the candidates with probability
//! proportional to exp(ε_step · score / 2) ([`crate::core::differential::score`]).
//!
//! One deviation, for the guarantee's sake: SafePub (and ARX) publish the pivot with the best exact
//! score, a choice that depends on the data outside the budget. Here the search budget is halved: the
//! steps share one half, and the published node is drawn among the pivots with the other half by one
//! more exponential-mechanism draw, so the search's output is ε_s-differentially private by sequential
//! composition (each draw's candidates are fixed by the draws before it).

use rustc_hash::FxHashSet;

use super::Evaluator;
use crate::core::differential::mechanism::select;
use crate::core::differential::score::{score, NodeFacts, ScoreContext};
use crate::core::differential::PrivateSearch;
use crate::core::error::CoreError;
use crate::core::lattice::NodeId;
use crate::core::secret_rng::SecretStream;

/// The walk's pivots and the node drawn among them.
#[derive(Debug, Clone, PartialEq)]
pub struct Walk {
    /// Pivots in the order drawn, the most general node first.
    pub pivots: Vec<NodeId>,
    /// The published node.
    pub chosen: NodeId,
}

/// Runs the search on the sampled table behind `ev` (whose models suppress every class below k).
pub fn search(ev: &mut Evaluator<'_>, private: &PrivateSearch) -> Result<Walk, CoreError> {
    let context = ScoreContext {
        metric: ev.metric(),
        k: private.k,
        input_rows: private.input_rows,
        sample_rows: ev.loss_model().rows(),
    };
    let mut stream = SecretStream::new(&private.key, 0);
    let lattice = ev.lattice().clone();
    let heights = lattice.max_levels().to_vec();
    let mut levels = vec![0u8; heights.len()];
    let mut score_of = |ev: &mut Evaluator<'_>, id: NodeId| -> Result<f64, CoreError> {
        let check = ev.check(id)?;
        lattice.levels_into(id, &mut levels);
        let facts = NodeFacts {
            levels: &levels,
            heights: &heights,
            loss: check.loss,
            suppressed: check.failing_records,
            kept_classes: check.kept_classes,
        };
        score(&context, &facts).ok_or(CoreError::InvalidParameter {
            name: "metric",
            problem: format!(
                "differential privacy has no score function for the metric '{}'",
                context.metric.name()
            ),
        })
    };
    let top = lattice.id(&heights);
    let mut pivot = top;
    let mut pivots = vec![top];
    let mut pivot_scores = vec![score_of(ev, top)?];
    // candidates in insertion order, so a key always gives the same walk
    let mut candidates: Vec<(NodeId, f64)> = Vec::new();
    let mut listed: FxHashSet<NodeId> = FxHashSet::default();
    let step_epsilon = private.step_epsilon();
    let mut pace = ev.pace();
    for _ in 0..private.steps {
        pace.step(1)?;
        let pivot_levels = lattice.levels(pivot);
        for (j, &level) in pivot_levels.iter().enumerate() {
            if level == 0 {
                continue;
            }
            let predecessor = pivot - lattice.stride(j);
            if listed.insert(predecessor) {
                let s = score_of(ev, predecessor)?;
                candidates.push((predecessor, s));
            }
        }
        if let Some(at) = candidates.iter().position(|&(id, _)| id == pivot) {
            candidates.remove(at);
            listed.remove(&pivot);
        }
        if candidates.is_empty() {
            break;
        }
        let scores: Vec<f64> = candidates.iter().map(|&(_, s)| s).collect();
        let (next, s) = candidates[select(&scores, step_epsilon, &mut stream)];
        pivot = next;
        if !pivots.contains(&next) {
            pivots.push(next);
            pivot_scores.push(s);
        }
    }
    let chosen = pivots[select(&pivot_scores, private.choice_epsilon(), &mut stream)];
    Ok(Walk { pivots, chosen })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::core::control::NoControl;
    use crate::core::data::{GeneralizationMap, Hierarchy, Table};
    use crate::core::differential::mechanism::probabilities;
    use crate::core::input::{EngineInput, QuasiIdentifier};
    use crate::core::loss::MetricKind;
    use crate::core::privacy::{KAnonymity, PrivacyModel};
    use crate::core::secret_rng::SecretKey;

    /// 30 records: ages 20–25 (value, parity, `*`) and sex (value, `*`).
    fn table() -> (Table, [GeneralizationMap; 2]) {
        let rows: Vec<Vec<String>> = (0..30)
            .map(|i| {
                let age = 20 + (i * 7) % 6;
                let sex = if i % 3 == 0 { "F" } else { "M" };
                vec![age.to_string(), sex.to_string()]
            })
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let table = Table::from_rows(&["age", "sex"], &rows);
        let ages: Vec<Vec<String>> = (20..26)
            .map(|a: u32| {
                let parity = if a % 2 == 0 { "even" } else { "odd" };
                vec![a.to_string(), parity.to_string(), "*".to_string()]
            })
            .collect();
        let age = Hierarchy::from_rows(&ages).expect("ages");
        let sex = Hierarchy::from_rows(&[vec!["F", "*"], vec!["M", "*"]]).expect("sex");
        let maps = [
            GeneralizationMap::bind(age, table.column(0)).expect("bind"),
            GeneralizationMap::bind(sex, table.column(1)).expect("bind"),
        ];
        (table, maps)
    }

    fn input<'a>(table: &'a Table, maps: &'a [GeneralizationMap; 2]) -> EngineInput<'a> {
        EngineInput {
            rows: table.row_count(),
            quasi_identifiers: (0..2)
                .map(|j| QuasiIdentifier {
                    name: "q",
                    codes: &table.column(j).codes,
                    hierarchy: &maps[j],
                })
                .collect(),
            sensitive: Vec::new(),
        }
    }

    /// The discernibility score of `levels` computed here from the class sizes, with k = 3 and no
    /// record left out by sampling: −(n · suppressed + Σ kept |EC|²) / (n · (k²/(k−1) + 1)).
    fn expected_score(table: &Table, maps: &[GeneralizationMap; 2], levels: [usize; 2]) -> f64 {
        let mut sizes: HashMap<(u32, u32), u64> = HashMap::new();
        for row in 0..table.row_count() {
            let key = (
                maps[0].codes(levels[0])[table.column(0).codes[row] as usize],
                maps[1].codes(levels[1])[table.column(1).codes[row] as usize],
            );
            *sizes.entry(key).or_default() += 1;
        }
        let n = table.row_count() as f64;
        let (suppressed, squares) = sizes.values().fold((0.0, 0.0), |(s, q), &c| {
            if c < 3 {
                (s + c as f64, q)
            } else {
                (s, q + (c * c) as f64)
            }
        });
        -(n * suppressed + squares) / (n * (9.0 / 2.0 + 1.0))
    }

    fn walk(input: &EngineInput<'_>, seed: u64, epsilon: f64, steps: u32) -> Walk {
        let models: Vec<Box<dyn PrivacyModel>> = vec![Box::new(KAnonymity { k: 3 })];
        let control = NoControl;
        let mut ev = Evaluator::new(
            input,
            &models,
            input.rows as u64,
            MetricKind::Discernibility,
            &control,
        );
        let private = PrivateSearch {
            epsilon,
            steps,
            k: 3,
            input_rows: input.rows as u64,
            key: SecretKey::from_u64(seed),
        };
        search(&mut ev, &private).expect("walk")
    }

    /// Many seeded runs of one step: the first pivot follows the exponential mechanism over the top's
    /// two predecessors, and the published node the mechanism over the top and that pivot, each with
    /// half the budget (scores recomputed here from the class sizes).
    #[test]
    fn draws_follow_the_exponential_mechanism() {
        let (table, maps) = table();
        let input = input(&table, &maps);
        let lattice = crate::core::lattice::Lattice::new(input.max_levels());
        let top = lattice.id(&[2, 1]);
        let first = [lattice.id(&[1, 1]), lattice.id(&[2, 0])];
        let score = |levels| expected_score(&table, &maps, levels);
        let (s_top, s_parity, s_age) = (score([2, 1]), score([1, 1]), score([2, 0]));
        let epsilon = 8.0; // 4 for the step, 4 for the choice
        let step = probabilities(&[s_parity, s_age], 4.0);
        let keep_top = |s: f64| probabilities(&[s_top, s], 4.0)[0];
        let runs = 4000;
        let (mut parity, mut top_chosen) = (0u32, 0u32);
        for seed in 0..runs {
            let w = walk(&input, seed, epsilon, 1);
            assert_eq!(w.pivots[0], top);
            assert!(first.contains(&w.pivots[1]), "{:?}", w.pivots);
            parity += u32::from(w.pivots[1] == first[0]);
            top_chosen += u32::from(w.chosen == top);
            assert!(w.chosen == top || w.chosen == w.pivots[1]);
        }
        let within = |count: u32, p: f64| {
            let mean = p * runs as f64;
            let sd = (runs as f64 * p * (1.0 - p)).sqrt();
            (f64::from(count) - mean).abs() <= 5.0 * sd.max(1.0)
        };
        assert!(within(parity, step[0]), "{parity} of {runs}, p {}", step[0]);
        let p_top = step[0] * keep_top(s_parity) + step[1] * keep_top(s_age);
        assert!(
            within(top_chosen, p_top),
            "{top_chosen} of {runs}, p {p_top}"
        );
    }

    #[test]
    fn a_lattice_of_one_node_publishes_it() {
        let rows: Vec<Vec<&str>> = (0..10).map(|_| vec!["30", "F"]).collect();
        let table = Table::from_rows(&["age", "sex"], &rows);
        let flat = [
            GeneralizationMap::bind(
                Hierarchy::from_rows(&[vec!["30"]]).expect("age"),
                table.column(0),
            )
            .expect("bind"),
            GeneralizationMap::bind(
                Hierarchy::from_rows(&[vec!["F"]]).expect("sex"),
                table.column(1),
            )
            .expect("bind"),
        ];
        let input = input(&table, &flat);
        let w = walk(&input, 1, 1.0, 10);
        assert_eq!(w.pivots, vec![0]);
        assert_eq!(w.chosen, 0);
    }

    #[test]
    fn a_key_gives_one_walk_and_the_walk_stops_when_the_lattice_is_spent() {
        let (table, maps) = table();
        let input = input(&table, &maps);
        assert_eq!(walk(&input, 9, 1.0, 50), walk(&input, 9, 1.0, 50));
        // more steps than nodes: the walk ends (a former pivot may come back as a candidate, as in
        // ARX) and every pivot after the top is a direct specialization of an earlier one
        let lattice = crate::core::lattice::Lattice::new(input.max_levels());
        let w = walk(&input, 9, 1.0, 50);
        assert!(w.pivots.contains(&w.chosen));
        for (i, &p) in w.pivots.iter().enumerate().skip(1) {
            let levels = lattice.levels(p);
            let below_an_earlier = w.pivots[..i].iter().any(|&q| {
                let above = lattice.levels(q);
                let steps: Vec<i32> = above
                    .iter()
                    .zip(&levels)
                    .map(|(&a, &b)| i32::from(a) - i32::from(b))
                    .collect();
                steps.iter().all(|&d| d >= 0) && steps.iter().sum::<i32>() == 1
            });
            assert!(below_an_earlier, "pivot {i} of {:?}", w.pivots);
        }
    }
}
