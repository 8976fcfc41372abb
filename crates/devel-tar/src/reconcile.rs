//! Device-link reconcile (docs/behaviour.md#device-reconcile): the files of every installed device
//! wheel of our version are hard-linked into the devel tree and recorded in
//! *that* wheel's RECORD; links of device wheels that are gone are removed;
//! the stamp (see `stamp.rs`) is written by the caller once the runtime
//! links are mended too. A fast path only lists site-packages and stats the
//! links when nothing changed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use dist_info::devel_links::{DevelLinks, DevelLinksError};
use dist_info::devel_tree::device_link_source;
use fs_helpers::atomic_write::write_atomic_via;
use pypa_formats::installer::InstallCommand;
use pypa_formats::member::check_relpath;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::lock::SiteLock;
use crate::record;
use crate::site::{InstalledDevel, device_dist_infos, dist_version};
use crate::stamp::{DEVICE_LINKS_STAMP, stamp_is_current, write_stamp};
use crate::tree_names::TreeNames;
use crate::warning::DevelWarning;

/// What the last reconcile linked, per device dist-info directory; owned by
/// the devel distribution. Relative to the tree.
const STATE: &str = ".device-links-state.json";

/// The files of the devel tree that reconcile writes (with their fixed
/// temporary names, so even a killed reconcile leaves only listed files);
/// the unpack records them in the devel RECORD.
pub(crate) fn devel_owned_files(names: &TreeNames) -> Vec<String> {
    [DEVICE_LINKS_STAMP, STATE]
        .iter()
        .map(|p| names.in_tree(p))
        .flat_map(|p| [format!("{p}.tmp"), p])
        .collect()
}

/// The marker of a device distribution's links, directly in the devel root
/// and listed in that distribution's RECORD. Because it sits in the root,
/// pip's uninstall of the last owner of files in the tree removes the whole
/// tree, whichever of devel and device wheels goes first.
fn marker(names: &TreeNames, distribution: &str) -> String {
    names.in_tree(&format!(".{distribution}.links"))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    devices: BTreeMap<String, DeviceState>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct DeviceState {
    /// Links made, site-packages-relative.
    links: Vec<String>,
    /// The device file each link is, in the order of `links` (absent in
    /// states written before it was kept: the fast path then fails once
    /// and the slow path writes it).
    #[serde(default)]
    sources: Vec<String>,
    /// Directories made for them, site-packages-relative.
    created_dirs: Vec<String>,
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
    /// Skipped distributions and missing files.
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
    if let Some((tar, _)) = site.tar() {
        return Err(Error::NotUnpacked { tar });
    }
    if fast_path_holds(site_packages, &site.names, repair) {
        return Ok(ReconcileReport {
            fast_path: true,
            ..ReconcileReport::default()
        });
    }
    let _lock = SiteLock::acquire(&site.package_dir())?;
    if let Some((tar, _)) = site.tar() {
        return Err(Error::NotUnpacked { tar });
    }
    if !site.tree().is_dir() {
        return Err(Error::TreeMissing {
            tree: site.tree(),
            install: InstallCommand::default(),
        });
    }
    slow_path(&site)
}

/// The stamp matches the installed device distributions and every recorded
/// link exists and is still the same file as its device file (an image
/// layer may have separated them: docs/devel-tar.md#runtime-links).
fn fast_path_holds(root: &Path, names: &TreeNames, identity: bool) -> bool {
    if !stamp_is_current(root, names).unwrap_or(false) {
        return false;
    }
    let Some(state) = read_state(root, names) else {
        return false;
    };
    state.devices.values().all(|d| {
        d.links.len() == d.sources.len()
            && d.links.iter().zip(&d.sources).all(|(link, source)| {
                let (link, source) = (root.join(link), root.join(source));
                match (fs::symlink_metadata(&link), fs::symlink_metadata(&source)) {
                    (Ok(l), Ok(s)) => {
                        !identity || fs_helpers::file_id::same_entry(&link, &l, &source, &s)
                    }
                    // A device file gone is the slow path's to warn about.
                    (Ok(_), Err(_)) => true,
                    (Err(_), _) => false,
                }
            })
    })
}

/// The device links the last reconcile made, `(link, device file)`,
/// site-packages-relative (none when no state is readable).
pub(crate) fn device_link_pairs(root: &Path, names: &TreeNames) -> Vec<(String, String)> {
    read_state(root, names)
        .map(|state| {
            state
                .devices
                .into_values()
                .flat_map(|d| d.links.into_iter().zip(d.sources))
                .filter(|(link, source)| {
                    // Read back as hostile input, as the unpack's record.
                    names
                        .relpath(link)
                        .is_some_and(|rel| check_relpath(rel).is_ok())
                        && check_relpath(source).is_ok()
                        && !names.contains(source)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn slow_path(site: &InstalledDevel) -> Result<ReconcileReport, Error> {
    let root = &site.root;
    let installed = device_dist_infos(root)?;
    let names = &site.names;
    let mut state = read_state(root, names).unwrap_or_default();
    let mut report = ReconcileReport::default();

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
    for name in stale {
        let old = state.devices.remove(&name).unwrap_or_default();
        report.removed += remove_links(root, names, &name, &old)?;
    }

    for name in &wanted {
        let previous = state.devices.get(name).cloned().unwrap_or_default();
        let linked = link_device(root, names, name, previous, &mut report)?;
        state.devices.insert(name.clone(), linked);
    }

    let state_text = serde_json::to_string_pretty(&state).expect("plain data serialises") + "\n";
    write_replacing(root, &names.in_tree(STATE), &state_text)?;
    tracing::info!(
        linked = report.linked,
        removed = report.removed,
        "reconciled device links in {}",
        site.tree().display()
    );
    Ok(report)
}

/// Links every file of device distribution `name` into the tree.
fn link_device(
    root: &Path,
    names: &TreeNames,
    name: &str,
    previous: DeviceState,
    report: &mut ReconcileReport,
) -> Result<DeviceState, Error> {
    let record_path = root.join(name).join("RECORD");
    if !record_path.is_file() {
        report.warnings.push(DevelWarning::MissingDeviceFile {
            distribution: name.to_owned(),
            path: format!("{name}/RECORD"),
        });
        return Ok(previous);
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for listed in record::rows(&record_path)?.into_iter().map(|row| row.path) {
        let Some(rest) = listed.strip_prefix(&format!("{}/", names.devel_links_dir())) else {
            continue;
        };
        if rest.contains('/')
            || !Path::new(rest)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            continue;
        }
        let doc_path = root.join(&listed);
        let doc = read_devel_links(&doc_path)?;
        for link in doc.links {
            let dest = names.in_tree(&link.relpath);
            let source = device_link_source(&dest, &link.target, names).ok_or_else(|| {
                Error::InvalidDevelLinks {
                    path: doc_path.clone(),
                    reason: DevelLinksError::TargetOutside {
                        relpath: link.relpath.clone(),
                        target: link.target.clone(),
                    },
                }
            })?;
            pairs.push((dest, source));
        }
    }
    pairs.sort();
    pairs.dedup();

    // Record first: a reconcile killed after this leaves only listed files.
    let marker = marker(names, name);
    record::append(
        &record_path,
        pairs
            .iter()
            .map(|(dest, _)| dest.as_str())
            .chain([marker.as_str()]),
    )?;

    let mut created: BTreeSet<String> = previous.created_dirs.into_iter().collect();
    // Directories seen (or made) in this pass: links share parents.
    let mut present = BTreeSet::new();
    let mut links = Vec::with_capacity(pairs.len());
    let mut sources = Vec::with_capacity(pairs.len());
    for (dest, source) in &pairs {
        let source_path = root.join(source);
        let source_meta = match fs::symlink_metadata(&source_path) {
            Ok(m) if m.is_file() => m,
            _ => {
                report.warnings.push(DevelWarning::MissingDeviceFile {
                    distribution: name.to_owned(),
                    path: source.clone(),
                });
                continue;
            }
        };
        make_parents(root, names.root(), dest, &mut created, &mut present)?;
        let dest_path = root.join(dest);
        if let Ok(existing) = fs::symlink_metadata(&dest_path) {
            if fs_helpers::file_id::same_entry(&dest_path, &existing, &source_path, &source_meta) {
                links.push(dest.clone());
                sources.push(source.clone());
                continue;
            }
            crate::unpack::remove_all(&dest_path)?;
            report.linked_again += 1;
        }
        if let Err(e) = fs::hard_link(&source_path, &dest_path) {
            fs::copy(&source_path, &dest_path).map_err(|e| Error::io("copy", &dest_path, e))?;
            report.warnings.push(DevelWarning::Copied {
                path: dest.clone(),
                reason: e.to_string(),
            });
        }
        report.linked += 1;
        links.push(dest.clone());
        sources.push(source.clone());
    }
    let marker_text: String = links.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
    write_replacing_in_place(root, &marker, &marker_text)?;
    Ok(DeviceState {
        links,
        sources,
        created_dirs: created.into_iter().collect(),
    })
}

/// Removes the links of a device distribution that is gone (pip usually
/// removed them already), its marker, and the directories made for them
/// once empty. Returns how many links were still there.
/// Reads and parses the `.devel_links/{T}.json` document at `path`.
fn read_devel_links(path: &Path) -> Result<DevelLinks, Error> {
    let text = fs::read_to_string(path).map_err(|e| Error::read("read", path, e))?;
    DevelLinks::from_json(&text).map_err(|reason| Error::InvalidDevelLinks {
        path: path.to_path_buf(),
        reason,
    })
}

fn remove_links(
    root: &Path,
    names: &TreeNames,
    name: &str,
    old: &DeviceState,
) -> Result<usize, Error> {
    let mut removed = 0;
    let marker = marker(names, name);
    for link in old.links.iter().chain([&marker]) {
        let path = root.join(link);
        match fs::symlink_metadata(&path) {
            Ok(m) if !m.is_dir() => {
                fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
                removed += usize::from(link != &marker);
            }
            _ => {}
        }
    }
    // Deepest first; a directory that gained other files stays.
    let mut dirs = old.created_dirs.clone();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for dir in dirs {
        let _ = fs::remove_dir(root.join(dir));
    }
    Ok(removed)
}

/// Creates the missing parents of `dest` below the tree `tree`,
/// remembering the ones made in `created` and every one checked or made
/// in `present` (not checked again).
fn make_parents(
    root: &Path,
    tree: &str,
    dest: &str,
    created: &mut BTreeSet<String>,
    present: &mut BTreeSet<String>,
) -> Result<(), Error> {
    let mut end = tree.len() + 1;
    while let Some(i) = dest[end..].find('/') {
        let dir = &dest[..end + i];
        end += i + 1;
        if present.contains(dir) {
            continue;
        }
        present.insert(dir.to_owned());
        let path = root.join(dir);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::io(
                    "create directory",
                    &path,
                    std::io::Error::other("a file or link is in the way"),
                ));
            }
            Err(_) => {
                fs::create_dir(&path).map_err(|e| Error::io("create directory", &path, e))?;
                created.insert(dir.to_owned());
            }
        }
    }
    Ok(())
}

fn read_state(root: &Path, names: &TreeNames) -> Option<State> {
    let text = fs::read_to_string(root.join(names.in_tree(STATE))).ok()?;
    match serde_json::from_str(&text) {
        Ok(state) => Some(state),
        Err(e) => {
            tracing::warn!("ignoring unreadable {STATE}: {e}");
            None
        }
    }
}

/// Replaces `rel` atomically through its fixed temporary name `{rel}.tmp`
/// (listed in RECORD too, [`devel_owned_files`]; the lock makes the fixed
/// name safe).
pub(crate) fn write_replacing(root: &Path, rel: &str, text: &str) -> Result<(), Error> {
    let dest = root.join(rel);
    write_atomic_via(&dest, &root.join(format!("{rel}.tmp")), text.as_bytes())
        .map_err(|e| Error::io("write", &dest, e))
}

/// Writes a marker in place (it is informational; its existence is what
/// matters to pip).
fn write_replacing_in_place(root: &Path, rel: &str, text: &str) -> Result<(), Error> {
    let dest = root.join(rel);
    fs::write(&dest, text).map_err(|e| Error::io("write", &dest, e))
}
