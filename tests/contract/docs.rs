//! The documentation's examples are real: every JSON block of the README and of `docs/` parses, the
//! ones shaped like a job spec parse as a [`JobSpec`] (an assessment request as an assessment), and every
//! inline model, algorithm, class function or hierarchy snippet parses as the spec type it illustrates.
//! Snippets abbreviated with `…` are skipped. Every page the README links to exists.

use std::path::{Path, PathBuf};

use anonymizer::domain::analysis::assessment::AssessmentSpec;
use anonymizer::domain::builders::BuilderSpec;
use anonymizer::domain::spec::{
    AlgorithmSpec, ClassFunctionSpec, HierarchySpec, OperatorSpec, PrivacyModelSpec,
};
use anonymizer::domain::JobSpec;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 5, "docs/ has {} pages", docs.len());
    pages.extend(docs);
    pages
}

fn name(page: &Path) -> String {
    page.strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string()
}

/// The fenced ```json blocks of `text`.
fn json_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_start() == "```json" => current = Some(String::new()),
            Some(block) if line.trim_start() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// The inline code spans of `text` that hold a JSON object (`{"…`; a bare `{a: 1}` is notation).
fn inline_objects(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("{\"") && span.ends_with('}'))
        .collect()
}

#[test]
fn json_blocks_parse_and_specs_are_valid() {
    let mut specs = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page");
        for block in json_blocks(&text) {
            let value: Value = serde_json::from_str(&block).unwrap_or_else(|e| {
                panic!("{}: a JSON block does not parse: {e}\n{block}", name(&page))
            });
            let Some(object) = value.as_object() else {
                continue;
            };
            if object.contains_key("privacy_models") {
                let mut spec = value.clone();
                // the service's request is the CLI's spec plus the dataset
                if let Some(object) = spec.as_object_mut() {
                    object.remove("dataset_id");
                }
                JobSpec::from_json(spec.to_string().as_bytes())
                    .unwrap_or_else(|e| panic!("{}: a spec example is invalid: {e}", name(&page)));
                specs += 1;
            } else if object.contains_key("attributes") {
                AssessmentSpec::from_json(block.as_bytes()).unwrap_or_else(|e| {
                    panic!("{}: an assessment example is invalid: {e}", name(&page))
                });
                specs += 1;
            }
        }
    }
    assert!(specs >= 1, "no spec example found");
}

#[test]
fn inline_snippets_parse_as_what_they_illustrate() {
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page");
        for snippet in inline_objects(&text) {
            if snippet.contains('…') {
                continue;
            }
            let parses = if snippet.starts_with(r#"{"type""#) {
                serde_json::from_str::<PrivacyModelSpec>(snippet).is_ok()
                    || serde_json::from_str::<AlgorithmSpec>(snippet).is_ok()
                    || serde_json::from_str::<ClassFunctionSpec>(snippet).is_ok()
                    || serde_json::from_str::<BuilderSpec>(snippet).is_ok()
                    || serde_json::from_str::<OperatorSpec>(snippet).is_ok()
            } else if ["path", "levels", "arx", "id", "builder"]
                .iter()
                .any(|k| snippet.starts_with(&format!(r#"{{"{k}""#)))
            {
                serde_json::from_str::<HierarchySpec>(snippet).is_ok()
            } else {
                // other objects (report excerpts, settings) need only be JSON
                serde_json::from_str::<Value>(snippet).is_ok()
            };
            assert!(
                parses,
                "{}: `{snippet}` does not parse as what it shows",
                name(&page)
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} snippets checked");
}

#[test]
fn every_linked_page_exists() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page");
        let base = page.parent().expect("folder").to_path_buf();
        for target in text
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            if target.starts_with("http")
                || target.starts_with('#')
                || target.starts_with("mailto:")
            {
                continue;
            }
            let file = target.split('#').next().unwrap_or(target);
            assert!(
                base.join(file).exists(),
                "{}: the link to {target} leads nowhere",
                name(&page)
            );
        }
    }
}
