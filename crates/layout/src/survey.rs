//! What each source file is, read from its bytes (docs/behaviour.md#file-types: file type comes
//! from the bytes, never from the name).

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::sync::{Mutex, PoisonError};

use artifacts::{Entry, EntrySource};
use elf_surgery::{ElfFile, ElfKind, LibraryShape};
use pypa_formats::member::check_relpath;
use serde::Serialize;

use crate::error::Error;

/// What a file is, as far as packaging cares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "class")]
pub enum FileClass {
    /// A shared object (of any class, byte order and machine but AMDGPU),
    /// with its SONAME when it has one.
    SharedObject {
        /// `DT_SONAME`.
        soname: Option<String>,
    },
    /// An executable run through the dynamic loader.
    Executable,
    /// An executable without a dynamic section: no search path needed.
    StaticExecutable,
    /// ELF that is data to us: AMDGPU code objects, object files, other
    /// ELF types (docs/behaviour.md#file-types).
    DeviceCode,
    /// A Windows PE image (`MZ` header with a `PE` signature).
    WindowsImage {
        /// Whether the COFF header marks it a DLL (`IMAGE_FILE_DLL`).
        dll: bool,
    },
    /// A text file starting with `#!`.
    Script,
    /// Anything else.
    Data,
}

impl FileClass {
    /// Whether the file is ELF code that gets search-path edits: a
    /// multilib toolchain's 32-bit runtimes as much as the host's own
    /// libraries (docs/behaviour.md#elf).
    pub fn takes_search_path(&self) -> bool {
        matches!(self, Self::SharedObject { .. } | Self::Executable)
    }

    /// Whether a link to this file becomes a launcher (given the file is
    /// executable by mode when it is a script).
    pub fn is_program(&self) -> bool {
        matches!(
            self,
            Self::Executable | Self::StaticExecutable | Self::Script
        )
    }

    /// The SONAME of a shared object.
    pub fn soname(&self) -> Option<&str> {
        match self {
            Self::SharedObject { soname } => soname.as_deref(),
            _ => None,
        }
    }
}

/// The absolute entries of an ELF file's search path: directories of the
/// machine that built it (docs/behaviour.md#search-paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbsoluteSearchPath {
    /// `RUNPATH` or `RPATH`: the entry the loader reads (`RUNPATH` wins).
    pub tag: &'static str,
    /// The entries that start with `/`, in file order.
    pub entries: Vec<String>,
}

/// What a host ELF file tells about runtime aliases
/// (docs/behaviour.md#runtime-aliases), read in the same pass as its class.
#[derive(Debug, Clone, Default)]
struct AliasHints {
    /// The unversioned library names (`libX.so`) its `.rodata` holds.
    names: Vec<String>,
    /// A shared object's class, byte order, machine and flags: what an
    /// alias standing for it copies.
    shape: Option<LibraryShape>,
}

/// The planner's survey of a build's source files: each file's class, the
/// absolute entries of its search path and what it tells about runtime
/// aliases, read once from its bytes and keyed by where they live.
#[derive(Debug, Default)]
pub struct SourceSurvey {
    classes: HashMap<String, FileClass>,
    absolute: HashMap<String, AbsoluteSearchPath>,
    aliases: HashMap<String, AliasHints>,
}

/// The key of a source: its file, plus the offset inside an archive.
fn key(source: &EntrySource) -> String {
    match source {
        EntrySource::File { path, .. } => path.display().to_string(),
        EntrySource::ArchiveMember {
            archive, offset, ..
        } => {
            format!("{}#{offset}", archive.path.display())
        }
    }
}

impl SourceSurvey {
    /// Classifies every file among `entries` not classified yet, in
    /// parallel; each file's headers are read once for the whole build.
    pub fn gather<'a>(
        &mut self,
        entries: impl IntoIterator<Item = &'a Entry>,
    ) -> Result<(), Error> {
        let mut todo: Vec<(String, &Entry, &EntrySource)> = entries
            .into_iter()
            .filter_map(|e| e.source().map(|s| (key(s), e, s)))
            .filter(|(k, _, _)| !self.classes.contains_key(k))
            .collect();
        todo.sort_by(|a, b| a.0.cmp(&b.0));
        todo.dedup_by(|a, b| a.0 == b.0);
        // One pass per archive (members in offset order), files in
        // parallel: reading archive members one by one would decompress
        // the archive from its start for each.
        let items: Vec<((String, &Entry, &EntrySource), &EntrySource)> =
            todo.into_iter().map(|(k, e, s)| ((k, e, s), s)).collect();
        let found = Mutex::new(Vec::with_capacity(items.len()));
        artifacts::read_sources(&items, |(key, entry, source), reader| {
            let classified = classify(source, reader)?;
            check_soname(entry, &classified.class)?;
            found
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((key.clone(), classified));
            Ok::<(), Error>(())
        })?;
        for (key, classified) in found.into_inner().unwrap_or_else(PoisonError::into_inner) {
            if let Some(absolute) = classified.absolute {
                self.absolute.insert(key.clone(), absolute);
            }
            if let Some(alias) = classified.alias {
                self.aliases.insert(key.clone(), alias);
            }
            self.classes.insert(key, classified.class);
        }
        Ok(())
    }

    /// The class of a file entry gathered earlier.
    pub fn of(&self, entry: &Entry) -> Option<&FileClass> {
        entry.source().and_then(|s| self.classes.get(&key(s)))
    }

    /// The absolute search-path entries of a file entry gathered earlier
    /// (ELF files only; `None` when it has none).
    pub fn absolute_search_path(&self, entry: &Entry) -> Option<&AbsoluteSearchPath> {
        entry.source().and_then(|s| self.absolute_search_path_of(s))
    }

    /// The class of a source gathered earlier.
    pub fn class_of(&self, source: &EntrySource) -> Option<&FileClass> {
        self.classes.get(&key(source))
    }

    /// The unversioned library names (`libX.so`) a host ELF source holds
    /// as string literals (docs/behaviour.md#runtime-aliases).
    pub fn library_names_of(&self, source: &EntrySource) -> &[String] {
        self.aliases
            .get(&key(source))
            .map_or(&[], |a| a.names.as_slice())
    }

    /// What a runtime alias standing for a host shared-object source copies.
    pub fn library_shape_of(&self, source: &EntrySource) -> Option<LibraryShape> {
        self.aliases.get(&key(source)).and_then(|a| a.shape)
    }

    /// [`SourceSurvey::absolute_search_path`] of a source.
    pub fn absolute_search_path_of(&self, source: &EntrySource) -> Option<&AbsoluteSearchPath> {
        self.absolute.get(&key(source))
    }

    /// The class of a file entry: gathered earlier, or read now (a link's
    /// target outside the package's path filter was never gathered).
    pub(crate) fn of_or_read(&self, entry: &Entry) -> Result<Option<FileClass>, Error> {
        match (self.of(entry), entry.source()) {
            (Some(class), _) => Ok(Some(class.clone())),
            (None, Some(source)) => {
                let class = classify_source(source)?;
                check_soname(entry, &class)?;
                Ok(Some(class))
            }
            (None, None) => Ok(None),
        }
    }
}

/// A shared object's SONAME is the file name the loader looks for in the
/// library's own directory, and runtime packages ship the library under
/// it (docs/behaviour.md#soname-rule): it must be one plain file name.
fn check_soname(entry: &Entry, class: &FileClass) -> Result<(), Error> {
    let Some(soname) = class.soname() else {
        return Ok(());
    };
    let plain = check_relpath(soname).is_ok() && !soname.contains('/');
    if plain {
        return Ok(());
    }
    Err(Error::BadSoname {
        file: crate::libraries::describe(entry),
        soname: soname.to_owned(),
    })
}

fn classify_source(source: &EntrySource) -> Result<FileClass, Error> {
    Ok(classify(source, &mut source.open()?)?.class)
}

/// What one read of a source tells.
struct Classified {
    class: FileClass,
    /// The absolute entries of an ELF file's search path.
    absolute: Option<AbsoluteSearchPath>,
    /// Host ELF only.
    alias: Option<AliasHints>,
}

impl Classified {
    fn plain(class: FileClass) -> Self {
        Self {
            class,
            absolute: None,
            alias: None,
        }
    }
}

/// The class of `source`, whose bytes `reader` yields, with what its ELF
/// headers and `.rodata` say (one open of the file, or the member's bytes
/// read once).
fn classify(source: &EntrySource, reader: &mut dyn Read) -> Result<Classified, Error> {
    let io = |e: std::io::Error| Error::Read {
        path: source.path().to_path_buf(),
        source: e,
    };
    // The first four bytes, fewer when the file is shorter.
    let mut head = Vec::with_capacity(4);
    Read::take(&mut *reader, 4)
        .read_to_end(&mut head)
        .map_err(io)?;
    if head.starts_with(b"#!") {
        return Ok(Classified::plain(FileClass::Script));
    }
    if head.starts_with(b"MZ") {
        return Ok(Classified::plain(windows_image(&head, reader).map_err(io)?));
    }
    if head != b"\x7fELF" {
        return Ok(Classified::plain(FileClass::Data));
    }
    // A file is opened again to seek in it, checked against the identity
    // it was indexed with like every open. Archive members cannot seek:
    // parse from memory (host ELF in archives is read whole once here).
    // The `.rodata` of host ELF is read in the same open (or from the
    // same bytes), so finding alias names adds no read of any file.
    let elf_error = |e: elf_surgery::Error| Error::Elf(e.at(source.path()));
    let (elf, names) = if let Some(mut file) = source.open_file()? {
        let elf = ElfFile::parse(&mut file).map_err(elf_error)?;
        let names = host_names(&elf, &mut file).map_err(elf_error)?;
        (elf, names)
    } else {
        let mut bytes = head;
        reader.read_to_end(&mut bytes).map_err(io)?;
        let mut bytes = Cursor::new(bytes);
        let elf = ElfFile::parse(&mut bytes).map_err(elf_error)?;
        let names = host_names(&elf, &mut bytes).map_err(elf_error)?;
        (elf, names)
    };
    let class = class_of(&elf);
    let alias = class.takes_search_path().then(|| AliasHints {
        names,
        shape: class.soname().and_then(|_| elf.library_shape()),
    });
    Ok(Classified {
        absolute: absolute_search_path(&elf),
        alias,
        class,
    })
}

/// The `lib*.so` literals of host ELF code (the only files whose code
/// could `dlopen` a name).
fn host_names<R: Read + std::io::Seek>(
    elf: &ElfFile,
    source: &mut R,
) -> Result<Vec<String>, elf_surgery::Error> {
    if class_of(elf).takes_search_path() {
        elf.library_name_literals(source)
    } else {
        Ok(Vec::new())
    }
}

/// The absolute entries of the search path the loader reads.
fn absolute_search_path(elf: &ElfFile) -> Option<AbsoluteSearchPath> {
    let (tag, path) = match (elf.runpath(), elf.rpath()) {
        (Some(runpath), _) => ("RUNPATH", runpath),
        (None, Some(rpath)) => ("RPATH", rpath),
        (None, None) => return None,
    };
    let entries: Vec<String> = path
        .split(':')
        .filter(|entry| entry.starts_with('/'))
        .map(str::to_owned)
        .collect();
    (!entries.is_empty()).then_some(AbsoluteSearchPath { tag, entries })
}

/// The class of an ELF file: every class, byte order and machine but
/// AMDGPU code objects ([`ElfKind::DeviceCode`]) is code.
fn class_of(elf: &ElfFile) -> FileClass {
    match elf.kind() {
        ElfKind::SharedObject => FileClass::SharedObject {
            soname: elf.soname().map(str::to_owned),
        },
        ElfKind::DynamicExecutable => FileClass::Executable,
        ElfKind::StaticExecutable => FileClass::StaticExecutable,
        ElfKind::NotElf => FileClass::Data,
        ElfKind::DeviceCode | ElfKind::Relocatable | ElfKind::Other => FileClass::DeviceCode,
    }
}

/// `e_lfanew` beyond this is not a PE image as linkers write them.
const PE_HEADER_MAX_OFFSET: usize = 1 << 16;
/// `IMAGE_FILE_DLL` in the COFF header's characteristics.
const IMAGE_FILE_DLL: u16 = 0x2000;

/// A file starting with `MZ`: a PE image when `e_lfanew` (at 0x3c) points
/// at `PE\0\0` followed by a whole COFF header; data otherwise.
fn windows_image(head: &[u8], reader: &mut dyn Read) -> std::io::Result<FileClass> {
    const DOS_HEADER: usize = 64;
    let mut dos = head.to_vec();
    Read::take(&mut *reader, (DOS_HEADER - head.len()) as u64).read_to_end(&mut dos)?;
    if dos.len() < DOS_HEADER {
        return Ok(FileClass::Data);
    }
    let e_lfanew = u32::from_le_bytes(dos[0x3c..0x40].try_into().expect("4 bytes"));
    let Ok(at) = usize::try_from(e_lfanew) else {
        return Ok(FileClass::Data);
    };
    if !(dos.len()..=PE_HEADER_MAX_OFFSET).contains(&at) {
        return Ok(FileClass::Data);
    }
    // Signature (4) + COFF header (20).
    let wanted = at - dos.len() + 24;
    let mut rest = Vec::with_capacity(wanted);
    Read::take(reader, wanted as u64).read_to_end(&mut rest)?;
    if rest.len() < wanted {
        return Ok(FileClass::Data);
    }
    let pe = &rest[at - dos.len()..];
    if &pe[..4] != b"PE\0\0" {
        return Ok(FileClass::Data);
    }
    let characteristics = u16::from_le_bytes([pe[22], pe[23]]);
    Ok(FileClass::WindowsImage {
        dll: characteristics & IMAGE_FILE_DLL != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PE image: DOS header with `e_lfanew` = 0x80, `PE\0\0`, a COFF
    /// header with `characteristics`.
    fn pe(characteristics: u16) -> Vec<u8> {
        let mut bytes = vec![0u8; 0x80 + 24];
        bytes[..2].copy_from_slice(b"MZ");
        bytes[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
        bytes[0x80..0x84].copy_from_slice(b"PE\0\0");
        bytes[0x84..0x86].copy_from_slice(&0x8664u16.to_le_bytes());
        bytes[0x80 + 22..0x80 + 24].copy_from_slice(&characteristics.to_le_bytes());
        bytes
    }

    fn class(bytes: &[u8]) -> FileClass {
        windows_image(&bytes[..4], &mut &bytes[4..]).unwrap()
    }

    #[test]
    fn windows_images_are_told_from_data() {
        assert_eq!(class(&pe(0x2022)), FileClass::WindowsImage { dll: true });
        assert_eq!(class(&pe(0x0022)), FileClass::WindowsImage { dll: false });
        let mut no_signature = pe(0x2022);
        no_signature[0x80] = b'X';
        assert_eq!(class(&no_signature), FileClass::Data);
        assert_eq!(class(&pe(0x2022)[..0x90]), FileClass::Data);
        let mut far = pe(0x2022);
        far[0x3c..0x40].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(class(&far), FileClass::Data);
        assert_eq!(class(b"MZ\0\0 short"), FileClass::Data);
    }
}
