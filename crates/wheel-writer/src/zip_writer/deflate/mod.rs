//! Raw deflate of one member or one chunk of a member, by the chosen
//! engine.
//!
//! A large member is cut into fixed-size chunks compressed independently
//! on the pool (pigz's method). Every chunk but the last leaves the stream
//! open (no final block) and ends on a byte boundary, so the chunks
//! concatenated in order are one valid deflate stream. How each engine
//! gets there is told in its module.

mod block_scan;
mod libdeflate;
mod runs;
mod zlib_rs;

use crate::options::{Compression, DeflateEngine, WriteOptions};

use super::format::{METHOD_DEFLATE, METHOD_STORED};

/// The deflate window: how much of the previous chunk primes the next,
/// for an engine that can be primed.
pub(crate) const WINDOW: usize = 32 * 1024;

/// At most this many bytes of a chunk outside its long runs leave it
/// cheap to encode ([`Codec::is_cheap`]).
const CHEAP_DATA: usize = 64 * 1024;

/// Everything that decides the compressed bytes of a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Codec {
    pub(crate) method: u16,
    pub(crate) engine: DeflateEngine,
    /// Within the engine's levels (0 when stored).
    pub(crate) level: u32,
    /// Members larger than this are cut into chunks of this size.
    pub(crate) chunk: u64,
}

impl Codec {
    pub(crate) fn new(options: &WriteOptions) -> Self {
        let engine = options.deflate_engine();
        let chunk = options.chunk_size();
        match options.compression() {
            Compression::Deflate { level } => {
                let levels = engine.levels();
                Self {
                    method: METHOD_DEFLATE,
                    engine,
                    level: level.clamp(*levels.start(), *levels.end()),
                    chunk,
                }
            }
            Compression::Stored => Self {
                method: METHOD_STORED,
                engine,
                level: 0,
                chunk,
            },
        }
    }

    /// Whether a chunk continues from the previous chunk's last
    /// [`WINDOW`] bytes (the producer keeps them only then).
    pub(crate) fn primes(self) -> bool {
        self.method == METHOD_DEFLATE && self.engine == DeflateEngine::ZlibRs
    }

    /// Encodes one chunk (or a whole member): `dictionary` is the end of
    /// the previous chunk when [`Codec::primes`], `last` ends the stream.
    pub(crate) fn encode(
        self,
        dictionary: &[u8],
        input: &[u8],
        last: bool,
    ) -> Result<Vec<u8>, String> {
        if self.method != METHOD_DEFLATE {
            return Ok(input.to_vec());
        }
        match self.engine {
            DeflateEngine::Libdeflate => libdeflate::deflate(self.level, input, last),
            DeflateEngine::ZlibRs => zlib_rs::deflate(self.level, dictionary, input, last),
        }
    }

    /// Whether encoding `input` costs little next to reading and hashing
    /// it: stored, or with libdeflate mostly long runs of one byte (the
    /// run coder writes them without a search). Such a chunk is encoded
    /// by the thread that read it instead of queueing for the pool.
    pub(crate) fn is_cheap(self, input: &[u8]) -> bool {
        if self.method != METHOD_DEFLATE {
            return true;
        }
        self.engine == DeflateEngine::Libdeflate && runs::data_len(input) <= CHEAP_DATA
    }

    /// The largest the encoded member of `size` bytes can be, whatever
    /// its content: decides zip64 headers before compressing.
    pub(crate) fn worst_case(self, size: u64) -> u64 {
        if self.method != METHOD_DEFLATE {
            return size;
        }
        let chunks = size.div_ceil(self.chunk).max(1);
        match self.engine {
            // Per chunk: libdeflate's bound (rounding up to one more block)
            // and the sync marker.
            DeflateEngine::Libdeflate => libdeflate::bound(size) + chunks * 10,
            // zlib's deflateBound plus a sync marker and block header per chunk.
            DeflateEngine::ZlibRs => size + (size >> 12) + (size >> 14) + 16 * chunks + 64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_covers_every_engine() {
        for engine in [DeflateEngine::Libdeflate, DeflateEngine::ZlibRs] {
            let codec = Codec::new(&WriteOptions::default().with_deflate_engine(engine));
            assert!(codec.worst_case(0) > 0);
            assert!(codec.worst_case(1 << 30) > 1 << 30);
            assert!(codec.worst_case(4_000_000_000) < 0xFFFF_FFFF);
            assert!(codec.worst_case(0xFFFF_FFFF - 1_000_000) > 0xFFFF_FFFF);
        }
        let stored = Codec::new(&WriteOptions::default().with_compression(Compression::Stored));
        assert_eq!(stored.worst_case(1234), 1234);
    }

    #[test]
    fn levels_are_clamped_to_the_engine() {
        let options = |engine, level| {
            WriteOptions::default()
                .with_deflate_engine(engine)
                .with_compression(Compression::Deflate { level })
        };
        assert_eq!(
            Codec::new(&options(DeflateEngine::Libdeflate, 12)).level,
            12
        );
        assert_eq!(
            Codec::new(&options(DeflateEngine::Libdeflate, 40)).level,
            12
        );
        assert_eq!(Codec::new(&options(DeflateEngine::ZlibRs, 12)).level, 9);
        assert_eq!(Codec::new(&options(DeflateEngine::ZlibRs, 0)).level, 1);
    }
}
