//! The command line: argument definitions and dispatch. Each subcommand lives in its own module.

pub mod anonymize;
mod progress;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Anonymize personal microdata by generalization and suppression.
#[derive(Debug, Parser)]
#[command(name = "anonymizer", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Anonymize a local CSV file with a job spec.
    Anonymize(AnonymizeArgs),
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
    /// Never show a progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs the parsed command; the error is the one-line message to print.
pub fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Anonymize(args) => anonymize::run(&args),
    }
}
