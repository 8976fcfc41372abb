//! The `.tar.gz` container of an sdist, read the one way every reader
//! reads it, or refused (docs/verify.md#one-reading).
//!
//! Readers of tar archives disagree on hostile input: Python's gzip reads
//! every concatenated gzip member and `flate2`'s `GzDecoder` only the
//! first; Python's tarfile takes a pax `path` over a GNU long name and the
//! `tar` crate the other way round; tarfile stops at the first zero block
//! (or the first bad header) and other readers read on. [`SdistArchive`]
//! accepts an sdist only when all of them must agree:
//!
//! - one gzip member, its CRC-32 and length right, and not a byte after it;
//! - POSIX ustar headers with a right checksum, names and numbers without
//!   hidden bytes, no link name;
//! - only the entries an sdist of this project holds: regular files
//!   (type `0`) and pax extended headers (type `x`) giving a `path`, and
//!   nothing else (no `size`, `linkpath` or charset), right before the
//!   file it names, whose own ustar name agrees with it (the same, or its
//!   first 100 bytes when it does not fit);
//! - no GNU long-name or long-link header, no pax global header, no
//!   directory, link, device or FIFO;
//! - the end-of-archive marker (two zero blocks) present, and only zeros
//!   after it (at most [`MAX_TRAILING_ZEROS`]);
//! - file data padded with zeros, every member at most
//!   [`MAX_MEMBER_SIZE`] and all at most [`MAX_TOTAL_SIZE`], at most
//!   [`MAX_MEMBERS`] of them.
//!
//! Members are streamed: a member's bytes are read through
//! [`SdistMember`], nothing is sized from a declared length, and an
//! oversized member stops the read before its data is inflated.
//!
//! ```
//! use pypa_formats::sdist_archive::{SdistArchive, SdistError};
//!
//! // Not gzip at all.
//! let mut archive = SdistArchive::new(&b"not an sdist"[..]);
//! assert!(matches!(archive.next_member(), Err(SdistError::Io(_))));
//! ```

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

const BLOCK: usize = 512;

/// The largest member an sdist may hold (16 MiB: the `rocm` sdist's are
/// a few KiB); a larger one is refused before its data is read.
pub const MAX_MEMBER_SIZE: u64 = 16 << 20;
/// The most bytes all members of an sdist may hold together.
pub const MAX_TOTAL_SIZE: u64 = 64 << 20;
/// The most members an sdist may hold.
pub const MAX_MEMBERS: u64 = 10_000;
/// The largest pax extended header read.
pub const MAX_PAX_HEADER: u64 = 64 << 10;
/// The most zero bytes accepted after the end-of-archive marker (tar
/// pads to records of 10 KiB; 1 MiB is any blocking factor in use).
pub const MAX_TRAILING_ZEROS: u64 = 1 << 20;

/// Why an sdist is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SdistError {
    /// Not gzip, a gzip stream that is corrupt or cut, or unreadable.
    #[error("cannot read the gzip stream")]
    Io(#[from] io::Error),
    /// Bytes after the gzip member: Python's gzip reads them as another
    /// member, other readers stop.
    #[error(
        "bytes follow the end of the gzip stream{}, which Python's gzip reads as more of the archive \
         and other readers ignore",
        match .0 {
            Some(name) => format!(" (a second gzip member, whose tar starts with member {name})"),
            None => String::new(),
        }
    )]
    AfterGzip(Option<String>),
    /// The tar ends without its end-of-archive marker.
    #[error("the tar ends at offset {0} without its end-of-archive marker (two zero blocks)")]
    NoEndMarker(u64),
    /// The tar ends inside a header or member.
    #[error("the tar is cut at offset {0}, inside a header or a member's data")]
    Truncated(u64),
    /// Something other than zeros after the first zero block.
    #[error(
        "bytes other than zeros follow the end-of-archive marker at offset {0}; tarfile stops at \
         the marker, other readers read on"
    )]
    AfterEndMarker(u64),
    /// Too many zeros after the end-of-archive marker.
    #[error("more than {MAX_TRAILING_ZEROS} bytes follow the end-of-archive marker")]
    TooMuchPadding,
    /// A header whose checksum is wrong: tarfile ends the archive there,
    /// other readers fail.
    #[error("the header at offset {0} has a wrong checksum")]
    Checksum(u64),
    /// A header that is not POSIX ustar (GNU or pre-POSIX), whose fields
    /// readers interpret differently.
    #[error("the header at offset {0} is not a POSIX ustar header")]
    NotUstar(u64),
    /// A header field that is not what it should be.
    #[error("the header at offset {offset} has a malformed {field} field")]
    Field {
        /// Where the header starts.
        offset: u64,
        /// Which field.
        field: &'static str,
    },
    /// A name that is not UTF-8.
    #[error("the header at offset {0} gives a name that is not UTF-8")]
    NameNotUtf8(u64),
    /// An entry type no sdist of this project holds.
    #[error("member {name}: {kind}; an sdist of this project holds regular files only")]
    EntryType {
        /// The member's name.
        name: String,
        /// What it is.
        kind: EntryKind,
    },
    /// A pax extended header this reader does not accept.
    #[error("the pax extended header at offset {offset} {problem}")]
    Pax {
        /// Where its header starts.
        offset: u64,
        /// What is wrong.
        problem: &'static str,
    },
    /// A pax path that is not the ustar name of the file it describes.
    #[error(
        "member {path}: its pax header gives the path {path:?} but its ustar header {name:?}, so \
         readers would unpack it under different names"
    )]
    PaxPathDisagrees {
        /// The pax path.
        path: String,
        /// The ustar name.
        name: String,
    },
    /// A member larger than an sdist member may be.
    #[error(
        "member {name} is {size} bytes, more than the {MAX_MEMBER_SIZE} bytes an sdist member may be"
    )]
    MemberTooLarge {
        /// The member.
        name: String,
        /// Its declared size.
        size: u64,
    },
    /// All members together are larger than an sdist may be.
    #[error("its members hold more than {MAX_TOTAL_SIZE} bytes together")]
    TotalTooLarge,
    /// Too many members.
    #[error("it holds more than {MAX_MEMBERS} members")]
    TooManyMembers,
    /// Padding after a member's data that is not zeros.
    #[error("the padding after member {0} is not zeros")]
    Padding(String),
}

/// A tar entry type no sdist of this project holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A GNU long name (`L`) or long link name (`K`) header.
    GnuLongName(u8),
    /// A pax global header (`g`).
    PaxGlobal,
    /// A directory (`5`).
    Directory,
    /// A hard (`1`) or symbolic (`2`) link.
    Link,
    /// A character (`3`) or block (`4`) device.
    Device,
    /// A FIFO (`6`).
    Fifo,
    /// Any other type byte (`\0`, `7`, vendor types).
    Other(u8),
}

impl std::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::GnuLongName(t) => write!(
                f,
                "a GNU long {} header (type {:?}), which readers apply differently next to a pax path",
                if *t == b'L' { "name" } else { "link" },
                char::from(*t)
            ),
            Self::PaxGlobal => {
                f.write_str("a pax global header, which applies to every later member")
            }
            Self::Directory => f.write_str("it is a directory"),
            Self::Link => f.write_str("it is a link"),
            Self::Device => f.write_str("it is a device file"),
            Self::Fifo => f.write_str("it is a FIFO"),
            Self::Other(t) => write!(f, "it has tar entry type {:?}", char::from(*t)),
        }
    }
}

impl EntryKind {
    fn of(typeflag: u8) -> Self {
        match typeflag {
            b'L' | b'K' => Self::GnuLongName(typeflag),
            b'g' => Self::PaxGlobal,
            b'5' => Self::Directory,
            b'1' | b'2' => Self::Link,
            b'3' | b'4' => Self::Device,
            b'6' => Self::Fifo,
            other => Self::Other(other),
        }
    }
}

/// A gzip-compressed tar read member by member (the module documentation
/// lists what it accepts).
#[derive(Debug)]
pub struct SdistArchive<R: BufRead> {
    gz: GzDecoder<R>,
    /// Bytes of the tar stream read so far.
    offset: u64,
    /// Data of the current member not read yet, then its padding.
    data_left: u64,
    padding_left: u64,
    current: String,
    members: u64,
    total: u64,
    finished: bool,
}

/// One regular file of an sdist: its name and mode, and its bytes
/// through [`Read`].
#[derive(Debug)]
pub struct SdistMember<'a, R: BufRead> {
    archive: &'a mut SdistArchive<R>,
    /// The member's path, as every reader names it.
    pub name: String,
    /// Its mode (permission and special bits; the type is a regular file).
    pub mode: u32,
    /// Its size.
    pub size: u64,
}

impl<R: BufRead> Read for SdistMember<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let archive = &mut *self.archive;
        let want = buf
            .len()
            .min(usize::try_from(archive.data_left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = archive.gz.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                SdistError::Truncated(archive.offset),
            ));
        }
        archive.offset += n as u64;
        archive.data_left -= n as u64;
        Ok(n)
    }
}

impl<R: BufRead> SdistArchive<R> {
    /// An sdist read from its gzip-compressed bytes.
    pub fn new(reader: R) -> Self {
        Self {
            gz: GzDecoder::new(reader),
            offset: 0,
            data_left: 0,
            padding_left: 0,
            current: String::new(),
            members: 0,
            total: 0,
            finished: false,
        }
    }

    /// The next regular file, or `None` once the end-of-archive marker,
    /// the end of the gzip stream and the end of the file have been
    /// checked. Skips what the previous member's reader left unread.
    pub fn next_member(&mut self) -> Result<Option<SdistMember<'_, R>>, SdistError> {
        if self.finished {
            return Ok(None);
        }
        self.skip_rest()?;
        let mut pax_path: Option<(String, u64)> = None;
        loop {
            let offset = self.offset;
            let Some(block) = self.header_block()? else {
                // The tar may go on in a second gzip member.
                if !self.gz.get_mut().fill_buf()?.is_empty() {
                    return Err(SdistError::AfterGzip(next_member_name(self.gz.get_mut())));
                }
                return Err(SdistError::NoEndMarker(offset));
            };
            if block.iter().all(|&b| b == 0) {
                if let Some((_, at)) = pax_path {
                    return Err(SdistError::Pax {
                        offset: at,
                        problem: "describes no member",
                    });
                }
                self.end(offset)?;
                return Ok(None);
            }
            let header = Header::parse(&block, offset)?;
            if matches!(header.typeflag, b'0' | b'x') && !header.link_name_empty {
                return Err(SdistError::Field {
                    offset,
                    field: "link name",
                });
            }
            match header.typeflag {
                b'0' => {}
                b'x' => {
                    if pax_path.is_some() {
                        return Err(SdistError::Pax {
                            offset,
                            problem: "follows another one",
                        });
                    }
                    pax_path = Some((self.pax(&header, offset)?, offset));
                    continue;
                }
                other => {
                    return Err(SdistError::EntryType {
                        name: pax_path.map_or(header.name, |(path, _)| path),
                        kind: EntryKind::of(other),
                    });
                }
            }
            let name = match pax_path {
                None => header.name,
                Some((path, _)) => {
                    let agrees = path == header.name
                        || (header.prefix_empty
                            && header.name.len() == 100
                            && path.as_bytes().starts_with(header.name.as_bytes()));
                    if !agrees {
                        return Err(SdistError::PaxPathDisagrees {
                            path,
                            name: header.name,
                        });
                    }
                    path
                }
            };
            self.members += 1;
            if self.members > MAX_MEMBERS {
                return Err(SdistError::TooManyMembers);
            }
            if header.size > MAX_MEMBER_SIZE {
                return Err(SdistError::MemberTooLarge {
                    name,
                    size: header.size,
                });
            }
            self.total += header.size;
            if self.total > MAX_TOTAL_SIZE {
                return Err(SdistError::TotalTooLarge);
            }
            self.data_left = header.size;
            self.padding_left = padding(header.size);
            self.current.clone_from(&name);
            return Ok(Some(SdistMember {
                archive: self,
                name,
                mode: header.mode,
                size: header.size,
            }));
        }
    }

    /// Reads the next 512 bytes of the tar; `None` at a clean end of the
    /// stream.
    fn header_block(&mut self) -> Result<Option<[u8; BLOCK]>, SdistError> {
        let mut block = [0; BLOCK];
        let mut filled = 0;
        while filled < BLOCK {
            let n = self.gz.read(&mut block[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        self.offset += filled as u64;
        match filled {
            0 => Ok(None),
            BLOCK => Ok(Some(block)),
            _ => Err(SdistError::Truncated(self.offset)),
        }
    }

    /// Skips the unread data of the current member and checks its padding.
    fn skip_rest(&mut self) -> Result<(), SdistError> {
        let mut scratch = [0; 8192];
        while self.data_left > 0 {
            let want = scratch
                .len()
                .min(usize::try_from(self.data_left).unwrap_or(usize::MAX));
            let n = self.gz.read(&mut scratch[..want])?;
            if n == 0 {
                return Err(SdistError::Truncated(self.offset));
            }
            self.offset += n as u64;
            self.data_left -= n as u64;
        }
        while self.padding_left > 0 {
            let want = usize::try_from(self.padding_left).expect("under a block");
            let n = self.gz.read(&mut scratch[..want])?;
            if n == 0 {
                return Err(SdistError::Truncated(self.offset));
            }
            if scratch[..n].iter().any(|&b| b != 0) {
                return Err(SdistError::Padding(self.current.clone()));
            }
            self.offset += n as u64;
            self.padding_left -= n as u64;
        }
        Ok(())
    }

    /// Reads a pax extended header's records; returns its `path`.
    fn pax(&mut self, header: &Header, offset: u64) -> Result<String, SdistError> {
        let problem = |problem| SdistError::Pax { offset, problem };
        if header.size > MAX_PAX_HEADER {
            return Err(problem("is larger than 64 KiB"));
        }
        let mut data = Vec::new();
        (&mut self.gz).take(header.size).read_to_end(&mut data)?;
        self.offset += data.len() as u64;
        if data.len() as u64 != header.size {
            return Err(SdistError::Truncated(self.offset));
        }
        self.data_left = 0;
        self.padding_left = padding(header.size);
        self.current = format!("(pax header at offset {offset})");
        self.skip_rest()?;
        let mut rest = data.as_slice();
        let mut path = None;
        while !rest.is_empty() {
            let (key, value, len) =
                pax_record(rest).ok_or_else(|| problem("has a malformed record"))?;
            if key != b"path" {
                return Err(problem("gives a field other than `path`"));
            }
            if path.is_some() {
                return Err(problem("gives `path` twice"));
            }
            let value = std::str::from_utf8(value)
                .map_err(|_| problem("gives a path that is not UTF-8"))?;
            path = Some(value.to_owned());
            rest = &rest[len..];
        }
        path.ok_or_else(|| problem("gives no `path`"))
    }

    /// After the first zero block at `offset`: only zeros up to the end of
    /// the tar (another zero block at least, whole blocks), then the end of
    /// the gzip member and of the file.
    fn end(&mut self, offset: u64) -> Result<(), SdistError> {
        let mut scratch = [0; 8192];
        let mut zeros = 0u64;
        loop {
            let n = self.gz.read(&mut scratch)?;
            if n == 0 {
                break;
            }
            if scratch[..n].iter().any(|&b| b != 0) {
                return Err(SdistError::AfterEndMarker(offset));
            }
            zeros += n as u64;
            if zeros > MAX_TRAILING_ZEROS {
                return Err(SdistError::TooMuchPadding);
            }
        }
        self.offset += zeros;
        if zeros < BLOCK as u64 || !zeros.is_multiple_of(BLOCK as u64) {
            return Err(SdistError::NoEndMarker(offset));
        }
        if !self.gz.get_mut().fill_buf()?.is_empty() {
            return Err(SdistError::AfterGzip(next_member_name(self.gz.get_mut())));
        }
        self.finished = true;
        Ok(())
    }
}

/// The name of the first tar member in the gzip member `rest` starts
/// with, if it is one (read from at most 1 MiB of it): what a reader of
/// concatenated members would find next.
fn next_member_name(rest: &mut impl BufRead) -> Option<String> {
    let mut header = [0; BLOCK];
    GzDecoder::new(io::BufReader::new(rest.take(1 << 20)))
        .read_exact(&mut header)
        .ok()?;
    let name = text(&header[..100])?;
    (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
}

fn padding(size: u64) -> u64 {
    (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64
}

/// One record `"{len} {key}={value}\n"` at the start of `data`, its
/// length counting itself: (key, value, len).
fn pax_record(data: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let space = data.iter().position(|&b| b == b' ')?;
    let digits = &data[..space];
    if digits.is_empty() || digits[0] == b'0' || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let len: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let record = data.get(..len)?;
    let body = record.get(space + 1..len - 1)?;
    if record[len - 1] != b'\n' {
        return None;
    }
    let eq = body.iter().position(|&b| b == b'=')?;
    let (key, value) = (&body[..eq], &body[eq + 1..]);
    if key.is_empty() || key.contains(&0) || value.contains(&0) {
        return None;
    }
    Some((key, value, len))
}

/// The fields of a ustar header this reader uses.
#[derive(Debug)]
struct Header {
    name: String,
    prefix_empty: bool,
    link_name_empty: bool,
    mode: u32,
    size: u64,
    typeflag: u8,
}

impl Header {
    fn parse(block: &[u8; BLOCK], offset: u64) -> Result<Self, SdistError> {
        let field = |field| SdistError::Field { offset, field };
        let stored = octal(&block[148..156]).ok_or_else(|| field("checksum"))?;
        let computed: u64 = block
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    u64::from(b)
                }
            })
            .sum();
        if stored != computed {
            return Err(SdistError::Checksum(offset));
        }
        if &block[257..263] != b"ustar\0" || &block[263..265] != b"00" {
            return Err(SdistError::NotUstar(offset));
        }
        let name = text(&block[..100]).ok_or_else(|| field("name"))?;
        let prefix = text(&block[345..500]).ok_or_else(|| field("prefix"))?;
        let mode = octal(&block[100..108]).ok_or_else(|| field("mode"))?;
        let size = octal(&block[124..136]).ok_or_else(|| field("size"))?;
        for (range, name) in [
            (108..116, "uid"),
            (116..124, "gid"),
            (136..148, "mtime"),
            (329..337, "device major"),
            (337..345, "device minor"),
        ] {
            octal(&block[range]).ok_or_else(|| field(name))?;
        }
        let join = |prefix: &[u8], name: &[u8]| -> Result<String, SdistError> {
            let mut full = prefix.to_vec();
            if !full.is_empty() {
                full.push(b'/');
            }
            full.extend_from_slice(name);
            String::from_utf8(full).map_err(|_| SdistError::NameNotUtf8(offset))
        };
        Ok(Self {
            name: join(prefix, name)?,
            prefix_empty: prefix.is_empty(),
            link_name_empty: block[157..257].iter().all(|&b| b == 0),
            mode: u32::try_from(mode & 0o7777).expect("12 bits"),
            size,
            typeflag: block[156],
        })
    }
}

/// A NUL-terminated text field with nothing but NULs after its end.
fn text(field: &[u8]) -> Option<&[u8]> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    field[end..]
        .iter()
        .all(|&b| b == 0)
        .then_some(&field[..end])
}

/// An octal number field as tarfile reads it: up to the first NUL,
/// spaces around it ignored, empty meaning 0; base-256 numbers (first bit
/// set) are refused.
fn octal(field: &[u8]) -> Option<u64> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let digits = field[..end].trim_ascii();
    if digits.is_empty() {
        return Some(0);
    }
    if !digits.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pax_records_are_read_exactly() {
        assert_eq!(
            pax_record(b"9 path=a\n"),
            Some((&b"path"[..], &b"a"[..], 9))
        );
        assert_eq!(pax_record(b"11 path=a\n"), None);
        assert_eq!(pax_record(b"10 path=ab\n"), None);
        assert_eq!(pax_record(b"09 path=a\n"), None);
        assert_eq!(pax_record(b"9 path=a\r"), None);
        assert_eq!(pax_record(b"8 =a\nxx"), None);
    }

    #[test]
    fn numbers_are_read_as_tarfile_reads_them() {
        assert_eq!(octal(b"0000644\0"), Some(0o644));
        assert_eq!(octal(b" 644 \0\0"), Some(0o644));
        assert_eq!(octal(b"\0\0\0"), Some(0));
        assert_eq!(octal(b"0009\0"), None);
        assert_eq!(octal(b"\x80\0\0\0\0\0\0\x01"), None);
    }
}
