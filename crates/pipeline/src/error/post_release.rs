//! Why [`post_release`](crate::post_release()) failed.

use std::path::PathBuf;

use super::{IoError, ReadMetadataError, WriteError};

/// Why a post-release of the selector could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostReleaseError {
    /// A file-system step failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The release's metadata file cannot be used.
    #[error(transparent)]
    Metadata(#[from] ReadMetadataError),
    /// The sdist cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A selector's `PKG-INFO` or document cannot be read (the error names it).
    #[error(transparent)]
    Sdist(#[from] release_check::SdistError),
    /// The version is not a post-release of the release.
    #[error(
        "{version} is not a post-release of the release {release}: a post-release of the \
         selector is {release}.postN (a patch release or another .dev is a new release; \
         build it with `therock-package build`)"
    )]
    NotAPostRelease {
        /// What was asked for.
        version: String,
        /// The release's version.
        release: String,
    },
    /// The dist directory holds no core wheel to take the release from.
    #[error(
        "{} holds no rocm-sdk-core wheel: post-release needs the dist/ directory of the \
         release it publishes the selector over",
        dist_dir.display()
    )]
    NoCore {
        /// The directory.
        dist_dir: PathBuf,
    },
    /// Core wheels of two versions.
    #[error(
        "{} holds rocm-sdk-core wheels of {first} and {second}: keep one release in it",
        dist_dir.display()
    )]
    Mixed {
        /// The directory.
        dist_dir: PathBuf,
        /// One version.
        first: String,
        /// Another.
        second: String,
    },
    /// The release's own selector is missing.
    #[error(
        "{} holds no rocm-{release}.tar.gz: post-release starts from the release's own \
         selector; put it back beside the wheels",
        dist_dir.display()
    )]
    NoSelector {
        /// The directory.
        dist_dir: PathBuf,
        /// The release's version.
        release: String,
    },
    /// The release's selector has an unreadable document.
    #[error("the document of {} cannot be read; rebuild the release's selector", path.display())]
    Document {
        /// The sdist.
        path: PathBuf,
        /// Why.
        source: dist_info::document::DocumentError,
    },
    /// The release's selector's document is of another version.
    #[error(
        "the document of {} says {found}, not the release {release}; rebuild the release's \
         selector",
        path.display()
    )]
    DocumentVersion {
        /// The sdist.
        path: PathBuf,
        /// What its document says.
        found: String,
        /// The release's version.
        release: String,
    },
    /// The post-release exists already.
    #[error("{} exists already; remove it to build it again", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
}
