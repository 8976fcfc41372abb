//! Finding the pieces of an installation in site-packages: the devel
//! distribution (its dist-info, RECORD and version), its tar, the tree, and
//! the installed device distributions. Everything below site-packages is
//! reached through one confined handle on it (docs/devel-tar.md#confinement).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use fs_helpers::confined::{self, Dir, EntryKind};
use pypa_formats::filename::DistInfoDir;
use pypa_formats::installer::{InstallCommand, installer_name};

use crate::compression::TarCodec;
use crate::error::Error;
use crate::record::RecordFile;
use crate::tree_names::{DEVEL_PACKAGE_DIR, TreeNames, tree_names_in};

const DEVEL_DIST_PREFIX: &str = "rocm_sdk_devel-";
const DEVICE_DIST_PREFIX: &str = "rocm_sdk_device_";
/// The dist-info prefixes of the distributions whose files the devel tree
/// links to.
const LINKED_DIST_PREFIXES: &[&str] = &[
    "rocm_sdk_core-",
    "rocm_sdk_libraries",
    DEVICE_DIST_PREFIX,
    "rocm_profiler-",
];

/// The most bytes an `INSTALLER` may have: a tool's name is a few.
const INSTALLER_LIMIT: u64 = 256;

/// The command that installs into `root`, from the `INSTALLER` of the
/// devel distribution, else of core's (for remedies: a uv-made environment
/// has no pip); pip's when neither says.
pub fn install_command(root: &Path) -> InstallCommand {
    let Ok(names) = Dir::open(root).and_then(|sp| sp.list("")) else {
        return InstallCommand::default();
    };
    let names: Vec<String> = names
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .collect();
    [DEVEL_DIST_PREFIX, "rocm_sdk_core-"]
        .iter()
        .find_map(|prefix| {
            let name = names
                .iter()
                .find(|n| n.starts_with(prefix) && n.ends_with(DistInfoDir::SUFFIX))?;
            read_installer(&root.join(name))
        })
        .map(|tool| InstallCommand::from_installer_file(&tool))
        .unwrap_or_default()
}

/// The tool the `INSTALLER` file of the installed distribution at
/// `dist_info` names ([`installer_name`]); `None` when it is missing,
/// names none, or is not a small regular file.
pub fn read_installer(dist_info: &Path) -> Option<String> {
    let bytes = confined::read_regular(&dist_info.join("INSTALLER"), INSTALLER_LIMIT).ok()?;
    installer_name(&String::from_utf8(bytes).ok()?).map(str::to_owned)
}

/// The devel distribution as installed in one site-packages.
#[derive(Debug)]
pub(crate) struct InstalledDevel {
    /// Site-packages, as given (for messages).
    pub(crate) root: PathBuf,
    /// Site-packages, the handle everything else is reached through.
    pub(crate) sp: Dir,
    /// `rocm_sdk_devel-{V}.dist-info`.
    pub(crate) dist_info_name: String,
    pub(crate) version: String,
    /// The tree's names, nonce included (from the devel package's document).
    pub(crate) names: TreeNames,
}

impl InstalledDevel {
    /// Finds `rocm_sdk_devel-{V}.dist-info/RECORD` in `root`.
    pub(crate) fn open(root: &Path) -> Result<Self, Error> {
        let sp = Dir::open(root).map_err(|e| Error::read("open", root, e))?;
        let names = list_dir(&sp)?;
        let mut candidates: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(DEVEL_DIST_PREFIX) && n.ends_with(DistInfoDir::SUFFIX))
            .collect();
        candidates.sort();
        let Some(name) = candidates.first() else {
            if is_dir(&sp, DEVEL_PACKAGE_DIR) {
                return Err(Error::NoRecord {
                    dist_info: root.to_path_buf(),
                });
            }
            return Err(Error::DevelNotInstalled {
                install: InstallCommand::default(),
                site_packages: root.to_path_buf(),
            });
        };
        if candidates.len() > 1 {
            tracing::warn!(
                "several rocm-sdk-devel dist-info directories in {}; using {name}",
                root.display()
            );
        }
        let record = format!("{name}/RECORD");
        let listed = sp
            .entry(&record)
            .map_err(|e| Error::read("inspect", root.join(&record), e))?;
        if !listed.is_some_and(|entry| entry.kind == EntryKind::File) {
            return Err(Error::NoRecord {
                dist_info: root.join(name),
            });
        }
        let names = tree_names_in(&sp)?;
        Ok(Self {
            root: root.to_path_buf(),
            version: dist_version(name),
            dist_info_name: (*name).clone(),
            sp,
            names,
        })
    }

    /// The devel distribution's dist-info directory.
    pub(crate) fn dist_info(&self) -> Result<Dir, Error> {
        open_dir(&self.sp, &self.dist_info_name)
    }

    /// The devel distribution's RECORD, with its directory open.
    pub(crate) fn record(&self) -> Result<RecordFile, Error> {
        Ok(RecordFile::new(self.dist_info()?))
    }

    /// `SP/rocm_sdk_devel`, the directory that holds the tar (and is locked).
    pub(crate) fn package(&self) -> Result<Dir, Error> {
        open_dir(&self.sp, DEVEL_PACKAGE_DIR)
    }

    /// `SP/_rocm_sdk_devel{N}`, for messages.
    pub(crate) fn tree_path(&self) -> PathBuf {
        self.root.join(self.names.root())
    }

    /// Whether the tree's root is a directory (never through a link).
    pub(crate) fn tree_exists(&self) -> bool {
        is_dir(&self.sp, self.names.root())
    }

    /// The tree, open.
    pub(crate) fn tree(&self) -> Result<Dir, Error> {
        open_dir(&self.sp, self.names.root())
    }

    /// The devel tar still waiting to be unpacked, if any: its name in the
    /// devel package directory and its codec. Anything at one of the tar's
    /// names counts (a link there is the unpack's to refuse, not a
    /// finished tree).
    pub(crate) fn tar(&self) -> Result<Option<(String, TarCodec)>, Error> {
        let mut cursor = self.sp.cursor();
        for name in TarCodec::FILE_NAMES {
            let rel = format!("{DEVEL_PACKAGE_DIR}/{name}");
            let found = cursor
                .entry(&rel)
                .map_err(|e| Error::read("inspect", self.root.join(&rel), e))?;
            if found.is_some() {
                let codec = TarCodec::from_file_name(name).expect("known name");
                return Ok(Some(((*name).to_owned(), codec)));
            }
        }
        Ok(None)
    }

    /// The full path of the tar `name`, for messages.
    pub(crate) fn tar_path(&self, name: &str) -> PathBuf {
        self.root.join(DEVEL_PACKAGE_DIR).join(name)
    }

    /// Refuses to go on when the devel distribution belongs to another
    /// user (docs/devel-tar.md#owner): called before the first write.
    pub(crate) fn check_owner(&self) -> Result<(), Error> {
        check_owner(&self.dist_info()?)
    }

    /// Every path the devel distribution's RECORD lists.
    pub(crate) fn recorded_paths(&self) -> Result<HashSet<String>, Error> {
        Ok(self
            .record()?
            .rows()?
            .into_iter()
            .map(|row| row.path)
            .collect())
    }

    /// Every path the RECORDs of the distributions the tree links to list
    /// (core, libraries, device wheels, the profiler).
    pub(crate) fn runtime_recorded_paths(&self) -> Result<HashSet<String>, Error> {
        let mut paths = HashSet::new();
        for name in linked_dist_infos(&self.sp)? {
            let record = RecordFile::new(open_dir(&self.sp, &name)?);
            paths.extend(record.rows()?.into_iter().map(|row| row.path));
        }
        Ok(paths)
    }
}

/// [`Error::OtherOwner`] when `dir` belongs to a user other than the one
/// running (never on Windows, which has no such owner).
pub(crate) fn check_owner(dir: &Dir) -> Result<(), Error> {
    let owner = dir
        .owner()
        .map_err(|e| Error::read("inspect", dir.path(), e))?;
    match (owner, confined::current_user()) {
        (Some(owner), Some(user)) if owner != user => Err(Error::OtherOwner {
            path: dir.path().to_path_buf(),
            owner,
            user,
        }),
        _ => Ok(()),
    }
}

/// The directory `name` directly in site-packages, never through a link.
pub(crate) fn open_dir(sp: &Dir, name: &str) -> Result<Dir, Error> {
    sp.open_dir(name)
        .map_err(|e| Error::read("open", sp.display_path(name), e))
}

/// Whether `rel` below `dir` is a directory (not a link to one).
pub(crate) fn is_dir(dir: &Dir, rel: &str) -> bool {
    matches!(dir.entry(rel), Ok(Some(entry)) if entry.kind == EntryKind::Dir)
}

/// The sorted names of the `rocm_sdk_device_*.dist-info` directories in
/// site-packages.
pub(crate) fn device_dist_infos(sp: &Dir) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = list_dir(sp)?
        .into_iter()
        .filter(|n| n.starts_with(DEVICE_DIST_PREFIX) && n.ends_with(DistInfoDir::SUFFIX))
        .collect();
    names.sort();
    Ok(names)
}

/// The sorted names of the dist-info directories in site-packages of the
/// distributions the devel tree links to: core, libraries, device wheels
/// and the profiler (the links stamp's lines, `stamp.rs`).
pub(crate) fn linked_dist_infos(sp: &Dir) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = list_dir(sp)?
        .into_iter()
        .filter(|n| {
            LINKED_DIST_PREFIXES.iter().any(|p| n.starts_with(p))
                && n.ends_with(DistInfoDir::SUFFIX)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// The version part of `{name}-{version}.dist-info`; empty when the
/// directory name is not of that form (it then matches no version).
pub(crate) fn dist_version(dist_info_name: &str) -> String {
    dist_info_name
        .parse::<DistInfoDir>()
        .map(|dir| dir.version)
        .unwrap_or_default()
}

/// The names (UTF-8 ones) directly in site-packages.
fn list_dir(sp: &Dir) -> Result<Vec<String>, Error> {
    let names = sp.list("").map_err(|e| Error::read("list", sp.path(), e))?;
    Ok(names
        .into_iter()
        .filter_map(|name| name.into_string().ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_dist_info_names() {
        assert_eq!(dist_version("rocm_sdk_devel-7.1.0.dist-info"), "7.1.0");
        assert_eq!(
            dist_version("rocm_sdk_device_gfx942-7.1.0.post1.dist-info"),
            "7.1.0.post1"
        );
    }
}
