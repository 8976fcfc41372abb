//! Finding the pieces of an installation in site-packages: the devel
//! distribution (its dist-info, RECORD and version), its tar, the tree, and
//! the installed device distributions.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use pypa_formats::filename::DistInfoDir;
use pypa_formats::installer::{InstallCommand, installer_name};

use crate::compression::TarCodec;
use crate::error::Error;
use crate::tree_names::{DEVEL_PACKAGE_DIR, TreeNames, installed_tree_names};

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

/// The command that installs into `root`, from the `INSTALLER` of the
/// devel distribution, else of core's (for remedies: a uv-made environment
/// has no pip); pip's when neither says.
pub fn install_command(root: &Path) -> InstallCommand {
    let Ok(names) = list_dir(root) else {
        return InstallCommand::default();
    };
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
/// `dist_info` names ([`installer_name`]); `None` when it is missing or
/// names none.
pub fn read_installer(dist_info: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(dist_info.join("INSTALLER"))
        .ok()?
        // A tool's name is a few bytes; the file is untrusted.
        .take(256)
        .read_to_string(&mut text)
        .ok()?;
    installer_name(&text).map(str::to_owned)
}

/// The devel distribution as installed in one site-packages.
#[derive(Debug)]
pub(crate) struct InstalledDevel {
    pub(crate) root: PathBuf,
    pub(crate) dist_info: PathBuf,
    pub(crate) version: String,
    /// The tree's names, nonce included (from the devel package's document).
    pub(crate) names: TreeNames,
}

impl InstalledDevel {
    /// Finds `rocm_sdk_devel-{V}.dist-info/RECORD` in `root`.
    pub(crate) fn open(root: &Path) -> Result<Self, Error> {
        let names = list_dir(root)?;
        let mut candidates: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(DEVEL_DIST_PREFIX) && n.ends_with(DistInfoDir::SUFFIX))
            .collect();
        candidates.sort();
        let Some(name) = candidates.first() else {
            if root.join(DEVEL_PACKAGE_DIR).is_dir() {
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
        let dist_info = root.join(name);
        if !dist_info.join("RECORD").is_file() {
            return Err(Error::NoRecord { dist_info });
        }
        Ok(Self {
            root: root.to_path_buf(),
            version: dist_version(name),
            dist_info,
            names: installed_tree_names(root)?,
        })
    }

    /// The devel distribution's RECORD.
    pub(crate) fn record(&self) -> PathBuf {
        self.dist_info.join("RECORD")
    }

    /// `SP/rocm_sdk_devel`, the directory that holds the tar (and is locked).
    pub(crate) fn package_dir(&self) -> PathBuf {
        self.root.join(DEVEL_PACKAGE_DIR)
    }

    /// `SP/_rocm_sdk_devel{N}`.
    pub(crate) fn tree(&self) -> PathBuf {
        self.root.join(self.names.root())
    }

    /// The devel tar still waiting to be unpacked, if any.
    pub(crate) fn tar(&self) -> Option<(PathBuf, TarCodec)> {
        let dir = self.package_dir();
        TarCodec::FILE_NAMES.iter().find_map(|name| {
            let path = dir.join(name);
            path.is_file()
                .then(|| (path, TarCodec::from_file_name(name).expect("known name")))
        })
    }
}

/// The sorted names of the `rocm_sdk_device_*.dist-info` directories in
/// `root`.
pub(crate) fn device_dist_infos(root: &Path) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = list_dir(root)?
        .into_iter()
        .filter(|n| n.starts_with(DEVICE_DIST_PREFIX) && n.ends_with(DistInfoDir::SUFFIX))
        .collect();
    names.sort();
    Ok(names)
}

/// The sorted names of the dist-info directories in `root` of the
/// distributions the devel tree links to: core, libraries, device wheels and
/// the profiler (the links stamp's lines, `stamp.rs`).
pub(crate) fn linked_dist_infos(root: &Path) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = list_dir(root)?
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

fn list_dir(root: &Path) -> Result<Vec<String>, Error> {
    let entries = std::fs::read_dir(root).map_err(|e| Error::read("list", root, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::read("list", root, e))?;
        if let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    Ok(names)
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
