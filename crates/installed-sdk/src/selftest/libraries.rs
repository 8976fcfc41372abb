//! Every host shared library of the runtime packages loads in a fresh
//! process (`dlopen` with `RTLD_NOW`, through the Python probe), with
//! `LD_LIBRARY_PATH` cleared so only the libraries' own RPATHs count.
//!
//! Every library is loaded, and the outcome is what happened
//! (docs/behaviour.md#self-test): it loads, PASS; otherwise FAIL with the
//! loader's words, except where the library's bytes say it cannot be
//! `dlopen`ed by design *and* the failure is the one that design predicts,
//! SKIP:
//!
//! - `DF_1_NOOPEN` in `DT_FLAGS_1`, and the loader refused it as such
//!   ("cannot be dlopen()ed");
//! - initial-exec thread-local storage (`DF_STATIC_TLS` in `DT_FLAGS` with
//!   a `PT_TLS` segment: sanitizer runtimes), which loads only at program
//!   start, and the loader found no room for it ("cannot allocate memory
//!   in static TLS block"), or the loader accepted it and its own
//!   initialisation refused to run outside program start (AddressSanitizer:
//!   "does not come first in initial library list ... LD_PRELOAD").
//!
//! The flag alone decides nothing: glibc keeps surplus static TLS for
//! `dlopen`, so a small block loads, and such a library failing on a
//! missing dependency is a FAIL like any other. A program-start runtime
//! that the loader accepted but whose initialisation stopped for another
//! reason it names (HWASan: "requires a kernel with tagged address ABI") is
//! a WARN: the package is whole, the host lacks what the runtime needs.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use dist_info::package::PackageKind;
use elf_surgery::{ElfFile, ElfKind};

use super::Context;
use crate::probe::LoadFailure;
use crate::report::{Category, Check, Outcome};
use fs_helpers::error_chain::Chain;

/// The runtime packages whose platform directories hold libraries.
const RUNTIME: [PackageKind; 3] = [
    PackageKind::Core,
    PackageKind::Libraries,
    PackageKind::Profiler,
];

/// `DF_STATIC_TLS` of `DT_FLAGS`.
const DF_STATIC_TLS: u64 = 0x10;
/// `DF_1_NOOPEN` of `DT_FLAGS_1`.
const DF_1_NOOPEN: u64 = 0x40;

/// What a library's bytes say about loading it with `dlopen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loadability {
    /// Nothing stands in the way.
    Dlopen,
    /// `DF_1_NOOPEN`: the loader refuses to `dlopen` it.
    NoOpen,
    /// Initial-exec thread-local storage of this many bytes: it needs room
    /// in the static TLS block, which exists only at program start.
    StaticTls(u64),
}

impl Loadability {
    /// Decided from the file's dynamic flags and program headers.
    pub(crate) fn of(elf: &ElfFile) -> Self {
        if elf.dynamic_flags_1() & DF_1_NOOPEN != 0 {
            return Self::NoOpen;
        }
        match elf.tls_size() {
            Some(size) if elf.dynamic_flags() & DF_STATIC_TLS != 0 => Self::StaticTls(size),
            _ => Self::Dlopen,
        }
    }

    /// The design that keeps this library from being `dlopen`ed.
    fn design(self) -> String {
        match self {
            Self::Dlopen => String::new(),
            Self::NoOpen => {
                "DT_FLAGS_1 has DF_1_NOOPEN, so the loader refuses to dlopen it".to_owned()
            }
            Self::StaticTls(size) => format!(
                "it uses initial-exec thread-local storage (DT_FLAGS has DF_STATIC_TLS, PT_TLS \
                 of {size} bytes), so it loads only at program start (linked in or LD_PRELOAD), \
                 not by dlopen into a running process"
            ),
        }
    }

    /// The outcome of loading a library of this loadability.
    fn outcome(self, failure: Option<&LoadFailure>) -> (Outcome, String) {
        let Some(failure) = failure else {
            return (Outcome::Passed, "loads".to_owned());
        };
        let design = self.design();
        match (self, failure) {
            (Self::NoOpen, LoadFailure::Loader(text)) if text.contains(NOOPEN_REFUSAL) => (
                Outcome::Skipped,
                format!("not loadable by design: {design}; the loader said: {text}"),
            ),
            (Self::StaticTls(_), LoadFailure::Loader(text)) if text.contains(STATIC_TLS_FULL) => (
                Outcome::Skipped,
                format!("not loadable by design: {design}; the loader said: {text}"),
            ),
            (Self::StaticTls(_), LoadFailure::Stopped(text))
                if MUST_COME_FIRST.iter().any(|p| text.contains(p)) =>
            {
                (
                    Outcome::Skipped,
                    format!(
                        "not loadable by design: {design}; the loader accepted it and its own \
                         initialisation refused to run: {text}"
                    ),
                )
            }
            (Self::StaticTls(_), LoadFailure::Stopped(text)) if !text.contains(TIMED_OUT) => (
                Outcome::Warned,
                format!(
                    "the loader accepted it (every dependency and symbol resolves), then its own \
                     initialisation stopped the process: {text}; it is a program-start runtime \
                     ({design}) and this machine lacks what it needs"
                ),
            ),
            (_, failure) => (Outcome::Failed, failure.text().to_owned()),
        }
    }
}

/// What glibc says when `dlopen` meets `DF_1_NOOPEN`.
const NOOPEN_REFUSAL: &str = "cannot be dlopen()ed";
/// What glibc says when the static TLS block has no room left.
const STATIC_TLS_FULL: &str = "cannot allocate memory in static TLS block";
/// What a runtime says when it finds it was not loaded at program start
/// (AddressSanitizer and the sanitizers sharing its common runtime).
const MUST_COME_FIRST: [&str; 2] = ["does not come first in initial library list", "LD_PRELOAD"];
/// The probe's words for a load that ran out of time (never by design).
const TIMED_OUT: &str = "did not finish within";

/// Windows loads DLLs instead (`dlls.rs`).
#[cfg_attr(windows, allow(dead_code))]
pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    // Runtime aliases are opened by name by their own check.
    let mut libraries = shared_libraries(&runtime_dirs(cx));
    libraries.retain(|path| !super::aliases::is_alias(path));
    if libraries.is_empty() {
        checks.push(Check::skipped(
            Category::Libraries,
            "shared libraries",
            "none installed",
        ));
        return;
    }
    let loadability: Vec<Loadability> = libraries
        .iter()
        .map(|path| ElfFile::open(path).map_or(Loadability::Dlopen, |e| Loadability::of(&e)))
        .collect();
    let timeout = u32::try_from(cx.options.load_timeout.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    let results = match cx.probe.load(&libraries, cx.options.jobs, timeout) {
        Ok(results) => results,
        Err(e) => {
            checks.push(Check::failed(
                Category::Libraries,
                "shared libraries",
                Chain(&e).to_string(),
            ));
            return;
        }
    };
    for ((library, loadability), result) in libraries.iter().zip(loadability).zip(results) {
        let (outcome, reason) = loadability.outcome(result.as_ref());
        checks.push(Check::new(
            Category::Libraries,
            cx.rel(library),
            outcome,
            reason,
        ));
    }
}

/// The platform directories of the installed runtime packages.
pub(super) fn runtime_dirs(cx: &Context<'_>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = cx
        .distributions
        .iter()
        .filter(|d| RUNTIME.contains(&d.kind))
        .filter_map(|d| d.platform_package.clone())
        .filter(|d| d.is_dir())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Every regular file under `dirs` that is a shared library for this
/// machine, sorted (device code objects are ELF too, but data).
pub(crate) fn shared_libraries(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        walk(dir, &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter(|path| has_elf_magic(path))
        .filter(|path| {
            ElfFile::open(path).is_ok_and(|elf| {
                elf.kind() == ElfKind::SharedObject && elf.machine() == Some(host_machine())
            })
        })
        .collect()
}

pub(super) fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

fn has_elf_magic(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"\x7fELF")
}

/// `e_machine` of the host: the only libraries this process can load.
pub(crate) fn host_machine() -> u16 {
    match std::env::consts::ARCH {
        "aarch64" => object_elf::EM_AARCH64,
        _ => object_elf::EM_X86_64,
    }
}

/// The two machine numbers ROCm wheels are built for.
mod object_elf {
    pub(super) const EM_X86_64: u16 = 62;
    pub(super) const EM_AARCH64: u16 = 183;
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::probe::PythonProbe;

    /// Builds `lib{name}.so` from `source` with gcc (a TEST_PACKAGES of
    /// xtask/src/ci.rs) and extra flags.
    fn build(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
        let src = dir.join(format!("{name}.c"));
        fs::write(&src, source).unwrap();
        let out = dir.join(format!("lib{name}.so"));
        let status = Command::new("gcc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(&src)
            .args(flags)
            .status()
            .unwrap();
        assert!(status.success());
        out
    }

    #[test]
    fn loadability_is_read_from_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let tls = build(
            dir.path(),
            "tls",
            "__thread char block[1 << 20] __attribute__((tls_model(\"initial-exec\")));\n\
             char *get(void) { return block; }\n",
            &[],
        );
        let noopen = build(
            dir.path(),
            "noopen",
            "int f(void) { return 1; }\n",
            &["-Wl,-z,nodlopen"],
        );
        let plain = build(dir.path(), "plain", "int f(void) { return 1; }\n", &[]);
        let of = |path: &Path| Loadability::of(&ElfFile::open(path).unwrap());
        assert_eq!(of(&tls), Loadability::StaticTls(1 << 20));
        assert_eq!(of(&noopen), Loadability::NoOpen);
        assert_eq!(of(&plain), Loadability::Dlopen);
        // What the bytes announce is what the loader does.
        let loads = PythonProbe::new("python3", dir.path())
            .load(&[tls.clone(), noopen.clone(), plain], 2, 30)
            .unwrap();
        let outcome = |path: &Path, load: &Option<LoadFailure>| of(path).outcome(load.as_ref());
        let (tls_outcome, tls_reason) = outcome(&tls, &loads[0]);
        assert_eq!(tls_outcome, Outcome::Skipped, "{tls_reason}");
        assert!(
            tls_reason.starts_with(
                "not loadable by design: it uses initial-exec thread-local storage (DT_FLAGS has \
                 DF_STATIC_TLS, PT_TLS of 1048576 bytes)"
            ) && tls_reason.ends_with("cannot allocate memory in static TLS block"),
            "{tls_reason}"
        );
        let (noopen_outcome, noopen_reason) = outcome(&noopen, &loads[1]);
        assert_eq!(noopen_outcome, Outcome::Skipped, "{noopen_reason}");
        assert!(
            noopen_reason.contains("cannot be dlopen()ed"),
            "{noopen_reason}"
        );
        assert_eq!(loads[2], None);
    }

    #[test]
    fn a_static_tls_library_missing_a_dependency_fails_with_the_loaders_words() {
        let dir = tempfile::tempdir().unwrap();
        let dependency = "int gone(void) { return 1; }\n";
        build(dir.path(), "gone", dependency, &[]);
        // A small initial-exec block, as libamdhip64 has: glibc's surplus
        // static TLS has room for it, so only the missing library stops it.
        let tls = build(
            dir.path(),
            "smalltls",
            "__thread int counter __attribute__((tls_model(\"initial-exec\")));\n\
             int gone(void);\n\
             int bump(void) { return ++counter + gone(); }\n",
            &[
                "-L",
                dir.path().to_str().unwrap(),
                "-lgone",
                "-Wl,-rpath,$ORIGIN",
            ],
        );
        fs::remove_file(dir.path().join("libgone.so")).unwrap();
        let elf = ElfFile::open(&tls).unwrap();
        assert!(matches!(Loadability::of(&elf), Loadability::StaticTls(4)));
        let probe = PythonProbe::new("python3", dir.path());
        let loads = probe.load(std::slice::from_ref(&tls), 1, 30).unwrap();
        let (outcome, reason) = Loadability::of(&elf).outcome(loads[0].as_ref());
        assert_eq!(outcome, Outcome::Failed, "{reason}");
        assert_eq!(
            reason,
            "libgone.so: cannot open shared object file: No such file or directory"
        );
        // With the dependency back it loads: the flag alone is no reason.
        build(dir.path(), "gone", dependency, &[]);
        let loads = probe.load(&[tls], 1, 30).unwrap();
        assert_eq!(loads[0], None);
    }

    #[test]
    fn a_runtime_stopping_in_its_own_initialisation_is_judged_by_its_words() {
        let tls = Loadability::StaticTls(88);
        let stopped = |text: &str| LoadFailure::Stopped(text.to_owned());
        let (outcome, reason) = tls.outcome(Some(&stopped(
            "the loading process exited with status 1: ==1==ASan runtime does not come first in \
             initial library list; you should either link runtime to your application or \
             manually preload it with LD_PRELOAD.",
        )));
        assert_eq!(outcome, Outcome::Skipped, "{reason}");
        let (outcome, reason) = tls.outcome(Some(&stopped(
            "the loading process exited with status 99: FATAL: HWAddressSanitizer requires a \
             kernel with tagged address ABI.",
        )));
        assert_eq!(outcome, Outcome::Warned, "{reason}");
        assert!(
            reason.contains("requires a kernel with tagged address ABI"),
            "{reason}"
        );
        // Out of time, or stopped without being a program-start runtime: FAIL.
        let (outcome, _) = tls.outcome(Some(&stopped("loading did not finish within 60 s")));
        assert_eq!(outcome, Outcome::Failed);
        let (outcome, _) = Loadability::Dlopen
            .outcome(Some(&stopped("the loading process was killed by SIGSEGV")));
        assert_eq!(outcome, Outcome::Failed);
        // Any other loader error of a flagged library is the loader's words.
        let (outcome, reason) = Loadability::NoOpen.outcome(Some(&LoadFailure::Loader(
            "libx.so: undefined symbol: y".to_owned(),
        )));
        assert_eq!(
            (outcome, reason.as_str()),
            (Outcome::Failed, "libx.so: undefined symbol: y")
        );
    }
}
