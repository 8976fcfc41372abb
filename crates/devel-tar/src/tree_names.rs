//! Names of the devel tree (docs/behaviour.md#devel-build), written once;
//! the relative-link rule is `dist_info::devel_links`. What a member or link
//! may be is `dist_info::devel_tree`, shared with the build.

use std::path::Path;

pub use dist_info::devel_tree::{COMPILER_SYMLINKS, TreeNames, is_compiler_symlink};
use dist_info::document::{DistInfo, FILE_NAME};

use crate::error::Error;
use fs_helpers::confined::Dir;
use fs_helpers::error_chain::Chain;

/// The most bytes the devel package's `_dist_info.json` may have.
const DOCUMENT_LIMIT: u64 = 16 << 20;

/// The names the devel distribution installed in `site_packages` was built
/// with: its `rocm_sdk_devel/_dist_info.json` says the nonce. No devel
/// document (a hand-made tree) means no nonce; an unreadable one is an
/// error, never a guess.
pub fn installed_tree_names(site_packages: &Path) -> Result<TreeNames, Error> {
    let sp = Dir::open(site_packages).map_err(|e| Error::read("open", site_packages, e))?;
    tree_names_in(&sp)
}

/// [`installed_tree_names`] of the open site-packages `sp`.
pub(crate) fn tree_names_in(sp: &Dir) -> Result<TreeNames, Error> {
    let rel = format!("{DEVEL_PACKAGE_DIR}/{FILE_NAME}");
    let path = sp.display_path(&rel);
    let bytes = match sp.read(&rel, DOCUMENT_LIMIT) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(TreeNames::new(&dist_info::nonce::Nonce::NONE));
        }
        Err(e) => return Err(Error::read("read", &path, e)),
    };
    let document = DistInfo::from_json(&bytes).map_err(|e| Error::Corrupt {
        reason: Chain(&e).to_string(),
        path,
    })?;
    Ok(TreeNames::new(&document.nonce))
}

/// The pure package of the devel wheel, which holds `_devel.tar*`.
pub const DEVEL_PACKAGE_DIR: &str = "rocm_sdk_devel";
