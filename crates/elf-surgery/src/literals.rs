//! Unversioned library names a file may `dlopen`: the `lib*.so` string
//! literals of its read-only data (docs/elf-surgery.md, "Runtime aliases").

use std::collections::BTreeSet;
use std::io::{Read, Seek};

use crate::error::{Result, malformed};
use crate::file::ElfFile;
use crate::source::{ReadAt, Source};

/// Bytes of a section read at once: memory stays bounded whatever the
/// section's size.
const CHUNK: u64 = 1 << 20;
/// The longest name a file system takes; longer pieces hold no name.
const MAX_NAME: usize = 255;
/// The section-name table is small in every real file.
const MAX_SECTION_NAMES: u64 = 1 << 20;

impl ElfFile {
    /// The unversioned library names (`libamdhip64.so`) this file holds as
    /// string literals in its `.rodata` sections, sorted and each once:
    /// the names a `dlopen` of it may ask for.
    ///
    /// A name is a whole NUL-terminated string, or the part of one after
    /// its last `/` (a linker merges the literal `libX.so` into the tail of
    /// a longer `/path/libX.so`), made of letters, digits and `_-+.`,
    /// starting with `lib` and ending with `.so`. Reads the `.rodata`
    /// sections of `source` (the file this was parsed from) in bounded
    /// chunks; a file without section headers has none to read.
    pub fn library_names<R: Read + Seek>(&self, source: &mut R) -> Result<Vec<String>> {
        let Some(layout) = &self.layout else {
            return Ok(Vec::new());
        };
        if layout.read_only.is_empty() {
            return Ok(Vec::new());
        }
        let mut src = Source::new(source)?;
        let Some(names) = layout.section_names else {
            return Ok(Vec::new());
        };
        if names.size > MAX_SECTION_NAMES {
            return Err(malformed(format!(
                "the section-name table is {} bytes long",
                names.size
            )));
        }
        let table = src.read_vec(names.offset, names.size, "section-name table")?;
        let mut found = BTreeSet::new();
        for section in &layout.read_only {
            let name = section_name(&table, section.name);
            if name != b".rodata" && !name.starts_with(b".rodata.") {
                continue;
            }
            scan_section(&mut src, section.offset, section.size, &mut found)?;
        }
        Ok(found.into_iter().collect())
    }
}

/// The NUL-terminated name at `at` of the section-name table (empty when
/// it lies outside).
fn section_name(table: &[u8], at: u32) -> &[u8] {
    let Some(rest) = usize::try_from(at).ok().and_then(|at| table.get(at..)) else {
        return b"";
    };
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    &rest[..end]
}

/// Adds the names of the section at `offset..offset+size` to `found`,
/// reading it in chunks; a string cut by a chunk's end is carried over.
fn scan_section(
    src: &mut impl ReadAt,
    offset: u64,
    size: u64,
    found: &mut BTreeSet<String>,
) -> Result<()> {
    if offset.checked_add(size).is_none_or(|end| end > src.len()) {
        return Err(crate::error::truncated(format!(
            "a .rodata section (bytes {offset:#x}..+{size:#x})"
        )));
    }
    // The unfinished string at the end of the last chunk, its start
    // unknown once it grew past a name's length.
    let mut carry: Vec<u8> = Vec::new();
    let mut carry_whole = true;
    let mut at = 0;
    while at < size {
        let n = CHUNK.min(size - at);
        let chunk = src.read_vec(offset + at, n, ".rodata")?;
        at += n;
        let mut pieces = chunk.split(|&b| b == 0).peekable();
        while let Some(piece) = pieces.next() {
            let last = pieces.peek().is_none();
            let (text, whole) = if carry.is_empty() {
                (piece, carry_whole)
            } else {
                carry.extend_from_slice(piece);
                (carry.as_slice(), carry_whole)
            };
            if last {
                // Unterminated in this chunk: keep its tail for the next.
                let keep = text.len().saturating_sub(MAX_NAME + 1);
                let whole = whole && keep == 0;
                let tail = text[keep..].to_vec();
                carry = tail;
                carry_whole = whole;
                break;
            }
            if let Some(name) = library_name(text, whole) {
                found.insert(name);
            }
            carry.clear();
            carry_whole = true;
        }
    }
    // A string the section ends without terminating is no C literal.
    Ok(())
}

/// The library name a string holds: all of it, or the part after its last
/// `/`. `whole` is false when the string's start was cut off.
fn library_name(text: &[u8], whole: bool) -> Option<String> {
    let (candidate, after_slash) = match text.iter().rposition(|&b| b == b'/') {
        Some(slash) => (&text[slash + 1..], true),
        None => (text, false),
    };
    if !whole && !after_slash {
        return None;
    }
    let plain = candidate
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b"_-+.".contains(&b));
    let shaped = candidate.len() > b"lib.so".len()
        && candidate.len() <= MAX_NAME
        && candidate.starts_with(b"lib")
        && candidate.ends_with(b".so");
    (plain && shaped).then(|| String::from_utf8_lossy(candidate).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes as one section, scanned in [`CHUNK`]-sized reads.
    fn names(bytes: &[u8]) -> Vec<String> {
        struct Bytes<'a>(&'a [u8]);
        impl ReadAt for Bytes<'_> {
            fn len(&self) -> u64 {
                self.0.len() as u64
            }
            fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
                let at = usize::try_from(offset).unwrap();
                buf.copy_from_slice(&self.0[at..at + buf.len()]);
                Ok(())
            }
        }
        let mut found = BTreeSet::new();
        scan_section(&mut Bytes(bytes), 0, bytes.len() as u64, &mut found).unwrap();
        found.into_iter().collect()
    }

    #[test]
    fn names_are_whole_literals_or_path_tails() {
        let data = b"\0libamdhip64.so\0/opt/rocm/lib/librocblas.so\0Failed to open libnope.so\0\
                     libhsa-amd-aqlprofile64.so\0libfoo.so.1\0lib.so\0libx.so\0libunterminated.so";
        assert_eq!(
            names(data),
            [
                "libamdhip64.so",
                "libhsa-amd-aqlprofile64.so",
                "librocblas.so",
                "libx.so"
            ]
        );
    }

    #[test]
    fn a_name_cut_by_a_chunk_is_carried_over() {
        let mut data = vec![b'x'; CHUNK as usize - 4];
        data.push(0);
        data.extend_from_slice(b"libsplit.so\0");
        // One long string crossing the boundary: its start is lost, only a
        // path tail can be a name.
        data.extend(std::iter::repeat_n(b'y', CHUNK as usize));
        data.extend_from_slice(b"/libtail.so\0");
        data.extend(std::iter::repeat_n(b'z', CHUNK as usize));
        data.extend_from_slice(b"libnotwhole.so\0");
        assert_eq!(names(&data), ["libsplit.so", "libtail.so"]);
    }
}
