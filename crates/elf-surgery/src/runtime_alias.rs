//! Runtime aliases: tiny shared objects that stand for a library under its
//! unversioned name (docs/elf-surgery.md, "Runtime aliases").
//!
//! An alias `libX.so` holds no code and no symbols: its dynamic section
//! names the real library's SONAME (`DT_NEEDED libX.so.7`), a `DT_RUNPATH`
//! that reaches it, and its own SONAME `libX.so`. `dlopen("libX.so")` loads
//! the alias, the loader loads (or finds already loaded) the real library
//! as its dependency, and `dlsym` on the alias's handle searches it: one
//! mapping of the library per process, a few hundred bytes per alias.

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

    /// Lays the file out: ELF header, program headers (`PT_LOAD` of the
    /// whole image, read-write because loaders before glibc 2.35 write
    /// into the dynamic section; `PT_DYNAMIC`; `PT_GNU_STACK` so no loader
    /// makes the stack executable), `.hash` with no symbols, `.dynsym` with
    /// the null symbol, `.dynstr`, `.dynamic`, then the section names and
    /// headers for tools that read sections.
    fn write(&self) -> Vec<u8> {
        let w = Writer {
            is64: self.class == ElfClass::Elf64,
            big: self.endianness == Endianness::Big,
        };
        let word = w.word_size();
        let (ehdr, phdr, shdr, sym, dyn_size) = if w.is64 {
            (64, 56, 64, 24, 16)
        } else {
            (52, 32, 40, 16, 8)
        };
        let align = |n: u64| n.div_ceil(word) * word;

        let hash_at = ehdr + PHNUM * phdr;
        let hash_len = 16;
        let dynsym_at = align(hash_at + hash_len);
        let dynstr_at = dynsym_at + sym;
        let mut dynstr = vec![0u8];
        let mut add = |s: &str| {
            let at = dynstr.len() as u64;
            dynstr.extend_from_slice(s.as_bytes());
            dynstr.push(0);
            at
        };
        let (needed, soname, runpath) = (add(&self.target), add(&self.name), add(&self.runpath));
        let dynstr_len = dynstr.len() as u64;
        let dynamic_at = align(dynstr_at + dynstr_len);
        let entries: [(u32, u64); 9] = [
            (elf::DT_NEEDED, needed),
            (elf::DT_SONAME, soname),
            (elf::DT_RUNPATH, runpath),
            (elf::DT_HASH, hash_at),
            (elf::DT_STRTAB, dynstr_at),
            (elf::DT_SYMTAB, dynsym_at),
            (elf::DT_STRSZ, dynstr_len),
            (elf::DT_SYMENT, sym),
            (elf::DT_NULL, 0),
        ];
        let dynamic_len = entries.len() as u64 * dyn_size;
        let image_end = dynamic_at + dynamic_len;
        let names = b"\0.hash\0.dynsym\0.dynstr\0.dynamic\0.shstrtab\0";
        let name_at = |name: &[u8]| {
            names
                .windows(name.len())
                .position(|w| w == name)
                .expect("the name is in the table") as u32
        };
        let names_at = image_end;
        let shoff = align(names_at + names.len() as u64);

        let mut out = Vec::with_capacity((shoff + u64::from(SHNUM) * shdr) as usize);
        // e_ident
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
        w.u16(&mut out, elf::ET_DYN);
        w.u16(&mut out, self.machine);
        w.u32(&mut out, u32::from(elf::EV_CURRENT));
        w.word(&mut out, 0); // e_entry
        w.word(&mut out, ehdr); // e_phoff
        w.word(&mut out, shoff);
        w.u32(&mut out, self.flags);
        w.u16(&mut out, ehdr as u16);
        w.u16(&mut out, phdr as u16);
        w.u16(&mut out, PHNUM as u16);
        w.u16(&mut out, shdr as u16);
        w.u16(&mut out, SHNUM);
        w.u16(&mut out, SHNUM - 1); // e_shstrndx

        let rw = elf::PF_R | elf::PF_W;
        let page = page_size(self.machine);
        w.segment(&mut out, elf::PT_LOAD, rw, 0, image_end, page);
        w.segment(&mut out, elf::PT_DYNAMIC, rw, dynamic_at, dynamic_len, word);
        w.segment(&mut out, elf::PT_GNU_STACK, rw, 0, 0, 16);

        // .hash: one bucket, one chain slot (the null symbol), both empty.
        for v in [1, 1, 0, 0] {
            w.u32(&mut out, v);
        }
        out.resize(dynsym_at as usize, 0);
        out.resize((dynsym_at + sym) as usize, 0); // the null symbol
        out.extend_from_slice(&dynstr);
        out.resize(dynamic_at as usize, 0);
        for (tag, value) in entries {
            w.word(&mut out, u64::from(tag));
            w.word(&mut out, value);
        }
        out.extend_from_slice(names);
        out.resize(shoff as usize, 0);

        let a = u64::from(elf::SHF_ALLOC);
        let sections = [
            // (name, type, flags, addr/offset, size, link, info, align, entsize)
            (0, elf::SHT_NULL, 0, 0, 0, 0, 0, 0, 0),
            (
                name_at(b".hash"),
                elf::SHT_HASH,
                a,
                hash_at,
                hash_len,
                2,
                0,
                4,
                4,
            ),
            (
                name_at(b".dynsym"),
                elf::SHT_DYNSYM,
                a,
                dynsym_at,
                sym,
                3,
                1,
                word,
                sym,
            ),
            (
                name_at(b".dynstr"),
                elf::SHT_STRTAB,
                a,
                dynstr_at,
                dynstr_len,
                0,
                0,
                1,
                0,
            ),
            (
                name_at(b".dynamic"),
                elf::SHT_DYNAMIC,
                a | u64::from(elf::SHF_WRITE),
                dynamic_at,
                dynamic_len,
                3,
                0,
                word,
                dyn_size,
            ),
            (
                name_at(b".shstrtab"),
                elf::SHT_STRTAB,
                0,
                names_at,
                names.len() as u64,
                0,
                0,
                1,
                0,
            ),
        ];
        for (name, sh_type, flags, at, size, link, info, align, entsize) in sections {
            // Allocated sections sit at the address equal to their offset.
            let addr = if flags & a != 0 { at } else { 0 };
            w.u32(&mut out, name);
            w.u32(&mut out, sh_type);
            w.word(&mut out, flags);
            w.word(&mut out, addr);
            w.word(&mut out, at);
            w.word(&mut out, size);
            w.u32(&mut out, link);
            w.u32(&mut out, info);
            w.word(&mut out, align);
            w.word(&mut out, entsize);
        }
        out
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
    fn word_size(self) -> u64 {
        if self.is64 { 8 } else { 4 }
    }

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
