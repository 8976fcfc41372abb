//! What a program asks by name rather than by path (docs/python.md):
//!
//! - **Unversioned names from Python** (Linux): for each runtime alias
//!   core's record lists whose library is a recorded table entry, a fresh
//!   interpreter calls `rocm_sdk.initialize_process(preload_shortnames=[X])`
//!   and then `ctypes.CDLL("libX.so")` by the bare name; the handle must
//!   give a function of the library the preloaded library's address (one
//!   mapped copy), and `rocm_sdk.find_library_path("libX.so")` must name
//!   the file `find_libraries` does.
//! - **The library path**: `rocm_sdk.library_directories()` is the list
//!   `rocm-sdk path --library-path` prints, and it holds the directory of
//!   every recorded library.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use dist_info::libraries_record::{self, LibrariesRecord};
use dist_info::package::PackageKind;
use elf_surgery::ElfFile;

use super::Context;
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

/// The name the checks report under.
const LIBRARY_PATH: &str = "library path";

/// The recorded libraries of the installed core and libraries
/// distributions: file name → (short name, path). Records that cannot be
/// read are passed over: the preload check reports them.
fn recorded_libraries(cx: &Context<'_>) -> BTreeMap<String, (String, PathBuf)> {
    let mut out = BTreeMap::new();
    for dist in cx
        .distributions
        .iter()
        .filter(|d| matches!(d.kind, PackageKind::Core | PackageKind::Libraries))
    {
        let (Some(dir), Some(pure)) = (&dist.platform_package, &dist.pure_package) else {
            continue;
        };
        let Some(record) = read_record(pure) else {
            continue;
        };
        for (shortname, relpath) in record.libraries {
            let path = relpath.split('/').fold(dir.clone(), |p, part| p.join(part));
            if let Some(name) = relpath.rsplit('/').next() {
                out.insert(name.to_owned(), (shortname, path));
            }
        }
    }
    out
}

fn read_record(pure: &Path) -> Option<LibrariesRecord> {
    let bytes = fs::read(pure.join(libraries_record::FILE_NAME)).ok()?;
    LibrariesRecord::from_json(&bytes).ok()
}

/// Unversioned names from Python (Linux).
#[cfg_attr(windows, allow(dead_code))]
pub(super) fn from_python(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let Some(core) = cx.one(PackageKind::Core) else {
        return;
    };
    let (Some(core_dir), Some(pure)) = (&core.platform_package, &core.pure_package) else {
        return;
    };
    let Some(record) = read_record(pure) else {
        return;
    };
    let libraries = recorded_libraries(cx);
    let mut items = Vec::new();
    let mut sonames = Vec::new();
    for (alias, soname) in &record.aliases {
        let name = alias.rsplit('/').next().unwrap_or(alias).to_owned();
        let check_name = format!("{name} from Python");
        if !core_dir.join(alias).is_file() {
            checks.push(Check::failed(
                Category::Preload,
                check_name,
                format!(
                    "{} lists the runtime alias {alias}, which is missing; reinstall {}",
                    cx.rel(&pure.join(libraries_record::FILE_NAME)),
                    core.name
                ),
            ));
            continue;
        }
        // Only libraries `initialize_process` can preload: table entries.
        let Some((shortname, path)) = libraries.get(soname) else {
            continue;
        };
        let export = File::open(path)
            .map_err(elf_surgery::Error::from)
            .and_then(|mut file| ElfFile::parse(&mut file)?.read_imports(&mut file))
            .map_err(|e| e.at(path));
        match export {
            Ok(imports) => match imports.first_export {
                Some(symbol) => {
                    items.push((shortname.clone(), name, symbol));
                    sonames.push(soname.clone());
                }
                None => checks.push(Check::skipped(
                    Category::Preload,
                    check_name,
                    format!("{soname} exports no function to look up"),
                )),
            },
            Err(e) => checks.push(Check::failed(
                Category::Preload,
                check_name,
                Chain(&e).to_string(),
            )),
        }
    }
    if items.is_empty() {
        return;
    }
    let timeout = u32::try_from(cx.options.load_timeout.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    let results = match cx.probe.bare_names(&items, cx.options.jobs, timeout) {
        Ok(results) => results,
        Err(e) => {
            checks.push(Check::failed(
                Category::Preload,
                "unversioned names from Python",
                Chain(&e).to_string(),
            ));
            return;
        }
    };
    for (((shortname, name, symbol), soname), result) in items.iter().zip(&sonames).zip(results) {
        let check_name = format!("{name} from Python");
        checks.push(match result {
            None => Check::passed(
                Category::Preload,
                check_name,
                format!(
                    "after initialize_process(preload_shortnames=['{shortname}']), \
                     ctypes.CDLL(\"{name}\") reaches the preloaded {soname} ({symbol} at one \
                     address) and find_library_path(\"{name}\") names it"
                ),
            ),
            Some(error) => Check::failed(
                Category::Preload,
                check_name,
                format!(
                    "{error}; reinstall {} and the package that ships {soname}",
                    core.name
                ),
            ),
        });
    }
}

/// `rocm_sdk.library_directories()` is `rocm-sdk path --library-path`'s
/// list and holds every recorded library's directory.
pub(super) fn library_path(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let ours = match cx.site.library_path() {
        Ok(path) => path.directories,
        Err(e) => {
            checks.push(Check::failed(
                Category::Preload,
                LIBRARY_PATH,
                Chain(&e).to_string(),
            ));
            return;
        }
    };
    let mut problems = Vec::new();
    match cx.probe.library_directories() {
        Ok(Ok(python)) if python == ours => {}
        Ok(Ok(python)) => problems.push(format!(
            "rocm_sdk.library_directories() is [{}] but `rocm-sdk path --library-path` is [{}]; \
             install matching versions of `rocm` and `rocm-sdk-core`",
            shown(cx, &python),
            shown(cx, &ours)
        )),
        Ok(Err(error)) => problems.push(format!("rocm_sdk.library_directories(): {error}")),
        Err(e) => problems.push(Chain(&e).to_string()),
    }
    for (shortname, path) in recorded_libraries(cx).values() {
        if !path
            .parent()
            .is_some_and(|dir| ours.iter().any(|d| d == dir))
        {
            problems.push(format!(
                "{} ({shortname}) lies outside the library path",
                cx.rel(path)
            ));
        }
    }
    checks.push(Check::from_problems(
        Category::Preload,
        LIBRARY_PATH,
        format!("{} directories: {}", ours.len(), shown(cx, &ours)),
        &problems,
    ));
}

fn shown(cx: &Context<'_>, dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| cx.rel(d))
        .collect::<Vec<_>>()
        .join(", ")
}
