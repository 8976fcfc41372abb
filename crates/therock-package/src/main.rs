//! `therock-package`: turns TheRock artifacts into ROCm Python packages.
//!
//! A thin binary: it parses flags and hands them to the library crates
//! (`pipeline` builds, `release-check` verifies), then prints; every
//! command's result becomes one [`ExitStatus`] (0 ok, 1 bad input or a bad
//! release, 2 usage; docs/behaviour.md#exit-status), an error one line on
//! stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod environment;
mod flag_terms;
mod flags;
mod interrupt;
mod progress;
mod render;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, Parser, Subcommand};
use cli_output::{Console, ExitStatus, Verbosity};
use flag_terms::InFlagTerms;
use flags::{
    AssembleFlags, BuildFlags, IndexFlags, InspectFlags, PlanFlags, PostReleaseFlags, REPORT,
    VerifyFlags,
};
use pipeline::{NativePrograms, PlanOptions, Platform};
use progress::ConsoleProgress;

/// Builds the ROCm Python packages from TheRock artifacts.
///
/// On a terminal `build` shows a progress display; elsewhere it prints one
/// line per package. `RUST_LOG` overrides `-v`/`-q`; colour only on a
/// terminal and never with `NO_COLOR` set.
#[derive(Debug, Parser)]
#[command(name = "therock-package", version, after_help = EXAMPLES)]
struct Cli {
    /// More log output (repeat for more: info, debug, trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    verbose: u8,
    /// Only errors: no progress and no report of what was done (a
    /// command's answer, such as `plan` or `verify`, still prints).
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Describe an artifact directory: mode, artifacts, targets, counts, warnings.
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect(InspectFlags),
    /// Build every package of the set into `--dest-dir/dist`.
    #[command(after_help = BUILD_EXAMPLES)]
    Build {
        #[command(flatten)]
        args: BuildFlags,
        #[command(flatten)]
        native: NativeFlags,
    },
    /// Print where every file would go, without writing anything.
    #[command(after_help = PLAN_EXAMPLES)]
    Plan {
        #[command(flatten)]
        args: PlanFlags,
        #[command(flatten)]
        native: NativeFlags,
        /// Print the whole plan as JSON.
        #[arg(long, help_heading = REPORT)]
        json: bool,
        /// Split the package set into N shards of balanced input bytes
        /// instead (with `--json`: a CI matrix).
        #[arg(long, value_name = "N", help_heading = REPORT)]
        shards: Option<usize>,
    },
    /// Join the outputs of `build --shard K/N` into one release: check the
    /// shards, write the `rocm` sdists and the index, verify.
    #[command(after_help = ASSEMBLE_EXAMPLES)]
    Assemble(AssembleFlags),
    /// Check a release before publishing: well-formed packages, one version,
    /// identical duplicates, reachable device extras, satisfiable
    /// requirements, complete targets, resolvable ELF links (exit 1 on any problem).
    #[command(after_help = VERIFY_EXAMPLES)]
    Verify(VerifyFlags),
    /// Write the index pages of a dist directory: a find-links page, a PEP 503
    /// simple tree, and the PEP 658 `.metadata` file of every wheel.
    #[command(after_help = INDEX_EXAMPLES)]
    Index(IndexFlags),
    /// Write a post-release `X.postN` of the `rocm` selector beside the
    /// selector of a published release `X`: this program's selector code,
    /// the release's document, every requirement still pinned to `X`.
    #[command(after_help = POST_RELEASE_EXAMPLES)]
    PostRelease(PostReleaseFlags),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    #[command(after_help = COMPLETIONS_EXAMPLES)]
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
            Self::Build { args, .. } => args.usage_conflict(),
            Self::Plan { args, .. } => args.usage_conflict(),
            _ => None,
        }
    }
}

/// The heading of `-v`/`-q`, last in every command's help as in uv's.
const GLOBAL: &str = "Global options";

const EXAMPLES: &str = "\
Examples:
  therock-package inspect --artifact-dir build/artifacts
  therock-package build --artifact-dir build/artifacts --dest-dir out
  therock-package verify out/dist
  therock-package index out/dist --layout both

Run `therock-package COMMAND --help` for the flags of one command.";

const INSPECT_EXAMPLES: &str = "\
Examples:
  therock-package inspect --artifact-dir build/artifacts
  therock-package inspect --artifact-dir build/artifacts --json";

const BUILD_EXAMPLES: &str = "\
Examples:
  Build every package of a TheRock build into out/dist:
    therock-package build --artifact-dir build/artifacts --dest-dir out
  A release candidate offering two families on Linux:
    therock-package build --artifact-dir build/artifacts --dest-dir out \\
      --version 7.1.0rc1 --linux-amdgpu-families 'gfx94X-dcgpu;gfx110X-dgpu'
  Shard 1 of 4 of a large build (then `assemble`):
    therock-package build --artifact-dir build/artifacts --dest-dir shard1 --shard 1/4";

const PLAN_EXAMPLES: &str = "\
Examples:
  therock-package plan --artifact-dir build/artifacts
  therock-package plan --artifact-dir build/artifacts --shards 4 --json";

const ASSEMBLE_EXAMPLES: &str = "\
Examples:
  therock-package assemble shard1 shard2 shard3 shard4 --dest-dir release";

const VERIFY_EXAMPLES: &str = "\
Examples:
  therock-package verify out/dist
  therock-package verify out/dist --linux-amdgpu-families gfx94X-dcgpu --json";

const INDEX_EXAMPLES: &str = "\
Examples:
  therock-package index out/dist
  therock-package index out/dist --layout both --json";

const POST_RELEASE_EXAMPLES: &str = "\
Examples:
  Fix the selector of the published 7.1.0 release:
    therock-package post-release release/dist --version 7.1.0.post1
    therock-package verify release/dist
    therock-package index release/dist";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  therock-package completions bash > ~/.local/share/bash-completion/completions/therock-package
  therock-package completions zsh > ~/.zfunc/_therock-package";

/// The man pages' EXIT STATUS and ENVIRONMENT sections.
const MAN_EXTRAS: cli_output::man::Extras = cli_output::man::Extras {
    exit_status: &[
        ("0", "Done as asked; for verify: every check passed."),
        (
            "1",
            "The input or the release is bad (a missing or unreadable path, a malformed \
             artifact or package), or a check failed.",
        ),
        (
            "2",
            "The command line is wrong: an unknown flag, a missing or bad value, flags that \
             conflict.",
        ),
    ],
    environment: &[
        (
            "RUST_LOG",
            "A log filter (tracing syntax) that overrides -v and -q.",
        ),
        ("NO_COLOR", "When set and not empty: no colour."),
        (
            environment::PLATFORM_TAG_ENV,
            "The wheel platform tag when --platform-tag is not given.",
        ),
        (
            "SOURCE_DATE_EPOCH",
            "The timestamp of every archive member (reproducible builds).",
        ),
    ],
};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return ExitStatus::clap_error(&e).into(),
    };
    if let Some(conflict) = cli.command.usage_conflict() {
        let error = Cli::command().error(clap::error::ErrorKind::ArgumentConflict, conflict);
        return ExitStatus::clap_error(&error).into();
    }
    let console = Console::detect(Verbosity {
        verbose: cli.verbose,
        quiet: cli.quiet,
    });
    console.init_logging(&[]);
    match run(cli.command, &console) {
        Ok((out, status)) => {
            // Reports quote names from their input: no control character
            // but the layout's own reaches the terminal.
            print!("{}", cli_output::escaped_lines(&out));
            status
        }
        Err(e) => ExitStatus::failed("therock-package: error: ", &InFlagTerms(&e)),
    }
    .into()
}

/// Runs one command: what to print on stdout, and how it ended. What to
/// print on success: `-q` keeps a command's answer (`plan`, `inspect`,
/// any `--json`) and drops reports of what was done.
fn run(command: Command, console: &Console) -> anyhow::Result<(String, ExitStatus)> {
    let out = match command {
        Command::Inspect(flags) => {
            let report = pipeline::inspect(&flags.options())?;
            if flags.json {
                cli_output::json(&report)
            } else {
                render::inspect(&report)
            }
        }
        Command::Build { args, native } => {
            let mut options = args.options();
            complete_plan(&mut options.plan, &native)?;
            options.source_date_epoch = environment::source_date_epoch()?;
            options.pause = environment::commit_gates();
            let jobs = options.effective_jobs();
            if options.jobs > jobs {
                tracing::warn!(
                    "--jobs {} is more than {} threads per core; using {jobs}",
                    options.jobs,
                    wheel_writer::MAX_JOBS_PER_CORE
                );
            }
            // Before any thread starts (the progress display's included).
            let cleanup = pipeline::StagingCleanup::new();
            interrupt::remove_staging_on_signal(cleanup.clone());
            options.cleanup = Some(cleanup);
            let progress = Arc::new(ConsoleProgress::new(console));
            options.progress = Some(progress.clone());
            let result = pipeline::build(&options);
            // A failed build leaves the display up: clear it before the
            // error is printed.
            progress.close();
            let r = result?;
            // Off a terminal each package had its progress line already.
            let text = || render::build(&r, console.is_terminal());
            let out = done(args.json, console, || cli_output::json(&r), text);
            // The packages are written either way; `--strict` makes a
            // check `verify` will fail the verdict, as in `verify`.
            let warnings: Vec<String> = render::elf_links_warning(&r)
                .into_iter()
                .chain(render::fails_verify_lines(&r))
                .collect();
            for warning in &warnings {
                if args.strict {
                    eprintln!("therock-package: error: {}", cli_output::escaped(warning));
                } else if !console.quiet() {
                    eprintln!("therock-package: warning: {}", cli_output::escaped(warning));
                }
            }
            if args.strict && !warnings.is_empty() {
                return Ok((out, ExitStatus::verdict(false)));
            }
            out
        }
        Command::Plan {
            args,
            native,
            json,
            shards,
        } => {
            let mut options = args.options();
            complete_plan(&mut options, &native)?;
            let report = pipeline::plan(&options, shards)?;
            if json {
                render::plan_json(&report)
            } else {
                render::plan(&report)
            }
        }
        Command::Assemble(flags) => {
            let mut options = flags.options();
            let cleanup = pipeline::StagingCleanup::new();
            interrupt::remove_staging_on_signal(cleanup.clone());
            options.cleanup = Some(cleanup);
            let report = match pipeline::assemble(&options) {
                Ok(report) => report,
                Err(e) => {
                    let pipeline::AssembleError::AssembledReleaseFailsVerify { report } = &e else {
                        return Err(e.into());
                    };
                    // The verify report is the rest of the message, on
                    // lines of its own.
                    let status = ExitStatus::failed("therock-package: error: ", &format!("{e}:"));
                    eprint!("{}", cli_output::escaped_lines(&render::verify(report)));
                    return Ok((String::new(), status));
                }
            };
            // Written: unresolved links alone are a warning, as in build.
            if let Some(warning) = render::elf_links_line(&report.elf_links, &report.dist_dir)
                && !console.quiet()
            {
                eprintln!(
                    "therock-package: warning: {}",
                    cli_output::escaped(&warning)
                );
            }
            if flags.json {
                cli_output::json(&report)
            } else {
                render::assemble(&report)
            }
        }
        Command::Verify(args) => {
            // A failed check is a verdict, not an error: its report is the
            // answer, printed even with `-q`.
            let report = release_check::verify(&args.options())?;
            let out = if args.json {
                cli_output::json(&report)
            } else if console.quiet() && report.ok() {
                String::new()
            } else {
                render::verify(&report)
            };
            return Ok((out, ExitStatus::verdict(report.ok())));
        }
        Command::Index(args) => {
            let r = pipeline::index(&args.options())?;
            done(
                args.json,
                console,
                || cli_output::json(&r),
                || render::index(&r),
            )
        }
        Command::PostRelease(args) => {
            let mut options = args.options();
            options.source_date_epoch = environment::source_date_epoch()?;
            let r = pipeline::post_release(&options)?;
            done(
                args.json,
                console,
                || cli_output::json(&r),
                || render::post_release(&r),
            )
        }
        Command::Completions { shell } => completions(shell),
        Command::GenerateMan { dir } => {
            let written = cli_output::man::write_pages(&Cli::command(), &dir, &MAN_EXTRAS)?;
            let mut out = String::new();
            if !console.quiet() {
                for page in written {
                    let _ = writeln!(out, "wrote {}", page.display());
                }
            }
            out
        }
    };
    Ok((out, ExitStatus::Success))
}

/// What `plan` and `build` take from outside their flags: the native
/// programs, and the platform tag of the environment when the flag names
/// none.
fn complete_plan(options: &mut PlanOptions, native: &NativeFlags) -> anyhow::Result<()> {
    options.native_programs = native.programs();
    if options.platform_tag.is_none() {
        options.platform_tag = environment::platform_tag()?;
    }
    Ok(())
}

/// Which native `rocm-sdk` core wheels carry instead of the one built into
/// this program (docs/pipeline.md, "The native rocm-sdk").
#[derive(Debug, clap::Args)]
struct NativeFlags {
    /// The `rocm-sdk` program Linux core wheels carry, instead of the one
    /// built in (default: `THEROCK_PACKAGE_ROCM_SDK_LINUX`); checked before use.
    #[arg(long, value_name = "FILE", help_heading = NATIVE_PROGRAMS)]
    rocm_sdk_linux: Option<PathBuf>,
    /// The `rocm-sdk.exe` program `win_amd64` core wheels carry, instead of
    /// the one built in (default: `THEROCK_PACKAGE_ROCM_SDK_WINDOWS`); checked before use.
    #[arg(long, value_name = "FILE", help_heading = NATIVE_PROGRAMS)]
    rocm_sdk_windows: Option<PathBuf>,
}

/// The help heading of [`NativeFlags`].
const NATIVE_PROGRAMS: &str = "Native programs";

/// The programs built into this binary by its build script (build.rs).
const BUILT_IN: &str = "the rocm-sdk built into this therock-package";

impl NativeFlags {
    /// The built-in programs, each replaced by the file its flag or, without
    /// the flag, its environment variable names (an empty variable is unset).
    fn programs(&self) -> NativePrograms {
        let mut programs = NativePrograms::new();
        #[cfg(native_linux)]
        {
            programs = programs.with_bytes(
                Platform::Linux,
                BUILT_IN,
                &include_bytes!(concat!(env!("OUT_DIR"), "/rocm-sdk"))[..],
            );
        }
        #[cfg(native_windows)]
        {
            programs = programs.with_bytes(
                Platform::Windows,
                BUILT_IN,
                &include_bytes!(concat!(env!("OUT_DIR"), "/rocm-sdk.exe"))[..],
            );
        }
        for (platform, flag, variable) in [
            (
                Platform::Linux,
                &self.rocm_sdk_linux,
                "THEROCK_PACKAGE_ROCM_SDK_LINUX",
            ),
            (
                Platform::Windows,
                &self.rocm_sdk_windows,
                "THEROCK_PACKAGE_ROCM_SDK_WINDOWS",
            ),
        ] {
            let named = flag.clone().or_else(|| {
                std::env::var_os(variable)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            });
            if let Some(path) = named {
                programs = programs.with_file(platform, path);
            }
        }
        programs
    }
}

/// The completion script of `shell` for this program.
fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    let mut command = cli_output::without_hidden_commands(
        &Cli::command(),
        "therock-package",
        env!("CARGO_PKG_VERSION"),
    );
    clap_complete::generate(shell, &mut command, "therock-package", &mut out);
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
