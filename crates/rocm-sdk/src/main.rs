//! `rocm-sdk`: the install-time half of the ROCm Python packages.

use std::process::ExitCode;

use clap::Parser;

/// Sets up and checks an installed ROCm Python SDK.
#[derive(Debug, Parser)]
#[command(name = "rocm-sdk", version)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    ExitCode::SUCCESS
}
