//! A dist directory: the wheels and sdists it holds, as a publisher or an
//! index reads them, and the private staging directories a build keeps
//! beside its packages, which no reader ever lists.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The name prefix of a build's private staging directory beside `dist/`:
/// it holds unfinished packages, which no check or index ever reads.
pub const STAGING_PREFIX: &str = ".therock-package-staging-";

/// Whether a directory entry named `name` is (or belongs to) a staging
/// directory.
pub fn is_staging(name: &str) -> bool {
    name.starts_with(STAGING_PREFIX)
}

/// What [`list_packages`] found under a dist directory.
#[derive(Debug, Default)]
pub struct Listing {
    /// Every `*.whl` and `*.tar.gz` that is a regular file, sorted.
    pub packages: Vec<PathBuf>,
    /// What a published directory may not hold, sorted: a package name on
    /// a symlink or on something that is not a regular file (a FIFO, a
    /// device), and a symlinked directory, whose packages would be served
    /// but never checked.
    pub refused: Vec<NotRegular>,
}

/// An entry of a dist directory that [`Listing::refused`] names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} is {what}; a dist directory holds regular files only: put the file itself there, or remove it",
    .path.display()
)]
pub struct NotRegular {
    /// The entry.
    pub path: PathBuf,
    /// What it is (`a symlink to ../x.whl`, `a FIFO`).
    pub what: String,
}

/// Whether `name` is a wheel's or an sdist's.
fn is_package_name(name: &str) -> bool {
    // Wheel and sdist names are lower-case by specification.
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    let package = name.ends_with(".whl") || name.ends_with(".tar.gz");
    package
}

/// What a directory entry that is neither a directory nor a regular file is.
fn special_kind(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device file";
        }
    }
    let _ = kind;
    "not a regular file"
}

/// Lists `*.whl` and `*.tar.gz` under `dir` (recursively, sorted), never
/// inside a build's staging directory; symlinks and special files with a
/// package's name, and symlinked directories, are listed as refused
/// (docs/behaviour.md#member-rules), never followed.
pub fn list_packages(dir: &Path) -> io::Result<Listing> {
    let mut out = Listing::default();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() {
                // A build's private directory holds unfinished packages.
                if !is_staging(&name) {
                    stack.push(path);
                }
            } else if kind.is_symlink() {
                let to_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
                if is_package_name(&name) || to_dir {
                    let target = std::fs::read_link(&path)
                        .map_or_else(|_| "?".to_owned(), |t| t.display().to_string());
                    let what = if to_dir {
                        format!("a symlink to the directory {target}")
                    } else {
                        format!("a symlink to {target}")
                    };
                    out.refused.push(NotRegular { path, what });
                }
            } else if is_package_name(&name) {
                if kind.is_file() {
                    out.packages.push(path);
                } else {
                    out.refused.push(NotRegular {
                        path,
                        what: special_kind(kind).to_owned(),
                    });
                }
            }
        }
    }
    out.packages.sort();
    out.refused.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Opens the package at `path` for reading the way every reader of a
/// dist directory must: never through a symlink (`O_NOFOLLOW`), without
/// blocking on a FIFO (`O_NONBLOCK`), and only when what was opened is a
/// regular file, so a file swapped after [`list_packages`] listed it is
/// refused rather than followed.
pub fn open_package(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file",
                path.display(),
                if kind.is_dir() {
                    "a directory"
                } else {
                    special_kind(kind)
                }
            ),
        ));
    }
    Ok(file)
}
