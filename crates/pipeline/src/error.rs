//! Why a command of this crate failed: [`Error`], one type for every
//! command (they share their steps: `build` plans, `assemble` stages,
//! writes sdists and indexes), whose [`ErrorKind`] says which failure it is
//! with its paths and values.
//!
//! Each message says its own sentence once and never its cause: the cause
//! is the error's [`source`](std::error::Error::source), and whoever prints
//! the error prints the chain (`therock-package` does, after `error: `;
//! `fs_helpers::error_chain::Chain` for another caller). Errors of the
//! crates below that already name their file are passed on as they are
//! (`transparent`).

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::shard::ShardId;

/// What an I/O step was doing, as [`ErrorKind::Io`] says it: `cannot {action}
/// {path}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoAction {
    /// Creating a directory or file.
    Create,
    /// Reading a file or its metadata.
    Read,
    /// Writing a file.
    Write,
    /// Resolving a path to its real path.
    Resolve,
    /// Listing a directory.
    List,
    /// Opening a file.
    Open,
    /// Locking a file.
    Lock,
    /// Reading an entry's identity or type.
    Inspect,
    /// Removing a file or directory.
    Remove,
}

impl fmt::Display for IoAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Create => "create",
            Self::Read => "read",
            Self::Write => "write",
            Self::Resolve => "resolve",
            Self::List => "list",
            Self::Open => "open",
            Self::Lock => "lock",
            Self::Inspect => "inspect",
            Self::Remove => "remove",
        })
    }
}

/// What one shard manifest and another (or the packages of the release)
/// disagree on, as [`ErrorKind::ShardsDisagree`] and [`ErrorKind::LegsDisagree`]
/// name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The value (`the version`, `--linux-amdgpu-families`).
    pub what: &'static str,
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

/// Why `inspect`, `plan`, `build`, `assemble` or `index` failed: an
/// [`ErrorKind`], boxed so every `Result` of the crate stays small.
/// `Display` and `source` are the kind's.
#[derive(Debug)]
pub struct Error(Box<ErrorKind>);

impl Error {
    /// Which failure this is, with its paths and values.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The kind, owned.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self(Box::new(kind))
    }
}

/// `From` each error of a crate below that passes through as it is.
macro_rules! passed_on {
    ($($error:ty),* $(,)?) => {
        $(
            impl From<$error> for Error {
                fn from(error: $error) -> Self {
                    ErrorKind::from(error).into()
                }
            }
        )*
    };
}

passed_on!(
    artifacts::Error,
    dist_info::release_version::VersionChoiceError,
    crate::native::NativeProgramError,
    layout::Error,
    wheel_writer::Error,
    pypa_formats::filename::WheelTagError,
    elf_surgery::Error,
    devel_tar::Error,
    release_check::VerifyError,
    wheel_writer::dist_dir::NotRegular,
    release_check::SdistError,
);

/// Which failure an [`Error`] is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    // ---- reading the artifacts and planning -------------------------
    /// The artifact directory cannot be read, or an artifact is malformed
    /// (the error names the file).
    #[error(transparent)]
    Artifacts(#[from] artifacts::Error),
    /// The artifacts cannot be merged into one tree.
    #[error("cannot merge the artifacts of {}", artifact_dir.display())]
    Merge {
        /// The artifact directory.
        artifact_dir: PathBuf,
        /// Why.
        source: artifacts::Error,
    },
    /// The release version cannot be chosen (flag and manifest).
    #[error(transparent)]
    Version(#[from] dist_info::release_version::VersionChoiceError),
    /// `version_suffix` is no nonce.
    #[error("invalid --version-suffix")]
    VersionSuffix {
        /// Why.
        source: dist_info::nonce::NonceError,
    },
    /// `ROCM_SDK_WHEEL_PLATFORM_TAG` holds no platform tag.
    #[error("invalid {variable}")]
    PlatformTagVariable {
        /// The variable's name.
        variable: &'static str,
        /// Why.
        source: pypa_formats::filename::WheelTagError,
    },
    /// The `metadata` file cannot be read.
    #[error("cannot read the metadata file {}", path.display())]
    ReadMetadataFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The `metadata` file is no metadata file.
    #[error("the metadata file {} cannot be used; fix it", path.display())]
    BadMetadataFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: dist_info::project_metadata::MetadataFileError,
    },
    /// The native `rocm-sdk` a core wheel needs is missing or unusable.
    #[error(transparent)]
    NativeProgram(#[from] crate::native::NativeProgramError),
    /// The planner refused the set (the error names the file or rule).
    #[error(transparent)]
    Plan(#[from] layout::Error),
    /// Two packages of a plan would have one file name.
    #[error("two packages named {name} in dist/{subdir}")]
    DuplicatePackage {
        /// The distribution name.
        name: String,
        /// Its directory below `dist/`.
        subdir: String,
    },
    /// `plan --shards 0`.
    #[error("0 shards: split the set into at least one")]
    NoShards,
    /// More shards than packages.
    #[error(
        "{count} shards are more than the {packages} packages of this set; split it into at \
         most {packages} (one package per shard)"
    )]
    TooManyShards {
        /// The shards asked for.
        count: usize,
        /// The packages of the set.
        packages: usize,
    },

    // ---- building ---------------------------------------------------
    /// The destination lies inside the artifact directory
    /// (docs/behaviour.md#build-checks).
    #[error(
        "--dest-dir {} is inside --artifact-dir {} (as {}): the next build would package this \
         one's output; choose a destination outside the artifact directory",
        dest_dir.display(),
        artifact_dir.display(),
        real.display()
    )]
    DestinationInsideArtifacts {
        /// The destination as given.
        dest_dir: PathBuf,
        /// The artifact directory as given.
        artifact_dir: PathBuf,
        /// The destination's real path.
        real: PathBuf,
    },
    /// The artifact directory lies inside the destination.
    #[error(
        "--artifact-dir {} is inside --dest-dir {} (as {}), where the build replaces dist/ and \
         removes what earlier builds left; choose a destination that does not hold the artifact \
         directory",
        artifact_dir.display(),
        dest_dir.display(),
        real.display()
    )]
    ArtifactsInsideDestination {
        /// The artifact directory as given.
        artifact_dir: PathBuf,
        /// The destination as given.
        dest_dir: PathBuf,
        /// The artifact directory's real path.
        real: PathBuf,
    },
    /// `SOURCE_DATE_EPOCH` is no number of seconds.
    #[error("SOURCE_DATE_EPOCH={value} is not a number of seconds")]
    SourceDateEpoch {
        /// The variable's value.
        value: String,
        /// Why.
        source: std::num::ParseIntError,
    },
    /// A file-system step failed on `path`.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What the step was doing.
        action: IoAction,
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A staging or dist directory has no parent to hold its siblings.
    #[error("{} has no parent directory", path.display())]
    NoParent {
        /// The directory.
        path: PathBuf,
    },
    /// A plan names a directory below `dist/` that is no clean relative path.
    #[error(
        "dist/{subdir} is an unsafe directory ({problem}); packages are written only inside dist/"
    )]
    UnsafeSubdir {
        /// The directory as planned.
        subdir: String,
        /// What is wrong with it (said here, so it is no source as well).
        problem: pypa_formats::member::PathProblem,
    },
    /// A package's wheel tag, metadata or member is refused, or a package
    /// cannot be written (the error names the member or file).
    #[error(transparent)]
    Package(#[from] wheel_writer::Error),
    /// The threads that compress packages written at once cannot start.
    #[error("cannot start the compression threads")]
    CompressionThreads(#[source] wheel_writer::Error),
    /// A package is not written because one before it in the plan failed
    /// (never reported: that earlier failure is the build's error).
    #[error("not written: an earlier package failed")]
    EarlierPackageFailed,
    /// A wheel cannot be written.
    #[error("cannot write the {package} wheel")]
    WriteWheel {
        /// The distribution name.
        package: String,
        /// Why.
        source: wheel_writer::Error,
    },
    /// The planned platform tag is no valid wheel tag.
    #[error(transparent)]
    WheelTag(#[from] pypa_formats::filename::WheelTagError),
    /// An ELF file cannot be parsed or edited (the error names it).
    #[error(transparent)]
    Elf(#[from] elf_surgery::Error),
    /// A generated ELF file (a runtime alias) cannot be parsed.
    #[error("{dest} ({what})")]
    GeneratedElf {
        /// Where it goes in its wheel.
        dest: String,
        /// What it is.
        what: String,
        /// Why.
        source: elf_surgery::Error,
    },
    /// The launcher platform of the plan's tag is unknown.
    #[error(transparent)]
    LauncherPlatform(trampoline_gen::Error),
    /// A launcher cannot be made.
    #[error("launcher {dest}")]
    Launcher {
        /// Where it goes in its wheel.
        dest: String,
        /// Why.
        source: trampoline_gen::Error,
    },
    /// The devel tarball cannot be written (the error names the member).
    #[error(transparent)]
    DevelTar(#[from] devel_tar::Error),
    /// The written devel tarball cannot be added to its wheel.
    #[error("devel tarball {}", path.display())]
    DevelTarball {
        /// The tarball.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A source's reader failed (its error names the file or archive).
    #[error(transparent)]
    Source(io::Error),
    /// A staged entry of the old `dist/` cannot be linked into the new one.
    #[error("cannot carry {} over", path.display())]
    CarryOver {
        /// The entry.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// `dist/` holds index files (pages, `.metadata` files) describing
    /// the packages the build replaces, and they cannot be written again
    /// for the new ones (the cause says why): publishing would leave them
    /// stale, so nothing was published.
    #[error(
        "{} holds index files that describe the packages this build replaces ({}), and they \
         cannot be written again for the new packages, so nothing was published; remove them \
         (then run `therock-package index` after the build), or fix the cause",
        dist.display(),
        files.join(", ")
    )]
    StaleIndex {
        /// The `dist/` being replaced.
        dist: PathBuf,
        /// The index files, relative to it.
        files: Vec<String>,
        /// Why they cannot be written again.
        source: Box<Error>,
    },
    /// The staged `dist/` cannot replace the old one.
    #[error("cannot swap {} into place as {}", staged.display(), dist.display())]
    Swap {
        /// The staged `dist/`.
        staged: PathBuf,
        /// The `dist/` it replaces.
        dist: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The test hook's FIFO cannot be read (docs/pipeline.md).
    #[error("commit gate {}", path.display())]
    CommitGate {
        /// The FIFO.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },

    // ---- shards -------------------------------------------------------
    /// A written package lies outside the shard's `dist/`.
    #[error("{} is outside {}", path.display(), dist.display())]
    OutsideDist {
        /// The package.
        path: PathBuf,
        /// The shard's `dist/`.
        dist: PathBuf,
    },
    /// A shard's manifest cannot be read.
    #[error(
        "cannot read {}; pass the --dest-dir of a `therock-package build --shard K/N`",
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
         by another build?); build each shard into an empty --dest-dir",
        path.display()
    )]
    ShardPackageExtra {
        /// The package.
        path: PathBuf,
        /// The shard.
        id: ShardId,
    },
    /// A shard of another plan among those of one platform.
    #[error(
        "{} holds shard {id} of another plan ({plan}) than {} (shard {reference_id}, plan \
         {reference_plan}), both {platform_tag}: every shard of a platform must be built from \
         the same artifacts and flags; rebuild it, or leave it out if it belongs to another \
         release",
        dir.display(),
        reference_dir.display()
    )]
    ForeignShard {
        /// The foreign shard's directory.
        dir: PathBuf,
        /// Its id.
        id: ShardId,
        /// Its plan.
        plan: String,
        /// A shard of the platform's plan.
        reference_dir: PathBuf,
        /// Its id.
        reference_id: ShardId,
        /// The platform's plan.
        reference_plan: String,
        /// The wheel platform tag.
        platform_tag: String,
    },
    /// Shards of one plan split into different counts.
    #[error(
        "{} is shard {id} but {} is shard {reference_id} of the same {platform_tag} plan: build \
         every shard with the --shards count `plan` was given",
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
         --dest-dir of `build --shard {}` too",
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
    #[error(
        "{} (shard {first_id}) and {} (shard {other_id}) of the {platform_tag} plan {plan} \
         disagree on {disagreement}; the shards of one plan carry the same values, so one \
         manifest was changed after its build: rebuild that shard",
        first_dir.display(),
        other_dir.display()
    )]
    ShardsDisagree {
        /// One shard's directory.
        first_dir: PathBuf,
        /// Its id.
        first_id: ShardId,
        /// The other's.
        other_dir: PathBuf,
        /// Its id.
        other_id: ShardId,
        /// The wheel platform tag.
        platform_tag: String,
        /// The plan.
        plan: String,
        /// What they disagree on.
        disagreement: Disagreement,
    },
    /// The shards of two platforms disagree on a value of the release.
    #[error(
        "the {first_platform} shards ({}) and the {other_platform} shards ({}) disagree on \
         {disagreement}; one release needs the same value on every platform",
        first_dir.display(),
        other_dir.display()
    )]
    LegsDisagree {
        /// One platform tag.
        first_platform: String,
        /// A shard of it.
        first_dir: PathBuf,
        /// The other platform tag.
        other_platform: String,
        /// A shard of it.
        other_dir: PathBuf,
        /// What they disagree on.
        disagreement: Disagreement,
    },
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
        source: wheel_writer::ReadError,
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
        source: layout::Error,
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
        "{} is not empty; assemble writes a whole release: give a new or empty --dest-dir",
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
    /// The assembled release fails `verify`: nothing was written. The
    /// report says which checks failed.
    #[error("the assembled release fails verify, so nothing was written")]
    AssembledReleaseFailsVerify {
        /// The report of the failed verification.
        report: Box<release_check::VerifyReport>,
    },

    // ---- index --------------------------------------------------------
    /// `index` of a path that is no directory.
    #[error("{} is not a directory; pass the dist directory to index", dir.display())]
    NotADirectory {
        /// The path as given.
        dir: PathBuf,
    },
    /// A dist directory holds what no page may link (a package name on
    /// something other than a regular file).
    #[error(transparent)]
    Refused(#[from] wheel_writer::dist_dir::NotRegular),
    /// `index` of a directory without packages.
    #[error("{} holds no wheel or sdist; build the packages first", dir.display())]
    NoPackages {
        /// The directory.
        dir: PathBuf,
    },
    /// `per_family` on a directory without family subdirectories.
    #[error(
        "{} has no per-family subdirectories (dist/{{F}}/, written by legacy builds with several \
         families); index it without --per-family",
        dir.display()
    )]
    NoFamilyDirectories {
        /// The directory.
        dir: PathBuf,
    },
    /// One file name twice in a directory indexed as one page.
    #[error(
        "{} holds {file_name} twice ({first} and {second}); one page cannot offer both: use \
         --per-family for a legacy release with several families",
        dir.display()
    )]
    FileNameTwice {
        /// The directory.
        dir: PathBuf,
        /// The file name.
        file_name: String,
        /// Its first path below the directory.
        first: String,
        /// Its second.
        second: String,
    },
    /// A package's file name cannot be parsed.
    #[error("cannot index {}", path.display())]
    Unindexable {
        /// The package.
        path: PathBuf,
        /// Why.
        source: pypa_formats::filename::FilenameError,
    },
    // ---- post-release of the selector ------------------------------
    /// The version is not a post-release of the release.
    #[error(
        "{version} is not a post-release of the release {release}: a post-release of the \
         selector is {release}.postN (a patch release or another .dev is a new release; \
         build it with `therock-package build`)"
    )]
    NotAPostRelease {
        /// What was asked for.
        version: String,
        /// The release's version.
        release: String,
    },
    /// The dist directory holds no core wheel to take the release from.
    #[error(
        "{} holds no rocm-sdk-core wheel: post-release needs the dist/ directory of the \
         release it publishes the selector over",
        dist_dir.display()
    )]
    PostReleaseNoCore {
        /// The directory.
        dist_dir: PathBuf,
    },
    /// Core wheels of two versions.
    #[error(
        "{} holds rocm-sdk-core wheels of {first} and {second}: keep one release in it",
        dist_dir.display()
    )]
    PostReleaseMixed {
        /// The directory.
        dist_dir: PathBuf,
        /// One version.
        first: String,
        /// Another.
        second: String,
    },
    /// The release's own selector is missing.
    #[error(
        "{} holds no rocm-{release}.tar.gz: post-release starts from the release's own \
         selector; put it back beside the wheels",
        dist_dir.display()
    )]
    PostReleaseNoSelector {
        /// The directory.
        dist_dir: PathBuf,
        /// The release's version.
        release: String,
    },
    /// The release's selector has an unreadable document.
    #[error("the document of {} cannot be read; rebuild the release's selector", path.display())]
    PostReleaseDocument {
        /// The sdist.
        path: PathBuf,
        /// Why.
        source: dist_info::document::DocumentError,
    },
    /// The release's selector's document is of another version.
    #[error(
        "the document of {} says {found}, not the release {release}; rebuild the release's \
         selector",
        path.display()
    )]
    PostReleaseDocumentVersion {
        /// The sdist.
        path: PathBuf,
        /// What its document says.
        found: String,
        /// The release's version.
        release: String,
    },
    /// The post-release exists already.
    #[error("{} exists already; remove it to build it again", path.display())]
    PostReleaseExists {
        /// The file.
        path: PathBuf,
    },
    /// An sdist's `PKG-INFO` cannot be read (the error names it).
    #[error(transparent)]
    Sdist(#[from] release_check::SdistError),
    /// A listed file is neither wheel nor sdist.
    #[error("{} is neither a wheel nor an sdist", path.display())]
    NotAPackage {
        /// The file.
        path: PathBuf,
    },
    /// A wheel's `METADATA` cannot be read.
    #[error(
        "cannot read the METADATA of {}; rebuild the wheel or remove it from the directory",
        path.display()
    )]
    WheelMetadata {
        /// The wheel.
        path: PathBuf,
        /// Why.
        source: wheel_writer::ReadError,
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

impl Error {
    /// [`ErrorKind::Io`] for `action` on `path`, as a `map_err` closure.
    pub(crate) fn io(action: IoAction, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| {
            ErrorKind::Io {
                action,
                path,
                source,
            }
            .into()
        }
    }
}

/// A result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
