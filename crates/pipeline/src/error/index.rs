//! Why [`index`](crate::index()) failed.

use std::path::PathBuf;

use super::IoError;

/// Why a dist directory could not be indexed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// A file-system step failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// `index` of a path that is no directory.
    #[error("{} is not a directory; pass the dist directory to index", dir.display())]
    NotADirectory {
        /// The path as given.
        dir: PathBuf,
    },
    /// A dist directory holds what no page may link (a package name on
    /// something other than a regular file).
    #[error(transparent)]
    Refused(#[from] wheel_writer::dist_dir::NotRegular),
    /// `index` of a directory without packages.
    #[error("{} holds no wheel or sdist; build the packages first", dir.display())]
    NoPackages {
        /// The directory.
        dir: PathBuf,
    },
    /// `per_family` on a directory without family subdirectories.
    #[error(
        "{} has no per-family subdirectories (dist/{{F}}/, written by legacy builds with several \
         families); index it as one release, not per family",
        dir.display()
    )]
    NoFamilyDirectories {
        /// The directory.
        dir: PathBuf,
    },
    /// One file name twice in a directory indexed as one page.
    #[error(
        "{} holds {file_name} twice ({first} and {second}); one page cannot offer both: index \
         a legacy release with several families per family",
        dir.display()
    )]
    FileNameTwice {
        /// The directory.
        dir: PathBuf,
        /// The file name.
        file_name: String,
        /// Its first path below the directory.
        first: String,
        /// Its second.
        second: String,
    },
    /// A package's file name cannot be parsed.
    #[error("cannot index {}", path.display())]
    Unindexable {
        /// The package.
        path: PathBuf,
        /// Why.
        source: pypa_formats::filename::FilenameError,
    },
    /// An sdist's `PKG-INFO` cannot be read (the error names it).
    #[error(transparent)]
    Sdist(#[from] release_check::SdistError),
    /// A listed file is neither wheel nor sdist.
    #[error("{} is neither a wheel nor an sdist", path.display())]
    NotAPackage {
        /// The file.
        path: PathBuf,
    },
    /// A wheel's `METADATA` cannot be read.
    #[error(
        "cannot read the METADATA of {}; rebuild the wheel or remove it from the directory",
        path.display()
    )]
    WheelMetadata {
        /// The wheel.
        path: PathBuf,
        /// Why.
        source: Box<wheel_writer::ReadError>,
    },
    /// A package's core metadata (`METADATA`, `PKG-INFO`) is one readers
    /// could read differently (docs/verify.md#one-reading).
    #[error(
        "member {member} of {} is not core metadata every installer reads the same way; rebuild the package or remove it from the directory",
        path.display()
    )]
    CoreMetadata {
        /// The package.
        path: PathBuf,
        /// The metadata file.
        member: String,
        /// Why.
        source: pypa_formats::core_metadata::MetadataError,
    },
}
