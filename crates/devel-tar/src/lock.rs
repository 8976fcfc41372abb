//! The lock that serialises unpack and reconcile between processes.
//!
//! It is an exclusive `flock` on the devel package directory
//! `SP/rocm_sdk_devel/` itself, not on a lock file: pip created that
//! directory and removes it on uninstall, so there is no extra file to record
//! or to leave behind, and a lock held by a killed process is released by the
//! kernel.

use std::fs::File;

use crate::error::Error;
use crate::site::InstalledDevel;

/// Held while unpacking or reconciling; released on drop (or process death).
#[derive(Debug)]
pub(crate) struct SiteLock {
    _dir: File,
}

impl SiteLock {
    /// Blocks until the exclusive lock on the devel package directory of
    /// `site` is held (opened through site-packages, never through a link).
    #[cfg(unix)]
    pub(crate) fn acquire(site: &InstalledDevel) -> Result<Self, Error> {
        let dir = site.package()?;
        let file = dir
            .as_file()
            .map_err(|e| Error::read("open for locking", dir.path(), e))?;
        file.lock()
            .map_err(|e| Error::read("lock", dir.path(), e))?;
        Ok(Self { _dir: file })
    }

    /// Windows locks files, not directories: the lock is on
    /// `dir/LOCK_FILE`, created delete-on-close, so it is gone once the
    /// last process holding it closes it (or dies) and nothing is left
    /// for `pip uninstall` to miss.
    #[cfg(windows)]
    pub(crate) fn acquire(site: &InstalledDevel) -> Result<Self, Error> {
        use std::os::windows::fs::OpenOptionsExt;
        /// `FILE_FLAG_DELETE_ON_CLOSE`.
        const DELETE_ON_CLOSE: u32 = 0x0400_0000;
        /// `FILE_FLAG_OPEN_REPARSE_POINT`: a link at the name is opened
        /// itself (and fails the lock), never followed.
        const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        /// `FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE`.
        const SHARE_ALL: u32 = 0x7;
        // The directory stays held (not renamed) while the lock file is used.
        let dir = site.package()?;
        let path = dir.display_path(LOCK_FILE);
        let mut attempts = 0;
        let file = loop {
            let opened = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .share_mode(SHARE_ALL)
                .custom_flags(DELETE_ON_CLOSE | OPEN_REPARSE_POINT)
                .open(&path);
            match opened {
                Ok(file) => break file,
                // The previous holder's file is being deleted: open anew.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && attempts < 100 => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => return Err(Error::read("open for locking", &path, e)),
            }
        };
        file.lock().map_err(|e| Error::read("lock", &path, e))?;
        Ok(Self { _dir: file })
    }
}

/// The lock file inside the devel package directory on Windows.
#[cfg(windows)]
const LOCK_FILE: &str = ".rocm-sdk.lock";
