//! Discovering the artifacts of an artifact directory and indexing them.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::artifact::Artifact;
use crate::manifest::MANIFEST_FILE;
use crate::therock::{BASE_ARTIFACT, DIST_INFO_PATH, THEROCK_MANIFEST_PATH, expected_path};
use crate::{
    ArchiveFormat, ArtifactFilter, ArtifactName, Catalog, Error, PathFilter, Result,
    TheRockManifest,
};
use dist_info::dist_targets::DistTargets;

/// Something in the artifact directory that was skipped (logged, never fatal).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Notice {
    /// A file or directory whose name is not `{name}_{component}_{target}`
    /// (or `.tar.zst`/`.tar.xz` of it).
    NotAnArtifact {
        /// Its file name.
        file_name: String,
    },
    /// An artifact directory without `artifact_manifest.txt`.
    NoManifest {
        /// The artifact directory's name.
        artifact: String,
    },
    /// The same artifact exists twice (directory and archive, or two
    /// archives); the preferred one (directory, then `.tar.zst`) is read.
    Superseded {
        /// The file name skipped.
        file_name: String,
        /// The file name read instead.
        by: String,
    },
    /// A manifest line whose base directory does not exist.
    MissingBaseDir {
        /// The artifact.
        artifact: String,
        /// The manifest line.
        line: String,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnArtifact { file_name } => {
                write!(
                    f,
                    "ignored {file_name}: not named {{name}}_{{component}}_{{target}}"
                )
            }
            Self::NoManifest { artifact } => write!(f, "ignored {artifact}: no {MANIFEST_FILE}"),
            Self::Superseded { file_name, by } => {
                write!(f, "ignored {file_name}: {by} is the same artifact")
            }
            Self::MissingBaseDir { artifact, line } => {
                write!(
                    f,
                    "skipped manifest line {line:?} of {artifact}: no such directory"
                )
            }
        }
    }
}

/// An artifact directory, with every (selected) artifact indexed.
///
/// ```no_run
/// # fn main() -> Result<(), artifacts::Error> {
/// use artifacts::{ArtifactDir, ArtifactFilter, PathFilter};
/// let dir = ArtifactDir::open("build/artifacts".as_ref())?;
/// let mode = dir.therock_manifest()?.mode;
/// let core = dir.catalog(&ArtifactFilter::new().components(["lib", "run"]), &PathFilter::new().exclude("**/cmake/**"))?;
/// for entry in core.entries() {
///     println!("{} {:?}", entry.relpath(), entry.kind());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ArtifactDir {
    pub(crate) path: PathBuf,
    pub(crate) artifacts: Vec<Artifact>,
    pub(crate) notices: Vec<Notice>,
}

enum Found {
    Dir(PathBuf),
    Archive(PathBuf, ArchiveFormat),
}

impl ArtifactDir {
    /// Discovers and indexes every artifact in `path`.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_filtered(path, &ArtifactFilter::new())
    }

    /// Discovers the artifacts in `path` and indexes those the filter takes
    /// (in parallel; archives are decompressed once each).
    pub fn open_filtered(path: &Path, filter: &ArtifactFilter) -> Result<Self> {
        Self::discover(path, filter, None)
    }

    /// Discovers and indexes; with `extract`, archives' file members are
    /// written below it while they are indexed (`open_extracting`).
    pub(crate) fn discover(
        path: &Path,
        filter: &ArtifactFilter,
        extract: Option<&Path>,
    ) -> Result<Self> {
        let meta = fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotADirectory {
                path: path.to_path_buf(),
            },
            _ => Error::io(path, e),
        })?;
        if !meta.is_dir() {
            return Err(Error::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        let mut notices = Vec::new();
        let mut found: BTreeMap<ArtifactName, Vec<(String, Found)>> = BTreeMap::new();
        let mut names: Vec<(String, PathBuf)> = Vec::new();
        for child in fs::read_dir(path).map_err(|e| Error::io(path, e))? {
            let child = child.map_err(|e| Error::io(path, e))?;
            let file_name = child.file_name().to_string_lossy().into_owned();
            names.push((file_name, child.path()));
        }
        names.sort();
        for (file_name, child) in names {
            let is_dir = fs::metadata(&child)
                .map_err(|e| Error::io(&child, e))?
                .is_dir();
            let parsed = if is_dir {
                ArtifactName::parse(&file_name).map(|n| (n, Found::Dir(child.clone())))
            } else {
                ArtifactName::parse_archive(&file_name)
                    .map(|(n, f)| (n, Found::Archive(child.clone(), f)))
            };
            let Some((name, what)) = parsed.filter(|_| child.to_str().is_some()) else {
                notices.push(Notice::NotAnArtifact { file_name });
                continue;
            };
            if let Found::Dir(d) = &what
                && !crate::scan_dir::has_manifest(&d.join(MANIFEST_FILE))?
            {
                notices.push(Notice::NoManifest {
                    artifact: file_name,
                });
                continue;
            }
            found.entry(name).or_default().push((file_name, what));
        }

        if found.is_empty() {
            return Err(no_artifacts(path));
        }
        let mut chosen = Vec::new();
        for (name, mut candidates) in found {
            // Directory first, then .tar.zst, then .tar.xz.
            candidates.sort_by_key(|(_, f)| match f {
                Found::Dir(_) => 0,
                Found::Archive(_, ArchiveFormat::TarZst) => 1,
                Found::Archive(_, ArchiveFormat::TarXz) => 2,
            });
            let mut it = candidates.into_iter();
            let (by, what) = it.next().expect("at least one candidate per name");
            for (file_name, _) in it {
                notices.push(Notice::Superseded {
                    file_name,
                    by: by.clone(),
                });
            }
            if filter.matches(&name) {
                chosen.push((name, what));
            }
        }

        let indexed: Vec<Result<Artifact>> = chosen
            .into_par_iter()
            .map(|(name, what)| match what {
                Found::Dir(d) => crate::scan_dir::index_dir(name, &d),
                Found::Archive(p, format) => {
                    crate::archive::index_archive(name, p, format, extract)
                }
            })
            .collect();
        let artifacts = indexed.into_iter().collect::<Result<Vec<_>>>()?;
        for a in &artifacts {
            for line in a.missing_prefixes() {
                notices.push(Notice::MissingBaseDir {
                    artifact: a.name().to_string(),
                    line: line.clone(),
                });
            }
        }
        notices.sort();
        for n in &notices {
            tracing::info!("{n}");
        }
        Ok(Self {
            path: path.to_path_buf(),
            artifacts,
            notices,
        })
    }

    /// The artifact directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The indexed artifacts, sorted by name.
    pub fn artifacts(&self) -> &[Artifact] {
        &self.artifacts
    }

    /// The artifact with this full name (`base_lib_generic`), if indexed.
    pub fn artifact(&self, full_name: &str) -> Option<&Artifact> {
        self.artifacts
            .iter()
            .find(|a| a.name().to_string() == full_name)
    }

    /// What was skipped while discovering, sorted.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Merges the artifacts the filter takes into a catalog of the relpaths
    /// the path filter takes (symlinks are resolved in the whole merged tree
    /// of those artifacts, before the path filter).
    pub fn catalog(&self, artifacts: &ArtifactFilter, paths: &PathFilter) -> Result<Catalog> {
        let selected: Vec<&Artifact> = self
            .artifacts
            .iter()
            .filter(|a| artifacts.matches(a.name()))
            .collect();
        crate::catalog::build(&selected, paths)
    }

    /// Reads `therock_manifest.json` from `base_lib_generic` (directory or
    /// archive); a missing file is an error naming where it was expected.
    pub fn therock_manifest(&self) -> Result<TheRockManifest> {
        let (bytes, origin) = self.read_base_file(
            THEROCK_MANIFEST_PATH,
            "therock_manifest.json records the build flags; pass the artifact directory of a complete TheRock build",
        )?;
        TheRockManifest::parse(&bytes, &origin)
    }

    /// Reads `share/therock/dist_info.json` from `base_lib_generic`, with
    /// the reader the install side uses ([`DistTargets::parse`]).
    pub fn dist_info(&self) -> Result<DistTargets> {
        let (bytes, origin) = self.read_base_file(
            DIST_INFO_PATH,
            "dist_info.json lists the build's GPU targets; pass the artifact directory of a complete TheRock build",
        )?;
        DistTargets::parse(&bytes).map_err(|source| Error::DistTargets {
            path: origin,
            source,
        })
    }

    fn read_base_file(
        &self,
        path_in_artifact: &str,
        hint: &'static str,
    ) -> Result<(Vec<u8>, PathBuf)> {
        let missing = || Error::MissingFile {
            path: expected_path(&self.path, path_in_artifact),
            hint,
        };
        let base = self.artifact(BASE_ARTIFACT).ok_or_else(missing)?;
        let member = base.find(path_in_artifact).ok_or_else(missing)?;
        let source = member.source.as_ref().ok_or_else(missing)?;
        Ok((source.read_to_vec()?, base.display_path(path_in_artifact)))
    }
}

/// The error for a directory without artifacts; when the directory is
/// itself an artifact (its name parses and it holds a manifest), its
/// parent is what was meant.
fn no_artifacts(path: &Path) -> Error {
    let itself = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(ArtifactName::parse)
        .filter(|_| path.join(MANIFEST_FILE).is_file());
    let parent = path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    let remedy = match (itself, parent) {
        (Some(name), Some(parent)) => format!(
            "{} is itself the artifact {name}; pass its parent {}",
            path.display(),
            parent.display()
        ),
        _ => "pass the directory TheRock's build wrote its artifacts into".to_owned(),
    };
    Error::NoArtifacts {
        path: path.to_path_buf(),
        remedy,
    }
}
