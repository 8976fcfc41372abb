//! `rocm-sdk`: the install-time half of the ROCm Python packages.
//!
//! Shipped at `rocm_sdk_core/_bin/rocm-sdk` inside site-packages and reached
//! through the `rocm-sdk` console script of the `rocm` package (or
//! `python -m rocm_sdk`); it finds site-packages from its own location.
//! Exit status: 0 success, 1 failure (a failed check or an error, with a
//! message saying what to do), 2 usage error.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Args, Parser, Subcommand};
use dist_info::package::PackageKind;
use rocm_sdk::{DistTargets, SelfTestOptions, Site, distributions, self_test};

/// Help pages start with `usage:` like the reference's argparse pages.
const HELP_TEMPLATE: &str = "{about-with-newline}\nusage: {usage}\n\n{all-args}{after-help}";

/// Environment variable naming the Python interpreter `test` uses (the
/// `rocm-sdk` script sets it to its own `sys.executable`).
const PYTHON_ENV: &str = "ROCM_SDK_PYTHON";

/// Sets up and checks an installed ROCm Python SDK.
#[derive(Debug, Parser)]
#[command(name = "rocm-sdk", version, disable_version_flag = true, help_template = HELP_TEMPLATE)]
struct Cli {
    /// The site-packages to work on (default: the one holding this program).
    #[arg(long, global = true, hide = true)]
    site_packages: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Unpack the devel tree and link installed device files into it.
    #[command(help_template = HELP_TEMPLATE)]
    Init {
        /// Print nothing on success (warnings included).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print a path of the devel tree (unpacking it on first use).
    #[command(help_template = HELP_TEMPLATE)]
    Path(PathArgs),
    /// Print the version of the installed ROCm packages.
    #[command(help_template = HELP_TEMPLATE)]
    Version(JsonArg),
    /// Print the GPU targets this ROCm release was built for.
    #[command(help_template = HELP_TEMPLATE)]
    Targets(JsonArg),
    /// Check the installation; ends with `N passed, N failed`.
    #[command(help_template = HELP_TEMPLATE)]
    Test {
        /// Print a JSON report instead of text.
        #[arg(long)]
        json: bool,
        /// Libraries loaded at the same time (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        /// The Python interpreter to check imports and library loads with
        /// (default: $ROCM_SDK_PYTHON, set by the `rocm-sdk` script, else
        /// the interpreter of the environment site-packages belongs to).
        #[arg(long)]
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
#[group(required = true, multiple = false)]
struct PathArgs {
    /// The CMake package directory (`<devel>/lib/cmake`).
    #[arg(long)]
    cmake: bool,
    /// The directory of executables (`<devel>/bin`).
    #[arg(long)]
    bin: bool,
    /// The root of the devel tree.
    #[arg(long)]
    root: bool,
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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ROCM_SDK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .without_time()
        .init();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocm-sdk: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let site = if let Some(root) = cli.site_packages {
        Site::new(root)
    } else {
        let exe = std::env::current_exe().map_err(rocm_sdk::Error::OwnPath)?;
        Site::from_executable(&exe)?
    };
    match cli.command {
        Command::Init { quiet } => {
            let (root, warnings) = site.ensure_devel()?;
            if !quiet {
                for warning in &warnings {
                    eprintln!("rocm-sdk: warning: {warning}");
                }
                println!("devel tree ready: {}", root.display());
            }
        }
        Command::Path(which) => {
            let (root, warnings) = site.ensure_devel()?;
            for warning in &warnings {
                tracing::warn!("{warning}");
            }
            let path = if which.cmake {
                root.join("lib").join("cmake")
            } else if which.bin {
                root.join("bin")
            } else {
                root
            };
            println!("{}", path.display());
        }
        Command::Version(JsonArg { json }) => {
            let document = site.dist_info()?;
            let version = &document.selector.version;
            if json {
                let installed = distributions::installed(site.root(), &document)?;
                let list: Vec<_> = installed
                    .iter()
                    .map(|d| serde_json::json!({ "name": d.name, "version": d.version }))
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({ "version": version, "distributions": list })
                );
            } else {
                println!("{version}");
            }
        }
        Command::Targets(JsonArg { json }) => {
            let document = site.dist_info()?;
            let core = site
                .platform_dir(&document, PackageKind::Core)
                .context("the dist-info document names no core package; reinstall rocm-sdk-core")?;
            let targets = DistTargets::read(&core)?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "targets": targets.targets,
                        "dist_amdgpu_targets": targets.raw,
                    })
                );
            } else {
                println!("{}", targets.raw);
            }
        }
        Command::Test { json, jobs, python } => {
            let python = python
                .or_else(|| {
                    std::env::var_os(PYTHON_ENV)
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(|| site.python());
            let mut options = SelfTestOptions::new(python);
            if let Some(jobs) = jobs {
                options.jobs = jobs.max(1);
            }
            let report = self_test(&site, &options);
            if json {
                print!("{}", report.to_json());
            } else {
                print!("{}", report.to_text());
            }
            if !report.is_ok() {
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
