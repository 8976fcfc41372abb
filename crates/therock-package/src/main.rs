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
mod timings;
mod verify;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use cli_output::{Console, Verbosity};

/// Builds the ROCm Python packages from TheRock artifacts.
///
/// On a terminal `build` shows a progress display; elsewhere it prints one
/// line per package. `RUST_LOG` overrides `-v`/`-q`; colour only on a
/// terminal and never with `NO_COLOR` set.
#[derive(Debug, Parser)]
#[command(name = "therock-package", version)]
struct Cli {
    /// More log output (repeat for more: info, debug, trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors: no progress, no report on success (`--json` still prints).
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
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write a man page for the program and each command into DIR
    /// (`cargo xtask man` runs it).
    #[command(hide = true)]
    GenerateMan {
        /// The directory to write into (created when missing).
        dir: PathBuf,
    },
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
    let console = Console::detect(Verbosity {
        verbose: cli.verbose,
        quiet: cli.quiet,
    });
    console.init_logging(&[]);
    if let Command::Verify(args) = &cli.command {
        return match verify::verify(args) {
            Ok(report) => {
                if args.json() {
                    print!("{}", report.to_json());
                } else if !(console.quiet() && report.ok()) {
                    print!("{}", report.to_text());
                }
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
    // What to print on success: `-q` keeps a command's answer (`plan`,
    // `inspect`, any `--json`) and drops reports of what was done.
    let result = match &cli.command {
        Command::Inspect(args) => inspect::inspect(args),
        Command::Build(args) => build_cmd::build(args, &console)
            .map(|r| done(args.json(), &console, || r.to_json(), || r.to_text())),
        Command::Plan { args, json, shards } => build_cmd::plan(args, *json, *shards),
        Command::Assemble(args) => assemble::assemble(args),
        Command::Index(args) => {
            index::index(args).map(|r| done(args.json(), &console, || r.to_json(), || r.to_text()))
        }
        Command::Completions { shell } => Ok(completions(*shell)),
        Command::GenerateMan { dir } => cli_output::man::write_pages(&Cli::command(), dir)
            .map_err(anyhow::Error::from)
            .map(|written| {
                let mut out = String::new();
                if !console.quiet() {
                    for page in written {
                        let _ = writeln!(out, "wrote {}", page.display());
                    }
                }
                out
            }),
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

/// The completion script of `shell` for this program.
fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "therock-package", &mut out);
    String::from_utf8(out).expect("completion scripts are UTF-8")
}

/// What a command that reports what it did prints on success: its JSON
/// with `--json` (even with `-q`), nothing with `-q`, else its text.
fn done(
    json: bool,
    console: &Console,
    to_json: impl FnOnce() -> String,
    to_text: impl FnOnce() -> String,
) -> String {
    if json {
        to_json()
    } else if console.quiet() {
        String::new()
    } else {
        to_text()
    }
}
