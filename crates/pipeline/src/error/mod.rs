//! Why a command of this crate failed: each command has its own error
//! type, and the steps two commands share have theirs.
//!
//! | command | error |
//! |---|---|
//! | [`inspect`](crate::inspect()), [`plan`](crate::plan()) | [`PlanError`] |
//! | [`build`](crate::build()) | [`BuildError`] (planning: [`PlanError`]; writing the packages: [`WriteError`]; publishing `dist/`: [`PublishError`]) |
//! | [`assemble`](crate::assemble()) | [`AssembleError`] (with [`WriteError`], [`PublishError`], [`IndexError`]) |
//! | [`index`](crate::index()) | [`IndexError`] |
//! | [`post_release`](crate::post_release()) | [`PostReleaseError`] (with [`WriteError`]) |
//!
//! Each message says its own sentence once, in this crate's terms (the
//! destination, the artifact directory, the shard count; never a flag of
//! a command line), and never its cause: the cause is the error's
//! [`source`](std::error::Error::source), and whoever prints the error
//! prints the chain (`therock-package` does, after `error: `, naming its
//! flags where a value came from one; `fs_helpers::error_chain::Chain`
//! for another caller). Errors of the crates below that already name
//! their file are passed on as they are (`transparent`).

mod assemble;
mod build;
mod index;
mod plan;
mod post_release;

use std::fmt;
use std::io;
use std::path::PathBuf;

pub use assemble::{
    AssembleError, Disagreement, ForeignShard, LegsDisagree, ReleaseValue, ShardsDisagree,
};
pub use build::{BuildError, PublishError, WriteError};
pub use index::IndexError;
pub use plan::{PlanError, ReadMetadataError};
pub use post_release::PostReleaseError;

/// What an I/O step was doing, as [`IoError`] says it: `cannot {action}
/// {path}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoAction {
    /// Creating a directory or file.
    Create,
    /// Reading a file or its metadata.
    Read,
    /// Writing a file.
    Write,
    /// Resolving a path to its real path.
    Resolve,
    /// Listing a directory.
    List,
    /// Opening a file.
    Open,
    /// Locking a file.
    Lock,
    /// Reading an entry's identity or type.
    Inspect,
    /// Removing a file or directory.
    Remove,
}

impl fmt::Display for IoAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Create => "create",
            Self::Read => "read",
            Self::Write => "write",
            Self::Resolve => "resolve",
            Self::List => "list",
            Self::Open => "open",
            Self::Lock => "lock",
            Self::Inspect => "inspect",
            Self::Remove => "remove",
        })
    }
}

/// A file-system step failed on a path; every command's error passes it
/// on as it is.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}", path.display())]
pub struct IoError {
    /// What the step was doing.
    pub action: IoAction,
    /// The file or directory.
    pub path: PathBuf,
    /// Why.
    pub source: io::Error,
}

/// [`IoError`] for `action` on `path`, as a `map_err` closure.
pub(crate) fn cannot(
    action: IoAction,
    path: impl Into<PathBuf>,
) -> impl FnOnce(io::Error) -> IoError {
    let path = path.into();
    move |source| IoError {
        action,
        path,
        source,
    }
}

#[cfg(test)]
mod tests {
    /// Every command's error stays small (`clippy::result_large_err`):
    /// large variants box their payload.
    #[test]
    fn errors_stay_small() {
        use std::mem::size_of;
        for (name, size) in [
            ("PlanError", size_of::<super::PlanError>()),
            ("BuildError", size_of::<super::BuildError>()),
            ("WriteError", size_of::<super::WriteError>()),
            ("PublishError", size_of::<super::PublishError>()),
            ("AssembleError", size_of::<super::AssembleError>()),
            ("IndexError", size_of::<super::IndexError>()),
            ("PostReleaseError", size_of::<super::PostReleaseError>()),
        ] {
            assert!(size <= 128, "{name} is {size} bytes");
        }
    }
}
