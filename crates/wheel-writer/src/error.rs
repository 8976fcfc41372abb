//! Errors of writing wheels and sdists.

use std::io;
use std::path::PathBuf;

use pypa_formats::dist_name::DistNameError;
use pypa_formats::filename::WheelTagError;
use pypa_formats::version::CanonicalVersionError;

/// Why a wheel or sdist could not be written.
///
/// Every message names the package file, member or source involved and what
/// to do about it; the caller decides how to report it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A distribution name is not a valid PEP 508 name.
    #[error(transparent)]
    InvalidName(#[from] DistNameError),
    /// A version is not in canonical PEP 440 form.
    #[error(transparent)]
    InvalidVersion(#[from] CanonicalVersionError),
    /// A wheel tag or build tag is malformed.
    #[error(transparent)]
    InvalidTag(#[from] WheelTagError),
    /// A member path cannot be stored in a package.
    #[error("member path {path:?} cannot be packaged: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A member path is not a clean relative path
    /// (`pypa_formats::member::check_relpath`, the rule every reader applies).
    #[error("member path {path:?} cannot be packaged: readers refuse it")]
    UnsafePath {
        /// The path as given.
        path: String,
        /// The rule it breaks.
        #[source]
        problem: pypa_formats::member::PathProblem,
    },
    /// Two members were given the same path.
    #[error("member path {path:?} was added twice; each path may appear once per package")]
    DuplicatePath {
        /// The repeated path.
        path: String,
    },
    /// A metadata field holds a value the format cannot carry.
    #[error("metadata field {field} is not valid: {reason} (value {value:?})")]
    InvalidMetadata {
        /// The core-metadata field name.
        field: &'static str,
        /// The offending value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A console script entry point is malformed.
    #[error("console script {name:?} = {value:?} is not valid")]
    InvalidEntryPoint {
        /// The script name.
        name: String,
        /// The `module:attr` reference.
        value: String,
        /// What is wrong with it.
        #[source]
        problem: pypa_formats::entry_points::EntryPointProblem,
    },
    /// A console script name was declared twice.
    #[error("console script {name:?} was declared twice")]
    DuplicateEntryPoint {
        /// The script name.
        name: String,
    },
    /// A source could not be opened or read.
    #[error("cannot read {origin} (for member {member:?})")]
    Source {
        /// The source, as described by [`crate::MemberSource::origin`].
        origin: String,
        /// The member it was meant for.
        member: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A source yielded a different number of bytes than it declared.
    #[error(
        "{origin} (for member {member:?}) declared {declared} bytes but yielded {actual}; \
         the input changed while packaging or its size is wrong: rebuild from a stable tree"
    )]
    SizeMismatch {
        /// The source.
        origin: String,
        /// The member it was meant for.
        member: String,
        /// The size the source declared.
        declared: u64,
        /// The bytes actually read (at least this many).
        actual: u64,
    },
    /// A source gave different bytes on two reads.
    #[error(
        "{origin} (for member {member:?}) gave different bytes on two reads; the input \
         changed while packaging: rebuild from a stable tree"
    )]
    ContentChanged {
        /// The source.
        origin: String,
        /// The member it was meant for.
        member: String,
    },
    /// The deflate codec failed.
    #[error("compressing member {member:?} failed: {message}")]
    Compression {
        /// The member being compressed.
        member: String,
        /// What the codec reported.
        message: String,
    },
    /// The package file (or its temporary file) could not be written.
    #[error("cannot write {path}; check the destination directory and free space")]
    Output {
        /// The file being written.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The worker thread pool could not be created.
    #[error("cannot start {jobs} compression threads: {message}")]
    ThreadPool {
        /// The requested number of threads.
        jobs: usize,
        /// What the pool builder reported.
        message: String,
    },
}
