//! The zip container of a wheel, read the one way every installer reads
//! it, or refused (docs/verify.md#one-reading).
//!
//! Readers of zip files disagree on hostile input: Python's zipfile (pip)
//! walks the central directory until its size is used up, the `zip` crate
//! reads as many records as the end record counts, streaming readers
//! trust local headers, some honour prepended data or a Unicode Path extra
//! field and others do not. [`ZipArchive::new`] accepts an archive only
//! when all of them must agree:
//!
//! - the end of central directory record is found where zipfile finds it,
//!   its comment reaches the end of the file and holds no second record;
//!   a zip64 locator sits right before it and points at the zip64 end
//!   record right before itself, which has no extensible data; classic and
//!   zip64 end records give the same values (or the classic one its
//!   "see zip64" marker); one disk;
//! - the central directory starts where the end record says and ends
//!   where the end records begin; walked record by record, it holds as
//!   many records as the end record counts;
//! - every record: stored or deflate, not encrypted, only the UTF-8, data
//!   descriptor and deflate-option flags, a name that is ASCII or carries
//!   the UTF-8 flag and is UTF-8, no NUL, no Unicode Path extra field,
//!   well-formed extra fields with a zip64 field giving exactly the values
//!   marked `0xFFFFFFFF`, equal sizes when stored, no data in a directory
//!   entry, no data descriptor after stored data;
//! - every local header says what its central record says (flags, method,
//!   name bytes, CRC-32 and sizes, or a data descriptor with its signature
//!   that does), and the members, in file order, start at offset 0 and
//!   follow each other without a gap or an overlap up to the central
//!   directory: no byte lies outside what a record names.
//!
//! Names are decoded as zipfile decodes them, which is then the only
//! reading. Member data is streamed ([`MemberReader`]): nothing is
//! allocated from a declared size, and the real length, the CRC-32 and
//! the end of the deflate stream are checked against the records.
//!
//! Duplicate names are left to the caller, which knows the member rules
//! of its package (`pypa_formats::member::CollisionKey`).
//!
//! Why not the `zip` crate: it reads as many records as the end record
//! counts and keeps one entry per name, so it cannot see the records a
//! hostile archive hides from it, and it checks local headers against
//! nothing. The wheel writer writes its own zip (every byte of a header is
//! ours), so no part of the workspace needs the crate any more; the tests
//! compare with Python's zipfile, pip and uv instead.
//!
//! ```
//! use std::io::{Cursor, Read};
//! use pypa_formats::zip_archive::ZipArchive;
//!
//! // An empty archive: just an end of central directory record.
//! let mut bytes = b"PK\x05\x06".to_vec();
//! bytes.extend([0; 18]);
//! let archive = ZipArchive::new(Cursor::new(bytes)).unwrap();
//! assert!(archive.entries().is_empty());
//! ```

mod central;
mod end;
mod error;
mod le;
mod local;
mod member;

use std::io::{self, Read, Seek, SeekFrom};

pub use error::{EntryProblem, MemberDataError, Record, ZipError};
pub use member::MemberReader;

/// The largest central directory read (16 MiB: some 100 000 members;
/// the largest ROCm wheel's is under 1 MiB). A larger one is refused
/// before it is read.
pub const MAX_CENTRAL_DIRECTORY: u64 = 16 << 20;

/// How a member's bytes are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// As they are.
    Stored,
    /// Raw deflate.
    Deflate,
}

/// One member, as its (checked) records describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipEntry {
    name: String,
    method: Method,
    crc32: u32,
    compressed_size: u64,
    size: u64,
    external_attributes: u32,
    made_by: u16,
    data_offset: u64,
}

impl ZipEntry {
    /// The name, `/`-separated as stored (a directory entry ends with `/`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it is a directory entry (its name ends with `/`).
    pub fn is_dir(&self) -> bool {
        self.name.ends_with('/')
    }

    /// How its bytes are stored.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Its uncompressed size, as declared (the reader checks it).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its compressed size.
    pub fn compressed_size(&self) -> u64 {
        self.compressed_size
    }

    /// Its CRC-32, as declared (the reader checks it).
    pub fn crc32(&self) -> u32 {
        self.crc32
    }

    /// The raw external attributes.
    pub fn external_attributes(&self) -> u32 {
        self.external_attributes
    }

    /// The Unix mode in the high 16 bits of the external attributes (what
    /// pip reads, whatever system made the archive); 0 when none.
    pub fn unix_mode(&self) -> u32 {
        self.external_attributes >> 16
    }

    /// The "version made by" field (its high byte is the system).
    pub fn made_by(&self) -> u16 {
        self.made_by
    }

    /// Where its compressed bytes lie in the archive.
    pub fn data_range(&self) -> std::ops::Range<u64> {
        self.data_offset..self.data_offset + self.compressed_size
    }
}

/// A zip archive every reader reads the same way (the module
/// documentation lists what that takes).
#[derive(Debug)]
pub struct ZipArchive<R> {
    reader: R,
    entries: Vec<ZipEntry>,
}

impl<R: Read + Seek> ZipArchive<R> {
    /// Reads and checks the structure of the archive `reader` holds: the
    /// end records, every central record and every local header. Member
    /// data is checked as it is read.
    pub fn new(mut reader: R) -> Result<Self, ZipError> {
        let len = reader.seek(SeekFrom::End(0))?;
        let end = end::locate(&mut reader, len)?;
        if end.cd_size > MAX_CENTRAL_DIRECTORY {
            return Err(ZipError::CentralDirectoryTooLarge {
                size: end.cd_size,
                limit: MAX_CENTRAL_DIRECTORY,
            });
        }
        let records = central::walk(&mut reader, &end)?;
        let data_offsets = local::check(&mut reader, &records, end.cd_offset)?;
        let entries = records
            .into_iter()
            .zip(data_offsets)
            .map(|(record, data_offset)| ZipEntry {
                method: if record.method == central::METHOD_DEFLATE {
                    Method::Deflate
                } else {
                    Method::Stored
                },
                crc32: record.crc32,
                compressed_size: record.compressed_size,
                size: record.size,
                external_attributes: record.external_attributes,
                made_by: record.made_by,
                data_offset,
                name: record.name,
            })
            .collect();
        Ok(Self { reader, entries })
    }

    /// The members, in central directory order.
    pub fn entries(&self) -> &[ZipEntry] {
        &self.entries
    }

    /// The index of the first member named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name == name)
    }

    /// A reader of member `index`'s uncompressed bytes.
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn reader(&mut self, index: usize) -> io::Result<MemberReader<'_, R>> {
        let entry = &self.entries[index];
        self.reader.seek(SeekFrom::Start(entry.data_offset))?;
        Ok(MemberReader::new(
            (&mut self.reader).take(entry.compressed_size),
            entry,
        ))
    }

    /// Member `index`'s bytes when it declares at most `limit` of them
    /// (else a [`MemberDataError::TooLarge`], before anything is read).
    pub fn read(&mut self, index: usize, limit: u64) -> io::Result<Vec<u8>> {
        let entry = &self.entries[index];
        if entry.size > limit {
            return Err(MemberDataError::TooLarge {
                name: entry.name.clone(),
                size: entry.size,
                limit,
            }
            .into_io());
        }
        let mut bytes = Vec::new();
        self.reader(index)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The underlying reader (positioned anywhere).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}
