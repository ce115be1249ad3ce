//! The command line: argument definitions and dispatch. Each subcommand lives in its own module.

pub mod anonymize;
pub mod assess;
pub mod generate;
pub mod hierarchy;
mod input;
pub mod keys;
mod progress;
pub mod propose;
pub mod serve;

use crate::domain::SpecError;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Anonymize personal microdata by generalization and suppression.
#[derive(Parser)]
#[command(name = "anonymizer", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Anonymize a local CSV file with a job spec.
    Anonymize(AnonymizeArgs),
    /// Assess a local CSV file as it is: achieved k and l, re-identification risk (JSON on stdout).
    Assess(AssessArgs),
    /// Propose a job spec for a local CSV file (JSON on stdout, runnable by `anonymize --spec`); the
    /// reason for each column and the expected risk go to stderr.
    Propose(ProposeArgs),
    /// Run the HTTP service (API and workers).
    Serve(Box<crate::config::ServeConfig>),
    /// Write a synthetic census-like table (ZIP code, birth date, sex, ...), its hierarchies and job specs
    /// into a directory, for benchmarks and trials.
    Generate(GenerateArgs),
    /// Manage API keys in the service's database.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Work with generalization hierarchies.
    #[command(subcommand)]
    Hierarchy(HierarchyCommand),
}

/// `anonymizer hierarchy …`.
#[derive(Debug, Subcommand)]
pub enum HierarchyCommand {
    /// Build a hierarchy for one column of a CSV file from a builder (docs/spec.md, "Hierarchy
    /// builders") and write it as an ARX hierarchy file (`;` between levels).
    Build(HierarchyBuildArgs),
}

/// Arguments of `hierarchy build`.
#[derive(Debug, clap::Args)]
pub struct HierarchyBuildArgs {
    /// The CSV file whose column the hierarchy generalizes (header line required).
    #[arg(long)]
    pub input: PathBuf,
    /// The column, by its header name.
    #[arg(long)]
    pub column: String,
    /// The builder as JSON, e.g. '{"type": "interval", "width": 5, "fanouts": [2, 2]}', or @FILE to
    /// read it from a file.
    #[arg(long)]
    pub builder: String,
    /// The input's field delimiter.
    #[arg(long, default_value = ",")]
    pub delimiter: String,
    /// Where to write the ARX file; stdout when absent.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

/// `anonymizer keys …`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key for a tenant (created if new) and print it once.
    Create {
        /// Tenant name.
        #[arg(long)]
        tenant: String,
        /// Create the SQLite database when there is none yet (without it, a missing database is an
        /// error that says where it was looked for: the key would land in a database no server uses).
        #[arg(long)]
        create: bool,
        /// The database.
        #[command(flatten)]
        database: crate::config::DatabaseArgs,
    },
    /// List keys (never the keys themselves).
    List {
        /// The database.
        #[command(flatten)]
        database: crate::config::DatabaseArgs,
    },
    /// Revoke a key by id.
    Revoke {
        /// Key id, as listed.
        id: String,
        /// The database.
        #[command(flatten)]
        database: crate::config::DatabaseArgs,
    },
}

/// Arguments of `anonymize`.
#[derive(Debug, clap::Args)]
pub struct AnonymizeArgs {
    /// The CSV file to anonymize (header line required).
    #[arg(long)]
    pub input: PathBuf,
    /// The job spec (JSON); hierarchy paths are relative to it.
    #[arg(long)]
    pub spec: PathBuf,
    /// Where to write the anonymized CSV.
    #[arg(long)]
    pub output: PathBuf,
    /// Where to write the JSON report; a summary goes to stderr when absent.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Where to write the report as one self-contained HTML page (provenance with the input's SHA-256,
    /// result, risk and class sizes before and after, information loss, spec, glossary) for a person to
    /// read, print and archive. It holds no cell value.
    #[arg(long)]
    pub report_html: Option<PathBuf>,
    /// Never show a progress bar, and print no warnings (the report still lists them).
    #[arg(long)]
    pub quiet: bool,
    /// Print the time of each stage (loading, searching or recoding, verifying, measuring, writing) to
    /// stderr at the end.
    #[arg(long)]
    pub timings: bool,
    /// Longest CSV field of the input, in bytes; a longer one is an error naming its line.
    #[arg(long, default_value_t = crate::codec::DEFAULT_MAX_FIELD_BYTES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub csv_field_limit: usize,
    /// A file holding the key of the spec's pseudonyms: its whole content (a final line break left
    /// out), at least 32 bytes, e.g. from `openssl rand -hex 32`. Without it the key is read from the
    /// environment variable ANONYMIZER_PSEUDONYM_KEY. The same key gives the same pseudonyms.
    #[arg(long)]
    pub pseudonym_key_file: Option<PathBuf>,
    /// A population table (CSV read as the input is, the quasi-identifier columns by name) holding the
    /// input's individuals, for `k_map` without an estimator and `delta_presence`.
    #[arg(long)]
    pub population: Option<PathBuf>,
    /// Publish this transformation instead of searching: the hierarchy level of every
    /// quasi-identifier, `column=level` separated by commas (e.g. `age=2,sex=1,zip=3`); it replaces
    /// the spec's `transformation`.
    #[arg(long, value_parser = parse_transformation)]
    pub transformation: Option<std::collections::BTreeMap<String, u64>>,
}

/// Parses `--transformation`: `column=level` pairs separated by commas.
fn parse_transformation(text: &str) -> Result<std::collections::BTreeMap<String, u64>, String> {
    let mut levels = std::collections::BTreeMap::new();
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (column, level) = pair
            .rsplit_once('=')
            .ok_or_else(|| format!("'{pair}' is not column=level"))?;
        let level: u64 = level
            .trim()
            .parse()
            .map_err(|_| format!("the level of '{}' is not a whole number", column.trim()))?;
        if levels.insert(column.trim().to_string(), level).is_some() {
            return Err(format!("'{}' is given twice", column.trim()));
        }
    }
    if levels.is_empty() {
        return Err("no column=level pair".into());
    }
    Ok(levels)
}

/// Arguments of `generate`.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// Number of records.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub records: usize,
    /// The generator's seed: the same seed gives the same table.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The directory to write into (created if missing): `census.csv`, `hierarchy_<column>.csv` and one
    /// spec per benchmark case.
    #[arg(long)]
    pub output: PathBuf,
}

/// Arguments of `assess`.
#[derive(Debug, clap::Args)]
pub struct AssessArgs {
    /// The CSV file to assess (header line required).
    #[arg(long)]
    pub input: PathBuf,
    /// The spec (JSON): `{"attributes": {column: {"role": …}}, "risk": {…}}`, optionally `"csv"`; with
    /// `--published`, the job spec the published table was made with (as `anonymize` takes it).
    #[arg(long)]
    pub spec: PathBuf,
    /// A published (anonymized) version of `--input`: prints its loss measures against the input (the
    /// report's `loss_measures` and, with functional dependencies, `dependencies`) instead of the
    /// assessment of the input.
    #[arg(long)]
    pub published: Option<PathBuf>,
    /// A population table (CSV, same delimiter, the quasi-identifier columns by name) for journalist
    /// and marketer risk; its record count is the population size unless the spec gives one. With
    /// `--published`, the population the job's `k_map` or `delta_presence` read.
    #[arg(long)]
    pub population: Option<PathBuf>,
}

/// Arguments of `propose`.
#[derive(Debug, clap::Args)]
pub struct ProposeArgs {
    /// The CSV file (header line required).
    #[arg(long)]
    pub input: PathBuf,
    /// The input's field delimiter; sniffed from the header line when absent.
    #[arg(long)]
    pub delimiter: Option<String>,
    /// The input's character encoding (a WHATWG label such as `windows-1252`); UTF-8 when absent.
    #[arg(long)]
    pub encoding: Option<String>,
    /// Also write the whole proposal (spec, reasons, assessment, expected outcome) as JSON here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Print only the spec.
    #[arg(long)]
    pub quiet: bool,
}

/// The message of spec problems: one line for one problem, a count and one indented line per problem
/// for several. Each problem ends with its code, as the API's `code`.
pub fn spec_problems(e: &SpecError) -> String {
    let line = |p: &SpecError| format!("{}: {} [{}]", p.pointer, p.message, p.code);
    if e.others.is_empty() {
        return format!("spec: {}", line(e));
    }
    let mut message = format!("spec: {} problems", e.others.len() + 1);
    for p in e.all() {
        message.push_str("\n  ");
        message.push_str(&line(p));
    }
    message
}

/// Runs the parsed command; the error is the message to print (one line, or one per spec problem).
pub fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Anonymize(args) => anonymize::run(&args),
        Command::Assess(args) => assess::run(&args),
        Command::Propose(args) => propose::run(&args),
        Command::Serve(config) => serve::run(*config),
        Command::Generate(args) => generate::run(&args),
        Command::Keys(command) => keys::run(command),
        Command::Hierarchy(HierarchyCommand::Build(args)) => hierarchy::build(&args),
    }
}
