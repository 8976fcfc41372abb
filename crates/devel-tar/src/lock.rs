//! The lock that serialises unpack and reconcile between processes.
//!
//! It is an exclusive `flock` on the devel package directory
//! `SP/rocm_sdk_devel/` itself, not on a lock file: pip created that
//! directory and removes it on uninstall, so there is no extra file to record
//! or to leave behind, and a lock held by a killed process is released by the
//! kernel.

use std::fs::File;
use std::path::Path;

use crate::error::Error;

/// Held while unpacking or reconciling; released on drop (or process death).
#[derive(Debug)]
pub(crate) struct SiteLock {
    _dir: File,
}

impl SiteLock {
    /// Blocks until the exclusive lock on `dir` is held.
    pub(crate) fn acquire(dir: &Path) -> Result<Self, Error> {
        let file = File::open(dir).map_err(|e| Error::read("open for locking", dir, e))?;
        file.lock().map_err(|e| Error::read("lock", dir, e))?;
        Ok(Self { _dir: file })
    }
}
