//! `ElfFile::read_imports` on files built here with gcc and g++ (GNU ld and
//! lld), compared with `readelf -V` and `readelf --dyn-syms` as the
//! independent oracle; the same comparison on a sample of the system's
//! libraries; files without section headers (the symbol count then comes
//! from the hash tables); and hostile inputs, which must error, never panic.

mod common;

use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Linker, Rng, c_source, gcc, run_checked};
use elf_surgery::{ElfFile, ErrorKind, Imports, SymbolVersion, VersionNeed};

fn imports(path: &Path) -> Imports {
    let mut file = fs::File::open(path).unwrap();
    let elf = ElfFile::parse(&mut file).unwrap();
    elf.read_imports(&mut file)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn imports_of(bytes: &[u8]) -> elf_surgery::Result<Imports> {
    let mut source = Cursor::new(bytes);
    ElfFile::parse(&mut source)?.read_imports(&mut source)
}

/// `.gnu.version_r` as `readelf -V` prints it: (library, versions) in file order.
fn readelf_needs(path: &Path) -> Vec<(String, Vec<String>)> {
    let out = run_checked(Command::new("readelf").args(["-V", "-W"]).arg(path));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut needs: Vec<(String, Vec<String>)> = Vec::new();
    let Some(section) = text.split("Version needs section").nth(1) else {
        return needs;
    };
    for line in section.lines() {
        if let Some((_, rest)) = line.split_once("File: ") {
            let library = rest.split_whitespace().next().unwrap().to_owned();
            needs.push((library, Vec::new()));
        } else if let Some((_, rest)) = line.split_once("Name: ") {
            let version = rest.split_whitespace().next().unwrap().to_owned();
            needs.last_mut().unwrap().1.push(version);
        }
    }
    needs
}

/// Undefined dynamic symbols as `readelf --dyn-syms -W` prints them:
/// (name, weak, version).
fn readelf_undefined(path: &Path) -> Vec<(String, bool, Option<String>)> {
    let out = run_checked(Command::new("readelf").args(["--dyn-syms", "-W"]).arg(path));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // Num: Value Size Type Bind Vis Ndx Name [(version index)]
            if fields.len() < 8 || !fields[0].ends_with(':') || fields[6] != "UND" {
                return None;
            }
            let (name, version) = match fields[7].split_once('@') {
                Some((name, version)) => (name, Some(version.trim_start_matches('@').to_owned())),
                None => (fields[7], None),
            };
            Some((name.to_owned(), fields[4] == "WEAK", version))
        })
        .collect()
}

fn assert_matches_readelf(path: &Path) {
    let ours = imports(path);
    let needs: Vec<(String, Vec<String>)> = ours
        .needs
        .iter()
        .map(|n| (n.library.clone(), n.versions.clone()))
        .collect();
    assert_eq!(needs, readelf_needs(path), "{}", path.display());
    let undefined: Vec<(String, bool, Option<String>)> = ours
        .symbols
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.weak,
                s.version.as_ref().map(|v| v.name.clone()),
            )
        })
        .collect();
    assert_eq!(undefined, readelf_undefined(path), "{}", path.display());
}

fn need<'a>(imports: &'a Imports, library: &str) -> &'a VersionNeed {
    imports
        .needs
        .iter()
        .find(|n| n.library == library)
        .unwrap_or_else(|| panic!("no need of {library}: {imports:#?}"))
}

fn version_of(imports: &Imports, symbol: &str) -> Option<SymbolVersion> {
    imports
        .symbols
        .iter()
        .find(|s| s.name == symbol)
        .unwrap_or_else(|| panic!("{symbol} not imported: {imports:#?}"))
        .version
        .clone()
}

fn version(library: &str, name: &str) -> SymbolVersion {
    SymbolVersion {
        library: library.to_owned(),
        name: name.to_owned(),
    }
}

fn gxx(linker: Linker, args: &[&str]) {
    run_checked(Command::new("g++").args(linker.args()).args(args));
}

/// The C library, the C++ library and a dynamic executable, built with `linker`.
fn build(dir: &Path, linker: Linker, extra: &[&str]) -> [PathBuf; 3] {
    let lib = dir.join("libglibc.so");
    let cxx = dir.join("libcxx.so");
    let exe = dir.join("prog");
    let s = |p: &Path| p.display().to_string();
    let mut args = vec!["-shared", "-fPIC"];
    args.extend(extra);
    let (lib_s, cxx_s, exe_s) = (s(&lib), s(&cxx), s(&exe));
    let (glibc_c, cxx_cc, prog_c) = (
        s(&c_source("imports_glibc.c")),
        s(&c_source("imports_cxx.cc")),
        s(&c_source("imports_prog.c")),
    );
    let mut lib_args = args.clone();
    lib_args.extend(["-o", &lib_s, &glibc_c, "-lgcc_s"]);
    gcc(linker, &lib_args);
    let mut cxx_args = args.clone();
    cxx_args.extend(["-o", &cxx_s, &cxx_cc]);
    gxx(linker, &cxx_args);
    let mut exe_args: Vec<&str> = extra.to_vec();
    exe_args.extend(["-o", &exe_s, &prog_c]);
    gcc(linker, &exe_args);
    [lib, cxx, exe]
}

#[test]
fn gcc_and_gxx_builds_read_like_readelf() {
    for linker in [Linker::Gnu, Linker::Lld] {
        let dir = tempfile::tempdir().unwrap();
        let [lib, cxx, exe] = build(dir.path(), linker, &[]);
        for path in [&lib, &cxx, &exe] {
            assert_matches_readelf(path);
        }

        let lib = imports(&lib);
        let mut libc = need(&lib, "libc.so.6").versions.clone();
        libc.sort();
        assert_eq!(
            libc,
            ["GLIBC_2.2.5", "GLIBC_2.28", "GLIBC_2.34"],
            "{linker:?}"
        );
        assert_eq!(need(&lib, "libgcc_s.so.1").versions, ["GCC_3.3"]);
        assert_eq!(
            version_of(&lib, "closefrom"),
            Some(version("libc.so.6", "GLIBC_2.34"))
        );
        assert_eq!(
            version_of(&lib, "statx"),
            Some(version("libc.so.6", "GLIBC_2.28"))
        );
        assert_eq!(
            version_of(&lib, "_Unwind_Backtrace"),
            Some(version("libgcc_s.so.1", "GCC_3.3"))
        );
        let hook = lib
            .symbols
            .iter()
            .find(|s| s.name == "optional_hook")
            .unwrap();
        assert!(hook.weak && hook.version.is_none(), "{hook:?}");
        assert!(
            !lib.symbols.iter().any(|s| s.name == "glibc_imports"),
            "defined symbols are not imports"
        );

        let cxx = imports(&cxx);
        let libstdcxx = &need(&cxx, "libstdc++.so.6").versions;
        for v in ["GLIBCXX_3.4.30", "CXXABI_1.3.13"] {
            assert!(libstdcxx.iter().any(|x| x == v), "{v} in {libstdcxx:?}");
        }
        assert_eq!(
            version_of(
                &cxx,
                "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE"
            ),
            Some(version("libstdc++.so.6", "GLIBCXX_3.4.30"))
        );

        let exe = imports(&exe);
        assert_eq!(
            version_of(&exe, "__libc_start_main"),
            Some(version("libc.so.6", "GLIBC_2.34"))
        );
    }
}

#[test]
fn without_section_headers_the_hash_tables_count_the_symbols() {
    // GNU ld with only DT_GNU_HASH (Debian's default), only DT_HASH, and both.
    for style in ["gnu", "sysv", "both"] {
        let dir = tempfile::tempdir().unwrap();
        let flag = format!("-Wl,--hash-style={style}");
        let [lib, cxx, _] = build(dir.path(), Linker::Gnu, &[&flag]);
        for path in [lib, cxx] {
            let with_sections = imports(&path);
            assert!(with_sections.symbols.len() > 3);
            let mut bytes = fs::read(&path).unwrap();
            // e_shoff, e_shnum and e_shstrndx of an ELF64 header.
            bytes[40..48].fill(0);
            bytes[60..64].fill(0);
            assert_eq!(
                imports_of(&bytes).unwrap(),
                with_sections,
                "{style}: {}",
                path.display()
            );
        }
    }
}

#[test]
fn system_libraries_read_like_readelf() {
    let dir = Path::new("/usr/lib/x86_64-linux-gnu");
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_file()
                && !p.is_symlink()
                && p.file_name().unwrap().to_string_lossy().contains(".so")
                && fs::read(p).is_ok_and(|b| b.starts_with(b"\x7fELF"))
        })
        .collect();
    files.sort();
    assert!(files.len() > 40, "{} libraries", files.len());
    let step = files.len() / 40;
    let mut versioned = 0;
    for path in files.iter().step_by(step) {
        assert_matches_readelf(path);
        versioned += usize::from(!imports(path).needs.is_empty());
    }
    assert!(versioned > 20, "only {versioned} files need versions");
}

/// The file offset of the `.gnu.version_r` section of a GNU ld library.
fn verneed_offset(path: &Path) -> usize {
    let out = run_checked(Command::new("readelf").args(["-S", "-W"]).arg(path));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.contains(".gnu.version_r")).unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let at = fields.iter().position(|f| *f == "VERNEED").unwrap();
    usize::from_str_radix(fields[at + 2], 16).unwrap()
}

#[test]
fn broken_version_tables_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let [lib, ..] = build(dir.path(), Linker::Gnu, &[]);
    let base = fs::read(&lib).unwrap();
    let at = verneed_offset(&lib);
    let malformed = |bytes: &[u8]| match imports_of(bytes) {
        Err(e) if matches!(e.kind(), ErrorKind::Malformed(_) | ErrorKind::Truncated(_)) => {
            e.to_string()
        }
        other => panic!("expected a malformed-file error, got {other:?}"),
    };

    let mut bytes = base.clone();
    bytes[at..at + 2].copy_from_slice(&7u16.to_le_bytes());
    let message = malformed(&bytes);
    insta::assert_snapshot!(message, @"ELF input: the file is not a well-formed ELF file: .gnu.version_r entry 0 has version 7, not 1; re-extract or rebuild it");

    let mut bytes = base.clone();
    // vn_file far outside the string table.
    bytes[at + 4..at + 8].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let message = malformed(&bytes);
    // The table's size depends on the linker: the rest of the text is fixed.
    assert!(
        message.contains("outside the dynamic string table"),
        "{message}"
    );

    let mut bytes = base.clone();
    // vn_next of the first entry points past the end of the file.
    bytes[at + 12..at + 16].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let message = malformed(&bytes);
    // The offsets depend on the linker.
    assert!(message.contains(".gnu.version_r"), "{message}");

    let mut bytes = base.clone();
    // The chain ends after the first of libc's three versions.
    let aux = at
        + usize::try_from(u32::from_le_bytes(
            bytes[at + 8..at + 12].try_into().unwrap(),
        ))
        .unwrap();
    bytes[aux + 12..aux + 16].fill(0);
    let message = malformed(&bytes);
    insta::assert_snapshot!(message, @"ELF input: the file is not a well-formed ELF file: .gnu.version_r entry 0 (libc.so.6) ends after 1 of its 3 versions; re-extract or rebuild it");
}

#[test]
fn mutated_libraries_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let [lib, cxx, _] = build(dir.path(), Linker::Gnu, &[]);
    let mut rng = Rng::new(0x1a7e);
    let (mut read, mut refused) = (0, 0);
    for path in [lib, cxx] {
        let base = fs::read(&path).unwrap();
        let at = verneed_offset(&path);
        for _ in 0..750 {
            let mut bytes = base.clone();
            for _ in 0..=rng.below(4) {
                // Mostly the version tables and the dynamic section, sometimes anywhere.
                let i = if rng.below(3) == 0 {
                    rng.below(bytes.len())
                } else {
                    at + rng.below(0x100)
                };
                bytes[i] = rng.next_u64() as u8;
            }
            match imports_of(&bytes) {
                Ok(_) => read += 1,
                Err(_) => refused += 1,
            }
        }
    }
    assert!(read > 50 && refused > 50, "read {read}, refused {refused}");
}
