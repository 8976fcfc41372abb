//! The `share/therock/dist_info.json` core ships must be one the install
//! side can read: `rocm-sdk targets` reads it on every installation, and a
//! reinstall cannot repair a file the release itself got wrong.

use artifacts::{Catalog, EntryKind, Resolution};
use dist_info::dist_targets::{DistTargets, RELPATH};

use crate::error::{CheckError, Error};
use crate::libraries::describe;

/// docs/behaviour.md#build-checks: core's selected entries hold
/// [`RELPATH`] (a file, or a link to one), and its bytes parse with the
/// reader the install side uses.
pub(crate) fn check_dist_targets(core: &Catalog) -> Result<(), Error> {
    let missing = || Error::from(CheckError::NoDistTargets);
    let entry = core.get(RELPATH).ok_or_else(missing)?;
    let file = match entry.kind() {
        EntryKind::File => entry,
        EntryKind::Symlink {
            resolution: Resolution::File(target),
            ..
        } => core.tree_get(target).ok_or_else(missing)?,
        EntryKind::Symlink { .. } | EntryKind::Dir => return Err(missing()),
    };
    let source = file.source().ok_or_else(missing)?;
    let bytes = source.read_to_vec()?;
    DistTargets::parse(&bytes).map_err(|source| Error::DistTargets {
        file: describe(file),
        source,
    })?;
    Ok(())
}
