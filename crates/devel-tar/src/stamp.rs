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

use fs_helpers::confined::{Dir, EntryKind};

use crate::error::Error;
use crate::lock::SiteLock;
use crate::site::{InstalledDevel, linked_dist_infos};
use crate::tree_names::{TreeNames, tree_names_in};

/// The stamp, relative to the devel tree. Listed in the devel RECORD.
pub const DEVICE_LINKS_STAMP: &str = ".device-links-stamp";

/// The most bytes a stamp may have: one line per installed distribution.
const STAMP_LIMIT: u64 = 1 << 20;

/// The stamp text for the distributions installed in `site_packages` now.
pub fn expected_stamp(site_packages: &Path) -> Result<String, Error> {
    let sp = Dir::open(site_packages).map_err(|e| Error::read("open", site_packages, e))?;
    expected_in(&sp)
}

/// [`expected_stamp`] of the open site-packages `sp`.
fn expected_in(sp: &Dir) -> Result<String, Error> {
    let mut text = String::new();
    let mut cursor = sp.cursor();
    for name in linked_dist_infos(sp)? {
        let identity = record_identity(cursor.entry(&format!("{name}/RECORD")).ok().flatten());
        text.push_str(&name);
        text.push(' ');
        text.push_str(&identity);
        text.push('\n');
    }
    Ok(text)
}

/// The identity of a `RECORD` in the stamp: the inode number of the
/// regular file (not followed if a link), or `-`.
fn record_identity(entry: Option<fs_helpers::confined::Entry>) -> String {
    #[cfg(unix)]
    {
        entry
            .filter(|e| e.kind == EntryKind::File)
            .map_or_else(|| "-".to_owned(), |e| e.id.index().to_string())
    }
    #[cfg(not(unix))]
    {
        // Python's `st_ino` on Windows and a Rust file index need not agree,
        // and image layers there do not separate hard links the same way.
        let _ = (entry, EntryKind::File);
        "-".to_owned()
    }
}

/// True when the stamp exists and matches the installed distributions: the
/// trampolines' fast check, in Rust.
pub fn device_links_stamp_is_current(site_packages: &Path) -> Result<bool, Error> {
    let sp = Dir::open(site_packages).map_err(|e| Error::read("open", site_packages, e))?;
    stamp_is_current(&sp, &tree_names_in(&sp)?)
}

/// [`device_links_stamp_is_current`] for a tree named `names`. A stamp
/// that is not a small regular file (a link, a pipe) is not current: the
/// next write replaces it.
pub(crate) fn stamp_is_current(sp: &Dir, names: &TreeNames) -> Result<bool, Error> {
    let expected = expected_in(sp)?;
    match sp.read(&names.in_tree(DEVICE_LINKS_STAMP), STAMP_LIMIT) {
        Ok(text) => Ok(text == expected.as_bytes()),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || fs_helpers::confined::refusal(&e).is_some() =>
        {
            Ok(false)
        }
        Err(e) => Err(Error::read(
            "read",
            sp.display_path(&names.in_tree(DEVICE_LINKS_STAMP)),
            e,
        )),
    }
}

/// Writes the stamp for what is installed now, under the unpack's lock;
/// called last, once every device and runtime link is in place, so a run
/// killed before it leaves the stamp stale and the next launch repairs.
pub(crate) fn write_stamp(site: &InstalledDevel) -> Result<(), Error> {
    if stamp_is_current(&site.sp, &site.names).unwrap_or(false) {
        return Ok(());
    }
    let _lock = SiteLock::acquire(site)?;
    site.check_owner()?;
    let text = expected_in(&site.sp)?;
    let tree = site.tree()?;
    let record = site.record()?;
    crate::temporary::remove_stale(site, &record, &tree)?;
    crate::temporary::replace(site, &record, &tree, DEVICE_LINKS_STAMP, text.as_bytes())
}
