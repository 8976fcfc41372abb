//! Bounded random access to the bytes of a file: the parser asks for small
//! ranges (headers, tables, strings), never for the whole file.

use std::io::{self, Read, Seek, SeekFrom};

use crate::error::{Result, truncated};

/// Random-access reads of exact ranges; implemented by a plain source and by
/// the edited view that verification parses.
pub(crate) trait ReadAt {
    /// Length in bytes.
    fn len(&self) -> u64;

    /// Fills `buf` from `offset`; the range is inside `0..len()`.
    fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;

    /// Reads `len` bytes at `offset`, or says which structure is truncated.
    fn read_vec(&mut self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
        let end = offset.checked_add(len);
        if end.is_none_or(|end| end > self.len()) {
            return Err(truncated(format!(
                "{what} (bytes {offset:#x}..+{len:#x}, file is {:#x} bytes)",
                self.len()
            )));
        }
        let len = usize::try_from(len).map_err(|_| truncated(what.to_string()))?;
        let mut buf = vec![0; len];
        self.read_exact_at(offset, &mut buf)?;
        Ok(buf)
    }
}

/// A `Read + Seek` source with its length measured once.
pub(crate) struct Source<'a, R> {
    inner: &'a mut R,
    len: u64,
}

impl<'a, R: Read + Seek> Source<'a, R> {
    pub(crate) fn new(inner: &'a mut R) -> io::Result<Self> {
        let len = inner.seek(SeekFrom::End(0))?;
        Ok(Self { inner, len })
    }
}

impl<R: Read + Seek> ReadAt for Source<'_, R> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.inner.read_exact(buf)
    }
}
