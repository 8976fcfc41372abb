//! Why an archive, or the data of one of its members, is refused: one
//! variant per way two readers could read it differently.

use std::fmt;
use std::io;

/// Why a zip archive is refused as a whole, or one of its records.
///
/// Each message is one sentence naming the record (and the member, when
/// there is one) and what a reader would make of it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZipError {
    /// The file could not be read.
    #[error("cannot read the archive")]
    Io(#[from] io::Error),
    /// No end of central directory record where every reader looks for it.
    #[error("no end of central directory record in its last 64 KiB: not a zip archive")]
    NoEndRecord,
    /// The end record's comment length does not reach the end of the file.
    #[error(
        "the end of central directory record at offset {offset} gives a comment of {declared} \
         bytes, but {actual} bytes follow it"
    )]
    CommentLength {
        /// Where the end record starts.
        offset: u64,
        /// The comment length it gives.
        declared: u16,
        /// The bytes after it.
        actual: u64,
    },
    /// A second end record signature inside the archive comment: a reader
    /// searching from the end finds one archive, one taking the comment
    /// length at its word another.
    #[error(
        "the archive comment holds another end of central directory signature, so readers would \
         find different archives"
    )]
    SignatureInComment,
    /// The end records name another disk.
    #[error("the end records describe an archive split over several disks; a wheel is one file")]
    MultiDisk,
    /// A zip64 locator without the zip64 end record before it.
    #[error(
        "the zip64 end of central directory locator at offset {locator} has no zip64 end record \
         right before it"
    )]
    Zip64RecordMissing {
        /// Where the locator starts.
        locator: u64,
    },
    /// The zip64 locator points elsewhere than where the record is.
    #[error(
        "the zip64 locator points at offset {declared}, but the zip64 end record is at {actual} \
         (readers that follow the pointer and readers that do not would disagree)"
    )]
    Zip64LocatorOffset {
        /// The offset the locator gives.
        declared: u64,
        /// Where the record is.
        actual: u64,
    },
    /// The zip64 end record carries extensible data.
    #[error(
        "the zip64 end record gives its size as {0} bytes, not 44: extensible data no installer reads"
    )]
    Zip64RecordSize(u64),
    /// The classic and the zip64 end record give different values.
    #[error("the end record gives the {field} as {classic}, the zip64 end record as {zip64}")]
    EndRecordsDisagree {
        /// Which field.
        field: &'static str,
        /// What the classic end record gives.
        classic: u64,
        /// What the zip64 end record gives.
        zip64: u64,
    },
    /// The central directory does not end where the end records start.
    #[error(
        "the end record places the central directory at offsets {start}..{end}, but the end \
         records start at {expected}"
    )]
    CentralDirectoryPlacement {
        /// Where the end record says it starts.
        start: u64,
        /// Where that makes it end.
        end: u64,
        /// Where it has to end.
        expected: u64,
    },
    /// The central directory is larger than any wheel needs.
    #[error("the central directory is {size} bytes, more than the {limit} bytes a wheel's may be")]
    CentralDirectoryTooLarge {
        /// Its size.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The central directory holds more or fewer records than the end
    /// record counts.
    #[error(
        "the central directory holds {walked} records, but the end record counts {declared}: {}",
        match uncounted {
            Some(name) => format!("a reader that trusts the count never sees member {name:?}"),
            None => "a reader that trusts the count looks for records that are not there".to_owned(),
        }
    )]
    RecordCount {
        /// Records found by walking the directory.
        walked: u64,
        /// Records the end record counts.
        declared: u64,
        /// The first record beyond the count, when there are more.
        uncounted: Option<String>,
    },
    /// A central directory record is cut or not a record.
    #[error("central directory record {index} at offset {offset}: {problem}")]
    CentralRecord {
        /// 0-based index of the record.
        index: u64,
        /// Where it starts.
        offset: u64,
        /// What is wrong.
        problem: &'static str,
    },
    /// A member breaks a rule of the container.
    #[error("member {name:?}: {problem}")]
    Entry {
        /// The member's name (lossily decoded when it is not text).
        name: String,
        /// What is wrong.
        problem: EntryProblem,
    },
    /// Bytes before the first member that no record names.
    #[error("{0} bytes before the first member that no record names (prepended data)")]
    PrependedData(u64),
    /// Bytes between two members, or between the last member and the
    /// central directory, that no record names.
    #[error("{len} bytes at offset {offset}, after member {after:?}, that no record names")]
    UnnamedBytes {
        /// Where they start.
        offset: u64,
        /// How many.
        len: u64,
        /// The member they follow.
        after: String,
    },
    /// Two members whose bytes overlap.
    #[error("member {name:?} starts at offset {offset}, inside member {inside:?}")]
    Overlap {
        /// The member that starts inside another.
        name: String,
        /// Where it starts.
        offset: u64,
        /// The member it starts in.
        inside: String,
    },
}

/// What is wrong with one member's records.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// Encrypted.
    #[error("it is encrypted")]
    Encrypted,
    /// A compression method other than stored and deflate.
    #[error("compression method {0}; wheels use stored (0) or deflate (8)")]
    Method(u16),
    /// General purpose flags other than UTF-8 names, deflate options and
    /// a data descriptor.
    #[error("general purpose flags {0:#06x} that no installer reads the same way")]
    Flags(u16),
    /// A "version needed to extract" newer than Python's zipfile reads.
    #[error("it needs zip version {0}.{1} to extract; Python's zipfile reads up to 6.3")]
    VersionNeeded(u16, u16),
    /// A name outside ASCII without the UTF-8 flag: zipfile reads it as
    /// code page 437, other readers as UTF-8.
    #[error(
        "its name is not ASCII and lacks the UTF-8 flag, so zipfile reads it as code page 437 and \
         other readers as UTF-8"
    )]
    NameWithoutUtf8Flag,
    /// The UTF-8 flag over bytes that are not UTF-8.
    #[error("its name has the UTF-8 flag but is not UTF-8")]
    NameNotUtf8,
    /// A NUL in the name, where zipfile cuts it.
    #[error("its name holds a NUL byte, where Python's zipfile cuts it short")]
    NulInName,
    /// An Info-ZIP Unicode Path extra field, which renames the member for
    /// some readers only.
    #[error("it carries a Unicode Path extra field (0x7075), which renames it for zipfile only")]
    UnicodePathExtra,
    /// Extra fields that do not tile their area, or a repeated zip64 field.
    #[error("its {0} extra fields are malformed")]
    ExtraFields(Record),
    /// A zip64 extra field that does not give exactly the fields the
    /// record marks as stored there.
    #[error(
        "its {0} zip64 extra field does not give exactly the sizes and offset marked 0xFFFFFFFF"
    )]
    Zip64Extra(Record),
    /// Stored, but with two different sizes.
    #[error("it is stored, but its compressed size {compressed} differs from its size {size}")]
    StoredSizes {
        /// Compressed size.
        compressed: u64,
        /// Size.
        size: u64,
    },
    /// A directory entry with data.
    #[error("it is a directory entry of {0} bytes")]
    DirectoryWithData(u64),
    /// A member on another disk.
    #[error("its central record places it on disk {0}")]
    Disk(u16),
    /// A data descriptor after stored data, whose end a streaming reader
    /// can only guess.
    #[error("it is stored with a data descriptor, so a streaming reader cannot tell where it ends")]
    StoredWithDescriptor,
    /// No local header where the central record points.
    #[error("no local header at offset {0}, where its central record points")]
    NoLocalHeader(u64),
    /// The local header disagrees with the central record.
    #[error("the local header gives {field} {local}, the central directory {central}")]
    LocalMismatch {
        /// Which field.
        field: &'static str,
        /// What the local header (or data descriptor) gives.
        local: String,
        /// What the central record gives.
        central: String,
    },
    /// The data descriptor is missing its signature or cut.
    #[error("its data descriptor at offset {0} lacks the signature PK\\x07\\x08")]
    DescriptorSignature(u64),
    /// The member's data runs past the central directory.
    #[error("its data runs past the start of the central directory")]
    PastCentralDirectory,
}

/// Which of a member's two records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// The local file header.
    Local,
    /// The central directory record.
    Central,
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Local => "local header's",
            Self::Central => "central record's",
        })
    }
}

/// Why the data of a member is refused while it is read: what it holds
/// is not what its records declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MemberDataError {
    /// More bytes than the declared size.
    #[error("member {name:?} holds more than the {declared} bytes its records give")]
    Longer {
        /// The member.
        name: String,
        /// The size its records give.
        declared: u64,
    },
    /// Fewer bytes than the declared size.
    #[error("member {name:?} holds {actual} bytes, its records give {declared}")]
    Shorter {
        /// The member.
        name: String,
        /// What it holds.
        actual: u64,
        /// The size its records give.
        declared: u64,
    },
    /// The CRC-32 of the bytes is not the declared one.
    #[error("member {name:?} has CRC-32 {actual:#010x}, its records give {declared:#010x}")]
    Crc {
        /// The member.
        name: String,
        /// The CRC-32 of its bytes.
        actual: u32,
        /// The CRC-32 its records give.
        declared: u32,
    },
    /// The compressed data ends before the deflate stream does.
    #[error("member {name:?}: its compressed data ends before its deflate stream")]
    Truncated {
        /// The member.
        name: String,
    },
    /// Compressed bytes after the end of the deflate stream.
    #[error(
        "member {name:?}: {extra} bytes of its compressed data follow the end of its deflate \
         stream"
    )]
    AfterStream {
        /// The member.
        name: String,
        /// How many.
        extra: u64,
    },
    /// The deflate stream is corrupt.
    #[error("member {name:?}: its deflate stream is corrupt ({reason})")]
    Corrupt {
        /// The member.
        name: String,
        /// What the decoder said.
        reason: String,
    },
    /// Larger than a reader of this kind of member holds in memory.
    #[error("member {name:?} is {size} bytes, more than the {limit} bytes read for it")]
    TooLarge {
        /// The member.
        name: String,
        /// Its declared size.
        size: u64,
        /// The cap.
        limit: u64,
    },
}

impl MemberDataError {
    /// The error as an [`io::Error`] of kind `InvalidData` (what a member
    /// reader returns); [`MemberDataError::of`] finds it again.
    pub fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, self)
    }

    /// The member data error an [`io::Error`] carries, if it is one.
    pub fn of(error: &io::Error) -> Option<&Self> {
        error.get_ref().and_then(|e| e.downcast_ref::<Self>())
    }
}
