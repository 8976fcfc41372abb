//! Writes a [`Plan`]: every source is read once and streamed through ELF
//! edits or launcher generation into the wheel writer; outputs are staged
//! and published into `--dest-dir/dist` at once when every package was
//! written (`staging.rs`).

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use artifacts::EntrySource;
use devel_tar::{DevelTarWriter, TarDigest, TarOptions, TreeNames};
use dist_info::package::PackageKind;
use dist_info::project_metadata::{ProjectMetadata, REQUIRES_PYTHON};
use elf_surgery::{Edit, ElfFile, SearchPathEdit};
use layout::{Action, DevelEntry, PackagePlan, Plan, PlannedFile, SourceRef};
use rayon::prelude::*;
use trampoline_gen::{Launcher, Platform};
use wheel_writer::{
    BytesSource, CompressionCache, CoreMetadata, FileSource, MemberSource, ReaderSource,
    SdistBuilder, WheelBuilder, WheelTag, WriteOptions,
};

use crate::built_links::{self, BuiltElves};
use crate::error::{BuildError, IoAction, IoError, PlanError, WriteError, cannot};
use crate::pause::{BuildPause, BuildPoint};
use crate::progress::BuildProgress;
use crate::python::SdistFile;
use crate::staging::Staging;
use crate::timings::{BuildTimings, PackageClock, Stopwatch};

/// What writing a package returns.
type Result<T, E = WriteError> = std::result::Result<T, E>;

/// How packages are written.
#[derive(Debug, Clone)]
pub(crate) struct ExecuteOptions {
    /// Wheel codec, threads and timestamp.
    pub(crate) wheel: WriteOptions,
    /// The devel tarball codec.
    pub(crate) devel: devel_tar::TarCodec,
    /// Timestamp for tar members (`SOURCE_DATE_EPOCH` or the zip epoch).
    pub(crate) mtime: u64,
    /// Who hears of each package as it is written (the binary's progress
    /// display).
    pub(crate) progress: Arc<dyn BuildProgress>,
    /// Measure packages and phases (`--timings`).
    pub(crate) timings: bool,
    /// The build's own thread pool (`None`: the calling thread's), where
    /// the members of a package are prepared in parallel.
    pub(crate) pool: Option<Arc<rayon::ThreadPool>>,
}

/// One written package.
#[derive(Debug)]
pub(crate) struct Written {
    /// Its final path.
    pub(crate) path: PathBuf,
    /// Its size in bytes.
    pub(crate) size: u64,
}

/// Writes every package and selector of `plan` into `staging`; on any
/// error nothing in `dest_dir/dist` changes.
/// With `options.timings`, also returns what each package and the commit
/// took.
/// The ELF facts of the runtime files written go to `elves`, for the
/// build's link check (`built_links.rs`).
pub(crate) fn execute(
    plan: &Plan,
    sdist_files: &[SdistFile],
    options: &ExecuteOptions,
    staging: Staging,
    elves: &BuiltElves,
) -> Result<(Vec<Written>, Option<BuildTimings>), BuildError> {
    let mut timings = options.timings.then(BuildTimings::default);
    let packages_clock = Stopwatch::start();
    let cache = CompressionCache::new();
    let stop = Arc::new(AtomicUsize::new(usize::MAX));
    let first_bytes = Arc::new(FirstBytes {
        pause: staging.pause(),
        once: std::sync::Once::new(),
    });
    let mut staged = Vec::new();
    let inputs: Vec<u64> = plan.packages.iter().map(input_bytes).collect();
    let progress = &options.progress;
    progress.start(
        (plan.packages.len() + plan.selectors.len()) as u64,
        inputs.iter().sum(),
    );
    // Several packages are written at once on one compression pool, the
    // largest first (docs/performance.md, "Packages at once").
    let lanes = lanes(options.wheel.effective_jobs(), plan.packages.len());
    let pool = wheel_writer::WorkerPool::new(&options.wheel, lanes)
        .map_err(WriteError::CompressionThreads)?;
    let shared = ExecuteOptions {
        wheel: options.wheel.clone().with_pool(pool),
        ..options.clone()
    };
    let order = largest_first(&inputs);
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, Result<Done>)>();
    let outcome = std::thread::scope(|threads| {
        for _ in 0..lanes {
            let done_tx = done_tx.clone();
            let (order, next, stop, shared, cache) = (&order, &next, &stop, &shared, &cache);
            let packages_clock = &packages_clock;
            let (staging, first_bytes, progress) = (&staging, &first_bytes, &progress);
            let inputs = &inputs;
            threads.spawn(move || {
                while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    // A package after one that failed is not written: its
                    // error could not be the one reported.
                    let result = if stop.load(Ordering::Acquire) < index {
                        Err(WriteError::EarlierPackageFailed)
                    } else {
                        let package = &plan.packages[index];
                        let counter = Counter {
                            progress: Arc::clone(progress),
                            first: Arc::clone(first_bytes),
                            index,
                            stop: Arc::clone(stop),
                            input: inputs[index],
                            credited: Arc::new(AtomicU64::new(0)),
                        };
                        let started = packages_clock.read().0;
                        let result = write_package(
                            plan, package, staging, shared, cache, elves, &counter, started,
                        );
                        if result.is_err() {
                            stop.fetch_min(index, Ordering::AcqRel);
                        }
                        result
                    };
                    if done_tx.send((index, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        // Reported in plan order, whatever order they finish in; the
        // first failure in plan order is the error.
        let mut finished = BTreeMap::new();
        let mut shown = 0;
        if let Some(package) = plan.packages.first() {
            progress.package_started(&package.dist_name, inputs[0]);
        }
        for (index, result) in done_rx {
            finished.insert(index, result);
            while let Some(result) = finished.remove(&shown) {
                let package = &plan.packages[shown];
                let done = result?;
                if let Some(timings) = timings.as_mut() {
                    timings.package(
                        &package.dist_name,
                        &file_name(&done.path),
                        done.start,
                        (
                            done.wall,
                            done.phases
                                .as_ref()
                                .map_or(Duration::ZERO, PackageClock::cpu),
                        ),
                        done.phases.as_ref(),
                    );
                }
                progress.package_written(&shown_name(&package.subdir, &done.path), done.size);
                staged.push(done.path);
                shown += 1;
                if let Some(package) = plan.packages.get(shown) {
                    progress.package_started(&package.dist_name, inputs[shown]);
                }
            }
        }
        Ok::<_, BuildError>(())
    });
    outcome?;
    for selector in &plan.selectors {
        progress.package_started("rocm (sdist)", 0);
        let start = packages_clock.read().0;
        let clock = Stopwatch::start();
        let dir = staging.dir(&selector.subdir)?;
        let path = write_sdist(
            &plan.version,
            &plan.metadata,
            &selector.dist_info_json,
            sdist_files,
            &dir,
            &options.wheel,
        )?;
        if let Some(timings) = timings.as_mut() {
            timings.package("rocm", &file_name(&path), start, clock.read(), None);
        }
        progress.package_written(&shown_name(&selector.subdir, &path), size_of(&path)?);
        staged.push(path);
    }
    progress.finish();
    if let Some(timings) = timings.as_mut() {
        timings.step("packages", &packages_clock);
    }
    let clock = Stopwatch::start();
    let written = staging
        .commit(&staged)?
        .into_iter()
        .map(|path| {
            let size = size_of(&path)?;
            Ok(Written { path, size })
        })
        .collect::<Result<_, BuildError>>()?;
    if let Some(timings) = timings.as_mut() {
        timings.step("commit", &clock);
    }
    Ok((written, timings))
}

/// A package written: its staged file, size, start (from the packages
/// step's), wall time and phases.
struct Done {
    path: PathBuf,
    size: u64,
    start: Duration,
    wall: Duration,
    phases: Option<PackageClock>,
}

/// Writes one package (on a lane's thread).
#[allow(clippy::too_many_arguments)] // one call site; each argument is a concern
fn write_package(
    plan: &Plan,
    package: &PackagePlan,
    staging: &Staging,
    options: &ExecuteOptions,
    cache: &CompressionCache,
    elves: &BuiltElves,
    counter: &Counter,
    start: Duration,
) -> Result<Done> {
    let index = counter.index;
    tracing::debug!(
        "writing {}: {} files, {} devel entries",
        package.dist_name,
        package.files.len(),
        package.devel_tree.len()
    );
    let clock = Stopwatch::start();
    let phases = options.timings.then(PackageClock::default);
    let dir = staging.dir(&package.subdir)?;
    // Packages written at once may share a name (a legacy release's devel
    // package of each family): each has a scratch directory of its own.
    let scratch = staging.scratch().join(format!("package-{index}"));
    fs::create_dir_all(&scratch).map_err(cannot(IoAction::Create, &scratch))?;
    let path = write_wheel(
        plan,
        package,
        &dir,
        &scratch,
        options,
        cache,
        phases.as_ref(),
        built_links::is_checked(package.kind).then_some(elves),
        counter,
    )?;
    counter.finish();
    Ok(Done {
        size: size_of(&path)?,
        path,
        start,
        wall: clock.read().0,
        phases,
    })
}

/// How many packages are written at once with `jobs` threads: enough
/// that one package's sequential part (reading and hashing a large member,
/// writing the devel tarball, the last chunks) overlaps another's
/// compression; each package's reader feeds several threads.
fn lanes(jobs: usize, packages: usize) -> usize {
    (2 + jobs / 8).min(packages).max(1)
}

/// Package indices, the most input first (ties in plan order): a large
/// package started last would leave cores idle at the end.
fn largest_first(inputs: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by_key(|&index| std::cmp::Reverse(inputs[index]));
    order
}

fn size_of(path: &Path) -> Result<u64, IoError> {
    Ok(fs::metadata(path)
        .map_err(cannot(IoAction::Read, path))?
        .len())
}

/// A written file as progress shows it: below its folder in `dist/` (the
/// family of a legacy build), so same-named packages are told apart.
fn shown_name(subdir: &str, path: &Path) -> String {
    let name = file_name(path);
    let subdir = subdir.trim_matches('/');
    if subdir.is_empty() {
        name
    } else {
        format!("{subdir}/{name}")
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The bytes a package reads from the artifacts (the progress display's
/// measure of work: a package of large libraries takes longer).
fn input_bytes(package: &PackagePlan) -> u64 {
    let source_size = |action: &Action| match action {
        Action::Copy { source } | Action::PatchSearchPath { source, .. } => source.size,
        Action::Generated { bytes, .. } => bytes.len() as u64,
        Action::Launcher { .. } | Action::DevelTar | Action::DevelDigest => 0,
    };
    let files: u64 = package.files.iter().map(|f| source_size(&f.action)).sum();
    let devel: u64 = package
        .devel_tree
        .iter()
        .map(|entry| match entry {
            DevelEntry::File { source, .. } => source.size,
            DevelEntry::Generated { bytes, .. } => bytes.len() as u64,
            DevelEntry::Dir { .. } | DevelEntry::Symlink { .. } => 0,
        })
        .sum();
    files + devel
}

#[allow(clippy::too_many_arguments)] // one call site; each argument is a concern
fn write_wheel(
    plan: &Plan,
    package: &PackagePlan,
    dir: &Path,
    scratch: &Path,
    options: &ExecuteOptions,
    cache: &CompressionCache,
    clock: Option<&PackageClock>,
    elves: Option<&BuiltElves>,
    counter: &Counter,
) -> Result<PathBuf> {
    let mut metadata = core_metadata(
        &plan.version,
        &plan.metadata,
        &package.dist_name,
        package.summary.clone(),
    );
    metadata.requires_dist.clone_from(&package.requires);
    let tag = WheelTag::py3_none(&plan.platform_tag)?;
    let mut wheel = WheelBuilder::new(metadata, tag)?.with_root_is_purelib(false);
    let source = |file: &PlannedFile| {
        Ok((
            file.dest.clone(),
            member_source(plan, package, file, scratch, options, clock, elves)?,
        ))
    };
    // The devel tarball's digest is computed from the written tarball.
    let (digests, files): (Vec<&PlannedFile>, Vec<&PlannedFile>) = package
        .files
        .iter()
        .partition(|f| matches!(f.action, Action::DevelDigest));
    let prepare = || {
        files
            .into_par_iter()
            .map(source)
            .collect::<Result<Vec<_>>>()
    };
    let mut sources: Vec<(String, Arc<dyn MemberSource>)> = match &options.pool {
        Some(pool) => pool.install(prepare)?,
        None => prepare()?,
    };
    for file in digests {
        sources.push(source(file)?);
    }
    sources.sort_by(|(a, _), (b, _)| a.cmp(b));
    for (dest, source) in sources {
        let source: Arc<dyn MemberSource> = Arc::new(Counted {
            inner: source,
            counter: counter.clone(),
        });
        wheel.add_file(&dest, source)?;
    }
    for (name, object) in &package.console_scripts {
        wheel.add_console_script(name, object)?;
    }
    let written = wheel
        .write_timed(dir, &options.wheel, Some(cache), clock.map(|c| &c.write))
        .map_err(|source| WriteError::WriteWheel {
            package: package.dist_name.clone(),
            source,
        })?;
    // The progress line names it where it lands; this is the staged path.
    tracing::debug!("wrote {}", written.path.display());
    Ok(written.path)
}

/// The descriptive fields every package shares (docs/dist-info.md); the
/// `rocm` sdist's build backend copies them into the wheel it builds.
fn core_metadata(
    version: &str,
    project: &ProjectMetadata,
    name: &str,
    summary: String,
) -> CoreMetadata {
    let mut metadata = CoreMetadata::new(name, version);
    metadata.summary = Some(summary);
    metadata.license_expression = Some(project.license_expression.clone());
    metadata.project_urls.clone_from(&project.project_urls);
    metadata.requires_python = Some(REQUIRES_PYTHON.to_owned());
    metadata
}

/// The bytes of one wheel member (the devel tarball is written into
/// `scratch` first); with `elves`, the ELF facts of the member too.
fn member_source(
    plan: &Plan,
    package: &PackagePlan,
    file: &PlannedFile,
    scratch: &Path,
    options: &ExecuteOptions,
    clock: Option<&PackageClock>,
    elves: Option<&BuiltElves>,
) -> Result<Arc<dyn MemberSource>> {
    let exec = file.executable;
    Ok(match &file.action {
        Action::Copy { source } => {
            if let Some(elves) = elves
                && let Some(elf) = copied_elf(source)?
            {
                elves.record(&file.dest, elf);
            }
            copy_source(source, exec)
        }
        Action::PatchSearchPath { source, patch } => {
            let request = patch.edit();
            let _span = clock.map(|c| c.elf_edit.span());
            // The edit's own log lines (`-vv`) name the file through this span.
            let (member, edited) = tracing::debug_span!("edit", file = %file.dest)
                .in_scope(|| edited_source(source, &request, exec))?;
            if let Some(elves) = elves {
                elves.record(&file.dest, edited);
            }
            member
        }
        Action::Launcher { target } => {
            let platform = Platform::from_wheel_tag(&plan.platform_tag)
                .map_err(WriteError::LauncherPlatform)?;
            let launcher =
                Launcher::for_target(platform, target).map_err(|source| WriteError::Launcher {
                    dest: file.dest.clone(),
                    source,
                })?;
            Arc::new(BytesSource::new(
                launcher.into_bytes(),
                true,
                file.dest.clone(),
            ))
        }
        Action::Generated { bytes, what } => {
            // Runtime aliases are ELF the build writes: checked like the rest
            // (parsed from memory, no file read).
            if let Some(elves) = elves
                && bytes.starts_with(b"\x7fELF")
            {
                let elf = ElfFile::parse(&mut std::io::Cursor::new(bytes)).map_err(|source| {
                    WriteError::GeneratedElf {
                        dest: file.dest.clone(),
                        what: what.clone(),
                        source,
                    }
                })?;
                elves.record(&file.dest, elf);
            }
            Arc::new(BytesSource::new(bytes.clone(), exec, what.clone()))
        }
        Action::DevelDigest => {
            let tar = devel_tar_path(package, scratch, options);
            let digest = fs::File::open(&tar)
                .and_then(|f| {
                    TarDigest::of_reader(options.devel.file_name(), io::BufReader::new(f))
                })
                .map_err(cannot(IoAction::Read, &tar))?;
            Arc::new(BytesSource::new(
                digest.to_bytes(),
                false,
                "the devel tarball's digest file".to_owned(),
            ))
        }
        Action::DevelTar => {
            let names = TreeNames::new(&plan.nonce);
            let mut span = clock.map(|c| c.devel_tar.span());
            let path = write_devel_tar(package, names, scratch, options)?;
            if let Some(span) = span.as_mut() {
                span.add_bytes(size_of(&path)?);
            }
            drop(span);
            Arc::new(
                FileSource::new(&path).map_err(|source| WriteError::DevelTarball {
                    path: path.clone(),
                    source,
                })?,
            )
        }
    })
}

/// A source copied as it is; every open checks it is still the file the
/// plan was made from (docs/pipeline.md, "Sources that change").
fn copy_source(source: &SourceRef, executable: bool) -> Arc<dyn MemberSource> {
    let entry = source.source.clone();
    // The reader's errors name the file on disk or the archive.
    let origin = format!("{} ({})", source.relpath, source.artifact);
    Arc::new(ReaderSource::new(
        move || entry.open().map_err(io::Error::other),
        source.size,
        executable,
        origin,
    ))
}

/// A source with its search path edited while streaming (archive members,
/// which cannot seek, are edited in memory), and the edited file's ELF
/// facts.
fn edited_source(
    source: &SourceRef,
    request: &SearchPathEdit,
    executable: bool,
) -> Result<(Arc<dyn MemberSource>, ElfFile)> {
    let origin = format!("{} ({})", source.relpath, source.artifact);
    match &source.source {
        file @ EntrySource::File { path, .. } => {
            let mut opened = file.open_file()?.expect("a file source opens as a file");
            let (edit, edited) = plan_edit(&mut opened, request).map_err(|e| e.at(path))?;
            let size = edit.output_len();
            let file = file.clone();
            let edit = Arc::new(edit);
            let member = ReaderSource::new(
                move || {
                    let opened = file
                        .open_file()
                        .map_err(io::Error::other)?
                        .expect("a file source opens as a file");
                    edit.reader(opened).map_err(io::Error::other)
                },
                size,
                executable,
                origin,
            );
            Ok((Arc::new(member), edited))
        }
        archive @ EntrySource::ArchiveMember { .. } => {
            let bytes = archive.read_to_vec()?;
            let (edit, edited) = plan_edit(&mut Cursor::new(&bytes), request)
                .map_err(|e| e.at(Path::new(&origin)))?;
            let mut out = Vec::with_capacity(usize::try_from(edit.output_len()).unwrap_or(0));
            edit.reader(Cursor::new(&bytes))?
                .read_to_end(&mut out)
                .map_err(WriteError::Source)?;
            Ok((Arc::new(BytesSource::new(out, executable, origin)), edited))
        }
    }
}

/// The edit of `source` and the edited file's facts; the error names no
/// file yet (the caller's `at` names it once).
fn plan_edit<R: Read + io::Seek>(
    source: &mut R,
    request: &SearchPathEdit,
) -> elf_surgery::Result<(Edit, ElfFile)> {
    ElfFile::parse(source)?.plan_edit_with_result(source, request)
}

/// The ELF facts of a file copied unchanged (a static executable, device
/// code, a foreign machine's library), `None` when it is not ELF. Only the
/// headers and dynamic tables are read; an archive member's bytes were
/// extracted to disk when the artifacts were indexed, else it is skipped.
fn copied_elf(source: &SourceRef) -> Result<Option<ElfFile>> {
    let EntrySource::File { path, .. } = &source.source else {
        return Ok(None);
    };
    let mut file = fs::File::open(path).map_err(cannot(IoAction::Read, path))?;
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || magic != *b"\x7fELF" {
        return Ok(None);
    }
    // Every ELF file parsed when the artifacts were classified; one that no
    // longer does has changed since, and the wheel writer reports that.
    Ok(ElfFile::open(path).ok())
}

/// Streams the devel tree into `{dir}/_devel.tar*`, every member under
/// the tree `names` gives (host ELF files with the search-path edit the
/// plan gives them).
fn write_devel_tar(
    package: &PackagePlan,
    names: TreeNames,
    dir: &Path,
    options: &ExecuteOptions,
) -> Result<PathBuf> {
    let path = devel_tar_path(package, dir, options);
    let tar_options = TarOptions {
        compression: options.devel,
        mtime: options.mtime,
        names,
    };
    let mut tar = DevelTarWriter::create(&path, &tar_options)?;
    for entry in &package.devel_tree {
        match entry {
            DevelEntry::Dir { relpath } => tar.add_directory(relpath)?,
            DevelEntry::Symlink {
                relpath, target, ..
            } => tar.add_symlink(relpath, target)?,
            DevelEntry::Generated { relpath, bytes, .. } => {
                let size = u64::try_from(bytes.len()).expect("generated files fit in u64");
                tar.add_file(relpath, 0o644, size, &mut bytes.as_slice())?;
            }
            DevelEntry::File {
                relpath,
                patch,
                source,
            } => {
                let member: Arc<dyn MemberSource> = match patch {
                    Some(patch) => edited_source(source, &patch.edit(), false)?.0,
                    None => copy_source(source, false),
                };
                let mut reader = member.open().map_err(WriteError::Source)?;
                tar.add_file(relpath, source.mode, member.size(), &mut reader)?;
            }
        }
    }
    tar.finish()?.persist()?;
    Ok(path)
}

/// Where [`write_devel_tar`] writes the devel tarball of `package` in `dir`.
fn devel_tar_path(package: &PackagePlan, dir: &Path, options: &ExecuteOptions) -> PathBuf {
    dir.join(format!(
        "{}-{}",
        package.dist_name,
        options.devel.file_name()
    ))
}

/// Writes the `rocm` selector sdist of `version` carrying `dist_info_json`
/// into `dir` (also used by `assemble`, which writes it once per release).
pub(crate) fn write_sdist(
    version: &str,
    project: &ProjectMetadata,
    dist_info_json: &[u8],
    files: &[SdistFile],
    dir: &Path,
    options: &WriteOptions,
) -> Result<PathBuf> {
    let summary = project.summary(PackageKind::Meta, None);
    let mut metadata = core_metadata(version, project, "rocm", summary);
    metadata.dynamic = vec!["Requires-Dist".into(), "Provides-Extra".into()];
    let mut sdist = SdistBuilder::new(metadata)?;
    for file in files {
        sdist.add_file(
            &file.path,
            Arc::new(BytesSource::new(
                file.bytes.to_vec(),
                file.executable,
                file.path.clone(),
            )),
        )?;
    }
    sdist.add_file(
        "rocm_sdk/_dist_info.json",
        Arc::new(BytesSource::new(
            dist_info_json.to_vec(),
            false,
            "_dist_info.json",
        )),
    )?;
    let written = sdist.write(dir, options)?;
    // The progress line names it where it lands; this is the staged path.
    tracing::debug!("wrote {}", written.path.display());
    Ok(written.path)
}

/// Fails when two packages of a plan would have the same file name.
pub(crate) fn check_unique_outputs(plan: &Plan) -> Result<(), PlanError> {
    let mut seen = std::collections::BTreeSet::new();
    for p in &plan.packages {
        if !seen.insert((p.subdir.clone(), p.dist_name.clone())) {
            return Err(PlanError::DuplicatePackage {
                name: p.dist_name.clone(),
                subdir: p.subdir.clone(),
            });
        }
    }
    Ok(())
}

/// A member whose bytes are credited to the progress display as the
/// writer reads them, so the display moves while a large package is
/// written rather than when it is done.
#[derive(Debug)]
struct Counted {
    inner: Arc<dyn MemberSource>,
    counter: Counter,
}

/// Who hears of the bytes one package reads, and the test hook that
/// holds the build right after its first bytes were credited
/// (docs/pipeline.md). Packages are written at once, so each credits its
/// own bytes, never more than its input (a member read twice, for the
/// compression cache and to compress it, counts once), and the rest of
/// its input when it is written.
#[derive(Debug, Clone)]
struct Counter {
    progress: Arc<dyn BuildProgress>,
    first: Arc<FirstBytes>,
    /// The package's index in the plan.
    index: usize,
    /// The lowest index of a package that failed: a later package stops.
    stop: Arc<AtomicUsize>,
    /// The package's input bytes ([`input_bytes`]).
    input: u64,
    /// How many of them were credited so far.
    credited: Arc<AtomicU64>,
}

/// The caller's pause at [`BuildPoint::FirstBytes`], called once.
#[derive(Debug)]
struct FirstBytes {
    pause: Option<Arc<dyn BuildPause>>,
    once: std::sync::Once,
}

impl Counter {
    fn add(&self, bytes: u64) {
        let before = self
            .credited
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |done| {
                Some((done + bytes).min(self.input))
            })
            .unwrap_or_else(|done| done);
        let step = (before + bytes).min(self.input) - before;
        if step > 0 {
            self.progress.bytes_read(step);
        }
        if bytes > 0
            && let Some(pause) = &self.first.pause
        {
            // A pause that fails here only lets the build go on.
            self.first.once.call_once(|| {
                let _ = pause.at(BuildPoint::FirstBytes);
            });
        }
    }

    /// Credits what the package's input holds beyond what its reads
    /// credited (launchers, members taken from the cache).
    fn finish(&self) {
        let before = self.credited.swap(self.input, Ordering::AcqRel);
        if self.input > before {
            self.progress.bytes_read(self.input - before);
        }
    }
}

impl MemberSource for Counted {
    fn size(&self) -> u64 {
        self.inner.size()
    }

    fn executable(&self) -> bool {
        self.inner.executable()
    }

    fn open(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        Ok(Box::new(CountingReader {
            inner: self.inner.open()?,
            counter: &self.counter,
        }))
    }

    fn origin(&self) -> String {
        self.inner.origin()
    }
}

struct CountingReader<'a> {
    inner: Box<dyn Read + Send + 'a>,
    counter: &'a Counter,
}

impl Read for CountingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.counter.stop.load(Ordering::Relaxed) < self.counter.index {
            return Err(io::Error::other("stopped: an earlier package failed"));
        }
        let n = self.inner.read(buf)?;
        self.counter.add(n as u64);
        Ok(n)
    }
}
