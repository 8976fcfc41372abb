//! The three encodings of the devel tar and their file names.

use std::io::{self, BufRead, Read, Write};

/// Bytes read from the tar file at a time.
pub(crate) const READ_BUFFER: usize = 1 << 20;

/// The most memory an `_devel.tar.xz` may ask for (its dictionary):
/// presets up to `xz -9` need 65 MiB.
const XZ_MEMORY_LIMIT: u64 = 512 << 20;

/// How the devel tar is compressed (docs/behaviour.md#devel-tar). Each has a fixed file name
/// inside `rocm_sdk_devel/`, so the unpacker knows the codec from the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TarCodec {
    /// `_devel.tar`, the reference default.
    None,
    /// `_devel.tar.xz` at an xz preset (0–9).
    Xz {
        /// xz preset level.
        preset: u32,
    },
    /// `_devel.tar.zst` at a zstd level (1–22): fast to unpack.
    Zstd {
        /// zstd compression level.
        level: i32,
    },
}

impl TarCodec {
    /// Every file name the unpacker looks for, in the order it looks.
    pub const FILE_NAMES: [&'static str; 3] = ["_devel.tar", "_devel.tar.zst", "_devel.tar.xz"];

    /// The file name of a tar in this encoding, e.g. `_devel.tar.zst`.
    pub fn file_name(self) -> &'static str {
        match self {
            TarCodec::None => Self::FILE_NAMES[0],
            TarCodec::Zstd { .. } => Self::FILE_NAMES[1],
            TarCodec::Xz { .. } => Self::FILE_NAMES[2],
        }
    }

    /// The encoding of a file named like [`TarCodec::file_name`] (levels
    /// do not matter for reading and are set to defaults).
    pub fn from_file_name(name: &str) -> Option<Self> {
        match name {
            "_devel.tar" => Some(TarCodec::None),
            "_devel.tar.zst" => Some(TarCodec::Zstd { level: 19 }),
            "_devel.tar.xz" => Some(TarCodec::Xz { preset: 6 }),
            _ => None,
        }
    }

    /// The plain tar stream of the encoded bytes `input` (an xz stream
    /// within a bounded dictionary): how the install and `verify` read a
    /// devel tarball.
    pub fn decoder<'r>(
        self,
        input: impl BufRead + Send + 'r,
    ) -> io::Result<Box<dyn Read + Send + 'r>> {
        Ok(match self {
            TarCodec::None => Box::new(input),
            TarCodec::Xz { .. } => {
                // The .xz format only (the legacy .lzma one can ask for a
                // 4 GiB dictionary), every concatenated stream, bounded.
                let stream = liblzma::stream::Stream::new_stream_decoder(
                    XZ_MEMORY_LIMIT,
                    liblzma::stream::CONCATENATED,
                )?;
                Box::new(liblzma::bufread::XzDecoder::new_stream(input, stream))
            }
            TarCodec::Zstd { .. } => Box::new(zstd::Decoder::with_buffer(input)?),
        })
    }

    /// Wraps `out` so the plain tar stream written to it is encoded.
    pub(crate) fn encoder<W: Write>(self, out: W) -> io::Result<Encoder<W>> {
        Ok(match self {
            TarCodec::None => Encoder::Plain(out),
            TarCodec::Xz { preset } => {
                Encoder::Xz(liblzma::write::XzEncoder::new(out, preset.min(9)))
            }
            TarCodec::Zstd { level } => {
                let mut enc = zstd::Encoder::new(out, level)?;
                // Single-threaded and with a checksum: the same bytes on every
                // machine, and corruption is detected on unpack.
                enc.include_checksum(true)?;
                Encoder::Zstd(enc)
            }
        })
    }
}

/// A writer that encodes as [`TarCodec`] says.
pub(crate) enum Encoder<W: Write> {
    Plain(W),
    Xz(liblzma::write::XzEncoder<W>),
    Zstd(zstd::Encoder<'static, W>),
}

impl<W: Write> Encoder<W> {
    /// Flushes the codec's trailer and returns the inner writer.
    pub(crate) fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Plain(w) => Ok(w),
            Encoder::Xz(e) => e.finish(),
            Encoder::Zstd(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Xz(e) => e.write(buf),
            Encoder::Zstd(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Xz(e) => e.flush(),
            Encoder::Zstd(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn compress(data: &[u8], stream: liblzma::stream::Stream) -> Vec<u8> {
        let mut encoder = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    /// Reads `bytes` as an `_devel.tar.xz`.
    fn read_xz(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        TarCodec::Xz { preset: 6 }
            .decoder(bytes)?
            .read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn xz_reads_only_xz_within_a_memory_limit() {
        let data = b"a tar, as far as the codec knows".repeat(64);
        let xz = compress(
            &data,
            liblzma::stream::Stream::new_easy_encoder(0, liblzma::stream::Check::Crc64).unwrap(),
        );
        assert_eq!(read_xz(&xz).unwrap(), data);
        // The legacy .lzma format: no check, and a header that alone
        // decides how much memory the reader allocates (up to 4 GiB).
        let options = liblzma::stream::LzmaOptions::new_preset(0).unwrap();
        let alone = compress(
            &data,
            liblzma::stream::Stream::new_lzma_encoder(&options).unwrap(),
        );
        assert!(read_xz(&alone).is_err());
        // An .xz block header asking for a 1.5 GiB dictionary (its CRC-32
        // fixed up), past the limit.
        let mut big = xz.clone();
        let size = (usize::from(big[12]) + 1) * 4;
        assert_eq!((big[13], big[14], big[15]), (0, 0x21, 1));
        big[16] = 40;
        let mut crc = !0u32;
        for &byte in &big[12..12 + size - 4] {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        big[12 + size - 4..12 + size].copy_from_slice(&(!crc).to_le_bytes());
        let err = read_xz(&big).unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
    }
}
