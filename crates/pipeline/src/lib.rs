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
//! - [`post_release`]: a post-release `X.postN` of the `rocm` selector over
//!   a published release `X` ([`PostReleaseOptions`],
//!   [`PostReleaseReport`]; docs/releasing.md).
//! - [`index`]: the find-links page, the PEP 503 tree and the PEP 658
//!   metadata files of a dist directory ([`IndexOptions`], [`IndexReport`]).
//!
//! Checking a finished release is the `release-check` crate.
//!
//! Each command takes a plain options value whose `Default` holds the
//! defaults `therock-package` shows in its help, and returns what it found
//! or did as a typed value (`serde::Serialize`: its `--json` document is
//! the value serialised); the caller decides what to print and how
//! (`therock-package` renders the text reports). Every command fails with
//! [`Error`], whose message never repeats its cause: print the chain
//! (`fs_helpers::error_chain::Chain`, or `{:#}` through `anyhow`).
//!
//! Package this artifact directory:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use pipeline::{BuildOptions, NoProgress, PlanOptions, build};
//!
//! let options = BuildOptions {
//!     plan: PlanOptions {
//!         artifact_dir: "therock/artifacts".into(),
//!         ..PlanOptions::default()
//!     },
//!     dest_dir: "out".into(),
//!     ..BuildOptions::default()
//! };
//! // `NoProgress`: no report while the packages are written; implement
//! // `BuildProgress` for one.
//! let report = build(&options, Arc::new(NoProgress))?; // out/dist/*.whl, rocm-*.tar.gz
//! println!("{} packages in {}", report.packages, report.dist_dir.display());
//! # Ok::<(), pipeline::Error>(())
//! ```

mod assemble;
mod build_cmd;
mod built_links;
mod error;
mod execute;
mod foreseen;
mod index;
mod inspect;
mod native;
mod post_release;
mod progress;
mod python;
mod shard;
mod staging;
mod timings;

pub use assemble::{AssembleOptions, AssembleReport, AssembledPlatform, assemble};
pub use build_cmd::{
    BuildOptions, BuildOutcome, BuildReport, DevelCompression, FileKind, PLATFORM_TAG_ENV,
    PlanOptions, PlanReport, ShardRecord, WrittenFile, build, plan,
};
pub use error::{Disagreement, Error, ErrorKind, IoAction, Result};
pub use foreseen::ForeseenFailure;
pub use index::{IndexLayout, IndexOptions, IndexReport, WrittenPage, index};
pub use inspect::{
    ComponentGroup, Counts, InspectOptions, InspectReport, NameGroup, TargetRow, inspect,
};
pub use native::{
    Found, NativeProgramError, NativePrograms, ReadProblem, check_program, native_target,
};
pub use post_release::{PostReleaseOptions, PostReleaseReport, post_release};
pub use progress::{BuildProgress, NoProgress};
pub use release_check::ElfLinks;
pub use shard::{MatrixEntry, ShardId, ShardIdError, ShardPlan};
pub use staging::StagingCleanup;
pub use timings::{BuildTimings, PackageTime, PhaseTime, StepTime};
