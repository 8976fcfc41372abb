//! Running the Windows programs under Wine (docs/windows.md, "Under
//! Wine"): one private prefix under the target directory, booted once per
//! test binary, and the `bcryptprimitives.dll` stand-in Wine 8 lacks on the
//! programs' DLL search path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The Rust target of the Windows programs.
pub const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";

/// The profile `therock-package.exe` is built with, CI's Windows build's
/// (the workspace's `Cargo.toml`: nothing optimised).
pub const WINDOWS_PROFILE: &str = "windows-test";

/// Where Debian's `wine64` package puts the loader.
const DEBIAN_WINE64: &str = "/usr/lib/wine/wine64";

/// A booted Wine prefix.
#[derive(Debug)]
pub struct Wine {
    program: PathBuf,
    prefix: PathBuf,
    dll_dir: PathBuf,
}

/// `target/` of this build (the parent of `CARGO_TARGET_TMPDIR`).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is target/tmp")
        .to_path_buf()
}

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

impl Wine {
    /// The prefix, set up on first use: the loader found, the stand-in DLL
    /// compiled, `wineboot` run once when the prefix is new.
    ///
    /// Panics with what to install when Wine or mingw is missing.
    pub fn get() -> &'static Self {
        static WINE: OnceLock<Wine> = OnceLock::new();
        WINE.get_or_init(Self::boot)
    }

    fn boot() -> Self {
        let program = [DEBIAN_WINE64, "wine64", "wine"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| {
                Command::new(p)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .unwrap_or_else(|| {
                panic!(
                    "Wine is not installed: the Windows programs are tested under Wine; \
                     run `cargo xtask setup` (Debian package wine64)"
                )
            });
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine");
        let prefix = root.join("prefix");
        let dll_dir = root.join("dlls");
        std::fs::create_dir_all(&dll_dir).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wine/bcryptprimitives.c");
        let out = Command::new("x86_64-w64-mingw32-gcc")
            .args([
                "-O1",
                "-g0",
                "-s",
                "-shared",
                "-Wl,--no-insert-timestamp",
                "-o",
            ])
            .arg(dll_dir.join("bcryptprimitives.dll"))
            .arg(&source)
            .arg("-ladvapi32")
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run x86_64-w64-mingw32-gcc ({e}); run `cargo xtask setup`")
            });
        assert!(
            out.status.success(),
            "compiling {}: {}",
            source.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let wine = Self {
            program,
            prefix,
            dll_dir,
        };
        if !wine.prefix.join("system.reg").is_file() {
            let out = wine
                .base_command()
                .args(["wineboot", "--init"])
                .output()
                .unwrap();
            assert!(out.status.success(), "wineboot: {out:?}");
        }
        wine
    }

    fn base_command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            // No Mono or Gecko installer prompts at boot.
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env("WINEPATH", windows_path(&self.dll_dir))
            .env_remove("SOURCE_DATE_EPOCH")
            .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG");
        command
    }

    /// `program args…` under Wine, its output collected.
    pub fn run(&self, program: &Path, args: &[&str]) -> Output {
        self.command(program, args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {} under Wine: {e}", program.display()))
    }

    /// The command that runs `program args…` under Wine, for a caller that
    /// spawns it itself.
    pub fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut command = self.base_command();
        command.arg(program).args(args);
        command
    }
}

/// A Unix path as Windows programs under Wine see it (drive `Z:` is `/`).
pub fn windows_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap();
    format!("Z:{}", absolute.display()).replace('/', "\\")
}

/// `therock-package.exe`, built for Windows once per test binary (an
/// up-to-date build is a no-op; `cargo xtask ci` builds it first).
pub fn therock_package_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let target_dir = target_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(workspace())
            .args([
                "build",
                "--offline",
                "--quiet",
                "-p",
                "therock-package",
                "--target",
                WINDOWS_TARGET,
                "--profile",
                WINDOWS_PROFILE,
            ])
            .arg("--target-dir")
            .arg(&target_dir)
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "building therock-package for {WINDOWS_TARGET} failed; `cargo xtask setup` installs \
             the Rust target and the mingw-w64 linker"
        );
        target_dir
            .join(WINDOWS_TARGET)
            .join(WINDOWS_PROFILE)
            .join("therock-package.exe")
    })
}
