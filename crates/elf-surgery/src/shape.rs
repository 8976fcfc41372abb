//! The parsed shape of an ELF file: header, program headers, the sections
//! that matter for search-path edits, and the dynamic section. Every read is
//! bounded and checked against the file length, so hostile input yields an
//! error, never a panic or an allocation the size of a lie.
//!
//! The structures are read through `object`'s typed views
//! (`object::elf::FileHeader64` and the other `Pod` structs, with the
//! `object::read::elf` traits that read them in either class and byte
//! order) over the bytes of each bounded read. `object::read::elf::ElfFile`
//! itself is not used: it parses from a `ReadRef`, a view of the whole
//! file (in memory, or a `ReadCache` that keeps every range read), while
//! this crate reads a library from a stream (a wheel member, an archive
//! window) asking only for the ranges it needs (headers, tables, the
//! dynamic section, one string at a time) and never holds more than one
//! range of a hostile file's choosing.

use object::elf;
use object::pod::{self, Pod};
use object::read::elf::{Dyn, FileHeader, ProgramHeader, SectionHeader};

use crate::error::{Result, malformed, truncated};
use crate::source::ReadAt;

/// ELF file class (word size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElfClass {
    /// 32-bit (`ELFCLASS32`).
    Elf32,
    /// 64-bit (`ELFCLASS64`).
    Elf64,
}

/// Byte order of the file's structures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endianness {
    /// `ELFDATA2LSB`.
    Little,
    /// `ELFDATA2MSB`.
    Big,
}

/// Largest dynamic section we accept (entries); real ones have well under 100.
const MAX_DYNAMIC_ENTRIES: u64 = 1 << 16;
/// Section headers read per bounded chunk.
const SECTION_CHUNK: u64 = 256;

/// A file's class and byte order: the sizes of its structures, the views
/// that read them ([`views`]) and the encoding the planner writes them in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoder {
    pub(crate) class: ElfClass,
    pub(crate) endian: Endianness,
}

impl Decoder {
    /// `object`'s run-time byte order, for its typed views.
    pub(crate) fn byte_order(self) -> object::Endianness {
        match self.endian {
            Endianness::Little => object::Endianness::Little,
            Endianness::Big => object::Endianness::Big,
        }
    }

    pub(crate) fn is64(self) -> bool {
        self.class == ElfClass::Elf64
    }

    pub(crate) fn ehdr_size(self) -> usize {
        if self.is64() { 64 } else { 52 }
    }

    pub(crate) fn phdr_size(self) -> usize {
        if self.is64() { 56 } else { 32 }
    }

    pub(crate) fn shdr_size(self) -> usize {
        if self.is64() { 64 } else { 40 }
    }

    pub(crate) fn dyn_size(self) -> usize {
        if self.is64() { 16 } else { 8 }
    }

    /// `Elf32_Sym` / `Elf64_Sym`.
    pub(crate) fn sym_size(self) -> usize {
        if self.is64() { 24 } else { 16 }
    }

    /// The largest address, offset or size a class-sized word holds.
    pub(crate) fn max_word(self) -> u64 {
        if self.is64() {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        }
    }

    /// Appends `v` in this byte order.
    pub(crate) fn put_u16(self, out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&match self.endian {
            Endianness::Little => v.to_le_bytes(),
            Endianness::Big => v.to_be_bytes(),
        });
    }

    /// Appends `v` in this byte order.
    pub(crate) fn put_u32(self, out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&match self.endian {
            Endianness::Little => v.to_le_bytes(),
            Endianness::Big => v.to_be_bytes(),
        });
    }

    /// Appends `v` as a class-sized word. The planner keeps every value it
    /// writes within [`Decoder::max_word`]; values read from an ELF32 file
    /// fit by construction.
    pub(crate) fn put_word(self, out: &mut Vec<u8>, v: u64) {
        match self.class {
            ElfClass::Elf64 => out.extend_from_slice(&match self.endian {
                Endianness::Little => v.to_le_bytes(),
                Endianness::Big => v.to_be_bytes(),
            }),
            ElfClass::Elf32 => {
                let v = u32::try_from(v).expect("the planner keeps ELF32 words within 32 bits");
                self.put_u32(out, v);
            }
        }
    }

    /// Where `e_phoff` and `e_phnum` sit in the ELF header.
    pub(crate) fn phoff_phnum_fields(self) -> (u64, u64) {
        if self.is64() { (32, 56) } else { (28, 44) }
    }

    /// Where `sh_addr`, then `sh_offset` and `sh_size` (adjacent words),
    /// sit in a section header.
    pub(crate) fn section_addr_field(self) -> u64 {
        if self.is64() { 16 } else { 12 }
    }
}

/// One program header, widened to 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) p_type: u32,
    pub(crate) flags: u32,
    pub(crate) offset: u64,
    pub(crate) vaddr: u64,
    pub(crate) paddr: u64,
    pub(crate) filesz: u64,
    pub(crate) memsz: u64,
    pub(crate) align: u64,
}

impl Segment {
    /// File offset of `vaddr..vaddr+len` when this segment maps all of it from the file.
    pub(crate) fn file_offset_of(&self, vaddr: u64, len: u64) -> Option<u64> {
        let end = vaddr.checked_add(len)?;
        let seg_end = self.vaddr.checked_add(self.filesz)?;
        if vaddr < self.vaddr || end > seg_end {
            return None;
        }
        // A hostile p_offset may sit near u64::MAX: no wrapping to a wrong place.
        self.offset.checked_add(vaddr - self.vaddr)
    }
}

/// One section header that matters here, widened to 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Section {
    pub(crate) index: u32,
    pub(crate) sh_type: u32,
    pub(crate) flags: u64,
    pub(crate) addr: u64,
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) link: u32,
    /// `sh_name`: offset of the name in the section-name table.
    pub(crate) name: u32,
}

/// The dynamic string table as `DT_STRTAB`/`DT_STRSZ` describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StrTab {
    pub(crate) vaddr: u64,
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

/// The dynamic section found through `PT_DYNAMIC`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dynamic {
    /// Index of `PT_DYNAMIC` in the program header table.
    pub(crate) segment: usize,
    pub(crate) offset: u64,
    pub(crate) vaddr: u64,
    /// Entry slots in the segment's file image, including the terminator and spares.
    pub(crate) slots: u64,
    /// Entries before the first `DT_NULL`.
    pub(crate) entries: Vec<(u64, u64)>,
    pub(crate) strtab: Option<StrTab>,
}

impl Dynamic {
    /// The value of the first entry with `tag`.
    pub(crate) fn value(&self, tag: u32) -> Option<u64> {
        self.entries
            .iter()
            .find(|(t, _)| *t == u64::from(tag))
            .map(|(_, v)| *v)
    }
}

/// Everything the facts, the planner and the verifier need from one file.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) decoder: Decoder,
    pub(crate) file_len: u64,
    pub(crate) e_type: u16,
    pub(crate) machine: u16,
    pub(crate) phoff: u64,
    pub(crate) phnum: u64,
    pub(crate) shoff: u64,
    /// Entries of the section header table (0 without one).
    pub(crate) shnum: u64,
    pub(crate) segments: Vec<Segment>,
    /// Allocated string tables, dynamic, dynsym, init/fini arrays.
    pub(crate) sections: Vec<Section>,
    /// Allocated read-only data sections (`SHT_PROGBITS`, neither writable
    /// nor executable): where string literals live. Only their headers are
    /// read by [`parse`]; [`crate::ElfFile::library_name_literals`] reads the bytes.
    pub(crate) read_only: Vec<Section>,
    /// The section-name table (`e_shstrndx`), when there is one.
    pub(crate) section_names: Option<Section>,
    /// `e_flags` (processor-specific; a runtime alias copies them).
    pub(crate) e_flags: u32,
    pub(crate) dynamic: Option<Dynamic>,
}

/// What the first bytes say.
pub(crate) enum Ident {
    NotElf,
    Elf(Decoder),
}

/// Reads `e_ident` and decides whether the file is ELF at all.
pub(crate) fn ident(src: &mut impl ReadAt) -> Result<Ident> {
    if src.len() < 16 {
        return Ok(Ident::NotElf);
    }
    let id = src.read_vec(0, 16, "ELF identification")?;
    if id[..4] != elf::ELFMAG {
        return Ok(Ident::NotElf);
    }
    // e_ident[EI_CLASS] and e_ident[EI_DATA].
    let class = match id[4] {
        elf::ELFCLASS32 => ElfClass::Elf32,
        elf::ELFCLASS64 => ElfClass::Elf64,
        other => return Err(malformed(format!("unknown ELF class {other}"))),
    };
    let endian = match id[5] {
        elf::ELFDATA2LSB => Endianness::Little,
        elf::ELFDATA2MSB => Endianness::Big,
        other => return Err(malformed(format!("unknown ELF data encoding {other}"))),
    };
    Ok(Ident::Elf(Decoder { class, endian }))
}

/// The view of `bytes` as whole entries of `T`: `bytes` is a bounded read
/// of exactly such entries, and `object`'s `unaligned` types have no
/// alignment to miss.
pub(crate) fn views<T: Pod>(bytes: &[u8]) -> &[T] {
    pod::slice_from_all_bytes(bytes).expect("a read of whole entries")
}

/// The fields of the ELF header [`parse`] uses, widened to 64 bits.
struct Header {
    e_type: u16,
    machine: u16,
    e_flags: u32,
    phoff: u64,
    phentsize: u16,
    phnum: u64,
    shoff: u64,
    shentsize: u16,
    /// `e_shnum`, 0 when section 0 holds the count.
    shnum: u64,
    /// `e_shstrndx`, `SHN_XINDEX` when section 0 holds the index.
    shstrndx: u32,
}

fn header<H: FileHeader<Endian = object::Endianness>>(h: &H, e: object::Endianness) -> Header {
    Header {
        e_type: h.e_type(e),
        machine: h.e_machine(e),
        e_flags: h.e_flags(e),
        phoff: h.e_phoff(e).into(),
        phentsize: h.e_phentsize(e),
        phnum: u64::from(h.e_phnum(e)),
        shoff: h.e_shoff(e).into(),
        shentsize: h.e_shentsize(e),
        shnum: u64::from(h.e_shnum(e)),
        shstrndx: u32::from(h.e_shstrndx(e)),
    }
}

/// Parses header, program headers, relevant sections and the dynamic section.
pub(crate) fn parse(src: &mut impl ReadAt, d: Decoder) -> Result<Layout> {
    let file_len = src.len();
    let bytes = src.read_vec(0, d.ehdr_size() as u64, "ELF header")?;
    let e = d.byte_order();
    let h = match d.class {
        ElfClass::Elf32 => header(&views::<elf::FileHeader32<_>>(&bytes)[0], e),
        ElfClass::Elf64 => header(&views::<elf::FileHeader64<_>>(&bytes)[0], e),
    };

    if h.phnum == u64::from(elf::PN_XNUM) {
        return Err(malformed(
            "extended program header numbering (PN_XNUM) is not supported",
        ));
    }
    let segments = if h.phnum == 0 {
        Vec::new()
    } else {
        if usize::from(h.phentsize) != d.phdr_size() {
            return Err(malformed(format!(
                "program header entry size {}",
                h.phentsize
            )));
        }
        let len = h.phnum * d.phdr_size() as u64;
        let table = src.read_vec(h.phoff, len, "program header table")?;
        segments(d, &table)
    };

    let tables = if h.shoff == 0 {
        SectionTables::default()
    } else {
        if usize::from(h.shentsize) != d.shdr_size() {
            return Err(malformed(format!(
                "section header entry size {}",
                h.shentsize
            )));
        }
        read_sections(src, d, h.shoff, h.shnum, h.shstrndx)?
    };

    let mut layout = Layout {
        decoder: d,
        file_len,
        e_type: h.e_type,
        machine: h.machine,
        phoff: h.phoff,
        phnum: h.phnum,
        shoff: h.shoff,
        shnum: tables.count,
        segments,
        sections: tables.kept,
        read_only: tables.read_only,
        section_names: tables.names,
        e_flags: h.e_flags,
        dynamic: None,
    };
    layout.dynamic = read_dynamic(src, &layout)?;
    Ok(layout)
}

/// The program headers of a table read whole.
fn segments(d: Decoder, table: &[u8]) -> Vec<Segment> {
    fn widen<P: ProgramHeader<Endian = object::Endianness>>(
        table: &[P],
        e: object::Endianness,
    ) -> Vec<Segment> {
        table
            .iter()
            .map(|p| Segment {
                p_type: p.p_type(e),
                flags: p.p_flags(e),
                offset: p.p_offset(e).into(),
                vaddr: p.p_vaddr(e).into(),
                paddr: p.p_paddr(e).into(),
                filesz: p.p_filesz(e).into(),
                memsz: p.p_memsz(e).into(),
                align: p.p_align(e).into(),
            })
            .collect()
    }
    let e = d.byte_order();
    match d.class {
        ElfClass::Elf32 => widen(views::<elf::ProgramHeader32<_>>(table), e),
        ElfClass::Elf64 => widen(views::<elf::ProgramHeader64<_>>(table), e),
    }
}

/// The section headers of a chunk of the table, the first being `first`.
fn sections(d: Decoder, first: u64, chunk: &[u8]) -> Result<Vec<Section>> {
    fn widen<S: SectionHeader<Endian = object::Endianness>>(
        chunk: &[S],
        first: u64,
        e: object::Endianness,
    ) -> Result<Vec<Section>> {
        (first..)
            .zip(chunk)
            .map(|(index, s)| {
                Ok(Section {
                    index: u32::try_from(index)
                        .map_err(|_| malformed("more than 2^32 sections"))?,
                    sh_type: s.sh_type(e),
                    flags: s.sh_flags(e).into(),
                    addr: s.sh_addr(e).into(),
                    offset: s.sh_offset(e).into(),
                    size: s.sh_size(e).into(),
                    link: s.sh_link(e),
                    name: s.sh_name(e),
                })
            })
            .collect()
    }
    let e = d.byte_order();
    match d.class {
        ElfClass::Elf32 => widen(views::<elf::SectionHeader32<_>>(chunk), first, e),
        ElfClass::Elf64 => widen(views::<elf::SectionHeader64<_>>(chunk), first, e),
    }
}

/// The `(tag, value)` entries of a dynamic section read whole.
fn dynamic_entries(d: Decoder, bytes: &[u8]) -> Vec<(u64, u64)> {
    fn widen<D: Dyn<Endian = object::Endianness>>(
        table: &[D],
        e: object::Endianness,
    ) -> Vec<(u64, u64)> {
        table
            .iter()
            .map(|entry| (entry.d_tag(e).into(), entry.d_val(e).into()))
            .collect()
    }
    let e = d.byte_order();
    match d.class {
        ElfClass::Elf32 => widen(views::<elf::Dyn32<_>>(bytes), e),
        ElfClass::Elf64 => widen(views::<elf::Dyn64<_>>(bytes), e),
    }
}

fn is_relevant(s: &Section) -> bool {
    matches!(
        s.sh_type,
        elf::SHT_DYNAMIC | elf::SHT_DYNSYM | elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY
    ) || (s.sh_type == elf::SHT_STRTAB && s.flags & u64::from(elf::SHF_ALLOC) != 0)
}

/// Allocated read-only data: where a compiler puts string literals.
fn is_read_only_data(s: &Section) -> bool {
    let alloc = u64::from(elf::SHF_ALLOC);
    let written_or_run = u64::from(elf::SHF_WRITE | elf::SHF_EXECINSTR);
    s.sh_type == elf::SHT_PROGBITS && s.flags & alloc != 0 && s.flags & written_or_run == 0
}

/// The section headers [`parse`] keeps.
#[derive(Default)]
struct SectionTables {
    /// How many entries the table has (section 0 included).
    count: u64,
    kept: Vec<Section>,
    read_only: Vec<Section>,
    names: Option<Section>,
}

/// Streams the section header table in chunks, keeping only relevant entries.
fn read_sections(
    src: &mut impl ReadAt,
    d: Decoder,
    shoff: u64,
    shnum_raw: u64,
    shstrndx_raw: u32,
) -> Result<SectionTables> {
    let size = d.shdr_size() as u64;
    let first = src.read_vec(shoff, size, "section header 0")?;
    let zero = sections(d, 0, &first)?[0];
    // Extended numbering: section 0's size holds the real count.
    let shnum = if shnum_raw == 0 { zero.size } else { shnum_raw };
    // SHN_XINDEX: section 0's link holds the real index.
    let shstrndx = if shstrndx_raw == u32::from(elf::SHN_XINDEX) {
        zero.link
    } else {
        shstrndx_raw
    };
    let end = shnum.checked_mul(size).and_then(|n| n.checked_add(shoff));
    if end.is_none_or(|end| end > src.len()) {
        return Err(truncated(format!(
            "section header table ({shnum} entries at {shoff:#x})"
        )));
    }
    let mut tables = SectionTables {
        count: shnum,
        ..SectionTables::default()
    };
    let mut index = 1;
    while index < shnum {
        let count = SECTION_CHUNK.min(shnum - index);
        let chunk = src.read_vec(shoff + index * size, count * size, "section header table")?;
        for s in sections(d, index, &chunk)? {
            if is_relevant(&s) {
                tables.kept.push(s);
            }
            if is_read_only_data(&s) {
                tables.read_only.push(s);
            }
            if s.index == shstrndx && s.sh_type == elf::SHT_STRTAB {
                tables.names = Some(s);
            }
        }
        index += count;
    }
    Ok(tables)
}

/// The segment that maps `vaddr..vaddr+len` from the file, as a file offset.
pub(crate) fn vaddr_to_offset(segments: &[Segment], vaddr: u64, len: u64) -> Option<u64> {
    segments
        .iter()
        .filter(|s| s.p_type == elf::PT_LOAD)
        .find_map(|s| s.file_offset_of(vaddr, len))
}

fn read_dynamic(src: &mut impl ReadAt, layout: &Layout) -> Result<Option<Dynamic>> {
    let d = layout.decoder;
    let mut found = layout
        .segments
        .iter()
        .enumerate()
        .filter(|(_, s)| s.p_type == elf::PT_DYNAMIC);
    let Some((index, seg)) = found.next() else {
        return Ok(None);
    };
    if found.next().is_some() {
        return Err(malformed("more than one PT_DYNAMIC segment"));
    }
    let entsize = d.dyn_size() as u64;
    let slots = seg.filesz / entsize;
    if slots == 0 {
        // Separate debug-info files keep the segment but not its bytes.
        return Ok(None);
    }
    if slots > MAX_DYNAMIC_ENTRIES {
        return Err(malformed(format!("PT_DYNAMIC claims {slots} entries")));
    }
    let bytes = src.read_vec(seg.offset, slots * entsize, "dynamic section")?;
    let mut entries = Vec::new();
    let mut terminated = false;
    for (tag, val) in dynamic_entries(d, &bytes) {
        if tag == u64::from(elf::DT_NULL) {
            terminated = true;
            break;
        }
        entries.push((tag, val));
    }
    if !terminated {
        return Err(malformed("the dynamic section has no DT_NULL terminator"));
    }
    let mut dynamic = Dynamic {
        segment: index,
        offset: seg.offset,
        vaddr: seg.vaddr,
        slots,
        entries,
        strtab: None,
    };
    dynamic.strtab = match (dynamic.value(elf::DT_STRTAB), dynamic.value(elf::DT_STRSZ)) {
        (Some(vaddr), Some(size)) => {
            let offset = vaddr_to_offset(&layout.segments, vaddr, size).ok_or_else(|| {
                malformed(format!(
                    "DT_STRTAB {vaddr:#x}+{size:#x} is not inside a loaded segment"
                ))
            })?;
            if offset.checked_add(size).is_none_or(|e| e > layout.file_len) {
                return Err(truncated("dynamic string table"));
            }
            Some(StrTab {
                vaddr,
                offset,
                size,
            })
        }
        (None, None) => None,
        _ => return Err(malformed("DT_STRTAB and DT_STRSZ must appear together")),
    };
    Ok(Some(dynamic))
}

/// Reads the NUL-terminated string at `index` of the dynamic string table,
/// in bounded chunks.
pub(crate) fn read_string(src: &mut impl ReadAt, strtab: &StrTab, index: u64) -> Result<Vec<u8>> {
    const CHUNK: u64 = 256;
    if index >= strtab.size {
        return Err(malformed(format!(
            "string index {index:#x} is outside the dynamic string table ({:#x} bytes)",
            strtab.size
        )));
    }
    let mut out = Vec::new();
    let mut pos = index;
    while pos < strtab.size {
        let n = CHUNK.min(strtab.size - pos);
        let chunk = src.read_vec(strtab.offset + pos, n, "dynamic string table")?;
        if let Some(nul) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk);
        pos += n;
    }
    Err(malformed(format!(
        "string at index {index:#x} runs past the end of the dynamic string table"
    )))
}
