//! The version a build gets: the forms TheRock computes (release, dev,
//! nightly, prerelease) and the choice between the `--version` flag and
//! the manifest's version (docs/behaviour.md#versions). The PEP 440 rules
//! themselves are `pypa_formats::version`.

mod choice;
mod forms;

pub use choice::{ChosenVersion, VersionChoiceError, VersionSource, choose_version};
pub use forms::{VersionForm, compose};
