//! Every host shared library of the runtime packages loads in a fresh
//! process (`dlopen` with `RTLD_NOW`, through the Python probe), with
//! `LD_LIBRARY_PATH` cleared so only the libraries' own RPATHs count.
//!
//! Some libraries cannot be `dlopen`ed by design, and their bytes say so:
//! `DF_1_NOOPEN` in `DT_FLAGS_1` (the loader refuses), or initial-exec
//! thread-local storage (`DF_STATIC_TLS` in `DT_FLAGS` with a `PT_TLS`
//! segment: sanitizer runtimes), which loads only at program start. The
//! first are not loaded; the second are, and a failure is reported as
//! skipped with the loader's words rather than failed.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use dist_info::package::PackageKind;
use elf_surgery::{ElfFile, ElfKind};

use super::Context;
use crate::report::{Category, Check};
use dist_info::error_chain::Chain;

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

    /// Why a library is not checked by loading it.
    fn reason(self, loader: Option<&str>) -> String {
        let mut reason = match self {
            Self::Dlopen => String::new(),
            Self::NoOpen => {
                "not loadable by design: DT_FLAGS_1 has DF_1_NOOPEN, so the loader refuses to \
                 dlopen it"
                    .to_owned()
            }
            Self::StaticTls(size) => format!(
                "not loadable by design: it uses initial-exec thread-local storage \
                 (DT_FLAGS has DF_STATIC_TLS, PT_TLS of {size} bytes), so it loads only at \
                 program start (linked in or LD_PRELOAD), not by dlopen into a running process"
            ),
        };
        if let Some(loader) = loader {
            reason.push_str("; the loader said: ");
            reason.push_str(loader);
        }
        reason
    }
}

/// Windows loads DLLs instead (`dlls.rs`).
#[cfg_attr(windows, allow(dead_code))]
pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let libraries = shared_libraries(&runtime_dirs(cx));
    if libraries.is_empty() {
        checks.push(Check::skipped(
            Category::Libraries,
            "shared libraries",
            "none installed",
        ));
        return;
    }
    let (refused, to_load): (Vec<_>, Vec<_>) = libraries
        .iter()
        .map(|path| {
            let loadability =
                ElfFile::open(path).map_or(Loadability::Dlopen, |e| Loadability::of(&e));
            (path.clone(), loadability)
        })
        .partition(|(_, l)| *l == Loadability::NoOpen);
    let timeout = u32::try_from(cx.options.load_timeout.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    let paths: Vec<PathBuf> = to_load.iter().map(|(p, _)| p.clone()).collect();
    let results = match cx.probe.load(&paths, cx.options.jobs, timeout) {
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
    let mut found: Vec<Check> = refused
        .iter()
        .map(|(path, l)| Check::skipped(Category::Libraries, cx.rel(path), l.reason(None)))
        .collect();
    for ((library, loadability), result) in to_load.iter().zip(results) {
        let name = cx.rel(library);
        found.push(match (result, loadability) {
            (None, _) => Check::passed(Category::Libraries, name, "loads"),
            (Some(error), Loadability::StaticTls(_)) => {
                Check::skipped(Category::Libraries, name, loadability.reason(Some(&error)))
            }
            (Some(error), _) => Check::failed(Category::Libraries, name, error),
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    checks.extend(found);
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
            .load(&[tls, noopen, plain], 2, 30)
            .unwrap();
        assert!(
            loads[0]
                .as_deref()
                .is_some_and(|e| e.contains("static TLS")),
            "{loads:?}"
        );
        assert!(loads[1].is_some(), "{loads:?}");
        assert_eq!(loads[2], None);
        assert!(
            Loadability::StaticTls(8)
                .reason(Some("x"))
                .ends_with("the loader said: x")
        );
    }
}
