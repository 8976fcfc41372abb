//! A directory handle that cannot be led out of its directory: every path
//! given to it is relative, clean, and resolved below it without following
//! a symbolic link, whatever a file told the caller.
//!
//! A [`Dir`] is opened once from a path the caller trusts (site-packages,
//! found from the program's own location); every other file is reached
//! through it, by a `/`-separated relative path. Such a path is refused
//! ([`Refused`]) when it is empty or absolute, has an empty, `.` or `..`
//! component, holds a NUL (or, on Windows, `\` or `:`), or when any
//! component on the disk turns out to be a symbolic link (on Windows, any
//! reparse point: symbolic links and junctions alike). Nothing here follows
//! a link, not even as the last component: opening, creating, removing,
//! renaming and linking all act on the entry itself.
//!
//! How it is held on each platform:
//!
//! - **Linux**: a directory descriptor; a path below it is resolved by
//!   `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
//!   for its parent directory and the last component is acted on with the
//!   `*at` call of the operation, relative to that parent (`statat` and
//!   `openat` with `O_NOFOLLOW`, `mkdirat`, `unlinkat`, `renameat`,
//!   `linkat` without `AT_SYMLINK_FOLLOW`). The kernel then guarantees the
//!   result: no race between a check and a use exists to win. Kernels
//!   before 5.6 (no `openat2`) and sandboxes that refuse it get the same
//!   guarantee from a walk that opens one component at a time with
//!   `O_NOFOLLOW | O_DIRECTORY`.
//! - **Other Unix**: that walk.
//! - **Windows** (no `*at` calls): every directory on the way is opened
//!   with `FILE_FLAG_OPEN_REPARSE_POINT` and refused when it is a reparse
//!   point, and held open without `FILE_SHARE_DELETE` while the operation
//!   runs, so it cannot be renamed or replaced meanwhile; the operation
//!   then acts on the full path, and its result is checked the same way.
//!
//! A [`Cursor`] keeps the directories of the last path it used open, so a
//! loop over sorted paths opens each directory once.
//!
//! Temporary files are made with `O_CREAT | O_EXCL | O_NOFOLLOW` under
//! unpredictable names `.{name}.{12 hex digits}.tmp` beside their target
//! ([`Cursor::replace`]); [`is_temporary_of`] recognises one a killed
//! writer left behind.
//!
//! ```
//! use fs_helpers::confined::{Dir, refusal};
//!
//! let dir = tempfile::tempdir()?;
//! let root = Dir::open(dir.path())?;
//! root.create_dir("tree", 0o755)?;
//! root.replace("tree/state.json", b"{}\n")?;
//! assert_eq!(root.read("tree/state.json", 1024)?, b"{}\n");
//! // `..` never leaves the directory, and neither does a symbolic link.
//! let err = root.read("tree/../../etc/passwd", 1024).unwrap_err();
//! assert!(refusal(&err).is_some());
//! # #[cfg(unix)]
//! # {
//! std::os::unix::fs::symlink("/etc", dir.path().join("tree/etc"))?;
//! let err = root.read("tree/etc/passwd", 1024).unwrap_err();
//! assert!(refusal(&err).is_some());
//! # }
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use crate::file_id::FileId;

#[cfg(unix)]
#[path = "confined/unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "confined/windows.rs"]
mod sys;

/// Why a path was refused: it would leave its directory, or it is not the
/// kind of file the operation accepts. Carried inside the [`io::Error`]
/// the operation returns ([`refusal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The path as given, relative to its [`Dir`].
    pub path: String,
    /// What is wrong with it.
    pub reason: Refusal,
}

/// What is wrong with a refused path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Empty, absolute, or with an empty, `.` or `..` component, a NUL, or
    /// (Windows) a `\` or `:`.
    NotClean,
    /// A component is a symbolic link (on Windows, any reparse point).
    SymbolicLink,
    /// A regular file was required.
    NotRegularFile,
    /// Larger than the caller allows.
    TooLarge {
        /// The most bytes accepted.
        limit: u64,
    },
}

impl fmt::Display for Refused {
    // The path is the caller's to name (it knows where it came from).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            Refusal::NotClean => f.write_str(
                "it is not a clean relative path (absolute, empty, or with `.` or `..`), \
                 so it could lead out of its directory",
            ),
            Refusal::SymbolicLink => f.write_str(
                "it goes through a symbolic link (or another reparse point), which is never \
                 followed",
            ),
            Refusal::NotRegularFile => f.write_str("it is not a regular file"),
            Refusal::TooLarge { limit } => write!(f, "it is larger than {limit} bytes"),
        }
    }
}

impl std::error::Error for Refused {}

impl Refused {
    fn error(path: &str, reason: Refusal) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            Refused {
                path: path.to_owned(),
                reason,
            },
        )
    }
}

/// The [`Refused`] inside `error`, when the operation refused its path.
pub fn refusal(error: &io::Error) -> Option<&Refused> {
    error.get_ref()?.downcast_ref::<Refused>()
}

/// What a directory entry is, the entry itself (a link is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (on Windows, any reparse point).
    Symlink,
    /// A device, pipe, socket or anything else.
    Other,
}

/// One directory entry, as `lstat` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Which file it is (hard links share it).
    pub id: FileId,
    /// Its size in bytes.
    pub len: u64,
    /// Its owner's user id (`None` on Windows).
    pub owner: Option<u32>,
}

/// Checks that `rel` is a clean relative path and returns its components.
fn components(rel: &str) -> io::Result<Vec<&str>> {
    let clean = !rel.is_empty()
        && rel.split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && !c.contains('\0')
                && !(cfg!(windows) && (c.contains('\\') || c.contains(':')))
        });
    if clean {
        Ok(rel.split('/').collect())
    } else {
        Err(Refused::error(rel, Refusal::NotClean))
    }
}

/// `rel` split into its parent (empty for a direct child) and last
/// component, once checked clean.
fn split(rel: &str) -> io::Result<(&str, &str)> {
    components(rel)?;
    Ok(rel.rsplit_once('/').unwrap_or(("", rel)))
}

/// An unpredictable temporary name for a file to be renamed to `name`:
/// `.{name}.{12 hex digits}.tmp`. [`Cursor::replace`] uses one; so can a
/// caller that links a file in place by a rename.
pub fn temporary_name(name: &str) -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState's keys come from the operating system's random source.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    format!(".{name}.{:012x}.tmp", hasher.finish() & 0xffff_ffff_ffff)
}

/// The `name` a [`temporary_name`] was made for, when `file_name` is one
/// (for removing those a killed writer left).
///
/// ```
/// use fs_helpers::confined::{temporary_base, temporary_name};
/// assert_eq!(temporary_base(&temporary_name("state.json")), Some("state.json"));
/// assert_eq!(temporary_base(".state.json.tmp"), None);
/// assert_eq!(temporary_base("state.json"), None);
/// ```
pub fn temporary_base(file_name: &str) -> Option<&str> {
    let rest = file_name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (base, hex) = rest.rsplit_once('.')?;
    (!base.is_empty() && hex.len() == 12 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(base)
}

/// Whether `file_name` is a [`temporary_name`] for `name`.
///
/// ```
/// use fs_helpers::confined::is_temporary_of;
/// assert!(is_temporary_of(".state.json.0123456789ab.tmp", "state.json"));
/// assert!(!is_temporary_of(".state.json.tmp", "state.json"));
/// ```
pub fn is_temporary_of(file_name: &str, name: &str) -> bool {
    temporary_base(file_name) == Some(name)
}

/// The effective user id of this process (`None` on Windows), to compare
/// with [`Dir::owner`].
pub fn current_user() -> Option<u32> {
    sys::current_user()
}

/// Opens the file at `path` for reading only if it is a regular file,
/// without following a link as its last component and without blocking on
/// a pipe or a device; reads at most `limit` bytes ([`Refusal::TooLarge`]
/// beyond). For files named by a path the caller trusts up to its last
/// component; anything named by a file goes through a [`Dir`].
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = sys::open_regular_path(path)?;
    read_limited(file, &path.display().to_string(), limit)
}

/// [`read_regular`] without the limit: the open regular file at `path`.
pub fn open_regular(path: &Path) -> io::Result<File> {
    sys::open_regular_path(path)
}

fn read_limited(file: File, rel: &str, limit: u64) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    if len > limit {
        return Err(Refused::error(rel, Refusal::TooLarge { limit }));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // The file may grow while it is read: never past the limit.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Refused::error(rel, Refusal::TooLarge { limit }));
    }
    Ok(bytes)
}

/// A directory, and everything below it reached without leaving it (see
/// the module documentation).
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
    inner: sys::Handle,
}

impl Dir {
    /// Opens the directory at `path`, which the caller trusts as given
    /// (links on the way to it are followed: site-packages may be reached
    /// through `lib64 -> lib`).
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            inner: sys::Handle::open_root(path)?,
        })
    }

    /// Another handle on the same directory (for another thread).
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            path: self.path.clone(),
            inner: self.inner.try_clone()?,
        })
    }

    /// The path the directory was opened as (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The full path of `rel`, for messages (nothing is opened).
    pub fn display_path(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.path.clone()
        } else {
            self.path.join(rel)
        }
    }

    /// A cursor for a run of operations: it keeps the directories of the
    /// last path it used open.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            dir: self,
            open: Vec::new(),
        }
    }

    /// The directory `rel` below this one, as a [`Dir`] of its own.
    pub fn open_dir(&self, rel: &str) -> io::Result<Dir> {
        components(rel)?;
        Ok(Dir {
            path: self.path.join(rel),
            inner: self.inner.open_below(&self.path, rel)?,
        })
    }

    /// The owner of the directory itself (`None` on Windows).
    pub fn owner(&self) -> io::Result<Option<u32>> {
        self.inner.owner()
    }

    /// The directory itself as an open file (for a lock on Unix).
    pub fn as_file(&self) -> io::Result<File> {
        self.inner.as_file()
    }

    /// [`Cursor::entry`].
    pub fn entry(&self, rel: &str) -> io::Result<Option<Entry>> {
        self.cursor().entry(rel)
    }

    /// [`Cursor::read`].
    pub fn read(&self, rel: &str, limit: u64) -> io::Result<Vec<u8>> {
        self.cursor().read(rel, limit)
    }

    /// [`Cursor::open_file`].
    pub fn open_file(&self, rel: &str) -> io::Result<File> {
        self.cursor().open_file(rel)
    }

    /// [`Cursor::list`].
    pub fn list(&self, rel: &str) -> io::Result<Vec<OsString>> {
        self.cursor().list(rel)
    }

    /// [`Cursor::create_dir`].
    pub fn create_dir(&self, rel: &str, mode: u32) -> io::Result<()> {
        self.cursor().create_dir(rel, mode)
    }

    /// [`Cursor::replace`].
    pub fn replace(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.cursor().replace(rel, bytes)
    }

    /// [`Cursor::remove_file`].
    pub fn remove_file(&self, rel: &str) -> io::Result<()> {
        self.cursor().remove_file(rel)
    }

    /// [`Cursor::remove_all`].
    pub fn remove_all(&self, rel: &str) -> io::Result<()> {
        self.cursor().remove_all(rel)
    }
}

/// A run of operations below a [`Dir`] that keeps the directories of the
/// last path it used open (see the module documentation). Each method
/// takes a path relative to the [`Dir`].
#[derive(Debug)]
pub struct Cursor<'d> {
    dir: &'d Dir,
    /// (path below the directory, handle), each below the one before.
    open: Vec<(String, sys::Handle)>,
}

impl Cursor<'_> {
    /// The directory this cursor works in.
    pub fn dir(&self) -> &Dir {
        self.dir
    }

    /// The directory holding `rel` (the [`Dir`] itself for a direct child)
    /// and `rel`'s last component.
    fn parent<'r>(&mut self, rel: &'r str) -> io::Result<(&sys::Handle, &'r str)> {
        let (parent, name) = split(rel)?;
        if parent.is_empty() {
            return Ok((&self.dir.inner, name));
        }
        // Keep the open directories that are `parent` or above it.
        while let Some((top, _)) = self.open.last() {
            let above = parent
                .strip_prefix(top.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
            if above {
                break;
            }
            self.open.pop();
        }
        let known = self.open.last().map_or(0, |(top, _)| top.len());
        if known < parent.len() {
            let rest = parent[known..].trim_start_matches('/');
            let (base, base_path) = match self.open.last() {
                Some((top, handle)) => (handle, self.dir.path.join(top)),
                None => (&self.dir.inner, self.dir.path.clone()),
            };
            // A refusal names the whole path, not the part below the parent.
            let opened = base
                .open_below(&base_path, rest)
                .map_err(|e| renamed(e, rel))?;
            self.open.push((parent.to_owned(), opened));
        }
        let handle = &self.open.last().expect("pushed above").1;
        Ok((handle, name))
    }

    /// The entry `rel` itself (a link is not followed), or `None` when
    /// nothing is there (or its parent is missing).
    pub fn entry(&mut self, rel: &str) -> io::Result<Option<Entry>> {
        let full = self.dir.display_path(rel);
        match self.parent(rel) {
            Ok((parent, name)) => parent.entry(&full, name),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The text of the symbolic link `rel`.
    pub fn read_link(&mut self, rel: &str) -> io::Result<String> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.read_link(&full, name)
    }

    /// Opens the regular file `rel` for reading ([`Refusal::NotRegularFile`]
    /// for anything else, a link included; a pipe or device is never
    /// waited on).
    pub fn open_file(&mut self, rel: &str) -> io::Result<File> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        let file = parent
            .open_file(&full, name, sys::Access::Read)
            .map_err(|e| renamed(e, rel))?;
        check_regular(&file, rel)?;
        Ok(file)
    }

    /// Reads the regular file `rel`, at most `limit` bytes
    /// ([`Refusal::TooLarge`] beyond).
    pub fn read(&mut self, rel: &str, limit: u64) -> io::Result<Vec<u8>> {
        let file = self.open_file(rel)?;
        read_limited(file, rel, limit)
    }

    /// Opens the existing regular file `rel` for appending.
    pub fn open_append(&mut self, rel: &str) -> io::Result<File> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        let file = parent
            .open_file(&full, name, sys::Access::Append)
            .map_err(|e| renamed(e, rel))?;
        check_regular(&file, rel)?;
        Ok(file)
    }

    /// Opens the existing regular file `rel` for writing (to truncate it).
    pub fn open_write(&mut self, rel: &str) -> io::Result<File> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        let file = parent
            .open_file(&full, name, sys::Access::Write)
            .map_err(|e| renamed(e, rel))?;
        check_regular(&file, rel)?;
        Ok(file)
    }

    /// The names in the directory `rel` (`""`: the [`Dir`] itself).
    pub fn list(&mut self, rel: &str) -> io::Result<Vec<OsString>> {
        if rel.is_empty() {
            return self.dir.inner.list(&self.dir.path);
        }
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.open_child_dir(&full, name)?.list(&full)
    }

    /// Creates the directory `rel` with `mode` (less the umask).
    pub fn create_dir(&mut self, rel: &str, mode: u32) -> io::Result<()> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.create_dir(&full, name, mode)
    }

    /// Creates the new file `rel` for writing (`O_CREAT | O_EXCL |
    /// O_NOFOLLOW`): nothing may be there, not even a link.
    pub fn create_new(&mut self, rel: &str, mode: u32) -> io::Result<File> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.create_new(&full, name, mode)
    }

    /// Replaces `rel` with a file holding `bytes`: written to an
    /// unpredictable temporary name beside it (created with `O_CREAT |
    /// O_EXCL | O_NOFOLLOW`), then renamed over it, so a reader sees the
    /// old file or the whole new one, and whatever was at `rel` (a link
    /// included) is replaced, never written through. The temporary is
    /// removed when a step fails.
    pub fn replace(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let (_, name) = split(rel)?;
        self.replace_through(&temporary_name(name), rel, bytes)
    }

    /// [`replace`](Self::replace) through the temporary `temp` of the
    /// caller's choosing (a file name in `rel`'s directory; a caller that
    /// lists it somewhere while it exists names it first).
    pub fn replace_through(&mut self, temp: &str, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        if temp.contains('/') || temp == name {
            return Err(Refused::error(temp, Refusal::NotClean));
        }
        let temp_full = full.with_file_name(temp);
        let mut file = parent.create_new(&temp_full, temp, 0o666)?;
        file.write_all(bytes)
            .and_then(|()| {
                drop(file);
                parent.rename_within(&temp_full, temp, &full, name)
            })
            .inspect_err(|_| {
                // Best effort: the error that matters is the one returned.
                let _ = parent.remove(&temp_full, temp, false);
            })
    }

    /// Removes the file or link `rel`; never a directory.
    pub fn remove_file(&mut self, rel: &str) -> io::Result<()> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.remove(&full, name, false)
    }

    /// Removes the empty directory `rel`.
    pub fn remove_dir(&mut self, rel: &str) -> io::Result<()> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.remove(&full, name, true)
    }

    /// Removes `rel` and, for a directory, everything below it, never
    /// following a link (a link is removed itself).
    pub fn remove_all(&mut self, rel: &str) -> io::Result<()> {
        let full = self.dir.display_path(rel);
        let (parent, name) = self.parent(rel)?;
        parent.remove_all(&full, name)
    }

    /// Renames `from` to `to`, both below this directory, replacing what is
    /// at `to` (a link there is replaced, never followed; a directory is an
    /// error).
    pub fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let (from_full, to_full) = (self.dir.display_path(from), self.dir.display_path(to));
        let (from_parent, from_name) = self.parent(from)?;
        let from_parent = from_parent.try_clone()?;
        let (to_parent, to_name) = self.parent(to)?;
        from_parent.rename_to(&from_full, from_name, to_parent, &to_full, to_name)
    }

    /// Makes `link` (below this directory) a hard link of the regular file
    /// `source` below `from`'s directory. The link is made from the entry
    /// in its directory (never through a link), and what it links is
    /// checked afterwards: anything but a regular file is removed again
    /// and refused ([`Refusal::NotRegularFile`]).
    pub fn hard_link_from(
        &mut self,
        from: &mut Cursor<'_>,
        source: &str,
        link: &str,
    ) -> io::Result<()> {
        let source_full = from.dir.display_path(source);
        let (source_parent, source_name) = from.parent(source)?;
        let link_full = self.dir.display_path(link);
        let (link_parent, link_name) = self.parent(link)?;
        source_parent.hard_link(
            &source_full,
            source_name,
            link_parent,
            &link_full,
            link_name,
        )?;
        match link_parent.entry(&link_full, link_name)? {
            Some(entry) if entry.kind == EntryKind::File => Ok(()),
            _ => {
                let _ = link_parent.remove(&link_full, link_name, false);
                Err(Refused::error(source, Refusal::NotRegularFile))
            }
        }
    }

    /// Makes `link` a hard link of the regular file `source`, both below
    /// this directory ([`Cursor::hard_link_from`]).
    pub fn hard_link(&mut self, source: &str, link: &str) -> io::Result<()> {
        let mut from = self.dir.cursor();
        self.hard_link_from(&mut from, source, link)
    }

    /// Makes `link` a symbolic link whose text is `text` (never read here).
    #[cfg(unix)]
    pub fn symlink(&mut self, text: &str, link: &str) -> io::Result<()> {
        let full = self.dir.display_path(link);
        let (parent, name) = self.parent(link)?;
        parent.symlink(&full, text, name)
    }
}

fn check_regular(file: &File, rel: &str) -> io::Result<()> {
    if sys::is_regular(file)? {
        Ok(())
    } else {
        Err(Refused::error(rel, Refusal::NotRegularFile))
    }
}

/// `e`, a refusal naming `rel` instead of the part of it the platform
/// layer saw.
fn renamed(e: io::Error, rel: &str) -> io::Error {
    match refusal(&e) {
        Some(refused) => Refused::error(rel, refused.reason),
        None => e,
    }
}

fn is_missing(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn refused(e: &io::Error) -> Refusal {
        refusal(e)
            .unwrap_or_else(|| panic!("not refused: {e}"))
            .reason
    }

    #[test]
    fn unclean_paths_are_refused_before_anything_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open(dir.path()).unwrap();
        for rel in [
            "",
            "/etc/passwd",
            "a//b",
            "./a",
            "a/.",
            "a/../b",
            "..",
            "a/",
            "a\0b",
        ] {
            let e = root.create_dir(rel, 0o755).unwrap_err();
            assert_eq!(refused(&e), Refusal::NotClean, "{rel:?}");
            assert_eq!(refusal(&e).unwrap().path, rel);
        }
        assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn files_are_created_replaced_read_and_removed_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open(dir.path()).unwrap();
        let mut cursor = root.cursor();
        cursor.create_dir("a", 0o755).unwrap();
        cursor.create_dir("a/b", 0o755).unwrap();
        cursor
            .create_new("a/b/f", 0o644)
            .unwrap()
            .write_all(b"one")
            .unwrap();
        assert_eq!(
            cursor.create_new("a/b/f", 0o644).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        cursor.replace("a/b/f", b"two").unwrap();
        assert_eq!(cursor.read("a/b/f", 10).unwrap(), b"two");
        assert_eq!(
            refused(&cursor.read("a/b/f", 2).unwrap_err()),
            Refusal::TooLarge { limit: 2 }
        );
        cursor
            .open_append("a/b/f")
            .unwrap()
            .write_all(b"!")
            .unwrap();
        assert_eq!(fs::read(dir.path().join("a/b/f")).unwrap(), b"two!");
        assert_eq!(cursor.list("a/b").unwrap(), [OsString::from("f")]);
        let entry = cursor.entry("a/b/f").unwrap().unwrap();
        assert_eq!((entry.kind, entry.len), (EntryKind::File, 4));
        assert_eq!(cursor.entry("a/b/none").unwrap(), None);
        assert_eq!(cursor.entry("a/none/f").unwrap(), None);
        cursor.hard_link("a/b/f", "a/g").unwrap();
        assert_eq!(cursor.entry("a/g").unwrap().unwrap().id, entry.id);
        cursor.rename("a/g", "a/b/h").unwrap();
        assert_eq!(cursor.entry("a/b/h").unwrap().unwrap().id, entry.id);
        // A directory is never removed as a file.
        assert!(cursor.remove_file("a/b").is_err());
        cursor.remove_file("a/b/h").unwrap();
        assert!(cursor.remove_dir("a/b").is_err(), "not empty");
        cursor.remove_all("a").unwrap();
        assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn a_replaced_file_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open(dir.path()).unwrap();
        root.replace("s.json", b"1").unwrap();
        root.replace("s.json", b"2").unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("d/x"), "x").unwrap();
        // Renaming over a directory fails; the temporary goes.
        assert!(root.replace("d", b"3").is_err());
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["d", "s.json"]);
        assert_eq!(fs::read(dir.path().join("s.json")).unwrap(), b"2");
    }

    #[test]
    fn temporary_names_differ_and_are_recognised() {
        let a = temporary_name("state.json");
        let b = temporary_name("state.json");
        assert_ne!(a, b);
        assert!(is_temporary_of(&a, "state.json"), "{a}");
        assert!(!is_temporary_of(&a, "state"), "{a}");
    }

    #[cfg(unix)]
    mod links {
        use super::*;
        use std::os::unix::fs::symlink;

        /// A root holding `inside/`, with `outside/secret` beside the root.
        fn setup() -> (tempfile::TempDir, Dir) {
            let dir = tempfile::tempdir().unwrap();
            fs::create_dir_all(dir.path().join("root/inside")).unwrap();
            fs::create_dir(dir.path().join("outside")).unwrap();
            fs::write(dir.path().join("outside/secret"), "s").unwrap();
            let root = Dir::open(&dir.path().join("root")).unwrap();
            (dir, root)
        }

        #[test]
        fn no_operation_follows_a_link_anywhere_in_the_path() {
            let (dir, root) = setup();
            let outside = dir.path().join("outside");
            symlink(&outside, dir.path().join("root/inside/dir")).unwrap();
            symlink(outside.join("secret"), dir.path().join("root/inside/file")).unwrap();
            symlink("../../outside", dir.path().join("root/inside/rel")).unwrap();
            let mut c = root.cursor();
            for rel in ["inside/dir/secret", "inside/rel/secret"] {
                assert_eq!(
                    refused(&c.read(rel, 10).unwrap_err()),
                    Refusal::SymbolicLink,
                    "{rel}"
                );
                assert_eq!(
                    refused(&c.create_new(rel, 0o644).unwrap_err()),
                    Refusal::SymbolicLink
                );
                assert_eq!(
                    refused(&c.replace(rel, b"x").unwrap_err()),
                    Refusal::SymbolicLink
                );
                assert_eq!(
                    refused(&c.remove_file(rel).unwrap_err()),
                    Refusal::SymbolicLink
                );
                assert_eq!(
                    refused(&c.remove_all(rel).unwrap_err()),
                    Refusal::SymbolicLink
                );
                assert_eq!(
                    refused(&c.create_dir(&format!("{rel}2"), 0o755).unwrap_err()),
                    Refusal::SymbolicLink
                );
                assert_eq!(
                    refused(&root.open_dir(rel).unwrap_err()),
                    Refusal::SymbolicLink
                );
            }
            // The last component: a link is the entry itself, never its target.
            assert_eq!(
                refused(&c.read("inside/file", 10).unwrap_err()),
                Refusal::NotRegularFile
            );
            assert_eq!(
                refused(&c.open_append("inside/file").unwrap_err()),
                Refusal::NotRegularFile
            );
            assert_eq!(
                c.entry("inside/file").unwrap().unwrap().kind,
                EntryKind::Symlink
            );
            assert_eq!(
                c.entry("inside/dir").unwrap().unwrap().kind,
                EntryKind::Symlink
            );
            assert_eq!(
                refused(&root.open_dir("inside/dir").unwrap_err()),
                Refusal::SymbolicLink
            );
            c.replace("inside/file", b"mine").unwrap();
            assert_eq!(
                fs::read(dir.path().join("root/inside/file")).unwrap(),
                b"mine"
            );
            c.remove_all("inside/dir").unwrap();
            c.remove_file("inside/rel").unwrap();
            assert_eq!(fs::read(outside.join("secret")).unwrap(), b"s");
            assert!(outside.is_dir());
        }

        #[test]
        fn a_hard_link_source_must_be_a_regular_file_reached_without_links() {
            let (dir, root) = setup();
            let other = Dir::open(&dir.path().join("outside")).unwrap();
            symlink("secret", dir.path().join("outside/link")).unwrap();
            fs::create_dir(dir.path().join("outside/sub")).unwrap();
            symlink("..", dir.path().join("outside/sub/up")).unwrap();
            let (mut to, mut from) = (root.cursor(), other.cursor());
            to.hard_link_from(&mut from, "secret", "inside/ok").unwrap();
            let e = to
                .hard_link_from(&mut from, "link", "inside/l")
                .unwrap_err();
            assert_eq!(refused(&e), Refusal::NotRegularFile);
            assert!(fs::symlink_metadata(dir.path().join("root/inside/l")).is_err());
            let e = to
                .hard_link_from(&mut from, "sub/up/secret", "inside/u")
                .unwrap_err();
            assert_eq!(refused(&e), Refusal::SymbolicLink);
        }

        #[test]
        fn pipes_and_devices_are_refused_without_blocking() {
            let (dir, root) = setup();
            let fifo = dir.path().join("root/inside/fifo");
            assert!(
                std::process::Command::new("mkfifo")
                    .arg(&fifo)
                    .status()
                    .unwrap()
                    .success()
            );
            symlink("/dev/zero", dir.path().join("root/inside/zero")).unwrap();
            assert_eq!(
                refused(&root.read("inside/fifo", 10).unwrap_err()),
                Refusal::NotRegularFile
            );
            assert_eq!(
                refused(&root.read("inside/zero", 10).unwrap_err()),
                Refusal::NotRegularFile
            );
            assert_eq!(
                refused(&read_regular(&fifo, 10).unwrap_err()),
                Refusal::NotRegularFile
            );
            assert_eq!(
                refused(&read_regular(&dir.path().join("root/inside/zero"), 10).unwrap_err()),
                Refusal::NotRegularFile
            );
        }

        #[test]
        fn the_walk_without_openat2_refuses_the_same_paths() {
            let (dir, root) = setup();
            symlink(
                dir.path().join("outside"),
                dir.path().join("root/inside/dir"),
            )
            .unwrap();
            fs::create_dir(dir.path().join("root/inside/real")).unwrap();
            let walked = sys::walk_for_tests(&root, "inside/dir/x");
            assert_eq!(refused(&walked.unwrap_err()), Refusal::SymbolicLink);
            assert!(sys::walk_for_tests(&root, "inside/real").is_ok());
        }
    }
}
