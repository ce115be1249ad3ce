//! `anonymizer anonymize`: the engine on local files. Reads the spec and the CSV, resolves hierarchy paths
//! relative to the spec, runs the search, and writes the output CSV and the report. Output files are written
//! to a temporary name and renamed, so a failed run leaves no partial file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use super::input::{read_input, read_like_input, FileDigest};
use super::progress::TerminalProgress;
use super::AnonymizeArgs;
use crate::codec::encoding::EncodingWriter;
use crate::codec::{parse_arx_hierarchy, CsvOptions};
use crate::core::control::{Control, Stage};
use crate::core::engine::Outcome;
use crate::core::identifiers::PseudonymKey;
use crate::domain::analysis::candidates::CandidatesReport;
use crate::domain::analysis::warnings::refuse;
use crate::domain::resolve::document::parse_hierarchy_document;
use crate::domain::resolve::identifiers::missing_key;
use crate::domain::resolve::{input_format, output_encoding};
use crate::domain::run::{run_job_with, JobInputs, RunError};
use crate::domain::spec::{HierarchySpec, OperatorSpec};
use crate::domain::{JobSpec, Report, Resolved};
use crate::http::time::{now_ms, rfc3339};
use crate::report_page::{DatasetFacts, Provenance};

/// Runs the command; errors are one-line messages.
pub fn run(args: &AnonymizeArgs) -> Result<(), String> {
    refuse_overwriting_inputs(args)?;
    // the bytes are kept for the report page, which shows the spec that ran
    let spec_bytes = read_spec_file(&args.spec)?;
    let mut spec = parse_job_spec(&args.spec, &spec_bytes)?;
    if let Some(transformation) = &args.transformation {
        spec.transformation = Some(transformation.clone());
    }
    let format = input_format(&spec.csv).map_err(|e| super::spec_problems(&e))?;
    let output_encoding = output_encoding(&spec.csv).map_err(|e| super::spec_problems(&e))?;
    // the key is read (and refused) before the input, and only when the spec asks for pseudonyms
    let key = if spec.uses_pseudonyms() {
        match pseudonym_key(args.pseudonym_key_file.as_deref())? {
            Some(key) => Some(key),
            None => {
                let column = spec
                    .attributes
                    .iter()
                    .find(|(_, a)| a.operator == Some(OperatorSpec::Pseudonym {}))
                    .map_or("", |(name, _)| name.as_str());
                return Err(super::spec_problems(&missing_key(column)));
            }
        }
    } else {
        None
    };
    let progress = TerminalProgress::new(args.quiet);
    // the hierarchy files are parsed on the job's threads while the input is read
    // the page's provenance names the bytes the table was read from: hashed while they are read
    let (input, preloaded) = rayon::join(
        || {
            read_input(
                &args.input,
                &format,
                args.csv_field_limit,
                args.report_html.is_some(),
            )
        },
        || preload_hierarchies(&spec, &args.spec),
    );
    let (table, options, digest) = input?;
    // the population table is read as the input was (delimiter and encoding)
    let population = match &args.population {
        None => None,
        Some(path) => Some(read_like_input(path, &format, &options, "population")?),
    };
    let resolve = preloaded.resolver();
    let inputs = JobInputs {
        pseudonym_key: key.as_ref(),
        population: population.as_ref(),
    };
    let completed = run_job_with(&table, &spec, &resolve, &progress, inputs);
    // on an error the bar is cleared when `progress` is dropped, before the caller prints the error
    let completed = completed.map_err(|e| match e {
        RunError::Spec(e) => super::spec_problems(&e),
        other => other.to_string(),
    })?;
    progress.enter(Stage::Measuring);
    let report = completed.report();
    if spec.strict {
        // nothing is written: the run's warnings are errors
        refuse(&report.warnings).map_err(|e| super::spec_problems(&e))?;
    }
    progress.enter(Stage::Writing);
    let paths: Vec<PathBuf> = if completed.is_fragmented() {
        (1..=completed.outputs())
            .map(|i| fragment_path(&args.output, i))
            .collect()
    } else {
        vec![args.output.clone()]
    };
    for path in &paths {
        refuse_overwriting(path, args)?;
    }
    let written = write_all_atomically(&paths, |index, w| match output_encoding {
        None => completed
            .write_output(index, w, &options)
            .map_err(|e| e.to_string()),
        Some(encoding) => {
            let mut encoded = EncodingWriter::new(w, encoding);
            completed
                .write_output(index, &mut encoded, &options)
                .map_err(|e| e.to_string())?;
            encoded.flush().map_err(|e| e.to_string())
        }
    });
    progress.finish();
    written?;
    if args.timings {
        eprintln!("{}", progress.stage_summary());
    }
    let elapsed_ms = completed.elapsed_ms();
    match &args.report {
        Some(path) => write_atomically(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &report).map_err(|e| e.to_string())?;
            w.write_all(b"\n").map_err(|e| e.to_string())
        })?,
        None => eprintln!("{}", summary(&report, completed.outcome(), elapsed_ms)),
    }
    if let (Some(path), Some(digest)) = (&args.report_html, &digest) {
        let page = report_page(&report, args, &spec_bytes, digest)?;
        write_atomically(path, |w| {
            w.write_all(page.as_bytes()).map_err(|e| e.to_string())
        })?;
    }
    if !args.quiet {
        for warning in &report.warnings {
            match &warning.column {
                Some(column) => {
                    eprintln!("warning: {column}: {} [{}]", warning.message, warning.code)
                }
                None => eprintln!("warning: {} [{}]", warning.message, warning.code),
            }
        }
    }
    Ok(())
}

/// The report as an HTML page; the provenance names the input file with the size and SHA-256 of the
/// bytes the table was read from, and shows the spec that ran (the spec file, with `--transformation`
/// in place of its own).
fn report_page(
    report: &Report,
    args: &AnonymizeArgs,
    spec_bytes: &[u8],
    digest: &FileDigest,
) -> Result<String, String> {
    let mut spec: serde_json::Value =
        serde_json::from_slice(spec_bytes).unwrap_or(serde_json::Value::Null);
    if let (Some(levels), Some(object)) = (&args.transformation, spec.as_object_mut()) {
        object.insert(
            "transformation".to_string(),
            serde_json::to_value(levels).map_err(|e| e.to_string())?,
        );
    }
    let provenance = Provenance {
        service_version: env!("CARGO_PKG_VERSION").to_string(),
        generated_at: rfc3339(now_ms()),
        dataset: DatasetFacts {
            id: None,
            name: args.input.file_name().map_or_else(
                || args.input.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            byte_size: Some(digest.byte_size),
            sha256: Some(digest.sha256.clone()),
            records: Some(report.records),
        },
        job: None,
        spec,
    };
    let report = serde_json::to_value(report).map_err(|e| e.to_string())?;
    crate::report_page::render(&report, &provenance).map_err(|e| e.to_string())
}

/// The environment variable holding the pseudonym key when no key file is given.
pub const PSEUDONYM_KEY_VARIABLE: &str = "ANONYMIZER_PSEUDONYM_KEY";

/// The pseudonym key of `--pseudonym-key-file`, else of [`PSEUDONYM_KEY_VARIABLE`], else none. Errors
/// never show the key.
fn pseudonym_key(file: Option<&Path>) -> Result<Option<PseudonymKey>, String> {
    let (secret, source) = match file {
        Some(path) => (
            std::fs::read(path).map_err(|e| {
                format!(
                    "cannot read the pseudonym key file {}: {}",
                    path.display(),
                    e.kind()
                )
            })?,
            format!("the pseudonym key file {}", path.display()),
        ),
        None => match std::env::var_os(PSEUDONYM_KEY_VARIABLE) {
            Some(value) => (
                value.into_encoded_bytes(),
                PSEUDONYM_KEY_VARIABLE.to_string(),
            ),
            None => return Ok(None),
        },
    };
    let secret = secret
        .strip_suffix(b"\n")
        .map(|s| s.strip_suffix(b"\r").unwrap_or(s))
        .unwrap_or(&secret);
    PseudonymKey::new(secret)
        .map(Some)
        .map_err(|e| format!("{source}: {e} [pseudonym_key_missing]"))
}

/// `OUT.fragment-i.csv` for `--output OUT.csv` (the extension kept, `csv` when there is none).
pub fn fragment_path(output: &Path, index: usize) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let extension = output
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "csv".into());
    output.with_file_name(format!("{stem}.fragment-{index}.{extension}"))
}

/// One line about the run for the terminal.
fn summary(report: &Report, outcome: Option<&Outcome>, elapsed_ms: f64) -> String {
    if let Some(fragmentation) = &report.fragmentation {
        let f = &fragmentation.summary;
        return format!(
            "fragmentation: {} fragments ({}), FMRMR {:.4}, {} class values changed ({}), smallest class {}, information loss {} in {:.1} ms",
            f.fragments.len(),
            f.fragments
                .iter()
                .map(|x| x.features.len().to_string())
                .collect::<Vec<_>>()
                .join(" + "),
            f.fmrmr,
            f.class_values_changed,
            f.strategy,
            report.equivalence_classes.min,
            f.information_loss
                .map_or_else(|| "n/a".to_string(), |l| format!("{l:.4}")),
            elapsed_ms
        );
    }
    match (outcome, &report.search, &report.recoding) {
        (Some(outcome), Some(search), _) => format!(
            "transformation {:?}, {} records suppressed, {} = {}, {} classes, {} nodes checked in {:.1} ms{}",
            outcome.transformation,
            report.suppressed_records,
            report.metric.unwrap_or_default(),
            report.loss.unwrap_or_default(),
            report.equivalence_classes.count,
            search.nodes_checked,
            elapsed_ms,
            report.candidates.as_ref().map_or_else(String::new, candidate_lines)
        ),
        (_, _, Some(recoding)) => format!(
            "{}: {} groups (smallest {}), {} records suppressed, GCP = {:.4} in {:.1} ms",
            recoding.algorithm,
            recoding.groups,
            report.equivalence_classes.min,
            report.suppressed_records,
            recoding.metrics.gcp,
            elapsed_ms
        ),
        _ => format!("finished in {elapsed_ms:.1} ms"),
    }
}

/// One line per candidate after the chosen one, each as `--transformation` takes it.
fn candidate_lines(candidates: &CandidatesReport) -> String {
    let mut out = format!(
        "\ncandidates ({}; publish one with --transformation):",
        if candidates.exact {
            "the proven best"
        } else {
            "the best the heuristic checked"
        }
    );
    for c in &candidates.list {
        let levels: Vec<String> = c
            .transformation
            .iter()
            .map(|(name, level)| format!("{name}={level}"))
            .collect();
        out.push_str(&format!(
            "\n  {}. {} loss {}, {} suppressed, {} classes, highest risk {:.4}",
            c.rank,
            levels.join(","),
            c.loss,
            c.suppressed_records,
            c.equivalence_classes.count,
            c.risk.highest
        ));
    }
    out
}

/// Reads and parses the job spec at `path`.
pub(super) fn read_job_spec(path: &Path) -> Result<JobSpec, String> {
    parse_job_spec(path, &read_spec_file(path)?)
}

/// The bytes of the spec file at `path`.
fn read_spec_file(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read spec {}: {}", path.display(), e.kind()))
}

/// The job spec in `bytes`, read from `path`.
fn parse_job_spec(path: &Path, bytes: &[u8]) -> Result<JobSpec, String> {
    JobSpec::from_json(bytes).map_err(|e| format!("spec {}: {e}", path.display()))
}

/// Hierarchy files a spec names, read and parsed ahead of the run; each result is handed out once, and
/// anything else (a second use of a file, an inline hierarchy) is loaded when asked for.
struct Preloaded {
    base: PathBuf,
    files: Mutex<HashMap<FileKey, Result<Resolved, String>>>,
}

/// A hierarchy file as the spec names it: its path and delimiter.
type FileKey = (String, Option<String>);

impl Preloaded {
    fn resolver(&self) -> impl Fn(&HierarchySpec) -> Result<Resolved, String> + '_ {
        move |source| {
            if let HierarchySpec::Path { path, delimiter } = source {
                let key = (path.clone(), delimiter.clone());
                let taken = match self.files.lock() {
                    Ok(mut files) => files.remove(&key),
                    Err(poisoned) => poisoned.into_inner().remove(&key),
                };
                if let Some(loaded) = taken {
                    return loaded;
                }
            }
            load_hierarchy(&self.base, source)
        }
    }
}

/// Reads and parses the distinct hierarchy files of `spec` (paths relative to the spec file at
/// `spec_path`) side by side on the caller's rayon pool.
fn preload_hierarchies(spec: &JobSpec, spec_path: &Path) -> Preloaded {
    let base = spec_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // each file once, keyed as the resolver asks for it
    let mut sources: Vec<(FileKey, &HierarchySpec)> = Vec::new();
    for attribute in spec.attributes.values() {
        if let Some(source @ HierarchySpec::Path { path, delimiter }) = &attribute.hierarchy {
            let key = (path.clone(), delimiter.clone());
            if sources.iter().all(|(k, _)| *k != key) {
                sources.push((key, source));
            }
        }
    }
    let files = sources
        .into_par_iter()
        .map(|(key, source)| (key, load_hierarchy(&base, source)))
        .collect();
    Preloaded {
        base,
        files: Mutex::new(files),
    }
}

/// Loads the hierarchies a spec refers to, with paths relative to the spec's directory.
pub(super) fn hierarchies_beside(
    spec: &Path,
) -> impl Fn(&HierarchySpec) -> Result<Resolved, String> {
    let base = spec.parent().map(Path::to_path_buf).unwrap_or_default();
    move |source| load_hierarchy(&base, source)
}

fn load_hierarchy(base: &Path, source: &HierarchySpec) -> Result<Resolved, String> {
    match source {
        HierarchySpec::Path { path, delimiter } => {
            let full = base.join(path);
            let bytes = std::fs::read(&full).map_err(|e| {
                format!(
                    "cannot read hierarchy file {}: {}",
                    full.display(),
                    e.kind()
                )
            })?;
            if full.extension().is_some_and(|e| e == "json") {
                return parse_hierarchy_document(&bytes)
                    .map_err(|e| format!("hierarchy file {}: {e}", full.display()));
            }
            let parsed = {
                let d = match delimiter {
                    Some(d) => {
                        CsvOptions::with_delimiter(d)
                            .map_err(|e| e.to_string())?
                            .delimiter
                    }
                    None => b';',
                };
                parse_arx_hierarchy(&bytes, d)
            };
            parsed
                .map(Resolved::Hierarchy)
                .map_err(|e| format!("hierarchy file {}: {e}", full.display()))
        }
        HierarchySpec::Id { .. } => Err(
            "hierarchy ids refer to stored hierarchies of the service; the CLI takes a path".into(),
        ),
        _ => Err("unsupported hierarchy source".into()),
    }
}

/// Refuses an output or report path that is the input or the spec (the same file, also through a link
/// or another spelling of the path), or output and report on one file: the run would replace what it
/// reads.
fn refuse_overwriting_inputs(args: &AnonymizeArgs) -> Result<(), String> {
    let mut written = vec![("--output", &args.output)];
    if let Some(report) = &args.report {
        written.push(("--report", report));
    }
    if let Some(page) = &args.report_html {
        written.push(("--report-html", page));
    }
    for (flag, path) in &written {
        for (other, read) in [("--input", &args.input), ("--spec", &args.spec)] {
            if same_file(path, read) {
                return Err(format!(
                    "{flag} {} is the {other} file: the run would overwrite it; write elsewhere",
                    path.display()
                ));
            }
        }
    }
    for (i, (flag, path)) in written.iter().enumerate() {
        for (other, earlier) in &written[..i] {
            if same_file(path, earlier) || path == earlier {
                return Err(format!("{other} and {flag} name the same file"));
            }
        }
    }
    Ok(())
}

/// Refuses writing `path` when it is the input or the spec file.
fn refuse_overwriting(path: &Path, args: &AnonymizeArgs) -> Result<(), String> {
    for (other, read) in [("--input", &args.input), ("--spec", &args.spec)] {
        if same_file(path, read) {
            return Err(format!(
                "{} is the {other} file: the run would overwrite it; write elsewhere",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Whether both paths exist and are one file (same device and inode on Unix, same canonical path
/// elsewhere).
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(first), Ok(second)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        first.dev() == second.dev() && first.ino() == second.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (first, second);
        matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
    }
}

/// Writes every file of `paths` (`write(index, writer)`) through temporary files, renamed only when all
/// were written: a failed run leaves none of them.
fn write_all_atomically(
    paths: &[PathBuf],
    write: impl Fn(usize, &mut BufWriter<File>) -> Result<(), String>,
) -> Result<(), String> {
    let mut written: Vec<(PathBuf, &PathBuf)> = Vec::with_capacity(paths.len());
    let mut result = Ok(());
    for (index, path) in paths.iter().enumerate() {
        let temporary = partial_path(path);
        let attempt = File::create(&temporary)
            .map_err(|e| format!("cannot create {}: {}", path.display(), e.kind()))
            .and_then(|file| {
                let mut writer = BufWriter::with_capacity(1 << 16, file);
                write(index, &mut writer)?;
                writer
                    .flush()
                    .map_err(|e| format!("cannot write {}: {}", path.display(), e.kind()))
            });
        written.push((temporary, path));
        if let Err(e) = attempt {
            result = Err(e);
            break;
        }
    }
    if result.is_ok() {
        for (temporary, path) in &written {
            if let Err(e) = std::fs::rename(temporary, path) {
                result = Err(format!("cannot write {}: {}", path.display(), e.kind()));
                break;
            }
        }
    }
    if result.is_err() {
        for (temporary, _) in &written {
            let _ = std::fs::remove_file(temporary);
        }
    }
    result
}

/// The temporary name of `path` while it is written.
fn partial_path(path: &Path) -> PathBuf {
    let mut temporary = PathBuf::from(path);
    let name = path
        .file_name()
        .map(|n| format!(".{}.partial", n.to_string_lossy()))
        .unwrap_or_else(|| ".output.partial".into());
    temporary.set_file_name(name);
    temporary
}

/// Writes through a temporary file in the same directory, renamed on success.
pub(super) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<(), String>,
) -> Result<(), String> {
    let temporary = partial_path(path);
    let file = File::create(&temporary)
        .map_err(|e| format!("cannot create {}: {}", path.display(), e.kind()))?;
    let mut writer = BufWriter::with_capacity(1 << 16, file);
    let result = write(&mut writer).and_then(|_| {
        writer
            .flush()
            .map_err(|e| format!("cannot write {}: {}", path.display(), e.kind()))
    });
    drop(writer);
    match result {
        Ok(()) => std::fs::rename(&temporary, path)
            .map_err(|e| format!("cannot write {}: {}", path.display(), e.kind())),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}
