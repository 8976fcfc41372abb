//! The one error type of the crate: every variant names the file involved
//! and, where the user can act, what to do next.

use std::io;
use std::path::{Path, PathBuf};

use fs_helpers::confined;

use pypa_formats::installer::InstallCommand;

/// Everything that can go wrong writing, unpacking or reconciling the devel
/// tree.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file-system operation failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done ("create", "read", "hard-link", ...).
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },

    /// A devel relpath or link given to the writer breaks the rules of
    /// the devel tree (`dist_info::devel_tree`), which the install would
    /// refuse.
    #[error("invalid devel path {path:?}: {reason}")]
    InvalidRelpath {
        /// The offending relpath (`relpath -> text` for a link).
        path: String,
        /// Why it was refused.
        reason: String,
    },

    /// Members must reach the writer in sorted order so the tar is
    /// deterministic without buffering the tree.
    #[error(
        "devel tar members must be added in sorted (byte-wise) order: {path:?} came after {previous:?}; sort the entries before writing"
    )]
    Unsorted {
        /// The member that arrived out of order.
        path: String,
        /// The member written just before it.
        previous: String,
    },

    /// A file source yielded a different number of bytes than announced.
    #[error(
        "the source of devel member {path:?} gave {actual} bytes, but {expected} were announced; the tar being written is unusable"
    )]
    SizeMismatch {
        /// The member.
        path: String,
        /// Announced size.
        expected: u64,
        /// Bytes actually read.
        actual: u64,
    },

    /// `rocm-sdk-devel` is not installed in this site-packages.
    #[error(
        "rocm-sdk-devel is not installed in {}: install it with `{install} rocm[devel]`",
        site_packages.display()
    )]
    DevelNotInstalled {
        /// The site-packages directory searched.
        site_packages: PathBuf,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// The devel package is there but has no RECORD: pip did not install it.
    #[error(
        "{} has no RECORD, so this site-packages is managed by something other than pip (a system package manager?); the devel tree cannot be recorded for uninstall. Install rocm-sdk-devel with pip into a virtual environment (`python -m venv`) instead",
        dist_info.display()
    )]
    NoRecord {
        /// The `rocm_sdk_devel-*.dist-info` directory (or site-packages when
        /// none exists).
        dist_info: PathBuf,
    },

    /// Neither the tar nor the unpacked tree is there.
    #[error(
        "the devel tree {} is missing and there is no devel tar to unpack it from; reinstall with `{install} --force-reinstall rocm-sdk-devel`",
        tree.display()
    )]
    TreeMissing {
        /// `SP/_rocm_sdk_devel`.
        tree: PathBuf,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// Device links cannot be reconciled before the tree is unpacked.
    #[error(
        "the devel tree is not unpacked yet ({} is still there); run `rocm-sdk init`",
        tar.display()
    )]
    NotUnpacked {
        /// The tar waiting to be unpacked.
        tar: PathBuf,
    },

    /// Site-packages (or a file in it that must change) cannot be written.
    #[error(
        "site-packages {} is read-only for this user; run `rocm-sdk init` once as the user who installed the packages, or install into a writable virtual environment",
        path.display()
    )]
    ReadOnly {
        /// The directory or file that could not be written.
        path: PathBuf,
        /// The cause (EACCES, EROFS, EPERM).
        source: io::Error,
    },

    /// The tar cannot be read to the end.
    #[error(
        "the devel tar {} is corrupt or truncated ({reason}); nothing was unpacked. Reinstall it with `{install} --force-reinstall rocm-sdk-devel`",
        tar.display()
    )]
    CorruptTar {
        /// The tar file.
        tar: PathBuf,
        /// What was wrong.
        reason: String,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// The tar is not the file pip installed: its size or sha256 differs
    /// from its RECORD row.
    #[error(
        "the devel tar {} changed after it was installed ({reason}); nothing was unpacked. Reinstall it with `{install} --force-reinstall rocm-sdk-devel`",
        tar.display()
    )]
    TarModified {
        /// The tar file.
        tar: PathBuf,
        /// What differs.
        reason: String,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// A distribution's RECORD is not the CSV pip writes.
    #[error(
        "{} is not a valid RECORD ({reason}); nothing was changed. Reinstall the distribution with `{install} --force-reinstall`",
        path.display()
    )]
    MalformedRecord {
        /// The RECORD file.
        path: PathBuf,
        /// Where and what (`line 3: the size is not a number`).
        reason: String,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// RECORD does not vouch for the tar, so it cannot be checked.
    #[error(
        "the devel tar {} cannot be checked: {} {reason}; nothing was unpacked. Reinstall it with `{install} --force-reinstall rocm-sdk-devel`",
        tar.display(),
        record.display()
    )]
    TarUnrecorded {
        /// The tar file.
        tar: PathBuf,
        /// The devel distribution's RECORD.
        record: PathBuf,
        /// What RECORD lacks ("does not list it", ...).
        reason: String,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// A member would write or point outside site-packages, or is not a
    /// plain file, directory or link.
    #[error(
        "refusing unsafe member {member:?} of {}: {reason}; nothing was written. This archive was not made by therock-package; reinstall rocm-sdk-devel from a trusted index",
        tar.display()
    )]
    UnsafeMember {
        /// The tar file.
        tar: PathBuf,
        /// The member name as stored.
        member: String,
        /// Why it was refused.
        reason: String,
    },

    /// A `.devel_links/{T}.json` document is malformed or unsafe.
    #[error(
        "invalid device links document {}: {reason}; reinstall the device wheel that owns it",
        path.display()
    )]
    InvalidDevelLinks {
        /// The JSON file.
        path: PathBuf,
        /// What was wrong (said here, so it is no source as well).
        reason: dist_info::devel_links::DevelLinksError,
    },

    /// The unpack's record of runtime links (`.runtime-links.json`) is not
    /// one it writes.
    #[error(
        "invalid runtime-links record {}: {reason}; reinstall rocm-sdk-devel",
        path.display()
    )]
    InvalidRuntimeLinks {
        /// The JSON file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },

    /// A path would lead out of the package directories `rocm-sdk` owns
    /// (a `..`, an absolute path, a symbolic link on the way), or a file
    /// is not the regular file it must be
    /// (docs/devel-tar.md#confinement). Nothing was done to it.
    #[error(
        "refusing {}{}",
        path.display(),
        given_by.as_ref().map(|by| format!(", which {} names", by.display())).unwrap_or_default()
    )]
    Confined {
        /// The path as it would have been used.
        path: PathBuf,
        /// The file that named it, when a file did.
        given_by: Option<PathBuf>,
        /// What is wrong with it (a [`fs_helpers::confined::Refused`]
        /// inside, or why the place is not one `rocm-sdk` links from).
        source: io::Error,
    },

    /// The installation belongs to another user: `rocm-sdk` changes only
    /// trees of the user running it (docs/devel-tar.md#owner).
    #[error(
        "{} belongs to another user (uid {owner}; this is uid {user}), and rocm-sdk does not change another user's installation; run `rocm-sdk init` once as the user who installed the packages, or install into a virtual environment of your own",
        path.display()
    )]
    OtherOwner {
        /// The directory whose owner differs.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// The effective user running `rocm-sdk`.
        user: u32,
    },

    /// A RECORD or state file could not be understood.
    #[error("cannot parse {}: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

impl Error {
    /// The same error, its remedy naming `command`. Errors are made where
    /// they happen, with pip's command; the entry points that know which
    /// tool installed the environment ([`crate::ensure_with`], from the
    /// devel distribution's `INSTALLER`) set the real one.
    #[must_use]
    pub fn with_install_command(mut self, command: InstallCommand) -> Self {
        match &mut self {
            Self::DevelNotInstalled { install, .. }
            | Self::TreeMissing { install, .. }
            | Self::CorruptTar { install, .. }
            | Self::TarModified { install, .. }
            | Self::MalformedRecord { install, .. }
            | Self::TarUnrecorded { install, .. } => *install = command,
            _ => {}
        }
        self
    }

    /// An [`Error::Io`], [`Error::ReadOnly`] when the cause is a
    /// permission or read-only file-system error, or [`Error::Confined`]
    /// when the confined layer refused the path.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        if confined::refusal(&source).is_some() {
            Error::Confined {
                path,
                given_by: None,
                source,
            }
        } else if is_read_only(&source) {
            Error::ReadOnly { path, source }
        } else {
            Error::Io {
                action,
                path,
                source,
            }
        }
    }

    /// An [`Error::Io`] that never turns into [`Error::ReadOnly`] (reads),
    /// or [`Error::Confined`].
    pub(crate) fn read(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        if confined::refusal(&source).is_some() {
            Error::Confined {
                path,
                given_by: None,
                source,
            }
        } else {
            Error::Io {
                action,
                path,
                source,
            }
        }
    }

    /// The same error, a refused path said to come from the file `by`.
    #[must_use]
    pub(crate) fn named_by(mut self, by: &Path) -> Self {
        if let Self::Confined { given_by, .. } = &mut self {
            given_by.get_or_insert_with(|| by.to_path_buf());
        }
        self
    }

    /// A refusal of `path`, named by `by`, for a reason the confined layer
    /// does not know (a place `rocm-sdk` does not link from).
    pub(crate) fn refused(path: impl Into<PathBuf>, by: Option<&Path>, reason: String) -> Self {
        Error::Confined {
            path: path.into(),
            given_by: by.map(Path::to_path_buf),
            source: io::Error::new(io::ErrorKind::InvalidData, reason),
        }
    }
}

fn is_read_only(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}
