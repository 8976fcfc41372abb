//! The mechanism: turn a wanted search path into patches and appended data.
//!
//! When the dynamic section has room and the string table need not grow,
//! the edit is in place. Otherwise one new `PT_LOAD` is appended at the end
//! of the file holding, in order, the program header table (moved there
//! because it gains that entry), the grown `.dynstr` (old bytes copied from
//! the source, then the new string) and, when it had no spare slot, the
//! grown `.dynamic`. Nothing that code refers to moves, so `DT_INIT`,
//! `DT_FINI` and the init/fini arrays stay valid by construction.
//!
//! The same mechanism serves both classes and both byte orders: every
//! structure is written back in the file's own layout ([`Decoder`]).

use object::elf;
use tracing::debug;

use crate::edit::{Appended, Edit, Patch, Unchanged};
use crate::error::{Result, malformed, unsupported};
use crate::file::{ElfFile, ElfKind};
use crate::search_path::{SearchPathEdit, Target};
use crate::shape::{Decoder, Dynamic, Layout, Segment, StrTab};
use crate::verify;

/// Spare `DT_NULL` slots left in a moved dynamic section for later edits.
const SPARE_DYNAMIC_SLOTS: u64 = 4;
/// Smallest page size the new segment is kept apart by.
const MIN_PAGE: u64 = 0x1000;
/// Most zero padding spent to keep an executable's new segment at the same
/// offset-to-address distance as its first segment (for kernels that derive
/// `AT_PHDR` from the first `PT_LOAD`).
const MAX_EXEC_PADDING: u64 = 16 << 20;

/// An edit still to be verified, and what verification must read back.
pub(crate) struct Planned {
    pub(crate) edit: Edit,
    pub(crate) target: Option<Target>,
}

/// Checks that `file` is something this crate edits and returns its layout.
pub(crate) fn editable_layout(file: &ElfFile) -> Result<Option<&Layout>> {
    let Some(layout) = &file.layout else {
        return Err(unsupported("it is not an ELF file"));
    };
    match file.kind() {
        ElfKind::DeviceCode => {
            return Err(unsupported(
                "it is an AMDGPU code object (device code is data and is never edited)",
            ));
        }
        ElfKind::Relocatable => return Err(unsupported("it is a relocatable object (.o)")),
        ElfKind::Other | ElfKind::NotElf => {
            return Err(unsupported(format!(
                "ELF type {} has no search path",
                layout.e_type
            )));
        }
        ElfKind::StaticExecutable | ElfKind::DynamicExecutable | ElfKind::SharedObject => {}
    }
    if layout.dynamic.is_none() && crate::file::has_dynamic_segment(layout) {
        return Err(unsupported(
            "its dynamic segment has no bytes in the file (a separate debug-info file?)",
        ));
    }
    if file.kind() == ElfKind::StaticExecutable || layout.dynamic.is_none() {
        return Ok(None);
    }
    Ok(Some(layout))
}

/// Plans `request` on `file`; the result is not yet verified.
pub(crate) fn plan(file: &ElfFile, request: &SearchPathEdit) -> Result<Planned> {
    let Some(layout) = editable_layout(file)? else {
        debug!("static executable: no search path needed, left unchanged");
        return Ok(Planned {
            edit: Edit::unchanged(file.stamp.clone(), Unchanged::NoDynamicSection),
            target: None,
        });
    };
    verify::check_layout(layout).map_err(|e| malformed(format!("in the input: {e}")))?;
    let dynamic = layout.dynamic.as_ref().expect("checked by editable_layout");
    let target = request.target(&file.raw)?;

    let mut entries = dynamic.entries.clone();
    let mut new_string = None;
    match &target {
        None => {
            if request.set.is_some() {
                entries.retain(|(t, _)| !is_search_path_tag(*t));
            }
        }
        Some(t) => {
            let (existing_tag, existing) = match (&file.raw.runpath, &file.raw.rpath) {
                (Some(p), _) => (Some(elf::DT_RUNPATH), Some(p)),
                (None, Some(p)) => (Some(elf::DT_RPATH), Some(p)),
                (None, None) => (None, None),
            };
            let primary =
                existing_tag.and_then(|tag| entries.iter().position(|(e, _)| *e == u64::from(tag)));
            let value = match primary {
                Some(i) if existing == Some(&t.path) => entries[i].1,
                _ => {
                    let strtab = dynamic
                        .strtab
                        .ok_or_else(|| unsupported("it has no dynamic string table"))?;
                    new_string = Some(t.path.clone());
                    strtab.size
                }
            };
            let primary = if let Some(i) = primary {
                entries[i] = (u64::from(t.tag), value);
                i
            } else {
                entries.push((u64::from(t.tag), value));
                entries.len() - 1
            };
            if request.force_rpath {
                // One DT_RPATH and no DT_RUNPATH, or the loader ignores the RPATH.
                let mut i = 0;
                entries.retain(|(tag, _)| {
                    let keep = i == primary || !is_search_path_tag(*tag);
                    i += 1;
                    keep
                });
            }
        }
    }
    if entries == dynamic.entries {
        return Ok(Planned {
            edit: Edit::unchanged(file.stamp.clone(), Unchanged::AlreadyDone),
            target,
        });
    }
    let edit = if new_string.is_none() && (entries.len() as u64) < dynamic.slots {
        let bytes = encode_dynamic(layout.decoder, &entries, dynamic.slots);
        Edit::new(
            file.stamp.clone(),
            vec![Edit::patch(dynamic.offset, bytes)],
            Vec::new(),
        )?
    } else {
        grow(file, layout, dynamic, entries, new_string.as_deref())?
    };
    Ok(Planned { edit, target })
}

fn is_search_path_tag(tag: u64) -> bool {
    tag == u64::from(elf::DT_RPATH) || tag == u64::from(elf::DT_RUNPATH)
}

/// Builds the new segment's contents in order, padding to 8 bytes.
#[derive(Default)]
struct SegmentBuilder {
    pieces: Vec<Appended>,
    len: u64,
}

impl SegmentBuilder {
    fn align8(&mut self) {
        let pad = self.len.next_multiple_of(8) - self.len;
        if pad > 0 {
            self.pieces.push(Appended::Zeros(pad));
            self.len += pad;
        }
    }

    fn reserve(&mut self, len: u64) -> u64 {
        self.align8();
        let at = self.len;
        self.len += len;
        at
    }
}

/// The new `PT_LOAD` at the end of the file: where it lies and where its
/// parts lie inside it (offsets relative to its start).
struct NewSegment {
    offset: u64,
    vaddr: u64,
    align: u64,
    len: u64,
    /// The program header table, when it moves here (no `PT_NULL` to reuse).
    pht_at: Option<u64>,
    /// Program headers after the edit.
    phnum: u64,
    /// The grown `.dynstr` and the table it grows, when a string is added.
    strtab_at: Option<(u64, StrTab)>,
    /// The grown `.dynamic`, when it has no spare slot.
    dyn_at: Option<u64>,
    /// Slots of the dynamic section after the edit.
    dyn_slots: u64,
}

impl NewSegment {
    /// File offset and address of a part at `rel`.
    fn at(&self, rel: u64) -> (u64, u64) {
        (self.offset + rel, self.vaddr + rel)
    }
}

/// Plans the edit that adds a `PT_LOAD` at the end of the file.
fn grow(
    file: &ElfFile,
    layout: &Layout,
    dynamic: &Dynamic,
    mut entries: Vec<(u64, u64)>,
    new_string: Option<&[u8]>,
) -> Result<Edit> {
    let mut phdrs = layout.segments.clone();
    // A PT_NULL entry can become the new PT_LOAD: the table then keeps its
    // size and place.
    let reused_null = phdrs.iter().position(|s| s.p_type == elf::PT_NULL);
    if let Some(i) = reused_null {
        phdrs.remove(i);
    }
    let seg = lay_out(
        file,
        layout,
        dynamic,
        &phdrs,
        &entries,
        new_string,
        reused_null.is_none(),
    )?;
    if let (Some((rel, old)), Some(s)) = (seg.strtab_at, new_string) {
        let new_size = old.size + s.len() as u64 + 1;
        for (tag, val) in &mut entries {
            if *tag == u64::from(elf::DT_STRTAB) {
                *val = seg.at(rel).1;
            } else if *tag == u64::from(elf::DT_STRSZ) {
                *val = new_size;
            }
        }
    }
    let slots = if seg.dyn_at.is_some() {
        seg.dyn_slots
    } else {
        dynamic.slots
    };
    let dyn_bytes = encode_dynamic(layout.decoder, &entries, slots);
    let (phdr_size, dyn_size) = (
        layout.decoder.phdr_size() as u64,
        layout.decoder.dyn_size() as u64,
    );
    let pht_bytes = encode_phdrs(
        layout.decoder,
        &program_headers(phdrs, &seg, phdr_size, dyn_size)?,
    );
    let patches = patches(layout, dynamic, &seg, new_string, &pht_bytes, &dyn_bytes)?;
    let appended = appended(layout, &seg, new_string, pht_bytes, dyn_bytes);
    debug!(
        offset = seg.offset,
        vaddr = seg.vaddr,
        size = seg.len,
        pht_moves = seg.pht_at.is_some(),
        dynamic_moves = seg.dyn_at.is_some(),
        "appending a PT_LOAD"
    );
    Edit::new(file.stamp.clone(), patches, appended)
}

/// Lays out the new segment's contents and places it after the file's
/// last `PT_LOAD`.
fn lay_out(
    file: &ElfFile,
    layout: &Layout,
    dynamic: &Dynamic,
    phdrs: &[Segment],
    entries: &[(u64, u64)],
    new_string: Option<&[u8]>,
    pht_moves: bool,
) -> Result<NewSegment> {
    let d = layout.decoder;
    let phnum = phdrs.len() as u64 + 1;
    if phnum >= u64::from(elf::PN_XNUM) {
        return Err(unsupported("it has too many program headers"));
    }
    let dynamic_moves = entries.len() as u64 + 1 > dynamic.slots;
    let mut seg = SegmentBuilder::default();
    let pht_at = pht_moves.then(|| seg.reserve(phnum * d.phdr_size() as u64));
    let strtab_at = match (new_string, dynamic.strtab) {
        (Some(s), Some(t)) => Some((seg.reserve(t.size + s.len() as u64 + 1), t)),
        _ => None,
    };
    let dyn_slots = entries.len() as u64 + 1 + SPARE_DYNAMIC_SLOTS;
    let dyn_at = dynamic_moves.then(|| seg.reserve(dyn_slots * d.dyn_size() as u64));
    let (offset, vaddr, align) = place(file, layout, seg.len)?;
    Ok(NewSegment {
        offset,
        vaddr,
        align,
        len: seg.len,
        pht_at,
        phnum,
        strtab_at,
        dyn_at,
        dyn_slots,
    })
}

/// The program headers after the edit: `PT_PHDR` and `PT_DYNAMIC` follow
/// what moved, and the new `PT_LOAD` comes after the last one.
fn program_headers(
    mut phdrs: Vec<Segment>,
    seg: &NewSegment,
    phdr_size: u64,
    dyn_size: u64,
) -> Result<Vec<Segment>> {
    for s in &mut phdrs {
        let moved = match (s.p_type, seg.pht_at, seg.dyn_at) {
            (elf::PT_PHDR, Some(rel), _) => Some((rel, seg.phnum * phdr_size)),
            (elf::PT_DYNAMIC, _, Some(rel)) => Some((rel, seg.dyn_slots * dyn_size)),
            _ => None,
        };
        if let Some((rel, size)) = moved {
            (s.offset, s.vaddr) = seg.at(rel);
            s.paddr = s.vaddr;
            s.filesz = size;
            s.memsz = size;
        }
    }
    let last_load = phdrs
        .iter()
        .rposition(|s| s.p_type == elf::PT_LOAD)
        .ok_or_else(|| unsupported("it has no PT_LOAD segment"))?;
    phdrs.insert(
        last_load + 1,
        Segment {
            p_type: elf::PT_LOAD,
            flags: elf::PF_R | if seg.dyn_at.is_some() { elf::PF_W } else { 0 },
            offset: seg.offset,
            vaddr: seg.vaddr,
            paddr: seg.vaddr,
            filesz: seg.len,
            memsz: seg.len,
            align: seg.align,
        },
    );
    Ok(phdrs)
}

/// The patches inside the source: the program header table (in place, or
/// `e_phoff`/`e_phnum` when it moved), the dynamic section when it stays,
/// and the section headers of what moved.
fn patches(
    layout: &Layout,
    dynamic: &Dynamic,
    seg: &NewSegment,
    new_string: Option<&[u8]>,
    pht_bytes: &[u8],
    dyn_bytes: &[u8],
) -> Result<Vec<Patch>> {
    let overflow = || unsupported("its addresses are too large to add a segment");
    let d = layout.decoder;
    let mut patches = Vec::new();
    if seg.pht_at.is_some() {
        let (phoff_at, phnum_at) = d.phoff_phnum_fields();
        let mut phoff = Vec::with_capacity(8);
        d.put_word(&mut phoff, seg.offset);
        let mut phnum = Vec::with_capacity(2);
        d.put_u16(
            &mut phnum,
            u16::try_from(seg.phnum).map_err(|_| overflow())?,
        );
        patches.push(Edit::patch(phoff_at, phoff));
        patches.push(Edit::patch(phnum_at, phnum));
    } else {
        patches.push(Edit::patch(layout.phoff, pht_bytes.to_vec()));
    }
    if seg.dyn_at.is_none() {
        patches.push(Edit::patch(dynamic.offset, dyn_bytes.to_vec()));
    }
    for s in &layout.sections {
        let moved = match (s.sh_type, seg.strtab_at, seg.dyn_at) {
            (elf::SHT_STRTAB, Some((rel, old)), _)
                if s.addr == old.vaddr && s.offset == old.offset =>
            {
                Some((rel, old.size + new_string.map_or(0, |n| n.len() as u64 + 1)))
            }
            (elf::SHT_DYNAMIC, _, Some(rel)) => Some((rel, seg.dyn_slots * d.dyn_size() as u64)),
            _ => None,
        };
        if let Some((rel, size)) = moved {
            let (new_off, new_addr) = seg.at(rel);
            let mut b = Vec::with_capacity(24);
            for word in [new_addr, new_off, size] {
                d.put_word(&mut b, word);
            }
            let field = layout
                .shoff
                .checked_add(u64::from(s.index) * d.shdr_size() as u64 + d.section_addr_field())
                .ok_or_else(overflow)?;
            patches.push(Edit::patch(field, b));
        }
    }
    Ok(patches)
}

/// The data after the source: padding to the new segment, then its parts
/// in the order [`lay_out`] placed them.
fn appended(
    layout: &Layout,
    seg: &NewSegment,
    new_string: Option<&[u8]>,
    pht_bytes: Vec<u8>,
    dyn_bytes: Vec<u8>,
) -> Vec<Appended> {
    let mut appended = Vec::new();
    if seg.offset > layout.file_len {
        appended.push(Appended::Zeros(seg.offset - layout.file_len));
    }
    let mut pos = 0;
    let mut put = |appended: &mut Vec<Appended>, rel: u64, piece: Vec<Appended>| {
        if rel > pos {
            appended.push(Appended::Zeros(rel - pos));
        }
        pos = rel + piece.iter().map(appended_len).sum::<u64>();
        appended.extend(piece);
    };
    if let Some(rel) = seg.pht_at {
        put(&mut appended, rel, vec![Appended::Bytes(pht_bytes)]);
    }
    if let (Some((rel, old)), Some(s)) = (seg.strtab_at, new_string) {
        let mut tail = s.to_vec();
        tail.push(0);
        let piece = vec![
            Appended::Source {
                offset: old.offset,
                len: old.size,
            },
            Appended::Bytes(tail),
        ];
        put(&mut appended, rel, piece);
    }
    if let Some(rel) = seg.dyn_at {
        put(&mut appended, rel, vec![Appended::Bytes(dyn_bytes)]);
    }
    appended
}

fn appended_len(a: &Appended) -> u64 {
    match a {
        Appended::Zeros(n) | Appended::Source { len: n, .. } => *n,
        Appended::Bytes(b) => b.len() as u64,
    }
}

/// Chooses file offset, address and alignment of the new segment of `len`
/// bytes: past the end of the file and past every segment's memory, a
/// whole page (of the largest alignment in use) away from the last one,
/// congruent modulo that alignment, and within the class's address space.
fn place(file: &ElfFile, layout: &Layout, len: u64) -> Result<(u64, u64, u64)> {
    let (offset, vaddr, align) = place_unbounded(file, layout)?;
    let max = layout.decoder.max_word();
    let fits = |start: u64| start.checked_add(len).is_some_and(|end| end <= max);
    if fits(offset) && fits(vaddr) {
        Ok((offset, vaddr, align))
    } else {
        Err(unsupported(
            "its addresses are too large to add a segment within its class's address space",
        ))
    }
}

fn place_unbounded(file: &ElfFile, layout: &Layout) -> Result<(u64, u64, u64)> {
    let overflow = || unsupported("its addresses are too large to add a segment");
    let loads: Vec<&Segment> = layout
        .segments
        .iter()
        .filter(|s| s.p_type == elf::PT_LOAD)
        .collect();
    let first = loads
        .iter()
        .min_by_key(|s| s.vaddr)
        .ok_or_else(|| unsupported("it has no PT_LOAD segment"))?;
    let align = loads
        .iter()
        .map(|s| s.align)
        .max()
        .unwrap_or(0)
        .max(MIN_PAGE);
    if !align.is_power_of_two() {
        return Err(malformed(format!(
            "PT_LOAD alignment {align:#x} is not a power of two"
        )));
    }
    let max_end = loads
        .iter()
        .map(|s| s.vaddr.checked_add(s.memsz))
        .try_fold(0u64, |acc, e| e.map(|e| acc.max(e)))
        .ok_or_else(overflow)?;
    let floor = max_end
        .checked_next_multiple_of(align)
        .ok_or_else(overflow)?;
    let end = layout
        .file_len
        .checked_next_multiple_of(8)
        .ok_or_else(overflow)?;
    // Executables: keep vaddr - offset equal to the first segment's, so that
    // a kernel computing AT_PHDR as first-load-address + e_phoff is right.
    if file.kind() == ElfKind::DynamicExecutable
        && let Some(delta) = first.vaddr.checked_sub(first.offset)
        && delta % align == 0
    {
        let offset = end.max(floor.saturating_sub(delta));
        if offset - end <= MAX_EXEC_PADDING {
            let vaddr = offset.checked_add(delta).ok_or_else(overflow)?;
            return Ok((offset, vaddr, align));
        }
    }
    let vaddr = floor.checked_add(end % align).ok_or_else(overflow)?;
    Ok((end, vaddr, align))
}

/// The program header table in the file's layout: `Elf64_Phdr` keeps
/// `p_flags` second, `Elf32_Phdr` keeps it after `p_memsz`.
fn encode_phdrs(d: Decoder, phdrs: &[Segment]) -> Vec<u8> {
    let mut b = Vec::with_capacity(phdrs.len() * d.phdr_size());
    for s in phdrs {
        d.put_u32(&mut b, s.p_type);
        if d.is64() {
            d.put_u32(&mut b, s.flags);
        }
        for v in [s.offset, s.vaddr, s.paddr, s.filesz, s.memsz] {
            d.put_word(&mut b, v);
        }
        if !d.is64() {
            d.put_u32(&mut b, s.flags);
        }
        d.put_word(&mut b, s.align);
    }
    b
}

/// The entries, a `DT_NULL` terminator, and `DT_NULL` up to `slots`.
fn encode_dynamic(d: Decoder, entries: &[(u64, u64)], slots: u64) -> Vec<u8> {
    let len = usize::try_from(slots).unwrap_or(usize::MAX) * d.dyn_size();
    let mut b = Vec::with_capacity(len);
    for (tag, val) in entries {
        d.put_word(&mut b, *tag);
        d.put_word(&mut b, *val);
    }
    b.resize(len, 0);
    b
}
