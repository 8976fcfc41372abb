//! `therock-package`: turns TheRock artifacts into ROCm Python packages.
//!
//! A thin binary: it parses flags, reads the environment and hands values
//! to the library crates; errors become one line on stderr and an exit code
//! (2: usage, 1: bad input or a failed build).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod assemble;
mod build_cmd;
mod execute;
mod index;
mod inspect;
mod native;
mod python;
mod shard;
mod staging;
mod verify;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

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
        /// Split the package set into N shards of balanced input bytes
        /// instead (with `--json`: a CI matrix; docs/releasing.md).
        #[arg(long, value_name = "N")]
        shards: Option<usize>,
    },
    /// Join the outputs of `build --shard K/N` into one release: check the
    /// shards, write the `rocm` sdists and the index, verify (docs/releasing.md).
    Assemble(assemble::AssembleArgs),
    /// Check a release before publishing: well-formed packages, one version,
    /// identical duplicates, reachable device extras, satisfiable
    /// requirements, complete targets, resolvable ELF links (exit 1 on any problem).
    Verify(verify::VerifyArgs),
    /// Write the index pages of a dist directory: a find-links page, a PEP 503
    /// simple tree, and the PEP 658 `.metadata` file of every wheel.
    Index(index::IndexArgs),
}

impl Command {
    /// A usage error found after parsing (exit 2, like clap's own).
    fn usage_conflict(&self) -> Option<String> {
        match self {
            Self::Build(args) => args.usage_conflict(),
            Self::Plan { args, .. } => args.usage_conflict(),
            _ => None,
        }
    }
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
    if let Some(conflict) = cli.command.usage_conflict() {
        let _ = Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, conflict)
            .print();
        return ExitCode::from(2);
    }
    init_logging(cli.verbose, cli.quiet);
    if let Command::Verify(args) = &cli.command {
        return match verify::verify(args) {
            Ok(report) => {
                print!(
                    "{}",
                    if args.json() {
                        report.to_json()
                    } else {
                        report.to_text()
                    }
                );
                if report.ok() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprintln!("therock-package: error: {e:#}");
                ExitCode::from(2)
            }
        };
    }
    let result = match &cli.command {
        Command::Inspect(args) => inspect::inspect(args),
        Command::Build(args) => build_cmd::build(args, cli.quiet),
        Command::Plan { args, json, shards } => build_cmd::plan(args, *json, *shards),
        Command::Assemble(args) => assemble::assemble(args),
        Command::Index(args) => index::index(args),
        Command::Verify(_) => unreachable!("handled above"),
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
