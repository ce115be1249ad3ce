//! Checks the layering rules of ARCHITECTURE.md on the source text: the core is pure (no clock, environment,
//! file, network, process, terminal output or async runtime), and every source file starts with a `//!`
//! comment that says what lives there, and lower layers (core, codec, domain, config) never import higher
//! ones (http, store, worker, cli).

use std::path::{Path, PathBuf};

/// What `src/core` must never use, with the reason given on failure.
const FORBIDDEN_IN_CORE: [(&str, &str); 17] = [
    ("std::fs", "file access"),
    ("std::env", "the environment"),
    ("std::time", "the clock"),
    ("Instant::", "the clock"),
    ("SystemTime", "the clock"),
    ("std::net", "the network"),
    ("std::process", "processes"),
    ("std::io::stdout", "terminal output"),
    ("std::io::stderr", "terminal output"),
    ("println!", "terminal output"),
    ("eprintln!", "terminal output"),
    ("dbg!", "terminal output"),
    ("tokio", "async runtime"),
    ("sqlx", "the database"),
    ("axum", "the HTTP layer"),
    ("OsRng", "the operating system's randomness"),
    ("getrandom", "the operating system's randomness"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether `code` contains `pattern` as a whole path or name (`eprintln!` does not mention `println!`).
fn mentions(code: &str, pattern: &str) -> bool {
    code.match_indices(pattern).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn core_is_pure() {
    let mut files = Vec::new();
    rust_files(&src().join("core"), &mut files);
    assert!(!files.is_empty());
    let mut violations = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source file");
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (pattern, what) in FORBIDDEN_IN_CORE {
                if mentions(code, pattern) {
                    violations.push(format!(
                        "{}:{}: `{pattern}` ({what})",
                        file.strip_prefix(src()).unwrap_or(file).display(),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "src/core must stay pure:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_source_file_says_what_lives_there() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).expect("source file");
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a leading //! comment:\n{}",
        missing.join("\n")
    );
}

/// Which layers each part of `src` may not import: lower layers never know higher ones.
const LAYERS: [(&str, &[&str]); 5] = [
    (
        "core",
        &[
            "crate::domain",
            "crate::codec",
            "crate::http",
            "crate::store",
            "crate::worker",
            "crate::cli",
            "crate::config",
        ],
    ),
    (
        "codec",
        &[
            "crate::domain",
            "crate::http",
            "crate::store",
            "crate::worker",
            "crate::cli",
        ],
    ),
    (
        "domain",
        &["crate::http", "crate::store", "crate::worker", "crate::cli"],
    ),
    (
        "config.rs",
        &["crate::http", "crate::store", "crate::worker", "crate::cli"],
    ),
    // the rendering writes texts; the algorithms that produce them (local recoding) build on it
    ("core/render.rs", &["crate::core::local", "super::local"]),
];

#[test]
fn lower_layers_never_import_higher_ones() {
    let mut violations = Vec::new();
    for (part, forbidden) in LAYERS {
        let path = src().join(part);
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
        assert!(!files.is_empty(), "{part} has no source files");
        for file in &files {
            let text = std::fs::read_to_string(file).expect("source file");
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for pattern in forbidden {
                    if mentions(code, pattern) {
                        violations.push(format!(
                            "{}:{}: {part} imports `{pattern}`",
                            file.strip_prefix(src()).unwrap_or(file).display(),
                            number + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layer direction broken:\n{}",
        violations.join("\n")
    );
}
