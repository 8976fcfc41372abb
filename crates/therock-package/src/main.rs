//! `therock-package`: turns TheRock artifacts into ROCm Python packages.
//!
//! A thin binary: it parses flags, reads the environment and hands values
//! to the library crates; errors become one line on stderr and an exit code
//! (2: usage, 1: bad input or a failed build).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod build_cmd;
mod execute;
mod inspect;
mod python;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Builds the ROCm Python packages from TheRock artifacts.
#[derive(Debug, Parser)]
#[command(name = "therock-package", version)]
struct Cli {
    /// More log output (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Describe an artifact directory: mode, artifacts, targets, counts, warnings.
    Inspect(inspect::InspectArgs),
    /// Build every package of the set into `--dest-dir/dist`.
    Build(build_cmd::BuildArgs),
    /// Print where every file would go, without writing anything.
    Plan {
        #[command(flatten)]
        args: build_cmd::PlanArgs,
        /// Print the whole plan as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_logging(cli.verbose, cli.quiet);
    let result = match &cli.command {
        Command::Inspect(args) => inspect::inspect(args),
        Command::Build(args) => build_cmd::build(args, cli.quiet),
        Command::Plan { args, json } => build_cmd::plan(args, *json),
    };
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("therock-package: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, _) => "debug",
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(level))
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .init();
}
