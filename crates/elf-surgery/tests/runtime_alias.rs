//! Runtime aliases (docs/elf-surgery.md, "Runtime aliases"): the bytes as a
//! golden dump, the same bytes twice, `readelf` finds nothing to say, and a
//! real library opened through its alias by name resolves a symbol and is
//! mapped once beside a second open by its SONAME. The names a file holds
//! as string literals are read from a real compiled file.
//!
//! After an intended change to the layout, regenerate the golden files with
//! `ELF_SURGERY_BLESS=1 cargo test -p elf-surgery --test runtime_alias`.

mod common;

use std::fmt::Write as _;
use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{c_source, run_checked};
use elf_surgery::{ElfFile, RuntimeAlias, alias_target};
use object::read::elf::{Dyn as _, FileHeader, ProgramHeader as _, SectionHeader as _};
use object::{LittleEndian, elf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// `(golden input, alias name, RUNPATH)`.
const ALIASES: &[(&str, &str, &str)] = &[
    (
        "nopath.so",
        "libnopath.so",
        "$ORIGIN/../../_rocm_sdk_libraries/lib",
    ),
    ("runpath.so", "librun.so", "$ORIGIN"),
];

fn alias_of(input: &Path, name: &str, runpath: &str) -> Vec<u8> {
    let bytes = fs::read(input).unwrap();
    let library = ElfFile::parse(&mut Cursor::new(&bytes)).unwrap();
    RuntimeAlias::for_library(name, &library, runpath)
        .unwrap()
        .bytes()
        .unwrap()
}

/// A readelf-like dump read with the `object` crate (not this crate's reader).
fn dump(data: &[u8]) -> String {
    let header = elf::FileHeader64::<LittleEndian>::parse(data).unwrap();
    let endian = header.endian().unwrap();
    let mut out = String::new();
    let _ = writeln!(out, "file size: {}", data.len());
    let _ = writeln!(
        out,
        "type {}, machine {}, flags {:#x}, entry {:#x}, sections at {:#x}",
        header.e_type(endian),
        header.e_machine(endian),
        header.e_flags(endian),
        header.e_entry(endian),
        header.e_shoff(endian),
    );
    out.push_str("program headers:\n");
    let segments = header.program_headers(endian, data).unwrap();
    for p in segments {
        let _ = writeln!(
            out,
            "  type {:#x} offset {:#05x} vaddr {:#05x} filesz {:#05x} memsz {:#05x} flags {} align {:#x}",
            p.p_type(endian),
            p.p_offset(endian),
            p.p_vaddr(endian),
            p.p_filesz(endian),
            p.p_memsz(endian),
            p.p_flags(endian),
            p.p_align(endian),
        );
    }
    out.push_str("sections:\n");
    let sections = header.sections(endian, data).unwrap();
    for s in sections.iter() {
        let name = sections.section_name(endian, s).unwrap();
        let _ = writeln!(
            out,
            "  {:<10} type {} flags {:#x} addr {:#05x} offset {:#05x} size {:#04x} link {} info {} entsize {}",
            String::from_utf8_lossy(name),
            s.sh_type(endian),
            s.sh_flags(endian),
            s.sh_addr(endian),
            s.sh_offset(endian),
            s.sh_size(endian),
            s.sh_link(endian),
            s.sh_info(endian),
            s.sh_entsize(endian),
        );
    }
    let dynamic = segments
        .iter()
        .find_map(|p| p.dynamic(endian, data).unwrap())
        .unwrap();
    let strtab = dynamic
        .iter()
        .find(|d| d.d_tag(endian) == u64::from(elf::DT_STRTAB))
        .map(|d| usize::try_from(d.d_val(endian)).unwrap())
        .unwrap();
    out.push_str("dynamic:\n");
    for d in dynamic {
        let (tag, value) = (d.d_tag(endian), d.d_val(endian));
        let shown = if [elf::DT_NEEDED, elf::DT_SONAME, elf::DT_RUNPATH]
            .map(u64::from)
            .contains(&tag)
        {
            let start = strtab + usize::try_from(value).unwrap();
            let end = start + data[start..].iter().position(|&b| b == 0).unwrap();
            format!("[{}]", String::from_utf8_lossy(&data[start..end]))
        } else {
            format!("{value:#x}")
        };
        let _ = writeln!(out, "  tag {tag:#x} {shown}");
    }
    out
}

#[test]
fn aliases_match_their_golden_dumps_and_are_the_same_twice() {
    let bless = std::env::var_os("ELF_SURGERY_BLESS").is_some();
    for (input, name, runpath) in ALIASES {
        let input = golden_dir().join("golden").join(input);
        let bytes = alias_of(&input, name, runpath);
        assert_eq!(bytes, alias_of(&input, name, runpath), "{name}: same bytes");
        let actual = dump(&bytes);
        let golden = golden_dir()
            .join("golden-alias")
            .join(format!("{name}.txt"));
        if bless {
            fs::write(&golden, &actual).unwrap();
            continue;
        }
        let expected = fs::read_to_string(&golden).unwrap_or_default();
        assert_eq!(
            actual,
            expected,
            "{name} differs from {} (ELF_SURGERY_BLESS=1 regenerates it)",
            golden.display()
        );
        // What verify and rocm-sdk test recognise an alias by.
        let parsed = ElfFile::parse(&mut Cursor::new(&bytes)).unwrap();
        let library = ElfFile::open(&input).unwrap();
        assert_eq!(alias_target(&parsed, name), library.soname());
        assert_eq!(alias_target(&library, name), None);
    }
}

#[test]
fn readelf_finds_nothing_wrong_with_an_alias() {
    let dir = tempfile::tempdir().unwrap();
    for (input, name, runpath) in ALIASES {
        let path = dir.path().join(name);
        fs::write(
            &path,
            alias_of(&golden_dir().join("golden").join(input), name, runpath),
        )
        .unwrap();
        let out = run_checked(Command::new("readelf").args(["-a", "-W"]).arg(&path));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(stderr.is_empty(), "{name}: readelf said {stderr}");
        assert!(!stdout.contains("Warning"), "{name}: {stdout}");
        assert!(
            stdout.contains(&format!("Library soname: [{name}]")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("Library runpath: [{runpath}]")),
            "{stdout}"
        );
    }
}

/// Refusals name what is wrong.
#[test]
fn an_alias_needs_a_versioned_soname_of_its_name() {
    let library = ElfFile::open(&golden_dir().join("golden/nopath.so")).unwrap();
    let err = |name: &str, runpath: &str| {
        RuntimeAlias::for_library(name, &library, runpath)
            .unwrap_err()
            .to_string()
    };
    insta::assert_snapshot!(err("libother.so", "$ORIGIN"), @"ELF input: no runtime alias can stand for it: its SONAME libnopath.so.2 is not a versioned form of libother.so (libother.so.N)");
    insta::assert_snapshot!(err("libnopath.so.2", "$ORIGIN"), @"ELF input: no runtime alias can stand for it: \"libnopath.so.2\" is not an unversioned library name; name the alias lib*.so");
    insta::assert_snapshot!(err("libnopath.so", "a::b"), @"ELF input: invalid search-path entry \"a::b\": entries must be non-empty and contain no ':' or NUL");
    let no_soname = ElfFile::open(&golden_dir().join("golden/rpath.so")).unwrap();
    insta::assert_snapshot!(RuntimeAlias::for_library("librpath.so", &no_soname, "$ORIGIN").unwrap_err().to_string(), @"ELF input: no runtime alias can stand for it: it is not a shared library with a SONAME; librpath.so can stand only for one");
}

/// Builds `real/libreal.so.3` and a probe program whose RUNPATH is
/// `$ORIGIN/../core` and which holds the literal `libreal.so`.
fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let (real, core, bin) = (dir.join("real"), dir.join("core"), dir.join("bin"));
    for d in [&real, &core, &bin] {
        fs::create_dir_all(d).unwrap();
    }
    let source = dir.join("real.c");
    fs::write(&source, "int real_answer(void) { return 42; }\n").unwrap();
    let library = real.join("libreal.so.3");
    run_checked(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-Wl,-soname,libreal.so.3", "-o"])
            .arg(&library)
            .arg(&source),
    );
    let probe = bin.join("probe");
    let literal = dir.join("literal.c");
    fs::write(
        &literal,
        "const char *library_to_open(void) { return \"libreal.so\"; }\n",
    )
    .unwrap();
    run_checked(
        Command::new("gcc")
            .args(["-O1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../core", "-o"])
            .arg(&probe)
            .arg(c_source("alias_probe.c"))
            .arg(&literal)
            .arg("-ldl"),
    );
    (library, probe)
}

fn probe(probe: &Path) -> std::process::Output {
    Command::new(probe)
        .args(["libreal.so", "real_answer", "libreal.so.3"])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap()
}

#[test]
fn a_library_opened_by_its_alias_resolves_symbols_and_is_mapped_once() {
    let dir = tempfile::tempdir().unwrap();
    let (library, program) = build(dir.path());

    // The names the program holds: the literal, found in its .rodata.
    let mut file = fs::File::open(&program).unwrap();
    let names = ElfFile::parse(&mut file)
        .unwrap()
        .library_name_literals(&mut file)
        .unwrap();
    assert!(names.contains(&"libreal.so".to_owned()), "{names:?}");

    // Without the alias the name is not found.
    let before = probe(&program);
    assert_eq!(before.status.code(), Some(1), "{before:?}");
    assert!(
        String::from_utf8_lossy(&before.stderr)
            .contains("libreal.so: cannot open shared object file"),
        "{before:?}"
    );

    let parsed = ElfFile::open(&library).unwrap();
    let alias = RuntimeAlias::for_library("libreal.so", &parsed, "$ORIGIN/../real").unwrap();
    let bytes = alias.bytes().unwrap();
    assert!(bytes.len() < 1024, "a few hundred bytes: {}", bytes.len());
    fs::write(dir.path().join("core/libreal.so"), &bytes).unwrap();
    let after = probe(&program);
    assert!(after.status.success(), "{after:?}");
    assert_eq!(
        String::from_utf8_lossy(&after.stdout),
        "answer 42, same function yes, libreal.so.3 mapped 1 time(s)\n"
    );
}
