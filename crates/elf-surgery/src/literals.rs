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
    pub fn library_name_literals<R: Read + Seek>(&self, source: &mut R) -> Result<Vec<String>> {
        let Some(layout) = &self.layout else {
            return Ok(Vec::new());
        };
        if layout.read_only.is_empty() {
            return Ok(Vec::new());
        }
        let mut src = Source::new(source)?;
        self.check_source(&mut src)?;
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
/// reading it in chunks. Only a string ending in `.so` can hold a name, so
/// the scan looks for `.so\0` (a vectorised search) and walks back from
/// each one to the `/` or NUL before the name; the last bytes of a chunk
/// are kept in front of the next, so a name cut by a chunk's end is found.
fn scan_section(
    src: &mut impl ReadAt,
    offset: u64,
    size: u64,
    found: &mut BTreeSet<String>,
) -> Result<()> {
    const END: &[u8] = b".so\0";
    if offset.checked_add(size).is_none_or(|end| end > src.len()) {
        return Err(crate::error::truncated(format!(
            "a .rodata section (bytes {offset:#x}..+{size:#x})"
        )));
    }
    let finder = memchr::memmem::Finder::new(END);
    let mut buf: Vec<u8> = Vec::new();
    let mut at = 0;
    while at < size {
        let n = CHUNK.min(size - at);
        let chunk = src.read_vec(offset + at, n, ".rodata")?;
        // The end of what was read before: a name ending in this chunk
        // may start there (a longer piece is no name).
        let carried = buf.len().min(MAX_NAME + END.len());
        buf.drain(..buf.len() - carried);
        let starts_section = at == carried as u64;
        buf.extend_from_slice(&chunk);
        at += n;
        for dot in finder.find_iter(&buf) {
            // An end inside the carried bytes was seen with the chunk before.
            if dot + END.len() > carried
                && let Some(name) = name_before(&buf[..dot], starts_section)
            {
                found.insert(name);
            }
        }
    }
    // A string the section ends without terminating is no C literal.
    Ok(())
}

/// Whether `byte` may be part of a library name.
fn plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"_-+.".contains(&byte)
}

/// The library name ending at the end of `head` followed by `.so` and a
/// NUL: the string's last part after a `/`, or the whole string (its
/// start is a NUL, or the start of `head` when `head_starts_string`),
/// made of letters, digits and `_-+.`, starting with `lib`, at most
/// [`MAX_NAME`] bytes long and longer than `lib.so`.
fn name_before(head: &[u8], head_starts_string: bool) -> Option<String> {
    // A stem longer than this makes a name too long.
    let longest = MAX_NAME - b".so".len();
    let from = head.len().saturating_sub(longest + 1);
    let window = &head[from..];
    let stem = match window.iter().rposition(|&b| !plain(b)) {
        Some(i) if matches!(window[i], 0 | b'/') => &window[i + 1..],
        None if from == 0 && head_starts_string => window,
        _ => return None,
    };
    let shaped = stem.len() > b"lib".len() && stem.len() <= longest && stem.starts_with(b"lib");
    shaped.then(|| format!("{}.so", String::from_utf8_lossy(stem)))
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

    /// The rule read straight from its description, on the whole section.
    fn names_by_definition(bytes: &[u8]) -> Vec<String> {
        let mut strings: Vec<&[u8]> = bytes.split(|&b| b == 0).collect();
        strings.pop(); // unterminated
        let mut found = BTreeSet::new();
        for text in strings {
            let candidate = match text.iter().rposition(|&b| b == b'/') {
                Some(slash) => &text[slash + 1..],
                None => text,
            };
            if candidate.iter().all(|&b| plain(b))
                && candidate.len() > b"lib.so".len()
                && candidate.len() <= MAX_NAME
                && candidate.starts_with(b"lib")
                && candidate.ends_with(b".so")
            {
                found.insert(String::from_utf8_lossy(candidate).into_owned());
            }
        }
        found.into_iter().collect()
    }

    #[test]
    fn the_scan_finds_what_the_definition_finds_across_chunks() {
        // Two chunks and a bit of strings made of the letters that matter, names
        // of every length around the limit, some cut by a chunk's end.
        let alphabet = b"lib.so/ \0xLIB";
        let mut state = 0x2545_f491_u64;
        let mut data = Vec::new();
        while data.len() < 2 * CHUNK as usize + 1000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            match (state >> 60) % 4 {
                0 => {
                    let stem = usize::try_from((state >> 20) % 300).unwrap();
                    data.extend_from_slice(b"lib");
                    data.extend(std::iter::repeat_n(b'a' + (stem % 26) as u8, stem));
                    data.extend_from_slice(b".so\0");
                }
                _ => data.push(alphabet[usize::try_from((state >> 33) % 13).unwrap()]),
            }
        }
        for shift in [0, 1, 3, 256] {
            // Names ending at every offset around the chunk boundaries.
            let mut shifted = vec![b'x'; shift];
            shifted.extend_from_slice(&data);
            let want = names_by_definition(&shifted);
            assert!(want.len() > 100, "{}", want.len());
            assert_eq!(names(&shifted), want, "shift {shift}");
        }
    }
}
