//! Walks the blocks of a raw deflate stream (RFC 1951) without producing
//! its data, to find where the final block starts and where it ends.
//!
//! A whole-buffer compressor marks the last block of its output final, so
//! its output cannot be followed by more blocks. Knowing the bit where that
//! block's header sits (to clear `BFINAL`) and the bit where the block ends
//! (to byte-align with an empty stored block) turns the output into a
//! stream that the next chunk may continue. Finding them means decoding
//! every Huffman symbol; matches are skipped, never copied, so the walk
//! costs a fraction of an inflate.

use std::fmt;

/// Where the final block of a stream lies, in bits from the first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FinalBlock {
    /// The bit holding the final block's `BFINAL` flag.
    pub(crate) header_bit: u64,
    /// The first bit after the final block.
    pub(crate) end_bit: u64,
    /// Whether the final block is stored (it then ends on a byte boundary).
    pub(crate) stored: bool,
}

/// Why a stream could not be walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// The stream ends inside a block.
    Truncated,
    /// Block type 3, or a length or distance symbol outside the alphabet.
    InvalidSymbol,
    /// A Huffman code with more codes than its lengths allow, or none.
    InvalidCode,
    /// A stored block whose length and its complement disagree.
    StoredLength,
    /// Bytes follow the final block.
    TrailingData,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Truncated => "the deflate stream ends inside a block",
            Self::InvalidSymbol => "the deflate stream holds an invalid block type or symbol",
            Self::InvalidCode => "the deflate stream holds an invalid Huffman code",
            Self::StoredLength => "a stored deflate block has an inconsistent length",
            Self::TrailingData => "bytes follow the final deflate block",
        })
    }
}

impl std::error::Error for ScanError {}

/// Base lengths are not needed to skip a match, only the extra bits.
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DISTANCE_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// The order in which code length code lengths are sent.
const CODE_LENGTH_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
const END_OF_BLOCK: usize = 256;
const MAX_CODE_LEN: usize = 15;

/// Finds the final block of the raw deflate stream `stream`, which must
/// end with that block (at most padding bits after it).
pub(crate) fn final_block(stream: &[u8]) -> Result<FinalBlock, ScanError> {
    walk(stream, skip_symbols)
}

/// How the symbols of a Huffman-coded block are skipped.
type SkipSymbols = fn(&mut BitReader<'_>, &Table, &Table) -> Result<(), ScanError>;

fn walk(stream: &[u8], skip_symbols: SkipSymbols) -> Result<FinalBlock, ScanError> {
    let mut bits = BitReader::new(stream);
    let mut litlen = Table::default();
    let mut distance = Table::default();
    loop {
        let header_bit = bits.position();
        bits.refill();
        let last = bits.take(1)? == 1;
        let kind = bits.take(2)?;
        match kind {
            0 => bits.skip_stored()?,
            1 => {
                fixed_tables(&mut litlen, &mut distance)?;
                skip_symbols(&mut bits, &litlen, &distance)?;
            }
            2 => {
                dynamic_tables(&mut bits, &mut litlen, &mut distance)?;
                skip_symbols(&mut bits, &litlen, &distance)?;
            }
            _ => return Err(ScanError::InvalidSymbol),
        }
        if last {
            let end_bit = bits.position();
            if end_bit.div_ceil(8) != stream.len() as u64 {
                return Err(ScanError::TrailingData);
            }
            return Ok(FinalBlock {
                header_bit,
                end_bit,
                stored: kind == 0,
            });
        }
    }
}

/// Reads bits least significant first, as deflate packs them.
struct BitReader<'a> {
    data: &'a [u8],
    /// The next byte to load into `buffer`.
    next: usize,
    buffer: u64,
    count: u32,
}

impl<'a> BitReader<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            next: 0,
            buffer: 0,
            count: 0,
        }
    }

    /// Bits consumed so far.
    fn position(&self) -> u64 {
        self.next as u64 * 8 - u64::from(self.count)
    }

    /// Loads bytes until at least 56 bits are buffered or the data ends.
    #[inline]
    fn refill(&mut self) {
        if let Some(word) = self.data.get(self.next..self.next + 8) {
            // Whole bytes up to 56..=63 bits; the bits of a byte that did
            // not fit whole are loaded again, unchanged, next time.
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            self.buffer |= word << self.count;
            self.next += ((63 - self.count) / 8) as usize;
            self.count |= 0b11_1000; // 56..=63
        } else {
            while self.count <= 56 && self.next < self.data.len() {
                self.buffer |= u64::from(self.data[self.next]) << self.count;
                self.next += 1;
                self.count += 8;
            }
        }
    }

    /// The next `n` bits without consuming them (zeros past the end).
    #[inline]
    fn peek(&self, n: u32) -> usize {
        (self.buffer & ((1u64 << n) - 1)) as usize
    }

    #[inline]
    fn consume(&mut self, n: u32) -> Result<(), ScanError> {
        if n > self.count {
            return Err(ScanError::Truncated);
        }
        self.buffer >>= n;
        self.count -= n;
        Ok(())
    }

    /// Takes `n` ≤ 32 bits from a buffer refilled by the caller.
    #[inline]
    fn take(&mut self, n: u32) -> Result<u32, ScanError> {
        let value = self.peek(n) as u32;
        self.consume(n)?;
        Ok(value)
    }

    /// Skips a stored block after its 3 header bits.
    fn skip_stored(&mut self) -> Result<(), ScanError> {
        // Drop the bits up to the byte boundary, then restart at a byte.
        let byte = self.position().div_ceil(8) as usize;
        let header = self.data.get(byte..byte + 4).ok_or(ScanError::Truncated)?;
        let len = u16::from_le_bytes([header[0], header[1]]);
        let nlen = u16::from_le_bytes([header[2], header[3]]);
        if len != !nlen {
            return Err(ScanError::StoredLength);
        }
        let end = byte + 4 + usize::from(len);
        if end > self.data.len() {
            return Err(ScanError::Truncated);
        }
        self.next = end;
        self.buffer = 0;
        self.count = 0;
        Ok(())
    }
}

/// What a decoded symbol asks of the walk.
const LITERAL: u32 = 0;
const LENGTH: u32 = 1;
const END: u32 = 2;
/// A primary entry pointing at a subtable for codes longer than its bits.
const SUBTABLE: u32 = 3;
/// No code has these bits (an incomplete code).
const INVALID: u32 = 4;

/// A two-level decoding table over the next bits of the stream (codes are
/// stored bit-reversed, as deflate sends them).
///
/// An entry is `value << 16 | kind << 8 | bits`: `bits` to consume (the
/// code and, for lengths and distances, the extra bits that follow it),
/// `kind` one of the constants above, `value` the symbol (for code length
/// codes) or, for a subtable, its offset. Short codes resolve in the
/// primary table; longer ones in a subtable indexed by the bits after
/// the primary ones, whose entries count the code's whole length.
#[derive(Default)]
struct Table {
    entries: Vec<u32>,
    primary_bits: u32,
}

impl Table {
    /// Builds the canonical Huffman code of `lengths` (RFC 1951 §3.2.2):
    /// `kind(symbol)` gives each symbol's kind and extra bits. Incomplete
    /// codes are allowed (a lone distance code is legal); codes that would
    /// not fit are not.
    fn build(
        &mut self,
        lengths: &[u8],
        primary_bits: u32,
        kind: impl Fn(usize) -> (u32, u32),
    ) -> Result<(), ScanError> {
        let mut count = [0u16; MAX_CODE_LEN + 1];
        for &len in lengths {
            count[usize::from(len)] += 1;
        }
        count[0] = 0;
        // Kraft: the codes of each length must fit in what shorter ones left.
        let mut left = 1i32;
        for &n in &count[1..] {
            left = left * 2 - i32::from(n);
            if left < 0 {
                return Err(ScanError::InvalidCode);
            }
        }
        let mut next_code = [0u16; MAX_CODE_LEN + 2];
        for len in 1..=MAX_CODE_LEN {
            next_code[len + 1] = (next_code[len] + count[len]) << 1;
        }
        let longest = (1..=MAX_CODE_LEN)
            .rev()
            .find(|&l| count[l] != 0)
            .unwrap_or(1) as u32;
        let primary = primary_bits.min(longest);
        self.primary_bits = primary;
        self.entries.clear();
        self.entries.resize(1 << primary, INVALID << 8);
        // Bit-reversed codes, and for each primary slot the longest code
        // that continues past it (the size of its subtable).
        let mut codes = Vec::with_capacity(lengths.len());
        let mut sub_bits = vec![0u32; 1 << primary];
        for (symbol, &len) in lengths.iter().enumerate() {
            if len == 0 {
                continue;
            }
            let len = u32::from(len);
            let code = next_code[len as usize];
            next_code[len as usize] += 1;
            let reversed = u32::from(code.reverse_bits() >> (16 - len));
            codes.push((symbol, len, reversed));
            if len > primary {
                let slot = (reversed & ((1 << primary) - 1)) as usize;
                sub_bits[slot] = sub_bits[slot].max(len - primary);
            }
        }
        for (slot, &bits) in sub_bits.iter().enumerate() {
            if bits > 0 {
                let offset = self.entries.len() as u32;
                self.entries[slot] = (offset << 16) | (SUBTABLE << 8) | bits;
                self.entries
                    .resize(self.entries.len() + (1 << bits), INVALID << 8);
            }
        }
        for (symbol, len, reversed) in codes {
            let (kind, extra) = kind(symbol);
            let entry = ((symbol as u32) << 16) | (kind << 8) | (len + extra);
            if len <= primary {
                let slots = self.entries[..1 << primary].iter_mut();
                for slot in slots.skip(reversed as usize).step_by(1 << len) {
                    *slot = entry;
                }
            } else {
                let head = self.entries[(reversed & ((1 << primary) - 1)) as usize];
                let (offset, bits) = ((head >> 16) as usize, head & 0xFF);
                let table = &mut self.entries[offset..offset + (1 << bits)];
                let rest = (reversed >> primary) as usize;
                for slot in table.iter_mut().skip(rest).step_by(1 << (len - primary)) {
                    *slot = entry;
                }
            }
        }
        Ok(())
    }

    /// The entry for the code at the start of `window` (the next bits of
    /// the stream).
    #[inline]
    fn lookup(&self, window: u64) -> u32 {
        let entry = self.entries[window as usize & ((1 << self.primary_bits) - 1)];
        if (entry >> 8) & 0xFF != SUBTABLE {
            return entry;
        }
        let rest = (window >> self.primary_bits) as usize & ((1 << (entry & 0xFF)) - 1);
        self.entries[(entry >> 16) as usize + rest]
    }

    /// Consumes one symbol and its extra bits from a buffer refilled by
    /// the caller; returns its value.
    #[inline]
    fn decode(&self, bits: &mut BitReader<'_>) -> Result<u32, ScanError> {
        let entry = self.lookup(bits.buffer);
        if (entry >> 8) & 0xFF == INVALID {
            return Err(invalid(entry));
        }
        bits.consume(entry & 0xFF)?;
        Ok(entry >> 16)
    }
}

/// The error for an `INVALID` entry: bits no code starts with, or the
/// code of a symbol the alphabet leaves unused.
fn invalid(entry: u32) -> ScanError {
    if entry.trailing_zeros() >= 8 {
        ScanError::InvalidCode
    } else {
        ScanError::InvalidSymbol
    }
}

/// Literal/length symbols: their kind and the extra bits of a length
/// (286 and 287 have codes in the fixed code but must never occur).
fn litlen_kind(symbol: usize) -> (u32, u32) {
    match symbol {
        0..=255 => (LITERAL, 0),
        256 => (END, 0),
        _ => LENGTH_EXTRA
            .get(symbol - 257)
            .map_or((INVALID, 0), |&extra| (LENGTH, u32::from(extra))),
    }
}

/// Distance symbols: the extra bits that follow (30 and 31 never occur).
fn distance_kind(symbol: usize) -> (u32, u32) {
    DISTANCE_EXTRA
        .get(symbol)
        .map_or((INVALID, 0), |&extra| (LITERAL, u32::from(extra)))
}

/// Code length symbols carry their value; repeat counts are read apart.
fn plain_kind(_symbol: usize) -> (u32, u32) {
    (LITERAL, 0)
}

const LITLEN_PRIMARY_BITS: u32 = 11;
const DISTANCE_PRIMARY_BITS: u32 = 8;

fn fixed_tables(litlen: &mut Table, distance: &mut Table) -> Result<(), ScanError> {
    let mut lengths = [0u8; 288];
    lengths[..144].fill(8);
    lengths[144..256].fill(9);
    lengths[256..280].fill(7);
    lengths[280..].fill(8);
    litlen.build(&lengths, LITLEN_PRIMARY_BITS, litlen_kind)?;
    distance.build(&[5; 32], DISTANCE_PRIMARY_BITS, distance_kind)
}

/// Reads the code lengths of a dynamic block and builds its tables.
fn dynamic_tables(
    bits: &mut BitReader<'_>,
    litlen: &mut Table,
    distance: &mut Table,
) -> Result<(), ScanError> {
    bits.refill();
    let hlit = bits.take(5)? as usize + 257;
    let hdist = bits.take(5)? as usize + 1;
    let hclen = bits.take(4)? as usize + 4;
    if hlit > 286 || hdist > 30 {
        return Err(ScanError::InvalidSymbol);
    }
    let mut code_length_lengths = [0u8; 19];
    for &symbol in &CODE_LENGTH_ORDER[..hclen] {
        bits.refill();
        code_length_lengths[symbol] = bits.take(3)? as u8;
    }
    let mut code_lengths = Table::default();
    code_lengths.build(&code_length_lengths, 7, plain_kind)?;
    let mut lengths = [0u8; 286 + 30];
    let total = hlit + hdist;
    let mut at = 0;
    while at < total {
        bits.refill();
        let symbol = code_lengths.decode(bits)?;
        let (value, repeat) = match symbol {
            0..=15 => (symbol as u8, 1),
            16 => {
                let previous = *lengths[..at].last().ok_or(ScanError::InvalidCode)?;
                (previous, 3 + bits.take(2)? as usize)
            }
            17 => (0, 3 + bits.take(3)? as usize),
            18 => (0, 11 + bits.take(7)? as usize),
            _ => return Err(ScanError::InvalidCode),
        };
        if at + repeat > total {
            return Err(ScanError::InvalidCode);
        }
        lengths[at..at + repeat].fill(value);
        at += repeat;
    }
    if lengths[END_OF_BLOCK] == 0 {
        return Err(ScanError::InvalidCode);
    }
    litlen.build(&lengths[..hlit], LITLEN_PRIMARY_BITS, litlen_kind)?;
    distance.build(&lengths[hlit..total], DISTANCE_PRIMARY_BITS, distance_kind)
}

/// Skips the symbols of one block up to and including its end-of-block.
///
/// The walk is bound by the latency of one lookup after another (a tenth
/// of a build's CPU went to it), so the reader's state lives in locals in
/// both loops (not behind `&mut`).
fn skip_symbols(
    bits: &mut BitReader<'_>,
    litlen: &Table,
    distance: &Table,
) -> Result<(), ScanError> {
    match skip_symbols_fast(bits, litlen, distance) {
        Some(result) => result,
        None => skip_symbols_near_end(bits, litlen, distance),
    }
}

/// [`skip_symbols`] while at least eight bytes follow the buffered ones,
/// so a refill needs no check for the end of the data and leaves 56 bits
/// or more. That covers a match with its extra bits (48), or three
/// literals (15 each) while the next lookup still sees 15 bits, so the
/// refill, a load in the chain of one symbol after the next, is done once
/// per match or per three literals. `None` when the walk reached the last
/// bytes, the reader's state saved.
#[inline]
fn skip_symbols_fast(
    bits: &mut BitReader<'_>,
    litlen: &Table,
    distance: &Table,
) -> Option<Result<(), ScanError>> {
    let data = bits.data;
    let last_refill = data.len().checked_sub(8)?;
    let (mut next, mut buffer, mut count) = (bits.next, bits.buffer, bits.count);
    macro_rules! refill_or_stop {
        () => {
            if next > last_refill {
                (bits.next, bits.buffer, bits.count) = (next, buffer, count);
                return None;
            }
            let word: [u8; 8] = data[next..next + 8].try_into().expect("eight bytes");
            buffer |= u64::from_le_bytes(word) << count;
            next += ((63 - count) / 8) as usize;
            count |= 0b11_1000; // 56..=63
        };
    }
    let is_literal = |entry: u32| (entry >> 8) & 0xFF == LITERAL;
    let result = loop {
        refill_or_stop!();
        let mut entry = litlen.lookup(buffer);
        if is_literal(entry) {
            buffer >>= entry & 0xFF;
            count -= entry & 0xFF;
            entry = litlen.lookup(buffer);
            if is_literal(entry) {
                buffer >>= entry & 0xFF;
                count -= entry & 0xFF;
                entry = litlen.lookup(buffer);
                if is_literal(entry) {
                    buffer >>= entry & 0xFF;
                    count -= entry & 0xFF;
                    continue;
                }
            }
            // A match may need all 48 bits; the refill keeps the low bits
            // `entry` was looked up from.
            refill_or_stop!();
        }
        let kind = (entry >> 8) & 0xFF;
        let litlen_bits = entry & 0xFF;
        if kind != LENGTH {
            if kind != END {
                break Err(invalid(entry));
            }
            buffer >>= litlen_bits;
            count -= litlen_bits;
            break Ok(());
        }
        let distance_entry = distance.lookup(buffer >> litlen_bits);
        if (distance_entry >> 8) & 0xFF == INVALID {
            break Err(invalid(distance_entry));
        }
        let taken = litlen_bits + (distance_entry & 0xFF);
        buffer >>= taken;
        count -= taken;
    };
    (bits.next, bits.buffer, bits.count) = (next, buffer, count);
    Some(result)
}

/// [`skip_symbols`] over the last bytes, checking each symbol against
/// the end of the data. Whether a literal or a length came, which the data
/// decides, is not branched on: the distance is looked up either way and
/// consumed only after a length.
fn skip_symbols_near_end(
    bits: &mut BitReader<'_>,
    litlen: &Table,
    distance: &Table,
) -> Result<(), ScanError> {
    let data = bits.data;
    let (mut next, mut buffer, mut count) = (bits.next, bits.buffer, bits.count);
    let result = loop {
        // 56 buffered bits cover the longest match: 15 + 5 + 15 + 13.
        if let Some(word) = data.get(next..next + 8) {
            buffer |= u64::from_le_bytes(word.try_into().expect("eight bytes")) << count;
            next += ((63 - count) / 8) as usize;
            count |= 0b11_1000; // 56..=63
        } else {
            (bits.next, bits.buffer, bits.count) = (next, buffer, count);
            bits.refill();
            (next, buffer, count) = (bits.next, bits.buffer, bits.count);
        }
        let entry = litlen.lookup(buffer);
        let kind = (entry >> 8) & 0xFF;
        let litlen_bits = entry & 0xFF;
        if kind > LENGTH {
            if kind != END {
                break Err(invalid(entry));
            }
            if litlen_bits > count {
                break Err(ScanError::Truncated);
            }
            buffer >>= litlen_bits;
            count -= litlen_bits;
            break Ok(());
        }
        // `kind` is 1 for a length, else 0.
        let distance_entry = distance.lookup(buffer >> litlen_bits);
        if kind & u32::from((distance_entry >> 8) & 0xFF == INVALID) != 0 {
            break Err(invalid(distance_entry));
        }
        let taken = litlen_bits + (distance_entry & 0xFF) * kind;
        if taken > count {
            break Err(ScanError::Truncated);
        }
        buffer >>= taken;
        count -= taken;
    };
    (bits.next, bits.buffer, bits.count) = (next, buffer, count);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zlib_rs(level: u32, data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn finds_a_fixed_final_block() {
        // Level 1 on a short text gives one fixed-Huffman block.
        let stream = zlib_rs(1, b"hello hello hello");
        let block = final_block(&stream).unwrap();
        assert_eq!(block.header_bit, 0);
        assert!(!block.stored);
        assert_eq!(block.end_bit.div_ceil(8), stream.len() as u64);
    }

    #[test]
    fn finds_a_stored_final_block() {
        let stream = zlib_rs(0, &[7u8; 1000]);
        let block = final_block(&stream).unwrap();
        assert!(block.stored);
        assert_eq!(block.end_bit, stream.len() as u64 * 8);
    }

    #[test]
    fn walks_many_dynamic_blocks() {
        let mut state = 99u32;
        let data: Vec<u8> = (0..3_000_000)
            .map(|i| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                if i % 3 == 0 {
                    (state >> 24) as u8
                } else {
                    b"xyz"[i % 3]
                }
            })
            .collect();
        let stream = zlib_rs(6, &data);
        let block = final_block(&stream).unwrap();
        assert!(block.header_bit > 8 * 1000, "many blocks precede the last");
    }

    /// The fast loop and the checked one must agree wherever the fast one
    /// hands over, on every kind of block and at every length.
    #[test]
    fn the_fast_walk_agrees_with_the_checked_one() {
        let mut state = 7u32;
        let mut random = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let mut data = Vec::new();
        for len in [0, 1, 9, 100, 5_000, 70_000, 300_000] {
            // Bytes of skewed frequencies with rare long matches from far
            // back, at every level and cut anywhere (the exact worst case
            // is the test below).
            data.clear();
            while data.len() < len {
                let r = random();
                if r.is_multiple_of(61) && data.len() > 32_768 {
                    let start = data.len() - 32_768 + (r >> 8) as usize % 8_000;
                    for i in 0..200 + (r >> 4) as usize % 59 {
                        data.push(data[start + i]);
                    }
                } else {
                    data.push(((r >> 8).trailing_zeros().min(8) as u8 * 31) ^ (r >> 28) as u8);
                }
            }
            data.truncate(len);
            for level in [0, 1, 6, 9] {
                let stream = zlib_rs(level, &data);
                for cut in [stream.len(), stream.len() - 1, stream.len() / 2] {
                    let stream = &stream[..cut];
                    assert_eq!(
                        final_block(stream),
                        walk(stream, skip_symbols_near_end),
                        "length {len}, level {level}, cut at {cut}"
                    );
                }
                let mut damaged = stream.clone();
                if let Some(byte) = damaged.get_mut(stream.len() / 3) {
                    *byte ^= 0x5A;
                }
                assert_eq!(final_block(&damaged), walk(&damaged, skip_symbols_near_end));
            }
        }
    }

    /// A dynamic block where literals of 15-bit codes come before matches
    /// of 48 bits (the longest length and distance codes, all their extra
    /// bits): after two such literals a match no longer fits the bits left
    /// from one refill.
    #[test]
    fn the_longest_match_after_the_longest_literals_is_walked_exactly() {
        use super::super::runs::{Bits, canonical};
        let mut litlen = [9u32; 286];
        litlen[usize::from(b'A')] = 15;
        litlen[284] = 15; // lengths 227..=257, 5 extra bits
        let distance = [15u32; 30]; // code 29: distances from 24 577, 13 extra bits
        let (litlen_codes, distance_codes) = (canonical(&litlen), canonical(&distance));
        let mut out = Bits::new(Vec::new());
        out.put(1, 1); // BFINAL
        out.put(2, 2); // dynamic
        out.put(286 - 257, 5);
        out.put(30 - 1, 5);
        out.put(19 - 4, 4);
        // The code length code: 9 and 15 only, one bit each.
        for symbol in CODE_LENGTH_ORDER {
            out.put(u32::from(symbol == 9 || symbol == 15), 3);
        }
        for &len in litlen.iter().chain(&distance) {
            out.put(u32::from(len == 15), 1);
        }
        for round in 0..400 {
            for _ in 0..round % 4 {
                out.code(litlen_codes[usize::from(b'A')]);
            }
            out.code(litlen_codes[284]);
            out.put(0b10101, 5);
            out.code(distance_codes[29]);
            out.put(0x1ABC, 13);
        }
        out.code(litlen_codes[END_OF_BLOCK]);
        let end_bit = out.len();
        let stream = out.out;
        let want = FinalBlock {
            header_bit: 0,
            end_bit,
            stored: false,
        };
        assert_eq!(final_block(&stream), Ok(want));
        assert_eq!(walk(&stream, skip_symbols_near_end), Ok(want));
    }

    #[test]
    fn refuses_damaged_streams() {
        let stream = zlib_rs(6, b"some text some text some more text");
        assert_eq!(
            final_block(&stream[..stream.len() - 2]),
            Err(ScanError::Truncated)
        );
        let mut longer = stream.clone();
        longer.push(0);
        assert_eq!(final_block(&longer), Err(ScanError::TrailingData));
        // Block type 3 is reserved.
        assert_eq!(final_block(&[0b111]), Err(ScanError::InvalidSymbol));
        assert_eq!(
            final_block(&[0b001, 5, 0, 5, 0]),
            Err(ScanError::StoredLength)
        );
    }
}
