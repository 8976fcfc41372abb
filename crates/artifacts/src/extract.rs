//! Extracting the file members of archive artifacts once, for a reader that
//! wants every member at its own time (a build).
//!
//! An archive can only be read front to back, and a build reads each file
//! when the package that holds it is written, in package order: reading
//! members in place would decompress the archive again for each one. So a
//! build decompresses every archive once, in parallel, writing each file
//! member's data to its own file below a directory the caller owns; the
//! returned [`ArtifactDir`] then reads those files exactly as it would an
//! extracted artifact directory (docs/artifacts.md, "Building from
//! archives"). Memory stays one decoder and one copy buffer per archive.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::artifact::{ArchiveRef, Artifact, ArtifactLocation, EntrySource};
use crate::{ArtifactDir, Error, Result};

/// The copy buffer of one archive's extraction.
const BUFFER: usize = 1 << 18;

/// The directory below an extraction's root that holds data whose
/// natural path was taken (a tar naming one path twice).
const BY_OFFSET: &str = ".by-offset";

impl ArtifactDir {
    /// Decompresses every archive artifact once and writes the data of its
    /// file members below `into` (`{into}/{artifact}/{path in artifact}`;
    /// created, and left for the caller to remove). The returned directory
    /// is this one with those members' sources pointing at the written
    /// files; directory artifacts are unchanged.
    ///
    /// Each archive is reopened through the identity check of its indexing
    /// pass, so the bytes written are the bytes verified.
    pub fn extract_archives(&self, into: &Path) -> Result<Self> {
        fs::create_dir_all(into).map_err(|e| Error::io(into, e))?;
        let artifacts = self
            .artifacts
            .par_iter()
            .map(|artifact| match &artifact.location {
                ArtifactLocation::Dir(_) => Ok(artifact.clone()),
                ArtifactLocation::Archive(archive) => extract(artifact, archive, into),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            path: self.path.clone(),
            artifacts,
            notices: self.notices.clone(),
        })
    }

    /// Whether any artifact is an archive.
    pub fn has_archives(&self) -> bool {
        self.artifacts
            .iter()
            .any(|a| matches!(a.location, ArtifactLocation::Archive(_)))
    }
}

/// Writes the file members of one archive artifact; returns the artifact
/// with their sources replaced.
fn extract(artifact: &Artifact, archive: &ArchiveRef, into: &Path) -> Result<Artifact> {
    let root = into.join(artifact.name.to_string());
    fs::create_dir(&root).map_err(|e| Error::io(&root, e))?;
    // One file per distinct data (hard links and overlapping prefixes
    // share it), named after the first member that has it.
    let mut wanted: BTreeMap<(u64, u64), String> = BTreeMap::new();
    for member in &artifact.members {
        if let Some(EntrySource::ArchiveMember { offset, size, .. }) = &member.source {
            let prefix = &artifact.prefixes[member.prefix];
            wanted.entry((*offset, *size)).or_insert_with(|| {
                if prefix.is_empty() {
                    member.relpath.clone()
                } else {
                    format!("{prefix}/{}", member.relpath)
                }
            });
        }
    }
    let mut stream = crate::archive::decoder(archive)?;
    let mut buffer = vec![0u8; BUFFER];
    let mut position = 0u64;
    let mut written: BTreeMap<(u64, u64), PathBuf> = BTreeMap::new();
    for (&(offset, size), name) in &wanted {
        let gap = offset
            .checked_sub(position)
            .ok_or_else(|| Error::BadArchive {
                archive: archive.path.clone(),
                reason: "members overlap in the index; re-open the artifact directory".into(),
            })?;
        copy_exact(&mut stream, &mut io::sink(), gap, &mut buffer).map_err(|e| match e {
            CopyError::Read(e) | CopyError::Write(e) => read_failure(archive, e),
        })?;
        let (path, mut file) = create(&root, name, offset)?;
        copy_exact(&mut stream, &mut file, size, &mut buffer).map_err(|e| match e {
            CopyError::Read(e) => read_failure(archive, e),
            CopyError::Write(e) => Error::Extract {
                archive: archive.path.clone(),
                path: path.clone(),
                source: e,
            },
        })?;
        written.insert((offset, size), path);
        position = offset + size;
    }
    let mut out = artifact.clone();
    for member in &mut out.members {
        if let Some(EntrySource::ArchiveMember { offset, size, .. }) = &member.source {
            let path = written[&(*offset, *size)].clone();
            member.source = Some(EntrySource::File(path));
        }
    }
    Ok(out)
}

/// Creates the file for a member's data at `{root}/{name}`, or below
/// [`BY_OFFSET`] when that path is taken (the tar names it twice, or
/// names a file below another file).
fn create(root: &Path, name: &str, offset: u64) -> Result<(PathBuf, File)> {
    let natural = root.join(name);
    let parent = natural.parent().expect("below the root");
    let opened = fs::create_dir_all(parent).and_then(|()| new_file(&natural));
    if let Ok(file) = opened {
        return Ok((natural, file));
    }
    let dir = root.join(BY_OFFSET);
    fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join(offset.to_string());
    let file = new_file(&path).map_err(|e| Error::io(&path, e))?;
    Ok((path, file))
}

/// A new file only this user can read: extracted members are the build's
/// scratch copies.
fn new_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Which side of a copy failed.
enum CopyError {
    Read(io::Error),
    Write(io::Error),
}

/// The error for a failed read of the stream: one that ends before a
/// member's data changed since it was indexed.
fn read_failure(archive: &ArchiveRef, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        Error::BadArchive {
            archive: archive.path.clone(),
            reason: "the archive is shorter than its index; it changed while being read".into(),
        }
    } else {
        crate::archive::read_error(&archive.path, e)
    }
}

/// Copies exactly `n` bytes; fewer is `UnexpectedEof`.
fn copy_exact(
    from: &mut dyn Read,
    to: &mut dyn Write,
    mut n: u64,
    buffer: &mut [u8],
) -> std::result::Result<(), CopyError> {
    while n > 0 {
        let want = usize::try_from(n).map_or(buffer.len(), |n| n.min(buffer.len()));
        let got = match from.read(&mut buffer[..want]) {
            Ok(0) => return Err(CopyError::Read(io::ErrorKind::UnexpectedEof.into())),
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e)),
        };
        to.write_all(&buffer[..got]).map_err(CopyError::Write)?;
        n -= got as u64;
    }
    Ok(())
}
