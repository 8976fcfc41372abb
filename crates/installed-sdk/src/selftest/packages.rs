//! Packages are physical (they have an `__init__.py`, so they are not
//! namespace packages stitched from several places) and siblings: Python
//! imports each one from this very site-packages, which the cross-package
//! RPATHs and devel links rely on.

use std::fs;
use std::path::{Path, PathBuf};

use dist_info::package::PackageKind;

use super::Context;
use crate::report::{Category, Check};

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    // Modules to import, with the distribution each belongs to.
    let mut modules: Vec<(usize, String, PathBuf)> = Vec::new();
    let mut problems: Vec<Vec<String>> = vec![Vec::new(); cx.distributions.len()];
    for (i, dist) in cx.distributions.iter().enumerate() {
        let mut dirs: Vec<&Path> = dist.pure_package.iter().map(PathBuf::as_path).collect();
        // Device wheels overlay the libraries directory (no __init__.py of
        // their own, docs/behaviour.md#device); the devel tree is checked by devel-unpack.
        if !matches!(dist.kind, PackageKind::Device | PackageKind::Devel) {
            dirs.extend(dist.platform_package.as_deref());
        }
        for dir in dirs {
            let init = dir.join("__init__.py");
            if init.is_file() {
                let module = dir
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                modules.push((i, module, init));
            } else {
                problems[i].push(format!(
                    "{} has no __init__.py (not a physical package)",
                    cx.rel(dir)
                ));
            }
        }
        if dist.kind == PackageKind::Device
            && let Some(dir) = &dist.platform_package
            && !dir.is_dir()
        {
            problems[i].push(format!("{} is missing", cx.rel(dir)));
        }
    }
    shadows(cx, &modules, checks);
    let names: Vec<String> = modules.iter().map(|(_, m, _)| m.clone()).collect();
    match cx.probe.imports(&names) {
        Ok(found) => {
            for (i, module, init) in &modules {
                let outcome = &found[module];
                if let Some(error) = &outcome.error {
                    problems[*i].push(format!("import {module} failed: {error}"));
                    continue;
                }
                let landed = outcome.file.as_deref().map(Path::new);
                if !landed.is_some_and(|f| same_file(f, init)) {
                    problems[*i].push(format!(
                        "import {module} loads {} instead of {} (another copy shadows it on sys.path)",
                        landed.map_or_else(|| "a namespace package".to_owned(), |f| f.display().to_string()),
                        init.display()
                    ));
                }
            }
        }
        Err(e) => {
            checks.push(Check::failed(Category::Packages, "imports", e.to_string()));
        }
    }
    for (i, (dist, problems)) in cx.distributions.iter().zip(problems).enumerate() {
        let names: Vec<&str> = modules
            .iter()
            .filter(|(d, _, _)| *d == i)
            .map(|(_, m, _)| m.as_str())
            .collect();
        let detail = if names.is_empty() {
            match &dist.platform_package {
                Some(dir) => format!("overlays {}", cx.rel(dir)),
                None => "no Python packages".to_owned(),
            }
        } else {
            format!("{} import from site-packages", names.join(", "))
        };
        checks.push(Check::from_problems(
            Category::Packages,
            &dist.name,
            detail,
            &problems,
        ));
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A module of the installation that a directory Python searches before
/// site-packages would load instead: `PYTHONPATH` (every Python the user
/// starts without `-I`) fails, the working directory (first on `sys.path`
/// for `python -c`, `-m` and the interactive interpreter) warns. The
/// probe runs isolated, so only this look at the directories sees them.
fn shadows(cx: &Context<'_>, modules: &[(usize, String, PathBuf)], checks: &mut Vec<Check>) {
    let site = fs::canonicalize(cx.sp()).unwrap_or_else(|_| cx.sp().to_path_buf());
    let mut places: Vec<(PathBuf, bool)> = Vec::new();
    if let Some(value) = &cx.options.python_path {
        for entry in std::env::split_paths(value) {
            // An empty entry is the working directory.
            let dir = if entry.as_os_str().is_empty() {
                match &cx.options.working_dir {
                    Some(dir) => dir.clone(),
                    None => continue,
                }
            } else {
                entry
            };
            places.push((dir, true));
        }
    }
    if let Some(dir) = &cx.options.working_dir {
        places.push((dir.clone(), false));
    }
    let mut said = std::collections::BTreeSet::new();
    for (dir, from_python_path) in places {
        if fs::canonicalize(&dir).is_ok_and(|d| d == site) {
            continue;
        }
        for (_, module, init) in modules {
            let Some(found) = shadowing_file(&dir, module) else {
                continue;
            };
            if !said.insert((module.clone(), found.clone())) {
                continue;
            }
            let name = format!("{module} shadowed");
            let check = if from_python_path {
                Check::failed(
                    Category::Packages,
                    name,
                    format!(
                        "PYTHONPATH holds {}, so `import {module}` loads {} instead of {}; \
                         remove that directory from PYTHONPATH",
                        dir.display(),
                        found.display(),
                        init.display()
                    ),
                )
            } else {
                Check::warned(
                    Category::Packages,
                    name,
                    format!(
                        "`python -c`, `python -m` and the interactive interpreter started in \
                         {} load {} instead of {}; start them elsewhere",
                        dir.display(),
                        found.display(),
                        init.display()
                    ),
                )
            };
            checks.push(check);
        }
    }
}

/// What in `dir` Python would import as `module`: a package, a module, a
/// compiled module or an extension module.
fn shadowing_file(dir: &Path, module: &str) -> Option<PathBuf> {
    let package = dir.join(module).join("__init__.py");
    if package.is_file() {
        return Some(package);
    }
    for suffix in [".py", ".pyc"] {
        let file = dir.join(format!("{module}{suffix}"));
        if file.is_file() {
            return Some(file);
        }
    }
    // Extension modules: `{module}.so`, `{module}.cpython-312-x86_64-linux-gnu.so`, `.pyd`.
    fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let name = entry.file_name();
        let name = name.to_str()?;
        name.strip_prefix(module)?.strip_prefix('.')?;
        let extension = Path::new(name).extension()?;
        (extension.eq_ignore_ascii_case("so") || extension.eq_ignore_ascii_case("pyd"))
            .then(|| entry.path())
    })
}
