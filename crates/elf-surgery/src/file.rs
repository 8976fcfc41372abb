//! [`ElfFile`]: what a file is ([`ElfKind`]) and the dynamic facts a
//! packager needs (SONAME, NEEDED, RPATH, RUNPATH, interpreter, and the
//! flags and TLS segment that decide whether a library can be `dlopen`ed).

use std::fs;
use std::io::{Read, Seek};
use std::path::Path;

use object::elf;

use crate::error::{Result, malformed};
use crate::shape::{self, ElfClass, Endianness, Ident, Layout};
use crate::source::{ReadAt, Source, Stamp, Stamping};

/// What kind of file this is, decided from its bytes alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElfKind {
    /// Not an ELF file (too short, or no `\x7fELF` magic).
    NotElf,
    /// An object file (`ET_REL`).
    Relocatable,
    /// An executable without a dynamic section or interpreter, including
    /// static PIE: it needs no search path.
    StaticExecutable,
    /// An executable run through the dynamic loader (`ET_EXEC` with
    /// `PT_DYNAMIC`, or a PIE: `ET_DYN` with `DF_1_PIE`, or with `PT_INTERP`
    /// and no SONAME).
    DynamicExecutable,
    /// A shared library (`ET_DYN` that is not an executable; a library that
    /// can also be run, like `libc.so.6`, counts as a library).
    SharedObject,
    /// An AMDGPU code object (`EM_AMDGPU`): data to the host, never edited.
    DeviceCode,
    /// Another ELF type (core dump, processor-specific).
    Other,
}

/// A parsed ELF file: its kind, identity and dynamic facts.
///
/// Parsing reads a bounded set of ranges (headers, tables, the dynamic
/// section and the strings it names), never the whole file.
///
/// ```no_run
/// let elf = elf_surgery::ElfFile::open("/usr/lib/x86_64-linux-gnu/libz.so.1".as_ref())?;
/// assert_eq!(elf.kind(), elf_surgery::ElfKind::SharedObject);
/// assert_eq!(elf.soname(), Some("libz.so.1"));
/// # Ok::<(), elf_surgery::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ElfFile {
    kind: ElfKind,
    class: Option<ElfClass>,
    endianness: Option<Endianness>,
    machine: Option<u16>,
    soname: Option<String>,
    needed: Vec<String>,
    rpath: Option<String>,
    runpath: Option<String>,
    interpreter: Option<String>,
    pub(crate) raw: RawFacts,
    pub(crate) layout: Option<Layout>,
    /// The bytes this was parsed from, checked whenever the caller hands
    /// the source again.
    pub(crate) stamp: Stamp,
}

/// Exact bytes of the search paths (the public getters are lossy UTF-8).
#[derive(Clone, Debug, Default)]
pub(crate) struct RawFacts {
    pub(crate) rpath: Option<Vec<u8>>,
    pub(crate) runpath: Option<Vec<u8>>,
    pub(crate) soname: Option<Vec<u8>>,
    pub(crate) needed: Vec<Vec<u8>>,
    pub(crate) interpreter: Option<Vec<u8>>,
}

impl ElfFile {
    /// Parses `source` (any `Read + Seek`, usually a [`fs::File`]).
    ///
    /// A file that is not ELF parses successfully as [`ElfKind::NotElf`];
    /// an ELF file whose structures are truncated or contradictory is an error.
    pub fn parse<R: Read + Seek>(source: &mut R) -> Result<Self> {
        let mut src = Source::new(source)?;
        Self::parse_at(&mut src)
    }

    /// Opens and parses the file at `path`; errors name the path.
    pub fn open(path: &Path) -> Result<Self> {
        let mut file = fs::File::open(path).map_err(|e| crate::Error::from(e).at(path))?;
        Self::parse(&mut file).map_err(|e| e.at(path))
    }

    pub(crate) fn parse_at(src: &mut impl ReadAt) -> Result<Self> {
        let mut stamping = Stamping::new(src);
        let mut parsed = Self::parse_stamped(&mut stamping)?;
        parsed.stamp = stamping.into_stamp();
        Ok(parsed)
    }

    /// Checks that `src` is the file this was parsed from: same length,
    /// same bytes wherever the parse read.
    pub(crate) fn check_source(&self, src: &mut impl ReadAt) -> Result<()> {
        self.stamp.check(src)
    }

    fn parse_stamped(src: &mut impl ReadAt) -> Result<Self> {
        let decoder = match shape::ident(src)? {
            Ident::NotElf => return Ok(Self::not_elf()),
            Ident::Elf(d) => d,
        };
        let layout = shape::parse(src, decoder)?;
        let raw = read_facts(src, &layout)?;
        let kind = kind_of(&layout, &raw);
        let lossy = |b: &Vec<u8>| String::from_utf8_lossy(b).into_owned();
        Ok(Self {
            kind,
            class: Some(decoder.class),
            endianness: Some(decoder.endian),
            machine: Some(layout.machine),
            soname: raw.soname.as_ref().map(lossy),
            needed: raw.needed.iter().map(lossy).collect(),
            rpath: raw.rpath.as_ref().map(lossy),
            runpath: raw.runpath.as_ref().map(lossy),
            interpreter: raw.interpreter.as_ref().map(lossy),
            raw,
            layout: Some(layout),
            stamp: Stamp::default(),
        })
    }

    fn not_elf() -> Self {
        Self {
            kind: ElfKind::NotElf,
            class: None,
            endianness: None,
            machine: None,
            soname: None,
            needed: Vec::new(),
            rpath: None,
            runpath: None,
            interpreter: None,
            raw: RawFacts::default(),
            layout: None,
            stamp: Stamp::default(),
        }
    }

    /// What kind of file this is.
    pub fn kind(&self) -> ElfKind {
        self.kind
    }

    /// ELF class; `None` when not ELF.
    pub fn class(&self) -> Option<ElfClass> {
        self.class
    }

    /// Byte order; `None` when not ELF.
    pub fn endianness(&self) -> Option<Endianness> {
        self.endianness
    }

    /// Raw `e_machine` (e.g. `object::elf::EM_X86_64`); `None` when not ELF.
    pub fn machine(&self) -> Option<u16> {
        self.machine
    }

    /// Whether the file has a dynamic section (`PT_DYNAMIC`).
    pub fn has_dynamic(&self) -> bool {
        self.layout.as_ref().is_some_and(|l| l.dynamic.is_some())
    }

    /// `DT_SONAME`.
    pub fn soname(&self) -> Option<&str> {
        self.soname.as_deref()
    }

    /// `DT_NEEDED` entries, in file order.
    pub fn needed(&self) -> &[String] {
        &self.needed
    }

    /// `DT_RPATH` (searched before `LD_LIBRARY_PATH`, ignored when a
    /// `DT_RUNPATH` exists).
    pub fn rpath(&self) -> Option<&str> {
        self.rpath.as_deref()
    }

    /// `DT_RUNPATH` (searched after `LD_LIBRARY_PATH`).
    pub fn runpath(&self) -> Option<&str> {
        self.runpath.as_deref()
    }

    /// The program interpreter named by `PT_INTERP`.
    pub fn interpreter(&self) -> Option<&str> {
        self.interpreter.as_deref()
    }

    /// `DT_FLAGS` (`DF_STATIC_TLS`, `DF_BIND_NOW`, ...); 0 when absent.
    pub fn dynamic_flags(&self) -> u64 {
        self.dynamic_value(elf::DT_FLAGS)
    }

    /// `DT_FLAGS_1` (`DF_1_NOOPEN`, `DF_1_PIE`, ...); 0 when absent.
    pub fn dynamic_flags_1(&self) -> u64 {
        self.dynamic_value(elf::DT_FLAGS_1)
    }

    /// The memory size of the `PT_TLS` segment (the thread-local storage
    /// each thread gets), `None` when the file has no thread-local data.
    pub fn tls_size(&self) -> Option<u64> {
        self.layout
            .as_ref()?
            .segments
            .iter()
            .find(|s| s.p_type == elf::PT_TLS)
            .map(|s| s.memsz)
    }

    fn dynamic_value(&self, tag: u32) -> u64 {
        self.layout
            .as_ref()
            .and_then(|l| l.dynamic.as_ref())
            .and_then(|d| d.value(tag))
            .unwrap_or(0)
    }
}

/// Decides what a file is from the bytes at the start of `source`.
pub fn classify<R: Read + Seek>(source: &mut R) -> Result<ElfKind> {
    ElfFile::parse(source).map(|f| f.kind())
}

fn kind_of(layout: &Layout, raw: &RawFacts) -> ElfKind {
    if layout.machine == elf::EM_AMDGPU {
        return ElfKind::DeviceCode;
    }
    let has_interp = layout.segments.iter().any(|s| s.p_type == elf::PT_INTERP);
    let pie = layout
        .dynamic
        .as_ref()
        .and_then(|d| d.value(elf::DT_FLAGS_1))
        .is_some_and(|f| f & u64::from(elf::DF_1_PIE) != 0);
    match layout.e_type {
        elf::ET_REL => ElfKind::Relocatable,
        elf::ET_EXEC if has_dynamic_segment(layout) || has_interp => ElfKind::DynamicExecutable,
        elf::ET_EXEC => ElfKind::StaticExecutable,
        elf::ET_DYN if pie && has_interp => ElfKind::DynamicExecutable,
        elf::ET_DYN if pie => ElfKind::StaticExecutable,
        elf::ET_DYN if has_interp && raw.soname.is_none() => ElfKind::DynamicExecutable,
        elf::ET_DYN => ElfKind::SharedObject,
        _ => ElfKind::Other,
    }
}

pub(crate) fn has_dynamic_segment(layout: &Layout) -> bool {
    layout.segments.iter().any(|s| s.p_type == elf::PT_DYNAMIC)
}

fn read_facts(src: &mut impl ReadAt, layout: &Layout) -> Result<RawFacts> {
    let mut raw = RawFacts::default();
    if let Some(interp) = layout.segments.iter().find(|s| s.p_type == elf::PT_INTERP) {
        const MAX_INTERP: u64 = 4096;
        if interp.filesz > MAX_INTERP {
            return Err(malformed(format!(
                "PT_INTERP is {} bytes long",
                interp.filesz
            )));
        }
        let mut bytes = src.read_vec(interp.offset, interp.filesz, "PT_INTERP")?;
        if let Some(nul) = bytes.iter().position(|&b| b == 0) {
            bytes.truncate(nul);
        }
        raw.interpreter = Some(bytes);
    }
    let Some(dynamic) = &layout.dynamic else {
        return Ok(raw);
    };
    let string_tags = [
        elf::DT_NEEDED,
        elf::DT_SONAME,
        elf::DT_RPATH,
        elf::DT_RUNPATH,
    ];
    let wants_strings = dynamic
        .entries
        .iter()
        .any(|(t, _)| string_tags.iter().any(|s| u64::from(*s) == *t));
    let Some(strtab) = dynamic.strtab else {
        if wants_strings {
            return Err(malformed(
                "the dynamic section names strings but has no DT_STRTAB",
            ));
        }
        return Ok(raw);
    };
    for &(tag, val) in &dynamic.entries {
        let Ok(tag) = u32::try_from(tag) else {
            continue;
        };
        let slot = match tag {
            elf::DT_NEEDED => {
                raw.needed.push(shape::read_string(src, &strtab, val)?);
                continue;
            }
            elf::DT_SONAME => &mut raw.soname,
            elf::DT_RPATH => &mut raw.rpath,
            elf::DT_RUNPATH => &mut raw.runpath,
            _ => continue,
        };
        // The loader honours the first entry of each tag; so do we.
        if slot.is_none() {
            *slot = Some(shape::read_string(src, &strtab, val)?);
        }
    }
    Ok(raw)
}
