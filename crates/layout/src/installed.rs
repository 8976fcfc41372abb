//! Every path a package set installs into site-packages (each package's
//! files and the devel tree where `rocm-sdk init` unpacks it), and the
//! checks every platform's set passes before anything is written
//! (docs/behaviour.md#build-checks): names every file system holds
//! (`dist_info::name_lengths`) and one owner for every installed path
//! (`dist_info::installed_paths`), the rules `verify` applies again to
//! what was published.

use std::collections::BTreeMap;

use dist_info::devel_tree::TreeNames;
use dist_info::installed_paths::shared_paths;
use dist_info::name_lengths::{self, shortened};

use crate::error::{CheckError, Error, LongNameProblem, SharedPathProblem};
use crate::plan::{Action, DevelEntry, LinkReason, PackagePlan, SourceRef};

/// One path the set installs, relative to site-packages.
pub(crate) struct Installed<'p> {
    pub(crate) path: String,
    /// A directory (of the devel tree).
    pub(crate) dir: bool,
    /// The distribution that installs it.
    pub(crate) package: &'p str,
    /// Where it comes from, as the user finds it.
    pub(crate) origin: String,
}

/// Every path the set installs, with its package and origin, sorted by
/// path (the devel tree's paths where `rocm-sdk init` unpacks them).
pub(crate) fn installed<'p>(packages: &'p [PackagePlan], names: &TreeNames) -> Vec<Installed<'p>> {
    let mut out = Vec::new();
    for p in packages {
        let package = p.dist_name.as_str();
        for file in &p.files {
            let origin = match &file.action {
                Action::Copy { source } | Action::PatchSearchPath { source, .. } => {
                    origin_of(source)
                }
                Action::Launcher { target } => format!("the launcher of {target}"),
                Action::Generated { what, .. } => format!("the {what} the build writes"),
                Action::DevelTar => "the devel tarball".to_owned(),
                Action::DevelDigest => "the devel tarball's digest file".to_owned(),
            };
            out.push(Installed {
                path: file.dest.clone(),
                dir: false,
                package,
                origin,
            });
        }
        for entry in &p.devel_tree {
            let origin = match entry {
                DevelEntry::File { source, .. } => origin_of(source),
                DevelEntry::Dir { relpath } => format!("the directory {relpath} of the artifacts"),
                DevelEntry::Generated { what, .. } => format!("the {what} the build writes"),
                DevelEntry::Symlink {
                    relpath,
                    target,
                    why: LinkReason::Verbatim,
                } => format!("the link {relpath} -> {target} of the artifacts"),
                DevelEntry::Symlink { relpath, .. } => {
                    format!("the devel link {relpath} to a runtime file")
                }
            };
            out.push(Installed {
                path: names.in_tree(entry.relpath()),
                dir: matches!(entry, DevelEntry::Dir { .. }),
                package,
                origin,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn origin_of(source: &SourceRef) -> String {
    source.describe()
}

/// Refuses a set that installs a name or a path no file system holds:
/// every long name once (the directory, not each file below it), then
/// every path too long as a whole.
pub(crate) fn check_name_lengths(installed: &[Installed<'_>]) -> Result<(), Error> {
    let found = name_lengths::problems(installed.iter().map(|i| (i.path.as_str(), i.dir)));
    let problems = found.into_iter().map(|(index, problem)| {
        let item = &installed[index];
        (
            LongNameProblem {
                origin: item.origin.clone(),
                path: item.path.clone(),
                package: item.package.to_owned(),
                problem,
            },
            shortened(&item.path),
        )
    });
    let mut problems = problems;
    let Some((first, _)) = problems.next() else {
        return Ok(());
    };
    Err(CheckError::LongNames {
        first: Box::new(first),
        others: problems.map(|(_, short)| short).collect(),
    }
    .into())
}

/// Refuses a set in which two packages installed together ship the same
/// file, or one a file where another has a directory. Packages of one
/// distribution name (a legacy release's devel packages, one per family)
/// are alternatives, never installed together: one name is one owner.
pub(crate) fn check_owners(installed: &[Installed<'_>]) -> Result<(), Error> {
    let files = installed.iter().filter(|i| !i.dir);
    let shared = shared_paths(files.clone().map(|i| (i.path.as_str(), i.package)));
    let Some(first) = shared.first() else {
        return Ok(());
    };
    // Where each package's file at a path comes from.
    let mut origins: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for i in files {
        origins.entry((&i.path, i.package)).or_insert(&i.origin);
    }
    let origin_below = |path: &str, package: &str| {
        let below = format!("{path}/");
        installed
            .iter()
            .find(|i| i.package == package && i.path.starts_with(&below))
            .map_or(String::new(), |i| i.origin.clone())
    };
    let origin = |path: &str, package: &str| {
        origins
            .get(&(path, package))
            .map_or_else(|| origin_below(path, package), |o| (*o).to_owned())
    };
    let first = SharedPathProblem {
        first_origin: origin(&first.path, &first.first),
        second_origin: origin(&first.path, &first.second),
        shared: first.clone(),
    };
    Err(CheckError::SharedPaths {
        first: Box::new(first),
        others: shared[1..]
            .iter()
            .map(|s| format!("{} ({} / {})", s.path, s.first, s.second))
            .collect(),
    }
    .into())
}
