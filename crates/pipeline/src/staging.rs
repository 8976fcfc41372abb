//! Staging a build's packages and publishing them into `dist/` at once
//! (docs/pipeline.md, "Outputs appear atomically").
//!
//! A build writes its packages into `{parent}/.therock-package-staging-{id}/dist/`
//! beside `dist/` (`{parent}` is the directory that holds `dist/`), copies
//! by hard link every entry of the current `dist/` it does not replace,
//! and swaps the two directories with one `renameat2(RENAME_EXCHANGE)`:
//! a reader sees the whole old `dist/` or the whole new one, never a mix.
//!
//! Locks, not process ids, say what is alive: each staging directory has
//! a lock file `{...}-{id}.lock` its build holds for its whole life, and
//! one lock per `dist/` (`.therock-package.lock` beside it) orders the
//! short critical sections: creating a staging directory, removing
//! abandoned ones, and the commit.

use std::collections::BTreeMap;
use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{IoAction, PublishError, cannot};
use crate::pause::{BuildPause, BuildPoint};

/// What publishing returns.
type Result<T, E = PublishError> = std::result::Result<T, E>;

// The name every staging directory (and its lock file) starts with is
// release-check's, since `verify` and `index` never look inside one.
use wheel_writer::dist_dir::{STAGING_PREFIX, is_staging};

/// The lock of one `dist/`, beside it.
const DIST_LOCK: &str = ".therock-package.lock";

/// Removes the staging directories of the builds (and assemblies) it is
/// given to, from outside them: the handler of SIGINT or SIGTERM calls
/// [`StagingCleanup::remove_now`] before the process ends, since a process
/// ended by a signal runs no destructor (docs/pipeline.md, "Interrupted
/// builds"). Cloning shares it.
///
/// ```
/// let cleanup = pipeline::StagingCleanup::new();
/// // A signal handler's thread, when the signal arrives:
/// let removed = cleanup.remove_now();
/// assert!(removed.is_empty()); // no build was running
/// ```
#[derive(Debug, Clone, Default)]
pub struct StagingCleanup {
    live: Arc<Mutex<BTreeMap<u64, LiveStaging>>>,
    next: Arc<AtomicU64>,
}

/// What one running build would leave behind.
#[derive(Debug, Clone)]
struct LiveStaging {
    root: PathBuf,
    lock_path: PathBuf,
    /// `dist/`, when the build made it (removed if still empty).
    created_dist: Option<PathBuf>,
}

impl StagingCleanup {
    /// A cleanup no build uses yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes the staging directory of every build still running, and
    /// its lock file; returns the directories removed. The builds'
    /// threads may still be writing into them: removal is retried until
    /// the directory is gone.
    pub fn remove_now(&self) -> Vec<PathBuf> {
        let live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        let mut removed = Vec::new();
        for staging in live.values() {
            for _ in 0..100 {
                match fs::remove_dir_all(&staging.root) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {}
                    _ => break,
                }
            }
            if !staging.root.exists() {
                removed.push(staging.root.clone());
            }
            let _ = fs::remove_file(&staging.lock_path);
            if let Some(dist) = &staging.created_dist {
                let _ = fs::remove_dir(dist);
            }
        }
        removed
    }

    fn register(&self, staging: LiveStaging) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, staging);
        id
    }

    fn unregister(&self, id: u64) {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// A build's private directory beside `dist/`, removed when dropped.
#[derive(Debug)]
pub(crate) struct Staging {
    /// The real `dist/` (links resolved).
    dist: PathBuf,
    root: PathBuf,
    lock_path: PathBuf,
    /// Held (locked) until the staging directory is gone.
    lock: File,
    /// Who holds the build at its points.
    pause: Option<Arc<dyn BuildPause>>,
    /// This build made `dist/`: a build that fails before its commit
    /// removes it again when still empty.
    created_dist: bool,
    /// The directories this build made to hold `dist/` (the destination
    /// and any missing parents, deepest first): a build that fails removes
    /// them again when they hold nothing else.
    created_parents: Vec<PathBuf>,
    /// Who removes the directory when a signal ends the process, and this
    /// build's entry there.
    cleanup: Option<(StagingCleanup, u64)>,
}

impl Staging {
    /// Creates `dist` if needed, removes staging directories no live build
    /// holds, and makes a new one. `pause` holds the build at its points.
    pub(crate) fn create(
        dist: &Path,
        pause: Option<Arc<dyn BuildPause>>,
        cleanup: Option<&StagingCleanup>,
    ) -> Result<Self> {
        let created_dist = !dist.exists();
        let created_parents: Vec<PathBuf> = dist
            .ancestors()
            .skip(1)
            .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
            .map(Path::to_path_buf)
            .collect();
        fs::create_dir_all(dist).map_err(cannot(IoAction::Create, dist))?;
        let dist = fs::canonicalize(dist).map_err(cannot(IoAction::Resolve, dist))?;
        let parent = dist
            .parent()
            .ok_or_else(|| PublishError::NoParent { path: dist.clone() })?
            .to_owned();
        let _dist_lock = DistLock::acquire(&parent)?;
        remove_abandoned(&parent)?;
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = format!("{STAGING_PREFIX}{}-{stamp}", std::process::id());
        let lock_path = parent.join(format!("{id}.lock"));
        let lock = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock_path)
            .map_err(cannot(IoAction::Create, &lock_path))?;
        lock.lock().map_err(cannot(IoAction::Lock, &lock_path))?;
        let root = parent.join(&id);
        let cleanup = cleanup.map(|cleanup| {
            let entry = cleanup.register(LiveStaging {
                root: root.clone(),
                lock_path: lock_path.clone(),
                created_dist: created_dist.then(|| dist.clone()),
            });
            (cleanup.clone(), entry)
        });
        let staging = Self {
            dist,
            root,
            lock_path,
            lock,
            pause,
            created_dist,
            created_parents,
            cleanup,
        };
        for dir in [staging.root.clone(), staging.new_dist(), staging.scratch()] {
            fs::create_dir(&dir).map_err(cannot(IoAction::Create, &dir))?;
        }
        Ok(staging)
    }

    /// The future `dist/`.
    fn new_dist(&self) -> PathBuf {
        self.root.join("dist")
    }

    /// Where temporary files go (devel tarballs before they enter their wheel).
    pub(crate) fn scratch(&self) -> PathBuf {
        self.root.join("work")
    }

    /// Where the members of archive artifacts are extracted for the build.
    pub(crate) fn extracted(&self) -> PathBuf {
        self.root.join("artifacts")
    }

    /// The staged `dist/{subdir}`, created; `subdir` is `""` or a clean
    /// relative path, so nothing is ever created outside the staging
    /// directory.
    pub(crate) fn dir(&self, subdir: &str) -> Result<PathBuf> {
        if !subdir.is_empty() {
            pypa_formats::member::check_relpath(subdir).map_err(|problem| {
                PublishError::UnsafeSubdir {
                    subdir: subdir.to_owned(),
                    problem,
                }
            })?;
        }
        let dir = self.new_dist().join(subdir);
        fs::create_dir_all(&dir).map_err(cannot(IoAction::Create, &dir))?;
        Ok(dir)
    }

    /// Publishes the staged packages: links every entry of the current
    /// `dist/` that the build does not replace into the staged one, then
    /// swaps the two directories. Returns where each staged file ended up.
    pub(crate) fn commit(mut self, staged: &[PathBuf]) -> Result<Vec<PathBuf>> {
        self.created_dist = false;
        let parent = self.dist.parent().expect("checked in create").to_owned();
        let _dist_lock = DistLock::acquire(&parent)?;
        let new = self.new_dist();
        // Read before the old entries are linked in: what the old `dist/`
        // held, not what this build staged.
        let index_files = crate::index::find_index_files(&self.dist)?;
        link_missing(&self.dist, &new)?;
        if let Some(files) = &index_files {
            crate::index::write_index_again(&new, &self.dist, files)?;
        }
        self.pause_at(BuildPoint::BeforeSwap)?;
        exchange(&new, &self.dist).map_err(|source| PublishError::Swap {
            staged: new.clone(),
            dist: self.dist.clone(),
            source,
        })?;
        self.pause_at(BuildPoint::AfterSwap)?;
        Ok(staged
            .iter()
            .map(|path| {
                self.dist
                    .join(path.strip_prefix(&new).expect("staged in the new dist/"))
            })
            .collect())
    }

    /// Who holds the build at its points.
    pub(crate) fn pause(&self) -> Option<Arc<dyn BuildPause>> {
        self.pause.clone()
    }

    /// Holds the build at `point` while the caller's pause runs.
    fn pause_at(&self, point: BuildPoint) -> Result<()> {
        match &self.pause {
            Some(pause) => pause
                .at(point)
                .map_err(|source| PublishError::Pause { point, source }),
            None => Ok(()),
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The directory first, then its lock file, still locked: a staging
        // directory without a lock file is always abandoned.
        let _ = fs::remove_dir_all(&self.root);
        let _ = fs::remove_file(&self.lock_path);
        if self.created_dist {
            // Only an empty directory goes (another build may have filled it).
            let _ = fs::remove_dir(&self.dist);
        }
        let _ = self.lock.unlock();
        if let Some((cleanup, entry)) = &self.cleanup {
            cleanup.unregister(*entry);
        }
        if self.created_dist
            && let Some(parent) = self.dist.parent()
        {
            remove_lone_dist_lock(parent, &self.created_parents);
        }
    }
}

/// After a failed build: when the `dist/` lock file is all `parent` holds
/// (no `dist/`, no other build's staging), removes it, then the
/// directories the build made (`created`, deepest first) that are empty.
/// Best effort: anything else there, or an error, and they stay. The lock
/// file goes under its lock, and [`DistLock::acquire`] retries when the
/// file it locked is no longer the one at the path.
fn remove_lone_dist_lock(parent: &Path, created: &[PathBuf]) {
    let Ok(lock) = DistLock::acquire(parent) else {
        return;
    };
    let lone = fs::read_dir(parent).is_ok_and(|entries| {
        let first_two: Vec<_> = entries.take(2).map(|e| e.map(|e| e.file_name())).collect();
        matches!(first_two.as_slice(), [Ok(name)] if name == DIST_LOCK)
    });
    if lone && fs::remove_file(parent.join(DIST_LOCK)).is_ok() {
        for dir in created {
            if fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
    drop(lock);
}

/// The exclusive lock of one `dist/`, held for a critical section.
struct DistLock {
    file: File,
}

impl DistLock {
    /// Locks `{parent}/.therock-package.lock`, creating it if needed. A
    /// failed build may remove the file while another waits for its lock
    /// ([`remove_lone_dist_lock`]), so the lock only counts once the file
    /// locked is still the one at the path; otherwise it starts again.
    fn acquire(parent: &Path) -> Result<Self> {
        let path = parent.join(DIST_LOCK);
        loop {
            let file = fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(cannot(IoAction::Open, &path))?;
            file.lock().map_err(cannot(IoAction::Lock, &path))?;
            let locked = file
                .metadata()
                .and_then(|meta| fs_helpers::file_id::FileId::of_file(&file, &meta));
            let at_path = fs::symlink_metadata(&path)
                .and_then(|meta| fs_helpers::file_id::FileId::of_entry(&path, &meta));
            match (locked, at_path) {
                (Ok(locked), Ok(at_path)) if locked == at_path => return Ok(Self { file }),
                (Err(e), _) => {
                    return Err(cannot(IoAction::Inspect, path)(e).into());
                }
                // Removed or replaced while this build waited: lock anew.
                _ => {}
            }
        }
    }
}

impl Drop for DistLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Removes the staging directories in `parent` whose lock no live build
/// holds (called with the `dist/` lock held), and their lock files.
fn remove_abandoned(parent: &Path) -> Result<()> {
    let entries = fs::read_dir(parent).map_err(cannot(IoAction::List, parent))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| is_staging(n))
        .collect();
    names.sort();
    for name in names.iter().filter(|n| n.strip_suffix(".lock").is_none()) {
        let lock_path = parent.join(format!("{name}.lock"));
        let held = match File::open(&lock_path) {
            Ok(lock) => match lock.try_lock() {
                Ok(()) => false,
                Err(TryLockError::WouldBlock) => true,
                Err(TryLockError::Error(e)) => {
                    return Err(cannot(IoAction::Lock, lock_path)(e).into());
                }
            },
            // No lock file: its build removed it, or never had one.
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(cannot(IoAction::Open, lock_path)(e).into());
            }
        };
        if held {
            tracing::debug!("{name} belongs to a build that is still running");
            continue;
        }
        let dir = parent.join(name);
        tracing::info!("removing {} left by an interrupted build", dir.display());
        fs::remove_dir_all(&dir).map_err(cannot(IoAction::Remove, &dir))?;
        let _ = fs::remove_file(&lock_path);
    }
    // Lock files whose directory is gone and whose build is not running.
    for (name, dir) in names
        .iter()
        .filter_map(|n| Some((n, n.strip_suffix(".lock")?)))
    {
        let path = parent.join(name);
        if parent.join(dir).exists() {
            continue;
        }
        if let Ok(lock) = File::open(&path)
            && lock.try_lock().is_ok()
        {
            let _ = fs::remove_file(&path);
        }
    }
    Ok(())
}

/// Links into `new` every entry of `old` that `new` lacks (files by hard
/// link, or copied where the file system cannot link; directories
/// recursively; symlinks as symlinks). Staging directories a build of an
/// earlier version left inside `dist/` are not carried over.
fn link_missing(old: &Path, new: &Path) -> Result<()> {
    let entries = fs::read_dir(old).map_err(cannot(IoAction::List, old))?;
    for entry in entries {
        let entry = entry.map_err(cannot(IoAction::List, old))?;
        let name = entry.file_name();
        if name.to_str().is_some_and(is_staging) {
            continue;
        }
        let from = entry.path();
        let to = new.join(&name);
        let kind = entry
            .file_type()
            .map_err(cannot(IoAction::Inspect, &from))?;
        if kind.is_dir() {
            if !to.is_dir() {
                fs::create_dir(&to).map_err(cannot(IoAction::Create, &to))?;
            }
            link_missing(&from, &to)?;
            continue;
        }
        if fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let linked = if kind.is_symlink() {
            copy_symlink(&from, &to)
        } else {
            fs::hard_link(&from, &to).or_else(|_| fs::copy(&from, &to).map(drop))
        };
        linked.map_err(|source| PublishError::CarryOver { path: from, source })?;
    }
    Ok(())
}

#[cfg(unix)]
fn copy_symlink(from: &Path, to: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(fs::read_link(from)?, to)
}

#[cfg(not(unix))]
fn copy_symlink(from: &Path, to: &Path) -> io::Result<()> {
    fs::copy(from, to).map(drop)
}

/// Swaps the directory entries `new` and `dist` in one step. Where the
/// file system cannot (no `RENAME_EXCHANGE`), `dist` is moved aside and
/// `new` renamed in: readers may then briefly find no `dist/`, but never a
/// mixed one.
fn exchange(new: &Path, dist: &Path) -> io::Result<()> {
    match exchange_atomically(new, dist) {
        Ok(()) => Ok(()),
        Err(e) if exchange_unsupported(&e) => {
            tracing::debug!("atomic exchange unsupported here ({e}); renaming twice");
            let aside = new.with_extension("old");
            fs::rename(dist, &aside)?;
            fs::rename(new, dist)?;
            fs::rename(&aside, new)
        }
        Err(e) => Err(e),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn exchange_atomically(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both arguments are NUL-terminated paths that outlive the call.
    let status = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn exchange_atomically(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

fn exchange_unsupported(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        return true;
    }
    e.kind() == io::ErrorKind::Unsupported
}
