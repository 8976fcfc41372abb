//! The devel tree: unpacked with current device links, the paths build
//! systems use, `hipconfig --rocmpath` reporting the devel root, and every
//! libraries file mirrored into it as a hard link (docs/behaviour.md#self-test).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use devel_tar::LinkState;
use dist_info::package::{Mode, PackageKind};

use super::Context;
use super::run::{first_line, run};
use super::scripts::script_path;
use crate::distributions::Distribution;
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

/// Files a build system needs from the devel tree (`llvm/bin/clang++` is
/// checked too when the tree has the root `llvm` link).
const REQUIRED_PATHS: [&str; 2] = ["lib/cmake/hip/hip-config.cmake", "lib/llvm/bin/clang++"];

/// Unpacks the devel tree when needed and reconciles device links, the
/// way any devel tool launch would.
pub(super) fn unpack(cx: &Context<'_>, checks: &mut Vec<Check>) {
    if !cx.site.has_devel() {
        checks.push(Check::skipped(
            Category::DevelUnpack,
            "rocm-sdk-devel",
            "not installed",
        ));
        return;
    }
    // Separated links are left for the runtime-links check to report.
    let options = devel_tar::UnpackOptions {
        leave_separated_links: true,
        ..devel_tar::UnpackOptions::default()
    };
    checks.push(match cx.site.ensure_devel_with(&options) {
        Ok((root, report)) => {
            let warnings = report.warnings;
            let mut detail = format!("{} is unpacked, device links current", cx.rel(&root));
            for warning in warnings {
                let _ = write!(detail, "; warning: {warning}");
            }
            Check::passed(Category::DevelUnpack, "rocm-sdk-devel", detail)
        }
        Err(e) => Check::failed(
            Category::DevelUnpack,
            "rocm-sdk-devel",
            Chain(&e).to_string(),
        ),
    });
}

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    // An unreadable devel document already failed the unpack check.
    let Ok(root) = cx.site.devel_root() else {
        return;
    };
    if !cx.site.has_devel() || !root.is_dir() {
        return;
    }
    let mut paths: Vec<String> = REQUIRED_PATHS.iter().map(|p| (*p).to_owned()).collect();
    if fs::symlink_metadata(root.join("llvm")).is_ok() {
        paths.push("llvm/bin/clang++".to_owned());
    }
    for relpath in paths {
        let path = root.join(&relpath);
        checks.push(if path.exists() {
            Check::passed(Category::Devel, &relpath, "exists")
        } else {
            Check::failed(
                Category::Devel,
                &relpath,
                format!(
                    "{} is missing; run `rocm-sdk init`, or reinstall rocm-sdk-devel",
                    cx.rel(&path)
                ),
            )
        });
    }
    hipconfig(cx, &root, checks);
    checks.push(runtime_links(cx));
    for libraries in mirrored_libraries(cx) {
        checks.push(mirrored(cx, libraries, &root));
    }
}

/// Every devel path that should be the same file as a runtime file is
/// (docs/devel-tar.md#runtime-links): a copy of its own, left by an image
/// layer or a reinstall, makes a process that loads both paths map two
/// copies.
fn runtime_links(cx: &Context<'_>) -> Check {
    const NAME: &str = "runtime links";
    let links = match devel_tar::runtime_links(cx.sp()) {
        Ok(Some(links)) => links,
        Ok(None) => {
            return Check::skipped(
                Category::Devel,
                NAME,
                "the devel tree was unpacked by a release that kept no record of them",
            );
        }
        Err(e) => return Check::failed(Category::Devel, NAME, Chain(&e).to_string()),
    };
    let problems: Vec<String> = links
        .iter()
        .filter_map(|l| match l.state {
            LinkState::Separate => Some(format!("{} is a copy, not {}", l.link, l.source)),
            LinkState::LinkMissing => {
                Some(format!("{} (a link of {}) is missing", l.link, l.source))
            }
            LinkState::Same | LinkState::SourceMissing => None,
        })
        .collect();
    if problems.is_empty() {
        let same = links.iter().filter(|l| l.state == LinkState::Same).count();
        return Check::passed(
            Category::Devel,
            NAME,
            format!("{same} devel paths are the same files as their runtime files"),
        );
    }
    let count = problems.len();
    let (paths, are) = if count == 1 {
        ("path", "is")
    } else {
        ("paths", "are")
    };
    let mut text = format!(
        "{count} devel {paths} {are} no longer the same files as their runtime files (an image \
         layer, a copy of site-packages or a reinstall separated them), so a process loading a \
         library through both paths maps two copies; run `rocm-sdk init` to link them again: "
    );
    text.push_str(&crate::report::summarize(&problems));
    Check::failed(Category::Devel, NAME, text)
}

/// `hipconfig --rocmpath` (through its console script) is the devel root.
fn hipconfig(cx: &Context<'_>, root: &Path, checks: &mut Vec<Check>) {
    const NAME: &str = "hipconfig --rocmpath";
    let tool = root.join("bin").join("hipconfig");
    if !tool.is_file() {
        checks.push(Check::skipped(
            Category::Devel,
            NAME,
            "bin/hipconfig is not part of this build",
        ));
        return;
    }
    let program = cx
        .one(PackageKind::Core)
        .and_then(|core| script_path(cx, core, "hipconfig"))
        .filter(|p| p.is_file())
        .unwrap_or(tool);
    let check = match run(
        Command::new(&program).arg("--rocmpath"),
        cx.options.run_timeout,
    ) {
        Ok(out) if out.status.success() => {
            let reported = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if same_dir(Path::new(&reported), root) {
                Check::passed(Category::Devel, NAME, reported)
            } else {
                Check::failed(
                    Category::Devel,
                    NAME,
                    format!(
                        "{} printed {reported:?}, not the devel root {}",
                        program.display(),
                        root.display()
                    ),
                )
            }
        }
        Ok(out) => Check::failed(
            Category::Devel,
            NAME,
            format!(
                "{} exited with {}: {}",
                program.display(),
                out.status,
                first_line(&out)
            ),
        ),
        Err(e) => Check::failed(Category::Devel, NAME, format!("{}: {e}", program.display())),
    };
    checks.push(check);
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The libraries distributions the devel tree mirrors: in legacy mode the
/// one of the family `rocm` selected at install time (devel is per family),
/// else every installed one.
fn mirrored_libraries<'a>(cx: &'a Context<'_>) -> Vec<&'a Distribution> {
    let all: Vec<&Distribution> = cx.of(PackageKind::Libraries).collect();
    if cx.document.selector.mode != Mode::Legacy || all.len() < 2 {
        return all;
    }
    let selected = fs_helpers::confined::read_regular(
        &cx.sp().join("rocm_sdk").join("_selection.json"),
        16 << 20,
    )
    .ok()
    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    .and_then(|v| v["target"].as_str().map(str::to_owned));
    match selected {
        Some(target) => all
            .into_iter()
            .filter(|d| d.target.as_deref() == Some(target.as_str()))
            .collect(),
        None => all,
    }
}

/// Every file of a libraries package (device overlays included) is the
/// same inode at the same relative path in the devel tree.
fn mirrored(cx: &Context<'_>, libraries: &Distribution, root: &Path) -> Check {
    let name = format!("{} mirrored", libraries.name);
    let Some(dir) = libraries.platform_package.as_deref().filter(|d| d.is_dir()) else {
        return Check::failed(
            Category::Devel,
            name,
            "its platform package directory is missing",
        );
    };
    let mut files = Vec::new();
    walk_files(dir, dir, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for relpath in &files {
        let source = dir.join(relpath);
        let linked = root.join(relpath);
        match (fs::metadata(&source), fs::symlink_metadata(&linked)) {
            (Ok(s), Ok(l)) if fs_helpers::file_id::same_entry(&source, &s, &linked, &l) => {}
            (Ok(_), Ok(_)) => problems.push(format!(
                "{} is not a hard link of {}",
                cx.rel(&linked),
                cx.rel(&source)
            )),
            (_, Err(_)) => problems.push(format!("{} is missing", cx.rel(&linked))),
            (Err(e), _) => problems.push(format!("{}: {e}", cx.rel(&source))),
        }
    }
    if !problems.is_empty() {
        problems.push("run `rocm-sdk init` to repair the devel tree".to_owned());
    }
    Check::from_problems(
        Category::Devel,
        name,
        format!("{} files hard-linked into {}", files.len(), cx.rel(root)),
        &problems,
    )
}

/// Regular files under `dir` (relative), by the reference's rule: every
/// file but the package marker `__init__.py`, bytecode caches and the
/// device-link documents (`.devel_links/`), which drive the reconcile.
fn walk_files(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
        let top = rel.components().next().map(|c| c.as_os_str().to_owned());
        let skip = entry.file_name() == "__pycache__"
            || top.is_some_and(|t| t == ".devel_links" || (t == "__init__.py" && kind.is_file()));
        if skip {
            continue;
        }
        if kind.is_dir() {
            walk_files(base, &path, out);
        } else if kind.is_file() {
            out.push(rel);
        }
    }
}
