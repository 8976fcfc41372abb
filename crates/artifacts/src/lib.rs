//! The artifact reader: TheRock's artifact directories and archives as one
//! sorted, safe catalog of entries.
//!
//! The input side of the pipeline (docs/behaviour.md#inputs):
//! - [`ArtifactDir`] discovers the artifacts of a directory — extracted
//!   `{name}_{component}_{target}/` directories and `.tar.zst`/`.tar.xz`
//!   archives read in place — and indexes each one's manifest and members;
//! - [`ArtifactDir::catalog`] merges the artifacts an [`ArtifactFilter`]
//!   takes into one sorted [`Catalog`] of [`Entry`]s, keeping the relpaths a
//!   [`PathFilter`] (the reference's glob language, [`Glob`]) takes, with
//!   symlinks resolved inside the merged tree;
//! - [`ArtifactDir::therock_manifest`] and [`ArtifactDir::dist_info`] read the
//!   build's description;
//! - [`Catalog::for_each_file`] / [`read_sources`] stream every file's bytes,
//!   decompressing each archive once, in parallel;
//! - [`ArtifactDir::open_extracting`] also writes the file members of every
//!   archive to a directory the caller owns while indexing it (one pass),
//!   for a reader that wants each file at its own time (a build).
//!
//! Safety: manifest lines and archive members cannot leave the artifact,
//! and a manifest line is reached through real directories only;
//! symlinks are never followed on disk and never resolved outside the
//! merged tree; nothing is extracted to disk unless the caller asks for it
//! (and then only file data, below its directory). Inputs are read fully and
//! checked: a manifest must be a regular file, an unreadable artifact is an
//! error, and an archive is read to the end of its compressed stream (so
//! its checksums are verified) and must end with the tar end-of-archive
//! marker before any of its members is offered.
//!
//! Listing what an artifact directory would package, from another program
//! (here the built-in example of the `fixtures` crate):
//!
//! ```
//! use artifacts::{ArtifactDir, ArtifactFilter, PathFilter};
//! use fixtures::{ExampleMode, Layout};
//!
//! let path = fixtures::shared().artifact_dir(ExampleMode::Kpack, Layout::TarZst);
//! let dir = ArtifactDir::open(&path)?;
//! assert_eq!(dir.therock_manifest()?.version.as_deref(), Some("7.1.0"));
//!
//! // Every file of the host libraries, merged and sorted, read in place.
//! let catalog = dir.catalog(&ArtifactFilter::new().components(["lib"]), &PathFilter::new())?;
//! let hip = catalog.get("lib/libamdhip64.so.7.1.0").expect("in the example");
//! let mut bytes = Vec::new();
//! std::io::Read::read_to_end(&mut hip.open()?, &mut bytes)?;
//! assert!(bytes.starts_with(b"\x7fELF"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod archive;
mod artifact;
mod artifact_dir;
mod catalog;
mod content;
mod error;
mod extract;
mod filter;
mod glob;
mod identity;
mod manifest;
mod name;
mod resolve;
mod scan_dir;
mod therock;

pub use artifact::{
    ArchiveRef, Artifact, ArtifactLocation, EntrySource, Member, MemberKind, Stats,
};
pub use artifact_dir::{ArtifactDir, Notice};
pub use catalog::{Catalog, CatalogWarning, Difference, Entry, EntryKind, Origin};
pub use content::read_sources;
pub use error::{Error, Result};
pub use filter::{ArtifactFilter, PathFilter};
pub use glob::Glob;
pub use identity::FileIdentity;
pub use manifest::{MANIFEST_FILE, parse_manifest};
pub use name::{ArchiveFormat, ArtifactName, GENERIC_TARGET};
pub use resolve::{Dangling, Resolution};
pub use therock::{BASE_ARTIFACT, DIST_INFO_PATH, THEROCK_MANIFEST_PATH, TheRockManifest};
