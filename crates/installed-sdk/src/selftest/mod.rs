//! `rocm-sdk test`: the installation self-check (docs/behaviour.md#self-test) plus RECORD
//! hashes, version consistency and `DT_NEEDED` resolution
//! (`docs/rocm-sdk.md`).
//!
//! Each sub-module adds the checks of one concern to the report; none of
//! them stops the others, so one run names every problem.

// Windows has no runtime aliases (docs/behaviour.md#runtime-aliases).
#[cfg_attr(windows, allow(dead_code))]
mod aliases;
mod bare_names;
mod devel;
#[cfg(windows)]
mod dlls;
mod environment;

mod host_needs;
mod libraries;
mod needed;
mod packages;
mod preload;
mod records;
mod run;
mod scripts;
mod selection;
mod tools;
mod versions;

use std::path::{Path, PathBuf};
use std::time::Duration;

use dist_info::document::DistInfo;
use dist_info::package::PackageKind;
use pypa_formats::installer::InstallCommand;

use crate::distributions::{self, Distribution};
use crate::probe::PythonProbe;
use crate::report::{Category, Check, Environment, SelfTestReport};
use crate::site::Site;
use fs_helpers::error_chain::Chain;

/// How `rocm-sdk test` runs.
#[derive(Debug, Clone)]
pub struct SelfTestOptions {
    /// The Python interpreter for imports, entry points and library loads
    /// (the `rocm-sdk` script passes its own `sys.executable`).
    pub python: PathBuf,
    /// How many libraries load at the same time.
    pub jobs: usize,
    /// How long one library may take to load.
    pub load_timeout: Duration,
    /// How long one tool run (`hipconfig --rocmpath`, `--version`) may take.
    pub run_timeout: Duration,
    /// The user's `PYTHONPATH`: its directories come before site-packages
    /// in every Python started without `-I`, so a package there shadows
    /// the installed one (the self-check's own Python runs isolated).
    pub python_path: Option<std::ffi::OsString>,
    /// The working directory, which `python -c`, `python -m` and the
    /// interactive interpreter put first on `sys.path`.
    pub working_dir: Option<PathBuf>,
}

impl Default for SelfTestOptions {
    /// `python3` from `PATH` (set [`python`](Self::python) to the
    /// installation's own: [`Site::python`]), one load per core, 60 s per
    /// load or run.
    fn default() -> Self {
        Self {
            python: PathBuf::from("python3"),
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            load_timeout: Duration::from_mins(1),
            run_timeout: Duration::from_mins(1),
            python_path: None,
            working_dir: None,
        }
    }
}

/// What every check reads: the site, core's document, the installed
/// ROCm distributions and the Python probe.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub(crate) site: &'a Site,
    pub(crate) document: DistInfo,
    pub(crate) distributions: Vec<Distribution>,
    pub(crate) probe: PythonProbe,
    pub(crate) options: &'a SelfTestOptions,
    /// `pip install` or `uv pip install`, for remedies.
    pub(crate) install: InstallCommand,
}

impl Context<'_> {
    pub(crate) fn sp(&self) -> &Path {
        self.site.root()
    }

    /// Installed distributions of one kind.
    pub(crate) fn of(&self, kind: PackageKind) -> impl Iterator<Item = &Distribution> {
        self.distributions.iter().filter(move |d| d.kind == kind)
    }

    /// The installed distribution of a kind that is not target specific.
    pub(crate) fn one(&self, kind: PackageKind) -> Option<&Distribution> {
        self.of(kind).next()
    }

    /// A path relative to site-packages, for messages.
    pub(crate) fn rel(&self, path: &Path) -> String {
        path.strip_prefix(self.sp())
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// Runs every check on the installation at `site`.
pub fn self_test(site: &Site, options: &SelfTestOptions) -> SelfTestReport {
    let mut checks = Vec::new();
    let mut env = environment::platform_and_python(&options.python);
    let document = match site.core_document() {
        Ok(document) => document,
        Err(e) => {
            checks.push(Check::failed(
                Category::Installation,
                "rocm-sdk-core document",
                Chain(&e).to_string(),
            ));
            return finish(site, None, env, checks);
        }
    };
    let version = document.selector.version.clone();
    let distributions = match distributions::installed(site.root(), &document) {
        Ok(found) => found,
        Err(e) => {
            checks.push(Check::failed(
                Category::Installation,
                "distributions",
                Chain(&e).to_string(),
            ));
            return finish(site, Some(version), env, checks);
        }
    };
    let cx = Context {
        site,
        document,
        distributions,
        probe: PythonProbe::new(&options.python, site.root()),
        options,
        install: site.install_command(),
    };
    installation(&cx, &mut checks);
    let selected = selection::check(&cx, &mut checks);
    environment::complete(&mut env, &cx, selected.as_ref());
    // Unpack first: it appends to RECORD and creates the tree the later
    // checks look at.
    devel::unpack(&cx, &mut checks);
    packages::check(&cx, &mut checks);
    versions::check(&cx, &mut checks);
    records::check(&cx, &mut checks);
    // ELF libraries load through the Python probe; DLLs load in-process.
    #[cfg(not(windows))]
    libraries::check(&cx, &mut checks);
    #[cfg(not(windows))]
    aliases::check(&cx, &mut checks);
    #[cfg(windows)]
    dlls::check(&cx, &mut checks);
    preload::check(&cx, &mut checks);
    #[cfg(not(windows))]
    bare_names::from_python(&cx, &mut checks);
    bare_names::library_path(&cx, &mut checks);
    needed::check(&cx, &mut checks);
    scripts::check(&cx, &mut checks);
    tools::check(&cx, &mut checks);
    devel::check(&cx, &mut checks);
    scripts::profiler(&cx, &mut checks);
    finish(site, Some(version), env, checks)
}

fn finish(
    site: &Site,
    version: Option<String>,
    environment: Environment,
    checks: Vec<Check>,
) -> SelfTestReport {
    SelfTestReport {
        site_packages: site.root().to_path_buf(),
        version,
        environment,
        checks,
    }
}

/// The required distributions (`rocm`, `rocm-sdk-core`) are installed.
fn installation(cx: &Context<'_>, checks: &mut Vec<Check>) {
    for record in cx.document.packages.iter().filter(|p| p.required) {
        let name = &record.dist_template;
        let check = match cx.one(record.logical) {
            Some(d) => Check::passed(
                Category::Installation,
                name,
                format!("{} {}", d.name, d.version),
            ),
            None => Check::failed(
                Category::Installation,
                name,
                format!(
                    "not installed in {}; run `{} \"{name}=={}\"`",
                    cx.sp().display(),
                    cx.install,
                    cx.document.selector.version
                ),
            ),
        };
        checks.push(check);
    }
}
