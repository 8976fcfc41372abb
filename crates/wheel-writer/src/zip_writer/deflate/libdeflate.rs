//! The libdeflate engine: each chunk is compressed whole, as one buffer.
//!
//! libdeflate has no streaming interface and no preset dictionary, so a
//! chunk starts with an empty window (a few hundred bytes lost per chunk,
//! see `docs/wheel-writer.md`) and its output is a complete stream whose
//! last block is marked final. For every chunk but a member's last, the
//! final block is found by walking the blocks ([`super::block_scan`]), its
//! `BFINAL` bit is cleared, and an empty stored block (zlib's sync marker)
//! byte-aligns the end, unless the block is stored and already ends on a
//! byte. The next chunk's blocks then follow on.
//!
//! One compressor per thread and level is kept: libdeflate sets up all its
//! state at the start of every call, so its output depends on the input
//! and level only (tested below).
//!
//! libdeflate stores inputs of up to `55 − 4 × level` bytes outright (five
//! bytes of header), where zlib codes them with the fixed Huffman code, two
//! or three bytes shorter; Python packages have many such files (empty
//! `__init__.py`, version stamps). Members under [`TINY`] bytes are
//! therefore also coded by zlib-rs (through flate2, which the sdist's gzip
//! uses too) and the shorter stream is kept.

use std::cell::RefCell;

use libdeflater::{CompressionLvl, Compressor};

use super::block_scan::final_block;
use super::runs::{self, Segment};

/// Members shorter than this get the shorter of libdeflate's and zlib-rs's
/// stream.
pub(crate) const TINY: usize = 64;

/// The levels libdeflate offers.
pub(crate) const LEVELS: std::ops::RangeInclusive<u32> = crate::options::Compression::LEVELS;

/// The largest output of compressing `size` bytes: libdeflate's bound
/// (stored blocks of at least 5 000 bytes, 5 bytes of header each) plus
/// the sync marker.
pub(crate) fn bound(size: u64) -> u64 {
    size + 5 * size.div_ceil(5000).max(1) + SYNC_MARKER_LEN
}

/// An empty stored block after a block that ends with free bits: its three
/// header bits, padding, `LEN` = 0 and `NLEN` = 0xFFFF.
const SYNC_MARKER: [u8; 4] = [0, 0, 0xFF, 0xFF];
/// At most one more byte when the header bits do not fit.
const SYNC_MARKER_LEN: u64 = 5;

thread_local! {
    static COMPRESSOR: RefCell<Option<(u32, Compressor)>> = const { RefCell::new(None) };
    /// libdeflate's output space, kept between calls: a fresh one per
    /// chunk cost a page fault and zeroing per 4 KiB.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Compresses `input` at `level` (1–12). With `last` the output is a
/// complete stream; otherwise it ends on a byte boundary without a final
/// block, ready to be followed by the next chunk. Long runs of one byte
/// are coded by [`super::runs`], the bytes between them by libdeflate.
pub(crate) fn deflate(level: u32, input: &[u8], last: bool) -> Result<Vec<u8>, String> {
    let segments = runs::segments(input);
    if let [Segment::Data(data)] = segments[..] {
        return deflate_data(level, data, last);
    }
    let mut out = Vec::new();
    let count = segments.len();
    for (index, segment) in segments.into_iter().enumerate() {
        let end = last && index + 1 == count;
        match segment {
            Segment::Data(data) => out.extend(deflate_data(level, data, end)?),
            Segment::Run { byte, len } => runs::encode_run(byte, len, end, &mut out),
        }
    }
    Ok(out)
}

/// [`deflate`] by libdeflate alone.
fn deflate_data(level: u32, input: &[u8], last: bool) -> Result<Vec<u8>, String> {
    let level = level.clamp(*LEVELS.start(), *LEVELS.end());
    let mut out = COMPRESSOR.with_borrow_mut(|slot| {
        let compressor = match slot {
            Some((cached, compressor)) if *cached == level => compressor,
            _ => {
                let lvl = CompressionLvl::new(i32::try_from(level).unwrap_or(i32::MAX))
                    .map_err(|_| format!("libdeflate has no level {level}"))?;
                &mut slot.insert((level, Compressor::new(lvl))).1
            }
        };
        let bound = compressor.deflate_compress_bound(input.len());
        SCRATCH.with_borrow_mut(|scratch| {
            if scratch.len() < bound {
                scratch.resize(bound, 0);
            }
            let len = compressor
                .deflate_compress(input, &mut scratch[..bound])
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(scratch[..len].to_vec())
        })
    })?;
    if !last {
        leave_open(&mut out)?;
    } else if input.len() < TINY {
        let zlib = zlib_deflate(level.min(9), input)?;
        if zlib.len() < out.len() {
            return Ok(zlib);
        }
    }
    Ok(out)
}

/// Turns a complete raw deflate stream into one that continues: clears
/// the final block's `BFINAL` and byte-aligns its end.
fn leave_open(stream: &mut Vec<u8>) -> Result<(), String> {
    let block = final_block(stream).map_err(|e| e.to_string())?;
    stream[(block.header_bit / 8) as usize] &= !(1 << (block.header_bit % 8));
    if block.stored {
        return Ok(());
    }
    let free_bits = (8 - block.end_bit % 8) % 8;
    if let Some(tail) = stream.last_mut() {
        // The padding after the block must read as zeros: the marker's
        // header (BFINAL 0, BTYPE 00) starts there.
        *tail &= 0xFF >> free_bits;
    }
    if free_bits < 3 {
        stream.push(0);
    }
    stream.extend_from_slice(&SYNC_MARKER);
    Ok(())
}

/// zlib-rs's whole stream of a [`TINY`] input: one call, since the
/// output of fewer than 64 bytes fits the buffer.
fn zlib_deflate(level: u32, input: &[u8]) -> Result<Vec<u8>, String> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    let mut compress = Compress::new(Compression::new(level), false);
    let mut out = Vec::with_capacity(2 * TINY + 64);
    match compress.compress_vec(input, &mut out, FlushCompress::Finish) {
        Ok(Status::StreamEnd) => Ok(out),
        Ok(status) => Err(format!(
            "zlib-rs did not end a {}-byte stream: {status:?}",
            input.len()
        )),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Machine-code-like bytes: repeats at varied distances and noise.
    fn sample(len: usize, seed: u32) -> Vec<u8> {
        let mut state = seed | 1;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            if state.is_multiple_of(3) && out.len() > 300 {
                let back = 1 + (state >> 8) as usize % 300;
                let start = out.len() - back;
                for i in 0..(3 + (state >> 20) as usize % 20) {
                    out.push(out[start + i]);
                }
            } else {
                out.push((state >> 24) as u8);
            }
        }
        out.truncate(len);
        out
    }

    fn inflate(stream: &[u8]) -> Vec<u8> {
        let mut back = Vec::new();
        flate2::read::DeflateDecoder::new(stream)
            .read_to_end(&mut back)
            .unwrap();
        back
    }

    fn chunked(level: u32, data: &[u8], chunk: usize) -> Vec<u8> {
        let pieces: Vec<&[u8]> = data.chunks(chunk).collect();
        let mut stream = Vec::new();
        for (i, piece) in pieces.iter().enumerate() {
            stream.extend(deflate(level, piece, i + 1 == pieces.len()).unwrap());
        }
        stream
    }

    #[test]
    fn chunks_concatenate_to_one_stream_at_every_level() {
        let data = sample(200_000, 7);
        for level in LEVELS {
            let stream = chunked(level, &data, 64 * 1024 + 17);
            assert_eq!(inflate(&stream), data, "level {level}");
        }
    }

    #[test]
    fn open_ends_cover_every_bit_alignment_and_stored_blocks() {
        // Varying lengths end the final block at every bit offset; noise
        // makes libdeflate store the block instead.
        let mut offsets = std::collections::HashSet::new();
        let mut stored = 0;
        for len in 1..200 {
            let mut data = sample(len * 37, len as u32);
            if len % 5 == 0 {
                for b in &mut data {
                    *b = b.wrapping_mul(97);
                }
            }
            let whole = deflate(6, &data, true).unwrap();
            let block = final_block(&whole).unwrap();
            offsets.insert(block.end_bit % 8);
            stored += usize::from(block.stored);
            let mut stream = deflate(6, &data, false).unwrap();
            stream.extend(deflate(6, b"tail", true).unwrap());
            let mut want = data.clone();
            want.extend_from_slice(b"tail");
            assert_eq!(inflate(&stream), want, "length {}", data.len());
        }
        assert_eq!(offsets.len(), 8, "every alignment was exercised");
        assert!(stored > 0, "a stored final block was exercised");
    }

    #[test]
    fn output_does_not_depend_on_what_the_compressor_did_before() {
        let a = sample(300_000, 1);
        let b = sample(300_000, 2);
        for level in LEVELS {
            let fresh = std::thread::spawn(move || deflate(level, &sample(300_000, 2), true))
                .join()
                .unwrap()
                .unwrap();
            deflate(level, &a, false).unwrap();
            assert_eq!(deflate(level, &b, true).unwrap(), fresh, "level {level}");
        }
    }

    #[test]
    fn tiny_members_are_as_short_as_zlib_makes_them() {
        // libdeflate stores these (5 bytes of header); zlib's fixed code is
        // shorter.
        assert_eq!(deflate(6, b"", true).unwrap(), [3, 0]);
        let text = b"kpack archive for gfx1100\n";
        let stream = deflate(6, text, true).unwrap();
        assert_eq!(stream.len(), 28);
        assert_eq!(inflate(&stream), text);
        for len in 0..TINY + 2 {
            let data = sample(len, len as u32 + 1);
            let stream = deflate(6, &data, true).unwrap();
            assert_eq!(inflate(&stream), data);
            assert!(stream.len() <= data.len() + 5, "{len}: {}", stream.len());
        }
    }

    #[test]
    fn empty_input_is_a_valid_stream() {
        let stream = deflate(6, &[], true).unwrap();
        assert_eq!(inflate(&stream), b"");
        let mut open = deflate(6, &[], false).unwrap();
        open.extend(deflate(6, b"x", true).unwrap());
        assert_eq!(inflate(&open), b"x");
    }

    #[test]
    fn the_bound_holds_for_incompressible_data() {
        let mut state = 5u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        for level in LEVELS {
            let out = deflate(level, &noise, false).unwrap();
            assert!(out.len() as u64 <= bound(noise.len() as u64));
        }
    }
}
