//! What `rocm-sdk init`, `path`, `version` and `targets` find, as values
//! another tool reads; serialised, each is its command's `--json` document
//! (docs/formats.md): every document carries `schema` [`COMMAND_SCHEMA`],
//! its keys sorted (the fields are declared in that order).

use std::path::PathBuf;

use devel_tar::{DevelWarning, EnsureReport, UnpackOptions, UnpackOutcome};
use dist_info::package::{PackageKind, TARGET_PLACEHOLDER};
use dist_info::requirement::Platform;
use serde::{Serialize, Serializer};

use crate::error::Error;
use crate::site::Site;
use crate::targets::read_dist_targets;

/// The `schema` of the `init`, `path`, `version` and `targets` documents.
pub const COMMAND_SCHEMA: u32 = 1;

/// The devel tree's paths (`rocm-sdk path`), after it was made ready.
///
/// Fields are in sorted order: the JSON keys are sorted (docs/formats.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DevelPaths {
    /// `<root>/bin`.
    pub bin: PathBuf,
    /// `<root>/lib/cmake`, for `CMAKE_PREFIX_PATH`.
    pub cmake: PathBuf,
    /// The devel tree root (`SP/_rocm_sdk_devel`).
    pub root: PathBuf,
    /// Always [`COMMAND_SCHEMA`].
    pub schema: u32,
    /// Conditions handled while making the tree ready.
    #[serde(serialize_with = "as_texts")]
    pub warnings: Vec<DevelWarning>,
}

/// The installation's shared-library directories, in the order the loader
/// should search them (`rocm-sdk path --library-path`,
/// docs/behaviour.md#library-path): those of the installed packages that
/// exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LibraryPath {
    /// The directories, first searched first.
    pub directories: Vec<PathBuf>,
    /// Always [`COMMAND_SCHEMA`].
    pub schema: u32,
}

/// What `rocm-sdk init` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitReport {
    /// Devel paths linked again to the runtime or device files an image
    /// layer or a reinstall had separated them from.
    pub relinked: usize,
    /// The devel tree root.
    pub root: PathBuf,
    /// Always [`COMMAND_SCHEMA`].
    pub schema: u32,
    /// What this call unpacked; `None` when the tree was already complete.
    pub unpacked: Option<Unpacked>,
    /// Conditions handled along the way, in order.
    #[serde(serialize_with = "as_texts")]
    pub warnings: Vec<DevelWarning>,
}

/// What an unpack wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Unpacked {
    /// Regular files written.
    pub files: usize,
    /// Files that became hard links to runtime or device files.
    pub hard_links: usize,
    /// Links kept as symlinks.
    pub symlinks: usize,
}

/// The installed release's version and its distributions (`rocm-sdk version`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionReport {
    /// Every installed ROCm distribution, sorted by `.dist-info` name.
    pub distributions: Vec<NameVersion>,
    /// Always [`COMMAND_SCHEMA`].
    pub schema: u32,
    /// The version of the installed `rocm` package: the release's, or a
    /// post-release `X.postN` of the selector over it (as
    /// `rocm_sdk.__version__`).
    pub version: String,
}

/// One installed distribution's name and version, as METADATA says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameVersion {
    /// The display name (`rocm-sdk-core`).
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The GPU targets the release was built for (`rocm-sdk targets`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetsReport {
    /// `dist_amdgpu_targets` as the file spells it.
    pub dist_amdgpu_targets: String,
    /// Always [`COMMAND_SCHEMA`].
    pub schema: u32,
    /// The targets it names, in order.
    pub targets: Vec<String>,
}

impl Site {
    /// Makes the devel tree ready (unpacking it on first use) and reports
    /// its paths: `rocm-sdk path`. Like the console scripts, it trusts a
    /// current links stamp instead of checking every link
    /// (docs/behaviour.md#warm-path); [`Site::init`] checks them all.
    pub fn devel_paths(&self) -> Result<DevelPaths, Error> {
        let options = UnpackOptions {
            trust_current_stamp: true,
            ..UnpackOptions::default()
        };
        let (root, report) = self.ensure_devel_with(&options)?;
        let warnings = report.warnings;
        Ok(DevelPaths {
            bin: root.join("bin"),
            cmake: root.join("lib").join("cmake"),
            root,
            schema: COMMAND_SCHEMA,
            warnings,
        })
    }

    /// Unpacks the devel tree if needed, links device and runtime files
    /// into it, and reports what was done: `rocm-sdk init`.
    pub fn init(&self, options: &UnpackOptions) -> Result<InitReport, Error> {
        let (root, report) = self.ensure_devel_with(options)?;
        Ok(InitReport::new(root, report))
    }

    /// The shared-library directories of this installation for the
    /// platform this program runs on (`rocm-sdk path --library-path`).
    /// Never unpacks the devel tree: the runtime packages hold every
    /// shared library.
    pub fn library_path(&self) -> Result<LibraryPath, Error> {
        let platform = if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Linux
        };
        let document = self.dist_info()?;
        let mut directories = Vec::new();
        for entry in &document.library_path {
            let Some(dir) = entry.dir(platform) else {
                continue;
            };
            let Some(record) = document
                .packages
                .iter()
                .find(|p| p.logical == entry.package)
            else {
                continue;
            };
            let Some(template) = record.platform_package_template.as_deref() else {
                continue;
            };
            // A target-specific package (legacy libraries): each installed
            // one, in name order. Found on disk, not in the document: with
            // several families every package ships one family's document.
            let packages: Vec<String> = match template.split_once(TARGET_PLACEHOLDER) {
                Some((prefix, suffix)) if record.target_specific => {
                    target_specific_dirs(self.root(), prefix, suffix)
                }
                _ => vec![template.to_owned()],
            };
            for package in packages {
                let path = dir
                    .split('/')
                    .fold(self.root().join(package), |p, part| p.join(part));
                if path.is_dir() && !directories.contains(&path) {
                    directories.push(path);
                }
            }
        }
        Ok(LibraryPath {
            directories,
            schema: COMMAND_SCHEMA,
        })
    }

    /// The `rocm` package's own version (`rocm_sdk.__version__`): its
    /// document's, a post-release's `X.postN` included; `document`'s
    /// version when the selector's document cannot be read.
    pub fn selector_version(&self, document: &dist_info::document::DistInfo) -> String {
        let selector = self
            .root()
            .join("rocm_sdk")
            .join(dist_info::document::FILE_NAME);
        crate::site::read_document(&selector).map_or_else(
            |_| document.selector.version.clone(),
            |doc| doc.selector.own_version().to_owned(),
        )
    }

    /// The release version and the installed distributions.
    pub fn version_report(&self) -> Result<VersionReport, Error> {
        let document = self.dist_info()?;
        let distributions = crate::distributions::installed(self.root(), &document)
            .map_err(|e| e.with_install_command(self.install_command()))?
            .into_iter()
            .map(|d| NameVersion {
                name: d.name,
                version: d.version,
            })
            .collect();
        Ok(VersionReport {
            distributions,
            schema: COMMAND_SCHEMA,
            version: self.selector_version(&document),
        })
    }

    /// The GPU targets the release was built for, from core's platform
    /// package.
    pub fn targets_report(&self) -> Result<TargetsReport, Error> {
        let document = self.dist_info()?;
        let core = self
            .platform_dir(&document, PackageKind::Core)
            .ok_or_else(|| Error::NoCorePackage {
                site_packages: self.root().to_path_buf(),
            })?;
        let targets =
            read_dist_targets(&core).map_err(|e| e.with_install_command(self.install_command()))?;
        Ok(TargetsReport {
            dist_amdgpu_targets: targets.raw,
            schema: COMMAND_SCHEMA,
            targets: targets.targets,
        })
    }
}

impl InitReport {
    fn new(root: PathBuf, report: EnsureReport) -> Self {
        let unpacked = match report.unpack.outcome {
            UnpackOutcome::AlreadyUnpacked => None,
            UnpackOutcome::Unpacked {
                files,
                hard_links,
                symlinks,
            } => Some(Unpacked {
                files,
                hard_links,
                symlinks,
            }),
        };
        Self {
            relinked: report.relinked + report.reconcile.linked_again,
            root,
            schema: COMMAND_SCHEMA,
            unpacked,
            warnings: report.warnings,
        }
    }
}

/// The directories of `site_packages` named `{prefix}{target}{suffix}`
/// for a non-empty target, sorted.
fn target_specific_dirs(
    site_packages: &std::path::Path,
    prefix: &str,
    suffix: &str,
) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(site_packages) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.len() > prefix.len() + suffix.len() && n.starts_with(prefix) && n.ends_with(suffix)
        })
        .collect();
    names.sort();
    names
}

/// Warnings as the text `rocm-sdk` prints for each.
fn as_texts<S: Serializer>(warnings: &[DevelWarning], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(warnings.iter().map(ToString::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document as `rocm-sdk` prints it (`cli_output::json`).
    fn to_json<T: Serialize>(report: &T) -> String {
        serde_json::to_string_pretty(report).unwrap() + "\n"
    }

    #[test]
    fn documents_keep_the_sorted_keys_of_their_schema() {
        let root = std::path::Path::new("/sp/_rocm_sdk_devel");
        let init = InitReport {
            relinked: 2,
            root: root.to_path_buf(),
            schema: COMMAND_SCHEMA,
            unpacked: Some(Unpacked {
                files: 3,
                hard_links: 1,
                symlinks: 0,
            }),
            warnings: Vec::new(),
        };
        insta::assert_snapshot!(to_json(&init), @r#"
        {
          "relinked": 2,
          "root": "/sp/_rocm_sdk_devel",
          "schema": 1,
          "unpacked": {
            "files": 3,
            "hard_links": 1,
            "symlinks": 0
          },
          "warnings": []
        }
        "#);
        let version = VersionReport {
            distributions: vec![NameVersion {
                name: "rocm-sdk-core".into(),
                version: "7.1.0".into(),
            }],
            schema: COMMAND_SCHEMA,
            version: "7.1.0".into(),
        };
        insta::assert_snapshot!(to_json(&version), @r#"
        {
          "distributions": [
            {
              "name": "rocm-sdk-core",
              "version": "7.1.0"
            }
          ],
          "schema": 1,
          "version": "7.1.0"
        }
        "#);
    }
}
