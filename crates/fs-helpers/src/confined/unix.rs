//! The confined directory on Unix: descriptors and `*at` calls.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{Entry, EntryKind, Refusal, Refused};
use crate::file_id::FileId;

/// Directories are opened without following a link as the last
/// component, and closed on `exec`.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// How an existing file is opened.
#[derive(Debug, Clone, Copy)]
pub(super) enum Access {
    Read,
    Append,
    Write,
}

/// An open directory.
#[derive(Debug)]
pub(super) struct Handle {
    fd: OwnedFd,
}

impl Handle {
    pub(super) fn open_root(path: &Path) -> io::Result<Self> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Self {
            fd: rustix::fs::open(path, flags, Mode::empty())?,
        })
    }

    pub(super) fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            fd: self.fd.try_clone()?,
        })
    }

    pub(super) fn owner(&self) -> io::Result<Option<u32>> {
        Ok(Some(rustix::fs::fstat(&self.fd)?.st_uid))
    }

    pub(super) fn as_file(&self) -> io::Result<File> {
        Ok(File::from(self.fd.try_clone()?))
    }

    /// The directory `rel` (clean, possibly several components) below
    /// this one, reached without following any link.
    pub(super) fn open_below(&self, _base: &Path, rel: &str) -> io::Result<Self> {
        let opened = if rel.contains('/') {
            open_beneath(&self.fd, rel)
        } else {
            rustix::fs::openat(&self.fd, rel, DIR_FLAGS, Mode::empty()).map_err(io::Error::from)
        };
        opened
            .map(|fd| Self { fd })
            .map_err(|e| explain(&self.fd, rel, e))
    }

    pub(super) fn open_child_dir(&self, full: &Path, name: &str) -> io::Result<Self> {
        self.open_below(full, name)
    }

    pub(super) fn entry(&self, _full: &Path, name: &str) -> io::Result<Option<Entry>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(entry_of(&stat))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn read_link(&self, _full: &Path, name: &str) -> io::Result<String> {
        let text = rustix::fs::readlinkat(&self.fd, name, Vec::new())?;
        text.into_string()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "link text is not UTF-8"))
    }

    pub(super) fn open_file(&self, _full: &Path, name: &str, access: Access) -> io::Result<File> {
        let base = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let flags = match access {
            Access::Read => OFlags::RDONLY,
            Access::Append => OFlags::WRONLY | OFlags::APPEND,
            Access::Write => OFlags::WRONLY,
        } | base;
        match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(File::from(fd)),
            // A link (O_NOFOLLOW), a pipe nobody reads, a directory.
            Err(Errno::LOOP | Errno::NXIO | Errno::ISDIR) => {
                Err(Refused::error(name, Refusal::NotRegularFile))
            }
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn list(&self, _full: &Path) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name.to_vec()));
            }
        }
        Ok(names)
    }

    pub(super) fn create_dir(&self, _full: &Path, name: &str, mode: u32) -> io::Result<()> {
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode))?;
        Ok(())
    }

    pub(super) fn create_new(&self, _full: &Path, name: &str, mode: u32) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode))?;
        Ok(File::from(fd))
    }

    pub(super) fn rename_within(
        &self,
        from_full: &Path,
        from: &str,
        to_full: &Path,
        to: &str,
    ) -> io::Result<()> {
        self.rename_to(from_full, from, self, to_full, to)
    }

    pub(super) fn rename_to(
        &self,
        _from_full: &Path,
        from: &str,
        to_dir: &Handle,
        _to_full: &Path,
        to: &str,
    ) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &to_dir.fd, to)?;
        Ok(())
    }

    pub(super) fn remove(&self, _full: &Path, name: &str, dir: bool) -> io::Result<()> {
        let flags = if dir {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        rustix::fs::unlinkat(&self.fd, name, flags)?;
        Ok(())
    }

    pub(super) fn remove_all(&self, _full: &Path, name: &str) -> io::Result<()> {
        remove_entry(&self.fd, name, None)
    }

    pub(super) fn hard_link(
        &self,
        _source_full: &Path,
        source: &str,
        to_dir: &Handle,
        _link_full: &Path,
        link: &str,
    ) -> io::Result<()> {
        // No AT_SYMLINK_FOLLOW: a link at `source` would be linked itself,
        // which the caller's check afterwards refuses.
        rustix::fs::linkat(&self.fd, source, &to_dir.fd, link, AtFlags::empty())?;
        Ok(())
    }

    pub(super) fn symlink(&self, _full: &Path, text: &str, name: &str) -> io::Result<()> {
        rustix::fs::symlinkat(text, &self.fd, name)?;
        Ok(())
    }
}

fn entry_of(stat: &rustix::fs::Stat) -> Entry {
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Dir,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    };
    Entry {
        kind,
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        id: FileId::from_parts(stat.st_dev as u64, stat.st_ino as u64),
        len: u64::try_from(stat.st_size).unwrap_or(0),
        owner: Some(stat.st_uid),
    }
}

#[allow(clippy::unnecessary_wraps)] // `None` on Windows
pub(super) fn current_user() -> Option<u32> {
    Some(rustix::process::geteuid().as_raw())
}

pub(super) fn is_regular(file: &File) -> io::Result<bool> {
    Ok(FileType::from_raw_mode(rustix::fs::fstat(file)?.st_mode) == FileType::RegularFile)
}

pub(super) fn open_regular_path(path: &Path) -> io::Result<File> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let refused = || Refused::error(&path.display().to_string(), Refusal::NotRegularFile);
    let file = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => File::from(fd),
        Err(Errno::LOOP | Errno::NXIO) => return Err(refused()),
        Err(e) => return Err(e.into()),
    };
    if is_regular(&file)? {
        Ok(file)
    } else {
        Err(refused())
    }
}

/// Removes `name` in `dir`: a directory with everything in it, anything
/// else (a link included) as itself. `kind` is what the directory listing
/// said, when it said.
fn remove_entry(
    dir: &OwnedFd,
    name: impl rustix::path::Arg + Copy,
    kind: Option<FileType>,
) -> io::Result<()> {
    let kind = match kind {
        Some(kind) if kind != FileType::Unknown => kind,
        _ => FileType::from_raw_mode(
            rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode,
        ),
    };
    if kind == FileType::Directory {
        match rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
            Ok(child) => {
                clear(&child)?;
                rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
                return Ok(());
            }
            // Replaced by something else meanwhile: remove that instead.
            Err(Errno::NOTDIR | Errno::LOOP) => {}
            Err(e) => return Err(e.into()),
        }
    }
    rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
    Ok(())
}

/// Empties the open directory `dir`.
fn clear(dir: &OwnedFd) -> io::Result<()> {
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            entries.push((name.to_owned(), entry.file_type()));
        }
    }
    for (name, kind) in entries {
        remove_entry(dir, name.as_c_str(), Some(kind))?;
    }
    Ok(())
}

/// Whether this kernel has `openat2` (unknown until the first call).
#[cfg(target_os = "linux")]
static OPENAT2: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Opens the directory `rel` below `dir` with `openat2`, where the kernel
/// has it; else by [`walk`].
#[cfg(target_os = "linux")]
fn open_beneath(dir: &OwnedFd, rel: &str) -> io::Result<OwnedFd> {
    use rustix::fs::ResolveFlags;
    use std::sync::atomic::Ordering;
    const UNKNOWN: u8 = 0;
    const PRESENT: u8 = 1;
    const ABSENT: u8 = 2;
    if OPENAT2.load(Ordering::Relaxed) != ABSENT {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(dir, rel, DIR_FLAGS, Mode::empty(), resolve) {
            Ok(fd) => {
                OPENAT2.store(PRESENT, Ordering::Relaxed);
                return Ok(fd);
            }
            // Kernels before 5.6, and sandboxes (seccomp) that refuse it.
            Err(Errno::NOSYS | Errno::PERM | Errno::TOOBIG)
                if OPENAT2.load(Ordering::Relaxed) == UNKNOWN =>
            {
                OPENAT2.store(ABSENT, Ordering::Relaxed);
            }
            Err(e) => return Err(e.into()),
        }
    }
    walk(dir, rel)
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(dir: &OwnedFd, rel: &str) -> io::Result<OwnedFd> {
    walk(dir, rel)
}

/// Opens the directory `rel` below `dir` one component at a time, each
/// with `O_NOFOLLOW | O_DIRECTORY`: what `openat2` guarantees, on kernels
/// without it.
fn walk(dir: &OwnedFd, rel: &str) -> io::Result<OwnedFd> {
    let mut current: Option<OwnedFd> = None;
    for component in rel.split('/') {
        let base = current.as_ref().map_or(dir.as_fd(), AsFd::as_fd);
        current = Some(rustix::fs::openat(
            base,
            component,
            DIR_FLAGS,
            Mode::empty(),
        )?);
    }
    current.ok_or_else(|| io::ErrorKind::InvalidInput.into())
}

/// The walk, for the tests of kernels without `openat2`.
#[cfg(test)]
pub(super) fn walk_for_tests(dir: &super::Dir, rel: &str) -> io::Result<OwnedFd> {
    walk(&dir.inner.fd, rel).map_err(|e| explain(&dir.inner.fd, rel, e))
}

/// Tells a link met on the way (the kernel says `ELOOP`, `ENOTDIR`, or
/// `EXDEV` for a path leaving `dir`) from other errors.
fn explain(dir: &OwnedFd, rel: &str, error: io::Error) -> io::Error {
    match error.raw_os_error().map(Errno::from_raw_os_error) {
        Some(Errno::XDEV) => Refused::error(rel, Refusal::NotClean),
        Some(Errno::LOOP | Errno::NOTDIR) if goes_through_link(dir, rel) => {
            Refused::error(rel, Refusal::SymbolicLink)
        }
        _ => error,
    }
}

/// Whether a component of `rel` below `dir` is a symbolic link (looked at
/// one by one, without following any).
fn goes_through_link(dir: &OwnedFd, rel: &str) -> bool {
    let mut end = 0;
    loop {
        let next = rel[end..].find('/').map_or(rel.len(), |i| end + i);
        let prefix = &rel[..next];
        let (parent, name) = prefix.rsplit_once('/').unwrap_or(("", prefix));
        let stat = if parent.is_empty() {
            rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        } else {
            match walk(dir, parent) {
                Ok(fd) => rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW),
                Err(_) => return false,
            }
        };
        match stat {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => return true,
            Ok(_) if next < rel.len() => end = next + 1,
            _ => return false,
        }
    }
}
