//! Golden files: each small committed ELF input under `tests/golden/`,
//! edited by each request of [`EDITS`], is dumped as text (ELF header,
//! program headers, the dynamic section with its strings resolved, sizes)
//! and compared with the committed `tests/golden/<input>.<edit>.txt`.
//!
//! The dump is read with the `object` crate, not with this crate's own
//! reader, so a change to the layout of an edited file shows up as a diff
//! a reviewer can read. After an intended change, regenerate the files with
//! `ELF_SURGERY_BLESS=1 cargo test -p elf-surgery --test golden` and review
//! the diff.
//!
//! The inputs are the ELF seeds of the `elf_edit` fuzz target
//! (`fuzz/seeds/make_seeds.py`) without their leading request byte: shared
//! libraries with a RUNPATH, an RPATH, none, and full RELRO, and a static
//! PIE without a dynamic section.

use std::fmt::Write as _;
use std::fs;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use elf_surgery::{ElfFile, SearchPathEdit};
use object::elf;
use object::read::elf::{Dyn as _, FileHeader, ProgramHeader as _};

/// Makes one edit request.
type Request = fn() -> SearchPathEdit;

/// `(name, request)`: the edits applied to every input.
const EDITS: &[(&str, Request)] = &[
    ("append", || SearchPathEdit::append(["$ORIGIN/../x/lib"])),
    ("append-force-rpath", || {
        SearchPathEdit::append(["$ORIGIN/../x/lib", "$ORIGIN/../../y/lib"]).force_rpath()
    }),
    ("set", || SearchPathEdit::set(["$ORIGIN"])),
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn inputs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "txt"))
        .collect();
    files.sort();
    files
}

/// The edited bytes of `input`, or why nothing changed.
fn edit(input: &[u8], request: &SearchPathEdit) -> Result<Vec<u8>, String> {
    let mut source = Cursor::new(input);
    let parsed = ElfFile::parse(&mut source).map_err(|e| format!("parse: {e}"))?;
    let planned = parsed
        .plan_edit(&mut source, request)
        .map_err(|e| format!("plan: {e}"))?;
    if let Some(reason) = planned.unchanged_reason() {
        return Err(format!("unchanged: {reason:?}"));
    }
    let mut out = Vec::new();
    planned
        .reader(Cursor::new(input))
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out.len() as u64, planned.output_len());
    Ok(out)
}

fn tag_name(tag: u64) -> String {
    let name = match u32::try_from(tag).unwrap_or(u32::MAX) {
        elf::DT_NULL => "NULL",
        elf::DT_NEEDED => "NEEDED",
        elf::DT_PLTRELSZ => "PLTRELSZ",
        elf::DT_PLTGOT => "PLTGOT",
        elf::DT_HASH => "HASH",
        elf::DT_STRTAB => "STRTAB",
        elf::DT_SYMTAB => "SYMTAB",
        elf::DT_RELA => "RELA",
        elf::DT_RELASZ => "RELASZ",
        elf::DT_RELAENT => "RELAENT",
        elf::DT_STRSZ => "STRSZ",
        elf::DT_SYMENT => "SYMENT",
        elf::DT_SONAME => "SONAME",
        elf::DT_RPATH => "RPATH",
        elf::DT_RUNPATH => "RUNPATH",
        elf::DT_FLAGS => "FLAGS",
        elf::DT_FLAGS_1 => "FLAGS_1",
        elf::DT_BIND_NOW => "BIND_NOW",
        elf::DT_GNU_HASH => "GNU_HASH",
        elf::DT_VERSYM => "VERSYM",
        elf::DT_RELACOUNT => "RELACOUNT",
        elf::DT_DEBUG => "DEBUG",
        elf::DT_TEXTREL => "TEXTREL",
        elf::DT_JMPREL => "JMPREL",
        elf::DT_PLTREL => "PLTREL",
        _ => return format!("{tag:#x}"),
    };
    name.to_owned()
}

fn segment_type(p_type: u32) -> String {
    let name = match p_type {
        elf::PT_LOAD => "LOAD",
        elf::PT_DYNAMIC => "DYNAMIC",
        elf::PT_INTERP => "INTERP",
        elf::PT_NOTE => "NOTE",
        elf::PT_PHDR => "PHDR",
        elf::PT_TLS => "TLS",
        elf::PT_GNU_EH_FRAME => "GNU_EH_FRAME",
        elf::PT_GNU_STACK => "GNU_STACK",
        elf::PT_GNU_RELRO => "GNU_RELRO",
        elf::PT_GNU_PROPERTY => "GNU_PROPERTY",
        _ => return format!("{p_type:#x}"),
    };
    name.to_owned()
}

/// A readelf-like dump of a 64-bit little-endian ELF file.
fn dump(data: &[u8]) -> String {
    let header = elf::FileHeader64::<object::LittleEndian>::parse(data).unwrap();
    let endian = header.endian().unwrap();
    let segments = header.program_headers(endian, data).unwrap();
    let mut out = String::new();
    let _ = writeln!(out, "file size: {}", data.len());
    let _ = writeln!(
        out,
        "type: {}, program headers: {} at {:#x}, sections: {}",
        header.e_type(endian),
        header.e_phnum(endian),
        header.e_phoff(endian),
        header.e_shnum(endian)
    );
    out.push_str("program headers:\n");
    for p in segments {
        let _ = writeln!(
            out,
            "  {:<13} offset {:#07x} vaddr {:#07x} filesz {:#07x} memsz {:#07x} flags {}",
            segment_type(p.p_type(endian)),
            p.p_offset(endian),
            p.p_vaddr(endian),
            p.p_filesz(endian),
            p.p_memsz(endian),
            p.p_flags(endian)
        );
    }
    let dynamic = segments
        .iter()
        .find_map(|p| p.dynamic(endian, data).unwrap());
    let Some(dynamic) = dynamic else {
        out.push_str("no dynamic section\n");
        return out;
    };
    // String values live in the table DT_STRTAB points to (an address).
    let offset_of = |addr: u64| {
        segments.iter().find_map(|p| {
            let start = p.p_vaddr(endian);
            (p.p_type(endian) == elf::PT_LOAD
                && (start..start + p.p_filesz(endian)).contains(&addr))
            .then(|| usize::try_from(addr - start + p.p_offset(endian)).unwrap())
        })
    };
    let strtab = dynamic
        .iter()
        .find(|d| d.d_tag(endian) == u64::from(elf::DT_STRTAB))
        .and_then(|d| offset_of(d.d_val(endian)))
        .unwrap();
    let string = |at: u64| {
        let start = strtab + usize::try_from(at).unwrap();
        let end = data[start..].iter().position(|&b| b == 0).unwrap() + start;
        String::from_utf8_lossy(&data[start..end]).into_owned()
    };
    let _ = writeln!(out, "dynamic section: {} entries", dynamic.len());
    for d in dynamic {
        let tag = d.d_tag(endian);
        let value = d.d_val(endian);
        let shown = match u32::try_from(tag).unwrap_or(u32::MAX) {
            elf::DT_NEEDED | elf::DT_SONAME | elf::DT_RPATH | elf::DT_RUNPATH => {
                format!("[{}]", string(value))
            }
            _ => format!("{value:#x}"),
        };
        let _ = writeln!(out, "  {:<10} {shown}", tag_name(tag));
    }
    out
}

/// The golden text of `input` edited by `request`: the input's dump, then
/// the edited file's (or why it is unchanged).
fn golden_text(input: &[u8], request: &SearchPathEdit) -> String {
    let mut text = String::from("== input\n");
    text.push_str(&dump(input));
    text.push_str("== edited\n");
    match edit(input, request) {
        Ok(edited) => text.push_str(&dump(&edited)),
        Err(reason) => {
            text.push_str(&reason);
            text.push('\n');
        }
    }
    text
}

#[test]
fn edited_files_match_their_golden_dumps() {
    let bless = std::env::var_os("ELF_SURGERY_BLESS").is_some();
    let inputs = inputs();
    assert_eq!(inputs.len(), 5, "the committed inputs: {inputs:?}");
    let mut failures = Vec::new();
    for input in &inputs {
        let bytes = fs::read(input).unwrap();
        for (name, request) in EDITS {
            let actual = golden_text(&bytes, &request());
            let file_name = format!(
                "{}.{name}.txt",
                input.file_name().unwrap().to_string_lossy()
            );
            let golden = golden_dir().join(&file_name);
            if bless {
                fs::write(&golden, &actual).unwrap();
                continue;
            }
            let expected = fs::read_to_string(&golden).unwrap_or_default();
            if actual != expected {
                failures.push(format!(
                    "{file_name} differs (ELF_SURGERY_BLESS=1 regenerates it):\n\
                     --- expected\n{expected}--- actual\n{actual}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
