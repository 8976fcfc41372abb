//! The installation a `rocm-sdk` belongs to: site-packages, found from the
//! binary's own location, the `_dist_info.json` it ships, and where each
//! package lives in it.

use std::fs;
use std::path::{Path, PathBuf};

use dist_info::document::{DistInfo, FILE_NAME};
use dist_info::package::PackageKind;
use pypa_formats::installer::InstallCommand;

use crate::error::Error;

/// Where the native binary lives inside site-packages.
#[cfg(not(windows))]
pub const BINARY_RELPATH: &str = "rocm_sdk_core/_bin/rocm-sdk";

/// Where the native binary lives inside site-packages (the `win_amd64`
/// core wheel's `rocm-sdk.exe`).
#[cfg(windows)]
pub const BINARY_RELPATH: &str = "rocm_sdk_core/_bin/rocm-sdk.exe";

/// An installed set of ROCm packages: one site-packages directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    root: PathBuf,
}

impl Site {
    /// The site-packages at `root` (nothing is checked yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The site-packages holding the executable at `exe`
    /// (`SP/rocm_sdk_core/_bin/rocm-sdk`, links resolved).
    pub fn from_executable(exe: &Path) -> Result<Self, Error> {
        let exe = fs::canonicalize(exe).map_or_else(|_| exe.to_path_buf(), plain);
        let depth = BINARY_RELPATH.split('/').count();
        match exe.ancestors().nth(depth) {
            Some(root) if exe.ends_with(BINARY_RELPATH) => Ok(Self::new(root)),
            _ => Err(Error::NotInstalled { exe }),
        }
    }

    /// The site-packages directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The dist-info document of core (`rocm_sdk_core/_dist_info.json`):
    /// the reference for this installation, since the native program ships
    /// with core.
    pub fn core_document(&self) -> Result<DistInfo, Error> {
        read_document(&self.root.join("rocm_sdk_core").join(FILE_NAME))
    }

    /// The dist-info document, from core or else from the `rocm` selector.
    pub fn dist_info(&self) -> Result<DistInfo, Error> {
        let candidates = [
            self.root.join("rocm_sdk_core").join(FILE_NAME),
            self.root.join("rocm_sdk").join(FILE_NAME),
        ];
        let path = candidates
            .iter()
            .find(|p| p.is_file())
            .ok_or_else(|| Error::NoDocument {
                site_packages: self.root.clone(),
            })?;
        read_document(path)
    }

    /// The Python interpreter of the environment this site-packages belongs
    /// to: for `X/lib/pythonA.B/site-packages` (a venv, a `--prefix` or the
    /// system layout), `X/bin/pythonA.B` or `X/bin/python3` when it exists,
    /// else `pythonA.B` from `PATH` (`--user`); `python3` from `PATH` when
    /// the directory says nothing (`--target`).
    pub fn python(&self) -> PathBuf {
        let version = Some(&self.root)
            .filter(|root| root.file_name().is_some_and(|f| f == "site-packages"))
            .and_then(|root| root.parent())
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("python"))
            .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'));
        let Some(version) = version else {
            return PathBuf::from("python3");
        };
        let named = format!("python{version}");
        let bin = self
            .root
            .ancestors()
            .nth(3)
            .map(|prefix| prefix.join("bin"));
        bin.into_iter()
            .flat_map(|bin| [bin.join(&named), bin.join("python3")])
            .find(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from(named))
    }

    /// Whether `rocm-sdk-devel` is installed (its pure package exists).
    pub fn has_devel(&self) -> bool {
        self.root.join(devel_tar::DEVEL_PACKAGE_DIR).is_dir()
    }

    /// The devel tree root (`SP/_rocm_sdk_devel{nonce}`), named by the
    /// installed devel package's document.
    pub fn devel_root(&self) -> Result<PathBuf, Error> {
        let names = devel_tar::installed_tree_names(&self.root)?;
        Ok(self.root.join(names.root()))
    }

    /// The platform package directory of a package that is not target
    /// specific (core, profiler), from the document.
    pub fn platform_dir(&self, document: &DistInfo, kind: PackageKind) -> Option<PathBuf> {
        document
            .packages
            .iter()
            .find(|p| p.logical == kind && !p.target_specific)
            .and_then(|p| p.platform_package_template.as_deref())
            .map(|name| self.root.join(name))
    }

    /// Unpacks the devel tree if needed and reconciles device links; the
    /// devel root and the warnings to show.
    pub fn ensure_devel(&self) -> Result<(PathBuf, Vec<devel_tar::DevelWarning>), Error> {
        let (root, report) = self.ensure_devel_with(&devel_tar::UnpackOptions::default())?;
        Ok((root, report.warnings))
    }

    /// The command that installs into this site-packages, for remedies:
    /// `uv pip install` when uv installed the ROCm distributions (their
    /// `INSTALLER` says so; a uv-made environment has no pip), else
    /// `pip install`.
    pub fn install_command(&self) -> InstallCommand {
        devel_tar::install_command(&self.root)
    }

    /// [`Site::ensure_devel`] with `options` (who hears of the unpack's
    /// steps, which links to leave), returning the whole report (what was
    /// unpacked, the warnings).
    pub fn ensure_devel_with(
        &self,
        options: &devel_tar::UnpackOptions,
    ) -> Result<(PathBuf, devel_tar::EnsureReport), Error> {
        if !self.has_devel() {
            // The installed selector's version: `rocm[devel]==X` would take
            // a post-release `X.postN` of it back.
            let pin = self
                .dist_info()
                .map(|d| format!("=={}", self.selector_version(&d)))
                .unwrap_or_default();
            return Err(Error::DevelNotInstalled {
                site_packages: self.root.clone(),
                install: self.install_command(),
                pin,
            });
        }
        let report = devel_tar::ensure_with(&self.root, options)?;
        Ok((self.devel_root()?, report))
    }
}

/// Windows' canonical paths are verbatim (`\\?\C:\...`), which many tools
/// (and people) do not accept; a path on a drive is given the plain way.
#[cfg(windows)]
fn plain(path: PathBuf) -> PathBuf {
    match path.to_str().and_then(|p| p.strip_prefix(r"\\?\")) {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => PathBuf::from(rest),
        _ => path,
    }
}

#[cfg(not(windows))]
fn plain(path: PathBuf) -> PathBuf {
    path
}

/// Reads and parses one `_dist_info.json`.
pub(crate) fn read_document(path: &Path) -> Result<DistInfo, Error> {
    // A regular file only, of the size a release's document has at most.
    let bytes = fs_helpers::confined::read_regular(path, 16 << 20).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NoDocument {
                site_packages: path
                    .parent()
                    .and_then(Path::parent)
                    .unwrap_or(path)
                    .to_path_buf(),
            }
        } else {
            Error::read(path, e)
        }
    })?;
    DistInfo::from_json(&bytes).map_err(|source| Error::Document {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_packages_is_three_levels_above_the_binary() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("lib/python3.12/site-packages");
        let bin = sp.join(BINARY_RELPATH);
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        fs::write(&bin, b"").unwrap();
        let site = Site::from_executable(&bin).unwrap();
        assert_eq!(site.root(), fs::canonicalize(&sp).unwrap());
    }

    #[test]
    fn a_binary_elsewhere_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("rocm-sdk");
        fs::write(&bin, b"").unwrap();
        let err = Site::from_executable(&bin).unwrap_err().to_string();
        // In the library's terms; `rocm-sdk` adds its `--site-packages`.
        assert!(
            err.contains("run the `rocm-sdk` command that pip installed"),
            "{err}"
        );
        assert!(!err.contains("--site-packages"), "{err}");
        assert!(err.contains(BINARY_RELPATH), "{err}");
    }

    #[test]
    fn the_interpreter_comes_from_the_environment_layout() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("venv/lib/python3.12/site-packages");
        fs::create_dir_all(&sp).unwrap();
        // No interpreter beside it (a `--user` site): the same version from PATH.
        assert_eq!(Site::new(&sp).python(), PathBuf::from("python3.12"));
        let bin = dir.path().join("venv/bin");
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("python3"), b"").unwrap();
        assert_eq!(Site::new(&sp).python(), bin.join("python3"));
        fs::write(bin.join("python3.12"), b"").unwrap();
        assert_eq!(Site::new(&sp).python(), bin.join("python3.12"));
        // A `--target` directory says nothing about its interpreter.
        assert_eq!(
            Site::new(dir.path().join("target")).python(),
            PathBuf::from("python3")
        );
    }

    #[test]
    fn devel_missing_names_the_extra_with_the_version_pin() {
        let dir = tempfile::tempdir().unwrap();
        let err = Site::new(dir.path())
            .ensure_devel()
            .unwrap_err()
            .to_string();
        assert!(err.contains("rocm[devel]"), "{err}");
    }
}
