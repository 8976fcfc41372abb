//! `post-release`: a new `rocm` selector sdist `X.postN` over a release
//! `X` that is already published (docs/releasing.md, "Post-releases of
//! the selector"). Only the selector changes: it carries this build's
//! Python code and the release's own `_dist_info.json`, which keeps every
//! requirement pinned to `X`, with `selector_version` set to `X.postN`.
//! The release's packages are read, never written.

use std::path::PathBuf;

use dist_info::document::{DistInfo, FILE_NAME};
use dist_info::library_path::library_path;
use pypa_formats::filename::{SdistFilename, WheelFilename};
use pypa_formats::version::{Version, is_release_or_post_release};
use serde::Serialize;
use wheel_writer::WriteOptions;
use wheel_writer::dist_dir::list_packages;

use crate::build_cmd::read_project_metadata;
use crate::error::{IoAction, PostReleaseError, cannot};
use crate::execute::write_sdist;

/// What `post-release` is asked to do. Every field but
/// `source_date_epoch` is a value without a default, so the type has none.
#[derive(Debug, Clone)]
pub struct PostReleaseOptions {
    /// The `dist/` directory of the published release `X` (its wheels and
    /// its `rocm` sdist or sdists, as `build` or `assemble` wrote them).
    pub dist_dir: PathBuf,
    /// The post-release's version, `X.postN`.
    pub version: Version,
    /// The TOML metadata file of the release (as
    /// [`PlanOptions::metadata`](crate::PlanOptions::metadata)), for the
    /// sdist's `Summary`, `License-Expression` and `Project-URL`.
    pub metadata: Option<PathBuf>,
    /// The timestamp of every archive member, in seconds since the epoch
    /// (as [`BuildOptions::source_date_epoch`](crate::BuildOptions::source_date_epoch)).
    pub source_date_epoch: Option<u64>,
}

/// What `post-release` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PostReleaseReport {
    /// The report format (1).
    pub schema: u32,
    /// The release the selector is published over (`X`).
    pub release: String,
    /// The selector's version (`X.postN`).
    pub version: String,
    /// The sdists written, one beside each `rocm` sdist of the release.
    pub written: Vec<PathBuf>,
}

/// Writes `rocm-{X.postN}.tar.gz` beside every `rocm-{X}.tar.gz` of the
/// release in `options.dist_dir` (legacy releases with several families
/// have one per family in `dist/{F}/`).
///
/// `X` is the version of the release's `rocm-sdk-core` wheels. Refused:
/// a version that is not a post-release of `X` (`X.1`, another `.dev`),
/// a directory without a core wheel or without `rocm-{X}.tar.gz`, and an
/// existing `rocm-{X.postN}.tar.gz` (nothing is overwritten). Each sdist
/// appears atomically.
pub fn post_release(options: &PostReleaseOptions) -> Result<PostReleaseReport, PostReleaseError> {
    let dist = &options.dist_dir;
    let version = options.version.to_string();
    let listing = list_packages(dist).map_err(cannot(IoAction::List, dist))?;
    let mut release: Option<String> = None;
    let mut selectors = Vec::new();
    for path in &listing.packages {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Ok(wheel) = name.parse::<WheelFilename>() {
            if wheel.name.normalized() == "rocm-sdk-core" {
                let found = wheel.version.to_string();
                match &release {
                    Some(first) if *first != found => {
                        return Err(PostReleaseError::Mixed {
                            dist_dir: dist.clone(),
                            first: first.clone(),
                            second: found,
                        });
                    }
                    _ => release = Some(found),
                }
            }
        } else if let Ok(sdist) = name.parse::<SdistFilename>()
            && sdist.name.normalized() == "rocm"
        {
            selectors.push((path.clone(), sdist.version.to_string()));
        }
    }
    let release = release.ok_or_else(|| PostReleaseError::NoCore {
        dist_dir: dist.clone(),
    })?;
    if version == release || !is_release_or_post_release(&version, &release) {
        return Err(PostReleaseError::NotAPostRelease { version, release });
    }
    let bases: Vec<&PathBuf> = selectors
        .iter()
        .filter(|(_, v)| *v == release)
        .map(|(p, _)| p)
        .collect();
    if bases.is_empty() {
        return Err(PostReleaseError::NoSelector {
            dist_dir: dist.clone(),
            release,
        });
    }
    let metadata = match &options.metadata {
        Some(path) => read_project_metadata(path)?,
        None => dist_info::project_metadata::ProjectMetadata::default(),
    };
    let write = WriteOptions::default().with_source_date_epoch(options.source_date_epoch);
    let files = crate::python::sdist_files();
    // Read and check every selector first, so a bad one writes nothing.
    let mut planned = Vec::new();
    for base in bases {
        let dir = base.parent().unwrap_or(dist).to_path_buf();
        let target = dir.join(format!("rocm-{version}.tar.gz"));
        if target.exists() {
            return Err(PostReleaseError::Exists { path: target });
        }
        let member = format!("rocm_sdk/{FILE_NAME}");
        let bytes = release_check::sdist_file(base, &member)?;
        let mut document =
            DistInfo::from_json(&bytes).map_err(|source| PostReleaseError::Document {
                path: base.clone(),
                source,
            })?;
        if document.selector.version != release || document.selector.selector_version.is_some() {
            return Err(PostReleaseError::DocumentVersion {
                path: base.clone(),
                found: document.selector.own_version().to_owned(),
                release: release.clone(),
            });
        }
        document.selector.selector_version = Some(version.clone());
        if document.library_path.is_empty() {
            // Written before the document had it: the model's.
            document.library_path = library_path();
        }
        planned.push((dir, document.to_json()));
    }
    let mut written = Vec::new();
    for (dir, document) in planned {
        written.push(write_sdist(
            &version, &metadata, &document, &files, &dir, &write,
        )?);
    }
    Ok(PostReleaseReport {
        schema: 1,
        release,
        version,
        written,
    })
}
