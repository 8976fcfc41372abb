//! What identifies a source file's bytes between indexing and reading.
//!
//! A build plans from what it read when it indexed and classified the
//! artifacts (names from SONAMEs, search paths, sizes) and reads the bytes
//! again when it writes each package. A file rewritten in between would
//! ship bytes the plan never saw, under a name chosen from the old ones;
//! so every source records its identity when it is indexed, and every
//! later open compares the open file's against it.

use std::fs::{File, Metadata, OpenOptions};
use std::path::Path;
use std::time::SystemTime;

use crate::{Error, Result};

/// Which file, and its state: device and inode (volume and file index on
/// Windows), size, modification time and, on Unix, inode-change time.
///
/// A file replaced (another inode), truncated or extended (another size),
/// or rewritten in place (a new mtime, or a new ctime when the writer put
/// the mtime back) no longer has the identity it was indexed with. A
/// rewrite that keeps the size and falls within one tick of the file
/// system's clock for both times is not seen (as by `make` or `rsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    id: fs_helpers::file_id::FileId,
    len: u64,
    modified: Option<SystemTime>,
    /// `(st_ctime, st_ctime_nsec)`.
    changed: Option<(i64, i64)>,
}

impl FileIdentity {
    /// The identity of the open `file` at `path`, whose metadata is `meta`.
    pub(crate) fn of(path: &Path, file: &File, meta: &Metadata) -> Result<Self> {
        Ok(Self::from_id(
            fs_helpers::file_id::FileId::of_file(file, meta).map_err(|e| Error::io(path, e))?,
            meta,
        ))
    }

    /// The identity of the directory entry `path` (not followed), whose
    /// `symlink_metadata` is `meta`.
    pub(crate) fn of_entry(path: &Path, meta: &Metadata) -> Result<Self> {
        Ok(Self::from_id(
            fs_helpers::file_id::FileId::of_entry(path, meta).map_err(|e| Error::io(path, e))?,
            meta,
        ))
    }

    fn from_id(id: fs_helpers::file_id::FileId, meta: &Metadata) -> Self {
        Self {
            id,
            len: meta.len(),
            modified: meta.modified().ok(),
            changed: changed(meta),
        }
    }
}

#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)] // `None` on Windows, which has no ctime
fn changed(meta: &Metadata) -> Option<(i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.ctime(), meta.ctime_nsec()))
}

#[cfg(windows)]
fn changed(_meta: &Metadata) -> Option<(i64, i64)> {
    None
}

/// Opens a file that must be a regular file without blocking on a FIFO
/// that took its place; with `follow` false a symlink is not followed
/// either (a source file was indexed as the entry itself; an archive may
/// be a link into a download cache).
pub(crate) fn open_regular(path: &Path, follow: bool) -> Result<(File, Metadata)> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW },
    );
    // The reparse point itself, not its target: the file-type check below
    // refuses it.
    #[cfg(windows)]
    if !follow {
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        std::os::windows::fs::OpenOptionsExt::custom_flags(
            &mut options,
            FILE_FLAG_OPEN_REPARSE_POINT,
        );
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if !follow && e.raw_os_error() == Some(libc::ELOOP) {
            return Error::UnsupportedFileType {
                path: path.to_path_buf(),
                kind: "symlink".into(),
            };
        }
        Error::io(path, e)
    })?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::UnsupportedFileType {
            path: path.to_path_buf(),
            kind: crate::scan_dir::kind_of(meta.file_type()).into(),
        });
    }
    Ok((file, meta))
}

/// Opens `path` (following a symlink only with `follow`) and checks it is
/// still the file `identity` describes.
pub(crate) fn open_checked(path: &Path, identity: &FileIdentity, follow: bool) -> Result<File> {
    let (file, meta) = open_regular(path, follow).map_err(|e| match e {
        // Replaced by something that is not a file: it changed.
        Error::UnsupportedFileType { .. } => Error::SourceChanged {
            path: path.to_path_buf(),
        },
        other => other,
    })?;
    if FileIdentity::of(path, &file, &meta)? != *identity {
        return Err(Error::SourceChanged {
            path: path.to_path_buf(),
        });
    }
    Ok(file)
}
