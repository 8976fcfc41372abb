//! Release integrity checks over one or more dist directories (for example
//! the Linux and the Windows outputs of one release), so a broken package
//! set never reaches users: what `therock-package verify DIST_DIR...` runs
//! (docs/verify.md).
//!
//! Checks, in report order: well-formed packages, one version, identical
//! bytes for a file name present twice, device wheels reachable through
//! the `rocm` extras on their platform, every requirement satisfiable,
//! kpack completeness against given family lists, names Windows can hold,
//! names every file system holds, one owner for every installed path, the
//! build's GPU targets document, the documents the install side acts on,
//! ELF links, runtime aliases, absolute search paths, manylinux policies,
//! index pages and `.metadata` files.
//!
//! Verify this release from another program:
//!
//! ```no_run
//! use release_check::{Family, VerifyOptions, verify};
//!
//! let options = VerifyOptions {
//!     dirs: vec!["dist/linux".into(), "dist/windows".into()],
//!     linux_families: Some(vec!["gfx94X-dcgpu".parse()?, "gfx110X-dgpu".parse()?]),
//!     ..VerifyOptions::default()
//! };
//! let report = verify(&options)?; // Err: a directory cannot be read at all
//! for check in report.checks() {
//!     for problem in &check.problems {
//!         eprintln!("{}: {problem}", check.id); // one sentence each
//!     }
//! }
//! if !report.ok() {
//!     std::process::exit(1);
//! }
//! // `report` serialised is the `verify --json` document (docs/formats.md);
//! // `therock-package` renders the text report.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod devel_tarball;
mod dist_targets;
mod documents;
mod duplicates;
mod extras;
mod index_pages;
mod installed;
mod kpack;
mod links;
mod pep508;
mod policy;
mod release;
mod requirements;
mod runtime_aliases;
mod search_paths;
mod versions;
mod windows_names;

use std::collections::BTreeSet;
use std::path::PathBuf;

use dist_info::document::DistInfo;
use dist_info::requirement::Platform;
use serde::Serialize;

pub use links::ElfLinks;
// The types of other crates that the options and reports hold
// (docs/using-the-crates.md, "One convention").
pub use dist_info::families::Family;
pub use link_check::{PolicyName, WheelAudit};
use release::{DistFile, Kind};
pub use release::{SdistError, sdist_file, sdist_pkg_info};
pub use search_paths::search_path_problem;

/// What to verify: the dist directories of one release and what the
/// checks allow (`therock-package verify` builds one from its flags).
///
/// `Default` gives every choice its default; `dirs` is the value without
/// one.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Dist directories of one release (searched recursively for `*.whl`
    /// and `*.tar.gz`).
    pub dirs: Vec<PathBuf>,
    /// Families the Linux release must offer: every target needs its
    /// device wheel (kpack) or every family its libraries wheel (legacy).
    /// `None`: the completeness check is skipped.
    pub linux_families: Option<Vec<Family>>,
    /// Families the Windows release must offer.
    pub windows_families: Option<Vec<Family>>,
    /// What the ELF-link and manylinux checks allow.
    pub link_rules: LinkRules,
}

/// What the ELF-link and manylinux checks allow (`--policy` and
/// `--exclude` of `verify` and of `assemble`, which passes them on to its
/// verify step).
#[derive(Debug, Clone, Default)]
pub struct LinkRules {
    /// The manylinux policy every Linux wheel must keep to; `None`: the
    /// one each wheel's own tag claims.
    pub policy: Option<PolicyName>,
    /// Libraries the release deliberately leaves to the system although
    /// no policy allows them (auditwheel's `--exclude`).
    pub exclude: Vec<String>,
}

/// Why a release could not be verified at all (problems of its packages
/// are in the [`VerifyReport`] instead).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A path given as a dist directory is none.
    #[error("{} is not a directory; pass the dist directories of the release", dir.display())]
    NotADirectory {
        /// The path as given.
        dir: PathBuf,
    },
    /// A dist directory could not be read.
    #[error("cannot list {}", dir.display())]
    List {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Every package of the dist directories, in directory order then path order.
#[derive(Debug)]
struct Release {
    files: Vec<DistFile>,
}

impl Release {
    /// The first file of each relative path (what an index of the
    /// published directory would serve).
    fn unique(&self) -> impl Iterator<Item = &DistFile> {
        let mut seen = BTreeSet::new();
        self.files
            .iter()
            .filter(move |f| seen.insert(f.rel.as_str()))
    }

    /// Platforms the set's platform wheels are for (Linux when it has none).
    fn platforms(&self) -> Vec<Platform> {
        let found: BTreeSet<Platform> = self
            .files
            .iter()
            .filter_map(|f| match &f.kind {
                Kind::Wheel(w) if w.platforms.len() == 1 => Some(w.platforms[0]),
                _ => None,
            })
            .collect();
        if found.is_empty() {
            vec![Platform::Linux]
        } else {
            found.into_iter().collect()
        }
    }

    /// The concrete platform tags of the set's platform wheels
    /// (`linux_x86_64` when it has none): what markers are evaluated for.
    fn platform_tags(&self) -> Vec<String> {
        let found: BTreeSet<&str> = self
            .files
            .iter()
            .filter_map(|f| match &f.kind {
                Kind::Wheel(w) => Some(w.platform_tags.iter().map(String::as_str)),
                Kind::Sdist(_) => None,
            })
            .flatten()
            .filter(|t| *t != "any")
            .collect();
        if found.is_empty() {
            vec!["linux_x86_64".to_owned()]
        } else {
            found.into_iter().map(str::to_owned).collect()
        }
    }

    /// Every distinct `rocm` sdist (by content) with its document.
    fn rocm_sdists(&self) -> Vec<(&DistFile, &DistInfo)> {
        let mut seen = BTreeSet::new();
        self.files
            .iter()
            .filter_map(|f| match &f.kind {
                Kind::Sdist(s) if s.name == "rocm" => s.dist_info.as_deref().map(|d| (f, d)),
                _ => None,
            })
            .filter(|(f, _)| seen.insert(f.sha256.as_str()))
            .collect()
    }
}

/// The id of the check `build` and `assemble` only warn about
/// ([`VerifyReport::fails_only_elf_links`]).
const ELF_LINKS: &str = "elf-links";

/// The outcome of one check.
#[derive(Debug, Serialize)]
pub struct CheckOutcome {
    /// Stable identifier (`well-formed`, `versions`, ...).
    pub id: &'static str,
    /// What the check promises.
    pub title: &'static str,
    /// Whether it passed.
    pub status: CheckStatus,
    /// Why it was skipped, or what it covered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Everything found wrong, one readable sentence each.
    pub problems: Vec<String>,
    /// What it found besides problems, for the text report (the JSON
    /// report carries the same as data).
    #[serde(skip)]
    pub details: Vec<String>,
}

/// How one check of [`verify`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Nothing wrong was found.
    Ok,
    /// Something wrong was found: the release must not be published.
    Failed,
    /// There was nothing to check (a note says why).
    Skipped,
}

/// What kind of package a [`ReleaseFile`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A wheel (`.whl`).
    Wheel,
    /// An sdist (`.tar.gz`).
    Sdist,
}

/// A package of the release, as the report lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseFile {
    /// `DIST_DIR/relpath`, as given.
    pub path: String,
    /// Wheel or sdist.
    pub kind: FileKind,
    /// The distribution name its metadata gives.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its SHA-256, hex.
    pub sha256: String,
}

/// The whole report (serialised as is, it is `verify --json`:
/// docs/formats.md; fields in the document's order).
#[derive(Debug, Serialize)]
pub struct VerifyReport {
    /// The document's version (docs/formats.md), as in every `--json`.
    pub schema: u32,
    /// Whether every check passed (or was skipped).
    pub ok: bool,
    /// The dist directories, as given.
    pub dirs: Vec<String>,
    /// Every package found, in directory order then path order.
    pub files: Vec<ReleaseFile>,
    /// Every check, in report order.
    pub checks: Vec<CheckOutcome>,
    /// The `elf-links` check in numbers, as `build` and `assemble` report it.
    pub elf_links: ElfLinks,
    /// The manylinux audit of every Linux wheel.
    pub manylinux: Vec<WheelAudit>,
}

fn outcome(
    id: &'static str,
    title: &'static str,
    problems: Option<Vec<String>>,
    note: Option<String>,
) -> CheckOutcome {
    let status = match &problems {
        None => CheckStatus::Skipped,
        Some(p) if p.is_empty() => CheckStatus::Ok,
        Some(_) => CheckStatus::Failed,
    };
    CheckOutcome {
        id,
        title,
        status,
        note,
        problems: problems.unwrap_or_default(),
        details: Vec::new(),
    }
}

/// Runs every check; the report says whether the release may be published.
///
/// An error means the input could not be verified at all (a directory that
/// is missing or unreadable); problems of the packages are in the report.
pub fn verify(options: &VerifyOptions) -> Result<VerifyReport, VerifyError> {
    let (release, well_formed) = read_release(&options.dirs)?;
    let mut checks = package_checks(&release, well_formed, options);
    checks.extend(install_checks(&release));
    let elf = elf_checks(&release, &options.link_rules);
    checks.extend(elf.checks);
    let pages = index_pages::check(&options.dirs, &release);
    let pages_note = pages
        .is_none()
        .then(|| "no index pages or .metadata files".to_owned());
    checks.push(outcome(
        "index-pages",
        "index pages and .metadata files beside the packages describe them as they are",
        pages,
        pages_note,
    ));
    Ok(VerifyReport {
        schema: 1,
        ok: checks.iter().all(|c| c.status != CheckStatus::Failed),
        dirs: options
            .dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect(),
        files: release.files.iter().map(DistFile::listed).collect(),
        checks,
        elf_links: elf.summary,
        manylinux: elf.audits,
    })
}

/// Every package of `dirs`, and what makes one unreadable (the
/// `well-formed` check's problems so far).
fn read_release(dirs: &[PathBuf]) -> Result<(Release, Vec<String>), VerifyError> {
    let mut files = Vec::new();
    let mut well_formed = Vec::new();
    for dir in dirs {
        if !dir.is_dir() {
            return Err(VerifyError::NotADirectory { dir: dir.clone() });
        }
        let listing =
            wheel_writer::dist_dir::list_packages(dir).map_err(|source| VerifyError::List {
                dir: dir.clone(),
                source,
            })?;
        well_formed.extend(listing.refused.iter().map(ToString::to_string));
        if listing.packages.is_empty() {
            well_formed.push(format!("{}: holds no wheel or sdist", dir.display()));
        }
        for path in listing.packages {
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let display = format!("{}/{}", dir.display(), rel.display());
            let rel = rel.to_string_lossy().into_owned();
            if let Some(file) = release::read_package(display, rel, &path, &mut well_formed) {
                files.push(file);
            }
        }
    }
    Ok((Release { files }, well_formed))
}

/// The checks of the packages as a set: well-formed, one version,
/// identical duplicates, reachable device extras, satisfiable
/// requirements, complete family lists.
fn package_checks(
    release: &Release,
    well_formed: Vec<String>,
    options: &VerifyOptions,
) -> Vec<CheckOutcome> {
    let counted = release.files.len();
    let mut checks = vec![outcome(
        "well-formed",
        "every wheel's RECORD is complete and its hashes right; file names, tags and METADATA agree; sdists are well-formed",
        Some(well_formed),
        Some(format!("{counted} packages")),
    )];
    checks.push(outcome(
        "versions",
        "all rocm* versions agree",
        Some(versions::check(release)),
        None,
    ));
    checks.push(outcome(
        "identical-duplicates",
        "a file name present in two directories is byte-identical",
        Some(duplicates::check(release)),
        None,
    ));
    checks.push(outcome(
        "device-extras",
        "every device wheel is reachable through rocm[device-<T>] and rocm[device-all] on its platform",
        Some(extras::check(release)),
        None,
    ));
    checks.push(outcome(
        "requirements",
        "every requirement of every package is satisfiable inside the set",
        Some(requirements::check(release)),
        Some(format!(
            "platforms: {}; Python {}",
            release.platform_tags().join(", "),
            pep508::PYTHON_VERSIONS.join(", ")
        )),
    ));
    let kpack = kpack::check(
        release,
        options.linux_families.as_deref(),
        options.windows_families.as_deref(),
    );
    let kpack_note = kpack
        .is_none()
        .then(|| "no --linux-amdgpu-families or --windows-amdgpu-families given".to_owned());
    checks.push(outcome(
        "completeness",
        "every target of the given family lists has its package",
        kpack,
        kpack_note,
    ));
    checks
}

/// The checks of what the wheels install: names Windows can hold, name
/// lengths, one owner per path, the build's targets document, the
/// documents the install side acts on.
fn install_checks(release: &Release) -> Vec<CheckOutcome> {
    // What the wheels install, read once for the three checks (and dropped
    // before the ELF checks read the wheels again).
    let installed = installed::read(release);
    let windows = windows_names::check(release, &installed);
    let mut checks = vec![CheckOutcome {
        details: windows.details,
        ..outcome(
            "windows-names",
            "every wheel that installs on Windows, and its devel tarball, holds only names Windows can hold, none differing from another installed path only in case",
            windows.problems,
            Some(windows.note),
        )
    }];
    checks.push(outcome(
        "name-lengths",
        "every path a wheel or its devel tarball installs has names of at most 255 bytes and fits Linux's PATH_MAX below a site-packages",
        Some(installed::name_lengths(&installed)),
        Some(format!("{} wheels", installed.wheels.len())),
    ));
    checks.push(outcome(
        "one-owner",
        "no two wheels installed together (on one platform) ship the same path",
        Some(installed::one_owner(release, &installed)),
        None,
    ));
    drop(installed);
    let targets = dist_targets::check(release);
    let targets_note = targets
        .is_none()
        .then(|| "no rocm-sdk-core wheel".to_owned());
    checks.push(outcome(
        "dist-targets",
        "the core wheel's share/therock/dist_info.json is one `rocm-sdk targets` can read",
        targets,
        targets_note,
    ));
    checks.push(outcome(
        "documents",
        "every document a wheel ships that the install side acts on (device links, library records, the devel tarball's runtime links) names files the release ships",
        Some(documents::check(release)),
        None,
    ));
    checks
}

/// The checks of the ELF files, over one reading of them: links, runtime
/// aliases, absolute search paths, manylinux policies.
struct ElfChecks {
    checks: Vec<CheckOutcome>,
    summary: ElfLinks,
    audits: Vec<WheelAudit>,
}

fn elf_checks(release: &Release, rules: &LinkRules) -> ElfChecks {
    let links = links::check(release, &rules.exclude);
    let excluded = if rules.exclude.is_empty() {
        String::new()
    } else {
        format!("; excluded: {}", rules.exclude.join(", "))
    };
    let mut checks = vec![outcome(
        ELF_LINKS,
        "in runtime wheels every ELF NEEDED resolves inside the set, or is an allowed manylinux_2_28 system library or the loader",
        Some(links.problems),
        Some(format!("{} ELF files{excluded}", links.summary.files)),
    )];
    let aliases = runtime_aliases::check(links.linux.as_ref());
    let aliases_note = if aliases.problems.is_none() {
        "no Linux runtime wheel whose ELF files could be read".to_owned()
    } else {
        format!("{} aliases", aliases.count)
    };
    checks.push(outcome(
        "runtime-aliases",
        "every runtime alias (libX.so standing for a library of the set) reaches its library inside the set and shadows no real file",
        aliases.problems,
        Some(aliases_note),
    ));
    let absolute = search_paths::check(release, links.linux.as_ref());
    let absolute_note = absolute
        .is_none()
        .then(|| "no Linux wheel whose ELF files could be read".to_owned());
    checks.push(outcome(
        "search-paths",
        "no ELF file of a Linux wheel or of its devel tarball searches an absolute directory (a directory of the build host)",
        absolute,
        absolute_note,
    ));
    let policy = policy::check(release, links.linux.as_ref(), rules.policy);
    checks.push(CheckOutcome {
        details: policy.details,
        ..outcome(
            "manylinux",
            "every host ELF file of a Linux wheel keeps to its manylinux policy: symbol versions, system libraries, no blacklisted symbols",
            policy.problems,
            Some(policy.note),
        )
    });
    ElfChecks {
        checks,
        summary: links.summary,
        audits: policy.audits,
    }
}

impl DistFile {
    /// The file as the report lists it.
    fn listed(&self) -> ReleaseFile {
        ReleaseFile {
            path: self.display.clone(),
            kind: match self.kind {
                Kind::Wheel(_) => FileKind::Wheel,
                Kind::Sdist(_) => FileKind::Sdist,
            },
            name: self.name().to_owned(),
            version: self.version().to_owned(),
            sha256: self.sha256.clone(),
        }
    }
}

impl VerifyReport {
    /// Whether `elf-links` is the one check that failed: the release is
    /// sound but for `NEEDED` entries left to the system, which `build`
    /// and `assemble` report without refusing (unless strict).
    pub fn fails_only_elf_links(&self) -> bool {
        let mut failed = self
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Failed);
        failed.next().is_some_and(|c| c.id == ELF_LINKS) && failed.next().is_none()
    }

    /// Whether every check passed (or was skipped).
    pub fn ok(&self) -> bool {
        self.ok
    }

    /// Every check, in report order.
    pub fn checks(&self) -> &[CheckOutcome] {
        &self.checks
    }
}
