//! Libraries the host system provides: where the dynamic loader looks for a
//! `DT_NEEDED` name after the file's own search path — the loader cache
//! (`/etc/ld.so.cache`) and the default directories.
//!
//! `rocm-sdk test` asks this about a needed library that neither the ROCm
//! packages nor the manylinux allow-list provide: when this machine has it,
//! the file works here but would not on a machine without it (a warning);
//! when it does not, the file does not work here (a failure).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use elf_surgery::{ElfFile, ElfKind};

/// Where the loader cache is.
pub const LOADER_CACHE: &str = "/etc/ld.so.cache";

/// The host's libraries, by name.
#[derive(Debug, Clone, Default)]
pub struct HostLibraries {
    /// Name → paths, in cache order.
    cache: BTreeMap<String, Vec<PathBuf>>,
    /// Searched after the cache.
    default_dirs: Vec<PathBuf>,
}

impl HostLibraries {
    /// The libraries of this machine: [`LOADER_CACHE`] (ignored when absent
    /// or unreadable) and the loader's default directories.
    pub fn discover() -> Self {
        let cache = fs::read(LOADER_CACHE)
            .map(|bytes| parse_cache(&bytes))
            .unwrap_or_default();
        Self {
            cache,
            default_dirs: default_dirs(),
        }
    }

    /// The libraries named by a loader cache's bytes, with `default_dirs`
    /// searched after it.
    pub fn from_cache(bytes: &[u8], default_dirs: Vec<PathBuf>) -> Self {
        Self {
            cache: parse_cache(bytes),
            default_dirs,
        }
    }

    /// Where the loader would find `name` for a file of machine `machine`
    /// (`e_machine`), or `None`: the first cache entry, then default
    /// directory, holding an ELF file of that machine.
    pub fn find(&self, name: &str, machine: u16) -> Option<PathBuf> {
        if name.contains('/') {
            return None;
        }
        let cached = self.cache.get(name).into_iter().flatten().cloned();
        let defaults = self.default_dirs.iter().map(|dir| dir.join(name));
        cached
            .chain(defaults)
            .find(|path| is_library_for(path, machine))
    }
}

fn is_library_for(path: &Path, machine: u16) -> bool {
    ElfFile::open(path).is_ok_and(|elf| {
        !matches!(elf.kind(), ElfKind::NotElf | ElfKind::DeviceCode)
            && elf.machine() == Some(machine)
    })
}

/// The loader's built-in directories: the multiarch ones (Debian,
/// Ubuntu), the `lib64` ones (Fedora, RHEL, manylinux), and `lib`.
fn default_dirs() -> Vec<PathBuf> {
    let triplet = format!("{}-linux-gnu", std::env::consts::ARCH);
    [
        format!("/lib/{triplet}"),
        format!("/usr/lib/{triplet}"),
        "/lib64".to_owned(),
        "/usr/lib64".to_owned(),
        "/lib".to_owned(),
        "/usr/lib".to_owned(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// The magic of glibc's loader cache format (version 1.1), which every
/// glibc since 2.32 writes, alone or after the old format's table.
const NEW_MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
/// Size of the new format's header: magic, `nlibs`, `len_strings`,
/// `flags` and padding, `extension_offset`, three unused words.
const NEW_HEADER: usize = 48;
/// Size of one entry: `flags`, `key`, `value`, `osversion`, `hwcap`.
const NEW_ENTRY: usize = 24;

/// Name → paths of a loader cache in the new format; empty when the bytes
/// hold none (an old-format-only cache, or garbage). String offsets are
/// relative to the new header.
fn parse_cache(bytes: &[u8]) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let Some(base) = bytes.windows(NEW_MAGIC.len()).position(|w| w == NEW_MAGIC) else {
        return out;
    };
    let cache = &bytes[base..];
    let word = |at: usize| -> Option<usize> {
        let raw: [u8; 4] = cache.get(at..at + 4)?.try_into().ok()?;
        usize::try_from(u32::from_ne_bytes(raw)).ok()
    };
    let string = |at: usize| -> Option<&[u8]> {
        let rest = cache.get(at..)?;
        Some(&rest[..rest.iter().position(|&b| b == 0)?])
    };
    let Some(count) = word(20) else {
        return out;
    };
    for index in 0..count {
        let entry = NEW_HEADER + index * NEW_ENTRY;
        let (Some(key), Some(value)) = (word(entry + 4), word(entry + 8)) else {
            break; // truncated: keep what was read
        };
        if let (Some(name), Some(path)) = (string(key), string(value)) {
            out.entry(String::from_utf8_lossy(name).into_owned())
                .or_default()
                .push(PathBuf::from(String::from_utf8_lossy(path).into_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache in the new format with the given `(name, path)` entries.
    fn cache_bytes(entries: &[(&str, &str)]) -> Vec<u8> {
        let strings_at = NEW_HEADER + entries.len() * NEW_ENTRY;
        let mut strings = Vec::new();
        let mut table = Vec::new();
        for (name, path) in entries {
            let key = strings_at + strings.len();
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
            let value = strings_at + strings.len();
            strings.extend_from_slice(path.as_bytes());
            strings.push(0);
            table.extend_from_slice(&0x0303_i32.to_ne_bytes());
            table.extend_from_slice(&u32::try_from(key).unwrap().to_ne_bytes());
            table.extend_from_slice(&u32::try_from(value).unwrap().to_ne_bytes());
            table.extend_from_slice(&[0; 12]);
        }
        let mut out = NEW_MAGIC.to_vec();
        out.extend_from_slice(&u32::try_from(entries.len()).unwrap().to_ne_bytes());
        out.extend_from_slice(&u32::try_from(strings.len()).unwrap().to_ne_bytes());
        out.resize(NEW_HEADER, 0);
        out.extend(table);
        out.extend(strings);
        out
    }

    fn own_machine() -> u16 {
        ElfFile::open(&std::env::current_exe().unwrap())
            .unwrap()
            .machine()
            .unwrap()
    }

    #[test]
    fn cache_entries_name_elf_files_of_the_machine() {
        let dir = tempfile::tempdir().unwrap();
        let elf = dir.path().join("libreal.so.1");
        fs::copy(std::env::current_exe().unwrap(), &elf).unwrap();
        let text = dir.path().join("libtext.so.1");
        fs::write(&text, b"not a library").unwrap();
        let bytes = cache_bytes(&[
            ("libreal.so.1", elf.to_str().unwrap()),
            ("libtext.so.1", text.to_str().unwrap()),
            ("libgone.so.1", "/nonexistent/libgone.so.1"),
        ]);
        let host = HostLibraries::from_cache(&bytes, Vec::new());
        let machine = own_machine();
        assert_eq!(host.find("libreal.so.1", machine), Some(elf.clone()));
        assert_eq!(host.find("libreal.so.1", machine.wrapping_add(1)), None);
        assert_eq!(host.find("libtext.so.1", machine), None);
        assert_eq!(host.find("libgone.so.1", machine), None);
        // The old format's table may come first; the new one is found.
        let mut old_first = b"ld.so-1.7.0\0\0\0\0\0".to_vec();
        let offset = old_first.len();
        let shifted = cache_bytes(&[("libreal.so.1", elf.to_str().unwrap())]);
        old_first.extend(&shifted);
        assert_eq!(old_first[offset..], shifted[..]);
        let host = HostLibraries::from_cache(&old_first, Vec::new());
        assert_eq!(host.find("libreal.so.1", machine), Some(elf));
    }

    #[test]
    fn default_directories_are_searched_after_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let elf = dir.path().join("libdefault.so.2");
        fs::copy(std::env::current_exe().unwrap(), &elf).unwrap();
        let host = HostLibraries::from_cache(b"garbage", vec![dir.path().to_path_buf()]);
        assert_eq!(host.find("libdefault.so.2", own_machine()), Some(elf));
        assert_eq!(host.find("dir/libdefault.so.2", own_machine()), None);
    }

    #[test]
    fn this_machine_provides_its_c_library() {
        let libc = HostLibraries::discover().find("libc.so.6", own_machine());
        assert!(libc.is_some_and(|p| p.is_file()));
    }
}
