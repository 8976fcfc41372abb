//! Plans and packages a TheRock artifact directory, verifies the release
//! and unpacks its devel tree into a scratch site-packages, through the
//! library crates' public APIs only: what another Rust tool that links
//! them does (docs/using-the-crates.md, "An example program"). Every
//! option is a typed value (a `Version`, `Family` lists, paths), never
//! text a command line would parse; each crate re-exports the types its
//! options hold, so this program depends on no crate for them.
//!
//! ```text
//! package-a-release ARTIFACT_DIR ROCM_SDK SCRATCH
//! ```
//!
//! - `ARTIFACT_DIR`: TheRock artifacts (`cargo xtask example` writes the
//!   built-in example's, `example/kpack/artifacts`; [`VERSION`] and
//!   [`FAMILIES`] are theirs: change them for other artifacts).
//! - `ROCM_SDK`: the native `rocm-sdk` program the core wheel carries (a
//!   static Linux build; `therock-package`'s build script makes one).
//! - `SCRATCH`: a new or empty directory for the release (`SCRATCH/out/dist`)
//!   and the site-packages it is installed into (`SCRATCH/site-packages`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use installed_sdk::{Site, Step, UnpackOptions, UnpackProgress};
use pipeline::{
    BuildOptions, BuildProgress, Family, FileKind, NativePrograms, PlanOptions, PlanReport,
    Platform, Version,
};
use release_check::{CheckStatus, VerifyOptions};
use wheel_writer::WheelReader;

/// The version the example's artifacts record, given again as a typed
/// value: a release build names its version.
const VERSION: &str = "7.1.0";

/// The targets the example's artifacts are built for; each target is a
/// family of its own.
const FAMILIES: [&str; 2] = ["gfx942", "gfx1100"];

/// One line per package written, as `build` reports them.
#[derive(Debug)]
struct Lines;

impl BuildProgress for Lines {
    fn package_written(&self, file: &str, size: u64) {
        eprintln!("  wrote {file} ({size} bytes)");
    }
}

/// Counts the files the devel unpack wrote, as a progress display would.
#[derive(Debug, Default)]
struct Files(AtomicUsize);

impl UnpackProgress for Files {
    fn step(&self, step: &Step) {
        if let Step::Wrote { done, .. } = step {
            self.0.store(*done, Ordering::Relaxed);
        }
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

    // 1. Plan: an options value of typed values, no command line.
    let version: Version = VERSION.parse()?;
    let families = FAMILIES
        .iter()
        .map(|name| name.parse::<Family>())
        .collect::<Result<Vec<_>, _>>()?;
    let plan_options = PlanOptions {
        artifact_dir: artifacts.to_owned(),
        version: Some(version),
        linux_families: Some(families.clone()),
        native_programs: NativePrograms::new().with_file(Platform::Linux, rocm_sdk),
        ..PlanOptions::default()
    };
    let PlanReport::Plan(plan) = pipeline::plan(&plan_options, None)? else {
        bail!("a plan without shards is one plan");
    };
    println!(
        "planned {} packages of {} for {}",
        plan.packages.len(),
        plan.version,
        plan.platform_tag
    );

    // 2. Package it, on two threads of a pool of the build's own, the
    //    timestamp given (what SOURCE_DATE_EPOCH is to `therock-package`).
    let options = BuildOptions {
        plan: plan_options,
        dest_dir: scratch.join("out"),
        jobs: 2,
        source_date_epoch: Some(1_700_000_000),
        progress: Some(Arc::new(Lines)),
        ..BuildOptions::default()
    };
    eprintln!("building {}", artifacts.display());
    let built = pipeline::build(&options)?;
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

    // 3. Verify the release: every check of `therock-package verify`, the
    //    Linux release held to the families it offers.
    let report = release_check::verify(&VerifyOptions {
        dirs: vec![built.dist_dir.clone()],
        linux_families: Some(families),
        ..VerifyOptions::default()
    })?;
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

    // 4. Install the wheels as an installer would (every member below
    //    site-packages), then unpack the devel tarball there.
    let site_packages = scratch.join("site-packages");
    for file in built.files.iter().filter(|f| f.kind == FileKind::Wheel) {
        install_wheel(&file.path, &site_packages)?;
    }
    let site = Site::new(&site_packages);
    let files = Arc::new(Files::default());
    let init = site.init(&UnpackOptions {
        progress: Some(files.clone()),
        ..UnpackOptions::default()
    })?;
    let Some(unpacked) = init.unpacked else {
        bail!("the devel tree of a fresh site-packages was already unpacked");
    };
    if files.0.load(Ordering::Relaxed) == 0 {
        bail!("the unpack reported no file written");
    }
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
