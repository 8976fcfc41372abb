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

use super::release::Kind;
use super::{Release, devel_tarball};

/// What the check found.
pub(crate) struct WindowsNames {
    /// `None` when the release has no Windows wheels.
    pub problems: Option<Vec<String>>,
    /// What it covered.
    pub note: String,
    /// The long-path finding, if any.
    pub details: Vec<String>,
}

/// One installed path and the package that installs it.
struct Installed {
    path: String,
    /// The wheel as the report names it (for a tarball member: the tarball
    /// in it).
    origin: String,
}

pub(crate) fn check(release: &Release) -> WindowsNames {
    if !release.platforms().contains(&Platform::Windows) {
        return WindowsNames {
            problems: None,
            note: "no Windows wheels".to_owned(),
            details: Vec::new(),
        };
    }
    let mut problems = Vec::new();
    let mut installed: Vec<Installed> = Vec::new();
    let mut wheels = 0;
    for file in release.unique() {
        let Kind::Wheel(wheel) = &file.kind else {
            continue;
        };
        if !file.installs_on(Platform::Windows) || !wheel.readable {
            continue;
        }
        let members = &wheel.members;
        wheels += 1;
        let mut paths: Vec<Installed> = members
            .iter()
            .map(|m| Installed {
                path: m.clone(),
                origin: file.display.clone(),
            })
            .collect();
        for member in members
            .iter()
            .filter(|m| devel_tarball::is_devel_tarball(m))
        {
            let origin = format!("{} ({member})", file.display);
            match super::installed::tarball_members(&file.path, member) {
                Ok(names) => paths.extend(names.into_iter().map(|(path, _)| Installed {
                    path,
                    origin: origin.clone(),
                })),
                Err(e) => problems.push(format!(
                    "{origin}: cannot read the devel tarball's member names: {e}; rebuild the wheel"
                )),
            }
        }
        problems.extend(bad_names(&paths));
        installed.extend(paths);
    }
    installed.sort_by(|a, b| a.path.cmp(&b.path));
    problems.extend(collisions(&installed));
    let details = long_paths(&installed).into_iter().collect();
    WindowsNames {
        problems: Some(problems),
        note: format!("{wheels} wheels that install on Windows"),
        details,
    }
}

/// Names Windows cannot hold, one problem per bad directory or file.
fn bad_names(paths: &[Installed]) -> Vec<String> {
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
fn collisions(installed: &[Installed]) -> Vec<String> {
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
fn long_paths(installed: &[Installed]) -> Option<String> {
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
