//! Zip headers (APPNOTE 6.3), written byte by byte so every field is ours:
//! fixed timestamps, Unix modes, zip64 exactly when needed.

/// Deflate.
pub(crate) const METHOD_DEFLATE: u16 = 8;
/// No compression.
pub(crate) const METHOD_STORED: u16 = 0;
/// Size of a local header before the name.
pub(crate) const LOCAL_HEADER_LEN: u64 = 30;
/// Size of the zip64 extra field in a local header.
const LOCAL_ZIP64_EXTRA_LEN: u16 = 20;
const U32_MAX: u64 = 0xFFFF_FFFF;
/// Most members an ordinary end record can count.
const MAX_ENTRIES_32: usize = 0xFFFF;
/// Version needed: 2.0 (deflate) or 4.5 (zip64).
const VERSION_DEFLATE: u16 = 20;
const VERSION_ZIP64: u16 = 45;
/// "Made by" host 3 (Unix), so readers honour the mode in the external attributes.
const HOST_UNIX: u16 = 3 << 8;
/// General purpose flag 11: names are UTF-8.
const FLAG_UTF8: u16 = 1 << 11;

/// A timestamp in MS-DOS form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DosDateTime {
    pub(crate) time: u16,
    pub(crate) date: u16,
}

impl DosDateTime {
    /// Converts seconds since the Unix epoch (UTC), clamped to 1980–2107.
    pub(crate) fn from_unix(seconds: u64) -> Self {
        let days = seconds / 86_400;
        let secs = seconds % 86_400;
        let (mut year, mut month, mut day) = civil_from_days(days);
        let (mut hour, mut minute, mut second) = (secs / 3600, secs / 60 % 60, secs % 60);
        if year < 1980 {
            (year, month, day, hour, minute, second) = (1980, 1, 1, 0, 0, 0);
        } else if year > 2107 {
            (year, month, day, hour, minute, second) = (2107, 12, 31, 23, 59, 58);
        }
        Self {
            time: ((hour << 11) | (minute << 5) | (second / 2)) as u16,
            date: (((year - 1980) << 9) | (month << 5) | day) as u16,
        }
    }
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's
/// `civil_from_days`.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Whether a member gets zip64 sizes in its local header, from the largest
/// its stored or compressed data could be (`Codec::worst_case`).
///
/// Decided from the declared size alone, before compressing, so that every
/// path (streamed, chunked, reused from the cache) writes the same header.
pub(crate) fn needs_zip64(worst_case: u64) -> bool {
    worst_case >= U32_MAX
}

/// Everything the headers say about one member.
#[derive(Debug, Clone)]
pub(crate) struct EntryHeader {
    pub(crate) name: String,
    pub(crate) method: u16,
    pub(crate) crc32: u32,
    pub(crate) compressed_size: u64,
    pub(crate) size: u64,
    pub(crate) zip64: bool,
    pub(crate) mode: u32,
    pub(crate) local_offset: u64,
}

impl EntryHeader {
    fn flags(&self) -> u16 {
        if self.name.is_ascii() { 0 } else { FLAG_UTF8 }
    }

    fn version_needed(zip64: bool) -> u16 {
        if zip64 {
            VERSION_ZIP64
        } else {
            VERSION_DEFLATE
        }
    }

    /// The fields the local header and the central record share, from
    /// "version needed" through the sizes (`0xFFFFFFFF` when in zip64 extra).
    fn put_shared_fields(&self, out: &mut Vec<u8>, version_needed: u16, dos: DosDateTime) {
        put16(out, version_needed);
        put16(out, self.flags());
        put16(out, self.method);
        put16(out, dos.time);
        put16(out, dos.date);
        put32(out, self.crc32);
        if self.zip64 {
            put32(out, U32_MAX as u32);
            put32(out, U32_MAX as u32);
        } else {
            put32(out, self.compressed_size as u32);
            put32(out, self.size as u32);
        }
    }

    /// The local header; when `zip64`, sizes live in its extra field.
    pub(crate) fn local(&self, dos: DosDateTime) -> Vec<u8> {
        let name = self.name.as_bytes();
        let extra_len = if self.zip64 { LOCAL_ZIP64_EXTRA_LEN } else { 0 };
        let mut out = Vec::with_capacity(30 + name.len() + usize::from(extra_len));
        put32(&mut out, 0x0403_4b50);
        self.put_shared_fields(&mut out, Self::version_needed(self.zip64), dos);
        put16(&mut out, name.len() as u16);
        put16(&mut out, extra_len);
        out.extend_from_slice(name);
        if self.zip64 {
            put16(&mut out, 0x0001);
            put16(&mut out, 16);
            put64(&mut out, self.size);
            put64(&mut out, self.compressed_size);
        }
        out
    }

    /// Where the sizes and CRC sit inside the local header, for patching a
    /// header written before its member was compressed.
    pub(crate) fn local_patches(&self) -> Vec<(u64, Vec<u8>)> {
        let mut patches = vec![(14, self.crc32.to_le_bytes().to_vec())];
        if self.zip64 {
            let extra = LOCAL_HEADER_LEN + self.name.len() as u64 + 4;
            patches.push((extra, self.size.to_le_bytes().to_vec()));
            patches.push((extra + 8, self.compressed_size.to_le_bytes().to_vec()));
        } else {
            patches.push((18, (self.compressed_size as u32).to_le_bytes().to_vec()));
            patches.push((22, (self.size as u32).to_le_bytes().to_vec()));
        }
        patches
    }

    /// Length of the local header.
    pub(crate) fn local_len(&self) -> u64 {
        LOCAL_HEADER_LEN
            + self.name.len() as u64
            + if self.zip64 {
                u64::from(LOCAL_ZIP64_EXTRA_LEN)
            } else {
                0
            }
    }

    /// The central directory record.
    pub(crate) fn central(&self, dos: DosDateTime) -> Vec<u8> {
        let name = self.name.as_bytes();
        let offset64 = self.local_offset >= U32_MAX;
        let mut extra = Vec::new();
        if self.zip64 {
            put64(&mut extra, self.size);
            put64(&mut extra, self.compressed_size);
        }
        if offset64 {
            put64(&mut extra, self.local_offset);
        }
        let zip64 = !extra.is_empty();
        let mut out = Vec::with_capacity(46 + name.len() + extra.len() + 4);
        put32(&mut out, 0x0201_4b50);
        put16(&mut out, HOST_UNIX | Self::version_needed(zip64));
        self.put_shared_fields(&mut out, Self::version_needed(zip64), dos);
        put16(&mut out, name.len() as u16);
        put16(&mut out, if zip64 { extra.len() as u16 + 4 } else { 0 });
        put16(&mut out, 0); // comment
        put16(&mut out, 0); // disk
        put16(&mut out, 0); // internal attributes
        put32(&mut out, (0o100_000 | self.mode) << 16);
        put32(
            &mut out,
            if offset64 {
                U32_MAX as u32
            } else {
                self.local_offset as u32
            },
        );
        out.extend_from_slice(name);
        if zip64 {
            put16(&mut out, 0x0001);
            put16(&mut out, extra.len() as u16);
            out.extend_from_slice(&extra);
        }
        out
    }
}

/// The end of the archive: zip64 end record and locator when the member
/// count or an offset overflows the classic fields, then the classic record.
pub(crate) fn end_records(entries: usize, cd_offset: u64, cd_size: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let zip64 = entries > MAX_ENTRIES_32 || cd_offset >= U32_MAX || cd_size >= U32_MAX;
    if zip64 {
        let record_offset = cd_offset + cd_size;
        put32(&mut out, 0x0606_4b50);
        put64(&mut out, 44);
        put16(&mut out, HOST_UNIX | VERSION_ZIP64);
        put16(&mut out, VERSION_ZIP64);
        put32(&mut out, 0);
        put32(&mut out, 0);
        put64(&mut out, entries as u64);
        put64(&mut out, entries as u64);
        put64(&mut out, cd_size);
        put64(&mut out, cd_offset);
        put32(&mut out, 0x0706_4b50);
        put32(&mut out, 0);
        put64(&mut out, record_offset);
        put32(&mut out, 1);
    }
    let count = entries.min(MAX_ENTRIES_32) as u16;
    put32(&mut out, 0x0605_4b50);
    put16(&mut out, 0);
    put16(&mut out, 0);
    put16(&mut out, count);
    put16(&mut out, count);
    put32(&mut out, cd_size.min(U32_MAX) as u32);
    put32(&mut out, cd_offset.min(U32_MAX) as u32);
    put16(&mut out, 0);
    out
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dos_time_of_known_dates() {
        // 1980-01-01 00:00:00
        assert_eq!(
            DosDateTime::from_unix(315_532_800),
            DosDateTime {
                time: 0,
                date: 0x21
            }
        );
        // 2023-11-14 22:13:20 UTC
        let t = DosDateTime::from_unix(1_700_000_000);
        assert_eq!(t.date, ((2023 - 1980) << 9) | (11 << 5) | 0xe);
        assert_eq!(t.time, (22 << 11) | (13 << 5) | 0xa);
        // Before 1980 clamps up; after 2107 clamps down.
        assert_eq!(
            DosDateTime::from_unix(0),
            DosDateTime::from_unix(315_532_800)
        );
        assert_eq!(
            DosDateTime::from_unix(u64::from(u32::MAX) * 4).date >> 9,
            127
        );
    }

    #[test]
    fn zip64_from_the_worst_case_size() {
        assert!(!needs_zip64(U32_MAX - 1));
        assert!(needs_zip64(U32_MAX));
    }
}
