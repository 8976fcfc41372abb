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
