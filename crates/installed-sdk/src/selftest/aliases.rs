//! Every runtime alias (docs/behaviour.md#runtime-aliases) opens by name
//! the way a library beside it opens it, and a function of the library it
//! stands for resolves through the handle.
//!
//! An alias is a file of a runtime package's `lib/` directory whose SONAME
//! is its own unversioned name (`libX.so`) and whose one `DT_NEEDED` is a
//! versioned form of it. A library of that directory with `$ORIGIN` in its
//! search path finds `libX.so` there; the check opens the name in a fresh
//! process whose loader searches the directory first (the same lookup),
//! then looks up the first function the real library exports.

use std::fs::File;
use std::path::{Path, PathBuf};

use elf_surgery::{ElfFile, alias_target, is_unversioned_name, is_versioned_form};
use link_check::{ElfReport, SearchDir};

use super::Context;
use super::libraries::{runtime_dirs, shared_libraries};
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

/// One alias found, with what the check needs.
struct Found {
    path: PathBuf,
    name: String,
    target: String,
    /// The real library, when the alias's RUNPATH reaches it.
    library: Option<PathBuf>,
    /// A library beside it whose search path holds `$ORIGIN`.
    neighbour: Option<String>,
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first directory of `runpath` (relative to `dir` through `$ORIGIN`)
/// holding `target`.
fn reach(dir: &Path, runpath: &str, target: &str) -> Option<PathBuf> {
    runpath.split(':').find_map(|entry| {
        let rest = entry.strip_prefix("$ORIGIN")?;
        let candidate = dir.join(format!(".{rest}")).join(target);
        candidate.is_file().then_some(candidate)
    })
}

/// Whether `file` (a link-check report of a file under `sp`) is a runtime
/// alias none of whose RUNPATH directories is installed: it stands for a
/// library of a package this installation does not have (core's alias of a
/// libraries-package library without `rocm[libraries]`), which is no fault.
pub(super) fn stands_for_uninstalled(sp: &Path, file: &ElfReport) -> bool {
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    let [needed] = file.needed.as_slice() else {
        return false;
    };
    let alias = file.soname.as_deref() == Some(name)
        && is_unversioned_name(name)
        && is_versioned_form(&needed.name, name);
    alias
        && !file.search_dirs.iter().any(|d| match d {
            SearchDir::Tree(dir) => sp.join(dir).is_dir(),
            _ => false,
        })
}

/// Whether the file at `path` is a runtime alias.
pub(super) fn is_alias(path: &Path) -> bool {
    ElfFile::open(path).is_ok_and(|elf| alias_target(&elf, &file_name(path)).is_some())
}

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let libraries = shared_libraries(&runtime_dirs(cx));
    let parsed: Vec<(PathBuf, ElfFile)> = libraries
        .into_iter()
        .filter_map(|path| ElfFile::open(&path).ok().map(|elf| (path, elf)))
        .collect();
    let mut found = Vec::new();
    for (path, elf) in &parsed {
        let name = file_name(path);
        let Some(target) = alias_target(elf, &name) else {
            continue;
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let library = elf.runpath().and_then(|r| reach(dir, r, target));
        let neighbour = parsed
            .iter()
            .filter(|(p, e)| p.parent() == Some(dir) && alias_target(e, &file_name(p)).is_none())
            .find(|(_, e)| {
                e.runpath()
                    .or(e.rpath())
                    .is_some_and(|s| s.split(':').any(|entry| entry == "$ORIGIN"))
            })
            .map(|(p, _)| file_name(p));
        found.push(Found {
            path: path.clone(),
            name,
            target: target.to_owned(),
            library,
            neighbour,
        });
    }
    if found.is_empty() {
        checks.push(Check::skipped(
            Category::Libraries,
            "runtime aliases",
            "none installed",
        ));
        return;
    }
    let mut asked = Vec::new();
    let mut index = Vec::new();
    for (i, alias) in found.iter().enumerate() {
        let rel = cx.rel(&alias.path);
        let Some(library) = &alias.library else {
            let dir = alias.path.parent().unwrap_or(Path::new("."));
            let installed = parsed
                .iter()
                .find(|(p, _)| *p == alias.path)
                .and_then(|(_, e)| e.runpath())
                .is_some_and(|r| {
                    r.split(':').any(|entry| {
                        entry
                            .strip_prefix("$ORIGIN")
                            .is_some_and(|rest| dir.join(format!(".{rest}")).is_dir())
                    })
                });
            if !installed {
                checks.push(Check::skipped(
                    Category::Libraries,
                    rel,
                    format!(
                        "stands for {}, whose package is not installed",
                        alias.target
                    ),
                ));
                continue;
            }
            checks.push(Check::failed(
                Category::Libraries,
                rel,
                format!(
                    "the runtime alias stands for {}, which its RUNPATH does not reach; \
                     install the package that ships {} or reinstall rocm-sdk-core",
                    alias.target, alias.target
                ),
            ));
            continue;
        };
        let export = File::open(library)
            .map_err(elf_surgery::Error::from)
            .and_then(|mut file| ElfFile::parse(&mut file)?.read_imports(&mut file))
            .map_err(|e| e.at(library));
        let symbol = match export {
            Ok(imports) => imports.first_export,
            Err(e) => {
                checks.push(Check::failed(
                    Category::Libraries,
                    rel,
                    Chain(&e).to_string(),
                ));
                continue;
            }
        };
        let Some(symbol) = symbol else {
            checks.push(Check::skipped(
                Category::Libraries,
                rel,
                format!("{} exports no function to look up", alias.target),
            ));
            continue;
        };
        let dir = alias.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        asked.push((dir, alias.name.clone(), symbol));
        index.push(i);
    }
    if asked.is_empty() {
        return;
    }
    let timeout = u32::try_from(cx.options.load_timeout.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    let results = match cx.probe.open_by_name(&asked, cx.options.jobs, timeout) {
        Ok(results) => results,
        Err(e) => {
            checks.push(Check::failed(
                Category::Libraries,
                "runtime aliases",
                Chain(&e).to_string(),
            ));
            return;
        }
    };
    for ((i, (_, name, symbol)), result) in index.into_iter().zip(&asked).zip(results) {
        let alias = &found[i];
        let rel = cx.rel(&alias.path);
        let by = alias.neighbour.as_ref().map_or_else(
            || "a library of its directory with $ORIGIN in its search path".to_owned(),
            |n| format!("a library beside it ({n})"),
        );
        checks.push(match result {
            None => Check::passed(
                Category::Libraries,
                rel,
                format!(
                    "dlopen(\"{name}\") from {by} reaches {} and resolves {symbol}",
                    alias.target
                ),
            ),
            Some(error) => Check::failed(
                Category::Libraries,
                rel,
                format!(
                    "dlopen(\"{name}\") from {by}, then dlsym({symbol}), failed: {error}; \
                     reinstall rocm-sdk-core and the package that ships {}",
                    alias.target
                ),
            ),
        });
    }
}
