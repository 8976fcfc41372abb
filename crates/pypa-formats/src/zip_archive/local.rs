//! Every member's local header against its central record, and the
//! members tiling the file: a reader that streams local headers and a
//! reader that trusts the central directory must find the same members
//! with the same names, methods, sizes and CRCs, and no bytes may lie
//! between them that no record names (a member hidden from one of them).

use std::fmt;
use std::io::{Read, Seek, SeekFrom};

use super::central::{CentralRecord, FLAG_DATA_DESCRIPTOR, U32_MARKER, extra_fields};
use super::error::{EntryProblem, Record, ZipError};
use super::le::{u16_at, u32_at, u64_at};

const LOCAL_SIGNATURE: &[u8; 4] = b"PK\x03\x04";
const LOCAL_LEN: u64 = 30;
const DESCRIPTOR_SIGNATURE: &[u8; 4] = b"PK\x07\x08";

/// Checks the local header of every record and that the members, in file
/// order, start at offset 0 and follow each other up to `cd_offset`.
/// Returns where each record's data starts, in record order.
pub(super) fn check<R: Read + Seek>(
    reader: &mut R,
    records: &[CentralRecord],
    cd_offset: u64,
) -> Result<Vec<u64>, ZipError> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| records[i].header_offset);
    let mut data_offsets = vec![0; records.len()];
    let mut next = 0u64;
    let mut previous: Option<&str> = None;
    for i in order {
        let record = &records[i];
        let offset = record.header_offset;
        match (offset.cmp(&next), previous) {
            (std::cmp::Ordering::Less, Some(inside)) => {
                return Err(ZipError::Overlap {
                    name: record.name.clone(),
                    offset,
                    inside: inside.to_owned(),
                });
            }
            (std::cmp::Ordering::Greater, None) => return Err(ZipError::PrependedData(offset)),
            (std::cmp::Ordering::Greater, Some(after)) => {
                return Err(ZipError::UnnamedBytes {
                    offset: next,
                    len: offset - next,
                    after: after.to_owned(),
                });
            }
            _ => {}
        }
        let problem = |problem| ZipError::Entry {
            name: record.name.clone(),
            problem,
        };
        let (data, end) = member(reader, record, cd_offset).map_err(|e| match e {
            Checked::Io(e) => ZipError::Io(e),
            Checked::Problem(p) => problem(p),
        })?;
        data_offsets[i] = data;
        next = end;
        previous = Some(&record.name);
    }
    if next != cd_offset {
        return Err(match previous {
            None => ZipError::PrependedData(cd_offset),
            Some(after) => ZipError::UnnamedBytes {
                offset: next,
                len: cd_offset - next,
                after: after.to_owned(),
            },
        });
    }
    Ok(data_offsets)
}

enum Checked {
    Io(std::io::Error),
    Problem(EntryProblem),
}

impl From<std::io::Error> for Checked {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<EntryProblem> for Checked {
    fn from(p: EntryProblem) -> Self {
        Self::Problem(p)
    }
}

fn mismatch(
    field: &'static str,
    local: impl fmt::Display,
    central: impl fmt::Display,
) -> EntryProblem {
    EntryProblem::LocalMismatch {
        field,
        local: format!("{local}"),
        central: format!("{central}"),
    }
}

/// Reads `record`'s local header (and data descriptor) and checks them
/// against the record; returns where its data starts and where the member
/// ends.
fn member<R: Read + Seek>(
    reader: &mut R,
    record: &CentralRecord,
    cd_offset: u64,
) -> Result<(u64, u64), Checked> {
    let offset = record.header_offset;
    if offset.saturating_add(LOCAL_LEN) > cd_offset {
        return Err(EntryProblem::NoLocalHeader(offset).into());
    }
    let mut fixed = [0; LOCAL_LEN as usize];
    reader.seek(SeekFrom::Start(offset))?;
    reader.read_exact(&mut fixed)?;
    if &fixed[..4] != LOCAL_SIGNATURE {
        return Err(EntryProblem::NoLocalHeader(offset).into());
    }
    let flags = u16_at(&fixed, 6);
    if flags != record.flags {
        return Err(mismatch(
            "general purpose flags",
            format!("{flags:#06x}"),
            format!("{:#06x}", record.flags),
        )
        .into());
    }
    let method = u16_at(&fixed, 8);
    if method != record.method {
        return Err(mismatch("compression method", method, record.method).into());
    }
    let (name_len, extra_len) = (u64::from(u16_at(&fixed, 26)), u64::from(u16_at(&fixed, 28)));
    let data = offset + LOCAL_LEN + name_len + extra_len;
    if data > cd_offset {
        return Err(EntryProblem::PastCentralDirectory.into());
    }
    let mut name = vec![0; usize::from(u16_at(&fixed, 26))];
    let mut extra = vec![0; usize::from(u16_at(&fixed, 28))];
    reader.read_exact(&mut name)?;
    reader.read_exact(&mut extra)?;
    if name != record.name.as_bytes() {
        return Err(mismatch(
            "name",
            format!("{:?}", String::from_utf8_lossy(&name)),
            format!("{:?}", record.name),
        )
        .into());
    }
    let crc32 = u32_at(&fixed, 14);
    let (compressed32, size32) = (u32_at(&fixed, 18), u32_at(&fixed, 22));
    let zip64 = extra_fields(&extra, Record::Local)?.zip64;
    // A local zip64 field gives both sizes, exactly when both 32-bit
    // fields say so (as zipfile and this project's writer write it).
    let (size, compressed) = match zip64 {
        None if compressed32 != U32_MARKER && size32 != U32_MARKER => {
            (u64::from(size32), u64::from(compressed32))
        }
        Some(body) if body.len() == 16 && compressed32 == U32_MARKER && size32 == U32_MARKER => {
            (u64_at(body, 0), u64_at(body, 8))
        }
        _ => return Err(EntryProblem::Zip64Extra(Record::Local).into()),
    };
    let Some(data_end) = data
        .checked_add(record.compressed_size)
        .filter(|&end| end <= cd_offset)
    else {
        return Err(EntryProblem::PastCentralDirectory.into());
    };
    if flags & FLAG_DATA_DESCRIPTOR == 0 {
        if crc32 != record.crc32 {
            return Err(mismatch(
                "CRC-32",
                format!("{crc32:#010x}"),
                format!("{:#010x}", record.crc32),
            )
            .into());
        }
        if compressed != record.compressed_size {
            return Err(mismatch("compressed size", compressed, record.compressed_size).into());
        }
        if size != record.size {
            return Err(mismatch("size", size, record.size).into());
        }
        return Ok((data, data_end));
    }
    // CRC and sizes follow the data; the local header holds zeros or the
    // same values.
    let zero_or = |local: u64, central: u64| local == 0 || local == central;
    if !zero_or(u64::from(crc32), u64::from(record.crc32))
        || !zero_or(size, record.size)
        || !zero_or(compressed, record.compressed_size)
    {
        return Err(mismatch(
            "CRC-32 and sizes",
            format!("{crc32:#010x}, {compressed}, {size}"),
            format!(
                "{:#010x}, {}, {}",
                record.crc32, record.compressed_size, record.size
            ),
        )
        .into());
    }
    let descriptor_len: u64 = if zip64.is_some() { 24 } else { 16 };
    if data_end + descriptor_len > cd_offset {
        return Err(EntryProblem::PastCentralDirectory.into());
    }
    let mut descriptor = [0; 24];
    let descriptor = &mut descriptor[..usize::try_from(descriptor_len).expect("small")];
    reader.seek(SeekFrom::Start(data_end))?;
    reader.read_exact(descriptor)?;
    if &descriptor[..4] != DESCRIPTOR_SIGNATURE {
        return Err(EntryProblem::DescriptorSignature(data_end).into());
    }
    let (d_crc, d_compressed, d_size) = if zip64.is_some() {
        (
            u32_at(descriptor, 4),
            u64_at(descriptor, 8),
            u64_at(descriptor, 16),
        )
    } else {
        (
            u32_at(descriptor, 4),
            u64::from(u32_at(descriptor, 8)),
            u64::from(u32_at(descriptor, 12)),
        )
    };
    if (d_crc, d_compressed, d_size) != (record.crc32, record.compressed_size, record.size) {
        return Err(mismatch(
            "data descriptor (CRC-32, compressed size, size)",
            format!("{d_crc:#010x}, {d_compressed}, {d_size}"),
            format!(
                "{:#010x}, {}, {}",
                record.crc32, record.compressed_size, record.size
            ),
        )
        .into());
    }
    Ok((data, data_end + descriptor_len))
}
