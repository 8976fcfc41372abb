//! Atomic outputs: a package appears under its final name complete, or not
//! at all.

use std::fs::File;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::Error;

/// A temporary file in the destination directory, renamed on success and
/// removed if dropped before that.
#[derive(Debug)]
pub(crate) struct AtomicOutput {
    temp: NamedTempFile,
    destination: PathBuf,
}

impl AtomicOutput {
    /// Creates `.{file_name}.*.tmp` in `dir` (same file system, so the final
    /// rename is atomic).
    pub(crate) fn create(dir: &Path, file_name: &str) -> Result<Self, Error> {
        let destination = dir.join(file_name);
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{file_name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|source| Error::Output {
                path: destination.clone(),
                source,
            })?;
        Ok(Self { temp, destination })
    }

    /// A second handle on the temporary file (read and write).
    pub(crate) fn file(&self) -> Result<File, Error> {
        self.temp
            .as_file()
            .try_clone()
            .map_err(|source| self.error(source))
    }

    /// The final path.
    pub(crate) fn destination(&self) -> &Path {
        &self.destination
    }

    /// Gives the file its final name (replacing an older one).
    pub(crate) fn commit(self) -> Result<PathBuf, Error> {
        let Self { temp, destination } = self;
        // A temp file is created 0o600; packages are ordinary readable files.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|source| Error::Output {
                    path: destination.clone(),
                    source,
                })?;
        }
        temp.persist(&destination).map_err(|e| Error::Output {
            path: destination.clone(),
            source: e.error,
        })?;
        Ok(destination)
    }

    fn error(&self, source: std::io::Error) -> Error {
        Error::Output {
            path: self.destination.clone(),
            source,
        }
    }
}
