//! Shared test helpers: building real ELF files with gcc (GNU ld and lld),
//! loading them in a fresh process, and checking them with readelf.
#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use elf_surgery::{ElfFile, SearchPathEdit};

/// The search path every corpus test appends (from the issue).
pub const APPENDED: [&str; 2] = ["$ORIGIN/../x/lib", "$ORIGIN/../../y/lib"];

pub fn c_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

pub fn sysroot() -> PathBuf {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The directory holding `ld.lld` for gcc's `-B` (rust-lld's gcc-ld shims).
pub fn lld_dir() -> PathBuf {
    sysroot().join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld")
}

/// Which linker gcc uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linker {
    Gnu,
    Lld,
}

impl Linker {
    pub fn args(self) -> Vec<String> {
        match self {
            Self::Gnu => vec!["-fuse-ld=bfd".into()],
            Self::Lld => vec![
                "-fuse-ld=lld".into(),
                "-B".into(),
                lld_dir().display().to_string(),
            ],
        }
    }
}

pub fn run_checked(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// gcc `args` with the linker chosen.
pub fn gcc(linker: Linker, args: &[&str]) {
    let mut cmd = Command::new("gcc");
    cmd.args(linker.args()).args(args);
    run_checked(&mut cmd);
}

/// The dlopen checker, built once per test process.
pub fn dlopen_checker() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build_dlopen_checker(&[]))
}

/// The 32-bit (i386) dlopen checker, built once per test process with
/// gcc-multilib (a TEST_PACKAGES of xtask/src/ci.rs).
pub fn dlopen_checker_32() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build_dlopen_checker(&["-m32"]))
}

fn build_dlopen_checker(flags: &[&str]) -> PathBuf {
    let dir = tempfile::tempdir().unwrap().keep();
    let bin = dir.join("dlopen_check");
    run_checked(Command::new("gcc").args(flags).args([
        "-O1",
        "-o",
        bin.to_str().unwrap(),
        c_source("dlopen_check.c").to_str().unwrap(),
        "-ldl",
    ]));
    bin
}

/// Whether the file at `path` is ELF32 (`e_ident[EI_CLASS]`).
fn is_elf32(path: &Path) -> bool {
    let mut ident = [0u8; 5];
    fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut ident))
        .is_ok_and(|()| ident[4] == object::elf::ELFCLASS32)
}

/// Runs `cmd` with stdin closed and a timeout; `None` when it timed out.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        if child.try_wait().ok()?.is_some() {
            return child.wait_with_output().ok();
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `path` loads with `dlopen(RTLD_NOW)` in a fresh process of
/// its class (an ELF32 file in a 32-bit process); `lib_dir` goes into
/// `LD_LIBRARY_PATH` (for siblings of a copied file).
pub fn loads(path: &Path, lib_dir: Option<&Path>) -> Result<(), String> {
    let checker = if is_elf32(path) {
        dlopen_checker_32()
    } else {
        dlopen_checker()
    };
    let mut cmd = Command::new(checker);
    // librustc_driver and friends use static TLS: give dlopen room for them
    // (before and after the edit alike).
    cmd.arg(path)
        .env_remove("LD_LIBRARY_PATH")
        .env("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=0x400000");
    if let Some(dir) = lib_dir {
        cmd.env("LD_LIBRARY_PATH", dir);
    }
    match run_with_timeout(&mut cmd, Duration::from_secs(30)) {
        Some(out) if out.status.success() => Ok(()),
        Some(out) => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        None => Err("timed out".into()),
    }
}

/// `readelf -lWd`: no warnings, and the search path listed as `(RPATH)`.
pub fn readelf_shows_rpath(path: &Path, expected: &str) -> Result<(), String> {
    let out = Command::new("readelf")
        .args(["-lWd"])
        .arg(path)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.trim().is_empty() {
        return Err(format!("readelf complained: {stderr}"));
    }
    if stdout.contains("Warning") || stdout.contains("Error") {
        return Err(format!("readelf warned: {stdout}"));
    }
    if stdout.contains("(RUNPATH)") {
        return Err("a RUNPATH is left".into());
    }
    // The column is wider for ELF32 files than for ELF64 ones.
    let want = format!("Library rpath: [{expected}]");
    let shown = stdout.lines().any(|line| {
        line.split_once("(RPATH)")
            .is_some_and(|(_, rest)| rest.trim_start() == want)
    });
    if !shown {
        return Err(format!("no (RPATH) {want:?} in:\n{stdout}"));
    }
    Ok(())
}

/// The RPATH the corpus edit must produce for `elf`.
pub fn expected_rpath(elf: &ElfFile) -> String {
    let mut parts: Vec<String> = elf
        .runpath()
        .or(elf.rpath())
        .filter(|p| !p.is_empty())
        .map(|p| vec![p.to_string()])
        .unwrap_or_default();
    let existing: Vec<String> = parts
        .first()
        .map(|p| p.split(':').map(str::to_string).collect())
        .unwrap_or_default();
    for a in APPENDED {
        if !existing.iter().any(|e| e == a) {
            parts.push(a.to_string());
        }
    }
    parts.join(":")
}

pub fn corpus_request() -> SearchPathEdit {
    SearchPathEdit::append(APPENDED).force_rpath()
}

/// Writes the edited copy of `src` to `dest`; returns the parsed original.
pub fn edit_copy(
    src: &Path,
    dest: &Path,
    request: &SearchPathEdit,
) -> elf_surgery::Result<ElfFile> {
    let mut source = fs::File::open(src)?;
    let elf = ElfFile::parse(&mut source)?;
    let edit = elf.plan_edit(&mut source, request)?;
    let perms = source.metadata()?.permissions();
    edit.write_atomically(&mut source, dest, perms)?;
    Ok(elf)
}

/// A small shared library built with `linker`, with a RUNPATH, in `dir`.
pub fn build_small_lib(dir: &Path, linker: Linker, name: &str) -> PathBuf {
    let sib = dir.join("libsib.so");
    if !sib.exists() {
        gcc(
            linker,
            &[
                "-shared",
                "-fPIC",
                "-o",
                sib.to_str().unwrap(),
                c_source("sib.c").to_str().unwrap(),
            ],
        );
    }
    let out = dir.join(name);
    let lib_dir = format!("-L{}", dir.display());
    gcc(
        linker,
        &[
            "-shared",
            "-fPIC",
            "-Wl,--enable-new-dtags",
            "-Wl,-rpath,/opt/old",
            "-o",
            out.to_str().unwrap(),
            c_source("main_lib.c").to_str().unwrap(),
            &lib_dir,
            "-lsib",
        ],
    );
    out
}

/// A tiny deterministic PRNG (xorshift64*), so failures reproduce.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
