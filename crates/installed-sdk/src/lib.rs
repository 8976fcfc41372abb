//! An installed ROCm Python SDK: the install-time half of the ROCm Python
//! packages, what the `rocm-sdk` program does.
//!
//! The native program ships at `SP/rocm_sdk_core/_bin/rocm-sdk` and is
//! reached through the `rocm` package's `rocm-sdk` script (or `python -m
//! rocm_sdk`); it parses its flags and prints. This library is the rest,
//! for other tools to reuse:
//!
//! - [`Site`]: the site-packages of an installation (found from the
//!   program's own location), its documents, and
//!   [`Site::ensure_devel`] (unpack the devel tree, reconcile device links).
//! - [`read_dist_targets`]: the GPU targets the release was built for.
//! - [`distributions::installed`]: the ROCm distributions installed there.
//! - [`Site::init`], [`Site::devel_paths`], [`Site::library_path`], [`Site::version_report`],
//!   [`Site::targets_report`]: what `rocm-sdk init`, `path`, `version` and
//!   `targets` report, as typed values; each serialised (`serde`) is its
//!   command's `--json` document.
//! - [`self_test`]: the installation self-check of `rocm-sdk test`,
//!   returning a [`SelfTestReport`] of [`Check`]s.
//!
//! The text the commands print is `rocm-sdk`'s; this crate prints nothing
//! and reads no environment: the interpreter and the user's `PYTHONPATH`
//! are [`SelfTestOptions`] fields, the devel unpack's listener is
//! [`UnpackOptions::progress`] (an [`UnpackProgress`], re-exported from
//! `devel-tar` with the other types its options and reports hold).
//!
//! ```no_run
//! use installed_sdk::{Outcome, SelfTestOptions, Site, self_test};
//!
//! let site = Site::new("/venv/lib/python3.12/site-packages");
//! let options = SelfTestOptions {
//!     python: site.python(),
//!     ..SelfTestOptions::default()
//! };
//! let report = self_test(&site, &options);
//! for check in report.checks.iter().filter(|c| c.outcome == Outcome::Failed) {
//!     eprintln!("{}: {} ({})", check.category.as_str(), check.name, check.reason);
//! }
//! println!("{} passed, {} failed", report.passed(), report.failed());
//! ```
//!
//! Design notes: `docs/rocm-sdk.md`.

mod commands;
pub mod distributions;
mod error;
pub mod host_libraries;
pub mod probe;
pub mod record;
mod report;
mod selftest;
mod site;
mod targets;

pub use commands::{
    COMMAND_SCHEMA, DevelPaths, InitReport, LibraryPath, NameVersion, TargetsReport, Unpacked,
    VersionReport,
};
pub use error::Error;
pub use report::{Category, Check, Environment, Outcome, REPORT_SCHEMA, SelfTestReport};
pub use selftest::{SelfTestOptions, self_test};
pub use site::{BINARY_RELPATH, Site};
pub use targets::{DIST_TARGETS_RELPATH, DistTargets, dist_targets_path, read_dist_targets};

// The types of other crates that the options, reports and errors above
// hold (docs/using-the-crates.md, "One convention").
pub use devel_tar::{
    DevelWarning, EnsureReport, Step, UnpackOptions, UnpackOutcome, UnpackProgress, UnpackReport,
};
pub use dist_info::document::DistInfo;
pub use dist_info::package::PackageKind;
pub use pypa_formats::installer::InstallCommand;
