//! The paths each wheel installs into site-packages — its members, and the
//! members of the devel tarball that `rocm-sdk init` unpacks — read once
//! for the checks over them: names every file system holds
//! (`name-lengths`, `dist_info::name_lengths`), one owner for every
//! installed path among the wheels installed together (`one-owner`,
//! `dist_info::installed_paths`), both on every platform, and the names
//! Windows can hold (`windows-names`). The build applies the same rules
//! before it writes anything (docs/behaviour.md#build-checks).

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use dist_info::installed_paths::shared_paths;
use dist_info::name_lengths::{self, shortened};

use super::release::{DistFile, Kind};
use super::{Release, devel_tarball};

/// One installed path and where it comes from.
pub(crate) struct InstalledPath {
    /// Relative to site-packages.
    pub path: String,
    /// The wheel as the report names it (for a tarball member: the tarball
    /// in it).
    pub origin: String,
    /// A directory (of the devel tarball): its name counts where names
    /// do, but directories are shared freely.
    pub dir: bool,
}

impl InstalledPath {
    /// A file or link: what one owner may ship.
    fn is_file(&self) -> bool {
        !self.dir
    }
}

/// The installed paths of one readable wheel, and what of them could not
/// be read.
pub(crate) struct WheelPaths<'r> {
    pub file: &'r DistFile,
    pub paths: Vec<InstalledPath>,
    pub problems: Vec<String>,
}

/// Every readable wheel's installed paths.
pub(crate) struct Installed<'r> {
    pub wheels: Vec<WheelPaths<'r>>,
}

/// Reads the installed paths of every wheel of the release that the
/// well-formed check could read (the others fail it already).
pub(crate) fn read(release: &Release) -> Installed<'_> {
    let mut installed = Installed { wheels: Vec::new() };
    for file in release.unique() {
        let Kind::Wheel(wheel) = &file.kind else {
            continue;
        };
        if !wheel.readable {
            continue;
        }
        let members = &wheel.members;
        let mut paths: Vec<InstalledPath> = members
            .iter()
            .map(|m| InstalledPath {
                path: installed_path(m).to_owned(),
                origin: file.display.clone(),
                dir: false,
            })
            .collect();
        let mut problems = Vec::new();
        for member in members
            .iter()
            .filter(|m| devel_tarball::is_devel_tarball(m))
        {
            let origin = format!("{} ({member})", file.display);
            match tarball_members(&file.path, member) {
                Ok(names) => paths.extend(names.into_iter().map(|(path, dir)| InstalledPath {
                    path,
                    origin: origin.clone(),
                    dir,
                })),
                Err(e) => problems.push(format!(
                    "{origin}: cannot read the devel tarball's member names: {e}; rebuild the wheel"
                )),
            }
        }
        installed.wheels.push(WheelPaths {
            file,
            paths,
            problems,
        });
    }
    installed
}

/// Where a wheel member lands below site-packages: `{name}.data/purelib/x`
/// and `{name}.data/platlib/x` at `x`, anything else at its own path.
fn installed_path(member: &str) -> &str {
    let Some((first, rest)) = member.split_once('/') else {
        return member;
    };
    // The `.data` directory is spelled in lower case by the wheel spec.
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    let data = first.ends_with(".data");
    if !data {
        return member;
    }
    rest.strip_prefix("purelib/")
        .or_else(|| rest.strip_prefix("platlib/"))
        .unwrap_or(member)
}

/// The members of the devel tarball `member` of the wheel at `wheel`, as
/// the site-packages paths they unpack to, each with whether it is a
/// directory, read as a stream.
fn tarball_members(wheel: &Path, member: &str) -> io::Result<Vec<(String, bool)>> {
    devel_tarball::with_archive(wheel, member, |archive| {
        let mut names = Vec::new();
        for entry in archive.entries()? {
            let entry = entry?;
            let dir = entry.header().entry_type().is_dir();
            names.push((devel_tarball::clean_path(&entry.path_bytes()), dir));
        }
        Ok(names)
    })
}

/// `name-lengths`: one problem per long name (the directory once, not
/// each path below it) and per path too long as a whole.
pub(crate) fn name_lengths(installed: &Installed<'_>) -> Vec<String> {
    let mut problems = Vec::new();
    for wheel in &installed.wheels {
        problems.extend(wheel.problems.iter().cloned());
        let files: Vec<&InstalledPath> = wheel.paths.iter().filter(|p| p.is_file()).collect();
        let found = name_lengths::problems(files.iter().map(|p| (p.path.as_str(), false)));
        for (index, problem) in found {
            let item = files[index];
            problems.push(format!(
                "{}: {}: {problem}; rebuild without it (shorten or rename it in its artifact)",
                item.origin,
                shortened(&item.path)
            ));
        }
    }
    problems
}

/// `one-owner`: per platform, the paths two wheels installed together
/// ship. Wheels of one distribution name are alternatives (a legacy
/// release's devel wheels, one per family): one name is one owner.
pub(crate) fn one_owner(release: &Release, installed: &Installed<'_>) -> Vec<String> {
    let mut problems = BTreeSet::new();
    for platform in release.platforms() {
        let together: Vec<&WheelPaths<'_>> = installed
            .wheels
            .iter()
            .filter(|w| w.file.installs_on(platform))
            .collect();
        let shipped = together.iter().flat_map(|w| {
            w.paths
                .iter()
                .filter(|p| p.is_file())
                .map(|p| (p.path.as_str(), w.file.name()))
        });
        for shared in shared_paths(shipped) {
            let file_of = |name: &str| {
                together
                    .iter()
                    .filter(|w| w.file.name() == name)
                    .map(|w| w.file.display.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            problems.insert(format!(
                "{shared} ({} and {}); rebuild with the file in one of them",
                file_of(&shared.first),
                file_of(&shared.second)
            ));
        }
    }
    problems.into_iter().collect()
}
