//! Hand-made shared objects of every class and byte order (no compiler on
//! a build machine makes a big-endian file), edited by the crate and read
//! back by an independent reader (`object`'s typed `read::elf` views) and
//! by `readelf`.

use std::io::Cursor;

use object::elf;
use object::read::elf::{Dyn as _, FileHeader, ProgramHeader as _, SectionHeader as _};

use crate::{ElfClass, ElfFile, ElfKind, Endianness, ErrorKind, SearchPathEdit, Unchanged};

/// The shape of a hand-made shared object: `libhand.so.1`, needing
/// `libc.so.6`, with an optional `RUNPATH` of `$ORIGIN/../lib` and a
/// build-host directory.
#[derive(Clone, Copy, Debug)]
struct HandMade {
    class: ElfClass,
    endian: Endianness,
    machine: u16,
    /// Whether it has a `DT_RUNPATH` (without one an edit adds an entry).
    runpath: bool,
    /// `DT_NULL` slots after the terminator.
    spare_slots: usize,
    /// The address the file is mapped at (page aligned).
    base: u64,
}

const DYNSTR: &[u8] = b"\0libc.so.6\0libhand.so.1\0$ORIGIN/../lib:/build/host/lib\0";
const NEEDED_AT: u64 = 1;
const SONAME_AT: u64 = 11;
const RUNPATH_AT: u64 = 24;
const SHSTRTAB: &[u8] = b"\0.dynstr\0.dynamic\0.shstrtab\0";
const PAGE: u64 = 0x1000;

/// Writes fields in one class's layout and one byte order, independently
/// of the crate's own encoder.
struct Out {
    class: ElfClass,
    endian: Endianness,
    bytes: Vec<u8>,
}

impl Out {
    fn is64(&self) -> bool {
        self.class == ElfClass::Elf64
    }

    fn u16(&mut self, v: u16) {
        let b = match self.endian {
            Endianness::Little => v.to_le_bytes(),
            Endianness::Big => v.to_be_bytes(),
        };
        self.bytes.extend_from_slice(&b);
    }

    fn u32(&mut self, v: u32) {
        let b = match self.endian {
            Endianness::Little => v.to_le_bytes(),
            Endianness::Big => v.to_be_bytes(),
        };
        self.bytes.extend_from_slice(&b);
    }

    fn u64(&mut self, v: u64) {
        let b = match self.endian {
            Endianness::Little => v.to_le_bytes(),
            Endianness::Big => v.to_be_bytes(),
        };
        self.bytes.extend_from_slice(&b);
    }

    /// `Elf32_Addr`/`Elf64_Addr` and the other class-sized words.
    fn word(&mut self, v: u64) {
        if self.is64() {
            self.u64(v);
        } else {
            self.u32(u32::try_from(v).expect("a 32-bit value"));
        }
    }

    fn pad_to(&mut self, at: u64) {
        assert!(self.bytes.len() as u64 <= at, "layout overlaps at {at:#x}");
        self.bytes.resize(at as usize, 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn phdr(&mut self, p_type: u32, flags: u32, offset: u64, vaddr: u64, size: u64, align: u64) {
        self.u32(p_type);
        if self.is64() {
            self.u32(flags);
        }
        for v in [offset, vaddr, vaddr, size, size] {
            self.word(v);
        }
        if !self.is64() {
            self.u32(flags);
        }
        self.word(align);
    }

    #[allow(clippy::too_many_arguments)]
    fn shdr(&mut self, name: u32, sh_type: u32, flags: u64, addr: u64, offset: u64, size: u64) {
        let (link, entsize) = if sh_type == elf::SHT_DYNAMIC {
            (1, if self.is64() { 16 } else { 8 })
        } else {
            (0, 0)
        };
        self.u32(name);
        self.u32(sh_type);
        self.word(flags);
        self.word(addr);
        self.word(offset);
        self.word(size);
        self.u32(link);
        self.u32(0);
        self.word(1);
        self.word(entsize);
    }
}

impl HandMade {
    fn new(class: ElfClass, endian: Endianness, machine: u16) -> Self {
        Self {
            class,
            endian,
            machine,
            runpath: true,
            spare_slots: 0,
            base: 0,
        }
    }

    fn without_runpath(mut self) -> Self {
        self.runpath = false;
        self
    }

    fn with_spare_slots(mut self, n: usize) -> Self {
        self.spare_slots = n;
        self
    }

    fn at(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// The file: ELF header, `PT_PHDR`, a read-only `PT_LOAD` holding the
    /// headers and `.dynstr`, a writable `PT_LOAD` holding `.dynamic` one
    /// page further, `PT_DYNAMIC`, then `.shstrtab` and the section headers.
    fn build(self) -> Vec<u8> {
        let is64 = self.class == ElfClass::Elf64;
        let (ehdr, phdr, shdr, dyn_size) = if is64 {
            (64, 56, 64, 16)
        } else {
            (52, 32, 40, 8)
        };
        let phnum = 4u64;
        let phoff = ehdr;
        let dynstr_at = (phoff + phnum * phdr).next_multiple_of(8);
        let text_len = dynstr_at + DYNSTR.len() as u64;
        let mut entries = vec![(elf::DT_NEEDED, NEEDED_AT), (elf::DT_SONAME, SONAME_AT)];
        if self.runpath {
            entries.push((elf::DT_RUNPATH, RUNPATH_AT));
        }
        entries.push((elf::DT_STRTAB, self.base + dynstr_at));
        entries.push((elf::DT_STRSZ, DYNSTR.len() as u64));
        let slots = entries.len() as u64 + 1 + self.spare_slots as u64;
        let dynamic_at = PAGE;
        let dynamic_len = slots * dyn_size;
        let dynamic_vaddr = self.base + 2 * PAGE;
        let shstrtab_at = dynamic_at + dynamic_len;
        let shoff = (shstrtab_at + SHSTRTAB.len() as u64).next_multiple_of(8);

        let mut out = Out {
            class: self.class,
            endian: self.endian,
            bytes: Vec::new(),
        };
        out.bytes.extend_from_slice(&elf::ELFMAG);
        out.bytes.push(if is64 {
            elf::ELFCLASS64
        } else {
            elf::ELFCLASS32
        });
        out.bytes.push(match self.endian {
            Endianness::Little => elf::ELFDATA2LSB,
            Endianness::Big => elf::ELFDATA2MSB,
        });
        out.bytes.push(elf::EV_CURRENT);
        out.pad_to(16);
        out.u16(elf::ET_DYN);
        out.u16(self.machine);
        out.u32(u32::from(elf::EV_CURRENT));
        out.word(0); // e_entry
        out.word(phoff);
        out.word(shoff);
        out.u32(0); // e_flags
        for v in [ehdr, phdr, phnum, shdr, 4, 3] {
            out.u16(u16::try_from(v).unwrap());
        }
        assert_eq!(out.bytes.len() as u64, ehdr);
        let (r, rx, rw) = (elf::PF_R, elf::PF_R | elf::PF_X, elf::PF_R | elf::PF_W);
        out.phdr(elf::PT_PHDR, r, phoff, self.base + phoff, phnum * phdr, 8);
        out.phdr(elf::PT_LOAD, rx, 0, self.base, text_len, PAGE);
        out.phdr(
            elf::PT_LOAD,
            rw,
            dynamic_at,
            dynamic_vaddr,
            dynamic_len,
            PAGE,
        );
        out.phdr(
            elf::PT_DYNAMIC,
            rw,
            dynamic_at,
            dynamic_vaddr,
            dynamic_len,
            8,
        );
        out.pad_to(dynstr_at);
        out.bytes.extend_from_slice(DYNSTR);
        out.pad_to(dynamic_at);
        for (tag, value) in &entries {
            out.word(u64::from(*tag));
            out.word(*value);
        }
        out.pad_to(dynamic_at + dynamic_len);
        out.bytes.extend_from_slice(SHSTRTAB);
        out.pad_to(shoff);
        let alloc = u64::from(elf::SHF_ALLOC);
        let alloc_write = u64::from(elf::SHF_ALLOC | elf::SHF_WRITE);
        out.shdr(0, elf::SHT_NULL, 0, 0, 0, 0);
        let dynstr_vaddr = self.base + dynstr_at;
        let dynstr_len = DYNSTR.len() as u64;
        out.shdr(
            1,
            elf::SHT_STRTAB,
            alloc,
            dynstr_vaddr,
            dynstr_at,
            dynstr_len,
        );
        out.shdr(
            9,
            elf::SHT_DYNAMIC,
            alloc_write,
            dynamic_vaddr,
            dynamic_at,
            dynamic_len,
        );
        let shstrtab_len = SHSTRTAB.len() as u64;
        out.shdr(18, elf::SHT_STRTAB, 0, 0, shstrtab_at, shstrtab_len);
        out.bytes
    }
}

/// The edit the build makes: the build host's directory out, one
/// `$ORIGIN` entry in, stored as `DT_RPATH`.
fn request() -> SearchPathEdit {
    SearchPathEdit::append(["$ORIGIN/../x/lib"])
        .remove(["/build/host/lib"])
        .force_rpath()
}

/// `bytes` edited by `request`, and the edit's reason to change nothing.
fn edited(bytes: &[u8], request: &SearchPathEdit) -> crate::Result<(Vec<u8>, Option<Unchanged>)> {
    let elf = ElfFile::parse(&mut Cursor::new(bytes))?;
    let edit = elf.plan_edit(&mut Cursor::new(bytes), request)?;
    let mut out = Vec::new();
    std::io::copy(&mut edit.reader(Cursor::new(bytes))?, &mut out)?;
    assert_eq!(out.len() as u64, edit.output_len());
    Ok((out, edit.unchanged_reason()))
}

/// What `object`'s reader sees in a file.
#[derive(Debug, PartialEq, Eq)]
struct ReadBack {
    needed: Vec<String>,
    soname: Option<String>,
    rpath: Option<String>,
    runpath: Option<String>,
}

/// Reads the dynamic facts of `data` through `object`'s typed views for
/// the class `Elf`, checking on the way what the loader relies on: the
/// `PT_PHDR` and `PT_DYNAMIC` segments inside a `PT_LOAD`, and the
/// `.dynamic` and `.dynstr` section headers where the dynamic section
/// says.
fn read_back<Elf: FileHeader<Endian = object::Endianness>>(data: &[u8]) -> ReadBack {
    let header = Elf::parse(data).expect("object parses the header");
    let endian = header.endian().unwrap();
    let phdrs = header.program_headers(endian, data).unwrap();
    let loads: Vec<_> = phdrs
        .iter()
        .filter(|p| p.p_type(endian) == elf::PT_LOAD)
        .collect();
    let inside_a_load = |offset: u64, vaddr: u64, size: u64| {
        loads.iter().any(|l| {
            let (lo, lv) = (l.p_offset(endian).into(), l.p_vaddr(endian).into());
            offset >= lo
                && offset + size <= lo + l.p_filesz(endian).into()
                && vaddr.checked_sub(lv) == Some(offset - lo)
        })
    };
    for p in phdrs {
        if matches!(p.p_type(endian), elf::PT_PHDR | elf::PT_DYNAMIC) {
            let (offset, vaddr) = (p.p_offset(endian).into(), p.p_vaddr(endian).into());
            assert!(
                inside_a_load(offset, vaddr, p.p_filesz(endian).into()),
                "segment {} outside every PT_LOAD",
                p.p_type(endian)
            );
        }
    }
    let dynamic = phdrs
        .iter()
        .find_map(|p| p.dynamic(endian, data).unwrap())
        .expect("a PT_DYNAMIC");
    let value = |tag: u32| {
        dynamic
            .iter()
            .take_while(|d| d.tag32(endian) != Some(elf::DT_NULL))
            .find(|d| d.tag32(endian) == Some(tag))
            .map(|d| d.d_val(endian).into())
    };
    let (strtab, strsz) = (
        value(elf::DT_STRTAB).unwrap(),
        value(elf::DT_STRSZ).unwrap(),
    );
    let strings = loads
        .iter()
        .find_map(|l| l.data_range(endian, data, strtab, strsz).unwrap())
        .expect("DT_STRTAB inside a PT_LOAD");
    let sections = header.sections(endian, data).unwrap();
    let section = |sh_type: u32| {
        sections
            .iter()
            .find(|s| s.sh_type(endian) == sh_type && s.sh_flags(endian).into() != 0)
            .map(|s| (s.sh_addr(endian).into(), s.sh_size(endian).into()))
            .unwrap()
    };
    assert_eq!(section(elf::SHT_STRTAB), (strtab, strsz), ".dynstr header");
    let table = object::read::StringTable::new(strings, 0, strsz);
    let string =
        |d: &Elf::Dyn| String::from_utf8(d.string(endian, table).unwrap().to_vec()).unwrap();
    let mut back = ReadBack {
        needed: Vec::new(),
        soname: None,
        rpath: None,
        runpath: None,
    };
    for d in dynamic
        .iter()
        .take_while(|d| d.tag32(endian) != Some(elf::DT_NULL))
    {
        match d.tag32(endian) {
            Some(elf::DT_NEEDED) => back.needed.push(string(d)),
            Some(elf::DT_SONAME) => back.soname = Some(string(d)),
            Some(elf::DT_RPATH) => back.rpath = Some(string(d)),
            Some(elf::DT_RUNPATH) => back.runpath = Some(string(d)),
            _ => {}
        }
    }
    back
}

fn read_back_any(class: ElfClass, data: &[u8]) -> ReadBack {
    match class {
        ElfClass::Elf32 => read_back::<elf::FileHeader32<object::Endianness>>(data),
        ElfClass::Elf64 => read_back::<elf::FileHeader64<object::Endianness>>(data),
    }
}

/// Every class and byte order, with the machines that use them.
fn shapes() -> Vec<HandMade> {
    use ElfClass::{Elf32, Elf64};
    use Endianness::{Big, Little};
    vec![
        HandMade::new(Elf32, Little, elf::EM_386),
        HandMade::new(Elf32, Little, elf::EM_X86_64), // x32
        HandMade::new(Elf32, Little, elf::EM_ARM),
        HandMade::new(Elf32, Big, elf::EM_PPC),
        HandMade::new(Elf32, Big, elf::EM_MIPS),
        HandMade::new(Elf64, Big, elf::EM_PPC64),
        HandMade::new(Elf64, Big, elf::EM_S390),
        HandMade::new(Elf64, Little, elf::EM_X86_64),
        HandMade::new(Elf64, Little, elf::EM_RISCV),
    ]
}

#[test]
fn the_hand_made_inputs_read_the_same_to_both_readers() {
    for shape in shapes() {
        let bytes = shape.build();
        let elf = ElfFile::parse(&mut Cursor::new(&bytes)).unwrap();
        assert_eq!(elf.kind(), ElfKind::SharedObject, "{shape:?}");
        assert_eq!(
            (elf.class(), elf.endianness(), elf.machine()),
            (Some(shape.class), Some(shape.endian), Some(shape.machine))
        );
        let ours = ReadBack {
            needed: elf.needed().to_vec(),
            soname: elf.soname().map(str::to_owned),
            rpath: elf.rpath().map(str::to_owned),
            runpath: elf.runpath().map(str::to_owned),
        };
        assert_eq!(ours, read_back_any(shape.class, &bytes), "{shape:?}");
        assert_eq!(
            ours.runpath.as_deref(),
            Some("$ORIGIN/../lib:/build/host/lib")
        );
    }
}

#[test]
fn every_class_and_byte_order_gets_the_same_edit() {
    for runpath in [true, false] {
        for spare in [0, 2] {
            for shape in shapes() {
                let shape = if runpath {
                    shape
                } else {
                    shape.without_runpath()
                }
                .with_spare_slots(spare);
                let bytes = shape.build();
                let (out, unchanged) =
                    edited(&bytes, &request()).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
                assert_eq!(unchanged, None);
                let expected = if runpath {
                    "$ORIGIN/../lib:$ORIGIN/../x/lib"
                } else {
                    "$ORIGIN/../x/lib"
                };
                assert_eq!(
                    read_back_any(shape.class, &out),
                    ReadBack {
                        needed: vec!["libc.so.6".to_owned()],
                        soname: Some("libhand.so.1".to_owned()),
                        rpath: Some(expected.to_owned()),
                        runpath: None,
                    },
                    "{shape:?}"
                );
                let again = ElfFile::parse(&mut Cursor::new(&out)).unwrap();
                assert_eq!(
                    (again.class(), again.endianness(), again.machine()),
                    (Some(shape.class), Some(shape.endian), Some(shape.machine)),
                    "{shape:?}"
                );
                // Idempotent: the second run writes nothing.
                let (_, unchanged) = edited(&out, &request()).unwrap();
                assert_eq!(unchanged, Some(Unchanged::AlreadyDone), "{shape:?}");
            }
        }
    }
}

#[test]
fn readelf_reads_the_edited_files_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    for (i, shape) in shapes().into_iter().enumerate() {
        let (out, _) = edited(&shape.build(), &request()).unwrap();
        let path = dir.path().join(format!("hand{i}.so"));
        std::fs::write(&path, out).unwrap();
        let shown = std::process::Command::new("readelf")
            .arg("-lWd")
            .arg(&path)
            .output()
            .expect("readelf runs (binutils; cargo xtask setup installs it)");
        let stdout = String::from_utf8_lossy(&shown.stdout);
        let stderr = String::from_utf8_lossy(&shown.stderr);
        assert!(
            shown.status.success() && stderr.trim().is_empty(),
            "{shape:?}: {stderr}"
        );
        assert!(!stdout.contains("Warning"), "{shape:?}: {stdout}");
        assert!(
            stdout.contains("Library rpath: [$ORIGIN/../lib:$ORIGIN/../x/lib]"),
            "{shape:?}: {stdout}"
        );
        assert!(!stdout.contains("RUNPATH"), "{shape:?}: {stdout}");
    }
}

#[test]
fn an_elf32_file_with_no_room_left_below_4_gib_is_refused() {
    // The writable segment ends just below 4 GiB: a new segment a page
    // further would not fit in 32-bit addresses.
    let shape = HandMade::new(ElfClass::Elf32, Endianness::Big, elf::EM_PPC).at(0xffff_d000);
    let err = edited(&shape.build(), &request()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Unsupported(why) if why.contains("address space")),
        "{err}"
    );
    // The same file lower down is edited.
    let shape = shape.at(0x0804_8000);
    assert!(edited(&shape.build(), &request()).is_ok());
}

#[test]
fn a_tag_change_alone_is_made_in_place_in_every_layout() {
    for shape in shapes() {
        let bytes = shape.build();
        let keep = SearchPathEdit::append(Vec::<String>::new()).force_rpath();
        let elf = ElfFile::parse(&mut Cursor::new(&bytes)).unwrap();
        let edit = elf.plan_edit(&mut Cursor::new(&bytes), &keep).unwrap();
        assert!(edit.appended().is_empty(), "{shape:?}: grew the file");
        let (out, _) = edited(&bytes, &keep).unwrap();
        assert_eq!(out.len(), bytes.len());
        let back = read_back_any(shape.class, &out);
        assert_eq!(
            back.rpath.as_deref(),
            Some("$ORIGIN/../lib:/build/host/lib")
        );
        assert_eq!(back.runpath, None);
    }
}
