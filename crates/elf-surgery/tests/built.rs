//! Libraries and executables built here with GNU ld and with lld, edited,
//! then loaded and run: the new `$ORIGIN` entry must be what finds the
//! sibling library.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Linker, gcc, loads, readelf_shows_rpath, run_checked};
use elf_surgery::{ElfFile, ElfKind, SearchPathEdit, Unchanged, edit_file};

/// How the built library's search path starts out.
#[derive(Clone, Copy, Debug)]
enum Existing {
    None,
    Runpath,
    Rpath,
}

impl Existing {
    fn args(self) -> Vec<&'static str> {
        match self {
            Self::None => vec![],
            Self::Runpath => vec!["-Wl,--enable-new-dtags", "-Wl,-rpath,/nonexistent/runpath"],
            Self::Rpath => vec!["-Wl,--disable-new-dtags", "-Wl,-rpath,/nonexistent/rpath"],
        }
    }

    fn path(self) -> Option<&'static str> {
        match self {
            Self::None => None,
            Self::Runpath => Some("/nonexistent/runpath"),
            Self::Rpath => Some("/nonexistent/rpath"),
        }
    }
}

/// A tree `root/a/lib/libmain.so`, `root/a/bin/prog`, `root/b/lib/libsib.so`
/// built with no search path pointing at `b/lib`.
struct Tree {
    root: tempfile::TempDir,
}

impl Tree {
    fn build(linker: Linker, existing: Existing, pie: bool) -> Self {
        let root = tempfile::tempdir().unwrap();
        let p = |s: &str| root.path().join(s);
        for d in ["a/lib", "a/bin", "b/lib"] {
            fs::create_dir_all(p(d)).unwrap();
        }
        let s = |p: &PathBuf| p.to_str().unwrap().to_string();
        let src = |n: &str| s(&common::c_source(n));
        gcc(
            linker,
            &[
                "-shared",
                "-fPIC",
                "-Wl,-soname,libsib.so",
                "-o",
                &s(&p("b/lib/libsib.so")),
                &src("sib.c"),
            ],
        );
        let mut args = vec!["-shared", "-fPIC", "-Wl,-soname,libmain.so"];
        args.extend(existing.args());
        let out = s(&p("a/lib/libmain.so"));
        let lib_b = format!("-L{}", s(&p("b/lib")));
        let main_src = src("main_lib.c");
        args.extend(["-o", &out, &main_src, &lib_b, "-lsib"]);
        gcc(linker, &args);
        let exe = s(&p("a/bin/prog"));
        let lib_a = format!("-L{}", s(&p("a/lib")));
        let prog_src = src("prog.c");
        let mut args = vec![if pie { "-pie" } else { "-no-pie" }];
        if pie {
            args.push("-fPIE");
        }
        args.extend(existing.args());
        args.extend(["-o", &exe, &prog_src, &lib_a, "-lmain", &lib_b, "-lsib"]);
        gcc(linker, &args);
        Self { root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }
}

fn run_prog(exe: &Path) -> std::process::Output {
    Command::new(exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap()
}

fn check_tree(linker: Linker, existing: Existing, pie: bool) {
    let tree = Tree::build(linker, existing, pie);
    let lib = tree.path("a/lib/libmain.so");
    let exe = tree.path("a/bin/prog");
    let ctx = format!("{linker:?} {existing:?} pie={pie}");

    // Before: the sibling is not found.
    assert!(
        loads(&lib, None).is_err(),
        "{ctx}: libmain loaded before the edit"
    );
    assert!(
        !run_prog(&exe).status.success(),
        "{ctx}: prog ran before the edit"
    );

    let lib_req = SearchPathEdit::append(["$ORIGIN/../../b/lib"]).force_rpath();
    let exe_req = SearchPathEdit::append(["$ORIGIN/../lib", "$ORIGIN/../../b/lib"]).force_rpath();
    let lib_edit = edit_file(&lib, &lib_req).unwrap();
    let exe_edit = edit_file(&exe, &exe_req).unwrap();
    assert!(!lib_edit.is_identity() && !exe_edit.is_identity(), "{ctx}");

    let with = |extra: &str| match existing.path() {
        Some(p) => format!("{p}:{extra}"),
        None => extra.to_string(),
    };
    readelf_shows_rpath(&lib, &with("$ORIGIN/../../b/lib"))
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    readelf_shows_rpath(&exe, &with("$ORIGIN/../lib:$ORIGIN/../../b/lib"))
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    loads(&lib, None).unwrap_or_else(|e| panic!("{ctx}: libmain does not load: {e}"));
    let out = run_prog(&exe);
    assert!(
        out.status.success(),
        "{ctx}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 43 proves the constructor (DT_INIT_ARRAY) ran and the sibling resolved.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "value=43\n", "{ctx}");

    // A second edit of the already-grown file (program headers now at the
    // end, as after patchelf or BOLT) still works.
    let again = SearchPathEdit::append(["$ORIGIN/../../c/lib"]).force_rpath();
    edit_file(&lib, &again).unwrap();
    edit_file(&exe, &again).unwrap();
    readelf_shows_rpath(&lib, &with("$ORIGIN/../../b/lib:$ORIGIN/../../c/lib"))
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    loads(&lib, None).unwrap_or_else(|e| panic!("{ctx}: second edit: {e}"));
    assert_eq!(
        String::from_utf8_lossy(&run_prog(&exe).stdout),
        "value=43\n",
        "{ctx}"
    );

    // Editing again with the same request changes nothing.
    let same = edit_file(&lib, &again).unwrap();
    assert_eq!(
        same.unchanged_reason(),
        Some(Unchanged::AlreadyDone),
        "{ctx}"
    );
}

#[test]
fn gnu_ld_outputs() {
    for existing in [Existing::None, Existing::Runpath, Existing::Rpath] {
        check_tree(Linker::Gnu, existing, true);
    }
    check_tree(Linker::Gnu, Existing::None, false);
}

#[test]
fn lld_outputs() {
    for existing in [Existing::None, Existing::Runpath, Existing::Rpath] {
        check_tree(Linker::Lld, existing, true);
    }
    check_tree(Linker::Lld, Existing::Runpath, false);
}

#[test]
fn facts_of_built_files() {
    let tree = Tree::build(Linker::Lld, Existing::Runpath, true);
    let lib = ElfFile::open(&tree.path("a/lib/libmain.so")).unwrap();
    assert_eq!(lib.kind(), ElfKind::SharedObject);
    assert_eq!(lib.soname(), Some("libmain.so"));
    assert!(lib.needed().iter().any(|n| n == "libsib.so"));
    assert_eq!(lib.runpath(), Some("/nonexistent/runpath"));
    assert_eq!(lib.rpath(), None);
    assert_eq!(lib.interpreter(), None);
    let exe = ElfFile::open(&tree.path("a/bin/prog")).unwrap();
    assert_eq!(exe.kind(), ElfKind::DynamicExecutable);
    assert!(exe.interpreter().is_some_and(|i| i.contains("ld-linux")));
    assert_eq!(exe.machine(), Some(object::elf::EM_X86_64));
}

#[test]
fn loadability_facts_of_built_libraries() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::c_source("static_tls.c");
    let build = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        run_checked(
            Command::new("gcc")
                .args(["-shared", "-fPIC", "-o"])
                .arg(&out)
                .arg(&src)
                .args(extra),
        );
        ElfFile::open(&out).unwrap()
    };
    let tls = build("libtls.so", &[]);
    assert_ne!(
        tls.dynamic_flags() & u64::from(object::elf::DF_STATIC_TLS),
        0
    );
    assert!(
        tls.tls_size().is_some_and(|size| size >= 65536),
        "{:?}",
        tls.tls_size()
    );
    assert_eq!(
        tls.dynamic_flags_1() & u64::from(object::elf::DF_1_NOOPEN),
        0
    );
    let noopen = build("libnoopen.so", &["-Wl,-z,nodlopen"]);
    assert_ne!(
        noopen.dynamic_flags_1() & u64::from(object::elf::DF_1_NOOPEN),
        0
    );
    let plain =
        ElfFile::open(&Tree::build(Linker::Gnu, Existing::None, true).path("a/lib/libmain.so"))
            .unwrap();
    assert_eq!(
        plain.dynamic_flags() & u64::from(object::elf::DF_STATIC_TLS),
        0
    );
    assert_eq!(plain.tls_size(), None);
}

#[test]
fn static_executable_is_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("static_prog");
    let src = common::c_source("static_prog.c");
    run_checked(
        Command::new("gcc")
            .args(["-static", "-o"])
            .arg(&exe)
            .arg(&src),
    );
    let before = fs::read(&exe).unwrap();
    let elf = ElfFile::open(&exe).unwrap();
    assert_eq!(elf.kind(), ElfKind::StaticExecutable);
    assert!(!elf.has_dynamic());
    let edit = edit_file(&exe, &common::corpus_request()).unwrap();
    assert_eq!(edit.unchanged_reason(), Some(Unchanged::NoDynamicSection));
    assert_eq!(fs::read(&exe).unwrap(), before);

    // Static PIE has a dynamic section but no interpreter: also left alone.
    let pie = dir.path().join("static_pie");
    run_checked(
        Command::new("gcc")
            .args(["-static-pie", "-o"])
            .arg(&pie)
            .arg(&src),
    );
    let elf = ElfFile::open(&pie).unwrap();
    assert_eq!(elf.kind(), ElfKind::StaticExecutable);
    let edit = edit_file(&pie, &common::corpus_request()).unwrap();
    assert_eq!(edit.unchanged_reason(), Some(Unchanged::NoDynamicSection));
}

#[test]
fn set_replaces_and_runpath_stays_without_force() {
    let tree = Tree::build(Linker::Gnu, Existing::Runpath, true);
    let lib = tree.path("a/lib/libmain.so");
    edit_file(&lib, &SearchPathEdit::append(["$ORIGIN/../../b/lib"])).unwrap();
    let elf = ElfFile::open(&lib).unwrap();
    assert_eq!(
        elf.runpath(),
        Some("/nonexistent/runpath:$ORIGIN/../../b/lib")
    );
    assert_eq!(elf.rpath(), None);
    loads(&lib, None).unwrap();
    // A shorter replacement, forced to RPATH.
    edit_file(
        &lib,
        &SearchPathEdit::set(["$ORIGIN/../../b/lib"]).force_rpath(),
    )
    .unwrap();
    let elf = ElfFile::open(&lib).unwrap();
    assert_eq!(elf.rpath(), Some("$ORIGIN/../../b/lib"));
    assert_eq!(elf.runpath(), None);
    loads(&lib, None).unwrap();
    // Removing the search path entirely.
    edit_file(&lib, &SearchPathEdit::set(Vec::<String>::new())).unwrap();
    let elf = ElfFile::open(&lib).unwrap();
    assert_eq!((elf.rpath(), elf.runpath()), (None, None));
    assert!(loads(&lib, None).is_err());
}

#[test]
fn streamed_reader_equals_written_file() {
    let tree = Tree::build(Linker::Lld, Existing::None, true);
    let lib = tree.path("a/lib/libmain.so");
    let mut source = fs::File::open(&lib).unwrap();
    let elf = ElfFile::parse(&mut source).unwrap();
    let edit = elf
        .plan_edit(&mut source, &common::corpus_request())
        .unwrap();
    let mut streamed = Vec::new();
    std::io::copy(&mut edit.reader(&mut source).unwrap(), &mut streamed).unwrap();
    assert_eq!(streamed.len() as u64, edit.output_len());
    let dest = tree.path("a/lib/written.so");
    edit.write_atomically(
        &mut source,
        &dest,
        fs::metadata(&lib).unwrap().permissions(),
    )
    .unwrap();
    assert_eq!(fs::read(&dest).unwrap(), streamed);
    // Patches plus appended data reconstruct the output too.
    let mut rebuilt = fs::read(&lib).unwrap();
    for p in edit.patches() {
        let at = p.offset() as usize;
        rebuilt[at..at + p.bytes().len()].copy_from_slice(p.bytes());
    }
    let original = fs::read(&lib).unwrap();
    for a in edit.appended() {
        match a {
            elf_surgery::Appended::Zeros(n) => rebuilt.extend(std::iter::repeat_n(0, *n as usize)),
            elf_surgery::Appended::Bytes(b) => rebuilt.extend_from_slice(b),
            elf_surgery::Appended::Source { offset, len } => {
                rebuilt.extend_from_slice(&original[*offset as usize..(*offset + *len) as usize]);
            }
        }
    }
    assert_eq!(rebuilt, streamed);
}
