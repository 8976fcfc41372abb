//! The writer side: pieces arrive out of order from the pool and leave in
//! archive order; headers of streamed members are patched once their CRC
//! and compressed size are known.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;

use crc32fast::Hasher as Crc;

use super::cache::Blob;
use super::deflate::Codec;
use super::format::{DosDateTime, EntryHeader, end_records, needs_zip64};
use super::producer::{Numbered, Piece};
use crate::timings::{WritePhase, WriteTimings, span};
use crate::{Error, Member, MemberDigest};
use fs_helpers::positioned::{read_exact_at, write_all_at};

/// Where a reused member's compressed bytes are.
#[derive(Debug, Clone)]
pub(crate) enum Reuse {
    /// In a wheel written earlier (through the cache).
    Blob(Blob),
    /// In this archive, as the member at this index of the same batch.
    Member(usize),
}

/// A member to copy rather than compress, with its known digest.
#[derive(Debug, Clone)]
pub(crate) struct Reused {
    pub(crate) from: Reuse,
    pub(crate) digest: MemberDigest,
}

/// `Write` over a shared file handle (the cache keeps another clone).
struct SharedFile(Arc<File>);

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self.0).write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        (&*self.0).flush()
    }
}

/// The output file and the entries written so far.
pub(crate) struct ZipOutput {
    file: Arc<File>,
    path: PathBuf,
    buf: BufWriter<SharedFile>,
    pos: u64,
    dos: DosDateTime,
    entries: Vec<EntryHeader>,
}

/// A streamed member whose header awaits its CRC and sizes.
struct Open {
    header: EntryHeader,
    crc32: Crc,
}

impl ZipOutput {
    pub(crate) fn new(file: Arc<File>, path: PathBuf, dos: DosDateTime) -> Self {
        Self {
            buf: BufWriter::with_capacity(1 << 20, SharedFile(Arc::clone(&file))),
            file,
            path,
            pos: 0,
            dos,
            entries: Vec::new(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn file(&self) -> Arc<File> {
        Arc::clone(&self.file)
    }

    pub(crate) fn entry_count(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn entry(&self, index: usize) -> &EntryHeader {
        &self.entries[index]
    }

    fn io(&self, source: io::Error) -> Error {
        Error::Output {
            path: self.path.clone(),
            source,
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.buf.write_all(bytes).map_err(|e| self.io(e))?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.buf.flush().map_err(|e| self.io(e))
    }

    fn header(member: &Member, codec: Codec, offset: u64) -> Result<EntryHeader, Error> {
        if member.path().len() > usize::from(u16::MAX) {
            return Err(Error::InvalidPath {
                path: member.path().to_owned(),
                reason: "a zip member name is at most 65535 bytes",
            });
        }
        let size = member.source().size();
        Ok(EntryHeader {
            name: member.path().to_owned(),
            method: codec.method,
            crc32: 0,
            compressed_size: 0,
            size,
            zip64: needs_zip64(codec.worst_case(size)),
            mode: member.mode(),
            local_offset: offset,
        })
    }

    fn check_fits(header: &EntryHeader) -> Result<(), Error> {
        if !header.zip64 && header.compressed_size >= 0xFFFF_FFFF {
            return Err(Error::Compression {
                member: header.name.clone(),
                message: "compressed size exceeded the zip64 threshold estimate".into(),
            });
        }
        Ok(())
    }

    /// Writes pieces in sequence order until the producer hangs up; returns
    /// the digest of every member of the batch.
    pub(crate) fn consume(
        &mut self,
        rx: Receiver<Numbered<'_>>,
        members: &[Member],
        reuse: &[Option<Reused>],
        codec: Codec,
        timings: Option<&WriteTimings>,
    ) -> Result<Vec<MemberDigest>, Error> {
        let base = self.entries.len();
        let mut digests: Vec<Option<MemberDigest>> = vec![None; members.len()];
        let mut pending = BTreeMap::new();
        let mut next = 0;
        let mut open: Option<Open> = None;
        for (seq, piece) in rx {
            pending.insert(seq, piece);
            while let Some(piece) = pending.remove(&next) {
                next += 1;
                // A piece's permit goes back when the piece is dropped,
                // written or not.
                let piece = piece?;
                let mut write = span(timings, WritePhase::Write);
                let start = self.pos;
                match piece {
                    Piece::Whole {
                        member,
                        data,
                        crc32,
                        digest,
                        _permit: _,
                    } => {
                        let mut header = Self::header(&members[member], codec, self.pos)?;
                        header.crc32 = crc32.value;
                        header.compressed_size = data.len() as u64;
                        Self::check_fits(&header)?;
                        self.write(&header.local(self.dos))?;
                        self.write(&data)?;
                        self.entries.push(header);
                        digests[member] = Some(digest);
                    }
                    Piece::Chunk {
                        member,
                        index,
                        data,
                        crc32,
                        _permit: _,
                    } => {
                        if index == 0 {
                            let header = Self::header(&members[member], codec, self.pos)?;
                            self.write(&header.local(self.dos))?;
                            open = Some(Open {
                                header,
                                crc32: Crc::new(),
                            });
                        }
                        let current = open.as_mut().expect("a chunk follows its member's start");
                        current
                            .crc32
                            .combine(&Crc::new_with_initial_len(crc32.value, crc32.len));
                        current.header.compressed_size += data.len() as u64;
                        self.write(&data)?;
                    }
                    Piece::End { member, digest } => {
                        let Open { mut header, crc32 } =
                            open.take().expect("a member ends after its chunks");
                        header.crc32 = crc32.finalize();
                        Self::check_fits(&header)?;
                        self.flush()?;
                        for (at, bytes) in header.local_patches() {
                            write_all_at(&self.file, &bytes, header.local_offset + at)
                                .map_err(|e| self.io(e))?;
                        }
                        self.entries.push(header);
                        digests[member] = Some(digest);
                    }
                    Piece::Reuse { member } => {
                        let reused = reuse[member].as_ref().expect("planned reuse");
                        let (file, offset, compressed_size, crc32) = match &reused.from {
                            Reuse::Blob(blob) => (
                                Arc::clone(&blob.file),
                                blob.offset,
                                blob.compressed_size,
                                blob.crc32,
                            ),
                            Reuse::Member(earlier) => {
                                let entry = &self.entries[base + earlier];
                                (
                                    Arc::clone(&self.file),
                                    entry.local_offset + entry.local_len(),
                                    entry.compressed_size,
                                    entry.crc32,
                                )
                            }
                        };
                        let mut header = Self::header(&members[member], codec, self.pos)?;
                        header.crc32 = crc32;
                        header.compressed_size = compressed_size;
                        self.write(&header.local(self.dos))?;
                        self.copy_from(&file, offset, compressed_size)?;
                        self.entries.push(header);
                        digests[member] = Some(reused.digest);
                    }
                }
                if let Some(write) = write.as_mut() {
                    write.add_bytes(self.pos - start);
                }
                drop(write);
            }
        }
        digests
            .into_iter()
            .zip(members)
            .map(|(digest, member)| {
                digest.ok_or_else(|| Error::Compression {
                    member: member.path().to_owned(),
                    message: "the compression pipeline stopped before this member".into(),
                })
            })
            .collect()
    }

    /// Appends `len` bytes of `file` from `offset` (compressed bytes of an
    /// earlier member or wheel).
    fn copy_from(&mut self, file: &File, offset: u64, len: u64) -> Result<(), Error> {
        // Our own earlier bytes may still sit in the buffer.
        self.flush()?;
        let mut buf = vec![0u8; (1 << 20).min(len as usize)];
        let mut done = 0;
        while done < len {
            let n = buf.len().min((len - done) as usize);
            read_exact_at(file, &mut buf[..n], offset + done).map_err(|e| self.io(e))?;
            self.write(&buf[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    /// Writes the central directory and the end records; returns how many
    /// bytes that took.
    pub(crate) fn finish(mut self) -> Result<u64, Error> {
        let cd_offset = self.pos;
        let entries = std::mem::take(&mut self.entries);
        for entry in &entries {
            self.write(&entry.central(self.dos))?;
        }
        let cd_size = self.pos - cd_offset;
        self.write(&end_records(entries.len(), cd_offset, cd_size))?;
        self.flush()?;
        Ok(self.pos - cd_offset)
    }
}
