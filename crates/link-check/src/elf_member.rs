//! Parsing an ELF file that arrives as a stream (a deflated wheel member,
//! a tar member) in bounded memory: a small one is read into memory, a
//! larger one is spilled to an unnamed temporary file and parsed from
//! there, one larger than any loadable library is not read at all
//! (docs/verify.md#caps). Nothing is sized from the declared length.

use std::io::{self, Cursor, Read, Seek, SeekFrom};

use elf_surgery::{ElfFile, Imports};

use crate::tree::{ScanDepth, read_elf};

/// The largest ELF member held in memory to be parsed; a larger one is
/// spilled to a temporary file.
pub const MAX_ELF_IN_MEMORY: u64 = 32 << 20;

/// The largest ELF member read at all (2 GiB): an x86-64 library whose
/// loaded image is larger cannot be linked with the default code model,
/// so a member declaring more is a decompression bomb, not a library.
pub const MAX_ELF_MEMBER: u64 = 2 << 30;

/// Why an ELF member could not be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElfMemberError {
    /// It declares more than [`MAX_ELF_MEMBER`].
    #[error("an ELF file of {0} bytes, more than the {MAX_ELF_MEMBER} bytes a library may be")]
    TooLarge(u64),
    /// It could not be read (or its bytes disagree with its records).
    #[error("cannot read it")]
    Io(#[from] io::Error),
    /// It is no ELF file this tool can parse.
    #[error("not a readable ELF file")]
    Elf(#[from] elf_surgery::Error),
}

/// Parses the ELF file `reader` streams, whose first bytes `head` were
/// read already and whose declared length is `size`: in memory up to
/// [`MAX_ELF_IN_MEMORY`], from a temporary file beyond, not at all beyond
/// [`MAX_ELF_MEMBER`].
pub fn parse_streamed(
    head: &[u8],
    reader: &mut impl Read,
    size: u64,
    depth: ScanDepth,
) -> Result<(ElfFile, Option<Imports>), ElfMemberError> {
    if size > MAX_ELF_MEMBER {
        return Err(ElfMemberError::TooLarge(size));
    }
    // Never more than declared: a longer stream is cut here, and its own
    // reader reports the lie when it is read to the end.
    let mut rest = reader.take(size.saturating_sub(head.len() as u64));
    if size <= MAX_ELF_IN_MEMORY {
        let mut bytes = head.to_vec();
        rest.read_to_end(&mut bytes)?;
        return Ok(read_elf(&mut Cursor::new(bytes), depth)?);
    }
    let mut file = tempfile::tempfile()?;
    io::Write::write_all(&mut file, head)?;
    io::copy(&mut rest, &mut file)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(read_elf(&mut io::BufReader::new(file), depth)?)
}

/// A window `start..start + len` of a seekable reader, itself seekable:
/// a stored wheel member parsed in place.
#[derive(Debug)]
pub(crate) struct Window<R> {
    inner: R,
    start: u64,
    len: u64,
    pos: u64,
}

impl<R: Read + Seek> Window<R> {
    pub(crate) fn new(inner: R, start: u64, len: u64) -> Self {
        Self {
            inner,
            start,
            len,
            pos: 0,
        }
    }
}

impl<R: Read + Seek> Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        self.inner.seek(SeekFrom::Start(self.start + self.pos))?;
        let n = self.inner.read(&mut buf[..want])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for Window<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the member",
            )
        })?;
        self.pos = target;
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_and_seeks_inside_its_range() {
        let mut window = Window::new(Cursor::new(b"0123456789".to_vec()), 2, 5);
        let mut all = String::new();
        window.read_to_string(&mut all).unwrap();
        assert_eq!(all, "23456");
        window.seek(SeekFrom::End(-2)).unwrap();
        let mut tail = String::new();
        window.read_to_string(&mut tail).unwrap();
        assert_eq!(tail, "56");
        assert!(window.seek(SeekFrom::Current(-10)).is_err());
    }

    /// This test program, padded past the in-memory cap, parses from a
    /// temporary file to the same facts as in memory, and in place from a
    /// window of a larger file.
    #[test]
    fn a_large_elf_is_parsed_from_a_temporary_file_and_a_stored_one_in_place() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let (direct, _) = read_elf(&mut Cursor::new(&exe), ScanDepth::Links).unwrap();
        let mut padded = exe.clone();
        let size = usize::try_from(MAX_ELF_IN_MEMORY).unwrap() + 4096;
        if padded.len() < size {
            padded.resize(size, 0);
        }
        let (head, rest) = padded.split_at(4);
        let (spilled, _) =
            parse_streamed(head, &mut &rest[..], padded.len() as u64, ScanDepth::Links).unwrap();
        assert_eq!(spilled.needed(), direct.needed());
        assert_eq!(spilled.soname(), direct.soname());
        let mut framed = b"leading bytes".to_vec();
        framed.extend(&exe);
        framed.extend(b"trailing bytes");
        let mut window = Window::new(Cursor::new(framed), 13, exe.len() as u64);
        let (windowed, _) = read_elf(&mut window, ScanDepth::Links).unwrap();
        assert_eq!(windowed.needed(), direct.needed());
    }

    #[test]
    fn a_declared_size_over_the_cap_is_not_read() {
        let mut endless = io::repeat(0);
        let err = parse_streamed(b"\x7fELF", &mut endless, 1 << 40, ScanDepth::Links).unwrap_err();
        assert!(matches!(err, ElfMemberError::TooLarge(_)), "{err}");
        // A lying stream is cut at the declared size, not read to its end.
        let err = parse_streamed(b"\x7fELF", &mut endless, 64, ScanDepth::Links).unwrap_err();
        assert!(matches!(err, ElfMemberError::Elf(_)), "{err}");
    }
}
