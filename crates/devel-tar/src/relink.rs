//! Runtime links that survive image layers (docs/devel-tar.md#runtime-links).
//!
//! The unpack makes every devel path whose tar link resolves to a runtime
//! package's file a hard link of that file, so a process that reaches a
//! library through both paths maps it once. An overlayfs copy-up, a
//! `docker commit`, a copy of site-packages or `pip install
//! --force-reinstall` of a runtime package turns the two paths into two
//! files, and such a process then maps two copies (LLVM aborts:
//! "registered more than once"). The unpack therefore records the pairs in
//! `_rocm_sdk_devel{N}/.runtime-links.json` (`dist_info::devel_state`);
//! [`runtime_links`] lists them (with the device links the reconcile made)
//! and judges each one, `rocm-sdk test` reports the separated ones, and
//! [`repair_runtime_links`] (called by [`crate::ensure`], so by `rocm-sdk
//! init`) links them again.
//!
//! The record is read back as untrusted input: a pair is mended only when
//! the devel distribution's RECORD lists its devel path and a runtime
//! distribution's RECORD its file, and the file is a regular file reached
//! inside its runtime package without a link (docs/devel-tar.md#confinement).

use std::collections::HashMap;
use std::io;
use std::path::Path;

use dist_info::devel_state::{DOCUMENT_LIMIT, RUNTIME_LINKS as RECORD_NAME, RuntimeLinks};
use dist_info::devel_tree::TreeNames;
use fs_helpers::confined::{self, Cursor, Dir, EntryKind};

use crate::error::Error;
use crate::lock::SiteLock;
use crate::site::InstalledDevel;
use crate::warning::DevelWarning;

/// The unpack's record of its runtime links, relative to the tree. Listed
/// in the devel RECORD.
pub const RUNTIME_LINKS: &str = RECORD_NAME;

/// What a repair's temporary link is named after
/// (`confined::temporary_name`): it is linked under an unpredictable name
/// in the tree's root, then renamed over the separated copy.
pub(crate) const RELINK_TEMPORARY: &str = ".runtime-link";

/// The files of the devel tree this module writes; the unpack lists them in
/// the devel RECORD.
pub(crate) fn devel_owned_files(names: &TreeNames) -> Vec<String> {
    vec![names.in_tree(RUNTIME_LINKS)]
}

/// Writes the record of the unpack's runtime links into the tree: every
/// `(link, source)` whose source lies outside the tree.
pub(crate) fn write_record(
    tree: &Dir,
    names: &TreeNames,
    hard_links: &[(String, String)],
) -> Result<(), Error> {
    let document = RuntimeLinks::new(
        hard_links
            .iter()
            .filter(|(_, source)| !names.contains(source))
            .cloned()
            .collect(),
    );
    tree.replace(RUNTIME_LINKS, document.to_json().as_bytes())
        .map_err(|e| Error::io("write", tree.display_path(RUNTIME_LINKS), e))
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
    pairs.extend(crate::reconcile::device_link_pairs(&site.sp, &site.names));
    pairs.sort();
    pairs.dedup();
    let mut judge = Judge::new(&site.sp);
    pairs
        .into_iter()
        .map(|(link, source)| {
            let state = judge.state(&site, &link, &source)?;
            Ok(RuntimeLink {
                link,
                source,
                state,
            })
        })
        .collect::<Result<_, Error>>()
        .map(Some)
}

/// Judges pairs on disk, looking at each side through site-packages'
/// handle without following a link.
struct Judge<'d> {
    links: Cursor<'d>,
    sources: Cursor<'d>,
}

impl<'d> Judge<'d> {
    fn new(sp: &'d Dir) -> Self {
        Self {
            links: sp.cursor(),
            sources: sp.cursor(),
        }
    }

    fn state(
        &mut self,
        site: &InstalledDevel,
        link: &str,
        source: &str,
    ) -> Result<LinkState, Error> {
        let record = || site.root.join(site.names.in_tree(RUNTIME_LINKS));
        let link_entry = self
            .links
            .entry(link)
            .map_err(|e| Error::read("inspect", site.root.join(link), e).named_by(&record()))?;
        let source_entry = self
            .sources
            .entry(source)
            .map_err(|e| Error::read("inspect", site.root.join(source), e).named_by(&record()))?;
        Ok(match (link_entry, source_entry) {
            (_, None) => LinkState::SourceMissing,
            (None, _) => LinkState::LinkMissing,
            (Some(l), Some(s)) if l.kind == EntryKind::File && l.id == s.id => LinkState::Same,
            (Some(_), Some(_)) => LinkState::Separate,
        })
    }
}

/// The unpack's pairs, checked as hostile input
/// (`RuntimeLinks::from_json`): the link a clean path inside the tree, the
/// source a clean path inside a runtime package of the release.
fn read_record(site: &InstalledDevel) -> Result<Option<Vec<(String, String)>>, Error> {
    let rel = site.names.in_tree(RUNTIME_LINKS);
    let path = site.root.join(&rel);
    let bytes = match site.sp.read(&rel, DOCUMENT_LIMIT) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::read("read", &path, e)),
    };
    let document =
        RuntimeLinks::from_json(&bytes, &site.names).map_err(|e| Error::InvalidRuntimeLinks {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    Ok(Some(document.links))
}

/// Links every separated or missing devel path of the unpack's record to
/// its runtime file again (a hard link made under an unpredictable
/// temporary name, then renamed over the copy, so the path never goes
/// missing); device links are the reconcile's. Returns how many were
/// linked, and a warning for each that the file system refused to
/// hard-link (left as it was).
pub fn repair_runtime_links(site_packages: &Path) -> Result<(usize, Vec<DevelWarning>), Error> {
    let site = InstalledDevel::open(site_packages)?;
    if site.tar()?.is_some() || !site.tree_exists() {
        return Ok((0, Vec::new()));
    }
    let Some(pairs) = read_record(&site)? else {
        return Ok((0, Vec::new()));
    };
    let broken = |pairs: &[(String, String)]| -> Result<Vec<(String, String)>, Error> {
        let mut judge = Judge::new(&site.sp);
        let mut broken = Vec::new();
        for (link, source) in pairs {
            if matches!(
                judge.state(&site, link, source)?,
                LinkState::Separate | LinkState::LinkMissing
            ) {
                broken.push((link.clone(), source.clone()));
            }
        }
        Ok(broken)
    };
    if broken(&pairs)?.is_empty() {
        return Ok((0, Vec::new()));
    }
    let _lock = SiteLock::acquire(&site)?;
    site.check_owner()?;
    let broken = broken(&pairs)?;
    if broken.is_empty() {
        return Ok((0, Vec::new()));
    }
    let record_path = site.root.join(site.names.in_tree(RUNTIME_LINKS));
    let invalid = |reason: String| Error::InvalidRuntimeLinks {
        path: record_path.clone(),
        reason,
    };
    // Each pair must be what the distributions installed: the link a path
    // of the devel distribution, the file one of a runtime distribution.
    let devel_paths = site.recorded_paths()?;
    let runtime_paths = site.runtime_recorded_paths()?;
    let tree = site.tree()?;
    let record = site.record()?;
    crate::temporary::remove_stale(&site, &record, &tree)?;
    let mut roots: HashMap<String, Dir> = HashMap::new();
    let mut to = tree.cursor();
    let mut linked = 0;
    let mut warnings = Vec::new();
    for (link, source) in broken {
        if !devel_paths.contains(&link) {
            return Err(invalid(format!(
                "{link} is not a path rocm-sdk-devel's RECORD lists"
            )));
        }
        if !runtime_paths.contains(&source) {
            return Err(invalid(format!(
                "{source} is not a file a runtime distribution's RECORD lists"
            )));
        }
        let rel = site.names.relpath(&link).expect("checked by the reader");
        let link_path = tree.display_path(rel);
        match to
            .entry(rel)
            .map_err(|e| Error::read("inspect", &link_path, e).named_by(&record_path))?
        {
            None => {}
            Some(e) if e.kind == EntryKind::File => {}
            Some(_) => {
                return Err(invalid(format!(
                    "{link} is a directory or a link of the devel tree, not a file"
                )));
            }
        }
        let (package, inside) = source.split_once('/').expect("checked by the reader");
        let root = match roots.entry(package.to_owned()) {
            std::collections::hash_map::Entry::Occupied(root) => root.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let dir = site.sp.open_dir(package).map_err(|e| {
                    Error::read("open", site.root.join(package), e).named_by(&record_path)
                })?;
                slot.insert(dir)
            }
        };
        let mut from = root.cursor();
        let relinked =
            crate::temporary::with_recorded(&site, &record, RELINK_TEMPORARY, |temporary| {
                match to.hard_link_from(&mut from, inside, temporary) {
                    Ok(()) => {}
                    Err(e) if confined::refusal(&e).is_some() => {
                        return Err(Error::io("hard-link", site.root.join(&source), e)
                            .named_by(&record_path));
                    }
                    Err(e) => return Ok(Some(e.to_string())),
                }
                to.rename(temporary, rel).map(|()| None).map_err(|e| {
                    let _ = to.remove_file(temporary);
                    Error::io("replace", &link_path, e)
                })
            })?;
        if let Some(reason) = relinked {
            warnings.push(DevelWarning::Copied { path: link, reason });
            continue;
        }
        linked += 1;
    }
    tracing::info!(linked, "linked devel paths to their runtime files again");
    Ok((linked, warnings))
}
