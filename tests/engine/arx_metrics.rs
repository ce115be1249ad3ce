//! ARX's metrics (`arx_entropy`, `arx_loss`) against ARX's own expected optima on adult: the cases of
//! ARX's test suite that use its non-monotonic entropy and its Loss metric, each with one sensitive
//! column (`occupation`) and the other eight quasi-identifiers. The engine must find ARX's
//! transformation and its loss (ARX rounds each attribute's entropy and Loss down to 10 decimals, so
//! the values agree to about 1e-10).

use anonymizer::domain::JobSpec;
use serde_json::{json, Value};

use crate::golden_adult::{run_spec, COLUMNS};

/// One of ARX's test cases: the suppression limit, the privacy model, the metric, and ARX's optimum.
struct ArxCase {
    source: &'static str,
    suppression_limit: f64,
    model: fn() -> Value,
    metric: &'static str,
    loss: f64,
    transformation: [u8; 8],
}

const CASES: [ArxCase; 4] = [
    ArxCase {
        // source: ARX 3.9 test suite, arx-deidentifier/arx src/test/org/deidentifier/arx/test/TestAnonymizationCombinations.java, KAnonymity(5), 0.05, createPrecomputedEntropyMetric(0.1, false), "occupation": 180132.40848244698, {0, 0, 1, 1, 2, 2, 2, 0}
        source: "TestAnonymizationCombinations, KAnonymity(5)",
        suppression_limit: 0.05,
        model: || json!({"type": "k_anonymity", "k": 5}),
        metric: "arx_entropy",
        loss: 180_132.408_482_446_98,
        transformation: [0, 0, 1, 1, 2, 2, 2, 0],
    },
    ArxCase {
        // source: same file, RecursiveCLDiversity("occupation", 4.0, 5), 0.05, createPrecomputedEntropyMetric(0.1, false): 209764.96161974416, {1, 0, 1, 1, 2, 2, 2, 0}
        source: "TestAnonymizationCombinations, RecursiveCLDiversity(4, 5)",
        suppression_limit: 0.05,
        model: || json!({"type": "recursive_cl_diversity", "attribute": "occupation", "c": 4.0, "l": 5}),
        metric: "arx_entropy",
        loss: 209_764.961_619_744_16,
        transformation: [1, 0, 1, 1, 2, 2, 2, 0],
    },
    ArxCase {
        // source: ARX 3.9 test suite, src/test/org/deidentifier/arx/test/TestAnonymizationBLikeness.java, EnhancedBLikeness("occupation", 2), 0.0, createLossMetric(): 0.759176305345683, {1, 4, 1, 1, 3, 2, 2, 0}
        source: "TestAnonymizationBLikeness, EnhancedBLikeness(2)",
        suppression_limit: 0.0,
        model: || json!({"type": "beta_likeness", "attribute": "occupation", "beta": 2.0, "variant": "enhanced"}),
        metric: "arx_loss",
        loss: 0.759_176_305_345_683,
        transformation: [1, 4, 1, 1, 3, 2, 2, 0],
    },
    ArxCase {
        // source: same file, BasicBLikeness("occupation", 5), 0.4, createLossMetric(): 0.23350465152356303, {0, 2, 0, 0, 2, 0, 1, 0}
        source: "TestAnonymizationBLikeness, BasicBLikeness(5)",
        suppression_limit: 0.4,
        model: || json!({"type": "beta_likeness", "attribute": "occupation", "beta": 5.0, "variant": "basic"}),
        metric: "arx_loss",
        loss: 0.233_504_651_523_563_03,
        transformation: [0, 2, 0, 0, 2, 0, 1, 0],
    },
];

fn spec(case: &ArxCase) -> JobSpec {
    let attributes: serde_json::Map<String, Value> = COLUMNS
        .iter()
        .map(|&c| {
            let role = if c == "occupation" {
                json!({"role": "sensitive"})
            } else {
                json!({"role": "quasi_identifier", "hierarchy": {"path": format!("adult_hierarchy_{c}.csv")}})
            };
            (c.to_string(), role)
        })
        .collect();
    let spec = json!({
        "csv": {"delimiter": ";"},
        "attributes": attributes,
        "privacy_models": [(case.model)()],
        "suppression_limit": case.suppression_limit,
        "metric": case.metric,
    });
    JobSpec::from_json(spec.to_string().as_bytes()).expect("a valid spec")
}

#[test]
fn arx_metrics_find_arx_optima_with_arx_losses() {
    for case in &CASES {
        let spec = spec(case);
        let (outcome, _) = run_spec(&spec);
        assert_eq!(
            outcome.transformation, case.transformation,
            "{}: transformation",
            case.source
        );
        let loss = outcome.metrics.get(spec.metric);
        assert!(
            ((loss - case.loss) / case.loss).abs() < 1e-9,
            "{}: loss {loss}, ARX's {}",
            case.source,
            case.loss
        );
    }
}
