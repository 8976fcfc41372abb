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
//! Each command is one function that takes its options value and returns
//! what it found or did as a typed value (`serde::Serialize`: its `--json`
//! document is the value serialised); the caller decides what to print
//! and how (`therock-package` renders the text reports). The options hold
//! typed values only (paths, a [`Version`], lists of [`Family`], a
//! [`Nonce`], a [`PlatformTag`]: nothing a command line would parse), and
//! everything a command reads from outside them: the timestamp, the
//! threads, who hears of the progress ([`BuildProgress`]) and who may hold
//! a build ([`BuildPause`]). The library reads no environment variable and
//! sets no global state. Their `Default` holds the defaults
//! `therock-package` shows in its help. Each command fails with an error
//! of its own ([`PlanError`], [`BuildError`], [`AssembleError`],
//! [`IndexError`], [`PostReleaseError`]) that speaks in this crate's terms
//! and never repeats its cause: print the chain
//! (`fs_helpers::error_chain::Chain`, or `{:#}` through `anyhow`).
//!
//! Package this artifact directory, for a release candidate offering one
//! family on Linux:
//!
//! ```no_run
//! use pipeline::{BuildOptions, Family, PlanOptions, build};
//!
//! let options = BuildOptions {
//!     plan: PlanOptions {
//!         artifact_dir: "therock/artifacts".into(),
//!         version: Some("7.1.0rc1".parse()?),
//!         linux_families: Some(vec!["gfx94X-dcgpu".parse::<Family>()?]),
//!         ..PlanOptions::default()
//!     },
//!     dest_dir: "out".into(),
//!     ..BuildOptions::default()
//! };
//! // No `progress`: nobody hears of the packages while they are written;
//! // implement `BuildProgress` for a display.
//! let report = build(&options)?; // out/dist/*.whl, rocm-*.tar.gz
//! println!("{} packages in {}", report.packages, report.dist_dir.display());
//! # Ok::<(), Box<dyn std::error::Error>>(())
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
mod pause;
mod post_release;
mod progress;
mod python;
mod shard;
mod staging;
mod timings;

pub use assemble::{AssembleOptions, AssembleReport, AssembledPlatform, assemble};
pub use build_cmd::{
    BuildOptions, BuildOutcome, BuildReport, DevelCompression, FileKind, PlanOptions, PlanReport,
    ShardRecord, WrittenFile, build, plan,
};
pub use error::{
    AssembleError, BuildError, Disagreement, ForeignShard, IndexError, IoAction, IoError,
    LegsDisagree, PlanError, PostReleaseError, PublishError, ReadMetadataError, ReleaseValue,
    ShardsDisagree, WriteError,
};
pub use foreseen::ForeseenFailure;
pub use index::{IndexLayout, IndexOptions, IndexReport, WrittenPage, index};
pub use inspect::{
    ComponentGroup, Counts, InspectOptions, InspectReport, NameGroup, TargetRow, inspect,
};
pub use native::{
    Found, NativeProgramError, NativePrograms, ReadProblem, check_program, native_target,
};
pub use pause::{BuildPause, BuildPoint};
pub use post_release::{PostReleaseOptions, PostReleaseReport, post_release};
pub use progress::BuildProgress;
pub use shard::{MatrixEntry, ShardId, ShardIdError, ShardPlan};
pub use staging::StagingCleanup;
pub use timings::{BuildTimings, PackageTime, PhaseTime, StepTime};

// The types of other crates that the options, reports and errors above
// hold, so a caller builds and reads them without depending on those
// crates (docs/using-the-crates.md, "One convention").
pub use dist_info::families::Family;
pub use dist_info::nonce::Nonce;
pub use dist_info::requirement::Platform;
pub use layout::Plan;
pub use link_check::PolicyName;
pub use pypa_formats::filename::PlatformTag;
pub use pypa_formats::version::Version;
pub use release_check::{ElfLinks, LinkRules, VerifyReport};
pub use wheel_writer::Compression;
