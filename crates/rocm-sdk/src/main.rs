//! `rocm-sdk`: the install-time half of the ROCm Python packages.
//!
//! Shipped at `rocm_sdk_core/_bin/rocm-sdk` inside site-packages and reached
//! through the `rocm-sdk` console script of the `rocm` package (or
//! `python -m rocm_sdk`); it finds site-packages from its own location.
//! It parses flags and prints; the work is the `installed-sdk` crate's.
//! Every command's result becomes one [`ExitStatus`]: 0 success, 1 failure
//! (a failed check or an error, with a message saying what to do), 2 usage
//! error (docs/behaviour.md#exit-status).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod render;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory, Parser, Subcommand};
use cli_output::{Console, ExitStatus, Verbosity};
use installed_sdk::{SelfTestOptions, Site, Step, UnpackOptions, UnpackProgress, self_test};

/// The heading of `-v`/`-q`, last in every command's help.
const GLOBAL: &str = "Global options";

const EXAMPLES: &str = "\
Examples:
  rocm-sdk test                 check the installation (paste this into a bug report)
  rocm-sdk init                 unpack the devel tree once, e.g. in a Dockerfile
  rocm-sdk path --cmake         for CMAKE_PREFIX_PATH
  rocm-sdk version --json

Run `rocm-sdk COMMAND --help` for the flags of one command.";

const INIT_EXAMPLES: &str = "\
Examples:
  rocm-sdk init
  rocm-sdk init --json";

const PATH_EXAMPLES: &str = "\
Examples:
  cmake -DCMAKE_PREFIX_PATH=\"$(rocm-sdk path --cmake)\" ..
  export PATH=\"$(rocm-sdk path --bin):$PATH\"
  export LD_LIBRARY_PATH=\"$(rocm-sdk path --library-path)\"
  rocm-sdk path --json";

const VERSION_EXAMPLES: &str = "\
Examples:
  rocm-sdk version
  rocm-sdk version --json       every installed ROCm distribution too";

const TARGETS_EXAMPLES: &str = "\
Examples:
  rocm-sdk targets
  rocm-sdk targets --json";

const TEST_EXAMPLES: &str = "\
Examples:
  rocm-sdk test                 the report, failures named again at the end
  rocm-sdk test -q              only the failures
  rocm-sdk test --json > report.json";

/// The man pages' EXIT STATUS and ENVIRONMENT sections.
const MAN_EXTRAS: cli_output::man::Extras = cli_output::man::Extras {
    exit_status: &[
        (
            "0",
            "Done as asked; for test: no check failed (warnings do not fail).",
        ),
        (
            "1",
            "Something is wrong with the installation or a check failed; the message says \
             what to do.",
        ),
        (
            "2",
            "The command line is wrong: an unknown flag, a missing or bad value.",
        ),
    ],
    environment: &[
        (
            "ROCM_SDK_LOG",
            "A log filter (tracing syntax) that overrides -v and -q; checked before RUST_LOG.",
        ),
        ("RUST_LOG", "The same, when ROCM_SDK_LOG is unset."),
        ("NO_COLOR", "When set and not empty: no colour."),
        (
            "ROCM_SDK_PYTHON",
            "The Python interpreter test checks with (the rocm-sdk script sets it).",
        ),
        (
            "ROCM_SDK_TARGET_FAMILY",
            "The GPU target the installed rocm package should have selected; test warns \
             when it selected another.",
        ),
    ],
};

/// Environment variable naming the Python interpreter `test` uses (the
/// `rocm-sdk` script sets it to its own `sys.executable`).
const PYTHON_ENV: &str = "ROCM_SDK_PYTHON";

/// Environment variable with a log filter; checked before `RUST_LOG`.
const LOG_ENV: &str = "ROCM_SDK_LOG";

/// Sets up and checks an installed ROCm Python SDK.
#[derive(Debug, Parser)]
#[command(
    name = "rocm-sdk",
    version,
    disable_version_flag = true,
    arg_required_else_help = true,
    after_help = EXAMPLES
)]
struct Cli {
    /// The site-packages to work on (default: the one holding this program).
    #[arg(long, global = true, hide = true)]
    site_packages: Option<PathBuf>,
    /// Print the version of the installed ROCm packages (as `version`).
    #[arg(long = "version", short = 'V')]
    print_version: bool,
    /// More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    verbose: u8,
    /// Print nothing on success (warnings included).
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    quiet: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Unpack the devel tree and link installed device files into it.
    #[command(after_help = INIT_EXAMPLES)]
    Init(JsonArg),
    /// Print a path of the devel tree (unpacking it on first use), or the
    /// shared-library directories.
    #[command(after_help = PATH_EXAMPLES)]
    Path(PathArgs),
    /// Write a man page for the program and each command into DIR.
    #[command(hide = true)]
    GenerateMan {
        /// The directory to write into (created when missing).
        dir: PathBuf,
    },
    /// Print the version of the installed ROCm packages.
    #[command(after_help = VERSION_EXAMPLES)]
    Version(JsonArg),
    /// Print the GPU targets this ROCm release was built for.
    #[command(after_help = TARGETS_EXAMPLES)]
    Targets(JsonArg),
    /// Check the installation; ends with `N passed, N failed`.
    #[command(after_help = TEST_EXAMPLES)]
    Test {
        /// Print a JSON report instead of text.
        #[arg(long)]
        json: bool,
        /// Libraries loaded at the same time (default: one per core).
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// The Python interpreter to check imports and library loads with
        /// (default: $ROCM_SDK_PYTHON, set by the `rocm-sdk` script, else
        /// the interpreter of the environment site-packages belongs to).
        #[arg(long, value_name = "PYTHON")]
        python: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
struct JsonArg {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
#[group(required = true, multiple = true)]
#[allow(clippy::struct_excessive_bools)] // clap flags
struct PathArgs {
    /// The CMake package directory (`<devel>/lib/cmake`).
    #[arg(long, conflicts_with_all = ["bin", "root"])]
    cmake: bool,
    /// The directory of executables (`<devel>/bin`).
    #[arg(long, conflicts_with = "root")]
    bin: bool,
    /// The root of the devel tree.
    #[arg(long)]
    root: bool,
    /// The directories of the installation's shared libraries, in the
    /// order the loader should search them, joined as `LD_LIBRARY_PATH`
    /// (`PATH` on Windows) takes them. Never unpacks the devel tree.
    #[arg(long, conflicts_with_all = ["cmake", "bin", "root"])]
    library_path: bool,
    /// Print all three paths and the warnings as JSON (with
    /// `--library-path`: the directories as a JSON list).
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return ExitStatus::clap_error(&e).into(),
    };
    let console = Console::detect(Verbosity {
        verbose: cli.verbose,
        quiet: cli.quiet,
    });
    console.init_logging(&[LOG_ENV]);
    match run(cli, &console) {
        Ok(status) => status,
        Err(e) => ExitStatus::failed("rocm-sdk: error: ", &InFlagTerms(&e)),
    }
    .into()
}

/// An error chain printed as `{:#}` prints it, each error in this command
/// line's terms: where a library error stands for a flag, it names it.
struct InFlagTerms<'a>(&'a anyhow::Error);

impl std::fmt::Display for InFlagTerms<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, error) in self.0.chain().enumerate() {
            if i > 0 {
                f.write_str(": ")?;
            }
            match error.downcast_ref::<installed_sdk::Error>() {
                // The hidden flag that names the site-packages instead.
                Some(e @ installed_sdk::Error::NotInstalled { .. }) => {
                    write!(f, "{e}, or pass --site-packages")?;
                }
                _ => write!(f, "{error}")?,
            }
        }
        Ok(())
    }
}

/// The unpack's files on the progress display.
#[derive(Debug)]
struct UnpackDisplay(cli_output::Progress);

impl UnpackProgress for UnpackDisplay {
    fn step(&self, step: &Step) {
        if let Step::Wrote { done, total } = step {
            self.0.set_items(*done as u64, *total as u64);
        }
    }
}

fn run(cli: Cli, console: &Console) -> Result<ExitStatus> {
    let command = match cli.command {
        Some(Command::GenerateMan { dir }) => {
            for page in cli_output::man::write_pages(&Cli::command(), &dir, &MAN_EXTRAS)? {
                if !console.quiet() {
                    println!("wrote {}", page.display());
                }
            }
            return Ok(ExitStatus::Success);
        }
        _ if cli.print_version => Command::Version(JsonArg { json: false }),
        Some(command) => command,
        None => {
            let error = Cli::command().error(
                clap::error::ErrorKind::MissingSubcommand,
                "'rocm-sdk' requires a subcommand but one was not provided",
            );
            return Ok(ExitStatus::clap_error(&error));
        }
    };
    let site = if let Some(root) = cli.site_packages {
        Site::new(root)
    } else {
        let exe = std::env::current_exe()
            .context("cannot find the path of this program; pass --site-packages")?;
        Site::from_executable(&exe)?
    };
    tracing::debug!("site-packages: {}", site.root().display());
    match command {
        Command::Init(JsonArg { json }) => {
            let display = Arc::new(UnpackDisplay(console.progress("files", 0, None)));
            let options = UnpackOptions {
                progress: Some(display.clone()),
                ..UnpackOptions::default()
            };
            let result = site.init(&options);
            drop(options);
            if let Ok(display) = Arc::try_unwrap(display) {
                display.0.finish();
            }
            let report = result?;
            if json {
                print!("{}", cli_output::json(&report));
            } else if !console.quiet() {
                for warning in &report.warnings {
                    eprintln!("rocm-sdk: warning: {warning}");
                }
                if report.relinked > 0 {
                    println!(
                        "linked {} devel paths to their runtime files again (they had become \
                         separate copies)",
                        report.relinked
                    );
                }
                println!("devel tree ready: {}", report.root.display());
            }
        }
        Command::Path(which) if which.library_path => {
            let path = site.library_path()?;
            if which.json {
                print!("{}", cli_output::json(&path));
            } else {
                let joined = std::env::join_paths(&path.directories).map_err(|e| {
                    anyhow::Error::new(e).context(
                        "cannot join the library directories into one path; run \
                         `rocm-sdk path --library-path --json` for the list",
                    )
                })?;
                println!("{}", joined.to_string_lossy());
            }
        }
        Command::Path(which) => {
            let paths = site.devel_paths()?;
            if which.json {
                print!("{}", cli_output::json(&paths));
                return Ok(ExitStatus::Success);
            }
            for warning in &paths.warnings {
                tracing::warn!("{warning}");
            }
            let path = if which.cmake {
                &paths.cmake
            } else if which.bin {
                &paths.bin
            } else {
                &paths.root
            };
            println!("{}", path.display());
        }
        Command::Version(JsonArg { json }) => {
            if json {
                print!("{}", cli_output::json(&site.version_report()?));
            } else {
                println!("{}", site.selector_version(&site.dist_info()?));
            }
        }
        Command::Targets(JsonArg { json }) => {
            let report = site.targets_report()?;
            if json {
                print!("{}", cli_output::json(&report));
            } else {
                println!("{}", report.dist_amdgpu_targets);
            }
        }
        Command::GenerateMan { .. } => unreachable!("handled above"),
        Command::Test { json, jobs, python } => {
            let python = python
                .or_else(|| {
                    std::env::var_os(PYTHON_ENV)
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(|| site.python());
            let mut options = SelfTestOptions {
                python,
                ..SelfTestOptions::default()
            };
            // What the user's own Python searches before site-packages.
            options.python_path = std::env::var_os("PYTHONPATH").filter(|v| !v.is_empty());
            options.working_dir = std::env::current_dir().ok();
            if let Some(jobs) = jobs {
                options.jobs = jobs.max(1);
            }
            let report = self_test(&site, &options);
            if json {
                print!("{}", cli_output::json(&report));
            } else if console.quiet() {
                print!("{}", render::self_test_quiet(&report));
            } else {
                let style = console.stdout_style();
                print!(
                    "{}",
                    render::self_test(
                        &report,
                        render::TextStyle {
                            colour: style.colour,
                            width: style.width,
                        }
                    )
                );
            }
            return Ok(ExitStatus::verdict(report.is_ok()));
        }
    }
    Ok(ExitStatus::Success)
}
