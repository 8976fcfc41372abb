//! Why [`assemble`](crate::assemble()) failed: a shard's output it cannot
//! trust, shards that do not make one release, or a release that fails
//! `verify`.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::{IndexError, IoError, PublishError, WriteError};
use crate::shard::ShardId;

/// A value every shard of a release carries the same, as
/// [`Disagreement`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReleaseValue {
    /// Legacy or kpack.
    Mode,
    /// The version of every package.
    Version,
    /// The families the Linux release offers.
    LinuxFamilies,
    /// The families the Windows release offers.
    WindowsFamilies,
    /// The timestamp of every archive member.
    SourceDateEpoch,
    /// The deflate level of the packages.
    CompressionLevel,
    /// The descriptive metadata of every package.
    Metadata,
    /// The `rocm` sdists' documents.
    SelectorDocuments,
}

impl fmt::Display for ReleaseValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Mode => "the packaging mode",
            Self::Version => "the version",
            Self::LinuxFamilies => "the Linux family list",
            Self::WindowsFamilies => "the Windows family list",
            Self::SourceDateEpoch => "the members' timestamp",
            Self::CompressionLevel => "the compression level",
            Self::Metadata => "the package metadata",
            Self::SelectorDocuments => "the rocm sdists' _dist_info.json",
        })
    }
}

/// What one shard manifest and another (or the packages of the release)
/// disagree on, as [`AssembleError::ShardsDisagree`] and
/// [`AssembleError::LegsDisagree`] name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The value.
    pub what: ReleaseValue,
    /// The first manifest's value, as shown.
    pub first: String,
    /// The other's.
    pub other: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} and {}", self.what, self.first, self.other)
    }
}

/// Why shards could not be assembled into a release.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AssembleError {
    /// A file-system step failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A `rocm` sdist cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The release cannot be published into `dist/`.
    #[error(transparent)]
    Publish(#[from] PublishError),
    /// The release's index cannot be written.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A shard's manifest cannot be read.
    #[error(
        "cannot read {}; pass the destination of a build of one shard",
        path.display()
    )]
    ReadShardManifest {
        /// `DIR/shard.json`.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A shard's manifest is no manifest.
    #[error(
        "{} is not a shard manifest of this therock-package; rebuild the shard",
        path.display()
    )]
    BadShardManifest {
        /// `DIR/shard.json`.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// A shard's manifest has another format.
    #[error(
        "{} has format {found}, this therock-package reads format {expected}; rebuild the shard \
         with this version",
        path.display()
    )]
    ShardManifestFormat {
        /// `DIR/shard.json`.
        path: PathBuf,
        /// Its format.
        found: u32,
        /// The format this crate reads.
        expected: u32,
    },
    /// A shard's manifest names no shard `K/N`.
    #[error("{}: shard {reason}", path.display())]
    BadShardId {
        /// `DIR/shard.json`.
        path: PathBuf,
        /// Why (said here, so it is no source as well).
        reason: crate::shard::ShardIdError,
    },
    /// A shard manifest names a path that is not a clean relative path
    /// inside its `dist/` (docs/behaviour.md#what-assemble-trusts).
    #[error(
        "{} names {what} {relpath:?}, an unsafe path ({problem}): a shard's paths are clean \
         relative paths inside its dist/, so the manifest is corrupt or was changed after its \
         build; rebuild the shard",
        manifest.display()
    )]
    UnsafeShardPath {
        /// `DIR/shard.json`.
        manifest: PathBuf,
        /// `the package` or `the rocm sdist directory`.
        what: &'static str,
        /// The path as named.
        relpath: String,
        /// What is wrong with it (said here, so it is no source as well).
        problem: pypa_formats::member::PathProblem,
    },
    /// A shard's `dist/` holds something no build writes.
    #[error("shard {id} in {} holds what no build writes; rebuild the shard", dir.display())]
    ShardHoldsForeign {
        /// The shard.
        id: ShardId,
        /// Its directory.
        dir: PathBuf,
        /// The entry.
        source: wheel_writer::dist_dir::NotRegular,
    },
    /// A package a shard's manifest lists is missing.
    #[error(
        "{} is missing: shard {id} in {} lists it in shard.json; rebuild the shard",
        path.display(),
        dir.display()
    )]
    ShardPackageMissing {
        /// The package.
        path: PathBuf,
        /// The shard.
        id: ShardId,
        /// Its directory.
        dir: PathBuf,
    },
    /// A package of a shard has other bytes than its manifest records.
    #[error(
        "{} has sha256 {found} but shard.json records {recorded}: the shard's dist/ changed \
         after its build; rebuild the shard",
        path.display()
    )]
    ShardPackageChanged {
        /// The package.
        path: PathBuf,
        /// Its sha256.
        found: String,
        /// The manifest's.
        recorded: String,
    },
    /// A shard's `dist/` holds a package its manifest does not list.
    #[error(
        "{} is not one of the packages of shard {id} (shard.json does not list it; left there \
         by another build?); build each shard into an empty destination",
        path.display()
    )]
    ShardPackageExtra {
        /// The package.
        path: PathBuf,
        /// The shard.
        id: ShardId,
    },
    /// A shard of another plan among those of one platform.
    #[error(transparent)]
    ForeignShard(Box<ForeignShard>),
    /// Shards of one plan split into different counts.
    #[error(
        "{} is shard {id} but {} is shard {reference_id} of the same {platform_tag} plan: build \
         every shard with the shard count the plan was split into",
        dir.display(),
        reference_dir.display()
    )]
    ShardCountDiffers {
        /// The odd shard's directory.
        dir: PathBuf,
        /// Its id.
        id: ShardId,
        /// Another shard's directory.
        reference_dir: PathBuf,
        /// Its id.
        reference_id: ShardId,
        /// The wheel platform tag.
        platform_tag: String,
    },
    /// One shard given twice.
    #[error(
        "shard {id} of the {platform_tag} plan {plan} is given twice: {} and {}; pass one of them",
        first.display(),
        second.display()
    )]
    ShardTwice {
        /// The shard.
        id: ShardId,
        /// The wheel platform tag.
        platform_tag: String,
        /// The plan.
        plan: String,
        /// Its first directory.
        first: PathBuf,
        /// Its second.
        second: PathBuf,
    },
    /// Shards of a plan are missing.
    #[error(
        "the {platform_tag} plan {plan} has {count} shards but shard {} {} missing; pass the \
         destination of the build of shard {} too",
        missing.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        if missing.len() == 1 { "is" } else { "are" },
        missing[0]
    )]
    ShardsMissing {
        /// The wheel platform tag.
        platform_tag: String,
        /// The plan.
        plan: String,
        /// How many shards it has.
        count: usize,
        /// The shards not given, ascending (at least one).
        missing: Vec<ShardId>,
    },
    /// Two shards of one plan disagree on a value their manifests carry.
    #[error(transparent)]
    ShardsDisagree(Box<ShardsDisagree>),
    /// The shards of two platforms disagree on a value of the release.
    #[error(transparent)]
    LegsDisagree(Box<LegsDisagree>),
    /// A shard manifest's version is none.
    #[error("{} gives the version {version:?}; rebuild the shard", manifest.display())]
    ShardVersion {
        /// `DIR/shard.json`.
        manifest: PathBuf,
        /// The version as given.
        version: String,
        /// Why.
        source: pypa_formats::version::VersionError,
    },
    /// A shard's wheel cannot be read.
    #[error("cannot read {}; rebuild shard {id} in {}", path.display(), dir.display())]
    ReadShardWheel {
        /// The wheel.
        path: PathBuf,
        /// The shard.
        id: ShardId,
        /// Its directory.
        dir: PathBuf,
        /// Why.
        source: Box<wheel_writer::ReadError>,
    },
    /// A shard's wheel is no package of the release's mode.
    #[error(
        "{} is named {name:?}, which is no package of a {mode} release; rebuild shard {id} in {}",
        path.display(),
        dir.display()
    )]
    UnknownShardPackage {
        /// The wheel.
        path: PathBuf,
        /// Its METADATA `Name`.
        name: String,
        /// `legacy` or `kpack`.
        mode: String,
        /// The shard.
        id: ShardId,
        /// Its directory.
        dir: PathBuf,
    },
    /// A shard's core wheel carries no readable `_dist_info.json`.
    #[error("{} ({member}); rebuild the shard", path.display())]
    ShardDistInfo {
        /// The core wheel.
        path: PathBuf,
        /// The document's member.
        member: String,
        /// Why.
        source: dist_info::document::DocumentError,
    },
    /// The core wheel's document lists other targets than the device
    /// wheels the shards delivered, or names that are no target IDs.
    #[error(
        "{} lists the targets {} as built, but the device wheels are for {}; rebuild the shards \
         from one artifact tree",
        core.display(),
        built.join(", "),
        wheels.join(", ")
    )]
    ShardBuiltTargets {
        /// The core wheel.
        core: PathBuf,
        /// The targets its document lists.
        built: Vec<String>,
        /// The base targets of the device wheels.
        wheels: Vec<String>,
    },
    /// No shard of a platform holds the core wheel.
    #[error("the {platform_tag} shards hold no rocm-sdk-core wheel; pass the shard that builds it")]
    NoCoreShard {
        /// The wheel platform tag.
        platform_tag: String,
    },
    /// The `rocm` sdists of a platform cannot be planned.
    #[error("cannot plan the rocm sdists of the {platform_tag} shards")]
    PlanSelectors {
        /// The wheel platform tag.
        platform_tag: String,
        /// Why.
        source: Box<layout::Error>,
    },
    /// A manifest carries `rocm` sdists for other directories than the
    /// release's packages give.
    #[error(
        "{} carries rocm sdists for {carried} but the packages of its release give {planned}; \
         the manifest was changed after its build: rebuild the shard",
        manifest.display()
    )]
    SelectorDirsDiffer {
        /// `DIR/shard.json`.
        manifest: PathBuf,
        /// Its directories, as `dist/D, ...`.
        carried: String,
        /// The planned ones.
        planned: String,
    },
    /// A manifest carries another `_dist_info.json` than the release's
    /// packages give.
    #[error(
        "{} carries a _dist_info.json for the rocm sdist of dist/{subdir} that differs from the \
         one the release's version, family lists and packages give ({differences}); the \
         manifest was changed after its build: rebuild the shard",
        manifest.display()
    )]
    SelectorDiffers {
        /// `DIR/shard.json`.
        manifest: PathBuf,
        /// The sdist's directory below `dist/`.
        subdir: String,
        /// Which fields differ.
        differences: String,
    },
    /// `assemble` into a `dist/` that holds something.
    #[error(
        "{} is not empty; assemble writes a whole release: give a new or empty destination",
        dist.display()
    )]
    DestinationNotEmpty {
        /// `DEST/dist`.
        dist: PathBuf,
    },
    /// Two shards hold one path with different bytes.
    #[error(
        "{} and {} both hold dist/{relpath} with different bytes; one release cannot offer both",
        first.display(),
        second.display()
    )]
    ConflictingPackages {
        /// One shard's directory.
        first: PathBuf,
        /// The other's.
        second: PathBuf,
        /// The path below `dist/`.
        relpath: String,
    },
    /// A shard's package cannot be copied into the release.
    #[error("cannot copy {} to {}", from.display(), to.display())]
    Copy {
        /// The shard's package.
        from: PathBuf,
        /// Where it goes.
        to: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The release cannot be verified at all.
    #[error(transparent)]
    Verify(#[from] release_check::VerifyError),
    /// A shard manifest's family list names a family no table knows.
    #[error(
        "{} gives the {platform} family list {list:?}, which names an unknown family: the \
         manifest was changed after its build; rebuild the shard",
        manifest.display()
    )]
    ShardFamilies {
        /// `DIR/shard.json`.
        manifest: PathBuf,
        /// `Linux` or `Windows`.
        platform: &'static str,
        /// The list as the manifest gives it.
        list: String,
        /// Why.
        source: Box<dist_info::families::FamilyError>,
    },
    /// The assembled release fails `verify`: nothing was written. The
    /// report says which checks failed.
    #[error("the assembled release fails verify, so nothing was written")]
    AssembledReleaseFailsVerify {
        /// The report of the failed verification.
        report: Box<release_check::VerifyReport>,
    },

    /// A package's core metadata (`METADATA`, `PKG-INFO`) is one readers
    /// could read differently (docs/verify.md#one-reading).
    #[error(
        "member {member} of {} is not core metadata every installer reads the same way; rebuild the package or remove it from the directory",
        path.display()
    )]
    CoreMetadata {
        /// The package.
        path: PathBuf,
        /// The metadata file.
        member: String,
        /// Why.
        source: pypa_formats::core_metadata::MetadataError,
    },
}

/// A shard of another plan among those of one platform.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} holds shard {id} of another plan ({plan}) than {} (shard {reference_id}, plan \
     {reference_plan}), both {platform_tag}: every shard of a platform must be built from \
     the same artifacts and flags; rebuild it, or leave it out if it belongs to another \
     release",
    dir.display(),
    reference_dir.display()
)]
pub struct ForeignShard {
    /// The foreign shard's directory.
    pub dir: PathBuf,
    /// Its id.
    pub id: ShardId,
    /// Its plan.
    pub plan: String,
    /// A shard of the platform's plan.
    pub reference_dir: PathBuf,
    /// Its id.
    pub reference_id: ShardId,
    /// The platform's plan.
    pub reference_plan: String,
    /// The wheel platform tag.
    pub platform_tag: String,
}

/// Two shards of one plan disagree on a value their manifests carry.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} (shard {first_id}) and {} (shard {other_id}) of the {platform_tag} plan {plan} \
     disagree on {disagreement}; the shards of one plan carry the same values, so one \
     manifest was changed after its build: rebuild that shard",
    first_dir.display(),
    other_dir.display()
)]
pub struct ShardsDisagree {
    /// One shard's directory.
    pub first_dir: PathBuf,
    /// Its id.
    pub first_id: ShardId,
    /// The other's.
    pub other_dir: PathBuf,
    /// Its id.
    pub other_id: ShardId,
    /// The wheel platform tag.
    pub platform_tag: String,
    /// The plan.
    pub plan: String,
    /// What they disagree on.
    pub disagreement: Disagreement,
}

/// The shards of two platforms disagree on a value of the release.
#[derive(Debug, thiserror::Error)]
#[error(
    "the {first_platform} shards ({}) and the {other_platform} shards ({}) disagree on \
     {disagreement}; one release needs the same value on every platform",
    first_dir.display(),
    other_dir.display()
)]
pub struct LegsDisagree {
    /// One platform tag.
    pub first_platform: String,
    /// A shard of it.
    pub first_dir: PathBuf,
    /// The other platform tag.
    pub other_platform: String,
    /// A shard of it.
    pub other_dir: PathBuf,
    /// What they disagree on.
    pub disagreement: Disagreement,
}
