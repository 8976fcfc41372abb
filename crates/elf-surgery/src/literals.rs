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
/// Bytes of the previous chunk kept before the next: enough to hold a
/// name, its `.so\0` and the byte before it.
const CONTEXT: usize = MAX_NAME + 4;
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

/// Adds the names of the section at `offset..offset+size` to `found`.
///
/// A name ends in `.so` and a NUL, so the scan looks only for `.so\0`
/// (`memmem`) and reads back from each to the string's start or its last
/// `/`, at most [`MAX_NAME`] bytes: the section is read in bounded chunks,
/// each after the last bytes of the one before, so a name cut by a chunk's
/// end is still whole.
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
    let finder = memchr::memmem::Finder::new(b".so\0");
    let mut buf: Vec<u8> = Vec::new();
    let mut at = 0;
    while at < size {
        let n = CHUNK.min(size - at);
        // Keep the last CONTEXT bytes read; the section's start is a
        // string's start (`at == 0`: nothing kept).
        let keep = buf.len().min(CONTEXT);
        buf.drain(..buf.len() - keep);
        let len = usize::try_from(n).map_err(|_| malformed("a .rodata section is too large"))?;
        buf.resize(keep + len, 0);
        src.read_exact_at(offset + at, &mut buf[keep..])?;
        let starts_section = at == 0;
        at += n;
        for end in finder.find_iter(&buf).map(|m| m + 3) {
            if end <= keep {
                continue; // found in the chunk before
            }
            if let Some(name) = library_name(&buf[..end], starts_section) {
                found.insert(name);
            }
        }
    }
    // A string the section ends without terminating is no C literal: the
    // scan only ever matches a terminated `.so`.
    Ok(())
}

/// The library name ending at the end of `before` (a `.so` whose NUL
/// follows): the whole string, or the part after its last `/`, made of
/// letters, digits and `_-+.`, at most [`MAX_NAME`] bytes. `at_start`:
/// the first byte of `before` starts a string.
fn library_name(before: &[u8], at_start: bool) -> Option<String> {
    let window = &before[before.len().saturating_sub(MAX_NAME + 1)..];
    let candidate = match window.iter().rposition(|&b| b == 0 || b == b'/') {
        Some(boundary) => &window[boundary + 1..],
        None if at_start && window.len() == before.len() => window,
        // The string runs back past a name's length.
        None => return None,
    };
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

    #[test]
    fn a_name_whose_suffix_a_chunk_cuts_is_found_once() {
        // `.s` ends the first chunk, `o\0` starts the second.
        let mut data = b"libfirst.so\0".to_vec();
        data.resize(CHUNK as usize - b"libedge.s".len(), b'x');
        data.push(0);
        data.extend_from_slice(b"libedge.so\0libedge.so\0");
        assert_eq!(names(&data), ["libedge.so", "libfirst.so"]);
    }
}
