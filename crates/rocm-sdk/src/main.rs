//! `rocm-sdk`: the install-time half of the ROCm Python packages.
//!
//! Shipped at `rocm_sdk_core/_bin/rocm-sdk` inside site-packages and reached
//! through the `rocm-sdk` console script of the `rocm` package (or
//! `python -m rocm_sdk`); it finds site-packages from its own location.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod site;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::site::Site;

/// Sets up and checks an installed ROCm Python SDK.
#[derive(Debug, Parser)]
#[command(name = "rocm-sdk", version, disable_version_flag = true)]
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
    Init {
        /// Print nothing on success.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print a path of the devel tree (unpacking it on first use).
    Path(PathArgs),
    /// Print the version of the installed ROCm packages.
    Version {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
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
    let site = Site::locate(cli.site_packages)?;
    match cli.command {
        Command::Init { quiet } => {
            let root = ensure_devel(&site)?;
            if !quiet {
                println!("devel tree ready: {}", root.display());
            }
        }
        Command::Path(which) => {
            let root = ensure_devel(&site)?;
            let path = if which.cmake {
                root.join("lib").join("cmake")
            } else if which.bin {
                root.join("bin")
            } else {
                root
            };
            println!("{}", path.display());
        }
        Command::Version { json } => {
            let version = site.dist_info()?.selector.version;
            if json {
                println!("{}", serde_json::json!({ "version": version }));
            } else {
                println!("{version}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Unpacks devel if needed and reconciles device links; the devel root.
fn ensure_devel(site: &Site) -> Result<PathBuf> {
    if !site.has_devel() {
        bail!(
            "rocm-sdk-devel is not installed in {}; install it with `pip install \"rocm[devel]\"`",
            site.root.display()
        );
    }
    let report = devel_tar::ensure(&site.root)?;
    for warning in &report.warnings {
        eprintln!("rocm-sdk: warning: {warning}");
    }
    Ok(site.devel_root())
}
