//! The one error type of the library: every variant names the file involved
//! and what the user can do next.

use std::io;
use std::path::PathBuf;

use pypa_formats::installer::InstallCommand;

use crate::site::BINARY_RELPATH;

/// Everything that stops a `rocm-sdk` command (a failed self-check is not
/// an error: it is a [`crate::SelfTestReport`] with failures).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The program is not at `SP/rocm_sdk_core/_bin/rocm-sdk`.
    #[error(
        "{} is not inside an installed rocm-sdk-core ({BINARY_RELPATH}); run the `rocm-sdk` \
         command that pip installed",
        exe.display()
    )]
    NotInstalled {
        /// Where this program is.
        exe: PathBuf,
    },

    /// No `_dist_info.json` in site-packages.
    #[error(
        "no _dist_info.json in {}: rocm-sdk-core is not installed there; run `pip install rocm`",
        site_packages.display()
    )]
    NoDocument {
        /// The site-packages searched.
        site_packages: PathBuf,
    },

    /// The `_dist_info.json` document names no core package.
    #[error(
        "the _dist_info.json in {} names no core package; reinstall rocm-sdk-core",
        site_packages.display()
    )]
    NoCorePackage {
        /// The site-packages whose document it is.
        site_packages: PathBuf,
    },

    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },

    /// A distribution's RECORD is not the CSV pip writes.
    #[error(
        "{} is not a valid RECORD ({reason}); reinstall the distribution with `{install} --force-reinstall`",
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

    /// The `_dist_info.json` document is unreadable.
    #[error("{}", path.display())]
    Document {
        /// The document.
        path: PathBuf,
        /// What was wrong (the message says what to do).
        source: dist_info::document::DocumentError,
    },

    /// `rocm-sdk-devel` is not installed.
    #[error(
        "rocm-sdk-devel is not installed in {}; install it with `{install} \"rocm[devel]{pin}\"`",
        site_packages.display()
    )]
    DevelNotInstalled {
        /// The site-packages searched.
        site_packages: PathBuf,
        /// `pip install` or `uv pip install`, as the environment was made.
        install: InstallCommand,
        /// `==V` for the installed ROCm version, or empty when unknown.
        pin: String,
    },

    /// Unpacking or reconciling the devel tree failed (read-only or
    /// system-managed site-packages, a corrupt tarball, ...).
    #[error(transparent)]
    Devel(#[from] devel_tar::Error),

    /// `share/therock/dist_info.json` is missing or malformed.
    #[error("{}: {reason}; reinstall rocm-sdk-core (`{install} --force-reinstall rocm-sdk-core`)", path.display())]
    DistTargets {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
        /// How the environment installs ([`Error::with_install_command`]).
        install: InstallCommand,
    },

    /// The Python interpreter needed by `rocm-sdk test` could not be run.
    #[error(
        "cannot run the Python interpreter {}; run `rocm-sdk` through the script pip \
         installed (or `python -m rocm_sdk`), or set ROCM_SDK_PYTHON to a python3",
        python.display()
    )]
    Python {
        /// The interpreter.
        python: PathBuf,
        /// The cause.
        source: io::Error,
    },

    /// The Python probe ran but did not answer as expected.
    #[error("the Python probe run by {} failed: {reason}", python.display())]
    Probe {
        /// The interpreter.
        python: PathBuf,
        /// What went wrong (its stderr, or the malformed answer).
        reason: String,
    },
}

impl Error {
    /// The same error, its remedy naming `command` ([`Site::install_command`]
    /// knows which tool installed the environment; errors are made where
    /// they happen, with pip's).
    ///
    /// [`Site::install_command`]: crate::Site::install_command
    #[must_use]
    pub fn with_install_command(self, command: InstallCommand) -> Self {
        match self {
            Self::Devel(e) => Self::Devel(e.with_install_command(command)),
            mut other => {
                if let Self::DistTargets { install, .. }
                | Self::MalformedRecord { install, .. }
                | Self::DevelNotInstalled { install, .. } = &mut other
                {
                    *install = command;
                }
                other
            }
        }
    }

    /// An [`Error::Read`].
    pub(crate) fn read(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Read {
            path: path.into(),
            source,
        }
    }
}
