//! Extracting the file members of archive artifacts while they are indexed,
//! for a reader that wants every member at its own time (a build).
//!
//! An archive can only be read front to back, and a build reads each file
//! when the package that holds it is written, in package order: reading
//! members in place would decompress the archive again for each one. So
//! [`ArtifactDir::open_extracting`] writes each file member's data to its
//! own file below a directory the caller owns during the one pass that
//! indexes and verifies the archive; the returned [`ArtifactDir`] then
//! reads those files exactly as it would an extracted artifact directory
//! (docs/artifacts.md, "Building from archives"). Each archive is
//! decompressed once; memory stays one decoder and one copy buffer per
//! archive.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::artifact::ArtifactLocation;
use crate::identity::FileIdentity;
use crate::{ArtifactDir, ArtifactFilter, ArtifactName, Error, Result};

/// The copy buffer of one archive's extraction.
const BUFFER: usize = 1 << 18;

/// The directory below an extraction's root that holds data whose
/// natural path was taken (a tar naming one path twice).
const BY_OFFSET: &str = ".by-offset";

impl ArtifactDir {
    /// [`ArtifactDir::open_filtered`], writing the data of every file member
    /// of an archive artifact below `into` (`{into}/{artifact}/{path in
    /// archive}`; created when there is an archive, and left for the caller
    /// to remove) in the same pass that indexes the archive. Those members'
    /// sources are the written files; directory artifacts are read in
    /// place. An archive that fails its checks fails the whole call, with
    /// whatever was written left for the caller to remove.
    pub fn open_extracting(path: &Path, filter: &ArtifactFilter, into: &Path) -> Result<Self> {
        Self::discover(path, filter, Some(into))
    }

    /// Whether any artifact is an archive.
    pub fn has_archives(&self) -> bool {
        self.artifacts
            .iter()
            .any(|a| matches!(a.location, ArtifactLocation::Archive(_)))
    }
}

/// Where one archive's members are written: `{into}/{artifact}`.
#[derive(Debug)]
pub(crate) struct ExtractRoot {
    root: PathBuf,
    archive: PathBuf,
    buffer: Vec<u8>,
}

impl ExtractRoot {
    /// Creates `{into}/{artifact}` (and `into` if needed) for `archive`.
    pub(crate) fn create(into: &Path, artifact: &ArtifactName, archive: &Path) -> Result<Self> {
        fs::create_dir_all(into).map_err(|e| Error::io(into, e))?;
        let root = into.join(artifact.to_string());
        fs::create_dir(&root).map_err(|e| Error::io(&root, e))?;
        Ok(Self {
            root,
            archive: archive.to_owned(),
            buffer: vec![0u8; BUFFER],
        })
    }

    /// Writes the `size` bytes of `data` (the member `name`, whose data
    /// starts at `offset` in the stream) to a new file; returns its path
    /// and its identity once written (what later reads must find).
    pub(crate) fn write(
        &mut self,
        name: &str,
        offset: u64,
        size: u64,
        data: &mut dyn Read,
    ) -> Result<(PathBuf, FileIdentity)> {
        let (path, mut file) = self.new_member_file(name, offset)?;
        let mut left = size;
        while left > 0 {
            let want = usize::try_from(left).map_or(BUFFER, |n| n.min(BUFFER));
            let got = match data.read(&mut self.buffer[..want]) {
                Ok(0) => return Err(self.read_error(io::ErrorKind::UnexpectedEof.into())),
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e)),
            };
            file.write_all(&self.buffer[..got])
                .map_err(|e| self.write_error(&path, e))?;
            left -= got as u64;
        }
        let meta = file.metadata().map_err(|e| self.write_error(&path, e))?;
        let identity = FileIdentity::of(&path, &file, &meta)?;
        Ok((path, identity))
    }

    /// Creates the file for a member's data at `{root}/{name}`, or below
    /// [`BY_OFFSET`] when that path is taken (the tar names it twice, or
    /// names a file below another file).
    fn new_member_file(&self, name: &str, offset: u64) -> Result<(PathBuf, File)> {
        let natural = self.root.join(name);
        let parent = natural.parent().expect("below the root");
        if let Ok(file) = fs::create_dir_all(parent).and_then(|()| new_file(&natural)) {
            return Ok((natural, file));
        }
        let dir = self.root.join(BY_OFFSET);
        fs::create_dir_all(&dir).map_err(|e| self.write_error(&dir, e))?;
        let path = dir.join(offset.to_string());
        let file = new_file(&path).map_err(|e| self.write_error(&path, e))?;
        Ok((path, file))
    }

    /// A failed read of the archive's stream.
    fn read_error(&self, e: io::Error) -> Error {
        crate::archive::read_error(&self.archive, e)
    }

    fn write_error(&self, path: &Path, source: io::Error) -> Error {
        Error::Extract {
            archive: self.archive.clone(),
            path: path.to_owned(),
            source,
        }
    }
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
