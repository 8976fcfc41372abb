//! A member's bytes, streamed: stored bytes as they are, deflate inflated
//! through a fixed buffer. Nothing is sized from a declared length; the
//! real length, the CRC-32 and the end of the deflate stream are checked
//! against the records as the bytes go by, and the reader fails on the
//! first byte past the declared size.

use std::io::{self, Read};

use flate2::{Decompress, FlushDecompress, Status};

use super::error::MemberDataError;
use super::{Method, ZipEntry};

/// Compressed bytes read from the archive at a time.
const INPUT_BUFFER: usize = 64 << 10;

/// Reads one member's uncompressed bytes (from
/// [`ZipArchive::reader`](super::ZipArchive::reader)).
///
/// At the end of the data it checks that the member holds exactly its
/// declared size, that its CRC-32 is the declared one, and (deflate) that
/// the stream ends exactly at the end of the compressed data; a failure
/// is an [`io::Error`] carrying a [`MemberDataError`]. A caller that stops
/// reading early gets no such check.
#[derive(Debug)]
pub struct MemberReader<'a, R> {
    compressed: io::Take<&'a mut R>,
    entry: &'a ZipEntry,
    inflate: Option<Box<Inflate>>,
    crc: crc32fast::Hasher,
    produced: u64,
    done: bool,
}

struct Inflate {
    decompress: Decompress,
    input: Box<[u8]>,
    pos: usize,
    len: usize,
    ended: bool,
}

impl std::fmt::Debug for Inflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflate")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl<'a, R: Read> MemberReader<'a, R> {
    /// A reader of `entry`'s data, which `compressed` holds exactly.
    pub(super) fn new(compressed: io::Take<&'a mut R>, entry: &'a ZipEntry) -> Self {
        let inflate = (entry.method == Method::Deflate).then(|| {
            Box::new(Inflate {
                decompress: Decompress::new(false),
                input: vec![0; INPUT_BUFFER].into_boxed_slice(),
                pos: 0,
                len: 0,
                ended: false,
            })
        });
        Self {
            compressed,
            entry,
            inflate,
            crc: crc32fast::Hasher::new(),
            produced: 0,
            done: false,
        }
    }

    fn name(&self) -> String {
        self.entry.name.clone()
    }

    /// Inflates into `buf`; 0 at the end of the stream.
    fn inflate(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let name = self.name();
        let inflate = self.inflate.as_mut().expect("a deflate member");
        loop {
            if inflate.ended {
                return Ok(0);
            }
            if inflate.pos == inflate.len {
                inflate.len = self.compressed.read(&mut inflate.input)?;
                inflate.pos = 0;
            }
            let (before_in, before_out) = (
                inflate.decompress.total_in(),
                inflate.decompress.total_out(),
            );
            let status = inflate
                .decompress
                .decompress(
                    &inflate.input[inflate.pos..inflate.len],
                    buf,
                    FlushDecompress::None,
                )
                .map_err(|e| {
                    MemberDataError::Corrupt {
                        name: name.clone(),
                        reason: e.to_string(),
                    }
                    .into_io()
                })?;
            let consumed = usize::try_from(inflate.decompress.total_in() - before_in)
                .expect("at most the input buffer");
            let produced = usize::try_from(inflate.decompress.total_out() - before_out)
                .expect("at most the output buffer");
            inflate.pos += consumed;
            if status == Status::StreamEnd {
                inflate.ended = true;
            }
            if produced > 0 || inflate.ended {
                return Ok(produced);
            }
            if consumed == 0 && inflate.pos == inflate.len && self.compressed.limit() == 0 {
                return Err(MemberDataError::Truncated { name }.into_io());
            }
            if consumed == 0 && inflate.pos < inflate.len {
                return Err(MemberDataError::Corrupt {
                    name,
                    reason: "the decoder makes no progress".to_owned(),
                }
                .into_io());
            }
        }
    }

    /// The checks at the end of the data.
    fn finish(&mut self) -> io::Result<()> {
        let name = self.name();
        if let Some(inflate) = &self.inflate {
            if !inflate.ended {
                return Err(MemberDataError::Truncated { name }.into_io());
            }
            let extra = (inflate.len - inflate.pos) as u64 + self.compressed.limit();
            if extra > 0 {
                return Err(MemberDataError::AfterStream { name, extra }.into_io());
            }
        }
        if self.produced != self.entry.size {
            return Err(MemberDataError::Shorter {
                name,
                actual: self.produced,
                declared: self.entry.size,
            }
            .into_io());
        }
        let crc = self.crc.clone().finalize();
        if crc != self.entry.crc32 {
            return Err(MemberDataError::Crc {
                name,
                actual: crc,
                declared: self.entry.crc32,
            }
            .into_io());
        }
        Ok(())
    }
}

impl<R: Read> Read for MemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        let n = if self.inflate.is_some() {
            self.inflate(buf)?
        } else {
            self.compressed.read(buf)?
        };
        if n == 0 {
            self.finish()?;
            self.done = true;
            return Ok(0);
        }
        self.produced += n as u64;
        if self.produced > self.entry.size {
            return Err(MemberDataError::Longer {
                name: self.name(),
                declared: self.entry.size,
            }
            .into_io());
        }
        self.crc.update(&buf[..n]);
        Ok(n)
    }
}
