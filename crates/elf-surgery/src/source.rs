//! Bounded random access to the bytes of a file: the parser asks for small
//! ranges (headers, tables, strings), never for the whole file.

use std::hash::Hasher;
use std::io::{self, Read, Seek, SeekFrom};

use crate::error::{Error, ErrorKind, Result, truncated};

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

/// The bytes a parse depended on: the source's length and a digest of each
/// range it read. A later call handed "the file this was parsed from" reads
/// those ranges again and compares, so a different file of the same length
/// (another build of the library, a file rewritten in place) is refused
/// instead of being read or edited with facts that are not its own. The
/// bytes themselves, not a device and inode, are what is compared: a
/// source is any `Read + Seek` (a wheel member, a window of an archive),
/// which has no inode, and a file rewritten in place keeps its inode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    /// `(offset, len, digest)` of each range read, in the order read.
    ranges: Vec<(u64, u64, u64)>,
}

impl Stamp {
    /// A stamp of the length alone (no range read).
    pub(crate) fn of_len(len: u64) -> Self {
        Self {
            len,
            ranges: Vec::new(),
        }
    }

    /// The length of the stamped source.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Checks that `src` has the stamped length and bytes.
    pub(crate) fn check(&self, src: &mut impl ReadAt) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::new(ErrorKind::SourceChanged {
                expected: self.len,
                actual: src.len(),
            }));
        }
        let mut buf = Vec::new();
        for &(offset, len, digest) in &self.ranges {
            buf.resize(usize::try_from(len).expect("a range read once fits"), 0);
            src.read_exact_at(offset, &mut buf)?;
            if digest_of(&buf) != digest {
                return Err(Error::new(ErrorKind::SourceDiffers { offset }));
            }
        }
        Ok(())
    }
}

fn digest_of(bytes: &[u8]) -> u64 {
    // Compared within one process only: the std hasher's fixed keys serve.
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

/// A [`ReadAt`] that stamps every range read through it.
pub(crate) struct Stamping<'a, S> {
    inner: &'a mut S,
    stamp: Stamp,
}

impl<'a, S: ReadAt> Stamping<'a, S> {
    pub(crate) fn new(inner: &'a mut S) -> Self {
        let stamp = Stamp::of_len(inner.len());
        Self { inner, stamp }
    }

    pub(crate) fn into_stamp(self) -> Stamp {
        self.stamp
    }
}

impl<S: ReadAt> ReadAt for Stamping<'_, S> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact_at(offset, buf)?;
        self.stamp
            .ranges
            .push((offset, buf.len() as u64, digest_of(buf)));
        Ok(())
    }
}
