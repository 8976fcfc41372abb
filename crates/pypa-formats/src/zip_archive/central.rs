//! Walking the central directory record by record, as Python's zipfile
//! does (it reads records until the directory's size is used up, whatever
//! the end record counts), and refusing what readers decode differently:
//! a count that disagrees with the walk, names outside ASCII without the
//! UTF-8 flag, NUL bytes zipfile cuts names at, a Unicode Path extra
//! field that renames a member for zipfile only, zip64 fields that give
//! more or less than the record marks, encryption and methods other than
//! stored and deflate.

use std::io::{BufReader, Read, Seek, SeekFrom};

use super::end::End;
use super::error::{EntryProblem, Record, ZipError};
use super::le::{u16_at, u32_at, u64_at};

const CENTRAL_SIGNATURE: &[u8; 4] = b"PK\x01\x02";
const CENTRAL_LEN: u64 = 46;
pub(super) const FLAG_ENCRYPTED: u16 = 1;
pub(super) const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;
const FLAG_STRONG_ENCRYPTION: u16 = 1 << 6;
pub(super) const FLAG_UTF8: u16 = 1 << 11;
const FLAG_ENCRYPTED_DIRECTORY: u16 = 1 << 13;
/// Flags a wheel may carry: deflate's level hints (bits 1 and 2), a data
/// descriptor, UTF-8 names.
const FLAGS_ALLOWED: u16 = 0b110 | FLAG_DATA_DESCRIPTOR | FLAG_UTF8;
pub(super) const METHOD_STORED: u16 = 0;
pub(super) const METHOD_DEFLATE: u16 = 8;
/// The newest "version needed to extract" Python's zipfile reads (6.3).
const MAX_VERSION_NEEDED: u16 = 63;
pub(super) const ZIP64_EXTRA: u16 = 0x0001;
const UNICODE_PATH_EXTRA: u16 = 0x7075;
pub(super) const U32_MARKER: u32 = 0xFFFF_FFFF;

/// One central directory record, checked.
#[derive(Debug, Clone)]
pub(super) struct CentralRecord {
    /// The name, decoded as zipfile decodes it (its bytes are the raw name).
    pub(super) name: String,
    pub(super) made_by: u16,
    pub(super) flags: u16,
    pub(super) method: u16,
    pub(super) crc32: u32,
    pub(super) compressed_size: u64,
    pub(super) size: u64,
    pub(super) header_offset: u64,
    pub(super) external_attributes: u32,
}

/// Reads every record of the central directory `end` describes.
pub(super) fn walk<R: Read + Seek>(
    reader: &mut R,
    end: &End,
) -> Result<Vec<CentralRecord>, ZipError> {
    reader.seek(SeekFrom::Start(end.cd_offset))?;
    let mut directory = BufReader::with_capacity(64 << 10, (&mut *reader).take(end.cd_size));
    let mut records = Vec::new();
    let mut at = 0u64;
    while at < end.cd_size {
        let index = records.len() as u64;
        let offset = end.cd_offset + at;
        let cut = |problem| ZipError::CentralRecord {
            index,
            offset,
            problem,
        };
        let mut fixed = [0; CENTRAL_LEN as usize];
        read_or(&mut directory, &mut fixed, || {
            cut("cut by the end of the central directory")
        })?;
        if &fixed[..4] != CENTRAL_SIGNATURE {
            return Err(cut("not a central directory record (wrong signature)"));
        }
        let lengths = [u16_at(&fixed, 28), u16_at(&fixed, 30), u16_at(&fixed, 32)];
        let mut name = vec![0; usize::from(lengths[0])];
        let mut extra = vec![0; usize::from(lengths[1])];
        let mut comment = vec![0; usize::from(lengths[2])];
        for field in [&mut name, &mut extra, &mut comment] {
            read_or(&mut directory, field, || {
                cut("cut by the end of the central directory")
            })?;
        }
        at += CENTRAL_LEN + lengths.iter().map(|&l| u64::from(l)).sum::<u64>();
        records.push(record(&fixed, name, &extra)?);
    }
    let walked = records.len() as u64;
    if walked != end.entries {
        return Err(ZipError::RecordCount {
            walked,
            declared: end.entries,
            uncounted: usize::try_from(end.entries)
                .ok()
                .and_then(|i| records.get(i))
                .map(|r| r.name.clone()),
        });
    }
    Ok(records)
}

/// Fills `buf`, or fails with `cut()` when the input ends first.
fn read_or(
    reader: &mut impl Read,
    buf: &mut [u8],
    cut: impl FnOnce() -> ZipError,
) -> Result<(), ZipError> {
    match reader.read_exact(buf) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(cut()),
        Err(e) => Err(e.into()),
    }
}

fn record(fixed: &[u8], raw_name: Vec<u8>, extra: &[u8]) -> Result<CentralRecord, ZipError> {
    let flags = u16_at(fixed, 8);
    let name = decode_name(raw_name, flags)?;
    let problem = |problem| ZipError::Entry {
        name: name.clone(),
        problem,
    };
    let version_needed = u16_at(fixed, 6) & 0xFF;
    if version_needed > MAX_VERSION_NEEDED {
        return Err(problem(EntryProblem::VersionNeeded(
            version_needed / 10,
            version_needed % 10,
        )));
    }
    check_flags(flags).map_err(problem)?;
    let method = u16_at(fixed, 10);
    if method != METHOD_STORED && method != METHOD_DEFLATE {
        return Err(problem(EntryProblem::Method(method)));
    }
    let disk = u16_at(fixed, 34);
    if disk != 0 {
        return Err(problem(EntryProblem::Disk(disk)));
    }
    let (compressed32, size32, offset32) =
        (u32_at(fixed, 20), u32_at(fixed, 24), u32_at(fixed, 42));
    let fields = extra_fields(extra, Record::Central).map_err(problem)?;
    let marked = [size32, compressed32, offset32]
        .iter()
        .filter(|&&v| v == U32_MARKER)
        .count();
    let mut zip64 = match fields.zip64 {
        None if marked == 0 => None,
        Some(body) if body.len() == 8 * marked && marked > 0 => Some(body),
        _ => return Err(problem(EntryProblem::Zip64Extra(Record::Central))),
    };
    let mut widen = |value: u32| -> u64 {
        if value != U32_MARKER {
            return u64::from(value);
        }
        let body = zip64.take().expect("a zip64 field for every marker");
        let (first, rest) = body.split_at(8);
        zip64 = Some(rest);
        u64_at(first, 0)
    };
    // zipfile's order: size, compressed size, local header offset.
    let size = widen(size32);
    let compressed_size = widen(compressed32);
    let header_offset = widen(offset32);
    if method == METHOD_STORED && compressed_size != size {
        return Err(problem(EntryProblem::StoredSizes {
            compressed: compressed_size,
            size,
        }));
    }
    if method == METHOD_STORED && flags & FLAG_DATA_DESCRIPTOR != 0 {
        return Err(problem(EntryProblem::StoredWithDescriptor));
    }
    if name.ends_with('/') && size != 0 {
        return Err(problem(EntryProblem::DirectoryWithData(size)));
    }
    Ok(CentralRecord {
        made_by: u16_at(fixed, 4),
        flags,
        method,
        crc32: u32_at(fixed, 16),
        compressed_size,
        size,
        header_offset,
        external_attributes: u32_at(fixed, 38),
        name,
    })
}

/// The name as Python's zipfile decodes it, when every reader decodes it
/// so: UTF-8 under the UTF-8 flag, else ASCII (where code page 437 and
/// UTF-8 agree), and no NUL (zipfile cuts a name there).
fn decode_name(raw: Vec<u8>, flags: u16) -> Result<String, ZipError> {
    let lossy = || String::from_utf8_lossy(&raw).into_owned();
    let problem = if flags & FLAG_UTF8 == 0 && !raw.is_ascii() {
        Some(EntryProblem::NameWithoutUtf8Flag)
    } else if raw.contains(&0) {
        Some(EntryProblem::NulInName)
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(ZipError::Entry {
            name: lossy(),
            problem,
        });
    }
    String::from_utf8(raw).map_err(|e| ZipError::Entry {
        name: String::from_utf8_lossy(e.as_bytes()).into_owned(),
        problem: EntryProblem::NameNotUtf8,
    })
}

/// Refuses encryption and flags outside [`FLAGS_ALLOWED`].
pub(super) fn check_flags(flags: u16) -> Result<(), EntryProblem> {
    if flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_ENCRYPTED_DIRECTORY) != 0 {
        return Err(EntryProblem::Encrypted);
    }
    if flags & !FLAGS_ALLOWED != 0 {
        return Err(EntryProblem::Flags(flags));
    }
    Ok(())
}

/// What the extra fields of one record carry that a reader acts on.
#[derive(Debug, Default)]
pub(super) struct ExtraFields<'a> {
    /// The body of the zip64 extended information field.
    pub(super) zip64: Option<&'a [u8]>,
}

/// Splits `extra` into its fields: each a 4-byte header and the body it
/// announces, tiling the area exactly; at most one zip64 field; no
/// Unicode Path field.
pub(super) fn extra_fields(
    mut extra: &[u8],
    record: Record,
) -> Result<ExtraFields<'_>, EntryProblem> {
    let mut fields = ExtraFields::default();
    while !extra.is_empty() {
        if extra.len() < 4 {
            return Err(EntryProblem::ExtraFields(record));
        }
        let (id, len) = (u16_at(extra, 0), usize::from(u16_at(extra, 2)));
        let Some(body) = extra.get(4..4 + len) else {
            return Err(EntryProblem::ExtraFields(record));
        };
        match id {
            UNICODE_PATH_EXTRA => return Err(EntryProblem::UnicodePathExtra),
            ZIP64_EXTRA if fields.zip64.is_some() => {
                return Err(EntryProblem::ExtraFields(record));
            }
            ZIP64_EXTRA => fields.zip64 = Some(body),
            _ => {}
        }
        extra = &extra[4 + len..];
    }
    Ok(fields)
}
