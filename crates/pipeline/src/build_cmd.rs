//! `therock-package build` and `plan`: options → plan → packages.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use artifacts::{ArtifactDir, ArtifactFilter};
use dist_info::console_scripts::all_console_scripts;
use dist_info::families::Family;
use dist_info::nonce::Nonce;
use dist_info::project_metadata::ProjectMetadata;
use dist_info::requirement::Platform;
use layout::{Plan, PlanInput};
use pypa_formats::filename::PlatformTag;
use pypa_formats::version::Version;
use serde::Serialize;
use wheel_writer::{Compression, WriteOptions};

use crate::built_links::{self, BuiltElves};
use crate::error::{BuildError, IoAction, IoError, PlanError, ReadMetadataError, cannot};
use crate::execute::{ExecuteOptions, check_unique_outputs, execute};
use crate::foreseen::{self, ForeseenFailure};
use crate::native::NativePrograms;
use crate::pause::BuildPause;
use crate::progress::{BuildProgress, NoProgress};
use crate::python::{self, Program};
use crate::shard::{ShardId, ShardManifest, ShardPlan, ShardSettings};
use crate::staging::{Staging, StagingCleanup};
use crate::timings::{BuildTimings, Stopwatch};
use fs_helpers::file_hash::sha256_file;
use release_check::ElfLinks;

/// What `plan` and `build` read and how they package it.
///
/// `Default` gives every choice its default; `artifact_dir` is the one
/// value without one (`therock-package` takes its flag defaults from here).
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// TheRock's artifact directory (one `NAME_COMPONENT_TARGET` directory
    /// or `.tar.zst`/`.tar.xz` archive per artifact).
    pub artifact_dir: PathBuf,
    /// The package version; `None`: the one `therock_manifest.json` records.
    pub version: Option<Version>,
    /// The nonce every platform package directory name ends with
    /// (`_rocm_sdk_core{nonce}`; [`Nonce::NONE`]: none).
    pub nonce: Nonce,
    /// The families the Linux release offers (`Some` of an empty list:
    /// Linux takes no part); `None`: every target of the artifacts.
    pub linux_families: Option<Vec<Family>>,
    /// The families the Windows release offers.
    pub windows_families: Option<Vec<Family>>,
    /// Wheel platform tag; `None`: the host's (`linux_x86_64`,
    /// `win_amd64`).
    pub platform_tag: Option<PlatformTag>,
    /// The devel tarball codec.
    pub devel_compression: DevelCompression,
    /// A TOML file with the packages' `license-expression`,
    /// `[project-urls]` and `[summaries]`; unset keys keep their defaults.
    pub metadata: Option<PathBuf>,
    /// Ship the absolute entries of host ELF files' search paths
    /// (directories of the build host) instead of leaving them out with a
    /// warning.
    pub keep_absolute_search_paths: bool,
    /// Unversioned library names (`libamdhip64.so`) that get a runtime
    /// alias besides the names the build finds.
    pub runtime_aliases: Vec<String>,
    /// `License-Expression` of every package (overrides `metadata`).
    pub license_expression: Option<String>,
    /// `Project-URL`s as `(label, url)`; not empty: they replace those of
    /// `metadata` and the defaults.
    pub project_urls: Vec<(String, String)>,
    /// The native `rocm-sdk` of each platform, which core wheels carry
    /// (none by default: a build then refuses every platform;
    /// docs/pipeline.md, "The native rocm-sdk").
    pub native_programs: NativePrograms,
}

/// What `build` writes and how, besides what [`PlanOptions`] says.
///
/// `Default` gives every choice its default; `plan.artifact_dir` and
/// `dest_dir` are the values without one.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// What to read and how to package it.
    pub plan: PlanOptions,
    /// Where `dist/` is written.
    pub dest_dir: PathBuf,
    /// Write the packages; `false`: validate and write `plan.json` only.
    pub build_packages: bool,
    /// How wheel members are compressed.
    pub wheel_compression: Compression,
    /// Threads for extracting and compressing: the build runs in a pool of
    /// its own of that many (at most [`wheel_writer::MAX_JOBS_PER_CORE`]
    /// per core: [`BuildOptions::effective_jobs`]); 0: one per core for
    /// compressing, and the rest on the rayon pool the call is made from.
    pub jobs: usize,
    /// The timestamp of every archive member, in seconds since the epoch
    /// (`therock-package` passes `SOURCE_DATE_EPOCH`); `None`: the zip
    /// epoch (1980-01-01).
    pub source_date_epoch: Option<u64>,
    /// Build only this shard and write `shard.json` beside `dist/` for
    /// `assemble`.
    pub shard: Option<ShardId>,
    /// Hash every written file for the report (its `sha256`): reading a
    /// release back costs seconds per gigabyte.
    pub hash_files: bool,
    /// Measure wall and CPU time per build step, package and phase.
    pub timings: bool,
    /// Who removes the staging directory if a signal ends the process
    /// mid-build (`None`: a signal leaves it for the next build to remove).
    pub cleanup: Option<StagingCleanup>,
    /// Who hears of each package as it is written (`None`: nobody).
    pub progress: Option<Arc<dyn BuildProgress>>,
    /// Who holds the build at its [`BuildPoint`](crate::BuildPoint)s
    /// (`None`: nobody).
    pub pause: Option<Arc<dyn BuildPause>>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            plan: PlanOptions::default(),
            dest_dir: PathBuf::new(),
            build_packages: true,
            wheel_compression: Compression::default(),
            jobs: 0,
            source_date_epoch: None,
            shard: None,
            hash_files: false,
            timings: false,
            cleanup: None,
            progress: None,
            pause: None,
        }
    }
}

impl BuildOptions {
    /// The threads [`jobs`](Self::jobs) gives: as many as asked for, at
    /// most [`wheel_writer::MAX_JOBS_PER_CORE`] per core; one per core for 0.
    pub fn effective_jobs(&self) -> usize {
        WriteOptions::default()
            .with_jobs(self.jobs)
            .effective_jobs()
    }
}

/// The devel tarball codecs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DevelCompression {
    /// `_devel.tar`.
    #[default]
    None,
    /// `_devel.tar.xz`.
    Xz,
    /// `_devel.tar.zst`.
    Zstd,
}

impl DevelCompression {
    /// The codec and its level.
    fn codec(self) -> devel_tar::TarCodec {
        match self {
            Self::None => devel_tar::TarCodec::None,
            Self::Xz => devel_tar::TarCodec::Xz { preset: 6 },
            Self::Zstd => devel_tar::TarCodec::Zstd { level: 19 },
        }
    }
}

impl fmt::Display for DevelCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Xz => "xz",
            Self::Zstd => "zstd",
        })
    }
}

impl PlanOptions {
    /// The devel codec.
    fn devel_compression(&self) -> devel_tar::TarCodec {
        self.devel_compression.codec()
    }

    /// The tag of the options, else the host's.
    fn platform_tag(&self) -> PlatformTag {
        self.platform_tag.clone().unwrap_or_else(host_platform_tag)
    }

    /// The metadata of [`metadata`](Self::metadata),
    /// [`license_expression`](Self::license_expression) and
    /// [`project_urls`](Self::project_urls) over the defaults.
    pub(crate) fn project_metadata(&self) -> Result<ProjectMetadata, ReadMetadataError> {
        let mut metadata = match &self.metadata {
            None => ProjectMetadata::default(),
            Some(path) => read_project_metadata(path)?,
        };
        if let Some(expression) = &self.license_expression {
            metadata.license_expression.clone_from(expression);
        }
        if !self.project_urls.is_empty() {
            metadata.project_urls.clone_from(&self.project_urls);
        }
        Ok(metadata)
    }

    /// Reads the artifacts and makes the plan; a plan that writes no
    /// package lists the native program without needing it.
    fn plan(&self, program: Program) -> Result<Plan, PlanError> {
        self.plan_from(&self.open_artifacts()?, program)
    }

    /// Discovers and indexes the artifacts (the reader logs what it skipped).
    fn open_artifacts(&self) -> Result<ArtifactDir, PlanError> {
        Ok(ArtifactDir::open(&self.artifact_dir)?)
    }

    /// Discovers and indexes the artifacts, extracting the file members of
    /// archives below `into` on the way (a build reads each member at its
    /// own time).
    fn open_artifacts_extracting(&self, into: &Path) -> Result<ArtifactDir, PlanError> {
        Ok(ArtifactDir::open_extracting(
            &self.artifact_dir,
            &ArtifactFilter::new(),
            into,
        )?)
    }

    /// Makes the plan from indexed artifacts.
    fn plan_from(&self, dir: &ArtifactDir, program: Program) -> Result<Plan, PlanError> {
        let manifest = dir.therock_manifest()?;
        let version = dist_info::release_version::choose_version(
            manifest.version.as_deref(),
            self.version.as_ref(),
        )?;
        let tag = self.platform_tag();
        let platform_tag = tag.as_str();
        let platform = if Platform::is_windows_tag(platform_tag) {
            Platform::Windows
        } else {
            Platform::Linux
        };
        let mut input = PlanInput::new(dir, version.version, tag.clone());
        input.nonce.clone_from(&self.nonce);
        input.linux_families.clone_from(&self.linux_families);
        input.windows_families.clone_from(&self.windows_families);
        self.devel_compression()
            .file_name()
            .clone_into(&mut input.devel_tar_name);
        input.devel_digest_name = Some(devel_tar::DIGEST_FILE.to_owned());
        input.metadata = self.project_metadata()?;
        input.keep_absolute_search_paths = self.keep_absolute_search_paths;
        input.runtime_aliases.clone_from(&self.runtime_aliases);
        input.extra_files =
            python::wheel_files(&self.native_programs, platform, platform_tag, program)?;
        input.console_scripts = all_console_scripts()
            .into_iter()
            .filter(|s| s.on(platform))
            .map(|s| (s.package, s.name.clone(), s.entry_point()))
            .collect();
        let plan = layout::plan(&input)?;
        check_unique_outputs(&plan)?;
        Ok(plan)
    }
}

/// Reads and parses a metadata file (`therock-package build --metadata`).
pub(crate) fn read_project_metadata(path: &Path) -> Result<ProjectMetadata, ReadMetadataError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadMetadataError::Read {
        path: path.to_owned(),
        source,
    })?;
    ProjectMetadata::from_toml(&text).map_err(|source| ReadMetadataError::Bad {
        path: path.to_owned(),
        source,
    })
}

/// What `plan` found: the plan, or its split into shards.
#[derive(Debug)]
pub enum PlanReport {
    /// Where every file would go.
    Plan(Plan),
    /// The split of `plan` into shards (the CI matrix is the document).
    Shards {
        /// The plan split.
        plan: Plan,
        /// Its shards.
        shards: ShardPlan,
    },
}

impl Serialize for PlanReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Plan(plan) => plan.serialize(s),
            Self::Shards { shards, .. } => shards.serialize(s),
        }
    }
}

/// `therock-package plan`: the plan, or with `shards` its split into that
/// many shards.
pub fn plan(options: &PlanOptions, shards: Option<usize>) -> Result<PlanReport, PlanError> {
    // The shards' digest covers the program's bytes; a plain plan shows
    // nothing of them.
    let program = if shards.is_some() {
        Program::Required
    } else {
        Program::Listed
    };
    let plan = options.plan(program)?;
    if let Some(count) = shards {
        let shards = ShardPlan::new(&plan, count)?;
        return Ok(PlanReport::Shards { plan, shards });
    }
    Ok(PlanReport::Plan(plan))
}

/// `therock-package build`: the packages of the set into `DEST/dist`,
/// published at once when all are written; `options.progress` hears of
/// each package as it is written.
///
/// With [`BuildOptions::jobs`] set, the build runs in a thread pool of its
/// own of that size; the caller's pools (rayon's global one included) are
/// left as they are.
pub fn build(options: &BuildOptions) -> Result<BuildReport, BuildError> {
    check_destination(&options.plan.artifact_dir, &options.dest_dir)?;
    if !options.build_packages {
        return validate_plan(options);
    }
    let jobs = options.effective_jobs();
    tracing::info!(
        "using {jobs} {}",
        if jobs == 1 { "thread" } else { "threads" }
    );
    if options.jobs == 0 {
        return build_packages(options, None);
    }
    // `jobs` bounds every pool of the build: the parallel steps run in
    // this one (indexing and extracting the artifacts first), and the
    // wheel writer sizes its compression pools the same way.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map(Arc::new)
        .map_err(|source| BuildError::Threads { jobs, source })?;
    build_packages(options, Some(&pool))
}

/// Runs `work` on `pool` when the build has one of its own, else where
/// the call is made. Only parallel steps go there: the executor's lanes
/// wait for each other outside it, so a pool of one thread cannot be
/// held by a wait.
fn on_pool<R: Send>(pool: Option<&Arc<rayon::ThreadPool>>, work: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// `build` without packages: the plan checked and written as `plan.json`.
fn validate_plan(options: &BuildOptions) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    let plan = options.plan.plan(Program::Listed)?;
    std::fs::create_dir_all(&options.dest_dir)
        .map_err(cannot(IoAction::Create, &options.dest_dir))?;
    let path = options.dest_dir.join("plan.json");
    write_atomically(&path, plan.to_json().as_bytes())?;
    let size = std::fs::metadata(&path)
        .map_err(cannot(IoAction::Read, &path))?
        .len();
    Ok(BuildReport::new(
        BuildOutcome::PlanValidated,
        options.dest_dir.join("dist"),
        vec![written_file(path, size, options.hash_files)?],
        started,
    ))
}

/// The packages of the set into `DEST/dist`; parallel work runs on `pool`
/// (`None`: the pool of the calling thread).
fn build_packages(
    options: &BuildOptions,
    pool: Option<&Arc<rayon::ThreadPool>>,
) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    let whole = Stopwatch::start();
    let mut timings = options.timings.then(BuildTimings::default);
    let mut step = Stopwatch::start();
    let compression = options.wheel_compression;
    // Creates `dist/` (and the destination) if needed.
    let staging = Staging::create(
        &options.dest_dir.join("dist"),
        options.pause.clone(),
        options.cleanup.as_ref(),
    )?;
    // Archives are read once, extracted into the staging directory while
    // they are indexed (docs/artifacts.md).
    let extracted = staging.extracted();
    let dir = on_pool(pool, || options.plan.open_artifacts_extracting(&extracted))?;
    if dir.has_archives()
        && let Some(timings) = timings.as_mut()
    {
        timings.step("extract", &step);
        step = Stopwatch::start();
    }
    let plan = on_pool(pool, || options.plan.plan_from(&dir, Program::Required))?;
    if let Some(timings) = timings.as_mut() {
        timings.step("plan", &step);
    }
    let shard = options
        .shard
        .map(|id| Ok::<_, PlanError>((id, ShardPlan::new(&plan, id.count)?)))
        .transpose()?;
    let epoch = options.source_date_epoch;
    let wheel = WriteOptions::default()
        .with_compression(compression)
        .with_jobs(options.jobs)
        .with_source_date_epoch(epoch);
    let execute_options = ExecuteOptions {
        wheel,
        devel: options.plan.devel_compression(),
        mtime: pypa_formats::epoch::member_mtime(epoch),
        progress: options
            .progress
            .clone()
            .unwrap_or_else(|| Arc::new(NoProgress)),
        timings: options.timings,
        pool: pool.cloned(),
    };
    let elves = BuiltElves::default();
    let (written, executed) = match &shard {
        Some((id, shards)) => execute(
            &shards.select(&plan, *id),
            &python::sdist_files(),
            &execute_options,
            staging,
            &elves,
        )?,
        None => execute(
            &plan,
            &python::sdist_files(),
            &execute_options,
            staging,
            &elves,
        )?,
    };
    // A shard's wheels link against other shards' files: `assemble`
    // verifies the whole release instead.
    let elf_links = shard
        .is_none()
        .then(|| on_pool(pool, || built_links::check(&plan, elves)));
    let fails_verify = match &shard {
        Some((id, shards)) => {
            let selected = shards.select(&plan, *id);
            let names: Vec<&str> = selected
                .packages
                .iter()
                .map(|p| p.dist_name.as_str())
                .collect();
            foreseen::foresee(&plan, &|name| names.contains(&name))
        }
        None => foreseen::foresee(&plan, &|_| true),
    };
    if let (Some(timings), Some(executed)) = (timings.as_mut(), executed) {
        timings.extend(executed);
    }
    let shard_manifest = match &shard {
        Some((id, shards)) => {
            let settings = ShardSettings {
                linux_families: options.plan.linux_families.as_deref().map(Family::join),
                windows_families: options.plan.windows_families.as_deref().map(Family::join),
                source_date_epoch: epoch,
                compression,
            };
            let dist = options.dest_dir.join("dist");
            let dist = std::fs::canonicalize(&dist).map_err(cannot(IoAction::Resolve, dist))?;
            let path = ShardManifest::new(&plan, shards, *id, &settings, &dist, &written)?
                .write(&options.dest_dir)?;
            Some(ShardRecord {
                shard: id.to_string(),
                manifest: path,
            })
        }
        None => None,
    };
    let step = Stopwatch::start();
    let files = written
        .into_iter()
        .map(|w| written_file(w.path, w.size, options.hash_files))
        .collect::<Result<_, _>>()?;
    if let Some(timings) = timings.as_mut() {
        if options.hash_files {
            timings.step("hash", &step);
        }
        timings.finish(&whole);
    }
    let mut report = BuildReport::new(
        BuildOutcome::Built,
        options.dest_dir.join("dist"),
        files,
        started,
    );
    report.shard = shard_manifest;
    report.elf_links = elf_links;
    report.fails_verify = fails_verify;
    report.timings = timings;
    Ok(report)
}

/// docs/behaviour.md#build-checks: the destination and the artifact
/// directory never overlap. A destination inside the artifacts would be
/// packaged by the next build (its wheels inside a base directory ship in
/// rocm-sdk-core); artifacts inside the destination sit where the build
/// writes `dist/` and removes abandoned staging directories. Judged on the
/// real paths (links resolved; for a destination not made yet, those of
/// its deepest existing ancestor).
fn check_destination(artifact_dir: &Path, dest_dir: &Path) -> Result<(), BuildError> {
    // A missing artifact directory is reported by the artifact reader.
    let Ok(artifacts) = std::fs::canonicalize(artifact_dir) else {
        return Ok(());
    };
    let dest = real_path(dest_dir)?;
    if dest.starts_with(&artifacts) {
        return Err(BuildError::DestinationInsideArtifacts {
            dest_dir: dest_dir.to_owned(),
            artifact_dir: artifact_dir.to_owned(),
            real: dest,
        });
    }
    if artifacts.starts_with(&dest) {
        return Err(BuildError::ArtifactsInsideDestination {
            artifact_dir: artifact_dir.to_owned(),
            dest_dir: dest_dir.to_owned(),
            real: artifacts,
        });
    }
    Ok(())
}

/// `path` with every link resolved, when parts of it do not exist yet:
/// the real path of its deepest existing ancestor joined with the rest
/// (`..` in the rest applied lexically, as creating it would).
fn real_path(path: &Path) -> Result<PathBuf, IoError> {
    use std::path::Component;
    let absolute = std::path::absolute(path).map_err(cannot(IoAction::Resolve, path))?;
    let components: Vec<Component> = absolute.components().collect();
    for split in (1..=components.len()).rev() {
        let existing: PathBuf = components[..split].iter().collect();
        let Ok(mut real) = std::fs::canonicalize(&existing) else {
            continue;
        };
        for component in &components[split..] {
            match component {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        return Ok(real);
    }
    Ok(absolute)
}

/// The manifest a `--shard` build wrote beside `dist/`.
#[derive(Debug, Clone, Serialize)]
pub struct ShardRecord {
    /// `K/N`.
    pub shard: String,
    /// `DEST/shard.json`.
    pub manifest: PathBuf,
}

/// What `build` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BuildOutcome {
    /// Packages were written into `dist/`.
    Built,
    /// `build_packages: false`: the plan was checked and `plan.json`
    /// written.
    PlanValidated,
}

/// What kind of file `build` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A wheel (`.whl`).
    Wheel,
    /// A `rocm` sdist (`.tar.gz`).
    Sdist,
    /// `plan.json`.
    Plan,
}

/// One file `build` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenFile {
    /// Where.
    pub path: PathBuf,
    /// What it is.
    pub kind: FileKind,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256 (hex) when [`BuildOptions::hash_files`] asked for it:
    /// reading a release back costs seconds per gigabyte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// What `build` did (`serde` gives the `--json` document:
/// docs/formats.md; fields in its order).
#[derive(Debug, Clone, Serialize)]
pub struct BuildReport {
    /// The document's version (1).
    pub schema: u32,
    /// Packages written, or only the plan checked.
    pub outcome: BuildOutcome,
    /// `DEST/dist`.
    pub dist_dir: PathBuf,
    /// Every file written.
    pub files: Vec<WrittenFile>,
    /// How many of them are packages.
    pub packages: usize,
    /// Their total size in bytes.
    pub total_size: u64,
    /// How long the build took, in seconds (millisecond precision).
    pub seconds: f64,
    /// With a shard: the shard and its manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// With [`BuildOptions::timings`]: where the time went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<BuildTimings>,
    /// The ELF-link check of what was written (not for a shard or a plan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elf_links: Option<ElfLinks>,
    /// Other checks of `verify` the packages written will fail because
    /// the build was asked to write them so (`--keep-absolute-search-paths`),
    /// in `verify`'s words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fails_verify: Vec<ForeseenFailure>,
}

impl BuildReport {
    fn new(
        outcome: BuildOutcome,
        dist_dir: PathBuf,
        files: Vec<WrittenFile>,
        started: Instant,
    ) -> Self {
        Self {
            schema: 1,
            outcome,
            dist_dir,
            packages: files.iter().filter(|f| f.kind != FileKind::Plan).count(),
            total_size: files.iter().map(|f| f.size).sum(),
            files,
            seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            shard: None,
            timings: None,
            elf_links: None,
            fails_verify: Vec::new(),
        }
    }
}

fn written_file(path: PathBuf, size: u64, hash: bool) -> Result<WrittenFile, IoError> {
    let name = path.to_string_lossy();
    let kind = if name.ends_with(".whl") {
        FileKind::Wheel
    } else if name.ends_with(".tar.gz") {
        FileKind::Sdist
    } else {
        FileKind::Plan
    };
    let sha256 = hash
        .then(|| {
            sha256_file(&path)
                .map(|digest| digest.hex())
                .map_err(cannot(IoAction::Read, &path))
        })
        .transpose()?;
    Ok(WrittenFile {
        path,
        kind,
        size,
        sha256,
    })
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    fs_helpers::atomic_write::write_atomic(path, bytes).map_err(cannot(IoAction::Write, path))
}

fn host_platform_tag() -> PlatformTag {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("windows", _) => "win_amd64".parse(),
        (os, arch) => format!("{os}_{arch}").parse(),
    }
    .expect("the host's OS and architecture names make a valid tag")
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::time::{Duration, UNIX_EPOCH};

    use std::sync::Arc;

    use fixtures::{ExampleMode, Layout};

    use super::{BuildOptions, NativePrograms, PlanOptions, Platform, Program};
    use crate::execute::{ExecuteOptions, execute};
    use crate::python;
    use crate::staging::Staging;

    /// A private copy of the example's kpack artifacts.
    fn example_copy() -> tempfile::TempDir {
        let copy = tempfile::tempdir().unwrap();
        let example = fixtures::shared().artifact_dir(ExampleMode::Kpack, Layout::Tree);
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", example.display()))
            .arg(copy.path())
            .status()
            .unwrap();
        assert!(status.success());
        copy
    }

    /// Plans the build of `artifacts`, lets `change` alter the tree, then
    /// executes the plan made before: what execution says.
    /// This library carries no rocm-sdk: a real static program, the
    /// launcher image, stands in for it (docs/testing.md).
    fn stand_in_programs() -> NativePrograms {
        let launcher =
            trampoline_gen::Launcher::for_target(trampoline_gen::Platform::LinuxX86_64, "rocm-sdk")
                .unwrap();
        NativePrograms::new().with_bytes(
            Platform::Linux,
            "the launcher image",
            launcher.into_bytes(),
        )
    }

    fn plan_change_execute(
        artifacts: &Path,
        change: impl FnOnce(),
    ) -> Result<(), crate::BuildError> {
        let dest = tempfile::tempdir().unwrap();
        let args = BuildOptions {
            plan: PlanOptions {
                artifact_dir: artifacts.to_owned(),
                native_programs: stand_in_programs(),
                ..PlanOptions::default()
            },
            dest_dir: dest.path().to_owned(),
            ..BuildOptions::default()
        };
        let dir = args.plan.open_artifacts().unwrap();
        let plan = args.plan.plan_from(&dir, Program::Required).unwrap();
        change();
        let options = ExecuteOptions {
            wheel: wheel_writer::WriteOptions::default(),
            devel: args.plan.devel_compression(),
            mtime: pypa_formats::epoch::member_mtime(None),
            progress: Arc::new(crate::progress::NoProgress),
            timings: false,
            pool: None,
        };
        let staging = Staging::create(&dest.path().join("dist"), None, None).unwrap();
        let result = execute(
            &plan,
            &python::sdist_files(),
            &options,
            staging,
            &crate::built_links::BuiltElves::default(),
        )
        .map(|_| ());
        if result.is_err() {
            let dist: Vec<_> = fs::read_dir(dest.path().join("dist")).map_or_else(
                |_| Vec::new(),
                |d| d.map(|e| e.unwrap().file_name()).collect(),
            );
            assert!(dist.is_empty(), "nothing is published: {dist:?}");
        }
        result
    }

    fn assert_names_changed(error: &crate::BuildError, file: &Path) {
        let text = fs_helpers::error_chain::Chain(error).to_string();
        let said = format!("{} changed after the build indexed it", file.display());
        assert!(text.contains(&said), "{text}");
    }

    #[test]
    fn a_source_that_changes_between_planning_and_reading_is_refused_naming_it() {
        // The HIP library's SONAME string rewritten in place (same length,
        // a new mtime) after the plan named the file from the old bytes;
        // a README replaced by another file of the same size and mtime.
        // Planning and execution are separate steps here, so the change
        // falls between them without any timing.
        let copy = example_copy();
        let lib = copy
            .path()
            .join("core-hip_lib_generic/core/clr/stage/lib/libamdhip64.so.7.1.0");
        let error = plan_change_execute(copy.path(), || {
            let mut bytes = fs::read(&lib).unwrap();
            let soname = b"libamdhip64.so.7\0";
            let at = bytes
                .windows(soname.len())
                .position(|w| w == soname)
                .unwrap();
            bytes[at..at + soname.len()].copy_from_slice(b"libamdhip64.so.9\0");
            fs::write(&lib, bytes).unwrap();
        })
        .unwrap_err();
        assert_names_changed(&error, &lib);

        let copy = example_copy();
        let readme = copy
            .path()
            .join("base_lib_generic/base/aux-overlay/stage/share/doc/rocm/README.txt");
        let error = plan_change_execute(copy.path(), || {
            let meta = fs::metadata(&readme).unwrap();
            let other = readme.with_extension("new");
            fs::write(&other, vec![b'x'; usize::try_from(meta.len()).unwrap()]).unwrap();
            fs::File::options()
                .write(true)
                .open(&other)
                .unwrap()
                .set_modified(UNIX_EPOCH + Duration::from_secs(fixtures::FIXED_MTIME))
                .unwrap();
            fs::rename(&other, &readme).unwrap();
        })
        .unwrap_err();
        assert_names_changed(&error, &readme);
    }

    #[test]
    fn an_unchanged_tree_planned_then_executed_builds() {
        let copy = example_copy();
        plan_change_execute(copy.path(), || {}).unwrap();
    }

    /// With `jobs` the build runs in a pool of its own: one of a single
    /// thread finishes, since the executor's lanes never wait inside it
    /// (`tests/thread_pool.rs` shows rayon's global pool is left alone).
    #[test]
    fn a_build_in_a_pool_of_one_thread_finishes() {
        let copy = example_copy();
        let dest = tempfile::tempdir().unwrap();
        let options = BuildOptions {
            plan: PlanOptions {
                artifact_dir: copy.path().to_owned(),
                native_programs: stand_in_programs(),
                ..PlanOptions::default()
            },
            dest_dir: dest.path().to_owned(),
            jobs: 1,
            ..BuildOptions::default()
        };
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(super::build(&options).map(|r| r.packages)));
        let packages = finished
            .recv_timeout(Duration::from_mins(10))
            .expect("a build with one thread finishes")
            .unwrap();
        assert!(packages > 0);
    }

    /// What a [`BuildProgress`](crate::BuildProgress) heard, in order
    /// (bytes summed).
    #[derive(Debug, Default)]
    struct Heard {
        events: std::sync::Mutex<Vec<String>>,
        bytes: std::sync::atomic::AtomicU64,
    }

    impl crate::BuildProgress for Heard {
        fn start(&self, packages: u64, input_bytes: u64) {
            self.events
                .lock()
                .unwrap()
                .push(format!("start {packages} {input_bytes}"));
        }

        fn package_started(&self, name: &str, _: u64) {
            self.events.lock().unwrap().push(format!("started {name}"));
        }

        fn bytes_read(&self, bytes: u64) {
            self.bytes
                .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        }

        fn package_written(&self, file: &str, _: u64) {
            self.events.lock().unwrap().push(format!("written {file}"));
        }

        fn finish(&self) {
            self.events.lock().unwrap().push("finish".to_owned());
        }
    }

    #[test]
    fn the_progress_hears_every_package_between_start_and_finish() {
        let copy = example_copy();
        let dest = tempfile::tempdir().unwrap();
        let options = BuildOptions {
            plan: PlanOptions {
                artifact_dir: copy.path().to_owned(),
                platform_tag: Some("linux_x86_64".parse().unwrap()),
                native_programs: stand_in_programs(),
                ..PlanOptions::default()
            },
            dest_dir: dest.path().to_owned(),
            ..BuildOptions::default()
        };
        let heard = Arc::new(Heard::default());
        let options = BuildOptions {
            progress: Some(heard.clone()),
            ..options
        };
        let report = super::build(&options).unwrap();
        let events = heard.events.lock().unwrap().clone();
        let packages = report.packages;
        assert_eq!(events.len(), 1 + 2 * packages + 1, "{events:#?}");
        assert!(
            events[0].starts_with(&format!("start {packages} ")),
            "{events:#?}"
        );
        assert_eq!(events.last().map(String::as_str), Some("finish"));
        for pair in events[1..events.len() - 1].chunks(2) {
            assert!(
                pair[0].starts_with("started ") && pair[1].starts_with("written "),
                "{pair:?}"
            );
        }
        assert!(
            events.contains(&"written rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl".to_owned()),
            "{events:#?}"
        );
        // The bytes read add up to the packages' input, each package's once
        // (packages are written at once; a member read twice counts once).
        let input: u64 = events[0].rsplit(' ').next().unwrap().parse().unwrap();
        assert!(input > 0);
        assert_eq!(
            heard.bytes.load(std::sync::atomic::Ordering::Relaxed),
            input
        );
    }

    /// Records the points a build reaches; fails at one of them if asked.
    #[derive(Debug, Default)]
    struct Points {
        reached: std::sync::Mutex<Vec<crate::BuildPoint>>,
        fail_at: Option<crate::BuildPoint>,
    }

    impl crate::BuildPause for Points {
        fn at(&self, point: crate::BuildPoint) -> std::io::Result<()> {
            self.reached.lock().unwrap().push(point);
            if self.fail_at == Some(point) {
                return Err(std::io::Error::other("held too long"));
            }
            Ok(())
        }
    }

    /// The caller's pause hears each point once, in order; one that fails
    /// before the swap fails the build and leaves the `dist/` of the
    /// build before as it was.
    #[test]
    fn a_build_pauses_at_each_point_and_a_failed_pause_publishes_nothing() {
        use crate::BuildPoint;
        let copy = example_copy();
        let dest = tempfile::tempdir().unwrap();
        let options = |pause: Arc<Points>| BuildOptions {
            plan: PlanOptions {
                artifact_dir: copy.path().to_owned(),
                native_programs: stand_in_programs(),
                ..PlanOptions::default()
            },
            dest_dir: dest.path().to_owned(),
            pause: Some(pause),
            ..BuildOptions::default()
        };
        let listing = || {
            let mut names: Vec<_> = fs::read_dir(dest.path().join("dist"))
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            names
        };

        let heard = Arc::new(Points::default());
        super::build(&options(heard.clone())).unwrap();
        assert_eq!(*heard.reached.lock().unwrap(), BuildPoint::ALL);
        let before = listing();
        assert!(!before.is_empty());

        let failing = Arc::new(Points {
            fail_at: Some(BuildPoint::BeforeSwap),
            ..Points::default()
        });
        let error = super::build(&options(failing.clone())).unwrap_err();
        let text = fs_helpers::error_chain::Chain(&error).to_string();
        assert!(text.contains("held too long"), "{text}");
        assert_eq!(
            *failing.reached.lock().unwrap(),
            [BuildPoint::FirstBytes, BuildPoint::BeforeSwap]
        );
        assert_eq!(listing(), before, "dist/ is the earlier build's");
    }
}
