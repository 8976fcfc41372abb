//! Builds the ROCm Python packages from TheRock artifacts: everything
//! `therock-package` does besides parsing its command line and printing.
//!
//! - [`inspect`]: describe an artifact directory ([`InspectOptions`],
//!   [`InspectReport`]).
//! - [`plan`]: where every file would go, or the split into shards
//!   ([`PlanOptions`], [`PlanReport`]).
//! - [`build`]: the packages of the set into `DEST/dist`, written atomically
//!   ([`BuildOptions`], [`BuildReport`]; docs/pipeline.md).
//! - [`assemble`]: join the outputs of sharded builds into one verified,
//!   indexed release ([`AssembleOptions`], [`AssembleReport`];
//!   docs/releasing.md).
//! - [`index`]: the find-links page, the PEP 503 tree and the PEP 658
//!   metadata files of a dist directory ([`IndexOptions`], [`IndexReport`]).
//!
//! Checking a finished release is the `release-check` crate.
//!
//! Each command takes a plain options value whose `Default` holds the
//! defaults `therock-package` shows in its help, and returns what it found
//! or did as a value (`serde::Serialize`, with `to_text` and `to_json`
//! for the binary's output); the caller decides what to print.
//!
//! Package this artifact directory:
//!
//! ```no_run
//! use cli_output::{Console, Verbosity};
//! use pipeline::{BuildOptions, PlanOptions, build};
//!
//! let options = BuildOptions {
//!     plan: PlanOptions {
//!         artifact_dir: "therock/artifacts".into(),
//!         ..PlanOptions::default()
//!     },
//!     dest_dir: "out".into(),
//!     ..BuildOptions::default()
//! };
//! // A console without a terminal prints one line per package to stderr.
//! let console = Console::detect(Verbosity { verbose: 0, quiet: true });
//! let report = build(&options, &console)?; // out/dist/*.whl, rocm-*.tar.gz
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

pub use assemble::{AssembleOptions, AssembleReport, AssembledPlatform, assemble};
pub use build_cmd::{
    BuildOptions, BuildReport, DevelCompression, PlanOptions, PlanReport, build, plan,
};
pub use built_links::ElfLinks;
pub use index::{IndexLayout, IndexOptions, IndexReport, WrittenPage, index};
pub use inspect::{
    ComponentGroup, Counts, InspectOptions, InspectReport, NameGroup, TargetRow, inspect,
};
pub use native::{NativeProgramError, NativePrograms, check_program, native_target};
pub use shard::{MatrixEntry, ShardId, ShardPlan};
