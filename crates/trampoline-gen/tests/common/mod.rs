//! Shared test support: a probe target compiled with `cc`, launcher trees
//! in temporary directories, and the glibc floor check.

#![allow(dead_code, reason = "each test binary uses a different part")]

pub(crate) mod glibc;

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use trampoline_gen::{Launcher, Platform};

/// Compiles `common/<name>.c` with `cc` (once per test binary) into the
/// cargo target's temporary directory and returns the executable.
pub(crate) fn compile_c(name: &str, extra_args: &[&str]) -> PathBuf {
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
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(probe(), path).unwrap();
}

/// Writes a Linux x86_64 launcher for `target` at `path`.
pub(crate) fn install_launcher(path: &Path, target: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    Launcher::for_target(Platform::LinuxX86_64, target)
        .unwrap()
        .write_to(path)
        .unwrap();
}

/// Writes an executable file with `text` at `path`.
pub(crate) fn install_script(path: &Path, text: &str) {
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

/// Runs `command` and returns its output.
///
/// Retries on ETXTBSY: while one test thread writes an executable, another
/// thread's fork can briefly hold the write descriptor, and exec of that
/// file fails until the child has exec'd (closing it on exec).
pub(crate) fn run(command: &mut Command) -> Output {
    const ETXTBSY: i32 = 26;
    let mut attempts = 0;
    loop {
        match command.output() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => return result.unwrap_or_else(|e| panic!("could not spawn {command:?}: {e}")),
        }
    }
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
