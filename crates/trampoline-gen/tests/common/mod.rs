//! Shared test support: a probe target compiled with `cc`, launcher trees
//! in temporary directories, and the glibc floor check.

#![allow(dead_code, reason = "each test binary uses a different part")]

pub(crate) mod glibc;

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use trampoline_gen::{Launcher, Platform};

/// Held for reading while a test runs a program and for writing while one
/// writes an executable. A fork in one test thread holds every descriptor
/// of the process until its child execs, so a file another thread is
/// writing at that moment cannot be exec'd (ETXTBSY) — by us, or by a
/// launcher, which then exits 126. The lock keeps writes and forks apart.
static EXEC: RwLock<()> = RwLock::new(());

/// Excludes every `run` while an executable is written.
pub(crate) fn writing_executables() -> RwLockWriteGuard<'static, ()> {
    EXEC.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Held while a test starts programs itself (`run` takes it).
pub(crate) fn starting_programs() -> RwLockReadGuard<'static, ()> {
    EXEC.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Compiles `common/<name>.c` with `cc` (once per test binary) into the
/// cargo target's temporary directory and returns the executable.
pub(crate) fn compile_c(name: &str, extra_args: &[&str]) -> PathBuf {
    let _writing = writing_executables();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/common/{name}.c"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trampoline-gen");
    std::fs::create_dir_all(&dir).unwrap();
    // Unique temporary name, then rename: test binaries may race here.
    let tmp = tempfile::Builder::new()
        .prefix(name)
        .tempfile_in(&dir)
        .unwrap();
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(tmp.path())
        .arg(&source)
        .args(extra_args)
        .status()
        .expect("the tests need a C compiler (`cc`, Debian package gcc)");
    assert!(status.success(), "cc failed on {}", source.display());
    let exe = dir.join(name);
    tmp.persist(&exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

/// The probe executable (see `probe.c`).
pub(crate) fn probe() -> &'static Path {
    static PROBE: OnceLock<PathBuf> = OnceLock::new();
    PROBE.get_or_init(|| compile_c("probe", &[]))
}

/// Creates parent directories and copies the probe to `path`.
pub(crate) fn install_probe(path: &Path) {
    let probe = probe();
    let _writing = writing_executables();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(probe, path).unwrap();
}

/// Writes a Linux x86_64 launcher for `target` at `path`.
pub(crate) fn install_launcher(path: &Path, target: &str) {
    let _writing = writing_executables();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    Launcher::for_target(Platform::LinuxX86_64, target)
        .unwrap()
        .write_to(path)
        .unwrap();
}

/// Writes an executable file with `text` at `path`.
pub(crate) fn install_script(path: &Path, text: &str) {
    let _writing = writing_executables();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What the probe received.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Report {
    /// Its real path (`/proc/self/exe`).
    pub(crate) exe: PathBuf,
    /// Its argv.
    pub(crate) argv: Vec<Vec<u8>>,
    /// Its environment entries, `NAME=value`.
    pub(crate) env: Vec<Vec<u8>>,
}

impl Report {
    /// Parses the probe's stdout.
    pub(crate) fn parse(stdout: &[u8]) -> Report {
        use std::os::unix::ffi::OsStrExt as _;
        let mut fields = stdout.split(|&b| b == 0);
        let exe = PathBuf::from(OsStr::from_bytes(fields.next().unwrap()));
        let argc: usize = std::str::from_utf8(fields.next().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        let mut rest: Vec<Vec<u8>> = fields.map(<[u8]>::to_vec).collect();
        // The output ends with a NUL, so the split yields one empty tail.
        assert_eq!(
            rest.pop().as_deref(),
            Some(&b""[..]),
            "probe output not NUL-terminated"
        );
        let env = rest.split_off(argc);
        Report {
            exe,
            argv: rest,
            env,
        }
    }

    /// The value of `name` in the environment, if set.
    pub(crate) fn env_var(&self, name: &str) -> Option<&[u8]> {
        self.env.iter().find_map(|entry| {
            entry
                .strip_prefix(name.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
        })
    }
}

/// Runs `command` and returns its output, never while a test writes an
/// executable (see [`EXEC`]).
pub(crate) fn run(command: &mut Command) -> Output {
    let _running = starting_programs();
    command
        .output()
        .unwrap_or_else(|e| panic!("could not spawn {command:?}: {e}"))
}

/// Runs `command`, asserts it succeeded, and parses the probe's report.
pub(crate) fn run_probe(command: &mut Command) -> Report {
    let output = run(command);
    assert!(
        output.status.success(),
        "{command:?} failed: {:?}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Report::parse(&output.stdout)
}
