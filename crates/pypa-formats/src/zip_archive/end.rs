//! Finding the end of central directory record the way Python's zipfile
//! finds it, then refusing every archive another reader could end
//! elsewhere: a second record a comment-length-checking reader would pick,
//! a comment that does not reach the end of the file, a zip64 locator
//! that points away from the zip64 record zipfile reads in front of it,
//! and end records that disagree with each other.

use std::io::{Read, Seek, SeekFrom};

use super::error::ZipError;
use super::le::{u16_at, u32_at, u64_at};

const END_SIGNATURE: &[u8; 4] = b"PK\x05\x06";
const END_LEN: u64 = 22;
const LOCATOR_SIGNATURE: &[u8; 4] = b"PK\x06\x07";
const LOCATOR_LEN: u64 = 20;
const ZIP64_SIGNATURE: &[u8; 4] = b"PK\x06\x06";
const ZIP64_LEN: u64 = 56;
/// The size field of a zip64 end record without extensible data.
const ZIP64_SIZE_FIELD: u64 = ZIP64_LEN - 12;
const MAX_COMMENT: u64 = 0xFFFF;

/// What the end records say about the central directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct End {
    /// How many records the central directory holds.
    pub(super) entries: u64,
    /// Where it starts.
    pub(super) cd_offset: u64,
    /// Its size.
    pub(super) cd_size: u64,
}

/// Locates and checks the end records of the archive `reader` holds
/// (`len` bytes).
pub(super) fn locate<R: Read + Seek>(reader: &mut R, len: u64) -> Result<End, ZipError> {
    if len < END_LEN {
        return Err(ZipError::NoEndRecord);
    }
    let tail_len = len.min(MAX_COMMENT + END_LEN);
    let tail_start = len - tail_len;
    let mut tail = vec![0; usize::try_from(tail_len).expect("at most 64 KiB")];
    reader.seek(SeekFrom::Start(tail_start))?;
    reader.read_exact(&mut tail)?;
    let at = zipfile_choice(&tail).ok_or(ZipError::NoEndRecord)?;
    let offset = tail_start + at as u64;
    let record = &tail[at..at + 22];
    let comment = u16_at(record, 20);
    let after = len - offset - END_LEN;
    if u64::from(comment) != after {
        return Err(ZipError::CommentLength {
            offset,
            declared: comment,
            actual: after,
        });
    }
    // A reader that searches back for a record whose comment reaches the
    // end of the file may stop at another one.
    let second = find_all(&tail, END_SIGNATURE).any(|other| {
        other != at
            && other + 22 <= tail.len()
            && u64::from(u16_at(&tail[other..], 20)) == tail_len - other as u64 - END_LEN
    });
    if second {
        return Err(ZipError::SignatureInComment);
    }
    let (disk, cd_disk) = (u16_at(record, 4), u16_at(record, 6));
    let (disk_entries, entries) = (u16_at(record, 8), u16_at(record, 10));
    let (cd_size, cd_offset) = (u32_at(record, 12), u32_at(record, 16));
    if disk != 0 || cd_disk != 0 || disk_entries != entries {
        return Err(ZipError::MultiDisk);
    }
    let classic = End {
        entries: u64::from(entries),
        cd_offset: u64::from(cd_offset),
        cd_size: u64::from(cd_size),
    };
    let (end, cd_end) = match zip64(reader, offset)? {
        None => (classic, offset),
        Some((zip64, record_at)) => {
            agree("member count", classic.entries, zip64.entries, 0xFFFF)?;
            agree(
                "central directory offset",
                classic.cd_offset,
                zip64.cd_offset,
                0xFFFF_FFFF,
            )?;
            agree(
                "central directory size",
                classic.cd_size,
                zip64.cd_size,
                0xFFFF_FFFF,
            )?;
            (zip64, record_at)
        }
    };
    match end.cd_offset.checked_add(end.cd_size) {
        Some(cd_stop) if cd_stop == cd_end => Ok(end),
        stop => Err(ZipError::CentralDirectoryPlacement {
            start: end.cd_offset,
            end: stop.unwrap_or(u64::MAX),
            expected: cd_end,
        }),
    }
}

/// Where in `tail` (the last bytes of the file) Python's zipfile takes
/// the end record to start: the last 22 bytes when they are one without a
/// comment, else the last signature (`None`: no record there).
fn zipfile_choice(tail: &[u8]) -> Option<usize> {
    let last = tail.len().checked_sub(22)?;
    if &tail[last..last + 4] == END_SIGNATURE && tail[tail.len() - 2..] == [0, 0] {
        return Some(last);
    }
    let at = find_all(tail, END_SIGNATURE).last()?;
    (at + 22 <= tail.len()).then_some(at)
}

fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8; 4]) -> impl Iterator<Item = usize> + 'a {
    haystack
        .windows(4)
        .enumerate()
        .filter_map(move |(i, w)| (w == needle).then_some(i))
}

/// The zip64 end record before the classic one at `end_at`, as zipfile
/// reads it (the locator right before the classic record, the record
/// right before the locator), with the position of the record; `None`
/// when there is no locator.
fn zip64<R: Read + Seek>(reader: &mut R, end_at: u64) -> Result<Option<(End, u64)>, ZipError> {
    let Some(locator_at) = end_at.checked_sub(LOCATOR_LEN) else {
        return Ok(None);
    };
    let mut locator = [0; LOCATOR_LEN as usize];
    reader.seek(SeekFrom::Start(locator_at))?;
    reader.read_exact(&mut locator)?;
    if &locator[..4] != LOCATOR_SIGNATURE {
        return Ok(None);
    }
    let (record_disk, declared_at, disks) = (
        u32_at(&locator, 4),
        u64_at(&locator, 8),
        u32_at(&locator, 16),
    );
    if record_disk != 0 || disks > 1 {
        return Err(ZipError::MultiDisk);
    }
    let missing = ZipError::Zip64RecordMissing {
        locator: locator_at,
    };
    let Some(record_at) = locator_at.checked_sub(ZIP64_LEN) else {
        return Err(missing);
    };
    let mut record = [0; ZIP64_LEN as usize];
    reader.seek(SeekFrom::Start(record_at))?;
    reader.read_exact(&mut record)?;
    if &record[..4] != ZIP64_SIGNATURE {
        return Err(missing);
    }
    if declared_at != record_at {
        return Err(ZipError::Zip64LocatorOffset {
            declared: declared_at,
            actual: record_at,
        });
    }
    let size = u64_at(&record, 4);
    if size != ZIP64_SIZE_FIELD {
        return Err(ZipError::Zip64RecordSize(size));
    }
    let (disk, cd_disk) = (u32_at(&record, 16), u32_at(&record, 20));
    let (disk_entries, entries) = (u64_at(&record, 24), u64_at(&record, 32));
    if disk != 0 || cd_disk != 0 || disk_entries != entries {
        return Err(ZipError::MultiDisk);
    }
    Ok(Some((
        End {
            entries,
            cd_size: u64_at(&record, 40),
            cd_offset: u64_at(&record, 48),
        },
        record_at,
    )))
}

/// A classic end record field must give the zip64 value, or the marker
/// that says "see the zip64 record".
fn agree(field: &'static str, classic: u64, zip64: u64, marker: u64) -> Result<(), ZipError> {
    if classic == zip64 || classic == marker {
        Ok(())
    } else {
        Err(ZipError::EndRecordsDisagree {
            field,
            classic,
            zip64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end_record(entries: u16, size: u32, offset: u32, comment: &[u8]) -> Vec<u8> {
        let mut out = END_SIGNATURE.to_vec();
        out.extend([0; 4]);
        out.extend(entries.to_le_bytes());
        out.extend(entries.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend(offset.to_le_bytes());
        out.extend(u16::try_from(comment.len()).unwrap().to_le_bytes());
        out.extend(comment);
        out
    }

    fn locate_in(bytes: &[u8]) -> Result<End, ZipError> {
        locate(&mut std::io::Cursor::new(bytes), bytes.len() as u64)
    }

    #[test]
    fn an_empty_archive_and_a_comment() {
        let empty = end_record(0, 0, 0, b"");
        assert_eq!(
            locate_in(&empty).unwrap(),
            End {
                entries: 0,
                cd_offset: 0,
                cd_size: 0
            }
        );
        assert!(locate_in(&end_record(0, 0, 0, b"built here")).is_ok());
    }

    #[test]
    fn comments_that_hide_or_lose_the_end_record_are_refused() {
        let mut cut = end_record(0, 0, 0, b"built here");
        cut.truncate(cut.len() - 3);
        assert!(matches!(
            locate_in(&cut),
            Err(ZipError::CommentLength {
                declared: 10,
                actual: 7,
                ..
            })
        ));
        // A comment holding a whole end record of its own: zipfile takes
        // the inner one (the last 22 bytes), a comment-checking reader the
        // outer one.
        let inner = end_record(0, 0, 0, b"");
        let outer = end_record(0, 0, 0, &inner);
        assert!(matches!(
            locate_in(&outer),
            Err(ZipError::SignatureInComment)
        ));
        let mut trailing = end_record(0, 0, 0, b"");
        trailing.extend(b"junk");
        assert!(matches!(
            locate_in(&trailing),
            Err(ZipError::CommentLength { .. })
        ));
        assert!(matches!(locate_in(b"PK"), Err(ZipError::NoEndRecord)));
    }

    #[test]
    fn the_central_directory_must_end_at_the_end_record() {
        let mut bytes = vec![0; 10];
        bytes.extend(end_record(0, 0, 0, b""));
        assert!(matches!(
            locate_in(&bytes),
            Err(ZipError::CentralDirectoryPlacement { expected: 10, .. })
        ));
    }
}
