//! The `anonymizer` binary: parses arguments and runs the chosen command.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = anonymizer::cli::Cli::parse();
    match anonymizer::cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}
