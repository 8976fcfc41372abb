//! The one error type of this crate: what went wrong, and with which file.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An error from reading, planning or writing an ELF edit.
///
/// It names the file when the caller gave a path (see [`Error::at`]); match
/// on [`Error::kind`] to react to a particular cause.
///
/// It prints as `file: what went wrong`; its [`source`](std::error::Error::source)
/// is the kind's own cause (the I/O error), so a printed chain says each
/// thing once.
#[derive(Debug)]
pub struct Error {
    path: Option<PathBuf>,
    kind: ErrorKind,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", FileName(self.path.as_deref()), self.kind)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the source or writing the output failed.
    #[error(
        "input/output failed; check that the file exists and is readable, and that the destination is writable"
    )]
    Io(#[from] io::Error),
    /// A structure the file's headers point to lies past its end.
    #[error("the file is truncated: {0} lies past its end; re-extract or rebuild it")]
    Truncated(String),
    /// The file is ELF but its structures contradict each other.
    #[error("the file is not a well-formed ELF file: {0}; re-extract or rebuild it")]
    Malformed(String),
    /// The file is well-formed, but this crate does not edit files of its kind.
    #[error("the file cannot be edited: {0}; ship it unchanged or leave it out of the package")]
    Unsupported(String),
    /// No runtime alias can stand for this library under the name asked for.
    #[error("no runtime alias can stand for it: {0}")]
    Alias(String),
    /// A requested search-path entry cannot appear in an RPATH.
    #[error("invalid search-path entry {0:?}: entries must be non-empty and contain no ':' or NUL")]
    InvalidSearchPath(String),
    /// The planned edit did not pass verification; nothing was written.
    #[error(
        "the edited file failed verification ({0}); nothing was written; please report this file"
    )]
    Verification(String),
    /// The source handed to an [`Edit`](crate::Edit) is not the file it was planned for.
    #[error(
        "the source is {actual} bytes long but the edit was planned for {expected} bytes; pass the same file that was parsed"
    )]
    SourceChanged {
        /// Length the edit was planned for.
        expected: u64,
        /// Length of the source given now.
        actual: u64,
    },
    /// The source has the length of the file that was parsed but not its
    /// bytes: another file, or the same one rewritten since.
    #[error(
        "the source's bytes at {offset:#x} differ from those of the file that was parsed; pass the same file, unchanged since it was parsed"
    )]
    SourceDiffers {
        /// Where the first range that differs starts.
        offset: u64,
    },
}

impl Error {
    /// An error with no file name yet.
    pub fn new(kind: ErrorKind) -> Self {
        Self { path: None, kind }
    }

    /// Names the file this error is about (keeps an earlier name).
    #[must_use]
    pub fn at(mut self, path: &Path) -> Self {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }

    /// The file this error is about, when the caller named it.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The cause.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Self {
        Self::new(ErrorKind::Io(err))
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn truncated(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Truncated(what.into()))
}

pub(crate) fn malformed(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Malformed(what.into()))
}

pub(crate) fn unsupported(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Unsupported(what.into()))
}

struct FileName<'a>(Option<&'a Path>);

impl fmt::Display for FileName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, "{}", path.display()),
            None => f.write_str("ELF input"),
        }
    }
}
