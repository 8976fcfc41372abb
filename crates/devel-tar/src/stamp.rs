//! The device-links stamp (docs/behaviour.md#device-stamp): what the Python console-script
//! trampolines compare to decide, cheaply, whether `rocm-sdk init` must run.
//!
//! Format: the sorted names of the `rocm_sdk_device_*.dist-info` directories
//! in site-packages when the last reconcile finished, one per line, each
//! ending in `\n` (an empty file when none is installed). Python computes the
//! same text with
//! `"".join(n + "\n" for n in sorted(os.listdir(sp)) if n.startswith("rocm_sdk_device_") and n.endswith(".dist-info"))`.

use std::path::Path;

use crate::error::Error;
use crate::site::device_dist_infos;
use crate::tree_names::{TreeNames, installed_tree_names};

/// The stamp, relative to the devel tree. Listed in the devel RECORD.
pub const DEVICE_LINKS_STAMP: &str = ".device-links-stamp";

/// The stamp text for the device distributions installed in
/// `site_packages` now.
pub fn expected_stamp(site_packages: &Path) -> Result<String, Error> {
    Ok(lines(&device_dist_infos(site_packages)?))
}

/// True when the stamp exists and matches the installed device
/// distributions: the trampolines' fast check, in Rust.
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

/// Each item followed by `\n`: the stamp text for these (sorted) dist-info
/// directory names.
pub(crate) fn lines(items: &[String]) -> String {
    let mut text = String::new();
    for item in items {
        text.push_str(item);
        text.push('\n');
    }
    text
}
