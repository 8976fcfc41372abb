//! Why [`build`](crate::build()) failed: planning, writing the packages
//! ([`WriteError`], which `assemble` and `post_release` share for their
//! sdists) and publishing `dist/` ([`PublishError`], shared with
//! `assemble`).

use std::io;
use std::path::PathBuf;

use super::{IndexError, IoError, PlanError};

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The artifacts could not be read or planned.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The destination lies inside the artifact directory
    /// (docs/behaviour.md#build-checks).
    #[error(
        "the destination {} is inside the artifact directory {} (as {}): the next build would \
         package this one's output; choose a destination outside the artifact directory",
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
        "the artifact directory {} is inside the destination {} (as {}), where the build \
         replaces dist/ and removes what earlier builds left; choose a destination that does \
         not hold the artifact directory",
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
    /// The build's threads cannot start.
    #[error("cannot start {jobs} threads for the build")]
    Threads {
        /// How many were asked for.
        jobs: usize,
        /// Why.
        source: rayon::ThreadPoolBuildError,
    },
    /// A file-system step failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A package cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The packages written cannot be published into `dist/`.
    #[error(transparent)]
    Publish(#[from] PublishError),
    /// A written package lies outside the shard's `dist/`.
    #[error("{} is outside {}", path.display(), dist.display())]
    OutsideDist {
        /// The package.
        path: PathBuf,
        /// The shard's `dist/`.
        dist: PathBuf,
    },
}

/// Why a package (a wheel, or a `rocm` sdist) cannot be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
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
    /// An artifact's file or member cannot be read (the error names it).
    #[error(transparent)]
    Artifacts(#[from] artifacts::Error),
    /// A file-system step failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The package's directory in the staged `dist/` cannot be made.
    #[error(transparent)]
    Publish(#[from] PublishError),
}

/// Why the packages written cannot be published into `dist/` at once
/// (docs/pipeline.md, "Outputs appear atomically").
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
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
        source: Box<IndexError>,
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
    /// The caller's [`BuildPause`](crate::BuildPause) failed where the
    /// build waited for it.
    #[error("the build's pause at {point} failed")]
    Pause {
        /// Where the build waited.
        point: crate::BuildPoint,
        /// Why.
        source: io::Error,
    },
    /// A file-system step failed.
    #[error(transparent)]
    Io(#[from] IoError),
}
