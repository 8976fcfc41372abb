//! Device-link reconcile (docs/behaviour.md#device-reconcile): the files of every installed device
//! wheel of our version are hard-linked into the devel tree and recorded in
//! *that* wheel's RECORD; links of device wheels that are gone are removed;
//! the stamp (see `stamp.rs`) is written by the caller once the runtime
//! links are mended too. A fast path only lists site-packages and stats the
//! links when nothing changed.
//!
//! Confinement (docs/devel-tar.md#confinement): every write goes through
//! the tree's handle, every device file is reached through the libraries
//! package's, neither follows a link; a links document is used only when
//! it is the one its device wheel's RECORD lists (sha256), each link only
//! when its file is in that RECORD; the state is read back as untrusted
//! (`dist_info::devel_state`): a state that does not hold up is ignored,
//! with a warning, and written anew.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use dist_info::devel_links::{DevelLinks, DevelLinksError, devel_link_target};
use dist_info::devel_state::{DEVICE_LINKS_STATE, DOCUMENT_LIMIT, DeviceLinks, DeviceLinksState};
use fs_helpers::confined::{self, Cursor, Dir, EntryKind};
use fs_helpers::error_chain::Chain;
use pypa_formats::installer::InstallCommand;
use pypa_formats::record::RecordEntry;
use sha2::{Digest as _, Sha256};

use crate::error::Error;
use crate::lock::SiteLock;
use crate::record::RecordFile;
use crate::site::{InstalledDevel, check_owner, device_dist_infos, dist_version, open_dir};
use crate::stamp::{DEVICE_LINKS_STAMP, stamp_is_current, write_stamp};
use crate::temporary;
use crate::tree_names::TreeNames;
use crate::warning::DevelWarning;

/// The files of the devel tree that reconcile writes; the unpack records
/// them in the devel RECORD.
pub(crate) fn devel_owned_files(names: &TreeNames) -> Vec<String> {
    [DEVICE_LINKS_STAMP, DEVICE_LINKS_STATE]
        .iter()
        .map(|p| names.in_tree(p))
        .collect()
}

/// The marker of a device distribution's links, directly in the devel root
/// (relative to it) and listed in that distribution's RECORD. Because it
/// sits in the root, pip's uninstall of the last owner of files in the tree
/// removes the whole tree, whichever of devel and device wheels goes first.
fn marker(distribution: &str) -> String {
    format!(".{distribution}.links")
}

/// What [`reconcile_device_links`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReconcileReport {
    /// True when the fast path found everything in place.
    pub fast_path: bool,
    /// Links created (or repaired).
    pub linked: usize,
    /// Of those, links that existed as another file (a copy an image layer
    /// or a reinstall left) and were replaced.
    pub linked_again: usize,
    /// Links removed because their device distribution is gone.
    pub removed: usize,
    /// Skipped distributions, missing files and an ignored state.
    pub warnings: Vec<DevelWarning>,
}

/// Brings the device links of the unpacked devel tree in `site_packages` in
/// line with the installed `rocm_sdk_device_*` distributions. Idempotent and
/// safe to run concurrently; cheap when nothing changed.
pub fn reconcile_device_links(site_packages: &Path) -> Result<ReconcileReport, Error> {
    let mut report = reconcile(site_packages, true)?;
    let (_, warnings) = crate::relink::repair_runtime_links(site_packages)?;
    report.warnings.extend(warnings);
    write_stamp(&InstalledDevel::open(site_packages)?)?;
    Ok(report)
}

/// [`reconcile_device_links`]; with `repair` false, links that exist but
/// are no longer the same file as their device file are not a reason to
/// take the slow path.
pub(crate) fn reconcile(site_packages: &Path, repair: bool) -> Result<ReconcileReport, Error> {
    let site = InstalledDevel::open(site_packages)?;
    if let Some((tar, _)) = site.tar()? {
        return Err(Error::NotUnpacked {
            tar: site.tar_path(&tar),
        });
    }
    if fast_path_holds(&site, repair) {
        return Ok(ReconcileReport {
            fast_path: true,
            ..ReconcileReport::default()
        });
    }
    let _lock = SiteLock::acquire(&site)?;
    if let Some((tar, _)) = site.tar()? {
        return Err(Error::NotUnpacked {
            tar: site.tar_path(&tar),
        });
    }
    if !site.tree_exists() {
        return Err(Error::TreeMissing {
            tree: site.tree_path(),
            install: InstallCommand::default(),
        });
    }
    site.check_owner()?;
    slow_path(&site)
}

/// The state, `None` when there is none; the reason it does not hold up
/// otherwise (not a small regular file, or a path out of place).
fn read_state(sp: &Dir, names: &TreeNames) -> Result<Option<DeviceLinksState>, String> {
    match sp.read(&names.in_tree(DEVICE_LINKS_STATE), DOCUMENT_LIMIT) {
        Ok(bytes) => DeviceLinksState::from_json(&bytes, names)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Chain(&e).to_string()),
    }
}

/// The stamp matches the installed device distributions and every recorded
/// link exists and is still the same file as its device file (an image
/// layer may have separated them: docs/devel-tar.md#runtime-links).
fn fast_path_holds(site: &InstalledDevel, identity: bool) -> bool {
    if !stamp_is_current(&site.sp, &site.names).unwrap_or(false) {
        return false;
    }
    let Ok(Some(state)) = read_state(&site.sp, &site.names) else {
        return false;
    };
    let (mut links, mut sources) = (site.sp.cursor(), site.sp.cursor());
    state.devices.values().all(|d| {
        d.links.len() == d.sources.len()
            && d.links.iter().zip(&d.sources).all(|(link, source)| {
                match (links.entry(link), sources.entry(source)) {
                    (Ok(Some(l)), Ok(Some(s))) => {
                        !identity || (l.kind == EntryKind::File && l.id == s.id)
                    }
                    // A device file gone is the slow path's to warn about.
                    (Ok(Some(_)), Ok(None)) => true,
                    _ => false,
                }
            })
    })
}

/// The device links the last reconcile made, `(link, device file)`,
/// site-packages-relative (none when no state holds up).
pub(crate) fn device_link_pairs(sp: &Dir, names: &TreeNames) -> Vec<(String, String)> {
    read_state(sp, names)
        .ok()
        .flatten()
        .map(|state| {
            state
                .devices
                .into_values()
                .flat_map(|d| d.links.into_iter().zip(d.sources))
                .collect()
        })
        .unwrap_or_default()
}

fn slow_path(site: &InstalledDevel) -> Result<ReconcileReport, Error> {
    let names = &site.names;
    let tree = site.tree()?;
    let record = site.record()?;
    temporary::remove_stale(site, &record, &tree)?;
    let installed = device_dist_infos(&site.sp)?;
    let mut report = ReconcileReport::default();
    let mut state = match read_state(&site.sp, names) {
        Ok(state) => state.unwrap_or_default(),
        Err(reason) => {
            report.warnings.push(DevelWarning::IgnoredState {
                path: names.in_tree(DEVICE_LINKS_STATE),
                reason,
            });
            DeviceLinksState::default()
        }
    };

    let mut wanted = BTreeSet::new();
    for name in &installed {
        let theirs = dist_version(name);
        if pypa_formats::version::matches_ignoring_post(&site.version, &theirs) {
            wanted.insert(name.clone());
        } else {
            report.warnings.push(DevelWarning::VersionMismatch {
                distribution: name.clone(),
                ours: site.version.clone(),
                theirs,
            });
        }
    }

    // Removals first, so a path shared with a wanted distribution is linked
    // again below.
    let stale: Vec<String> = state
        .devices
        .keys()
        .filter(|d| !wanted.contains(*d))
        .cloned()
        .collect();
    let mut devel_paths = None;
    for name in stale {
        let old = state.devices.remove(&name).unwrap_or_default();
        report.removed += remove_links(site, &tree, &name, &old, &mut devel_paths)?;
    }

    if !wanted.is_empty() {
        // Device wheels overlay the libraries package; without it, every
        // file is missing (and said so).
        let libraries = site.sp.open_dir(names.libraries()).ok();
        for name in &wanted {
            let previous = state.devices.get(name).cloned().unwrap_or_default();
            let linked = link_device(site, &tree, libraries.as_ref(), name, previous, &mut report)?;
            state.devices.insert(name.clone(), linked);
        }
    }

    temporary::replace(
        site,
        &record,
        &tree,
        DEVICE_LINKS_STATE,
        state.to_json().as_bytes(),
    )?;
    tracing::info!(
        linked = report.linked,
        removed = report.removed,
        "reconciled device links in {}",
        site.tree_path().display()
    );
    Ok(report)
}

/// Links every file of device distribution `name` into the tree.
fn link_device(
    site: &InstalledDevel,
    tree: &Dir,
    libraries: Option<&Dir>,
    name: &str,
    previous: DeviceLinks,
    report: &mut ReconcileReport,
) -> Result<DeviceLinks, Error> {
    let names = &site.names;
    let record = RecordFile::new(open_dir(&site.sp, name)?);
    if !matches!(record.dir().entry("RECORD"), Ok(Some(e)) if e.kind == EntryKind::File) {
        report.warnings.push(DevelWarning::MissingDeviceFile {
            distribution: name.to_owned(),
            path: format!("{name}/RECORD"),
        });
        return Ok(previous);
    }
    check_owner(record.dir())?;
    let rows = record.rows()?;
    let installed: HashSet<&str> = rows.iter().map(|row| row.path.as_str()).collect();

    // Every file to link, by relpath (relative to the libraries package
    // and to the tree alike), with the document that asked for it.
    let mut wanted: BTreeMap<String, PathBuf> = BTreeMap::new();
    let documents = format!("{}/", names.devel_links_dir());
    let mut reader = site.sp.cursor();
    for row in &rows {
        let Some(rest) = row.path.strip_prefix(&documents) else {
            continue;
        };
        if rest.contains('/')
            || !Path::new(rest)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            continue;
        }
        let doc_path = site.root.join(&row.path);
        let invalid = |reason| Error::InvalidDevelLinks {
            path: doc_path.clone(),
            reason,
        };
        for link in read_devel_links(&mut reader, row, &doc_path)?.links {
            let expected = devel_link_target(&link.relpath, names.libraries());
            if link.target != expected {
                return Err(invalid(DevelLinksError::UnexpectedTarget {
                    relpath: link.relpath,
                    target: link.target,
                    expected,
                }));
            }
            let source = format!("{}/{}", names.libraries(), link.relpath);
            if !installed.contains(source.as_str()) {
                return Err(invalid(DevelLinksError::NotInstalled {
                    source_path: source,
                }));
            }
            wanted
                .entry(link.relpath)
                .or_insert_with(|| doc_path.clone());
        }
    }

    // Nothing of the tree but a file (or nothing) is ever a device link:
    // checked before RECORD lists the path, since pip's uninstall of the
    // device wheel would remove whatever is there.
    let mut to = tree.cursor();
    for (relpath, doc) in &wanted {
        let found = to
            .entry(relpath)
            .map_err(|e| Error::read("inspect", tree.display_path(relpath), e).named_by(doc))?;
        if let Some(existing) = found.filter(|e| e.kind != EntryKind::File) {
            return Err(Error::InvalidDevelLinks {
                path: doc.clone(),
                reason: DevelLinksError::NotAFile {
                    relpath: relpath.clone(),
                    what: kind_name(existing.kind),
                },
            });
        }
    }

    // Record first: a reconcile killed after this leaves only listed files.
    let marker = marker(name);
    let mut rows_to_add: Vec<String> = wanted.keys().map(|r| names.in_tree(r)).collect();
    rows_to_add.push(names.in_tree(&marker));
    record.append(rows_to_add.iter().map(String::as_str))?;

    let mut created: BTreeSet<String> = previous.created_dirs.into_iter().collect();
    // Directories seen (or made) in this pass: links share parents.
    let mut present = BTreeSet::new();
    let mut links = Vec::with_capacity(wanted.len());
    let mut sources = Vec::with_capacity(wanted.len());
    let mut from = libraries.map(Dir::cursor);
    for (relpath, doc) in &wanted {
        let source = format!("{}/{relpath}", names.libraries());
        let found = match from.as_mut() {
            Some(from) => from
                .entry(relpath)
                .map_err(|e| Error::read("inspect", site.root.join(&source), e).named_by(doc))?,
            None => None,
        };
        let (Some(found), Some(from)) =
            (found.filter(|e| e.kind == EntryKind::File), from.as_mut())
        else {
            report.warnings.push(DevelWarning::MissingDeviceFile {
                distribution: name.to_owned(),
                path: source,
            });
            continue;
        };
        make_parents(&mut to, names, relpath, &mut created, &mut present)
            .map_err(|e| e.named_by(doc))?;
        let dest_path = tree.display_path(relpath);
        match to
            .entry(relpath)
            .map_err(|e| Error::read("inspect", &dest_path, e).named_by(doc))?
        {
            None => {}
            Some(existing) if existing.kind == EntryKind::File => {
                if existing.id == found.id {
                    links.push(names.in_tree(relpath));
                    sources.push(source);
                    continue;
                }
                // A copy an image layer or a reinstall left.
                to.remove_file(relpath)
                    .map_err(|e| Error::io("remove", &dest_path, e))?;
                report.linked_again += 1;
            }
            Some(existing) => {
                return Err(Error::InvalidDevelLinks {
                    path: doc.clone(),
                    reason: DevelLinksError::NotAFile {
                        relpath: relpath.clone(),
                        what: kind_name(existing.kind),
                    },
                });
            }
        }
        match to.hard_link_from(from, relpath, relpath) {
            Ok(()) => {}
            Err(e) if confined::refusal(&e).is_some() => {
                return Err(Error::io("hard-link", &dest_path, e).named_by(doc));
            }
            Err(e) => {
                crate::tree_writer::copy_between(from, relpath, &mut to, relpath)
                    .map_err(|e| Error::io("copy", &dest_path, e))?;
                report.warnings.push(DevelWarning::Copied {
                    path: names.in_tree(relpath),
                    reason: e.to_string(),
                });
            }
        }
        report.linked += 1;
        links.push(names.in_tree(relpath));
        sources.push(source);
    }
    let marker_text: String = links.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
    temporary::replace(site, &site.record()?, tree, &marker, marker_text.as_bytes())?;
    Ok(DeviceLinks {
        links,
        sources,
        created_dirs: created.into_iter().collect(),
    })
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Dir => "directory",
        EntryKind::Symlink => "symbolic link",
        EntryKind::File => "file",
        EntryKind::Other => "special file",
    }
}

/// Reads the `.devel_links/{T}.json` document of RECORD row `row` (at
/// `path`): at most [`DOCUMENT_LIMIT`] bytes of a regular file, which must
/// be the file the row describes.
fn read_devel_links(
    reader: &mut Cursor<'_>,
    row: &RecordEntry,
    path: &Path,
) -> Result<DevelLinks, Error> {
    let bytes = reader
        .read(&row.path, DOCUMENT_LIMIT)
        .map_err(|e| Error::read("read", path, e))?;
    let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(&bytes));
    let invalid = |reason| Error::InvalidDevelLinks {
        path: path.to_path_buf(),
        reason,
    };
    if row.sha256() != Some(digest.as_str()) || row.size.is_some_and(|s| s != bytes.len() as u64) {
        return Err(invalid(DevelLinksError::Modified));
    }
    DevelLinks::from_json(&String::from_utf8_lossy(&bytes)).map_err(invalid)
}

/// Removes the links of a device distribution that is gone (pip usually
/// removed them already), its marker, and the directories made for them
/// once empty. Only regular files of the tree go: never one the devel
/// distribution's RECORD lists (a file of the tarball), never one the
/// device wheel's RECORD, while it is there, does not list. Returns how
/// many links were still there.
fn remove_links(
    site: &InstalledDevel,
    tree: &Dir,
    name: &str,
    old: &DeviceLinks,
    devel_paths: &mut Option<HashSet<String>>,
) -> Result<usize, Error> {
    let names = &site.names;
    let device_record: Option<HashSet<String>> = site
        .sp
        .open_dir(name)
        .ok()
        .and_then(|dir| RecordFile::new(dir).rows().ok())
        .map(|rows| rows.into_iter().map(|row| row.path).collect());
    let mut cursor = tree.cursor();
    let mut removed = 0;
    for link in &old.links {
        let Some(rel) = names.relpath(link) else {
            continue;
        };
        if !matches!(cursor.entry(rel), Ok(Some(e)) if e.kind == EntryKind::File) {
            continue;
        }
        if devel_paths.is_none() {
            *devel_paths = Some(site.recorded_paths()?);
        }
        let devel_owned = devel_paths
            .as_ref()
            .is_some_and(|paths| paths.contains(link));
        let unlisted = device_record
            .as_ref()
            .is_some_and(|paths| !paths.contains(link));
        if devel_owned || unlisted {
            tracing::warn!(
                "left {link} in place: the state of device links names it, but it is not a device link of {name}"
            );
            continue;
        }
        cursor
            .remove_file(rel)
            .map_err(|e| Error::io("remove", tree.display_path(rel), e))?;
        removed += 1;
    }
    let marker = marker(name);
    if matches!(cursor.entry(&marker), Ok(Some(e)) if e.kind == EntryKind::File) {
        cursor
            .remove_file(&marker)
            .map_err(|e| Error::io("remove", tree.display_path(&marker), e))?;
    }
    // Deepest first; a directory that gained other files stays.
    let mut dirs: Vec<&str> = old
        .created_dirs
        .iter()
        .filter_map(|d| names.relpath(d))
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for dir in dirs {
        let _ = cursor.remove_dir(dir);
    }
    Ok(removed)
}

/// Creates the missing parents of `relpath` (relative to the tree),
/// remembering the ones made in `created` (site-packages-relative) and
/// every one checked or made in `present` (not checked again).
fn make_parents(
    tree: &mut Cursor<'_>,
    names: &TreeNames,
    relpath: &str,
    created: &mut BTreeSet<String>,
    present: &mut BTreeSet<String>,
) -> Result<(), Error> {
    let mut end = 0;
    while let Some(i) = relpath[end..].find('/') {
        let dir = &relpath[..end + i];
        end += i + 1;
        if present.contains(dir) {
            continue;
        }
        present.insert(dir.to_owned());
        let path = tree.dir().display_path(dir);
        match tree
            .entry(dir)
            .map_err(|e| Error::read("inspect", &path, e))?
        {
            Some(e) if e.kind == EntryKind::Dir => {}
            Some(_) => {
                return Err(Error::io(
                    "create directory",
                    &path,
                    io::Error::other("a file or link is in the way"),
                ));
            }
            None => {
                tree.create_dir(dir, 0o755)
                    .map_err(|e| Error::io("create directory", &path, e))?;
                created.insert(names.in_tree(dir));
            }
        }
    }
    Ok(())
}
