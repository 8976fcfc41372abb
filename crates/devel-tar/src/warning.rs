//! Things worth telling the user that do not stop an unpack or reconcile.

use std::fmt;

/// A condition that was handled but should be reported (the binary logs
/// these; the library never prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevelWarning {
    /// A devel link whose target does not exist (e.g. it points into a
    /// runtime package that is not installed) was not created.
    DanglingLink {
        /// The link, relative to site-packages.
        path: String,
        /// Its symlink text.
        target: String,
        /// Where it leads, relative to site-packages.
        missing: String,
    },
    /// A devel link that dangles inside the tree itself: the tarball holds
    /// nothing at the path it leads to, and no other package installs
    /// there, so nothing the user installs can mend it (the link already
    /// dangled in the artifacts the release was built from).
    DanglingInTarball {
        /// The link, relative to site-packages.
        path: String,
        /// Its symlink text.
        target: String,
        /// Where it leads, relative to site-packages.
        missing: String,
    },
    /// A hard link was impossible (file system without hard links, or
    /// protected hard links), so the file was copied.
    Copied {
        /// The new file, relative to site-packages.
        path: String,
        /// Why the hard link failed.
        reason: String,
    },
    /// A device distribution whose version does not match the devel's was
    /// skipped.
    VersionMismatch {
        /// The device dist-info directory name.
        distribution: String,
        /// The devel version.
        ours: String,
        /// The device version.
        theirs: String,
    },
    /// A file listed by a device distribution's links document is missing.
    MissingDeviceFile {
        /// The device dist-info directory name.
        distribution: String,
        /// The missing file, relative to site-packages.
        path: String,
    },
    /// The reconcile's state did not hold up (a path out of place, not a
    /// regular file): nothing it named was touched, and it was written
    /// anew from the installed device wheels.
    IgnoredState {
        /// The state file, relative to site-packages.
        path: String,
        /// What was wrong with it.
        reason: String,
    },
}

impl fmt::Display for DevelWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DevelWarning::DanglingLink {
                path,
                target,
                missing,
            } => {
                let top = missing.split('/').next().unwrap_or(missing);
                write!(
                    f,
                    "skipped devel link {path} -> {target}: nothing is installed at {missing}; install the ROCm package that installs {top}/, then reinstall rocm-sdk-devel to get the link"
                )
            }
            DevelWarning::DanglingInTarball {
                path,
                target,
                missing,
            } => write!(
                f,
                "skipped devel link {path} -> {target}: rocm-sdk-devel ships nothing at {missing} (the link already dangled in the ROCm build this release was made from); the rest of the tree is complete, and no package you can install provides it: report it to the release's publisher if a tool needs it"
            ),
            DevelWarning::Copied { path, reason } => {
                write!(f, "copied {path} because a hard link failed: {reason}")
            }
            DevelWarning::VersionMismatch {
                distribution,
                ours,
                theirs,
            } => write!(
                f,
                "skipped device links of {distribution}: its version {theirs} does not match rocm-sdk-devel {ours}; install matching versions"
            ),
            DevelWarning::MissingDeviceFile { distribution, path } => write!(
                f,
                "{distribution} lists {path} for the devel tree but the file is missing; reinstall that device wheel"
            ),
            DevelWarning::IgnoredState { path, reason } => write!(
                f,
                "ignored {path} ({reason}): nothing it names was touched, and it was written anew from the installed device wheels"
            ),
        }
    }
}
