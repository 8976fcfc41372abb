//! Builds the ROCm Python packages from TheRock artifacts: everything
//! `therock-package` does besides parsing its command line and printing.
//!
//! - [`inspect`]: describe an artifact directory ([`InspectArgs`]).
//! - [`plan`]: where every file would go, or the split into shards
//!   ([`PlanArgs`]).
//! - [`build`]: the packages of the set into `DEST/dist`, written atomically
//!   ([`BuildArgs`], [`BuildReport`]; docs/pipeline.md).
//! - [`assemble`]: join the outputs of sharded builds into one verified,
//!   indexed release ([`AssembleArgs`]; docs/releasing.md).
//! - [`index`]: the find-links page, the PEP 503 tree and the PEP 658
//!   metadata files of a dist directory ([`IndexArgs`], [`IndexReport`]).
//!
//! Checking a finished release is the `release-check` crate.
//!
//! Each command takes its flags as a value: a program builds them from the
//! same flags a user would type with [`from_flags`], so the library and
//! the command line can never disagree about a default.
//!
//! Package this artifact directory:
//!
//! ```no_run
//! use cli_output::{Console, Verbosity};
//! use pipeline::{BuildArgs, build, from_flags};
//!
//! let args: BuildArgs = from_flags(
//!     "build",
//!     &["--artifact-dir", "therock/artifacts", "--dest-dir", "out"],
//! )?;
//! // A console without a terminal prints one line per package to stderr.
//! let console = Console::detect(Verbosity { verbose: 0, quiet: true });
//! let report = build(&args, &console)?; // out/dist/*.whl, rocm-*.tar.gz
//! print!("{}", report.to_text());
//! # Ok::<(), anyhow::Error>(())
//! ```

mod assemble;
mod build_cmd;
mod built_links;
mod execute;
mod index;
mod inspect;
mod native;
mod python;
mod shard;
mod staging;
mod timings;

use anyhow::{Context as _, Result};
use clap::{Args, FromArgMatches};

pub use assemble::{AssembleArgs, assemble};
pub use build_cmd::{BuildArgs, BuildReport, DevelCompression, PlanArgs, REPORT, build, plan};
pub use built_links::ElfLinks;
pub use index::{IndexArgs, IndexLayout, IndexReport, WrittenPage, index};
pub use inspect::{InspectArgs, inspect};
pub use native::{NativeProgramError, NativePrograms, check_program, native_target};

/// The arguments of a command (`A`, e.g. [`BuildArgs`]) parsed from
/// `flags` exactly as `therock-package COMMAND FLAGS...` would parse them;
/// `command` names it in errors.
pub fn from_flags<A: Args + FromArgMatches>(
    command: &'static str,
    flags: &[impl AsRef<str>],
) -> Result<A> {
    let flags: Vec<String> = flags.iter().map(|f| f.as_ref().to_owned()).collect();
    let matches = A::augment_args(clap::Command::new(command))
        .try_get_matches_from(std::iter::once(command.to_owned()).chain(flags.iter().cloned()))
        .with_context(|| format!("cannot run `{command} {}`", flags.join(" ")))?;
    Ok(A::from_arg_matches(&matches)?)
}
