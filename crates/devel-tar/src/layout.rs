//! Names and the relative-link rule of the devel tree
//! (docs/behaviour.md#devel-build), written once. What a member or link
//! may be is `dist_info::devel_tree`, shared with the build.

use std::path::Path;

pub use dist_info::devel_tree::{COMPILER_SYMLINKS, TreeNames, is_compiler_symlink};
use dist_info::document::{DistInfo, FILE_NAME};

use crate::error::Error;
use dist_info::error_chain::Chain;

/// The names the devel distribution installed in `site_packages` was built
/// with: its `rocm_sdk_devel/_dist_info.json` says the nonce. No devel
/// document (a hand-made tree) means no nonce; an unreadable one is an
/// error, never a guess.
pub fn installed_tree_names(site_packages: &Path) -> Result<TreeNames, Error> {
    let path = site_packages.join(DEVEL_PACKAGE_DIR).join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
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

/// The target of the devel symlink for a file that a runtime package ships:
/// `"../"` once per segment of `relpath`, then the owner's platform package
/// directory, then `relpath` (docs/behaviour.md#devel-links). The link lives at
/// `_rocm_sdk_devel{N}/{relpath}`, so the `..` chain climbs back to
/// site-packages.
///
/// ```
/// assert_eq!(
///     devel_tar::devel_link_target("lib/libamdhip64.so.6", "_rocm_sdk_core"),
///     "../../_rocm_sdk_core/lib/libamdhip64.so.6"
/// );
/// ```
pub fn devel_link_target(relpath: &str, owner_platform_pkg: &str) -> String {
    let segments = relpath.split('/').filter(|s| !s.is_empty()).count();
    let mut target = "../".repeat(segments);
    target.push_str(owner_platform_pkg);
    target.push('/');
    target.push_str(relpath);
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_target_climbs_one_level_per_segment() {
        assert_eq!(devel_link_target("a", "_p"), "../_p/a");
        assert_eq!(
            devel_link_target("lib/llvm/bin/clang", "_rocm_sdk_core"),
            "../../../../_rocm_sdk_core/lib/llvm/bin/clang"
        );
    }
}
