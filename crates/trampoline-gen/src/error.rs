//! Errors of this crate: bad targets, unknown platforms, files that are not
//! launchers, and I/O while writing or reading a launcher file.

use std::path::PathBuf;

/// Everything that can go wrong making, writing or reading a launcher.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The relative target was empty.
    #[error(
        "the launcher target is empty; give the executable's path relative to the launcher's directory (for example ../libexec/tool)"
    )]
    EmptyTarget,

    /// The target was an absolute path; launchers only hold relative ones,
    /// so the package keeps working wherever it is installed.
    #[error(
        "the launcher target {target:?} is absolute; write it relative to the launcher's directory (for example ../libexec/tool)"
    )]
    AbsoluteTarget {
        /// The rejected target.
        target: String,
    },

    /// The target contained a NUL byte, which no file path can hold.
    #[error("the launcher target {target:?} contains a NUL byte, which no file path can hold")]
    NulInTarget {
        /// The rejected target.
        target: String,
    },

    /// The target ended with `/`, so it names a directory, not an executable.
    #[error(
        "the launcher target {target:?} ends with '/', so it names a directory; give the executable file"
    )]
    DirectoryTarget {
        /// The rejected target.
        target: String,
    },

    /// The target was not valid UTF-8 (wheel paths must be).
    #[error(
        "the launcher target {} is not valid UTF-8; wheel paths must be UTF-8, so rename the file",
        target.display()
    )]
    NonUtf8Target {
        /// The rejected target.
        target: PathBuf,
    },

    /// The target does not fit in the launcher image's slot.
    #[error(
        "the launcher target {target:?} is {len} bytes; a {platform} launcher holds at most {max}: shorten the path or move the launcher closer to its target"
    )]
    TargetTooLong {
        /// The rejected target.
        target: String,
        /// Its length in bytes.
        len: usize,
        /// The most the slot holds.
        max: usize,
        /// The platform whose image was asked for.
        platform: crate::Platform,
    },

    /// No launcher image exists for this wheel platform tag.
    #[error(
        "no launcher image for wheel platform {tag:?} in this build of trampoline-gen (available: {available}); build the package for one of those platforms"
    )]
    UnsupportedPlatform {
        /// The wheel platform tag asked for.
        tag: String,
        /// The platforms that have an image, comma-separated.
        available: String,
    },

    /// The bytes are not a launcher made by this crate.
    #[error("not a trampoline-gen launcher")]
    NotALauncher(#[from] SlotError),

    /// A launcher file could not be read, or is not a launcher.
    #[error("{}: not a trampoline-gen launcher", path.display())]
    NotALauncherFile {
        /// The file read.
        path: PathBuf,
        /// What was wrong with its bytes.
        source: SlotError,
    },

    /// Reading a launcher file failed.
    #[error("could not read the launcher {}", path.display())]
    Read {
        /// The file read.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },

    /// Writing a launcher file failed; nothing was left at `path`.
    #[error(
        "could not write the launcher {}; check that its directory exists and is writable",
        path.display()
    )]
    Write {
        /// The file being written.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What is wrong with bytes that were expected to be a launcher.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SlotError {
    /// The slot marker was not found.
    #[error("the target slot marker is missing")]
    MarkerMissing,

    /// The slot marker occurs more than once, so the slot is ambiguous.
    #[error("the target slot marker occurs {count} times (expected exactly once)")]
    MarkerRepeated {
        /// How many times it occurs.
        count: usize,
    },

    /// The file ends inside the slot.
    #[error("the file ends inside the target slot (truncated?)")]
    Truncated,

    /// The slot has no terminating NUL, or bytes after it are not NUL.
    #[error("the target slot is corrupt (unterminated, or bytes after the target are not NUL)")]
    Corrupt,

    /// The slot is empty: an image nobody wrote a target into.
    #[error("no target was written into the slot")]
    Empty,

    /// The slot holds a target this crate would never have written.
    #[error("the target slot holds an invalid target: {0}")]
    InvalidTarget(String),

    /// The slot reads fine, but the rest of the bytes are not an image of
    /// this build of trampoline-gen.
    #[error("the bytes outside the target slot match no launcher image of this build")]
    UnknownImage,
}
