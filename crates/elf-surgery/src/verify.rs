//! Verification: the loader's invariants, checked on the input before
//! planning and on the edited view (patches applied virtually) before any
//! byte is written.

use object::elf;

use crate::edit::{Edit, EditView};
use crate::error::{Error, ErrorKind, Result};
use crate::file::ElfFile;
use crate::layout::{Layout, Segment};
use crate::search_path::{SearchPathEdit, Target};
use crate::source::ReadAt;

type Check = std::result::Result<(), String>;

/// Whether `start..start+len` lies inside `outer..outer+outer_len`.
fn within(start: u64, len: u64, outer: u64, outer_len: u64) -> bool {
    match (start.checked_add(len), outer.checked_add(outer_len)) {
        (Some(end), Some(outer_end)) => start >= outer && end <= outer_end,
        _ => false,
    }
}

fn covered_by_load(layout: &Layout, s: &Segment) -> bool {
    layout.segments.iter().any(|l| {
        l.p_type == elf::PT_LOAD
            && s.offset >= l.offset
            && within(s.offset, s.filesz, l.offset, l.filesz)
            && s.vaddr.checked_sub(l.vaddr) == Some(s.offset - l.offset)
    })
}

fn in_load(layout: &Layout, vaddr: u64, len: u64, executable: bool) -> bool {
    layout.segments.iter().any(|l| {
        l.p_type == elf::PT_LOAD
            && (!executable || l.flags & elf::PF_X != 0)
            && within(vaddr, len, l.vaddr, l.memsz)
    })
}

/// The invariants the loader relies on; each failure says which.
pub(crate) fn check_layout(layout: &Layout) -> Check {
    let loads: Vec<&Segment> = layout
        .segments
        .iter()
        .filter(|s| s.p_type == elf::PT_LOAD)
        .collect();
    if loads.is_empty() {
        return Err("no PT_LOAD segment".into());
    }
    for l in &loads {
        if l.align > 1 && !l.align.is_power_of_two() {
            return Err(format!(
                "PT_LOAD at {:#x} has alignment {:#x}",
                l.vaddr, l.align
            ));
        }
        if l.align > 1 && l.offset % l.align != l.vaddr % l.align {
            return Err(format!(
                "PT_LOAD at {:#x} is not congruent: offset {:#x} and address differ modulo {:#x}",
                l.vaddr, l.offset, l.align
            ));
        }
        if l.filesz > l.memsz {
            return Err(format!("PT_LOAD at {:#x} has filesz > memsz", l.vaddr));
        }
        if l.offset
            .checked_add(l.filesz)
            .is_none_or(|e| e > layout.file_len)
        {
            return Err(format!(
                "PT_LOAD at {:#x} extends past the end of the file",
                l.vaddr
            ));
        }
    }
    for pair in loads.windows(2) {
        let end = pair[0].vaddr.checked_add(pair[0].memsz);
        if end.is_none_or(|e| e > pair[1].vaddr) {
            return Err(format!(
                "PT_LOADs are not ascending and disjoint ({:#x} then {:#x})",
                pair[0].vaddr, pair[1].vaddr
            ));
        }
    }
    let first_load = layout
        .segments
        .iter()
        .position(|s| s.p_type == elf::PT_LOAD);
    for (i, s) in layout.segments.iter().enumerate() {
        match s.p_type {
            elf::PT_PHDR => {
                if first_load.is_some_and(|f| f < i) {
                    return Err("PT_PHDR comes after a PT_LOAD".into());
                }
                if s.offset != layout.phoff || s.filesz < layout.phnum * 56 {
                    return Err("PT_PHDR does not describe the program header table".into());
                }
                if !covered_by_load(layout, s) {
                    return Err("PT_PHDR is not inside a PT_LOAD".into());
                }
            }
            elf::PT_DYNAMIC if !covered_by_load(layout, s) => {
                return Err("PT_DYNAMIC is not inside a PT_LOAD".into());
            }
            _ => {}
        }
    }
    if let Some(dynamic) = &layout.dynamic {
        for sec in layout
            .sections
            .iter()
            .filter(|s| s.sh_type == elf::SHT_DYNAMIC)
        {
            if sec.offset != dynamic.offset || sec.addr != dynamic.vaddr {
                return Err(format!(
                    "the .dynamic section (offset {:#x}) is not where PT_DYNAMIC is ({:#x})",
                    sec.offset, dynamic.offset
                ));
            }
            let strtab = layout.sections.iter().find(|s| s.index == sec.link);
            if let (Some(sh), Some(st)) = (strtab, dynamic.strtab)
                && sh.sh_type == elf::SHT_STRTAB
                && (sh.addr != st.vaddr || sh.offset != st.offset || sh.size != st.size)
            {
                return Err(format!(
                    "the .dynstr section ({:#x}+{:#x}) disagrees with DT_STRTAB/DT_STRSZ ({:#x}+{:#x})",
                    sh.addr, sh.size, st.vaddr, st.size
                ));
            }
        }
        for tag in [elf::DT_INIT, elf::DT_FINI] {
            if let Some(addr) = dynamic.value(tag)
                && !in_load(layout, addr, 1, true)
            {
                return Err(format!(
                    "DT_INIT/DT_FINI {addr:#x} is not in executable code"
                ));
            }
        }
        for (array, size) in [
            (elf::DT_INIT_ARRAY, elf::DT_INIT_ARRAYSZ),
            (elf::DT_FINI_ARRAY, elf::DT_FINI_ARRAYSZ),
            (elf::DT_PREINIT_ARRAY, elf::DT_PREINIT_ARRAYSZ),
        ] {
            if let Some(addr) = dynamic.value(array)
                && !in_load(layout, addr, dynamic.value(size).unwrap_or(0), false)
            {
                return Err(format!(
                    "an init/fini array at {addr:#x} is not in a loaded segment"
                ));
            }
        }
    }
    Ok(())
}

fn failed(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Verification(what.into()))
}

fn is_path_or_strtab(tag: u64) -> bool {
    [
        elf::DT_RPATH,
        elf::DT_RUNPATH,
        elf::DT_STRTAB,
        elf::DT_STRSZ,
    ]
    .iter()
    .any(|t| u64::from(*t) == tag)
}

/// Parses the edited view of `source` and checks it against `original` and
/// what was asked.
pub(crate) fn verify_edit(
    original: &ElfFile,
    edit: &Edit,
    source: &mut impl ReadAt,
    request: &SearchPathEdit,
    target: Option<&Target>,
) -> Result<()> {
    if edit.is_identity() {
        return Ok(());
    }
    let mut view = EditView::new(edit, source);
    let edited = ElfFile::parse_at(&mut view).map_err(|e| failed(format!("re-parse: {e}")))?;
    let (Some(old), Some(new)) = (&original.layout, &edited.layout) else {
        return Err(failed("the result is not ELF"));
    };
    if edited.kind() != original.kind() || new.machine != old.machine || new.e_type != old.e_type {
        return Err(failed("the file's kind or machine changed"));
    }
    if new.file_len != edit.output_len() {
        return Err(failed("the output length is not the planned one"));
    }
    check_layout(new).map_err(failed)?;
    // Every segment other than those the edit may move is untouched, and at
    // most one PT_LOAD is new.
    let kept = |s: &&Segment| !matches!(s.p_type, elf::PT_PHDR | elf::PT_DYNAMIC | elf::PT_NULL);
    let mut added = 0;
    let mut old_iter = old.segments.iter().filter(kept).peekable();
    for s in new.segments.iter().filter(kept) {
        if old_iter.peek() == Some(&s) {
            old_iter.next();
        } else if s.p_type == elf::PT_LOAD && added == 0 {
            added += 1;
        } else {
            return Err(failed("a segment other than PT_PHDR/PT_DYNAMIC changed"));
        }
    }
    if old_iter.next().is_some() {
        return Err(failed("a segment went missing"));
    }
    let (Some(od), Some(nd)) = (&old.dynamic, &new.dynamic) else {
        return Err(failed("the dynamic section went missing"));
    };
    let others = |d: &crate::layout::Dynamic| {
        d.entries
            .iter()
            .filter(|(t, _)| !is_path_or_strtab(*t))
            .copied()
            .collect::<Vec<_>>()
    };
    if others(od) != others(nd) {
        return Err(failed("dynamic entries other than the search path changed"));
    }
    let (oraw, nraw) = (&original.raw, &edited.raw);
    if oraw.needed != nraw.needed
        || oraw.soname != nraw.soname
        || oraw.interpreter != nraw.interpreter
    {
        return Err(failed(
            "NEEDED, SONAME or the interpreter no longer read back",
        ));
    }
    match target {
        Some(t) if t.tag == elf::DT_RPATH => {
            if nraw.rpath.as_ref() != Some(&t.path) {
                return Err(failed("the new DT_RPATH does not read back"));
            }
            if request.force_rpath && nraw.runpath.is_some() {
                return Err(failed("a DT_RUNPATH is left beside the forced DT_RPATH"));
            }
        }
        Some(t) => {
            if nraw.runpath.as_ref() != Some(&t.path) {
                return Err(failed("the new DT_RUNPATH does not read back"));
            }
        }
        None => {
            if request.set.is_some() && (nraw.rpath.is_some() || nraw.runpath.is_some()) {
                return Err(failed("the search path was not removed"));
            }
        }
    }
    Ok(())
}
