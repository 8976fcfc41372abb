//! The links stamp (docs/behaviour.md#device-stamp): what the Python
//! console-script trampolines compare to decide, cheaply, whether
//! `rocm-sdk init` must run before a devel tool.
//!
//! Format: one line per installed distribution whose files the devel tree
//! links to (the `rocm_sdk_core-`, `rocm_sdk_libraries*-`,
//! `rocm_sdk_device_*-` and `rocm_profiler-` dist-info directories of
//! site-packages), sorted by name: the dist-info directory's name, a space,
//! and the inode number of its `RECORD`, then `\n` (an empty file when none
//! is installed). The inode is `-` on Windows and where `RECORD` cannot be
//! read. A device wheel installed or removed changes a name; a reinstall of
//! a runtime wheel, or a copy of site-packages into another image layer,
//! writes a new `RECORD` and so changes its inode: either way the next devel
//! tool launch runs `rocm-sdk init`, which links the devel tree to the
//! runtime files again. Python computes the same text (`device_links_stamp`
//! in `rocm_sdk_core/_cli.py`).

use std::path::Path;

use crate::error::Error;
use crate::lock::SiteLock;
use crate::reconcile::write_replacing;
use crate::site::{InstalledDevel, linked_dist_infos};
use crate::tree_names::{TreeNames, installed_tree_names};

/// The stamp, relative to the devel tree. Listed in the devel RECORD.
pub const DEVICE_LINKS_STAMP: &str = ".device-links-stamp";

/// The stamp text for the distributions installed in `site_packages` now.
pub fn expected_stamp(site_packages: &Path) -> Result<String, Error> {
    let mut text = String::new();
    for name in linked_dist_infos(site_packages)? {
        text.push_str(&name);
        text.push(' ');
        text.push_str(&record_identity(&site_packages.join(&name).join("RECORD")));
        text.push('\n');
    }
    Ok(text)
}

/// The identity of a `RECORD` in the stamp: its inode number, or `-`.
fn record_identity(record: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(record).map_or_else(|_| "-".to_owned(), |m| m.ino().to_string())
    }
    #[cfg(not(unix))]
    {
        // Python's `st_ino` on Windows and a Rust file index need not agree,
        // and image layers there do not separate hard links the same way.
        let _ = record;
        "-".to_owned()
    }
}

/// True when the stamp exists and matches the installed distributions: the
/// trampolines' fast check, in Rust.
pub fn device_links_stamp_is_current(site_packages: &Path) -> Result<bool, Error> {
    stamp_is_current(site_packages, &installed_tree_names(site_packages)?)
}

/// [`device_links_stamp_is_current`] for a tree named `names`.
pub(crate) fn stamp_is_current(site_packages: &Path, names: &TreeNames) -> Result<bool, Error> {
    let expected = expected_stamp(site_packages)?;
    let path = site_packages.join(names.in_tree(DEVICE_LINKS_STAMP));
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text == expected),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::read("read", path, e)),
    }
}

/// Writes the stamp for what is installed now, under the unpack's lock;
/// called last, once every device and runtime link is in place, so a run
/// killed before it leaves the stamp stale and the next launch repairs.
pub(crate) fn write_stamp(site: &InstalledDevel) -> Result<(), Error> {
    if stamp_is_current(&site.root, &site.names).unwrap_or(false) {
        return Ok(());
    }
    let _lock = SiteLock::acquire(&site.package_dir())?;
    let text = expected_stamp(&site.root)?;
    write_replacing(&site.root, &site.names.in_tree(DEVICE_LINKS_STAMP), &text)
}
