//! The archive abstraction: wheels, sdists and an in-memory mock all sit
//! behind [`ArchiveSink`], so packaging logic is testable without zip files.

use std::io::Read;

use sha2::{Digest as _, Sha256};

use crate::{Error, Member, MemberDigest};

/// Somewhere members are written, in the order given.
pub trait ArchiveSink {
    /// Writes `members` in order and returns each one's digest, in the same
    /// order. A sink may compress them in parallel; the bytes it produces do
    /// not depend on that.
    fn write_members(&mut self, members: &[Member]) -> Result<Vec<MemberDigest>, Error>;
}

/// One member captured by a [`MemorySink`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryMember {
    /// Path inside the archive.
    pub path: String,
    /// Unix permission bits (0o644 or 0o755).
    pub mode: u32,
    /// The uncompressed bytes.
    pub bytes: Vec<u8>,
}

/// A sink that keeps members in memory, for tests of packaging logic.
#[derive(Debug, Default, Clone)]
pub struct MemorySink {
    members: Vec<MemoryMember>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every member written so far, in write order.
    pub fn members(&self) -> &[MemoryMember] {
        &self.members
    }

    /// The bytes of the member at `path`, if written.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.members
            .iter()
            .find(|m| m.path == path)
            .map(|m| m.bytes.as_slice())
    }
}

impl ArchiveSink for MemorySink {
    fn write_members(&mut self, members: &[Member]) -> Result<Vec<MemberDigest>, Error> {
        let mut digests = Vec::with_capacity(members.len());
        for member in members {
            let bytes = read_member(member)?;
            let digest = MemberDigest {
                sha256: Sha256::digest(&bytes).into(),
                size: bytes.len() as u64,
            };
            self.members.push(MemoryMember {
                path: member.path().to_owned(),
                mode: member.mode(),
                bytes,
            });
            digests.push(digest);
        }
        Ok(digests)
    }
}

/// Reads a whole member, checking its declared size.
pub(crate) fn read_member(member: &Member) -> Result<Vec<u8>, Error> {
    let source = member.source();
    let declared = source.size();
    let source_error = |source_err| Error::Source {
        origin: source.origin(),
        member: member.path().to_owned(),
        source: source_err,
    };
    let reader = source.open().map_err(source_error)?;
    let mut bytes = Vec::with_capacity(usize::try_from(declared).unwrap_or(0).min(1 << 24));
    reader
        .take(declared.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(source_error)?;
    check_size(member, bytes.len() as u64)?;
    Ok(bytes)
}

/// Fails when a source yielded a different number of bytes than it declared.
pub(crate) fn check_size(member: &Member, actual: u64) -> Result<(), Error> {
    let declared = member.source().size();
    if actual == declared {
        Ok(())
    } else {
        Err(Error::SizeMismatch {
            origin: member.source().origin(),
            member: member.path().to_owned(),
            declared,
            actual,
        })
    }
}
