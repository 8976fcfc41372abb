//! Raw deflate of one member or one chunk of a member, by libdeflate.
//!
//! A large member is cut into fixed-size chunks compressed independently
//! on the pool (pigz's method). Every chunk but the last leaves the stream
//! open (no final block) and ends on a byte boundary, so the chunks
//! concatenated in order are one valid deflate stream (how, in
//! [`libdeflate`]).

mod block_scan;
mod libdeflate;
mod runs;

use crate::options::{Compression, WriteOptions};

use super::format::{METHOD_DEFLATE, METHOD_STORED};

/// At most this many bytes of a chunk outside its long runs leave it
/// cheap to encode ([`Codec::is_cheap`]).
const CHEAP_DATA: usize = 64 * 1024;

/// Everything that decides the compressed bytes of a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Codec {
    pub(crate) method: u16,
    /// Within libdeflate's levels (0 when stored).
    pub(crate) level: u32,
    /// Members larger than this are cut into chunks of this size.
    pub(crate) chunk: u64,
}

impl Codec {
    pub(crate) fn new(options: &WriteOptions) -> Self {
        let chunk = options.chunk_size();
        match options.compression() {
            Compression::Deflate { level } => Self {
                method: METHOD_DEFLATE,
                level: level.clamp(*libdeflate::LEVELS.start(), *libdeflate::LEVELS.end()),
                chunk,
            },
            Compression::Stored => Self {
                method: METHOD_STORED,
                level: 0,
                chunk,
            },
        }
    }

    /// Encodes one chunk (or a whole member); `last` ends the stream.
    pub(crate) fn encode(self, input: &[u8], last: bool) -> Result<Vec<u8>, String> {
        if self.method != METHOD_DEFLATE {
            return Ok(input.to_vec());
        }
        libdeflate::deflate(self.level, input, last)
    }

    /// Whether encoding `input` costs little next to reading and hashing
    /// it: stored, or mostly long runs of one byte (the run coder writes
    /// them without a search). Such a chunk is encoded
    /// by the thread that read it instead of queueing for the pool.
    pub(crate) fn is_cheap(self, input: &[u8]) -> bool {
        if self.method != METHOD_DEFLATE {
            return true;
        }
        runs::data_len(input) <= CHEAP_DATA
    }

    /// The largest the encoded member of `size` bytes can be, whatever
    /// its content: decides zip64 headers before compressing.
    pub(crate) fn worst_case(self, size: u64) -> u64 {
        if self.method != METHOD_DEFLATE {
            return size;
        }
        let chunks = size.div_ceil(self.chunk).max(1);
        // Per chunk: libdeflate's bound (rounding up to one more block) and
        // the sync marker.
        libdeflate::bound(size) + chunks * 10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_covers_any_content() {
        let codec = Codec::new(&WriteOptions::default());
        assert!(codec.worst_case(0) > 0);
        assert!(codec.worst_case(1 << 30) > 1 << 30);
        assert!(codec.worst_case(4_000_000_000) < 0xFFFF_FFFF);
        assert!(codec.worst_case(0xFFFF_FFFF - 1_000_000) > 0xFFFF_FFFF);
        let stored = Codec::new(&WriteOptions::default().with_compression(Compression::Stored));
        assert_eq!(stored.worst_case(1234), 1234);
    }

    #[test]
    fn levels_are_clamped_to_libdeflates() {
        let level = |level| {
            Codec::new(&WriteOptions::default().with_compression(Compression::Deflate { level }))
                .level
        };
        assert_eq!(level(12), 12);
        assert_eq!(level(40), 12);
        assert_eq!(level(0), 1);
    }
}
