//! Why a tree could not be checked at all (problems inside single files are
//! part of the [`crate::LinkReport`], not errors).

use std::io;
use std::path::PathBuf;

/// Why a tree could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A directory of the tree could not be listed, or a file not opened.
    #[error("cannot read {path}; check that it exists and is readable")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The root of a [`crate::DirTree`] is not a directory.
    #[error("{path} is not a directory; pass the site-packages directory to check")]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// A wheel is not a zip archive every installer reads the same way.
    #[error(
        "wheel {path} is not a zip archive every installer reads the same way; rebuild or re-download it"
    )]
    Zip {
        /// The wheel.
        path: PathBuf,
        /// What the zip reader refused.
        #[source]
        source: pypa_formats::zip_archive::ZipError,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }

    pub(crate) fn zip(
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(pypa_formats::zip_archive::ZipError) -> Self {
        let path = path.into();
        move |source| Self::Zip { path, source }
    }
}
