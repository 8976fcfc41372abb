//! A member's local header must say what its central directory record
//! says. Readers that stream a wheel (or trust the local header) see the
//! local one, pip's `zipfile` sees the central one; a wheel where they
//! disagree installs different bytes or names depending on the tool.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

const LOCAL_SIGNATURE: u32 = 0x0403_4b50;
const CENTRAL_SIGNATURE: u32 = 0x0201_4b50;
const DESCRIPTOR_SIGNATURE: u32 = 0x0807_4b50;
const ZIP64_EXTRA_ID: u16 = 0x0001;
const U32_MAX: u32 = 0xFFFF_FFFF;
/// General purpose flag 3: CRC and sizes follow the data.
const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;

/// What the central directory says about a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Central<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) header_start: u64,
    /// Where its central directory record starts (flags and method are
    /// read from there).
    pub(crate) record_start: u64,
    pub(crate) crc32: u32,
    pub(crate) compressed_size: u64,
    pub(crate) size: u64,
}

/// One field where a member's local header (or data descriptor) and its
/// central directory record disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderMismatch {
    /// The member, as the central directory names it.
    pub path: String,
    /// The field (`name`, `compression method`, `CRC-32`, ...).
    pub field: &'static str,
    /// What the local header says.
    pub local: String,
    /// What the central directory says.
    pub central: String,
}

impl fmt::Display for HeaderMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the local header gives {} {} but the central directory {}",
            self.path, self.field, self.local, self.central
        )
    }
}

/// Reads the local header of the member `central` describes from `file`
/// and returns every field that disagrees (empty when they agree).
pub(crate) fn compare(file: &mut File, central: &Central<'_>) -> io::Result<Vec<HeaderMismatch>> {
    let path = String::from_utf8_lossy(central.name).into_owned();
    let mut out = Vec::new();
    let mut differs = |field: &'static str, local: String, central: String| {
        out.push(HeaderMismatch {
            path: path.clone(),
            field,
            local,
            central,
        });
    };
    file.seek(SeekFrom::Start(central.record_start + 8))?;
    let mut flags_and_method = [0u8; 4];
    file.read_exact(&mut flags_and_method)?;
    let central_flags = u16::from_le_bytes([flags_and_method[0], flags_and_method[1]]);
    let central_method = u16::from_le_bytes([flags_and_method[2], flags_and_method[3]]);

    file.seek(SeekFrom::Start(central.header_start))?;
    let mut fixed = [0u8; 30];
    file.read_exact(&mut fixed)?;
    let u16_at = |i: usize| u16::from_le_bytes([fixed[i], fixed[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes(fixed[i..i + 4].try_into().expect("4 bytes"));
    if u32_at(0) != LOCAL_SIGNATURE {
        differs(
            "signature",
            format!("{:#010x}", u32_at(0)),
            format!("a local header at offset {}", central.header_start),
        );
        return Ok(out);
    }
    let (flags, method, crc32) = (u16_at(6), u16_at(8), u32_at(14));
    let (compressed32, size32) = (u32_at(18), u32_at(22));
    let mut name = vec![0u8; usize::from(u16_at(26))];
    file.read_exact(&mut name)?;
    let mut extra = vec![0u8; usize::from(u16_at(28))];
    file.read_exact(&mut extra)?;
    let data_start = central.header_start + 30 + name.len() as u64 + extra.len() as u64;

    if name != central.name {
        differs(
            "name",
            format!("{:?}", String::from_utf8_lossy(&name)),
            format!("{:?}", String::from_utf8_lossy(central.name)),
        );
    }
    let descriptor = flags & FLAG_DATA_DESCRIPTOR != 0;
    if descriptor != (central_flags & FLAG_DATA_DESCRIPTOR != 0) {
        differs(
            "data-descriptor flag",
            descriptor.to_string(),
            (!descriptor).to_string(),
        );
        return Ok(out);
    }
    if method != central_method {
        differs(
            "compression method",
            method.to_string(),
            central_method.to_string(),
        );
    }
    let zip64 = zip64_sizes(&extra);
    let local_size = match (size32, zip64) {
        (U32_MAX, Some((size, _))) => size,
        _ => u64::from(size32),
    };
    let local_compressed = match (compressed32, zip64) {
        (U32_MAX, Some((_, compressed))) => compressed,
        _ => u64::from(compressed32),
    };
    if descriptor {
        // CRC and sizes follow the data; the local header may hold zeros.
        let zero_or = |local: u64, central: u64| local == 0 || local == central;
        if !zero_or(u64::from(crc32), u64::from(central.crc32))
            || !zero_or(local_size, central.size)
            || !zero_or(local_compressed, central.compressed_size)
        {
            differs(
                "CRC-32 and sizes",
                format!("{crc32:#010x}, {local_size}, {local_compressed}"),
                format!(
                    "{:#010x}, {}, {}",
                    central.crc32, central.size, central.compressed_size
                ),
            );
        }
        let (crc32, compressed, size) =
            read_descriptor(file, data_start + central.compressed_size, zip64.is_some())?;
        if (crc32, compressed, size) != (central.crc32, central.compressed_size, central.size) {
            differs(
                "data descriptor (CRC-32, compressed size, size)",
                format!("{crc32:#010x}, {compressed}, {size}"),
                format!(
                    "{:#010x}, {}, {}",
                    central.crc32, central.compressed_size, central.size
                ),
            );
        }
        return Ok(out);
    }
    if crc32 != central.crc32 {
        differs(
            "CRC-32",
            format!("{crc32:#010x}"),
            format!("{:#010x}", central.crc32),
        );
    }
    if local_compressed != central.compressed_size {
        differs(
            "compressed size",
            local_compressed.to_string(),
            central.compressed_size.to_string(),
        );
    }
    if local_size != central.size {
        differs("size", local_size.to_string(), central.size.to_string());
    }
    Ok(out)
}

/// Every member name of the central directory that starts at `start`, in
/// order and with repeats: the zip reader keeps one entry per name, so a
/// name given twice is found here only. Stops at the first record that is
/// not a central directory header.
pub(crate) fn central_names(file: &mut File, start: u64) -> io::Result<Vec<Vec<u8>>> {
    let mut names = Vec::new();
    let mut at = start;
    loop {
        file.seek(SeekFrom::Start(at))?;
        let mut fixed = [0u8; 46];
        if file.read_exact(&mut fixed).is_err() {
            break;
        }
        let u16_at = |i: usize| u64::from(u16::from_le_bytes([fixed[i], fixed[i + 1]]));
        if u32::from_le_bytes(fixed[..4].try_into().expect("4 bytes")) != CENTRAL_SIGNATURE {
            break;
        }
        let mut name = vec![0u8; usize::try_from(u16_at(28)).expect("a u16 fits")];
        file.read_exact(&mut name)?;
        names.push(name);
        at += 46 + u16_at(28) + u16_at(30) + u16_at(32);
    }
    Ok(names)
}

/// The (size, compressed size) of a local zip64 extra field, if present.
fn zip64_sizes(mut extra: &[u8]) -> Option<(u64, u64)> {
    while extra.len() >= 4 {
        let id = u16::from_le_bytes([extra[0], extra[1]]);
        let len = usize::from(u16::from_le_bytes([extra[2], extra[3]]));
        let body = extra.get(4..4 + len)?;
        if id == ZIP64_EXTRA_ID && body.len() >= 16 {
            let size = u64::from_le_bytes(body[..8].try_into().expect("8 bytes"));
            let compressed = u64::from_le_bytes(body[8..16].try_into().expect("8 bytes"));
            return Some((size, compressed));
        }
        extra = &extra[4 + len..];
    }
    None
}

/// Reads the data descriptor at `at`: (CRC-32, compressed size, size).
fn read_descriptor(file: &mut File, at: u64, zip64: bool) -> io::Result<(u32, u64, u64)> {
    file.seek(SeekFrom::Start(at))?;
    let mut word = [0u8; 4];
    file.read_exact(&mut word)?;
    // The signature is optional.
    if u32::from_le_bytes(word) == DESCRIPTOR_SIGNATURE {
        file.read_exact(&mut word)?;
    }
    let crc32 = u32::from_le_bytes(word);
    if zip64 {
        let mut sizes = [0u8; 16];
        file.read_exact(&mut sizes)?;
        Ok((
            crc32,
            u64::from_le_bytes(sizes[..8].try_into().expect("8 bytes")),
            u64::from_le_bytes(sizes[8..].try_into().expect("8 bytes")),
        ))
    } else {
        let mut sizes = [0u8; 8];
        file.read_exact(&mut sizes)?;
        Ok((
            crc32,
            u64::from(u32::from_le_bytes(sizes[..4].try_into().expect("4 bytes"))),
            u64::from(u32::from_le_bytes(sizes[4..].try_into().expect("4 bytes"))),
        ))
    }
}
