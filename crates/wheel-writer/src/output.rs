//! Atomic outputs: a package appears under its final name complete, or not
//! at all.

use std::fs::File;
use std::path::{Path, PathBuf};

use fs_helpers::atomic_write::AtomicFile;

use crate::Error;

/// A temporary file in the destination directory (`fs_helpers::atomic_write`),
/// renamed on success and removed if dropped before that.
#[derive(Debug)]
pub(crate) struct AtomicOutput {
    temp: AtomicFile,
}

impl AtomicOutput {
    /// Creates `.{file_name}.*.tmp` in `dir` (same file system, so the final
    /// rename is atomic).
    pub(crate) fn create(dir: &Path, file_name: &str) -> Result<Self, Error> {
        let destination = dir.join(file_name);
        let temp = AtomicFile::create(&destination).map_err(|source| Error::Output {
            path: destination.clone(),
            source,
        })?;
        Ok(Self { temp })
    }

    /// A second handle on the temporary file (read and write).
    pub(crate) fn file(&self) -> Result<File, Error> {
        self.temp
            .file()
            .try_clone()
            .map_err(|source| self.error(source))
    }

    /// The final path.
    pub(crate) fn destination(&self) -> &Path {
        self.temp.destination()
    }

    /// Gives the file its final name (replacing an older one).
    pub(crate) fn commit(self) -> Result<PathBuf, Error> {
        // Packages are ordinary readable files whatever the umask.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            self.temp
                .file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|source| self.error(source))?;
        }
        let destination = self.temp.destination().to_path_buf();
        self.temp.commit().map_err(|source| Error::Output {
            path: destination,
            source,
        })
    }

    fn error(&self, source: std::io::Error) -> Error {
        Error::Output {
            path: self.temp.destination().to_path_buf(),
            source,
        }
    }
}
