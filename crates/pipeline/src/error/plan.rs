//! Why [`inspect`](crate::inspect()) or [`plan`](crate::plan()) failed, or
//! the planning a build starts with.

use std::io;
use std::path::PathBuf;

/// Why the artifacts could not be read or planned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The artifact directory cannot be read, or an artifact is malformed
    /// (the error names the file).
    #[error(transparent)]
    Artifacts(#[from] artifacts::Error),
    /// The artifacts cannot be merged into one tree.
    #[error("cannot merge the artifacts of {}", artifact_dir.display())]
    Merge {
        /// The artifact directory.
        artifact_dir: PathBuf,
        /// Why.
        source: artifacts::Error,
    },
    /// No version was given and the manifest records no usable one.
    #[error(transparent)]
    Version(#[from] dist_info::release_version::VersionChoiceError),
    /// The metadata file cannot be used.
    #[error(transparent)]
    Metadata(#[from] ReadMetadataError),
    /// The native `rocm-sdk` a core wheel needs is missing or unusable.
    #[error(transparent)]
    NativeProgram(#[from] crate::native::NativeProgramError),
    /// The planner refused the set (the error names the file or rule).
    #[error(transparent)]
    Plan(#[from] layout::Error),
    /// Two packages of a plan would have one file name.
    #[error("two packages named {name} in dist/{subdir}")]
    DuplicatePackage {
        /// The distribution name.
        name: String,
        /// Its directory below `dist/`.
        subdir: String,
    },
    /// A split into no shard.
    #[error("0 shards: split the set into at least one")]
    NoShards,
    /// More shards than packages.
    #[error(
        "{count} shards are more than the {packages} packages of this set; split it into at \
         most {packages} (one package per shard)"
    )]
    TooManyShards {
        /// The shards asked for.
        count: usize,
        /// The packages of the set.
        packages: usize,
    },
}

/// Why the metadata file of a plan (or of a post-release) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadMetadataError {
    /// It cannot be read.
    #[error("cannot read the metadata file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// It is no metadata file.
    #[error("the metadata file {} cannot be used; fix it", path.display())]
    Bad {
        /// The file.
        path: PathBuf,
        /// Why.
        source: dist_info::project_metadata::MetadataFileError,
    },
}
