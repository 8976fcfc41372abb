//! The temporary files of the devel tree's root, listed in the devel
//! RECORD for as long as they exist (docs/devel-tar.md, "Confinement").
//!
//! Every file the tree gets by a rename (the stamp, the state, a device's
//! marker, a runtime link made again) is first written under an
//! unpredictable name beside its root (`confined::temporary_name`). A
//! process killed before the rename leaves that file, and pip's uninstall
//! removes only what a RECORD lists: one file listed nowhere keeps the
//! whole tree. So its name is appended to the devel RECORD before the file
//! is created and cut once the rename is done (pip passes over a listed
//! path that does not exist), and the next writer under the same lock
//! removes whatever a killed one left, files and rows.

use fs_helpers::confined::{self, Dir, EntryKind};

use crate::error::Error;
use crate::record::RecordFile;
use crate::relink::RELINK_TEMPORARY;
use crate::site::InstalledDevel;
use crate::stamp::DEVICE_LINKS_STAMP;
use dist_info::devel_state::DEVICE_LINKS_STATE;

/// Runs `write` with a fresh temporary name for `name` (a file of the
/// tree's root) that the devel RECORD lists meanwhile; the row is cut
/// again whether `write` succeeds or not, and `write`'s error comes first.
pub(crate) fn with_recorded<T>(
    site: &InstalledDevel,
    record: &RecordFile,
    name: &str,
    write: impl FnOnce(&str) -> Result<T, Error>,
) -> Result<T, Error> {
    let temporary = confined::temporary_name(name);
    let appended = record.append([site.names.in_tree(&temporary).as_str()])?;
    let written = write(&temporary);
    let restored = record.truncate(appended.previous_len);
    let value = written?;
    restored?;
    Ok(value)
}

/// Replaces `name`, a file of the tree's root, with `bytes` through a
/// recorded temporary ([`with_recorded`]).
pub(crate) fn replace(
    site: &InstalledDevel,
    record: &RecordFile,
    tree: &Dir,
    name: &str,
    bytes: &[u8],
) -> Result<(), Error> {
    with_recorded(site, record, name, |temporary| {
        tree.cursor()
            .replace_through(temporary, name, bytes)
            .map_err(|e| Error::io("write", tree.display_path(name), e))
    })
}

/// Whether `name`, in the tree's root, is a temporary file of one of the
/// writers that a killed process left: the stamp's, the state's, a
/// marker's or a runtime link's.
pub(crate) fn is_stale(name: &str) -> bool {
    confined::temporary_base(name).is_some_and(|base| {
        [DEVICE_LINKS_STAMP, DEVICE_LINKS_STATE, RELINK_TEMPORARY].contains(&base)
            || (base.starts_with(".rocm_sdk_device_") && base.ends_with(".dist-info.links"))
    })
}

/// Removes what a killed writer left (under the lock: no live writer has
/// a temporary): its files in the tree's root, then its rows at the end
/// of the devel RECORD.
pub(crate) fn remove_stale(
    site: &InstalledDevel,
    record: &RecordFile,
    tree: &Dir,
) -> Result<(), Error> {
    if let Ok(names) = tree.list("") {
        let mut cursor = tree.cursor();
        for name in names.iter().filter_map(|n| n.to_str()) {
            if is_stale(name)
                && matches!(cursor.entry(name), Ok(Some(e)) if e.kind == EntryKind::File)
            {
                let _ = cursor.remove_file(name);
            }
        }
    }
    record.cut_trailing(|path| {
        site.names
            .relpath(path)
            .is_some_and(|rel| !rel.contains('/') && is_stale(rel))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_temporaries_are_those_of_the_writers_only() {
        let temp = |name: &str| confined::temporary_name(name);
        assert!(is_stale(&temp(DEVICE_LINKS_STAMP)));
        assert!(is_stale(&temp(DEVICE_LINKS_STATE)));
        assert!(is_stale(&temp(RELINK_TEMPORARY)));
        assert!(is_stale(&temp(
            ".rocm_sdk_device_gfx942-7.1.0.dist-info.links"
        )));
        assert!(!is_stale(&temp(".rocm-sdk-devel-version")));
        assert!(!is_stale(DEVICE_LINKS_STAMP));
        assert!(!is_stale("include"));
    }
}
