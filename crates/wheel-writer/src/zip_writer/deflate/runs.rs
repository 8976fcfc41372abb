//! Long runs of one byte value, coded without a match search.
//!
//! Host libraries of a kpack build keep their device code's place as
//! zeros (a gigabyte of them in one wheel), and ELF files pad sections
//! with zeros. A general compressor spends as long on such a run as on
//! machine code, to find the one match it can use over and over: the
//! previous byte, 258 bytes long. A chunk is therefore cut at every run of
//! at least [`MIN_RUN`] bytes; the bytes between runs go to the engine as
//! before, and each run becomes one block written here directly: the byte
//! as a literal, then length-258 matches at distance 1 with one-bit codes,
//! so the block's body is zero bits and costs about 2 bits per 258 bytes
//! (libdeflate's level 6 comes to about the same size, several hundred
//! times slower). What is cut depends on the chunk's bytes only, so the
//! output stays the same for any number of threads.

/// Runs are looked for in aligned pieces of this size: a piece is part of
/// a run when all its bytes are equal.
const PIECE: usize = 4096;

/// The shortest run cut out of a chunk. Each cut costs the engine its
/// context at the cut (a few hundred bytes) and adds a block header and a
/// sync marker (about 40 bytes), which only long runs repay.
pub(crate) const MIN_RUN: usize = 128 * 1024;

/// Part of a chunk: bytes for the engine, or a run coded here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Segment<'a> {
    /// Bytes for the engine.
    Data(&'a [u8]),
    /// `len` copies of `byte`.
    Run { byte: u8, len: usize },
}

/// `input` cut at its runs of at least [`MIN_RUN`] bytes, in order; a
/// single `Data` segment when it has none.
pub(crate) fn segments(input: &[u8]) -> Vec<Segment<'_>> {
    if input.len() < MIN_RUN {
        return vec![Segment::Data(input)];
    }
    let mut runs: Vec<(usize, usize, u8)> = Vec::new();
    let mut current: Option<(usize, usize, u8)> = None;
    let close = |run: Option<(usize, usize, u8)>, runs: &mut Vec<_>| {
        if let Some((start, end, byte)) = run
            && end - start >= MIN_RUN / 2
        {
            runs.push((start, end, byte));
        }
    };
    for (index, piece) in input.chunks_exact(PIECE).enumerate() {
        let start = index * PIECE;
        match (constant(piece), current) {
            (Some(byte), Some((from, _, run_byte))) if byte == run_byte => {
                current = Some((from, start + PIECE, byte));
            }
            (Some(byte), previous) => {
                close(previous, &mut runs);
                current = Some((start, start + PIECE, byte));
            }
            (None, previous) => {
                close(previous, &mut runs);
                current = None;
            }
        }
    }
    close(current, &mut runs);

    let mut out = Vec::new();
    let mut done = 0;
    for (start, end, byte) in runs {
        // Widen to the bytes around the aligned pieces.
        let mut start = start;
        while start > done && input[start - 1] == byte {
            start -= 1;
        }
        let mut end = end;
        while end < input.len() && input[end] == byte {
            end += 1;
        }
        if end - start < MIN_RUN {
            continue;
        }
        if start > done {
            out.push(Segment::Data(&input[done..start]));
        }
        out.push(Segment::Run {
            byte,
            len: end - start,
        });
        done = end;
    }
    if done < input.len() || out.is_empty() {
        out.push(Segment::Data(&input[done..]));
    }
    out
}

/// The bytes of `input` outside its runs of at least [`MIN_RUN`] bytes:
/// what [`segments`] leaves to the engine.
pub(crate) fn data_len(input: &[u8]) -> usize {
    segments(input)
        .iter()
        .map(|segment| match segment {
            Segment::Data(data) => data.len(),
            Segment::Run { .. } => 0,
        })
        .sum()
}

/// The byte every byte of `piece` is, if they are all equal.
fn constant(piece: &[u8]) -> Option<u8> {
    let first = *piece.first()?;
    // Whole 64-byte groups at a time, so the comparison is vectorised.
    let mut groups = piece.chunks_exact(64);
    let equal = groups
        .by_ref()
        .all(|group| group.iter().fold(0u8, |acc, &b| acc | (b ^ first)) == 0);
    (equal && groups.remainder().iter().all(|&b| b == first)).then_some(first)
}

/// Deflate bits, least significant first (RFC 1951, 3.1.1).
pub(super) struct Bits {
    pub(super) out: Vec<u8>,
    /// Bits used in the last byte of `out` (0 when it is full or empty).
    used: u32,
}

impl Bits {
    pub(super) fn new(out: Vec<u8>) -> Self {
        Self { out, used: 0 }
    }

    /// Bits written so far.
    #[cfg(test)]
    pub(super) fn len(&self) -> u64 {
        self.out.len() as u64 * 8 - u64::from((8 - self.used) % 8)
    }

    pub(super) fn put(&mut self, value: u32, count: u32) {
        for bit in 0..count {
            if self.used == 0 {
                self.out.push(0);
            }
            let last = self.out.last_mut().expect("a byte was pushed");
            *last |= u8::from(value >> bit & 1 == 1) << self.used;
            self.used = (self.used + 1) % 8;
        }
    }

    /// A Huffman code: its bits go out most significant first.
    pub(super) fn code(&mut self, (code, len): (u32, u32)) {
        for bit in (0..len).rev() {
            self.put(code >> bit & 1, 1);
        }
    }

    /// `count` zero bits, whole bytes at a time.
    fn zeros(&mut self, count: u64) {
        let mut left = count;
        while left > 0 && self.used != 0 {
            self.put(0, 1);
            left -= 1;
        }
        let bytes = usize::try_from(left / 8).expect("a run's bits fit in memory");
        self.out.resize(self.out.len() + bytes, 0);
        for _ in 0..left % 8 {
            self.put(0, 1);
        }
    }

    /// Pads with zero bits to the next byte.
    fn align(&mut self) {
        self.used = 0;
    }
}

/// Canonical Huffman codes (RFC 1951, 3.2.2) of `lengths`: (code, length)
/// per symbol, length 0 for unused symbols.
pub(super) fn canonical(lengths: &[u32]) -> Vec<(u32, u32)> {
    let max = lengths.iter().copied().max().unwrap_or(0);
    let mut count = vec![0u32; max as usize + 1];
    for &len in lengths.iter().filter(|&&l| l > 0) {
        count[len as usize] += 1;
    }
    let mut next = vec![0u32; max as usize + 1];
    let mut code = 0u32;
    for bits in 1..=max as usize {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    lengths
        .iter()
        .map(|&len| {
            if len == 0 {
                (0, 0)
            } else {
                let c = next[len as usize];
                next[len as usize] += 1;
                (c, len)
            }
        })
        .collect()
}

/// Lengths of a complete prefix code over `count` (≥ 2) symbols, in the
/// given order: the first ones a bit shorter when `count` is not a power
/// of two.
fn complete_lengths(count: usize) -> Vec<u32> {
    let long = count.next_power_of_two().trailing_zeros();
    let short = (1usize << long) - count;
    (0..count)
        .map(|i| if i < short { long - 1 } else { long })
        .collect()
}

/// Length symbols 257..=285: the shortest length each one codes and its
/// extra bits (RFC 1951, 3.2.5).
const LENGTH_BASE: [u32; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u32; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];

/// The symbol, extra bits and their count of a match length (3..=258).
fn length_symbol(len: u32) -> (usize, u32, u32) {
    let index = LENGTH_BASE
        .iter()
        .rposition(|&base| base <= len)
        .expect("lengths start at 3");
    // 258 has its own symbol; 227..=257 share 284.
    let index = if len < 258 { index.min(27) } else { 28 };
    (257 + index, len - LENGTH_BASE[index], LENGTH_EXTRA[index])
}

/// The order code-length code lengths are sent in (RFC 1951, 3.2.7).
const CODE_LENGTH_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Appends one dynamic-Huffman block holding `len` (≥ 1) copies of
/// `byte`. With `last` it is the stream's final block, padded to a byte;
/// otherwise it is followed by an empty stored block so the stream ends on
/// a byte boundary, open for the next chunk.
pub(crate) fn encode_run(byte: u8, len: usize, last: bool, out: &mut Vec<u8>) {
    assert!(len >= 1, "a run has at least one byte");
    let matches = ((len - 1) / 258) as u64;
    let rest = u32::try_from((len - 1) % 258).expect("below 258");
    let tail = (rest >= 3).then(|| length_symbol(rest));

    // Literal/length code: 285 (length 258) the shortest, so a match is
    // one zero bit; then the byte, end of block and the tail's length.
    let mut lit_len = vec![0u32; 286];
    lit_len[285] = 1;
    lit_len[usize::from(byte)] = 2;
    if let Some((symbol, _, _)) = tail {
        lit_len[256] = 3;
        lit_len[symbol] = 3;
    } else {
        lit_len[256] = 2;
    }
    // Distance code: distance 1 (code 0) and an unused second code, both
    // one bit, so the code is complete for every decoder.
    let dist = [1u32, 1];

    // The code lengths, run-length coded with 17 and 18 for zeros.
    let all: Vec<u32> = lit_len.iter().chain(&dist).copied().collect();
    let mut coded: Vec<(usize, u32, u32)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        if all[i] != 0 {
            coded.push((all[i] as usize, 0, 0));
            i += 1;
            continue;
        }
        let zeros = all[i..].iter().take_while(|&&l| l == 0).count();
        let mut left = zeros;
        while left >= 11 {
            let n = left.min(138);
            coded.push((18, u32::try_from(n - 11).expect("≤ 127"), 7));
            left -= n;
        }
        if left >= 3 {
            coded.push((17, u32::try_from(left - 3).expect("≤ 7"), 3));
            left = 0;
        }
        coded.extend(std::iter::repeat_n((0, 0, 0), left));
        i += zeros;
    }
    let mut used: Vec<usize> = coded.iter().map(|&(s, _, _)| s).collect();
    used.sort_unstable();
    used.dedup();
    let mut cl_lengths = [0u32; 19];
    for (symbol, len) in used.iter().zip(complete_lengths(used.len())) {
        cl_lengths[*symbol] = len;
    }
    let cl_codes = canonical(&cl_lengths);
    let sent = CODE_LENGTH_ORDER
        .iter()
        .rposition(|&s| cl_lengths[s] != 0)
        .map_or(4, |p| (p + 1).max(4));
    let lit_codes = canonical(&lit_len);
    let dist_codes = canonical(&dist);

    let mut bits = Bits::new(std::mem::take(out));
    bits.put(u32::from(last), 1);
    bits.put(2, 2); // dynamic Huffman
    bits.put(286 - 257, 5);
    bits.put(2 - 1, 5);
    bits.put(u32::try_from(sent - 4).expect("≤ 15"), 4);
    for &symbol in &CODE_LENGTH_ORDER[..sent] {
        bits.put(cl_lengths[symbol], 3);
    }
    for &(symbol, extra, extra_bits) in &coded {
        bits.code(cl_codes[symbol]);
        bits.put(extra, extra_bits);
    }
    bits.code(lit_codes[usize::from(byte)]);
    // Each match: symbol 285 (code 0, no extra bits), distance code 0.
    debug_assert_eq!(lit_codes[285], (0, 1));
    debug_assert_eq!(dist_codes[0], (0, 1));
    bits.zeros(matches * 2);
    match tail {
        Some((symbol, extra, extra_bits)) => {
            bits.code(lit_codes[symbol]);
            bits.put(extra, extra_bits);
            bits.code(dist_codes[0]);
        }
        None => {
            for _ in 0..rest {
                bits.code(lit_codes[usize::from(byte)]);
            }
        }
    }
    bits.code(lit_codes[256]);
    if !last {
        // An empty stored block: BFINAL 0, BTYPE 00, padding, LEN 0, NLEN.
        bits.put(0, 3);
        bits.align();
        bits.out.extend_from_slice(&[0, 0, 0xFF, 0xFF]);
    }
    bits.align();
    *out = bits.out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn inflate(stream: &[u8]) -> Vec<u8> {
        let mut back = Vec::new();
        flate2::read::DeflateDecoder::new(stream)
            .read_to_end(&mut back)
            .unwrap();
        back
    }

    #[test]
    fn runs_of_every_tail_decode() {
        // Tails of 0, 1, 2, 3 and up to 257 bytes after the 258-byte matches.
        for len in (1..1200).chain([MIN_RUN, MIN_RUN + 1, 4 << 20, (4 << 20) + 255]) {
            for byte in [0u8, 0xFF, b'a'] {
                let mut stream = Vec::new();
                encode_run(byte, len, true, &mut stream);
                assert_eq!(inflate(&stream), vec![byte; len], "{len} x {byte}");
                // Open: another run follows in the same stream.
                let mut open = Vec::new();
                encode_run(byte, len, false, &mut open);
                encode_run(7, 3, true, &mut open);
                let mut want = vec![byte; len];
                want.extend([7, 7, 7]);
                assert_eq!(inflate(&open), want, "{len} x {byte}, open");
            }
        }
    }

    #[test]
    fn a_run_costs_two_bits_per_258_bytes() {
        let mut stream = Vec::new();
        encode_run(0, 4 << 20, true, &mut stream);
        assert!(stream.len() < (4 << 20) / 258 / 4 + 64, "{}", stream.len());
    }

    #[test]
    fn only_long_runs_are_cut_out() {
        let mut data = vec![1u8; 1000];
        data.extend(vec![0u8; MIN_RUN + 5000]);
        data.extend(b"middle");
        data.extend(vec![0u8; MIN_RUN - 1]);
        data.extend(vec![9u8; 3 * MIN_RUN]);
        let cut = segments(&data);
        assert_eq!(
            cut,
            [
                Segment::Data(&data[..1000]),
                Segment::Run {
                    byte: 0,
                    len: MIN_RUN + 5000
                },
                Segment::Data(&data[1000 + MIN_RUN + 5000..1000 + 2 * MIN_RUN + 5005]),
                Segment::Run {
                    byte: 9,
                    len: 3 * MIN_RUN
                },
            ]
        );
        assert_eq!(segments(b"short"), [Segment::Data(b"short")]);
        assert_eq!(segments(b""), [Segment::Data(b"")]);
        let zeros = vec![0u8; MIN_RUN];
        assert_eq!(
            segments(&zeros),
            [Segment::Run {
                byte: 0,
                len: MIN_RUN
            }]
        );
    }

    #[test]
    fn canonical_codes_follow_the_rfc_example() {
        // RFC 1951, 3.2.2: lengths (3, 3, 3, 3, 3, 2, 4, 4).
        let codes = canonical(&[3, 3, 3, 3, 3, 2, 4, 4]);
        let want = [
            (0b010, 3),
            (0b011, 3),
            (0b100, 3),
            (0b101, 3),
            (0b110, 3),
            (0b00, 2),
            (0b1110, 4),
            (0b1111, 4),
        ];
        assert_eq!(codes, want);
        for count in 2..=19 {
            let kraft: f64 = complete_lengths(count)
                .iter()
                .map(|&l| 0.5f64.powi(l.cast_signed()))
                .sum();
            assert!((kraft - 1.0).abs() < 1e-12, "{count}");
        }
    }
}
