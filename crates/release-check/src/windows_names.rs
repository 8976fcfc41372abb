//! Windows wheels hold only names Windows can hold
//! (docs/behaviour.md#windows-names): the rule the build applies to a
//! Windows package set (`dist_info::windows_names`), checked again on what
//! was published. Every member of every wheel that installs on Windows and
//! every member of the devel tarball in `rocm-sdk-devel` (which
//! `rocm-sdk init` unpacks into site-packages) must be a name Windows can
//! hold, and no two of those paths, in one wheel or across the wheels
//! installed together, may differ only in case. Installed paths that reach
//! `MAX_PATH` below a typical site-packages are reported, not failed.

use std::collections::BTreeSet;

use dist_info::requirement::Platform;
use dist_info::windows_names::{self, MAX_PATH, TYPICAL_SITE_PACKAGES};

use super::Release;
use super::installed::{Installed, InstalledPath, WheelPaths};

/// What the check found.
pub(crate) struct WindowsNames {
    /// `None` when the release has no Windows wheels.
    pub problems: Option<Vec<String>>,
    /// What it covered.
    pub note: String,
    /// The long-path finding, if any.
    pub details: Vec<String>,
}

pub(crate) fn check(release: &Release, installed: &Installed<'_>) -> WindowsNames {
    if !release.platforms().contains(&Platform::Windows) {
        return WindowsNames {
            problems: None,
            note: "no Windows wheels".to_owned(),
            details: Vec::new(),
        };
    }
    let windows: Vec<&WheelPaths<'_>> = installed
        .wheels
        .iter()
        .filter(|w| w.file.installs_on(Platform::Windows))
        .collect();
    let mut problems = Vec::new();
    let mut paths: Vec<&InstalledPath> = Vec::new();
    for wheel in &windows {
        problems.extend(wheel.problems.iter().cloned());
        problems.extend(bad_names(&wheel.paths));
        paths.extend(&wheel.paths);
    }
    paths.sort_by(|a, b| a.path.cmp(&b.path));
    problems.extend(collisions(&paths));
    let details = long_paths(&paths).into_iter().collect();
    WindowsNames {
        problems: Some(problems),
        note: format!("{} wheels that install on Windows", windows.len()),
        details,
    }
}

/// Names Windows cannot hold, one problem per bad directory or file.
fn bad_names(paths: &[InstalledPath]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for item in paths {
        let Some((bad, problem)) = windows_names::first_bad_name(&item.path) else {
            continue;
        };
        if seen.insert(bad) {
            let shown = if bad.len() < item.path.len() {
                format!("{bad}/")
            } else {
                bad.to_owned()
            };
            out.push(format!(
                "{}: {shown}: {problem}; Windows cannot hold it (rebuild without it)",
                item.origin
            ));
        }
    }
    out
}

/// Paths installed together (sorted) that Windows takes for one.
fn collisions(installed: &[&InstalledPath]) -> Vec<String> {
    let origin = |spelling: &str| {
        let below = format!("{spelling}/");
        installed
            .iter()
            .find(|i| i.path == spelling || i.path.starts_with(&below))
            .map_or("", |i| i.origin.as_str())
    };
    windows_names::case_collisions(installed.iter().map(|i| i.path.as_str()))
        .into_iter()
        .map(|(a, b)| {
            let (in_a, in_b) = (origin(&a), origin(&b));
            let place = if in_a == in_b {
                in_a.to_owned()
            } else {
                format!("{in_a} and {in_b}")
            };
            format!(
                "{place}: {a} and {b} differ only in case, one name to Windows, so on install one \
                 overwrites the other (rebuild with one of them renamed)"
            )
        })
        .collect()
}

/// The long-path finding: how many paths reach `MAX_PATH` below a typical
/// site-packages, and the longest.
fn long_paths(installed: &[&InstalledPath]) -> Option<String> {
    let (count, longest, length) =
        windows_names::over_max_path(installed.iter().map(|i| i.path.as_str()))?;
    let origin = installed
        .iter()
        .find(|i| i.path == longest)
        .map_or("", |i| i.origin.as_str());
    Some(format!(
        "warning: {count} installed paths reach Windows' limit of {MAX_PATH} characters below a \
         typical site-packages ({TYPICAL_SITE_PACKAGES}); the longest, {longest} in {origin}, is \
         {length} characters there; installers fail on such paths unless long paths are enabled"
    ))
}
