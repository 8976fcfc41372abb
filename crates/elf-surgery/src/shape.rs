//! The parsed shape of an ELF file: header, program headers, the sections
//! that matter for search-path edits, and the dynamic section. Every read is
//! bounded and checked against the file length, so hostile input yields an
//! error, never a panic or an allocation the size of a lie.

use object::elf;

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

/// Decodes fixed-layout fields for one class and byte order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoder {
    pub(crate) class: ElfClass,
    pub(crate) endian: Endianness,
}

impl Decoder {
    pub(crate) fn u16(self, b: &[u8], at: usize) -> u16 {
        let v = [b[at], b[at + 1]];
        match self.endian {
            Endianness::Little => u16::from_le_bytes(v),
            Endianness::Big => u16::from_be_bytes(v),
        }
    }

    pub(crate) fn u32(self, b: &[u8], at: usize) -> u32 {
        let v: [u8; 4] = b[at..at + 4].try_into().expect("4 bytes");
        match self.endian {
            Endianness::Little => u32::from_le_bytes(v),
            Endianness::Big => u32::from_be_bytes(v),
        }
    }

    pub(crate) fn u64(self, b: &[u8], at: usize) -> u64 {
        let v: [u8; 8] = b[at..at + 8].try_into().expect("8 bytes");
        match self.endian {
            Endianness::Little => u64::from_le_bytes(v),
            Endianness::Big => u64::from_be_bytes(v),
        }
    }

    /// A class-sized word (`Elf32_Addr`/`Elf64_Addr` and friends).
    pub(crate) fn word(self, b: &[u8], at: usize) -> u64 {
        match self.class {
            ElfClass::Elf32 => u64::from(self.u32(b, at)),
            ElfClass::Elf64 => self.u64(b, at),
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

/// Parses header, program headers, relevant sections and the dynamic section.
pub(crate) fn parse(src: &mut impl ReadAt, d: Decoder) -> Result<Layout> {
    let file_len = src.len();
    let h = src.read_vec(0, d.ehdr_size() as u64, "ELF header")?;
    let e_type = d.u16(&h, 16);
    let machine = d.u16(&h, 18);
    let (phoff, shoff, rest) = if d.is64() {
        (d.u64(&h, 32), d.u64(&h, 40), 52)
    } else {
        (u64::from(d.u32(&h, 28)), u64::from(d.u32(&h, 32)), 40)
    };
    let phentsize = d.u16(&h, rest + 2);
    let phnum = u64::from(d.u16(&h, rest + 4));
    let shentsize = d.u16(&h, rest + 6);
    let shnum_raw = u64::from(d.u16(&h, rest + 8));
    let shstrndx_raw = u32::from(d.u16(&h, rest + 10));
    let e_flags = d.u32(&h, rest - 4);

    if phnum == u64::from(elf::PN_XNUM) {
        return Err(malformed(
            "extended program header numbering (PN_XNUM) is not supported",
        ));
    }
    let segments = if phnum == 0 {
        Vec::new()
    } else {
        if usize::from(phentsize) != d.phdr_size() {
            return Err(malformed(format!("program header entry size {phentsize}")));
        }
        let table = src.read_vec(phoff, phnum * d.phdr_size() as u64, "program header table")?;
        table
            .chunks_exact(d.phdr_size())
            .map(|b| segment(d, b))
            .collect()
    };

    let tables = if shoff == 0 {
        SectionTables::default()
    } else {
        if usize::from(shentsize) != d.shdr_size() {
            return Err(malformed(format!("section header entry size {shentsize}")));
        }
        read_sections(src, d, shoff, shnum_raw, shstrndx_raw)?
    };

    let mut layout = Layout {
        decoder: d,
        file_len,
        e_type,
        machine,
        phoff,
        phnum,
        shoff,
        shnum: tables.count,
        segments,
        sections: tables.kept,
        read_only: tables.read_only,
        section_names: tables.names,
        e_flags,
        dynamic: None,
    };
    layout.dynamic = read_dynamic(src, &layout)?;
    Ok(layout)
}

fn segment(d: Decoder, b: &[u8]) -> Segment {
    if d.is64() {
        Segment {
            p_type: d.u32(b, 0),
            flags: d.u32(b, 4),
            offset: d.u64(b, 8),
            vaddr: d.u64(b, 16),
            paddr: d.u64(b, 24),
            filesz: d.u64(b, 32),
            memsz: d.u64(b, 40),
            align: d.u64(b, 48),
        }
    } else {
        Segment {
            p_type: d.u32(b, 0),
            offset: u64::from(d.u32(b, 4)),
            vaddr: u64::from(d.u32(b, 8)),
            paddr: u64::from(d.u32(b, 12)),
            filesz: u64::from(d.u32(b, 16)),
            memsz: u64::from(d.u32(b, 20)),
            flags: d.u32(b, 24),
            align: u64::from(d.u32(b, 28)),
        }
    }
}

fn section(d: Decoder, index: u32, b: &[u8]) -> Section {
    if d.is64() {
        Section {
            index,
            sh_type: d.u32(b, 4),
            flags: d.u64(b, 8),
            addr: d.u64(b, 16),
            offset: d.u64(b, 24),
            size: d.u64(b, 32),
            link: d.u32(b, 40),
            name: d.u32(b, 0),
        }
    } else {
        Section {
            index,
            sh_type: d.u32(b, 4),
            flags: u64::from(d.u32(b, 8)),
            addr: u64::from(d.u32(b, 12)),
            offset: u64::from(d.u32(b, 16)),
            size: u64::from(d.u32(b, 20)),
            link: d.u32(b, 24),
            name: d.u32(b, 0),
        }
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
    let zero = section(d, 0, &first);
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
        for (i, b) in chunk.chunks_exact(d.shdr_size()).enumerate() {
            let idx = u32::try_from(index + i as u64)
                .map_err(|_| malformed("more than 2^32 sections"))?;
            let s = section(d, idx, b);
            if is_relevant(&s) {
                tables.kept.push(s);
            }
            if is_read_only_data(&s) {
                tables.read_only.push(s);
            }
            if idx == shstrndx && s.sh_type == elf::SHT_STRTAB {
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
    for b in bytes.chunks_exact(d.dyn_size()) {
        let (tag, val) = (d.word(b, 0), d.word(b, d.dyn_size() / 2));
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
