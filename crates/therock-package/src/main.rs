//! `therock-package`: turns TheRock artifacts into ROCm Python packages.

use std::process::ExitCode;

use clap::Parser;

/// Builds the ROCm Python packages from TheRock artifacts.
#[derive(Debug, Parser)]
#[command(name = "therock-package", version)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    ExitCode::SUCCESS
}
