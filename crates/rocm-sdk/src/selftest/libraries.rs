//! Every host shared library of the runtime packages loads in a fresh
//! process (`dlopen` with `RTLD_NOW`, through the Python probe), with
//! `LD_LIBRARY_PATH` cleared so only the libraries' own RPATHs count.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use dist_info::package::PackageKind;
use elf_surgery::{ElfFile, ElfKind};

use super::Context;
use crate::report::{Category, Check};

/// The runtime packages whose platform directories hold libraries.
const RUNTIME: [PackageKind; 3] = [
    PackageKind::Core,
    PackageKind::Libraries,
    PackageKind::Profiler,
];

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
    let timeout = u32::try_from(cx.options.load_timeout.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    match cx.probe.load(&libraries, cx.options.jobs, timeout) {
        Ok(results) => {
            for (library, result) in libraries.iter().zip(results) {
                let name = cx.rel(library);
                checks.push(match result {
                    None => Check::passed(Category::Libraries, name, "loads"),
                    Some(error) => Check::failed(Category::Libraries, name, error),
                });
            }
        }
        Err(e) => checks.push(Check::failed(
            Category::Libraries,
            "shared libraries",
            e.to_string(),
        )),
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

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
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
