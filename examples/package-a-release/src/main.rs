//! Packages a TheRock artifact directory, verifies the release and
//! unpacks its devel tree into a scratch site-packages, through the
//! library crates' public APIs only: what another Rust tool that links
//! them does (docs/using-the-crates.md, "An example program").
//!
//! ```text
//! package-a-release ARTIFACT_DIR ROCM_SDK SCRATCH
//! ```
//!
//! - `ARTIFACT_DIR`: TheRock artifacts (`cargo xtask example` writes the
//!   built-in example's, `example/kpack/artifacts`).
//! - `ROCM_SDK`: the native `rocm-sdk` program the core wheel carries (a
//!   static Linux build; `therock-package`'s build script makes one).
//! - `SCRATCH`: a new or empty directory for the release (`SCRATCH/out/dist`)
//!   and the site-packages it is installed into (`SCRATCH/site-packages`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use dist_info::requirement::Platform;
use installed_sdk::Site;
use pipeline::{BuildOptions, BuildProgress, FileKind, NativePrograms, PlanOptions};
use release_check::{CheckStatus, VerifyOptions};
use wheel_writer::WheelReader;

/// One line per package written, as `build` reports them.
#[derive(Debug)]
struct Lines;

impl BuildProgress for Lines {
    fn package_written(&self, file: &str, size: u64) {
        eprintln!("  wrote {file} ({size} bytes)");
    }
}

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [artifacts, rocm_sdk, scratch] = &args[..] else {
        eprintln!("usage: package-a-release ARTIFACT_DIR ROCM_SDK SCRATCH");
        return ExitCode::from(2);
    };
    match run(artifacts, rocm_sdk, scratch) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The libraries' errors never repeat their causes: print the chain.
            eprintln!("package-a-release: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(artifacts: &Path, rocm_sdk: &Path, scratch: &Path) -> anyhow::Result<()> {
    if fs::read_dir(scratch).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(
            "{} is not empty; give a new or empty directory",
            scratch.display()
        );
    }

    // 1. Package: an options value, no command line.
    let options = BuildOptions {
        plan: PlanOptions {
            artifact_dir: artifacts.to_owned(),
            native_programs: NativePrograms::new().with_file(Platform::Linux, rocm_sdk),
            ..PlanOptions::default()
        },
        dest_dir: scratch.join("out"),
        ..BuildOptions::default()
    };
    eprintln!("building {}", artifacts.display());
    let built = pipeline::build(&options, Arc::new(Lines))?;
    println!(
        "built {} packages ({} bytes) into {}",
        built.packages,
        built.total_size,
        built.dist_dir.display()
    );
    if let Some(links) = built.elf_links.as_ref().filter(|links| !links.ok) {
        bail!(
            "{} ELF files have unresolved NEEDED entries, the first: {}",
            links.unresolved_files,
            links.first.as_deref().unwrap_or("?")
        );
    }

    // 2. Verify the release: every check of `therock-package verify`.
    let report = release_check::verify(&VerifyOptions::new([&built.dist_dir]))?;
    for check in report.checks() {
        let status = match check.status {
            CheckStatus::Ok => "ok",
            CheckStatus::Failed => "FAILED",
            CheckStatus::Skipped => "skipped",
        };
        println!("verify {}: {status}", check.id);
        for problem in &check.problems {
            println!("  - {problem}");
        }
    }
    if !report.ok() {
        bail!("the release fails verify");
    }

    // 3. Install the wheels as an installer would (every member below
    //    site-packages), then unpack the devel tarball there.
    let site_packages = scratch.join("site-packages");
    for file in built.files.iter().filter(|f| f.kind == FileKind::Wheel) {
        install_wheel(&file.path, &site_packages)?;
    }
    let site = Site::new(&site_packages);
    let init = site.init(&mut devel_tar::UnpackOptions::default())?;
    let Some(unpacked) = init.unpacked else {
        bail!("the devel tree of a fresh site-packages was already unpacked");
    };
    for warning in &init.warnings {
        eprintln!("warning: {warning}");
    }
    println!(
        "devel tree {}: {} files, {} hard links to runtime files, {} symlinks",
        init.root.display(),
        unpacked.files,
        unpacked.hard_links,
        unpacked.symlinks
    );
    let version = site.version_report()?;
    let targets = site.targets_report()?;
    println!(
        "installed rocm {} ({} distributions) for {}",
        version.version,
        version.distributions.len(),
        targets.targets.join(", ")
    );
    if !init.root.join("bin").is_dir() {
        bail!("{} has no bin/", init.root.display());
    }
    Ok(())
}

/// Writes every member of the wheel at `path` below `site_packages`, with
/// its executable bit: each streamed from the strict reader (checked for
/// its length and CRC-32 as it is read) into its file.
fn install_wheel(path: &Path, site_packages: &Path) -> anyhow::Result<()> {
    let mut wheel = WheelReader::open(path)?;
    let names: Vec<String> = wheel.member_names().map(str::to_owned).collect();
    for name in names {
        if name.ends_with('/') {
            continue;
        }
        let dest = site_packages.join(&name);
        let dir = dest.parent().expect("a member lies below site-packages");
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut file =
            fs::File::create(&dest).with_context(|| format!("cannot write {}", dest.display()))?;
        std::io::copy(&mut wheel.open_member(&name)?, &mut file)
            .with_context(|| format!("cannot write {}", dest.display()))?;
        #[cfg(unix)]
        if let Some(mode) = wheel.member_mode(&name)? {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(&dest, fs::Permissions::from_mode(mode & 0o755))
                .with_context(|| format!("cannot set the mode of {}", dest.display()))?;
        }
    }
    println!("installed {}", path.display());
    Ok(())
}
