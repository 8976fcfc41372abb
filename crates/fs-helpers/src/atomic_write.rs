//! Files that appear under their final name complete, or not at all.
//!
//! Every file the workspace writes for others to read (packages, the devel
//! tar, JSON manifests, index pages, man pages) goes through here: the
//! bytes go to a temporary file beside the target (same directory, so the
//! same file system) with a unique name `.{name}.XXXXXX.tmp`, and the file is
//! renamed over the target (an atomic replace on Unix and on Windows). On an
//! error, or when an [`AtomicFile`] is dropped without
//! [`AtomicFile::commit`], the temporary file is removed.
//!
//! Nothing is synced to disk, as compilers, linkers and `patchelf` do not:
//! the guarantee is against an interrupted or failing writer (a reader sees
//! the old file or the whole new one), not against a power failure, and a
//! sync per file made an ELF edit three times slower (docs/performance.md).
//!
//! A file whose temporary must have a name known in advance (listed in an
//! installed distribution's `RECORD`, so that even a killed writer leaves
//! only listed files) goes through [`write_atomic_via`] instead, with the
//! same guarantees.
//!
//! ```
//! use std::io::Write;
//! use fs_helpers::atomic_write::{AtomicFile, write_atomic};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("index.html");
//! write_atomic(&path, b"<html></html>\n")?;
//!
//! let mut file = AtomicFile::create(dir.path().join("big.bin"))?;
//! file.write_all(&[0; 4096])?;
//! let written = file.commit()?;
//! assert_eq!(std::fs::read(written)?.len(), 4096);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// A temporary file beside `destination`, renamed over it by
/// [`commit`](Self::commit) and removed if dropped before that.
#[derive(Debug)]
pub struct AtomicFile {
    temp: NamedTempFile,
    destination: PathBuf,
}

impl AtomicFile {
    /// Creates `.{file name}.XXXXXX.tmp` in the directory of `destination`
    /// (which must exist). It is created with the permissions a plain
    /// `File::create` gives (`0o666` less the umask on Unix), not the
    /// owner-only ones of a usual temporary file.
    pub fn create(destination: impl Into<PathBuf>) -> io::Result<Self> {
        let destination = destination.into();
        let name = destination.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} names no file", destination.display()),
            )
        })?;
        let dir = match destination.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let prefix = format!(".{}.", name.to_string_lossy());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir)?;
        Ok(Self { temp, destination })
    }

    /// The temporary file (to read back, or to set permissions on).
    pub fn file(&self) -> &File {
        self.temp.as_file()
    }

    /// The path the file will have once committed.
    pub fn destination(&self) -> &Path {
        &self.destination
    }

    /// Renames the file over its destination (replacing an older file);
    /// returns the destination.
    pub fn commit(self) -> io::Result<PathBuf> {
        let Self { temp, destination } = self;
        temp.persist(&destination).map_err(|e| e.error)?;
        Ok(destination)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

/// Writes `bytes` to `path` atomically (see the module documentation): a
/// reader sees the old file or the new one, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit().map(drop)
}

/// Writes `bytes` to `path` atomically through the fixed temporary path
/// `temp`, which must be in the same directory: written, renamed over
/// `path`, and removed if any step fails.
///
/// The fixed name is for temporaries that must be known in advance (listed
/// in a `RECORD`); the caller makes sure no one else writes `temp` at the
/// same time (a lock), since a second writer would share it.
pub fn write_atomic_via(path: &Path, temp: &Path, bytes: &[u8]) -> io::Result<()> {
    let write = || -> io::Result<()> {
        let mut file = File::create(temp)?;
        file.write_all(bytes)?;
        drop(file);
        std::fs::rename(temp, path)
    };
    write().inspect_err(|_| {
        // Best effort: the error that matters is the one returned.
        let _ = std::fs::remove_file(temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(entries(dir.path()), ["a.json"]);
    }

    #[test]
    fn a_dropped_file_leaves_the_old_one_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        fs::write(&path, "old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"half").unwrap();
        assert_eq!(
            entries(dir.path()).len(),
            2,
            "the temporary file is beside it"
        );
        drop(file);
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(entries(dir.path()), ["a.json"]);
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a-dir");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("inside"), "x").unwrap();
        assert!(write_atomic(&path, b"new").is_err());
        assert_eq!(entries(dir.path()), ["a-dir"]);
    }

    #[test]
    fn a_fixed_temporary_is_used_and_never_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let temp = dir.path().join("state.json.tmp");
        // A temporary left by an earlier, killed writer is simply replaced.
        fs::write(&temp, "stale").unwrap();
        write_atomic_via(&path, &temp, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(entries(dir.path()), ["state.json"]);

        let blocked = dir.path().join("a-dir");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("inside"), "x").unwrap();
        let temp = dir.path().join("a-dir.tmp");
        assert!(write_atomic_via(&blocked, &temp, b"new").is_err());
        assert_eq!(entries(dir.path()), ["a-dir", "state.json"]);
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(&dir.path().join("no/such/a.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_gets_ordinary_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"x").unwrap();
        let plain = dir.path().join("plain");
        fs::write(&plain, b"x").unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode(),
            fs::metadata(&plain).unwrap().permissions().mode()
        );
    }
}
