//! docs/behaviour.md#windows-names: a package set for a Windows tag holds
//! only names Windows can hold, and no two of its installed paths differ
//! only in case. The rule is `dist_info::windows_names`, the one the
//! install side applies when it unpacks the devel tree on Windows; here it
//! is applied to every path the set installs into site-packages (every
//! package's files and the devel tree), before anything is written. Paths
//! that reach `MAX_PATH` below a typical site-packages are warned about.

use std::collections::BTreeSet;

use dist_info::windows_names::{self, MAX_PATH, TYPICAL_SITE_PACKAGES};

use crate::error::{CaseSpelling, CheckError, Error, WindowsNameProblem};
use crate::installed::Installed;

/// Refuses a set for the Windows tag `tag` that installs a name Windows
/// cannot hold or two paths that differ only in case.
pub(crate) fn check(installed: &[Installed<'_>], tag: &str) -> Result<(), Error> {
    let mut problems: Vec<(WindowsNameProblem, String)> = Vec::new();
    // A bad directory is one problem, however many paths lie below it.
    let mut judged = BTreeSet::new();
    for item in installed {
        let Some((bad, problem)) = windows_names::first_bad_name(&item.path) else {
            continue;
        };
        if judged.insert(bad) {
            let shown = if bad.len() < item.path.len() || item.dir {
                format!("{bad}/")
            } else {
                bad.to_owned()
            };
            problems.push((
                WindowsNameProblem::BadName {
                    origin: item.origin.clone(),
                    path: item.path.clone(),
                    package: item.package.to_owned(),
                    problem,
                    tag: tag.to_owned(),
                },
                shown,
            ));
        }
    }
    for (first, second) in windows_names::case_collisions(installed.iter().map(|i| i.path.as_str()))
    {
        let (a, b) = (spelled(installed, &first), spelled(installed, &second));
        let short = format!("{} / {}", a.shown, b.shown);
        problems.push((
            WindowsNameProblem::CaseCollision {
                first: a.owned(),
                second: b.owned(),
            },
            short,
        ));
    }
    let mut problems = problems.into_iter();
    let Some((first, _)) = problems.next() else {
        return Ok(());
    };
    Err(CheckError::WindowsNames {
        first: Box::new(first),
        others: problems.map(|(_, short)| short).collect(),
    }
    .into())
}

/// Warns, naming the longest, when installed paths reach `MAX_PATH` below
/// a typical site-packages.
pub(crate) fn warn_long_paths(installed: &[Installed<'_>]) {
    let Some((count, longest, length)) =
        windows_names::over_max_path(installed.iter().map(|i| i.path.as_str()))
    else {
        return;
    };
    let package = installed
        .iter()
        .find(|i| i.path == longest)
        .map_or("", |i| i.package);
    let (paths, reach) = if count == 1 {
        ("path", "reaches")
    } else {
        ("paths", "reach")
    };
    tracing::warn!(
        "{count} installed {paths} {reach} Windows' limit of {MAX_PATH} characters (MAX_PATH) \
         below a typical site-packages ({TYPICAL_SITE_PACKAGES}, {} characters); the longest, \
         {longest} in {package}, is {length} characters there: installers fail on such paths \
         unless long paths are enabled (LongPathsEnabled), so shorten them if you can",
        TYPICAL_SITE_PACKAGES.encode_utf16().count()
    );
}

/// A colliding spelling, as a message shows it: a directory with its `/`,
/// with the package and origin of the first path at or below it.
struct Spelled<'i> {
    shown: String,
    package: &'i str,
    origin: &'i str,
}

impl Spelled<'_> {
    fn owned(&self) -> CaseSpelling {
        CaseSpelling {
            shown: self.shown.clone(),
            package: self.package.to_owned(),
            origin: self.origin.to_owned(),
        }
    }
}

fn spelled<'i>(installed: &'i [Installed<'_>], spelling: &str) -> Spelled<'i> {
    let below = format!("{spelling}/");
    // A directory is named by a file below it: that is what the user finds.
    let item = installed
        .iter()
        .find(|i| i.path == spelling && !i.dir)
        .map(|i| (i, false))
        .or_else(|| {
            installed
                .iter()
                .find(|i| i.path.starts_with(&below) && !i.dir)
                .or_else(|| installed.iter().find(|i| i.path == spelling))
                .map(|i| (i, true))
        });
    match item {
        Some((item, dir)) => Spelled {
            shown: if dir { below } else { spelling.to_owned() },
            package: item.package,
            origin: &item.origin,
        },
        None => Spelled {
            shown: spelling.to_owned(),
            package: "",
            origin: "",
        },
    }
}
