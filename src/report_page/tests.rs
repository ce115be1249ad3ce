//! The page rendered from hand-made reports: sections present, figures formatted, text escaped, the
//! spec's values summarized, nothing to fetch.

use serde_json::json;

use super::*;

fn provenance(spec: Value) -> Provenance {
    Provenance {
        service_version: "9.9.9".into(),
        generated_at: "2026-11-29T08:00:00Z".into(),
        dataset: DatasetFacts {
            id: Some("d-1".into()),
            name: "ward <7> & co".into(),
            byte_size: Some(1_234_567),
            sha256: Some("ab".repeat(32)),
            records: Some(30_162),
        },
        job: Some(JobFacts {
            id: "j-1".into(),
            tenant: "t-1".into(),
            name: None,
            submitted_at: "2026-11-29T07:00:00Z".into(),
            started_at: Some("2026-11-29T07:00:01Z".into()),
            finished_at: None,
        }),
        spec,
    }
}

fn report() -> Value {
    json!({
        "records": 30162, "published_records": 30162, "suppressed_records": 906,
        "max_suppressed_records": 1206, "suppressed_records_removed": false,
        "transformation": {"age": 1, "sex": 0},
        "privacy_models": ["5-anonymity"], "metric": "nu_entropy", "loss": 255559.85,
        "metrics": {"precision": 0.72, "discernibility": 28740226.0},
        "equivalence_classes": {"count": 1046, "min": 5, "max": 165, "mean": 27.97},
        "search": {"algorithm": "flash", "exact": true, "nodes_checked": 37, "lattice_size": 480,
                   "candidates": 1, "pruning": true, "elapsed_ms": 84.2},
        "loss_measures": {"non_uniform_entropy": 10.0, "volume_inflation": {"mean": 2.5},
            "attributes": [
                {"attribute": "age", "redactions": 906, "information_loss": 0.25, "non_uniform_entropy": 7.5,
                 "entropy": 5.0, "tree": 906.0},
                {"attribute": "sex", "redactions": 906, "information_loss": null, "non_uniform_entropy": 2.5,
                 "entropy": 1.0, "tree": null}]},
        "risk": {
            "before": {"records": 30162, "classes": 19502, "threshold": 0.2,
                       "prosecutor": {"highest": 1.0, "average": 0.6466, "records_at_risk": 0.778},
                       "marketer": 0.6466, "sample_uniques": 0.514,
                       "population_uniques": {"population_size": 30162, "dankar": {"fraction": 0.514}},
                       "class_sizes": [{"smallest": 1, "largest": 1, "classes": 15512, "records": 15512},
                                       {"smallest": 2, "largest": null, "classes": 3990, "records": 14650}]},
            "after": {"records": 29256, "classes": 1046, "threshold": 0.2,
                      "prosecutor": {"highest": 0.2, "average": 0.0358, "records_at_risk": 0.0},
                      "marketer": 0.0358, "sample_uniques": 0.0,
                      "population_uniques": {"population_size": 29256, "dankar": {"fraction": 0.0}},
                      "class_sizes": [{"smallest": 1, "largest": 1, "classes": 0, "records": 0},
                                      {"smallest": 2, "largest": null, "classes": 1046, "records": 29256}]}
        },
        "achieved": {"k": 5, "sensitive_attributes": {"diagnosis": {"distinct_l": 2, "entropy_l": 1.9}}},
        "fully_generalized_records": 0,
        "warnings": [{"code": "fully_generalized", "column": "sex", "message": "every <record> shows *"}]
    })
}

#[test]
fn the_page_has_every_section_and_its_figures() {
    let html = render(&report(), &provenance(json!({"privacy_models": []}))).unwrap();
    for heading in [
        "1. Provenance",
        "2. Result",
        "3. Risk before and after",
        "4. Equivalence class sizes",
        "5. Information loss and utility",
        "6. Job specification",
        "7. Glossary",
    ] {
        assert!(html.contains(heading), "{heading}");
    }
    assert!(html.contains(&"ab".repeat(32)));
    assert!(html.contains(r#"<span class="figure" id="achieved-k">k = 5</span>"#));
    assert!(html.contains("30\u{2009}162"));
    assert!(html.contains("1.2 MB (1\u{2009}234\u{2009}567 bytes)"));
    assert!(html.contains("flash (optimal, 37 of 480 transformations checked"));
    assert!(html.contains("5-anonymity"));
    // the risk table: prosecutor highest 100 % before, 20 % after
    assert!(html.contains(
        r#"<th scope="row">Prosecutor risk, highest</th><td class="n">100.0 %</td><td class="n">20.0 %</td>"#
    ));
    // the class-size table and the per-column loss (null loss prints n/a)
    assert!(html.contains("<th scope=\"row\">2+</th><td class=\"n\">3\u{2009}990</td>"));
    assert!(
        html.contains(r#"<th scope="row">age</th><td class="n">1</td><td class="n">25.0 %</td>"#)
    );
    assert!(html.contains(r#"<th scope="row">sex</th><td class="n">0</td><td class="n">n/a</td>"#));
    assert!(html
        .contains(r#"<th scope="row">diagnosis</th><td class="n">2</td><td class="n">1.9</td>"#));
    assert_eq!(html.matches("<svg").count(), 3);
    // nothing to fetch, nothing to run
    assert!(html.contains(CONTENT_SECURITY_POLICY));
    for forbidden in [
        "<script", "<link", "<img", "@import", "url(", "src=", "http://", "https://",
    ] {
        let outside_svg_namespace = html.replace("http://www.w3.org/2000/svg", "");
        assert!(!outside_svg_namespace.contains(forbidden), "{forbidden}");
    }
}

#[test]
fn text_from_the_report_and_the_provenance_is_escaped() {
    let html = render(&report(), &provenance(json!({}))).unwrap();
    assert!(html.contains("ward &lt;7&gt; &amp; co"));
    assert!(html.contains("every &lt;record&gt; shows *"));
    assert!(!html.contains("<record>") && !html.contains("<7>"));
}

#[test]
fn a_report_without_optional_sections_still_renders() {
    let mut p = provenance(json!({}));
    p.job = None;
    p.dataset.sha256 = None;
    let html = render(&json!({"records": 0}), &p).unwrap();
    assert!(html.contains("local run of the command-line tool"));
    assert!(html.contains("No warnings."));
    assert!(html.contains("n/a"));
}

#[test]
fn inline_hierarchies_and_value_lists_are_summarized() {
    let spec = json!({
        "attributes": {
            "zip": {"role": "quasi_identifier", "hierarchy": {"levels": [["13053", "1305*"], ["13068", "1306*"]]}},
            "city": {"role": "quasi_identifier", "hierarchy": {"arx": "Paris;*\nLyon;*\n"}},
            "grade": {"role": "quasi_identifier", "order": ["low", "high"],
                      "hierarchy": {"builder": {"type": "interval", "intervals": [{"from": 0, "to": 10}]}}},
            "name": {"role": "identifying", "operator": {"type": "pseudonym"}}
        },
        "privacy_models": [
            {"type": "k_anonymity", "k": 5},
            {"type": "t_closeness", "attribute": "diagnosis", "t": 0.2, "order": ["HIV", "flu"]},
            {"type": "l_categorical_diversity", "attribute": "diagnosis",
             "categories": {"infectious": ["HIV", "hepatitis"]}, "dont_care": ["healthy"]}
        ]
    });
    let shown = redacted_spec(&spec);
    let text = shown.to_string();
    for value in [
        "13053",
        "1305*",
        "Paris",
        "Lyon",
        "low",
        "high",
        "HIV",
        "hepatitis",
        "healthy",
    ] {
        assert!(!text.contains(value), "{value}");
    }
    assert_eq!(
        shown["attributes"]["zip"]["hierarchy"]["levels"],
        "(2 entries, not shown: they may hold values)"
    );
    assert_eq!(
        shown["attributes"]["city"]["hierarchy"]["arx"],
        "(inline ARX hierarchy of 2 lines, not shown)"
    );
    // parameters that are not values stay
    assert_eq!(
        shown["attributes"]["grade"]["hierarchy"]["builder"]["intervals"][0]["to"],
        10
    );
    assert_eq!(shown["attributes"]["name"]["operator"]["type"], "pseudonym");
    // the models are shown, their value lists summarized
    assert_eq!(shown["privacy_models"][0], spec["privacy_models"][0]);
    assert_eq!(shown["privacy_models"][1]["t"], 0.2);
    assert_eq!(
        shown["privacy_models"][1]["order"],
        "(2 entries, not shown: they may hold values)"
    );
    assert_eq!(
        shown["privacy_models"][2]["categories"]["infectious"],
        "(2 entries, not shown: they may hold values)"
    );
}

#[test]
fn numbers_read_well() {
    let n = |v: TemplateValue| format_number(v);
    assert_eq!(n(TemplateValue::from(1234567)), "1\u{2009}234\u{2009}567");
    assert_eq!(n(TemplateValue::from(-1000)), "-1\u{2009}000");
    assert_eq!(n(TemplateValue::from(12.0)), "12");
    assert_eq!(n(TemplateValue::from(0.123456)), "0.1235");
    assert_eq!(n(TemplateValue::from(255559.85)), "255\u{2009}560");
    assert_eq!(n(TemplateValue::from(())), "n/a");
    assert_eq!(n(TemplateValue::from(1e20)), "100000000000000000000");
    assert_eq!(format_bytes(TemplateValue::from(999)), "999 bytes");
}
