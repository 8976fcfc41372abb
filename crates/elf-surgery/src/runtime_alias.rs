//! Runtime aliases: tiny shared objects that stand for a library under its
//! unversioned name (docs/elf-surgery.md, "Runtime aliases").
//!
//! An alias `libX.so` holds no code and no symbols: its dynamic section
//! names the real library's SONAME (`DT_NEEDED libX.so.7`), a `DT_RUNPATH`
//! that reaches it, and its own SONAME `libX.so`. `dlopen("libX.so")` loads
//! the alias, the loader loads (or finds already loaded) the real library
//! as its dependency, and `dlsym` on the alias's handle searches it: one
//! mapping of the library per process, a few hundred bytes per alias.
//!
//! The file is laid out here rather than by `object::write::elf::Writer`,
//! which would lay it out differently: its string tables
//! (`object::write::string::StringTable`) sort their strings from the end
//! to merge tails, so `.dynstr` would hold the three names in that order
//! instead of NEEDED, SONAME, RUNPATH, and `.shstrtab` its names reordered
//! likewise; every `d_val` and `sh_name` that points into them would move.
//! An alias's bytes are part of the packages a build writes, which must
//! stay byte for byte the same from one version of this crate to the
//! next; the writer also needs `object`'s `write` feature, which this
//! crate does not otherwise build. The layout is [`AliasLayout`]: six
//! small structures, each written at its offset.

use std::io::Cursor;

use object::elf;

use crate::error::{Error, ErrorKind, Result};
use crate::file::{ElfFile, ElfKind};
use crate::shape::{ElfClass, Endianness};

/// What an alias copies from the library it stands for: class, byte
/// order, machine and processor flags ([`ElfFile::library_shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LibraryShape {
    class: ElfClass,
    endianness: Endianness,
    machine: u16,
    flags: u32,
}

impl ElfFile {
    /// The shape a runtime alias standing for this file copies; `None`
    /// when it is not ELF.
    pub fn library_shape(&self) -> Option<LibraryShape> {
        Some(LibraryShape {
            class: self.class()?,
            endianness: self.endianness()?,
            machine: self.machine()?,
            flags: self.layout.as_ref()?.e_flags,
        })
    }
}

/// A planned alias: its name, the library it stands for and how it reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeAlias {
    name: String,
    target: String,
    runpath: String,
    class: ElfClass,
    endianness: Endianness,
    machine: u16,
    flags: u32,
}

/// Whether `name` is an unversioned library file name (`libX.so`).
pub fn is_unversioned_name(name: &str) -> bool {
    name.len() > "lib.so".len()
        && name.starts_with("lib")
        && name.as_bytes().ends_with(b".so")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-+.".contains(&b))
}

/// Whether `soname` is a versioned form of the unversioned `name`
/// (`libamdhip64.so.7` of `libamdhip64.so`): `name`, a dot, then dot-separated
/// numbers.
pub fn is_versioned_form(soname: &str, name: &str) -> bool {
    soname
        .strip_prefix(name)
        .and_then(|rest| rest.strip_prefix('.'))
        .is_some_and(|version| {
            version
                .split('.')
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// When `elf` is a runtime alias (the shape [`RuntimeAlias::bytes`]
/// writes: a shared object whose SONAME is the unversioned `file_name`
/// and whose one `DT_NEEDED` is a versioned form of it), the SONAME it
/// stands for.
pub fn alias_target<'a>(elf: &'a ElfFile, file_name: &str) -> Option<&'a str> {
    let [needed] = elf.needed() else {
        return None;
    };
    (elf.kind() == ElfKind::SharedObject
        && elf.soname() == Some(file_name)
        && is_unversioned_name(file_name)
        && is_versioned_form(needed, file_name))
    .then_some(needed.as_str())
}

fn invalid(what: String) -> Error {
    Error::new(ErrorKind::Alias(what))
}

impl RuntimeAlias {
    /// An alias named `name` for `library` (parsed from the real file),
    /// whose `DT_RUNPATH` is `runpath` (entries relative to `$ORIGIN`).
    ///
    /// The library must be a shared object whose SONAME is a versioned form
    /// of `name`; the alias takes its class, byte order, machine and flags.
    pub fn for_library(name: &str, library: &ElfFile, runpath: &str) -> Result<Self> {
        let (Some(soname), ElfKind::SharedObject, Some(shape)) =
            (library.soname(), library.kind(), library.library_shape())
        else {
            return Err(invalid(format!(
                "it is not a shared library with a SONAME; {name} can stand only for one"
            )));
        };
        Self::new(name, soname, shape, runpath)
    }

    /// An alias named `name` for the library whose SONAME is `soname` and
    /// whose shape is `shape` (facts gathered earlier, so the library is not
    /// read again).
    pub fn new(name: &str, soname: &str, shape: LibraryShape, runpath: &str) -> Result<Self> {
        if !is_unversioned_name(name) {
            return Err(invalid(format!(
                "{name:?} is not an unversioned library name; name the alias lib*.so"
            )));
        }
        if !is_versioned_form(soname, name) {
            return Err(invalid(format!(
                "its SONAME {soname} is not a versioned form of {name} ({name}.N)"
            )));
        }
        if runpath.is_empty()
            || runpath.bytes().any(|b| b == 0)
            || runpath.split(':').any(str::is_empty)
        {
            return Err(Error::new(ErrorKind::InvalidSearchPath(runpath.to_owned())));
        }
        Ok(Self {
            name: name.to_owned(),
            target: soname.to_owned(),
            runpath: runpath.to_owned(),
            class: shape.class,
            endianness: shape.endianness,
            machine: shape.machine,
            flags: shape.flags,
        })
    }

    /// The alias's file name and SONAME (`libamdhip64.so`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The SONAME it stands for (`libamdhip64.so.7`).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Its `DT_RUNPATH`.
    pub fn runpath(&self) -> &str {
        &self.runpath
    }

    /// The alias's bytes (the same for the same alias, on every host),
    /// read back by this crate's parser before they are returned.
    pub fn bytes(&self) -> Result<Vec<u8>> {
        let bytes = self.write();
        self.verify(&bytes)?;
        Ok(bytes)
    }

    fn verify(&self, bytes: &[u8]) -> Result<()> {
        let fail = |what: String| Error::new(ErrorKind::Verification(what));
        let back = ElfFile::parse(&mut Cursor::new(bytes))
            .map_err(|e| fail(format!("the alias does not parse: {e}")))?;
        let checks = [
            (back.kind() == ElfKind::SharedObject, "a shared object"),
            (back.soname() == Some(self.name.as_str()), "its SONAME"),
            (back.needed() == [self.target.clone()], "its NEEDED"),
            (back.runpath() == Some(self.runpath.as_str()), "its RUNPATH"),
            (back.rpath().is_none(), "no RPATH"),
            (back.class() == Some(self.class), "the library's class"),
            (
                back.endianness() == Some(self.endianness),
                "the library's byte order",
            ),
            (
                back.machine() == Some(self.machine),
                "the library's machine",
            ),
            (
                alias_target(&back, &self.name) == Some(self.target.as_str()),
                "an alias's shape",
            ),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some((_, what)) => Err(fail(format!("the alias {} lacks {what}", self.name))),
            None => Ok(()),
        }
    }

    /// Lays the file out ([`AliasLayout`]) and writes it: ELF header,
    /// program headers (`PT_LOAD` of the whole image, read-write because
    /// loaders before glibc 2.35 write into the dynamic section;
    /// `PT_DYNAMIC`; `PT_GNU_STACK` so no loader makes the stack
    /// executable), `.hash` with no symbols, `.dynsym` with the null symbol,
    /// `.dynstr`, `.dynamic`, then the section names and headers for tools
    /// that read sections.
    fn write(&self) -> Vec<u8> {
        let w = Writer {
            is64: self.class == ElfClass::Elf64,
            big: self.endianness == Endianness::Big,
        };
        let l = AliasLayout::new(w, [&self.target, &self.name, &self.runpath]);
        let mut out = Vec::with_capacity(l.len() as usize);
        self.write_file_header(w, &l, &mut out);
        self.write_program_headers(w, &l, &mut out);
        l.write_image(w, &mut out);
        l.write_section_headers(w, &mut out);
        debug_assert_eq!(out.len() as u64, l.len());
        out
    }

    fn write_file_header(&self, w: Writer, l: &AliasLayout, out: &mut Vec<u8>) {
        out.extend_from_slice(&elf::ELFMAG);
        out.push(if w.is64 {
            elf::ELFCLASS64
        } else {
            elf::ELFCLASS32
        });
        out.push(if w.big {
            elf::ELFDATA2MSB
        } else {
            elf::ELFDATA2LSB
        });
        out.push(elf::EV_CURRENT);
        out.resize(16, 0);
        w.u16(out, elf::ET_DYN);
        w.u16(out, self.machine);
        w.u32(out, u32::from(elf::EV_CURRENT));
        w.word(out, 0); // e_entry
        w.word(out, l.size.ehdr); // e_phoff
        w.word(out, l.shoff);
        w.u32(out, self.flags);
        w.u16(out, l.size.ehdr as u16);
        w.u16(out, l.size.phdr as u16);
        w.u16(out, PHNUM as u16);
        w.u16(out, l.size.shdr as u16);
        w.u16(out, SHNUM);
        w.u16(out, SHNUM - 1); // e_shstrndx
    }

    fn write_program_headers(&self, w: Writer, l: &AliasLayout, out: &mut Vec<u8>) {
        let rw = elf::PF_R | elf::PF_W;
        let page = page_size(self.machine);
        let dynamic_len = l.dynamic_len();
        w.segment(out, elf::PT_LOAD, rw, 0, l.image_end(), page);
        w.segment(
            out,
            elf::PT_DYNAMIC,
            rw,
            l.dynamic_at,
            dynamic_len,
            l.size.word,
        );
        w.segment(out, elf::PT_GNU_STACK, rw, 0, 0, 16);
    }
}

/// The sizes of one ELF class's structures.
#[derive(Clone, Copy)]
struct Sizes {
    word: u64,
    ehdr: u64,
    phdr: u64,
    shdr: u64,
    sym: u64,
    dyn_entry: u64,
}

impl Sizes {
    fn of(w: Writer) -> Self {
        if w.is64 {
            Self {
                word: 8,
                ehdr: 64,
                phdr: 56,
                shdr: 64,
                sym: 24,
                dyn_entry: 16,
            }
        } else {
            Self {
                word: 4,
                ehdr: 52,
                phdr: 32,
                shdr: 40,
                sym: 16,
                dyn_entry: 8,
            }
        }
    }
}

/// The section names, in the order of the section headers after the null one.
const SECTION_NAMES: &[u8] = b"\0.hash\0.dynsym\0.dynstr\0.dynamic\0.shstrtab\0";
/// `.hash`: one bucket and one chain slot (the null symbol), both empty.
const HASH_LEN: u64 = 16;

/// Where each part of an alias lies. The image (headers to `.dynamic`) is
/// one `PT_LOAD` at address 0, so an allocated part's address is its offset.
struct AliasLayout {
    size: Sizes,
    hash_at: u64,
    dynsym_at: u64,
    dynstr_at: u64,
    /// NUL, then the NEEDED target, the SONAME and the RUNPATH, in that order.
    dynstr: Vec<u8>,
    dynamic_at: u64,
    entries: [(u32, u64); 9],
    shoff: u64,
}

impl AliasLayout {
    /// `strings`: the NEEDED target, the SONAME and the RUNPATH.
    fn new(w: Writer, strings: [&str; 3]) -> Self {
        let size = Sizes::of(w);
        let align = |n: u64| n.div_ceil(size.word) * size.word;
        let hash_at = size.ehdr + PHNUM * size.phdr;
        let dynsym_at = align(hash_at + HASH_LEN);
        let dynstr_at = dynsym_at + size.sym;
        let mut dynstr = vec![0u8];
        let [needed, soname, runpath] = strings.map(|s| {
            let at = dynstr.len() as u64;
            dynstr.extend_from_slice(s.as_bytes());
            dynstr.push(0);
            at
        });
        let dynstr_len = dynstr.len() as u64;
        let dynamic_at = align(dynstr_at + dynstr_len);
        let entries = [
            (elf::DT_NEEDED, needed),
            (elf::DT_SONAME, soname),
            (elf::DT_RUNPATH, runpath),
            (elf::DT_HASH, hash_at),
            (elf::DT_STRTAB, dynstr_at),
            (elf::DT_SYMTAB, dynsym_at),
            (elf::DT_STRSZ, dynstr_len),
            (elf::DT_SYMENT, size.sym),
            (elf::DT_NULL, 0),
        ];
        let image_end = dynamic_at + entries.len() as u64 * size.dyn_entry;
        let shoff = align(image_end + SECTION_NAMES.len() as u64);
        Self {
            size,
            hash_at,
            dynsym_at,
            dynstr_at,
            dynstr,
            dynamic_at,
            entries,
            shoff,
        }
    }

    fn dynamic_len(&self) -> u64 {
        self.entries.len() as u64 * self.size.dyn_entry
    }

    /// The end of the loaded image, where the section names start.
    fn image_end(&self) -> u64 {
        self.dynamic_at + self.dynamic_len()
    }

    /// The file's length.
    fn len(&self) -> u64 {
        self.shoff + u64::from(SHNUM) * self.size.shdr
    }

    /// `.hash`, `.dynsym`, `.dynstr`, `.dynamic` and the section names,
    /// each at its offset.
    fn write_image(&self, w: Writer, out: &mut Vec<u8>) {
        for v in [1, 1, 0, 0] {
            w.u32(out, v);
        }
        out.resize(self.dynsym_at as usize, 0);
        out.resize((self.dynsym_at + self.size.sym) as usize, 0); // the null symbol
        out.extend_from_slice(&self.dynstr);
        out.resize(self.dynamic_at as usize, 0);
        for (tag, value) in self.entries {
            w.word(out, u64::from(tag));
            w.word(out, value);
        }
        out.extend_from_slice(SECTION_NAMES);
        out.resize(self.shoff as usize, 0);
    }

    fn write_section_headers(&self, w: Writer, out: &mut Vec<u8>) {
        let name_at = |name: &[u8]| {
            SECTION_NAMES
                .windows(name.len())
                .position(|w| w == name)
                .expect("the name is in the table") as u32
        };
        let (word, sym, dyn_entry) = (self.size.word, self.size.sym, self.size.dyn_entry);
        let a = u64::from(elf::SHF_ALLOC);
        let aw = a | u64::from(elf::SHF_WRITE);
        let dynstr_len = self.dynstr.len() as u64;
        let names_len = SECTION_NAMES.len() as u64;
        #[rustfmt::skip]
        let sections = [
            // (name, type, flags, offset, size, link, info, align, entsize)
            (0, elf::SHT_NULL, 0, 0, 0, 0, 0, 0, 0),
            (name_at(b".hash"), elf::SHT_HASH, a, self.hash_at, HASH_LEN, 2, 0, 4, 4),
            (name_at(b".dynsym"), elf::SHT_DYNSYM, a, self.dynsym_at, sym, 3, 1, word, sym),
            (name_at(b".dynstr"), elf::SHT_STRTAB, a, self.dynstr_at, dynstr_len, 0, 0, 1, 0),
            (name_at(b".dynamic"), elf::SHT_DYNAMIC, aw, self.dynamic_at, self.dynamic_len(), 3, 0, word, dyn_entry),
            (name_at(b".shstrtab"), elf::SHT_STRTAB, 0, self.image_end(), names_len, 0, 0, 1, 0),
        ];
        for (name, sh_type, flags, at, size, link, info, align, entsize) in sections {
            // Allocated sections sit at the address equal to their offset.
            let addr = if flags & a != 0 { at } else { 0 };
            w.u32(out, name);
            w.u32(out, sh_type);
            w.word(out, flags);
            w.word(out, addr);
            w.word(out, at);
            w.word(out, size);
            w.u32(out, link);
            w.u32(out, info);
            w.word(out, align);
            w.word(out, entsize);
        }
    }
}

/// The largest page size the machine's loaders use: a `PT_LOAD` aligned
/// less is refused ("ELF load command alignment not page-aligned").
fn page_size(machine: u16) -> u64 {
    match machine {
        elf::EM_X86_64 | elf::EM_386 => 0x1000,
        _ => 0x10000,
    }
}

/// Program headers of an alias: `PT_LOAD`, `PT_DYNAMIC`, `PT_GNU_STACK`.
const PHNUM: u64 = 3;
/// Section headers: null, `.hash`, `.dynsym`, `.dynstr`, `.dynamic`, `.shstrtab`.
const SHNUM: u16 = 6;

/// Encodes fields for one class and byte order.
#[derive(Clone, Copy)]
struct Writer {
    is64: bool,
    big: bool,
}

impl Writer {
    fn u16(self, out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    fn u32(self, out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    fn u64(self, out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    /// A class-sized word; every value written fits in 32 bits.
    fn word(self, out: &mut Vec<u8>, v: u64) {
        if self.is64 {
            self.u64(out, v);
        } else {
            self.u32(out, u32::try_from(v).expect("alias offsets fit in 32 bits"));
        }
    }

    fn segment(self, out: &mut Vec<u8>, p_type: u32, flags: u32, at: u64, size: u64, align: u64) {
        self.u32(out, p_type);
        if self.is64 {
            self.u32(out, flags);
        }
        for v in [at, at, at, size, size] {
            // offset, vaddr, paddr, filesz, memsz
            self.word(out, v);
        }
        if !self.is64 {
            self.u32(out, flags);
        }
        self.word(out, align);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_forms() {
        assert!(is_versioned_form("libamdhip64.so.7", "libamdhip64.so"));
        assert!(is_versioned_form("libfoo.so.1.2.3", "libfoo.so"));
        assert!(!is_versioned_form("libfoo.so", "libfoo.so"));
        assert!(!is_versioned_form("libfoo.so.", "libfoo.so"));
        assert!(!is_versioned_form("libfoo.so.1a", "libfoo.so"));
        assert!(!is_versioned_form("libfoobar.so.1", "libfoo.so"));
        assert!(!is_versioned_form("libfoo.so.1..2", "libfoo.so"));
        assert!(is_unversioned_name("libhsa-amd-aqlprofile64.so"));
        assert!(!is_unversioned_name("lib.so"));
        assert!(!is_unversioned_name("libx.so.1"));
        assert!(!is_unversioned_name("dir/libx.so"));
    }
}
