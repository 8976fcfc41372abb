//! What each source file is, read from its bytes (SPEC §5: file type comes
//! from the bytes, never from the name).

use std::collections::HashMap;
use std::io::{Cursor, Read};

use artifacts::{Entry, Source};
use elf_surgery::{ElfFile, ElfKind};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::Error;

/// `EM_X86_64` and `EM_AARCH64`: the machines whose ELF files are host code.
const HOST_MACHINES: [u16; 2] = [62, 183];

/// What a file is, as far as packaging cares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "class")]
pub enum FileClass {
    /// A host shared object, with its SONAME when it has one.
    SharedObject {
        /// `DT_SONAME`.
        soname: Option<String>,
    },
    /// A host executable run through the dynamic loader.
    Executable,
    /// A host executable without a dynamic section: no search path needed.
    StaticExecutable,
    /// ELF that is data to us: AMDGPU code objects, object files, other
    /// machines.
    DeviceCode,
    /// A text file starting with `#!`.
    Script,
    /// Anything else.
    Data,
}

impl FileClass {
    /// Whether the file is host ELF code that gets search-path edits.
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

/// Facts for every file source of a build, keyed by where the bytes live.
#[derive(Debug, Default)]
pub struct Facts {
    classes: HashMap<String, FileClass>,
}

/// The key of a source: its file, plus the offset inside an archive.
fn key(source: &Source) -> String {
    match source {
        Source::File(path) => path.display().to_string(),
        Source::ArchiveMember {
            archive, offset, ..
        } => {
            format!("{}#{offset}", archive.path.display())
        }
    }
}

impl Facts {
    /// Classifies every file among `entries` not classified yet, in
    /// parallel; each file's headers are read once for the whole build.
    pub fn gather<'a>(
        &mut self,
        entries: impl IntoIterator<Item = &'a Entry>,
    ) -> Result<(), Error> {
        let mut todo: Vec<(String, &Source)> = entries
            .into_iter()
            .filter_map(Entry::source)
            .map(|s| (key(s), s))
            .filter(|(k, _)| !self.classes.contains_key(k))
            .collect();
        todo.sort_by(|a, b| a.0.cmp(&b.0));
        todo.dedup_by(|a, b| a.0 == b.0);
        let found: Vec<(String, FileClass)> = todo
            .into_par_iter()
            .map(|(k, source)| classify_source(source).map(|c| (k, c)))
            .collect::<Result<_, _>>()?;
        self.classes.extend(found);
        Ok(())
    }

    /// The class of a file entry gathered earlier.
    pub fn of(&self, entry: &Entry) -> Option<&FileClass> {
        entry.source().and_then(|s| self.classes.get(&key(s)))
    }
}

fn classify_source(source: &Source) -> Result<FileClass, Error> {
    let io = |e: std::io::Error| Error::Read {
        path: source.path().to_path_buf(),
        source: e,
    };
    let mut reader = source.open()?;
    let mut head = [0u8; 4];
    let n = read_up_to(&mut reader, &mut head).map_err(io)?;
    let head = &head[..n];
    if head.starts_with(b"#!") {
        return Ok(FileClass::Script);
    }
    if head != b"\x7fELF" {
        return Ok(FileClass::Data);
    }
    let elf = match source {
        Source::File(path) => ElfFile::open(path),
        Source::ArchiveMember { .. } => {
            // Archive members cannot seek: parse from memory (host ELF in
            // archives is read whole once here).
            let mut bytes = head.to_vec();
            reader.read_to_end(&mut bytes).map_err(io)?;
            ElfFile::parse(&mut Cursor::new(bytes))
        }
    };
    let elf = elf.map_err(|e| Error::Elf {
        path: source.path().to_path_buf(),
        source: e,
    })?;
    Ok(class_of(&elf))
}

fn class_of(elf: &ElfFile) -> FileClass {
    let host = elf.machine().is_some_and(|m| HOST_MACHINES.contains(&m));
    match elf.kind() {
        ElfKind::SharedObject if host => FileClass::SharedObject {
            soname: elf.soname().map(str::to_owned),
        },
        ElfKind::DynamicExecutable if host => FileClass::Executable,
        ElfKind::StaticExecutable if host => FileClass::StaticExecutable,
        ElfKind::NotElf => FileClass::Data,
        _ => FileClass::DeviceCode,
    }
}

fn read_up_to(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
