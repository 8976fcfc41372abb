//! The index files of a `dist/` that a build replaces packages in
//! (docs/pipeline.md, "Index files of an earlier build"): its pages
//! (`index.html`, `simple/`) and `.metadata` files describe the packages
//! it held, with their hashes and metadata, so carried over unchanged
//! beside new packages they would make pip refuse every package they
//! list. The build writes them again over the new `dist/`, in the layout
//! they had, before it publishes; when they cannot be written again it
//! refuses, naming them.

use std::fs;
use std::path::{Path, PathBuf};

use wheel_writer::dist_dir::is_staging;

use super::{IndexLayout, IndexOptions, index};
use crate::error::{IndexError, IoAction, IoError, PublishError, cannot};

/// The index files found in a `dist/`, and the layout they make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexFiles {
    /// What they are, relative to `dist/` (`index.html`, `simple/`,
    /// `gfx94X-dcgpu/index.html`, `rocm_sdk_core-….whl.metadata`), sorted.
    pub(crate) found: Vec<String>,
    /// The pages present: `None` when there are only `.metadata` files.
    layout: Option<IndexLayout>,
    /// Whether family subdirectories have pages of their own.
    per_family: bool,
}

/// The index files of `dist` (a build's staging directories aside), or
/// `None` when it has none.
pub(crate) fn find(dist: &Path) -> Result<Option<IndexFiles>, IoError> {
    let mut found = Vec::new();
    let (mut flat, mut simple, mut per_family) = (false, false, false);
    let Ok(entries) = fs::read_dir(dist) else {
        return Ok(None);
    };
    for entry in entries {
        let entry = entry.map_err(cannot(IoAction::List, dist))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(cannot(IoAction::Inspect, entry.path()))?;
        if kind.is_dir() && !is_staging(&name) {
            if name == "simple" {
                simple = true;
                found.push("simple/".to_owned());
                continue;
            }
            // A family directory of a legacy release: its own pages.
            let family = entry.path();
            if family.join("index.html").is_file() {
                flat = true;
                per_family = true;
                found.push(format!("{name}/index.html"));
            }
            if family.join("simple").is_dir() {
                simple = true;
                per_family = true;
                found.push(format!("{name}/simple/"));
            }
            for inner in fs::read_dir(&family)
                .map_err(cannot(IoAction::List, &family))?
                .flatten()
            {
                let inner = inner.file_name().to_string_lossy().into_owned();
                if inner.ends_with(".metadata") {
                    found.push(format!("{name}/{inner}"));
                }
            }
        } else if kind.is_file() && name == "index.html" {
            flat = true;
            found.push(name);
        } else if kind.is_file() && name.ends_with(".metadata") {
            found.push(name);
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    found.sort();
    let layout = match (flat, simple) {
        (true, true) => Some(IndexLayout::Both),
        (true, false) => Some(IndexLayout::Flat),
        (false, true) => Some(IndexLayout::Simple),
        (false, false) => None,
    };
    Ok(Some(IndexFiles {
        found,
        layout,
        per_family,
    }))
}

/// Writes the index files `files` (found in the `dist/` being replaced)
/// again over `new`, the staged `dist/` that holds the new packages and
/// the old ones carried over: the pages in their layout, the `.metadata`
/// file of every wheel. With `.metadata` files only, those of packages
/// no longer there go and the others are written again.
pub(crate) fn write_again(new: &Path, dist: &Path, files: &IndexFiles) -> Result<(), PublishError> {
    let refused = |source: IndexError| PublishError::StaleIndex {
        dist: dist.to_owned(),
        files: files.found.clone(),
        source: Box::new(source),
    };
    let Some(layout) = files.layout else {
        return metadata_only(new, files).map_err(refused);
    };
    let report = index(&IndexOptions {
        dir: new.to_owned(),
        layout,
        per_family: files.per_family,
    })
    .map_err(refused)?;
    tracing::info!(
        "{}: wrote its index again ({} pages, {} .metadata files): the packages they list changed",
        dist.display(),
        report.pages.len(),
        report.metadata_files.len()
    );
    Ok(())
}

/// `.metadata` files without pages: each is written again from its
/// wheel, or removed when its package is gone.
fn metadata_only(new: &Path, files: &IndexFiles) -> Result<(), IndexError> {
    for rel in &files.found {
        let path = new.join(rel);
        let package: PathBuf = path.with_extension("");
        if !package.is_file() {
            fs::remove_file(&path).map_err(cannot(IoAction::Remove, &path))?;
            tracing::info!("{rel}: removed: it described a package no longer there");
            continue;
        }
        let rel_package = rel.strip_suffix(".metadata").unwrap_or(rel).to_owned();
        let dist = super::distribution::Distribution::read(&package, rel_package)?;
        match &dist.core_metadata {
            Some(bytes) => fs_helpers::atomic_write::write_atomic(&path, bytes)
                .map_err(cannot(IoAction::Write, &path))?,
            None => fs::remove_file(&path).map_err(cannot(IoAction::Remove, &path))?,
        }
    }
    Ok(())
}
