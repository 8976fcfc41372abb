//! One indexed artifact: its name, where it lives, its base directories and members.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::identity::{FileIdentity, open_checked, open_regular};
use crate::{ArchiveFormat, ArtifactName, Error, Result};

/// Where an artifact lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactLocation {
    /// An extracted directory `{artifact-dir}/{name}`.
    Dir(PathBuf),
    /// An archive `{artifact-dir}/{name}.tar.zst` or `.tar.xz`, read in place.
    Archive(Arc<ArchiveRef>),
}

impl ArtifactLocation {
    /// The directory or archive file.
    pub fn path(&self) -> &Path {
        match self {
            Self::Dir(p) => p,
            Self::Archive(a) => &a.path,
        }
    }
}

/// An archive file and its compression, as indexed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArchiveRef {
    /// The archive file.
    pub path: PathBuf,
    /// Its compression.
    pub format: ArchiveFormat,
    /// The file that was indexed (and so verified); a reopened file must match.
    pub(crate) identity: FileIdentity,
}

/// Where the bytes of a regular file come from.
///
/// Every open checks that the source is still what was indexed (its
/// [`FileIdentity`] for a file; the archive's for a member) and refuses it
/// with [`Error::SourceChanged`] otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntrySource {
    /// A file on disk (inside a directory artifact, or a member this
    /// process extracted from an archive).
    File {
        /// The file.
        path: PathBuf,
        /// What it was when it was indexed.
        identity: FileIdentity,
        /// The archive artifact it was extracted from, for messages: the
        /// file itself is the build's scratch copy, which the user never
        /// sees.
        extracted_from: Option<Arc<ArchiveRef>>,
    },
    /// The data of an archive member: `size` bytes at `offset` in the
    /// decompressed tar stream (a hard link points at its target's data).
    ArchiveMember {
        /// The archive.
        archive: Arc<ArchiveRef>,
        /// Byte offset of the data in the decompressed stream.
        offset: u64,
        /// Length of the data.
        size: u64,
    },
}

impl EntrySource {
    /// The regular file at `path` as it is now: a source whose later opens
    /// fail once it changes. A symlink is not followed.
    pub fn file(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let (file, meta) = open_regular(&path, false)?;
        let identity = FileIdentity::of(&path, &file, &meta)?;
        Ok(Self::File {
            path,
            identity,
            extracted_from: None,
        })
    }

    /// A file on disk, opened and checked against its identity (seekable,
    /// for a reader that parses headers); `None` for an archive member.
    pub fn open_file(&self) -> Result<Option<std::fs::File>> {
        match self {
            Self::File { path, identity, .. } => open_checked(path, identity, false).map(Some),
            Self::ArchiveMember { .. } => Ok(None),
        }
    }

    /// Opens the bytes for reading.
    ///
    /// For an archive member this decompresses the archive from its start
    /// up to the member (cost: the archive up to that point). To read many
    /// members, use [`crate::read_sources`] or [`crate::Catalog::for_each_file`],
    /// which decompress each archive once.
    pub fn open(&self) -> Result<Box<dyn Read + Send>> {
        match self {
            Self::File { path, identity, .. } => Ok(Box::new(open_checked(path, identity, false)?)),
            Self::ArchiveMember {
                archive,
                offset,
                size,
            } => {
                let mut stream = crate::archive::decoder(archive)?;
                let skipped = std::io::copy(&mut (&mut stream).take(*offset), &mut std::io::sink())
                    .map_err(|e| crate::archive::read_error(&archive.path, e))?;
                if skipped != *offset {
                    return Err(Error::BadArchive {
                        archive: archive.path.clone(),
                        reason:
                            "the archive is shorter than its index; it changed while being read"
                                .into(),
                    });
                }
                Ok(Box::new(stream.take(*size)))
            }
        }
    }

    /// Reads all the bytes into memory.
    pub fn read_to_vec(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.open()?.read_to_end(&mut out).map_err(|e| match self {
            Self::File { path, .. } => Error::io(path, e),
            Self::ArchiveMember { archive, .. } => crate::archive::read_error(&archive.path, e),
        })?;
        Ok(out)
    }

    /// The archive artifact the bytes come from: the archive of a member,
    /// or the one a file was extracted from; `None` for a file of a
    /// directory artifact.
    pub fn archive(&self) -> Option<&ArchiveRef> {
        match self {
            Self::File { extracted_from, .. } => extracted_from.as_deref(),
            Self::ArchiveMember { archive, .. } => Some(archive),
        }
    }

    /// The file on disk, or the archive, that holds the bytes.
    pub fn path(&self) -> &Path {
        match self {
            Self::File { path, .. } => path,
            Self::ArchiveMember { archive, .. } => &archive.path,
        }
    }
}

/// What a member is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum MemberKind {
    /// A regular file (a hard link in an archive is a file too).
    File,
    /// A directory.
    Dir,
    /// A symbolic link, with its raw link text.
    Symlink(String),
}

/// One path inside one base directory of one artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Index into [`Artifact::prefixes`].
    pub prefix: usize,
    /// Path relative to the base directory, `/`-separated, never empty.
    pub relpath: String,
    /// File, directory or symlink.
    pub kind: MemberKind,
    /// Permission bits (`0o7777`); symlinks are always `0o777`.
    pub mode: u32,
    /// Size in bytes of a file; 0 for directories and symlinks.
    pub size: u64,
    /// The bytes of a file; `None` for directories and symlinks.
    pub source: Option<EntrySource>,
}

/// File, directory and symlink counts and file bytes of a set of members.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Regular files.
    pub files: u64,
    /// Directories.
    pub dirs: u64,
    /// Symbolic links.
    pub symlinks: u64,
    /// Total size of the regular files.
    pub bytes: u64,
}

impl Stats {
    /// Counts one member.
    pub fn add(&mut self, kind: &MemberKind, size: u64) {
        match kind {
            MemberKind::File => {
                self.files += 1;
                self.bytes += size;
            }
            MemberKind::Dir => self.dirs += 1,
            MemberKind::Symlink(_) => self.symlinks += 1,
        }
    }
}

/// An indexed artifact: every member of every base directory, sorted.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub(crate) name: Arc<ArtifactName>,
    pub(crate) location: ArtifactLocation,
    pub(crate) prefixes: Vec<String>,
    pub(crate) missing_prefixes: Vec<String>,
    pub(crate) members: Vec<Member>,
}

impl Artifact {
    /// The artifact's name.
    pub fn name(&self) -> &ArtifactName {
        &self.name
    }

    /// Where it lives.
    pub fn location(&self) -> &ArtifactLocation {
        &self.location
    }

    /// The base directories from the manifest, in manifest order (including
    /// any that are missing; see [`Self::missing_prefixes`]).
    pub fn prefixes(&self) -> &[String] {
        &self.prefixes
    }

    /// Manifest lines whose base directory does not exist (skipped).
    pub fn missing_prefixes(&self) -> &[String] {
        &self.missing_prefixes
    }

    /// Every member, sorted by relpath, then by base directory.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Counts and bytes of the members.
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for m in &self.members {
            s.add(&m.kind, m.size);
        }
        s
    }

    /// The member at `path` relative to the artifact root, i.e. a base
    /// directory joined with the member's relpath.
    pub fn find(&self, path_in_artifact: &str) -> Option<&Member> {
        self.members.iter().find(|m| {
            let prefix = &self.prefixes[m.prefix];
            if prefix.is_empty() {
                m.relpath == path_in_artifact
            } else {
                path_in_artifact
                    .strip_prefix(prefix.as_str())
                    .and_then(|rest| rest.strip_prefix('/'))
                    == Some(m.relpath.as_str())
            }
        })
    }

    /// A human-readable location of a path inside this artifact, for errors.
    pub fn display_path(&self, path_in_artifact: &str) -> PathBuf {
        match &self.location {
            ArtifactLocation::Dir(d) => d.join(path_in_artifact),
            ArtifactLocation::Archive(a) => {
                let mut s = a.path.clone().into_os_string();
                s.push(format!("!/{path_in_artifact}"));
                PathBuf::from(s)
            }
        }
    }
}
