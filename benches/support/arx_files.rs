//! Hierarchy files of the bundled data sets for the bench binaries that read them (`engine`,
//! `heuristics`): a spec's `{"path": …}` hierarchies resolved in the data set's folder.

use std::path::Path;

use anonymizer::codec::parse_arx_hierarchy;
use anonymizer::domain::spec::HierarchySpec;
use anonymizer::domain::Resolved;

/// Reads a `{"path": …}` hierarchy from `dir`, keeping the first line of each original value (see
/// [`first_definitions`]); other sources are refused.
pub fn resolve_in(dir: &Path, source: &HierarchySpec) -> Result<Resolved, String> {
    match source {
        HierarchySpec::Path { path, .. } => {
            let text = std::fs::read_to_string(dir.join(path)).map_err(|e| e.to_string())?;
            parse_arx_hierarchy(first_definitions(&text).as_bytes(), b';')
                .map(Into::into)
                .map_err(|e| e.to_string())
        }
        _ => Err("unsupported".to_string()),
    }
}

/// Keeps the first line of each original value. adult_full's age hierarchy (as published in ARX's
/// benchmark repository) lists the ages 72–88 twice with different intervals; the engine rightly rejects
/// that, so the benchmarks use the first definition (keeping the last gives a valid tree too).
fn first_definitions(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter(|line| seen.insert(line.split(';').next().unwrap_or("").to_string()))
        .flat_map(|line| [line, "\n"])
        .collect()
}
