//! Install side: expanding `rocm_sdk_devel/_devel.tar*` into
//! `SP/_rocm_sdk_devel{N}/` (docs/behaviour.md#devel-install).
//!
//! Protocol (see `docs/devel-tar.md`): fast exit when the tar is gone; else
//! lock, re-check, scan the whole archive (refusing unsafe members before
//! anything is written) while its check against its RECORD row starts,
//! plan every link against the final tree, append every path to RECORD,
//! clear a stale tree left by an interrupted run, write directories, files,
//! then links in sorted order, finish the check (a mismatch undoes the
//! run), and remove the tar last. The tar's presence means "not (fully)
//! unpacked".

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use dist_info::devel_tree::{Resolved, resolve_link};
use pypa_formats::installer::InstallCommand;

use crate::compression::TarCodec;
use crate::error::Error;
use crate::extract::{self, KeptLink};
use crate::integrity::Recorded;
use crate::lock::SiteLock;
use crate::reconcile::{self, ReconcileReport};
use crate::record::RecordFile;
use crate::relink;
use crate::resolve::FinalTree;
use crate::scan::{self, Kind, Model};
use crate::site::InstalledDevel;
use crate::tree_names::{DEVEL_PACKAGE_DIR, is_compiler_symlink};
use crate::tree_writer::{Sources, TreeWriter};
use crate::warning::DevelWarning;

/// The devel version the tree was unpacked from (`V` and a newline),
/// relative to the tree.
pub const TREE_VERSION_FILE: &str = ".rocm-sdk-devel-version";

/// Progress of an unpack, reported to [`UnpackOptions::progress`] (for a
/// progress bar; the tests also use it to kill the process at every point).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The archive was read and its members checked; `members` paths will
    /// be written.
    Scanned {
        /// Number of paths the tree will hold (files and links).
        members: usize,
    },
    /// RECORD lists every path the unpack will write.
    Recorded,
    /// A leftover tree of an interrupted unpack was removed.
    ClearedStale,
    /// One more file or link of `total` is in place.
    Wrote {
        /// Paths written so far.
        done: usize,
        /// Paths to write.
        total: usize,
    },
    /// The tar was removed: the tree is complete.
    Committed,
}

/// Hears of each [`Step`] of an unpack as it happens (a progress display).
///
/// ```
/// use std::sync::Mutex;
/// use devel_tar::{Step, UnpackProgress};
///
/// /// Keeps every step.
/// #[derive(Debug, Default)]
/// struct Steps(Mutex<Vec<Step>>);
///
/// impl UnpackProgress for Steps {
///     fn step(&self, step: &Step) {
///         self.0.lock().unwrap().push(step.clone());
///     }
/// }
/// ```
pub trait UnpackProgress: Send + Sync + std::fmt::Debug {
    /// The unpack reached `step`.
    fn step(&self, step: &Step) {
        let _ = step;
    }
}

/// Options of [`unpack`] and [`ensure_with`].
#[derive(Debug, Clone)]
pub struct UnpackOptions {
    /// Who hears of each [`Step`] (`None`: nobody).
    pub progress: Option<Arc<dyn UnpackProgress>>,
    /// [`ensure_with`] leaves devel paths that are no longer the same file
    /// as their runtime or device file as they are (`rocm-sdk test`, which
    /// reports them), instead of linking them again.
    pub leave_separated_links: bool,
    /// [`ensure_with`] returns at once when the tree is complete and the
    /// links stamp ([`DEVICE_LINKS_STAMP`](crate::DEVICE_LINKS_STAMP))
    /// matches the installed runtime and device wheels, without checking
    /// each link: the console scripts' rule, and
    /// `rocm-sdk path`'s (docs/behaviour.md#warm-path). A link separated
    /// without a reinstall (one file copied up by an image layer) is then
    /// left for `rocm-sdk init` or `rocm-sdk test` to find.
    pub trust_current_stamp: bool,
    /// Refuse an archive holding a name Windows cannot hold or two members
    /// that differ only in case (`dist_info::windows_names`), before
    /// anything is opened or written (docs/behaviour.md#windows-names).
    /// Default: on a Windows host, where such a name opens a device or
    /// overwrites another file.
    pub windows_names: bool,
    /// How many threads write files and links (0, the default: the
    /// machine's parallelism, at most 8; file creation is kernel-bound;
    /// more than four per core are not started). The tree is the same for
    /// any number.
    pub jobs: usize,
}

#[allow(clippy::derivable_impls)] // not on a Windows host, where `windows_names` is on
impl Default for UnpackOptions {
    fn default() -> Self {
        Self {
            progress: None,
            leave_separated_links: false,
            trust_current_stamp: false,
            windows_names: cfg!(windows),
            jobs: 0,
        }
    }
}

impl UnpackOptions {
    fn step(&self, step: &Step) {
        if let Some(progress) = &self.progress {
            progress.step(step);
        }
    }
}

/// What [`unpack`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnpackOutcome {
    /// The tree was already complete (no tar), possibly finished by another
    /// process while this one waited for the lock.
    AlreadyUnpacked,
    /// This call unpacked the tree.
    Unpacked {
        /// Regular files written.
        files: usize,
        /// Files that became hard links.
        hard_links: usize,
        /// Links kept as symlinks (directories and compiler drivers).
        symlinks: usize,
    },
}

/// The result of [`unpack`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpackReport {
    /// What happened.
    pub outcome: UnpackOutcome,
    /// Conditions handled along the way.
    pub warnings: Vec<DevelWarning>,
}

/// The result of [`ensure`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsureReport {
    /// The unpack.
    pub unpack: UnpackReport,
    /// The device-link reconcile that followed.
    pub reconcile: ReconcileReport,
    /// Devel paths linked to their runtime files again, after an image
    /// layer or a reinstall had made them separate copies.
    pub relinked: usize,
    /// Both reports' warnings, in order.
    pub warnings: Vec<DevelWarning>,
}

/// Unpacks the devel tree in `site_packages` if it is not complete yet,
/// reconciles device links, and links again every devel path that is no
/// longer the same file as its runtime file: what `rocm-sdk init` and the
/// first use of a devel tool need.
pub fn ensure(site_packages: &Path) -> Result<EnsureReport, Error> {
    ensure_with(site_packages, &UnpackOptions::default())
}

/// [`ensure`], reporting the unpack's steps to `options` (a progress
/// display).
pub fn ensure_with(site_packages: &Path, options: &UnpackOptions) -> Result<EnsureReport, Error> {
    ensure_inner(site_packages, options)
        .map_err(|e| e.with_install_command(crate::site::install_command(site_packages)))
}

fn ensure_inner(site_packages: &Path, options: &UnpackOptions) -> Result<EnsureReport, Error> {
    if options.trust_current_stamp && ready_by_stamp(site_packages)? {
        return Ok(EnsureReport {
            unpack: UnpackReport {
                outcome: UnpackOutcome::AlreadyUnpacked,
                warnings: Vec::new(),
            },
            reconcile: ReconcileReport {
                fast_path: true,
                ..ReconcileReport::default()
            },
            relinked: 0,
            warnings: Vec::new(),
        });
    }
    let unpack = unpack_inner(site_packages, options)?;
    let repair = !options.leave_separated_links;
    let reconcile = reconcile::reconcile(site_packages, repair)?;
    let (relinked, relink_warnings) = if repair {
        // A tree this call unpacked has every runtime link as the unpack
        // made it (one that could not be linked is a copy, already
        // reported); checking each pair again would cost two `statx`
        // apiece and say the same.
        let mended = if matches!(unpack.outcome, UnpackOutcome::Unpacked { .. }) {
            (0, Vec::new())
        } else {
            relink::repair_runtime_links(site_packages)?
        };
        // Last: the stamp tells the trampolines every link is in place.
        crate::stamp::write_stamp(&InstalledDevel::open(site_packages)?)?;
        mended
    } else {
        (0, Vec::new())
    };
    let warnings = unpack
        .warnings
        .iter()
        .chain(&reconcile.warnings)
        .chain(&relink_warnings)
        .cloned()
        .collect();
    Ok(EnsureReport {
        unpack,
        reconcile,
        relinked,
        warnings,
    })
}

/// The tree is complete (no tar left, the root a directory) and the links
/// stamp matches what is installed.
fn ready_by_stamp(site_packages: &Path) -> Result<bool, Error> {
    let site = InstalledDevel::open(site_packages)?;
    Ok(site.tar()?.is_none()
        && site.tree_exists()
        && crate::stamp::stamp_is_current(&site.sp, &site.names)?)
}

/// Unpacks `SP/rocm_sdk_devel/_devel.tar*` into `SP/_rocm_sdk_devel{N}/`,
/// appending every path to the devel RECORD. Safe to call from any number of
/// processes at once (all return once the tree is complete) and after a
/// process was killed at any point (the next call produces the same tree).
pub fn unpack(site_packages: &Path, options: &UnpackOptions) -> Result<UnpackReport, Error> {
    unpack_inner(site_packages, options)
        .map_err(|e| e.with_install_command(crate::site::install_command(site_packages)))
}

fn unpack_inner(site_packages: &Path, options: &UnpackOptions) -> Result<UnpackReport, Error> {
    let site = InstalledDevel::open(site_packages)?;
    if site.tar()?.is_none() {
        return already_unpacked(&site);
    }
    let _lock = SiteLock::acquire(&site)?;
    // Re-check under the lock: another process may have finished meanwhile.
    let Some((tar_name, compression)) = site.tar()? else {
        return already_unpacked(&site);
    };
    let tar = site.tar_path(&tar_name);
    let package = site.package()?;
    let record = site.record()?;
    // A site this user cannot write is said so first; one it can write
    // but does not own is not written either (docs/devel-tar.md#owner).
    check_writable(&site.root, &record)?;
    site.check_owner()?;
    let recorded = Recorded::read(
        &record,
        &package,
        &tar,
        &format!("{DEVEL_PACKAGE_DIR}/{}", compression.file_name()),
    )?;
    // One open file for every reader: the bytes written are the bytes
    // checked against RECORD. A link or a pipe at the tar's name is never
    // opened.
    let file = package
        .open_file(&tar_name)
        .map_err(|e| Error::read("open", &tar, e))?;
    let (model, check) = scan::scan(
        &tar,
        &file,
        compression,
        &recorded,
        &site.names,
        options.windows_names,
    )?;
    let mut record_len = None;
    let written = write_tree(
        &site,
        &record,
        &tar,
        &file,
        compression,
        &model,
        options,
        &mut record_len,
    );
    // The digest of an uncompressed tar was computed while the tree was
    // written. A changed tar explains any failure and is never committed:
    // what this run wrote is undone, and the site is as it was.
    if let Err(e) = check.finish() {
        if let Some(len) = record_len {
            undo(&site, &record, len);
        }
        return Err(e);
    }
    let written = written?;

    // The commit point: from now on the tree counts as complete.
    drop(file);
    package
        .remove_file(&tar_name)
        .map_err(|e| Error::io("remove", &tar, e))?;
    options.step(&Step::Committed);
    tracing::info!(
        files = written.files,
        hard_links = written.hard_links,
        symlinks = written.symlinks,
        "unpacked {}",
        site.tree_path().display()
    );
    Ok(UnpackReport {
        outcome: UnpackOutcome::Unpacked {
            files: written.files,
            hard_links: written.hard_links,
            symlinks: written.symlinks,
        },
        warnings: written.warnings,
    })
}

/// What [`write_tree`] wrote.
struct Written {
    files: usize,
    hard_links: usize,
    symlinks: usize,
    warnings: Vec<DevelWarning>,
}

/// Plans every link, records every path, clears a stale tree and writes
/// the tree of `model` from `tar` (open as `file`): everything but the
/// commit. `record_len` is set to RECORD's length before the rows were
/// appended.
#[allow(clippy::too_many_arguments)] // one call site: the unpack's state, passed through
fn write_tree(
    site: &InstalledDevel,
    record: &RecordFile,
    tar: &Path,
    file: &fs::File,
    compression: TarCodec,
    model: &Model,
    options: &UnpackOptions,
    record_len: &mut Option<u64>,
) -> Result<Written, Error> {
    let plan = UnpackPlan::build(model, site, tar)?;
    options.step(&Step::Scanned {
        members: plan.record.len(),
    });
    // Every hard link's file outside the tree is in a runtime package of
    // this release, opened (never through a link) before anything is
    // written.
    let mut sources = Sources::default();
    for (link, source) in &plan.hard_links {
        if model.names.contains(source) {
            continue;
        }
        let package = source.split_once('/').map_or(source.as_str(), |(p, _)| p);
        if !model.names.is_runtime_package(package) {
            return Err(Error::refused(
                site.root.join(source),
                Some(tar),
                format!(
                    "the devel link {link} leads to it, and {package} is not a runtime package \
                     of this release"
                ),
            ));
        }
        sources
            .open(&site.sp, package)
            .map_err(|e| Error::read("open", site.root.join(package), e).named_by(tar))?;
    }

    let mut rows: Vec<&str> = plan.record.iter().map(String::as_str).collect();
    // Files the reconcile writes later belong to the devel distribution too.
    let mut extra = reconcile::devel_owned_files(&site.names);
    extra.extend(relink::devel_owned_files(&site.names));
    extra.push(site.names.in_tree(TREE_VERSION_FILE));
    rows.extend(extra.iter().map(String::as_str));
    *record_len = Some(record.append(rows)?.previous_len);
    options.step(&Step::Recorded);

    // A stale tree is the devel distribution's by name (RECORD lists it
    // now); it goes without a link in it being followed.
    let root = site.names.root();
    if site
        .sp
        .entry(root)
        .map_err(|e| Error::read("inspect", site.tree_path(), e))?
        .is_some()
    {
        site.sp
            .remove_all(root)
            .map_err(|e| Error::io("remove", site.tree_path(), e))?;
        options.step(&Step::ClearedStale);
    }
    // The root and its version file first: a file directly in the root,
    // listed in RECORD, makes pip remove the whole tree (empty directories
    // too) even when a crash left it half written.
    let root_mode = model.dirs().first().map_or(0o755, |(_, mode)| *mode);
    site.sp
        .create_dir(root, root_mode)
        .map_err(|e| Error::io("create directory", site.tree_path(), e))?;
    let tree = site.tree()?;
    let version_path = tree.display_path(TREE_VERSION_FILE);
    tree.cursor()
        .create_new(TREE_VERSION_FILE, 0o666)
        .and_then(|mut f| f.write_all(format!("{}\n", site.version).as_bytes()))
        .map_err(|e| Error::io("write", &version_path, e))?;
    let mut writer = TreeWriter::new(&site.root, root, &tree, &sources);
    for (dir, mode) in model.dirs().into_iter().filter(|(d, _)| *d != root) {
        writer
            .create_dir(dir, mode)
            .map_err(|e| Error::io("create directory", writer.path(dir), e))?;
    }

    let total = plan.record.len();
    let mut done = 0;
    let mut progress = || {
        done += 1;
        options.step(&Step::Wrote { done, total });
    };
    let workers = extract::workers(options.jobs);
    let files = extract::write_files(
        &writer,
        tar,
        file,
        compression,
        model,
        workers,
        &mut progress,
    )?;
    let mut warnings = plan.warnings;
    warnings.extend(extract::make_links(
        &writer,
        &plan.hard_links,
        &plan.symlinks,
        workers,
        &mut progress,
    )?);
    relink::write_record(&tree, &site.names, &plan.hard_links)?;
    Ok(Written {
        files,
        hard_links: plan.hard_links.len(),
        symlinks: plan.symlinks.len(),
        warnings,
    })
}

/// Removes the tree this run wrote and the rows it appended to RECORD
/// (`record_len` long before). Best effort: the tar stays, so a later run
/// starts over whatever is left.
fn undo(site: &InstalledDevel, record: &RecordFile, record_len: u64) {
    let root = site.names.root();
    if matches!(site.sp.entry(root), Ok(Some(_)))
        && let Err(e) = site.sp.remove_all(root)
    {
        tracing::warn!("{}", Error::io("remove", site.tree_path(), e));
    }
    if let Err(e) = record.truncate(record_len) {
        tracing::warn!("{e}");
    }
}

fn already_unpacked(site: &InstalledDevel) -> Result<UnpackReport, Error> {
    if site.tree_exists() {
        Ok(UnpackReport {
            outcome: UnpackOutcome::AlreadyUnpacked,
            warnings: Vec::new(),
        })
    } else {
        Err(Error::TreeMissing {
            tree: site.tree_path(),
            install: InstallCommand::default(),
        })
    }
}

/// Every link of the archive, decided against the final tree.
struct UnpackPlan {
    /// (link, source file), both site-packages-relative, sorted by link.
    hard_links: Vec<(String, String)>,
    /// Links kept as symbolic links, sorted by link.
    symlinks: Vec<KeptLink>,
    /// Every path that will exist, sorted: what RECORD must list.
    record: Vec<String>,
    warnings: Vec<DevelWarning>,
}

impl UnpackPlan {
    fn build(model: &Model, site: &InstalledDevel, tar: &Path) -> Result<Self, Error> {
        let mut plan = UnpackPlan {
            hard_links: Vec::new(),
            symlinks: Vec::new(),
            record: Vec::new(),
            warnings: Vec::new(),
        };
        let tree = FinalTree::new(model, &site.sp);
        for (path, kind) in &model.members {
            let (resolved, target) = match kind {
                Kind::Dir { .. } => continue,
                Kind::File { .. } => {
                    plan.record.push(path.clone());
                    continue;
                }
                // The scan pointed every tar hard link at its regular file.
                Kind::HardLink { target } => (Resolved::File(target.clone()), target),
                Kind::Symlink { target } => {
                    let resolved = resolve_link(&tree, path, target).map_err(|problem| {
                        Error::UnsafeMember {
                            tar: tar.to_path_buf(),
                            member: path.clone(),
                            reason: format!("link to {target:?}: {problem}"),
                        }
                    })?;
                    (resolved, target)
                }
            };
            let relpath = model.names.relpath(path).unwrap_or(path);
            match resolved {
                // Nothing ships a path of the tree but the tarball itself:
                // such a link already dangled where the release was built.
                Resolved::Missing(missing) if model.names.contains(&missing) => {
                    plan.warnings.push(DevelWarning::DanglingInTarball {
                        path: path.clone(),
                        target: target.clone(),
                        missing,
                    });
                    continue;
                }
                Resolved::Missing(missing) => {
                    plan.warnings.push(DevelWarning::DanglingLink {
                        path: path.clone(),
                        target: target.clone(),
                        missing,
                    });
                    continue;
                }
                Resolved::Dir(resolved) => plan.symlinks.push(KeptLink {
                    link: path.clone(),
                    text: target.clone(),
                    resolved,
                }),
                Resolved::File(resolved)
                    if is_compiler_symlink(relpath) && matches!(kind, Kind::Symlink { .. }) =>
                {
                    plan.symlinks.push(KeptLink {
                        link: path.clone(),
                        text: target.clone(),
                        resolved: tree.regular_file(resolved),
                    });
                }
                Resolved::File(file) => {
                    plan.hard_links
                        .push((path.clone(), tree.regular_file(file)));
                }
            }
            plan.record.push(path.clone());
        }
        Ok(plan)
    }
}

/// Fails early, before RECORD or the tree change, when site-packages cannot
/// be written.
fn check_writable(root: &Path, record: &RecordFile) -> Result<(), Error> {
    // An unnamed file (O_TMPFILE): a process killed here leaves nothing.
    tempfile::tempfile_in(root).map_err(|e| Error::io("write into", root, e))?;
    record.check_appendable()
}
