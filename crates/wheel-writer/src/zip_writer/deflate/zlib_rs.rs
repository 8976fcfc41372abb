//! The zlib-rs engine (through flate2): each chunk is primed with the
//! previous chunk's last 32 KiB (`set_dictionary`) and ends with a sync
//! flush (the last with `Finish`), so the ratio stays that of one stream.
//! A fresh compressor per call keeps the output a pure function of the
//! input (zlib-rs does not promise identical output after `deflateReset`).

use flate2::{Compress, FlushCompress, Status};

/// Compresses `input` at `level`, primed with `dictionary`; `last` ends the
/// stream, otherwise it ends on a byte boundary with a sync flush.
pub(crate) fn deflate(
    level: u32,
    dictionary: &[u8],
    input: &[u8],
    last: bool,
) -> Result<Vec<u8>, String> {
    let mut compress = Compress::new(flate2::Compression::new(level), false);
    if !dictionary.is_empty() {
        compress
            .set_dictionary(dictionary)
            .map_err(|e| e.to_string())?;
    }
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    let mut out = Vec::with_capacity(input.len() / 2 + 1024);
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(64 * 1024));
        }
        let consumed = usize::try_from(compress.total_in()).unwrap_or(usize::MAX);
        let status = compress
            .compress_vec(&input[consumed..], &mut out, flush)
            .map_err(|e| e.to_string())?;
        let all_in = compress.total_in() == input.len() as u64;
        match status {
            Status::StreamEnd => break,
            Status::Ok | Status::BufError if !last && all_in && out.len() < out.capacity() => {
                break;
            }
            Status::Ok | Status::BufError => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::WINDOW;
    use super::*;
    use std::io::Read;

    fn sample(len: usize) -> Vec<u8> {
        let mut state = 0x1234_5678_u32;
        (0..len)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                if i % 7 < 4 {
                    b"abcdefgh"[i % 8]
                } else {
                    state as u8 % 16
                }
            })
            .collect()
    }

    #[test]
    fn chunks_concatenate_to_one_stream() {
        let data = sample(300_000);
        let mut stream = Vec::new();
        let chunks: Vec<&[u8]> = data.chunks(100_000).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let dict = if i == 0 {
                &[][..]
            } else {
                &chunks[i - 1][chunks[i - 1].len() - WINDOW..]
            };
            stream.extend(deflate(6, dict, chunk, i + 1 == chunks.len()).unwrap());
        }
        let mut back = Vec::new();
        flate2::read::DeflateDecoder::new(&stream[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, data);
        // Priming keeps the chunked stream close to one whole stream.
        let whole = deflate(6, &[], &data, true).unwrap();
        assert!(stream.len() <= whole.len() + whole.len() / 100 + 64);
    }

    #[test]
    fn empty_input_is_a_valid_stream() {
        assert_eq!(deflate(6, &[], &[], true).unwrap(), [3, 0]);
    }
}
