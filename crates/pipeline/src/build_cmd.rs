//! `therock-package build` and `plan`: flags → plan → packages.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use artifacts::{ArtifactDir, ArtifactFilter};
use dist_info::console_scripts::all_console_scripts;
use dist_info::project_metadata::ProjectMetadata;
use dist_info::requirement::Platform;
use layout::{Plan, PlanInput};
use pypa_formats::filename::PlatformTag;
use serde::Serialize;
use wheel_writer::{Compression, MAX_JOBS_PER_CORE, WriteOptions};

use crate::built_links::{self, BuiltElves};
use crate::error::{Error, ErrorKind, IoAction, Result};
use crate::execute::{ExecuteOptions, check_unique_outputs, execute};
use crate::foreseen::{self, ForeseenFailure};
use crate::native::NativePrograms;
use crate::progress::BuildProgress;
use crate::python::{self, Program};
use crate::shard::{ShardId, ShardManifest, ShardPlan, ShardSettings};
use crate::staging::{Staging, StagingCleanup};
use crate::timings::{BuildTimings, Stopwatch};
use fs_helpers::file_hash::sha256_file;
use release_check::ElfLinks;

/// Test hook: a directory of FIFOs named for points of the commit
/// (`before-swap`, `after-swap`) where the build waits (docs/pipeline.md).
const COMMIT_GATE_ENV: &str = "THEROCK_PACKAGE_TEST_COMMIT_GATE";

/// The platform tag of a plan whose options name none (docs/pipeline.md).
pub const PLATFORM_TAG_ENV: &str = "ROCM_SDK_WHEEL_PLATFORM_TAG";

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
    pub version: Option<String>,
    /// Nonce appended to platform package directory names (`""`: none).
    pub version_suffix: String,
    /// Families the Linux release offers (`,` or `;` separated; empty:
    /// none); `None`: every target of the artifacts.
    pub linux_amdgpu_families: Option<String>,
    /// Families the Windows release offers.
    pub windows_amdgpu_families: Option<String>,
    /// Wheel platform tag; `None`: `ROCM_SDK_WHEEL_PLATFORM_TAG`
    /// ([`PLATFORM_TAG_ENV`]), else the host's.
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
    /// Threads for extracting and compressing (0: one per core; at most
    /// four per core).
    pub jobs: usize,
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
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            plan: PlanOptions::default(),
            dest_dir: PathBuf::new(),
            build_packages: true,
            wheel_compression: Compression::default(),
            jobs: 0,
            shard: None,
            hash_files: false,
            timings: false,
            cleanup: None,
        }
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

impl PlanOptions {
    /// The devel codec.
    fn devel_compression(&self) -> devel_tar::TarCodec {
        self.devel_compression.codec()
    }

    /// The tag of the option, else of [`PLATFORM_TAG_ENV`] (unset or
    /// empty: none), else the host's.
    fn platform_tag(&self) -> Result<PlatformTag> {
        if let Some(tag) = &self.platform_tag {
            return Ok(tag.clone());
        }
        match std::env::var(PLATFORM_TAG_ENV) {
            Ok(text) if !text.is_empty() => {
                let tag = text
                    .parse()
                    .map_err(|source| ErrorKind::PlatformTagVariable {
                        variable: PLATFORM_TAG_ENV,
                        source,
                    })?;
                Ok(tag)
            }
            _ => Ok(host_platform_tag()),
        }
    }

    /// The metadata of `--metadata`, `--license-expression` and
    /// `--project-url` over the defaults.
    pub(crate) fn project_metadata(&self) -> Result<ProjectMetadata> {
        let mut metadata = match &self.metadata {
            None => ProjectMetadata::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| {
                    ErrorKind::ReadMetadataFile {
                        path: path.clone(),
                        source,
                    }
                })?;
                ProjectMetadata::from_toml(&text).map_err(|source| ErrorKind::BadMetadataFile {
                    path: path.clone(),
                    source,
                })?
            }
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
    fn plan(&self, program: Program) -> Result<Plan> {
        self.plan_from(&self.open_artifacts()?, program)
    }

    /// Discovers and indexes the artifacts (the reader logs what it skipped).
    fn open_artifacts(&self) -> Result<ArtifactDir> {
        Ok(ArtifactDir::open(&self.artifact_dir)?)
    }

    /// Discovers and indexes the artifacts, extracting the file members of
    /// archives below `into` on the way (a build reads each member at its
    /// own time).
    fn open_artifacts_extracting(&self, into: &Path) -> Result<ArtifactDir> {
        Ok(ArtifactDir::open_extracting(
            &self.artifact_dir,
            &ArtifactFilter::new(),
            into,
        )?)
    }

    /// Makes the plan from indexed artifacts.
    fn plan_from(&self, dir: &ArtifactDir, program: Program) -> Result<Plan> {
        let manifest = dir.therock_manifest()?;
        let version = dist_info::release_version::choose_version(
            manifest.version.as_deref(),
            self.version.as_deref(),
        )?;
        let tag = self.platform_tag()?;
        let platform_tag = tag.as_str();
        let platform = if Platform::is_windows_tag(platform_tag) {
            Platform::Windows
        } else {
            Platform::Linux
        };
        let mut input = PlanInput::new(dir, &version.version.to_string(), platform_tag);
        input.nonce = self
            .version_suffix
            .parse()
            .map_err(|source| ErrorKind::VersionSuffix { source })?;
        input.linux_families.clone_from(&self.linux_amdgpu_families);
        input
            .windows_families
            .clone_from(&self.windows_amdgpu_families);
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
pub fn plan(args: &PlanOptions, shards: Option<usize>) -> Result<PlanReport> {
    // The shards' digest covers the program's bytes; a plain plan shows
    // nothing of them.
    let program = if shards.is_some() {
        Program::Required
    } else {
        Program::Listed
    };
    let plan = args.plan(program)?;
    if let Some(count) = shards {
        let shards = ShardPlan::new(&plan, count)?;
        return Ok(PlanReport::Shards { plan, shards });
    }
    Ok(PlanReport::Plan(plan))
}

/// `therock-package build`: the packages of the set into `DEST/dist`,
/// published at once when all are written; `progress` hears of each
/// package as it is written ([`NoProgress`](crate::NoProgress): nothing).
pub fn build(args: &BuildOptions, progress: Arc<dyn BuildProgress>) -> Result<BuildReport> {
    check_destination(&args.plan.artifact_dir, &args.dest_dir)?;
    let started = Instant::now();
    let whole = Stopwatch::start();
    let mut timings = args.timings.then(BuildTimings::default);
    let mut step = Stopwatch::start();
    let compression = args.wheel_compression;
    if !args.build_packages {
        let plan = args.plan.plan(Program::Listed)?;
        std::fs::create_dir_all(&args.dest_dir)
            .map_err(Error::io(IoAction::Create, &args.dest_dir))?;
        let path = args.dest_dir.join("plan.json");
        write_atomically(&path, plan.to_json().as_bytes())?;
        let size = std::fs::metadata(&path)
            .map_err(Error::io(IoAction::Read, &path))?
            .len();
        return Ok(BuildReport::new(
            BuildOutcome::PlanValidated,
            args.dest_dir.join("dist"),
            vec![written_file(path, size, args.hash_files)?],
            started,
        ));
    }
    // `--jobs` bounds every pool of the build, so it is set before the
    // first parallel step (indexing and extracting the artifacts); the
    // wheel writer sizes its own compression pools the same way.
    let jobs = WriteOptions::default()
        .with_jobs(args.jobs)
        .effective_jobs();
    if args.jobs > jobs {
        tracing::warn!(
            "--jobs {} is more than {MAX_JOBS_PER_CORE} threads per core; using {jobs}",
            args.jobs
        );
    }
    tracing::info!(
        "using {jobs} {}",
        if jobs == 1 { "thread" } else { "threads" }
    );
    if args.jobs > 0 {
        // Ignore the error when a pool already exists (tests call build twice).
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build_global();
    }
    let commit_gates = std::env::var_os(COMMIT_GATE_ENV).map(PathBuf::from);
    // Creates `dist/` (and the destination) if needed.
    let staging = Staging::create(
        &args.dest_dir.join("dist"),
        commit_gates,
        args.cleanup.as_ref(),
    )?;
    // Archives are read once, extracted into the staging directory while
    // they are indexed (docs/artifacts.md).
    let dir = args.plan.open_artifacts_extracting(&staging.extracted())?;
    if dir.has_archives()
        && let Some(timings) = timings.as_mut()
    {
        timings.step("extract", &step);
        step = Stopwatch::start();
    }
    let plan = args.plan.plan_from(&dir, Program::Required)?;
    if let Some(timings) = timings.as_mut() {
        timings.step("plan", &step);
    }
    let shard = args
        .shard
        .map(|id| Ok::<_, Error>((id, ShardPlan::new(&plan, id.count)?)))
        .transpose()?;
    let epoch = source_date_epoch()?;
    let wheel = WriteOptions::default()
        .with_compression(compression)
        .with_jobs(args.jobs)
        .with_source_date_epoch(epoch);
    let options = ExecuteOptions {
        wheel,
        devel: args.plan.devel_compression(),
        mtime: pypa_formats::epoch::member_mtime(epoch),
        progress,
        timings: args.timings,
    };
    let elves = BuiltElves::default();
    let (written, executed) = match &shard {
        Some((id, shards)) => execute(
            &shards.select(&plan, *id),
            &python::sdist_files(),
            &options,
            staging,
            &elves,
        )?,
        None => execute(&plan, &python::sdist_files(), &options, staging, &elves)?,
    };
    // A shard's wheels link against other shards' files: `assemble`
    // verifies the whole release instead.
    let elf_links = shard.is_none().then(|| built_links::check(&plan, elves));
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
                linux_families: args.plan.linux_amdgpu_families.clone(),
                windows_families: args.plan.windows_amdgpu_families.clone(),
                source_date_epoch: epoch,
                compression,
            };
            let dist = args.dest_dir.join("dist");
            let dist = std::fs::canonicalize(&dist).map_err(Error::io(IoAction::Resolve, dist))?;
            let path = ShardManifest::new(&plan, shards, *id, &settings, &dist, &written)?
                .write(&args.dest_dir)?;
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
        .map(|w| written_file(w.path, w.size, args.hash_files))
        .collect::<Result<_>>()?;
    if let Some(timings) = timings.as_mut() {
        if args.hash_files {
            timings.step("hash", &step);
        }
        timings.finish(&whole);
    }
    let mut report = BuildReport::new(
        BuildOutcome::Built,
        args.dest_dir.join("dist"),
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
fn check_destination(artifact_dir: &Path, dest_dir: &Path) -> Result<()> {
    // A missing artifact directory is reported by the artifact reader.
    let Ok(artifacts) = std::fs::canonicalize(artifact_dir) else {
        return Ok(());
    };
    let dest = real_path(dest_dir)?;
    if dest.starts_with(&artifacts) {
        return Err(ErrorKind::DestinationInsideArtifacts {
            dest_dir: dest_dir.to_owned(),
            artifact_dir: artifact_dir.to_owned(),
            real: dest,
        }
        .into());
    }
    if artifacts.starts_with(&dest) {
        return Err(ErrorKind::ArtifactsInsideDestination {
            artifact_dir: artifact_dir.to_owned(),
            dest_dir: dest_dir.to_owned(),
            real: artifacts,
        }
        .into());
    }
    Ok(())
}

/// `path` with every link resolved, when parts of it do not exist yet:
/// the real path of its deepest existing ancestor joined with the rest
/// (`..` in the rest applied lexically, as creating it would).
fn real_path(path: &Path) -> Result<PathBuf> {
    use std::path::Component;
    let absolute = std::path::absolute(path).map_err(Error::io(IoAction::Resolve, path))?;
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

fn written_file(path: PathBuf, size: u64, hash: bool) -> Result<WrittenFile> {
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
                .map_err(Error::io(IoAction::Read, &path))
        })
        .transpose()?;
    Ok(WrittenFile {
        path,
        kind,
        size,
        sha256,
    })
}

pub(crate) fn source_date_epoch() -> Result<Option<u64>> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|source| ErrorKind::SourceDateEpoch { value: v, source }.into()),
        _ => Ok(None),
    }
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    fs_helpers::atomic_write::write_atomic(path, bytes).map_err(Error::io(IoAction::Write, path))
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

    fn plan_change_execute(artifacts: &Path, change: impl FnOnce()) -> crate::Result<()> {
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
            progress: Arc::new(crate::NoProgress),
            timings: false,
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

    fn assert_names_changed(error: &crate::Error, file: &Path) {
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
        let report = super::build(&options, heard.clone()).unwrap();
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
}
