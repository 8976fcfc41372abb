//! CI, setup, benchmarks and supply-chain checks.

use std::time::{Duration, Instant};

use crate::cmd::{have, run};

/// Debian packages the test suite needs: `readelf` and `objdump` (binutils)
/// check ELF edits; `gcc` builds the example's real ELF files; `g++` builds
/// libFuzzer for the fuzz targets and the C++ libraries whose libstdc++
/// symbol versions the policy tests read; `python3` and `python3-venv` let
/// wheel-writer's tests `pip install` wheels into a venv; `libtinfo6` (with
/// `libncurses-dev` to link against) is the host-only system library
/// `rocm-sdk test` must report as a warning; `gcc-mingw-w64-x86-64` links
/// the Windows `rocm-sdk.exe` that win_amd64 wheels carry and the
/// workspace's Windows build.
const TEST_PACKAGES: &[&str] = &[
    "binutils",
    "gcc",
    "g++",
    "libc6-dev",
    // `gcc -m32`: an i386 library, the foreign-architecture file the
    // manylinux audit must call a wrong architecture.
    "gcc-multilib",
    "libtinfo6",
    "libncurses-dev",
    "zstd",
    "xz-utils",
    "python3",
    "python3-venv",
    "gcc-mingw-w64-x86-64",
    "wine64",
    // `script` runs the programs on a pseudo-terminal (progress display
    // tests); `groff` checks the man pages.
    "bsdutils",
    "groff-base",
];

/// What only the Windows side needs (the cross linker, Wine): a
/// Linux-only `cargo xtask demo` leaves them out.
const WINDOWS_PACKAGES: &[&str] = &["gcc-mingw-w64-x86-64", "wine64"];

/// The Rust target of the Windows program and the Windows build.
const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";

/// The profile of CI's Windows build and of the Wine tests'
/// `therock-package.exe` (the workspace's `Cargo.toml`).
const WINDOWS_PROFILE: &str = "windows-test";

/// The Wine loader of Debian's `wine64` package.
const WINE64: &str = "/usr/lib/wine/wine64";

/// Seconds each fuzz target runs in CI (thirteen targets, one per core at
/// a time: 130 seconds on two cores, plus a quick build of them).
const CI_FUZZ_SECONDS: u64 = 20;

/// Exactly what `.ci/run` runs; each step's wall time is printed at the
/// end (and when a step fails), so a slow step is visible in every log.
/// The manifests whose lock files CI builds with `--locked`: the
/// workspace, the example program outside it, the fuzz targets.
const LOCKED_MANIFESTS: [&str; 3] = [
    "Cargo.toml",
    "examples/package-a-release/Cargo.toml",
    "fuzz/Cargo.toml",
];

pub(crate) fn ci(_args: &[String]) -> Result<(), String> {
    let mut steps = Steps::default();
    let result = ci_steps(&mut steps);
    steps.print();
    result
}

fn ci_steps(steps: &mut Steps) -> Result<(), String> {
    steps.time("setup", || setup(&[]))?;
    // Every lock file is current: a stale one otherwise fails its step
    // (the example program, fuzz) only after the tests, twenty minutes in.
    steps.time("lock files", || {
        LOCKED_MANIFESTS
            .iter()
            .try_for_each(|manifest| check_lock_file(manifest))
    })?;
    steps.time("fmt", || {
        run("cargo", &["fmt", "--all", "--check"])?;
        run(
            "cargo",
            &[
                "fmt",
                "--check",
                "--manifest-path",
                "examples/package-a-release/Cargo.toml",
            ],
        )
    })?;
    steps.time("clippy", || {
        run(
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
        )
    })?;
    // The workspace builds for Windows (its Unix-only code has Windows
    // counterparts), and this is the `therock-package.exe` the Wine tests
    // run (their own build of it is then a no-op). One build rather than a
    // build and a check: a check compiles every dependency once more.
    steps.time("windows build", || {
        run(
            "cargo",
            &[
                "build",
                "--workspace",
                "--locked",
                "--target",
                WINDOWS_TARGET,
                "--profile",
                WINDOWS_PROFILE,
            ],
        )
    })?;
    // A deterministic sample of the exhaustive suites; `cargo xtask slow`
    // runs the rest (docs/testing.md).
    steps.time("test", || {
        run("cargo", &["test", "--workspace", "--locked"])
    })?;
    // The example program outside the workspace links the libraries as
    // another project would: it packages the built-in example, verifies it
    // and unpacks its devel tree (docs/using-the-crates.md). After the
    // tests, it reuses their dependencies and their native rocm-sdk.
    steps.time("example program", || crate::package::example_program(&[]))?;
    // The README's main job works on a clean clone (the build it needs is
    // the tests' own).
    steps.time("demo", || crate::example::demo(&[]))?;
    // The API documentation builds without a warning (broken links, bad
    // code blocks): each library is documented for other programs.
    steps.time("doc", || {
        let status = std::process::Command::new("cargo")
            .args(["doc", "--no-deps", "--workspace", "--locked"])
            .env("RUSTDOCFLAGS", "-D warnings")
            .current_dir(crate::cmd::root())
            .status()
            .map_err(|e| format!("cannot start `cargo doc`: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "`RUSTDOCFLAGS=-D warnings cargo doc --no-deps --workspace` failed: {status}"
            ))
        }
    })?;
    // The library crates package together, and the packages build from
    // their own files (after clippy and doc, whose dependencies it reuses).
    steps.time("package", || crate::package::package(&[]))?;
    // The Python shipped in the packages: lint and types, then its tests
    // (against the same JSON vectors) on the oldest and newest Python.
    steps.time("pylint", || crate::python::pylint(&[]))?;
    steps.time("pytest", || crate::python::pytest(&[]))?;
    // Every reader of untrusted input, briefly; a crash fails CI and leaves
    // its input in fuzz/artifacts/<target>/.
    steps.time("fuzz", || {
        crate::fuzz::run_targets(
            crate::fuzz::TARGETS,
            CI_FUZZ_SECONDS,
            crate::fuzz::Build::Quick,
        )
    })
}

/// `cargo metadata --locked` of `manifest`: fails when its lock file would
/// change. Its JSON goes nowhere; its errors go to the log.
fn check_lock_file(manifest: &str) -> Result<(), String> {
    crate::cmd::traced(
        std::process::Command::new("cargo")
            .args(["metadata", "--locked", "--format-version", "1"])
            .args(["--manifest-path", manifest])
            .current_dir(crate::cmd::root())
            .stdout(std::process::Stdio::null()),
    )
    .map_err(|e| format!("{e}: {manifest}'s lock file is not current"))
}

/// The wall time of each step run so far.
#[derive(Debug, Default)]
struct Steps {
    done: Vec<(&'static str, Duration)>,
}

impl Steps {
    /// Runs `step`, recording how long it took whatever its outcome.
    fn time(
        &mut self,
        name: &'static str,
        step: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let started = Instant::now();
        let result = step();
        self.done.push((name, started.elapsed()));
        result
    }

    fn print(&self) {
        let total: Duration = self.done.iter().map(|(_, took)| *took).sum();
        eprintln!("ci: step times");
        for (name, took) in &self.done {
            eprintln!("ci:   {name:<14} {:>6.0} s", took.as_secs_f64());
        }
        eprintln!("ci:   {:<14} {:>6.0} s", "total", total.as_secs_f64());
    }
}

/// Installs the Debian packages and the Rust target the tests need when
/// any is missing.
pub(crate) fn setup(_args: &[String]) -> Result<(), String> {
    install_packages()?;
    check_wine()?;
    // Idempotent and quick when the target is there already.
    run("rustup", &["target", "add", WINDOWS_TARGET])
}

/// The Windows tests need a Wine that runs; they never skip without one.
fn check_wine() -> Result<(), String> {
    let works = std::process::Command::new(WINE64)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        Ok(())
    } else {
        Err(format!(
            "{WINE64} does not run: the tests run the Windows programs under Wine; install \
             Debian's wine64 package (apt-get install wine64) and run again"
        ))
    }
}

/// What the Linux part of `cargo xtask demo` needs: the test packages
/// without the Windows ones, installed quietly.
pub(crate) fn setup_linux() -> Result<(), String> {
    let linux: Vec<&str> = TEST_PACKAGES
        .iter()
        .copied()
        .filter(|p| !WINDOWS_PACKAGES.contains(p))
        .collect();
    install(&linux)
}

fn install_packages() -> Result<(), String> {
    install(TEST_PACKAGES)
}

/// Installs what of `packages` is missing with apt-get; its (and dpkg's)
/// output is shown only when it fails.
fn install(packages: &[&str]) -> Result<(), String> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| !dpkg_installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !have("apt-get") {
        return Err(format!(
            "install these packages first: {}",
            missing.join(" ")
        ));
    }
    eprintln!("installing {} with apt-get", missing.join(" "));
    quiet_apt(&["update", "-qq"])?;
    let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
    args.extend(&missing);
    quiet_apt(&args)
}

fn quiet_apt(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| format!("cannot start apt-get: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "`apt-get {}` failed ({}):\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The exhaustive suites CI runs only a deterministic sample of: the whole
/// ELF corpus, every crash point of an unpack, a 4 GiB zip member, the
/// full selector property sweep.
pub(crate) fn slow(_args: &[String]) -> Result<(), String> {
    setup(&[])?;
    run(
        "cargo",
        &["test", "--workspace", "--release", "--", "--ignored"],
    )
}

/// Every benchmark; each prints its own ratios against a baseline measured
/// in the same run.
pub(crate) fn bench(args: &[String]) -> Result<(), String> {
    setup(&[])?;
    let mut cargo_args = vec!["bench", "--workspace"];
    cargo_args.extend(args.iter().map(String::as_str));
    run("cargo", &cargo_args)
}

/// Licences, bans and sources (advisories need the network, so they run
/// only when asked with `cargo xtask deny advisories`).
pub(crate) fn deny(args: &[String]) -> Result<(), String> {
    if !have("cargo-deny") {
        run("cargo", &["install", "--locked", "cargo-deny"])?;
    }
    let checks: Vec<&str> = if args.is_empty() {
        vec!["licenses", "bans", "sources"]
    } else {
        args.iter().map(String::as_str).collect()
    };
    let mut cargo_args = vec!["deny", "check"];
    cargo_args.extend(checks);
    run("cargo", &cargo_args)
}

fn dpkg_installed(package: &str) -> bool {
    std::process::Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}
