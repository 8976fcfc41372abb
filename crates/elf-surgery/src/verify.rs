//! Verification: the loader's invariants, checked on the input before
//! planning and on the edited view (patches applied virtually) before any
//! byte is written.

use object::elf;

use crate::edit::{Edit, EditView};
use crate::error::{Error, ErrorKind, Result};
use crate::file::ElfFile;
use crate::search_path::{SearchPathEdit, Target};
use crate::shape::{Layout, Segment};
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
                if s.offset != layout.phoff
                    || s.filesz < layout.phnum * layout.decoder.phdr_size() as u64
                {
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
    disjoint_regions(layout)?;
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

/// What an edit rewrites (the ELF header's fields, the program and section
/// header tables, the dynamic section) and what it must read back
/// unchanged (the interpreter, the dynamic strings) lie apart: a patch of
/// one would otherwise change another.
fn disjoint_regions(layout: &Layout) -> Check {
    let d = layout.decoder;
    let mut regions: Vec<(&str, u64, u64)> = vec![
        ("the ELF header", 0, d.ehdr_size() as u64),
        (
            "the program header table",
            layout.phoff,
            layout.phnum * d.phdr_size() as u64,
        ),
        (
            "the section header table",
            layout.shoff,
            layout.shnum * d.shdr_size() as u64,
        ),
    ];
    if let Some(dynamic) = &layout.dynamic {
        regions.push((
            "the dynamic section",
            dynamic.offset,
            dynamic.slots * d.dyn_size() as u64,
        ));
        if let Some(strtab) = dynamic.strtab {
            regions.push(("the dynamic string table", strtab.offset, strtab.size));
        }
    }
    for s in layout
        .segments
        .iter()
        .filter(|s| s.p_type == elf::PT_INTERP)
    {
        regions.push(("the interpreter's name", s.offset, s.filesz));
    }
    regions.retain(|(_, _, len)| *len > 0);
    for (i, (a, a_at, a_len)) in regions.iter().enumerate() {
        for (b, b_at, b_len) in &regions[i + 1..] {
            let a_end = a_at.saturating_add(*a_len);
            let b_end = b_at.saturating_add(*b_len);
            if a_at < &b_end && b_at < &a_end {
                return Err(format!(
                    "{a} ({a_at:#x}+{a_len:#x}) overlaps {b} ({b_at:#x}+{b_len:#x})"
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
/// what was asked; returns the edited file as parsed from that view
/// (`None` for an identity edit: the output is the source).
pub(crate) fn verified_result(
    original: &ElfFile,
    edit: &Edit,
    source: &mut impl ReadAt,
    request: &SearchPathEdit,
    target: Option<&Target>,
) -> Result<Option<ElfFile>> {
    if edit.is_identity() {
        return Ok(None);
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
    let others = |d: &crate::shape::Dynamic| {
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
    Ok(Some(edited))
}

/// Every rejection path of [`verified_result`]: a real edit is planned, its
/// output is broken in one way, and the broken bytes are handed to the
/// verifier as if the planner had produced them. (The output-length check
/// is defence in depth: an edit's view has its planned length by
/// construction, so no edit reaches it.)
#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::process::Command;
    use std::sync::OnceLock;

    use super::*;
    use crate::edit::Appended;
    use crate::plan;
    use crate::source::Source;

    const ENTRIES: [&str; 2] = ["$ORIGIN/../x/lib", "$ORIGIN/../../y/lib"];

    /// `source` compiled by gcc with `args`, once per test process.
    fn compiled(cell: &'static OnceLock<Vec<u8>>, source: &str, args: &[&str]) -> Vec<u8> {
        cell.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let c = dir.path().join("x.c");
            std::fs::write(&c, source).unwrap();
            let out = dir.path().join("x.out");
            let status = Command::new("gcc")
                .args(args)
                .arg("-o")
                .arg(&out)
                .arg(&c)
                .status()
                .expect("gcc runs (cargo xtask setup installs it)");
            assert!(status.success());
            std::fs::read(out).unwrap()
        })
        .clone()
    }

    /// A shared library with SONAME, NEEDED, RUNPATH, DT_INIT/DT_FINI and
    /// init/fini arrays (GNU ld, so no PT_PHDR).
    fn library() -> Vec<u8> {
        static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
        compiled(
            &BYTES,
            "extern int printf(const char *, ...);\nint lib_fn(void) { return printf(\"x\"); }\n",
            &[
                "-shared",
                "-fPIC",
                "-O1",
                "-Wl,--enable-new-dtags",
                "-Wl,-rpath,/opt/old",
                "-Wl,-soname,libverify.so.1",
            ],
        )
    }

    /// A PIE executable: PT_PHDR and an interpreter.
    fn executable() -> Vec<u8> {
        static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
        compiled(
            &BYTES,
            "int main(void) { return 0; }\n",
            &["-pie", "-fPIE", "-O1"],
        )
    }

    /// A planned, verified edit of `original` and its output bytes.
    struct Case {
        original: Vec<u8>,
        elf: ElfFile,
        request: SearchPathEdit,
        target: Option<Target>,
        output: Vec<u8>,
    }

    impl Case {
        fn new(original: Vec<u8>, request: SearchPathEdit) -> Self {
            let elf = ElfFile::parse(&mut Cursor::new(&original)).unwrap();
            let planned = plan::plan(&elf, &request).unwrap();
            let mut output = Vec::new();
            std::io::copy(
                &mut planned.edit.reader(Cursor::new(&original)).unwrap(),
                &mut output,
            )
            .unwrap();
            let case = Self {
                original,
                elf,
                request,
                target: planned.target,
                output,
            };
            case.verify(&case.output.clone())
                .expect("the unbroken edit verifies");
            case
        }

        fn forced(original: Vec<u8>) -> Self {
            Self::new(original, SearchPathEdit::append(ENTRIES).force_rpath())
        }

        /// Verifies `output` as the result of an edit of the original.
        fn verify(&self, output: &[u8]) -> Result<()> {
            let n = self.original.len();
            let edit = Edit::new(
                crate::source::Stamp::of_len(n as u64),
                vec![Edit::patch(0, output[..n].to_vec())],
                vec![Appended::Bytes(output[n..].to_vec())],
            )
            .unwrap();
            let mut cursor = Cursor::new(&self.original);
            let mut source = Source::new(&mut cursor).unwrap();
            verified_result(
                &self.elf,
                &edit,
                &mut source,
                &self.request,
                self.target.as_ref(),
            )
            .map(drop)
        }

        /// The verifier's reason for refusing the output after `breaking` it.
        fn rejection(&self, breaking: impl FnOnce(&mut Elf64)) -> String {
            let mut broken = Elf64(self.output.clone());
            breaking(&mut broken);
            assert_ne!(broken.0, self.output, "the test broke nothing");
            match self.verify(&broken.0) {
                Ok(()) => panic!("the verifier accepted a broken edit"),
                Err(e) => match e.kind() {
                    ErrorKind::Verification(reason) => reason.clone(),
                    other => panic!("not a verification error: {other}"),
                },
            }
        }
    }

    /// Field access on a little-endian ELF64 image.
    struct Elf64(Vec<u8>);

    impl Elf64 {
        fn u16(&self, at: usize) -> u64 {
            u64::from(u16::from_le_bytes(self.0[at..at + 2].try_into().unwrap()))
        }
        fn u32(&self, at: usize) -> u64 {
            u64::from(u32::from_le_bytes(self.0[at..at + 4].try_into().unwrap()))
        }
        fn u64(&self, at: usize) -> u64 {
            u64::from_le_bytes(self.0[at..at + 8].try_into().unwrap())
        }
        fn set_u16(&mut self, at: usize, v: u64) {
            self.0[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
        }
        fn set_u32(&mut self, at: usize, v: u64) {
            self.0[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
        }
        fn set_u64(&mut self, at: usize, v: u64) {
            self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        /// Offsets of the program headers.
        fn phdrs(&self) -> Vec<usize> {
            let (phoff, phnum) = (self.u64(32) as usize, self.u16(56) as usize);
            (0..phnum).map(|i| phoff + i * 56).collect()
        }
        /// Offsets of the program headers of type `p_type`.
        fn phdrs_of(&self, p_type: u32) -> Vec<usize> {
            self.phdrs()
                .into_iter()
                .filter(|&h| self.u32(h) == u64::from(p_type))
                .collect()
        }
        /// Offsets of the section headers of type `sh_type`.
        fn shdrs_of(&self, sh_type: u32) -> Vec<usize> {
            let (shoff, shnum) = (self.u64(40) as usize, self.u16(60) as usize);
            (0..shnum)
                .map(|i| shoff + i * 64)
                .filter(|&h| self.u32(h + 4) == u64::from(sh_type))
                .collect()
        }
        /// Offsets of the dynamic entries up to and including the first DT_NULL.
        fn dynamic(&self) -> Vec<usize> {
            let h = self.phdrs_of(elf::PT_DYNAMIC)[0];
            let (start, size) = (self.u64(h + 8) as usize, self.u64(h + 32) as usize);
            let mut out = Vec::new();
            for at in (start..start + size).step_by(16) {
                out.push(at);
                if self.u64(at) == u64::from(elf::DT_NULL) {
                    break;
                }
            }
            out
        }
        /// The offset of the dynamic entry with `tag`.
        fn entry(&self, tag: u32) -> usize {
            *self
                .dynamic()
                .iter()
                .find(|&&at| self.u64(at) == u64::from(tag))
                .unwrap_or_else(|| panic!("no dynamic tag {tag}"))
        }
        /// The file offset of virtual address `vaddr`.
        fn file_offset(&self, vaddr: u64) -> usize {
            let h = self
                .phdrs_of(elf::PT_LOAD)
                .into_iter()
                .find(|&h| (self.u64(h + 16)..self.u64(h + 16) + self.u64(h + 32)).contains(&vaddr))
                .expect("address in a PT_LOAD");
            (vaddr - self.u64(h + 16) + self.u64(h + 8)) as usize
        }
        /// The file offset of the dynamic string named by entry `tag`.
        fn string_of(&self, tag: u32) -> usize {
            let strtab = self.u64(self.entry(elf::DT_STRTAB) + 8);
            self.file_offset(strtab) + self.u64(self.entry(tag) + 8) as usize
        }
        /// Turns the first DT_NULL into `tag` = `value`, keeping a DT_NULL after it.
        fn add_entry(&mut self, tag: u32, value: u64) {
            let last = *self.dynamic().last().unwrap();
            let h = self.phdrs_of(elf::PT_DYNAMIC)[0];
            let end = (self.u64(h + 8) + self.u64(h + 32)) as usize;
            assert!(last + 32 <= end, "no spare DT_NULL to use");
            self.set_u64(last, u64::from(tag));
            self.set_u64(last + 8, value);
        }
    }

    fn assert_reason(reason: &str, expected: &str) {
        assert!(
            reason.contains(expected),
            "{reason:?} does not say {expected:?}"
        );
    }

    #[test]
    fn a_result_that_does_not_parse() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| e.set_u16(54, 0x20)); // e_phentsize
        assert_reason(&reason, "re-parse");
    }

    #[test]
    fn a_result_that_is_not_elf() {
        let case = Case::forced(library());
        assert_reason(&case.rejection(|e| e.0[0] = 0), "the result is not ELF");
    }

    #[test]
    fn a_changed_machine() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| e.set_u16(18, u64::from(elf::EM_AARCH64)));
        assert_reason(&reason, "the file's kind or machine changed");
    }

    #[test]
    fn no_pt_load() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            // The dynamic segment goes too: without a PT_LOAD its strings
            // cannot even be read.
            for h in [e.phdrs_of(elf::PT_LOAD), e.phdrs_of(elf::PT_DYNAMIC)].concat() {
                e.set_u32(h, u64::from(elf::PT_NULL));
            }
        });
        assert_reason(&reason, "no PT_LOAD segment");
    }

    #[test]
    fn a_pt_load_with_a_bad_alignment_or_congruence() {
        let case = Case::forced(library());
        let first = |e: &Elf64| e.phdrs_of(elf::PT_LOAD)[1];
        let reason = case.rejection(|e| e.set_u64(first(e) + 48, 3));
        assert_reason(&reason, "has alignment 0x3");
        let reason = case.rejection(|e| {
            let h = first(e);
            e.set_u64(h + 8, e.u64(h + 8) + 8);
        });
        assert_reason(&reason, "is not congruent");
    }

    #[test]
    fn a_pt_load_bigger_on_file_than_in_memory_or_past_the_end() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_LOAD)[1];
            e.set_u64(h + 40, e.u64(h + 32) - 1);
        });
        assert_reason(&reason, "has filesz > memsz");
        let reason = case.rejection(|e| {
            let h = *e.phdrs_of(elf::PT_LOAD).last().unwrap();
            e.set_u64(h + 32, 1 << 40);
            e.set_u64(h + 40, 1 << 40);
        });
        assert_reason(&reason, "extends past the end of the file");
    }

    #[test]
    fn pt_loads_out_of_order() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_LOAD)[1];
            e.set_u64(h + 16, 0); // overlaps the first
            e.set_u64(h + 8, 0);
        });
        assert_reason(&reason, "PT_LOADs are not ascending and disjoint");
    }

    #[test]
    fn a_pt_phdr_after_a_load_elsewhere_or_outside_a_load() {
        let case = Case::forced(executable());
        let reason = case.rejection(|e| {
            let (phdr, load) = (e.phdrs_of(elf::PT_PHDR)[0], e.phdrs_of(elf::PT_LOAD)[0]);
            let (a, b) = (e.0[phdr..phdr + 56].to_vec(), e.0[load..load + 56].to_vec());
            e.0[phdr..phdr + 56].copy_from_slice(&b);
            e.0[load..load + 56].copy_from_slice(&a);
        });
        assert_reason(&reason, "PT_PHDR comes after a PT_LOAD");
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_PHDR)[0];
            e.set_u64(h + 32, e.u64(h + 32) - 56);
        });
        assert_reason(
            &reason,
            "PT_PHDR does not describe the program header table",
        );
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_PHDR)[0];
            e.set_u64(h + 16, e.u64(h + 16) + 0x10_0000);
        });
        assert_reason(&reason, "PT_PHDR is not inside a PT_LOAD");
    }

    #[test]
    fn a_pt_dynamic_outside_a_load() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_DYNAMIC)[0];
            e.set_u64(h + 16, e.u64(h + 16) + 0x10_0000);
        });
        assert_reason(&reason, "PT_DYNAMIC is not inside a PT_LOAD");
    }

    #[test]
    fn section_headers_that_disagree_with_the_dynamic_segment() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let h = e.shdrs_of(elf::SHT_DYNAMIC)[0];
            e.set_u64(h + 24, e.u64(h + 24) + 16);
        });
        assert_reason(&reason, "the .dynamic section");
        let reason = case.rejection(|e| {
            let dynamic = e.shdrs_of(elf::SHT_DYNAMIC)[0];
            let strtab = e.u64(40) as usize + e.u32(dynamic + 40) as usize * 64;
            e.set_u64(strtab + 32, e.u64(strtab + 32) + 1);
        });
        assert_reason(&reason, "disagrees with DT_STRTAB/DT_STRSZ");
    }

    #[test]
    fn init_and_fini_outside_code() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let at = e.entry(elf::DT_INIT) + 8;
            e.set_u64(at, 0x10); // the first PT_LOAD is not executable
        });
        assert_reason(&reason, "is not in executable code");
        let reason = case.rejection(|e| {
            let at = e.entry(elf::DT_INIT_ARRAY) + 8;
            e.set_u64(at, 0x7fff_0000);
        });
        assert_reason(
            &reason,
            "an init/fini array at 0x7fff0000 is not in a loaded segment",
        );
    }

    #[test]
    fn a_changed_or_missing_segment() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_GNU_STACK)[0];
            e.set_u32(h + 4, u64::from(elf::PF_R | elf::PF_W | elf::PF_X));
        });
        assert_reason(&reason, "a segment other than PT_PHDR/PT_DYNAMIC changed");
        let reason = case.rejection(|e| {
            let kept = |t: u64| {
                ![elf::PT_PHDR, elf::PT_DYNAMIC, elf::PT_NULL, elf::PT_LOAD]
                    .iter()
                    .any(|k| u64::from(*k) == t)
            };
            let last = e
                .phdrs()
                .into_iter()
                .rev()
                .find(|&h| kept(e.u32(h)))
                .unwrap();
            e.set_u32(last, u64::from(elf::PT_NULL));
        });
        assert_reason(&reason, "a segment went missing");
    }

    #[test]
    fn a_missing_dynamic_section() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let h = e.phdrs_of(elf::PT_DYNAMIC)[0];
            e.set_u32(h, u64::from(elf::PT_NULL));
        });
        assert_reason(&reason, "the dynamic section went missing");
    }

    #[test]
    fn other_dynamic_entries_changed() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let at = e.entry(elf::DT_SYMENT) + 8;
            e.set_u64(at, e.u64(at) + 8);
        });
        assert_reason(
            &reason,
            "dynamic entries other than the search path changed",
        );
    }

    #[test]
    fn needed_soname_or_interpreter_no_longer_read_back() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let at = e.string_of(elf::DT_SONAME);
            e.0[at] = b'X';
        });
        assert_reason(
            &reason,
            "NEEDED, SONAME or the interpreter no longer read back",
        );
        let exe = Case::forced(executable());
        let reason = exe.rejection(|e| {
            let h = e.phdrs_of(elf::PT_INTERP)[0];
            let at = e.u64(h + 8) as usize + 1;
            e.0[at] = b'X';
        });
        assert_reason(
            &reason,
            "NEEDED, SONAME or the interpreter no longer read back",
        );
    }

    #[test]
    fn a_forced_rpath_that_does_not_read_back_or_keeps_a_runpath() {
        let case = Case::forced(library());
        let reason = case.rejection(|e| {
            let at = e.string_of(elf::DT_RPATH);
            e.0[at] = b'X';
        });
        assert_reason(&reason, "the new DT_RPATH does not read back");
        let reason = case.rejection(|e| {
            let value = e.u64(e.entry(elf::DT_RPATH) + 8);
            e.add_entry(elf::DT_RUNPATH, value);
        });
        assert_reason(&reason, "a DT_RUNPATH is left beside the forced DT_RPATH");
    }

    #[test]
    fn a_runpath_that_does_not_read_back() {
        let case = Case::new(library(), SearchPathEdit::append(ENTRIES));
        let reason = case.rejection(|e| {
            let at = e.string_of(elf::DT_RUNPATH);
            e.0[at] = b'X';
        });
        assert_reason(&reason, "the new DT_RUNPATH does not read back");
    }

    #[test]
    fn a_search_path_that_was_not_removed() {
        let case = Case::new(library(), SearchPathEdit::set(Vec::<String>::new()));
        assert!(case.target.is_none());
        let reason = case.rejection(|e| {
            let value = e.u64(e.entry(elf::DT_SONAME) + 8);
            e.add_entry(elf::DT_RPATH, value);
        });
        assert_reason(&reason, "the search path was not removed");
    }

    #[test]
    fn the_sample_inputs_are_what_the_tests_assume() {
        // Guards the assumptions above against a different toolchain.
        let lib = Elf64(library());
        assert!(lib.phdrs_of(elf::PT_PHDR).is_empty());
        assert!(lib.phdrs_of(elf::PT_LOAD).len() >= 3);
        let exe = Elf64(executable());
        assert_eq!(exe.phdrs_of(elf::PT_PHDR).len(), 1);
    }
}
