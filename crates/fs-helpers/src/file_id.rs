//! Which file a directory entry or an open file is, so two names of one
//! file (hard links) are recognised on every host: `(st_dev, st_ino)` on
//! Unix, `(volume serial number, file index)` on Windows.
//!
//! Unix reads both numbers from metadata the caller already has; Windows
//! needs a handle (std keeps the file index behind an unstable API), so
//! there the entry is opened for attributes only, without following a
//! reparse point.
//!
//! Telling whether two paths are hard links of one file, from another
//! program:
//!
//! ```
//! use std::fs;
//! use fs_helpers::file_id::same_entry;
//!
//! let dir = tempfile::tempdir()?;
//! let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
//! fs::write(&a, "x")?;
//! fs::hard_link(&a, &b)?;
//! fs::write(&c, "x")?;
//! let meta = |p: &std::path::Path| fs::symlink_metadata(p);
//! assert!(same_entry(&a, &meta(&a)?, &b, &meta(&b)?));
//! assert!(!same_entry(&a, &meta(&a)?, &c, &meta(&c)?));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// Whether the entries `a` and `b` (with their `symlink_metadata`) are one
/// file; an identity that cannot be read counts as "no".
pub fn same_entry(a: &Path, a_meta: &Metadata, b: &Path, b_meta: &Metadata) -> bool {
    match (FileId::of_entry(a, a_meta), FileId::of_entry(b, b_meta)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The identity of one file on one file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    device: u64,
    index: u64,
}

impl FileId {
    /// The file at `path`, whose `symlink_metadata` is `meta`.
    #[cfg(unix)]
    pub fn of_entry(_path: &Path, meta: &Metadata) -> io::Result<Self> {
        Ok(Self::from_unix(meta))
    }

    /// The file at `path`, whose `symlink_metadata` is `meta`.
    #[cfg(windows)]
    pub fn of_entry(path: &Path, _meta: &Metadata) -> io::Result<Self> {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE,
            FILE_SHARE_READ, FILE_SHARE_WRITE,
        };
        // No access rights: reading attributes needs none, and a file
        // another process holds open still answers. Backup semantics let a
        // directory be opened.
        let file = std::fs::OpenOptions::new()
            .access_mode(0)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
            .open(path)?;
        Self::of_handle(&file)
    }

    /// An open file, whose metadata is `meta`.
    #[cfg(unix)]
    pub fn of_file(_file: &File, meta: &Metadata) -> io::Result<Self> {
        Ok(Self::from_unix(meta))
    }

    /// An open file, whose metadata is `meta`.
    #[cfg(windows)]
    pub fn of_file(file: &File, _meta: &Metadata) -> io::Result<Self> {
        Self::of_handle(file)
    }

    /// The file's number on its device: the inode number on Unix, the
    /// file index on Windows.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The file numbered `index` on device (or volume) `device`.
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn from_parts(device: u64, index: u64) -> Self {
        Self { device, index }
    }

    #[cfg(unix)]
    fn from_unix(meta: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            device: meta.dev(),
            index: meta.ino(),
        }
    }

    #[cfg(windows)]
    #[allow(unsafe_code)]
    pub(crate) fn of_handle(file: &File) -> io::Result<Self> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
        };
        // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value
        // (integers and FILETIMEs only).
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the handle is open for the duration of the call and
        // `info` is a writable structure of the type the call fills.
        if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &raw mut info) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            device: u64::from(info.dwVolumeSerialNumber),
            index: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::FileId;
    use std::fs;

    fn id(path: &std::path::Path) -> FileId {
        FileId::of_entry(path, &fs::symlink_metadata(path).unwrap()).unwrap()
    }

    #[test]
    fn hard_links_are_one_file_and_copies_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, "x").unwrap();
        fs::hard_link(&a, dir.path().join("b")).unwrap();
        fs::copy(&a, dir.path().join("c")).unwrap();
        assert_eq!(id(&a), id(&dir.path().join("b")));
        assert_ne!(id(&a), id(&dir.path().join("c")));
        assert_ne!(id(&a), id(dir.path()));
    }

    #[test]
    fn an_open_file_is_the_entry_it_was_opened_from() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, "x").unwrap();
        let file = fs::File::open(&a).unwrap();
        let meta = file.metadata().unwrap();
        assert_eq!(FileId::of_file(&file, &meta).unwrap(), id(&a));
    }
}
