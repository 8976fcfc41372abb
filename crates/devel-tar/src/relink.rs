//! Runtime links that survive image layers (docs/devel-tar.md#runtime-links).
//!
//! The unpack makes every devel path whose tar link resolves to a runtime
//! package's file a hard link of that file, so a process that reaches a
//! library through both paths maps it once. An overlayfs copy-up, a
//! `docker commit`, a copy of site-packages or `pip install
//! --force-reinstall` of a runtime package turns the two paths into two
//! files, and such a process then maps two copies (LLVM aborts:
//! "registered more than once"). The unpack therefore records the pairs in
//! `_rocm_sdk_devel{N}/.runtime-links.json`; [`runtime_links`] lists them
//! (with the device links the reconcile made) and judges each one,
//! `rocm-sdk test` reports the separated ones, and [`repair_runtime_links`]
//! (called by [`crate::ensure`], so by `rocm-sdk init`) links them again.

use std::fs;
use std::path::Path;

use dist_info::devel_tree::TreeNames;
use pypa_formats::member::check_relpath;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::lock::SiteLock;
use crate::site::InstalledDevel;
use crate::warning::DevelWarning;

/// The unpack's record of its runtime links, relative to the tree. Listed
/// in the devel RECORD.
pub const RUNTIME_LINKS: &str = ".runtime-links.json";
/// The fixed temporary name a repair links through before renaming over
/// the separated copy (listed in RECORD too; the lock makes it safe).
const RELINK_TMP: &str = ".runtime-link.tmp";

/// The document's schema.
const SCHEMA: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    schema: u32,
    /// `[devel path, runtime file]`, site-packages-relative, sorted.
    links: Vec<(String, String)>,
}

/// The files of the devel tree this module writes; the unpack lists them in
/// the devel RECORD.
pub(crate) fn devel_owned_files(names: &TreeNames) -> Vec<String> {
    vec![names.in_tree(RUNTIME_LINKS), names.in_tree(RELINK_TMP)]
}

/// Writes the record of the unpack's runtime links: every `(link, source)`
/// whose source lies outside the tree.
pub(crate) fn write_record(
    root: &Path,
    names: &TreeNames,
    hard_links: &[(String, String)],
) -> Result<(), Error> {
    let document = Document {
        schema: SCHEMA,
        links: hard_links
            .iter()
            .filter(|(_, source)| !names.contains(source))
            .cloned()
            .collect(),
    };
    let path = root.join(names.in_tree(RUNTIME_LINKS));
    let text = serde_json::to_string_pretty(&document).expect("plain data serialises") + "\n";
    fs::write(&path, text).map_err(|e| Error::io("write", &path, e))
}

/// A devel path that should be the same file as a runtime file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeLink {
    /// The devel path, relative to site-packages.
    pub link: String,
    /// The runtime package's file, relative to site-packages.
    pub source: String,
    /// How the pair stands now.
    pub state: LinkState,
}

/// Whether a devel path and its runtime file are one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// One file (same device and inode, or Windows file index).
    Same,
    /// Two files: the devel path is a copy of its own.
    Separate,
    /// The devel path is gone.
    LinkMissing,
    /// The runtime file is gone (its package was uninstalled): the devel
    /// path keeps the last copy, nothing to link to.
    SourceMissing,
}

/// Every runtime link of the unpacked devel tree in `site_packages` (the
/// unpack's and the device wheels'), sorted by link, each judged on disk.
/// `None` when the tree was unpacked by a release that kept no record.
pub fn runtime_links(site_packages: &Path) -> Result<Option<Vec<RuntimeLink>>, Error> {
    let site = InstalledDevel::open(site_packages)?;
    let Some(mut pairs) = read_record(&site)? else {
        return Ok(None);
    };
    pairs.extend(crate::reconcile::device_link_pairs(
        site_packages,
        &site.names,
    ));
    pairs.sort();
    pairs.dedup();
    Ok(Some(
        pairs
            .into_iter()
            .map(|(link, source)| {
                let state = state_of(site_packages, &link, &source);
                RuntimeLink {
                    link,
                    source,
                    state,
                }
            })
            .collect(),
    ))
}

fn state_of(root: &Path, link: &str, source: &str) -> LinkState {
    let (link_path, source_path) = (root.join(link), root.join(source));
    match (
        fs::symlink_metadata(&link_path),
        fs::symlink_metadata(&source_path),
    ) {
        (_, Err(_)) => LinkState::SourceMissing,
        (Err(_), _) => LinkState::LinkMissing,
        (Ok(l), Ok(s)) if fs_helpers::file_id::same_entry(&link_path, &l, &source_path, &s) => {
            LinkState::Same
        }
        (Ok(_), Ok(_)) => LinkState::Separate,
    }
}

/// The unpack's pairs; each one checked as hostile input: the link a clean
/// path inside the tree, the source a clean path outside it.
fn read_record(site: &InstalledDevel) -> Result<Option<Vec<(String, String)>>, Error> {
    let path = site.root.join(site.names.in_tree(RUNTIME_LINKS));
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::read("read", &path, e)),
    };
    let invalid = |reason: String| Error::InvalidRuntimeLinks {
        path: path.clone(),
        reason,
    };
    let document: Document = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    if document.schema != SCHEMA {
        return Err(invalid(format!(
            "schema {} (this rocm-sdk reads {SCHEMA})",
            document.schema
        )));
    }
    for (link, source) in &document.links {
        let inside = site
            .names
            .relpath(link)
            .is_some_and(|rel| check_relpath(rel).is_ok());
        if !inside || check_relpath(source).is_err() || site.names.contains(source) {
            return Err(invalid(format!(
                "the pair {link:?} -> {source:?} is not a devel path and a file outside the \
                 devel tree"
            )));
        }
    }
    Ok(Some(document.links))
}

/// Links every separated or missing devel path of the unpack's record to
/// its runtime file again (a hard link made under a temporary name, then
/// renamed over the copy, so the path never goes missing); device links
/// are the reconcile's. Returns how many were linked, and a warning for
/// each that the file system refused to hard-link (left as it was).
pub fn repair_runtime_links(site_packages: &Path) -> Result<(usize, Vec<DevelWarning>), Error> {
    let site = InstalledDevel::open(site_packages)?;
    if site.tar().is_some() || !site.tree().is_dir() {
        return Ok((0, Vec::new()));
    }
    let Some(pairs) = read_record(&site)? else {
        return Ok((0, Vec::new()));
    };
    let broken = |pairs: &[(String, String)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .filter(|(link, source)| {
                matches!(
                    state_of(site_packages, link, source),
                    LinkState::Separate | LinkState::LinkMissing
                )
            })
            .cloned()
            .collect()
    };
    if broken(&pairs).is_empty() {
        return Ok((0, Vec::new()));
    }
    let _lock = SiteLock::acquire(&site.package_dir())?;
    let tmp = site_packages.join(site.names.in_tree(RELINK_TMP));
    let mut linked = 0;
    let mut warnings = Vec::new();
    for (link, source) in broken(&pairs) {
        let link_path = site_packages.join(&link);
        if !parents_are_directories(site_packages, site.names.root(), &link) {
            return Err(Error::InvalidRuntimeLinks {
                path: site_packages.join(site.names.in_tree(RUNTIME_LINKS)),
                reason: format!("a parent of {link} is not a directory of the devel tree"),
            });
        }
        let _ = fs::remove_file(&tmp);
        if let Err(e) = fs::hard_link(site_packages.join(&source), &tmp) {
            warnings.push(DevelWarning::Copied {
                path: link,
                reason: e.to_string(),
            });
            continue;
        }
        fs::rename(&tmp, &link_path).map_err(|e| Error::io("replace", &link_path, e))?;
        linked += 1;
    }
    tracing::info!(linked, "linked devel paths to their runtime files again");
    Ok((linked, warnings))
}

/// Every directory between the tree's root and `link` is a real directory,
/// not a link that would lead the rename elsewhere.
fn parents_are_directories(root: &Path, tree: &str, link: &str) -> bool {
    let mut dir = root.join(tree);
    let rel = link
        .strip_prefix(tree)
        .unwrap_or(link)
        .trim_start_matches('/');
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    for part in parts {
        dir.push(part);
        if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}
