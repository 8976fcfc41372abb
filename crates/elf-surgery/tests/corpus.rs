//! The corpus test: real ELF files from this machine, edited the way the
//! packager edits them (append `$ORIGIN/../x/lib:$ORIGIN/../../y/lib`,
//! force RPATH), then checked with readelf, loaded, and run.
//!
//! The normal suite edits a deterministic sample (always including the Rust
//! toolchain's lld-linked, BOLT-moved `libLLVM` and `librustc_driver`, and
//! the harmless tools below), and a sample of the system's 32-bit files
//! (gcc-multilib's i386 libraries, loaded in a 32-bit process, and its x32
//! ones, checked with readelf); `cargo test -p elf-surgery -- --ignored`
//! edits every ELF file in the system directories.
#![allow(clippy::print_stderr)]

mod common;

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::{corpus_request, expected_rpath, loads, readelf_shows_rpath};
use elf_surgery::{ElfFile, ElfKind, Unchanged, edit_file};

const SYSTEM_DIRS: &[&str] = &[
    "/usr/lib",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/bin",
    "/usr/sbin",
];
/// The system's 32-bit libraries (gcc-multilib: i386 and x32).
const SYSTEM_DIRS_32: &[&str] = &["/usr/lib32", "/usr/libx32"];
/// System tools that are safe to run with `--version`; nothing else runs.
const HARMLESS_TOOLS: &[&str] = &[
    "ls", "cat", "grep", "sed", "tar", "readelf", "env", "sort", "head", "gzip", "xz", "zstd",
    "diff", "find",
];
/// About this many system files go into the normal suite's sample.
const SAMPLE_SIZE: usize = 80;

fn is_elf(path: &Path) -> bool {
    let mut magic = [0; 4];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

/// Regular ELF files under `dirs` (no symlinks followed), sorted, each inode once.
fn elf_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                // Separate debug info: neither libraries nor executables.
                if path != Path::new("/usr/lib/debug") {
                    stack.push(path);
                }
            } else if meta.is_file()
                && meta.len() >= 64
                && seen.insert((meta.dev(), meta.ino()))
                && is_elf(&path)
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn toolchain_files() -> Vec<PathBuf> {
    let root = common::sysroot();
    elf_files(&[
        root.join("lib"),
        root.join("lib/rustlib/x86_64-unknown-linux-gnu/lib"),
    ])
}

fn hard_files() -> Vec<PathBuf> {
    let files: Vec<PathBuf> = toolchain_files()
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("libLLVM") || name.starts_with("librustc_driver")
        })
        .collect();
    assert!(
        files.len() >= 2,
        "the toolchain's libLLVM and librustc_driver are missing: {files:?}"
    );
    files
}

fn harmless_tools() -> Vec<PathBuf> {
    HARMLESS_TOOLS
        .iter()
        .map(|t| Path::new("/usr/bin").join(t))
        .filter(|p| p.is_file())
        .collect()
}

#[derive(Default)]
struct Tally {
    edited: usize,
    loaded: usize,
    ran: usize,
    static_unchanged: usize,
    skipped: usize,
    failures: Vec<String>,
}

/// Runs `exe --version` with stdin closed and a timeout, as `argv0`.
fn run_version(exe: &Path, argv0: &Path) -> Option<(Option<i32>, Vec<u8>)> {
    let mut cmd = Command::new(exe);
    cmd.arg0(argv0)
        .arg("--version")
        .env_remove("LD_LIBRARY_PATH")
        .env("LC_ALL", "C");
    common::run_with_timeout(&mut cmd, Duration::from_secs(20)).map(|o| (o.status.code(), o.stdout))
}

fn check_one(path: &Path, dir: &Path, tally: &Mutex<Tally>) {
    let fail = |msg: String| {
        tally
            .lock()
            .unwrap()
            .failures
            .push(format!("{}: {msg}", path.display()));
    };
    // Work on a snapshot: system packages may change under a long run.
    let dest = dir.join(path.file_name().unwrap());
    if let Err(e) = fs::copy(path, &dest) {
        return fail(format!("copy: {e}"));
    }
    let elf = match ElfFile::open(&dest) {
        Ok(elf) => elf,
        Err(e) => return fail(format!("parse: {e}")),
    };
    let editable = matches!(
        elf.kind(),
        ElfKind::SharedObject | ElfKind::DynamicExecutable | ElfKind::StaticExecutable
    );
    if !editable {
        tally.lock().unwrap().skipped += 1;
        let _ = fs::remove_file(&dest);
        return;
    }
    // Baseline: the unedited file at the same place (a NEEDED or RUNPATH
    // with $ORIGIN resolves the same way before and after).
    let loaded_before = elf.kind() == ElfKind::SharedObject && loads(&dest, path.parent()).is_ok();
    let snapshot = (elf.kind() == ElfKind::StaticExecutable).then(|| fs::read(&dest).ok());
    // Every class, byte order and machine is edited: nothing is refused.
    match edit_file(&dest, &corpus_request()) {
        Ok(_) => {}
        Err(e) => {
            let _ = fs::remove_file(&dest);
            return fail(format!("edit: {e}"));
        }
    }
    if let Some(before) = snapshot {
        if before != fs::read(&dest).ok() {
            fail("a static executable changed".into());
        }
        tally.lock().unwrap().static_unchanged += 1;
        let _ = fs::remove_file(&dest);
        return;
    }
    let mut ok = true;
    if let Err(e) = readelf_shows_rpath(&dest, &expected_rpath(&elf)) {
        fail(format!("readelf: {e}"));
        ok = false;
    }
    match ElfFile::open(&dest) {
        Ok(edited) if edited.needed() == elf.needed() && edited.soname() == elf.soname() => {}
        Ok(_) => {
            fail("NEEDED or SONAME changed".into());
            ok = false;
        }
        Err(e) => {
            fail(format!("re-parse: {e}"));
            ok = false;
        }
    }
    let mut loaded = false;
    if loaded_before {
        match loads(&dest, path.parent()) {
            Ok(()) => loaded = true,
            Err(e) => {
                fail(format!("loaded before the edit but not after: {e}"));
                ok = false;
            }
        }
    }
    let mut ran = false;
    if elf.kind() == ElfKind::DynamicExecutable && harmless_tools().iter().any(|t| t == path) {
        let before = run_version(path, path);
        let after = run_version(&dest, path);
        if before.is_some() && before == after {
            ran = true;
        } else {
            fail(format!(
                "runs differently after the edit: {before:?} vs {after:?}"
            ));
            ok = false;
        }
    }
    let mut t = tally.lock().unwrap();
    if ok {
        t.edited += 1;
        t.loaded += usize::from(loaded);
        t.ran += usize::from(ran);
    }
    drop(t);
    let _ = fs::remove_file(&dest);
}

fn check_corpus(files: &[PathBuf]) -> Tally {
    let root = tempfile::tempdir().unwrap();
    let tally = Mutex::new(Tally::default());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (tally, next, root) = (&tally, &next, root.path());
            s.spawn(move || {
                let dir = root.join(format!("w{worker}/lib"));
                fs::create_dir_all(&dir).unwrap();
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(path) = files.get(i) else { break };
                    check_one(path, &dir, tally);
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    eprintln!(
        "corpus: {} files; edited and verified {} (dlopen-checked {}, run {}); static left unchanged {}; not editable kinds skipped {}; failures {}",
        files.len(),
        t.edited,
        t.loaded,
        t.ran,
        t.static_unchanged,
        t.skipped,
        t.failures.len()
    );
    assert!(
        t.failures.is_empty(),
        "{} failures:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
    assert!(t.edited > 0);
    t
}

fn paths(dirs: &[&str]) -> Vec<PathBuf> {
    dirs.iter().map(PathBuf::from).collect()
}

/// Every `step`-th of `files`, so the sample spreads over all of them.
fn sample(files: &[PathBuf], size: usize) -> Vec<PathBuf> {
    let step = (files.len() / size).max(1);
    files.iter().step_by(step).cloned().collect()
}

#[test]
fn corpus_sample() {
    let system = elf_files(&paths(SYSTEM_DIRS));
    let mut files = sample(&system, SAMPLE_SIZE);
    files.extend(hard_files());
    files.extend(harmless_tools());
    files.sort();
    files.dedup();
    check_corpus(&files);
}

#[test]
fn corpus_32_bit_sample() {
    let system = elf_files(&paths(SYSTEM_DIRS_32));
    let i386 = |elf: &ElfFile| elf.machine() == Some(object::elf::EM_386);
    let classes: Vec<ElfFile> = system.iter().map(|p| ElfFile::open(p).unwrap()).collect();
    assert!(
        classes
            .iter()
            .any(|e| i386(e) && e.kind() == ElfKind::SharedObject),
        "no i386 libraries in {SYSTEM_DIRS_32:?}: install gcc-multilib (cargo xtask setup)"
    );
    assert!(
        classes
            .iter()
            .all(|e| e.class() == Some(elf_surgery::ElfClass::Elf32)),
        "a 64-bit file among the 32-bit libraries"
    );
    let tally = check_corpus(&sample(&system, SAMPLE_SIZE));
    // The i386 libraries load in a 32-bit process after the edit as before.
    assert!(tally.loaded > 0, "no 32-bit library was dlopen-checked");
}

#[test]
#[ignore = "edits every ELF file on the system; run with --ignored"]
fn corpus_full() {
    let mut files = elf_files(&paths(SYSTEM_DIRS));
    files.extend(elf_files(&paths(SYSTEM_DIRS_32)));
    files.extend(toolchain_files());
    files.sort();
    files.dedup();
    check_corpus(&files);
}

#[test]
fn hard_files_keep_invariants_and_facts() {
    for path in hard_files() {
        let elf = ElfFile::open(&path).unwrap();
        assert_eq!(elf.kind(), ElfKind::SharedObject, "{}", path.display());
        let mut source = fs::File::open(&path).unwrap();
        let edit = elf.plan_edit(&mut source, &corpus_request()).unwrap();
        assert_eq!(edit.unchanged_reason(), None::<Unchanged>);
        // The bulk is streamed: what is held in memory is small.
        let in_memory: usize = edit
            .patches()
            .iter()
            .map(|p| p.bytes().len())
            .sum::<usize>()
            + edit
                .appended()
                .iter()
                .map(|a| match a {
                    elf_surgery::Appended::Bytes(b) => b.len(),
                    _ => 0,
                })
                .sum::<usize>();
        assert!(
            in_memory < 64 * 1024,
            "{} bytes in memory for {}",
            in_memory,
            path.display()
        );
    }
}
