//! Names and the relative-link rule of the devel tree (SPEC §9), written once.

use std::path::Path;

use dist_info::document::{DistInfo, FILE_NAME};
use dist_info::nonce::Nonce;
use dist_info::package::{Mode, Package, PackageKind};

use crate::error::Error;

/// The directory names of one installation's devel tree: the tree itself
/// (`_rocm_sdk_devel{N}`, every tar member starts with it) and the
/// libraries package device wheels overlay (`_rocm_sdk_libraries{N}`),
/// both carrying the release's nonce `N` (docs/devel-tar.md).
///
/// ```
/// use devel_tar::TreeNames;
/// let names = TreeNames::new(&"_n1".parse().unwrap());
/// assert_eq!(names.root(), "_rocm_sdk_devel_n1");
/// assert_eq!(names.devel_links_dir(), "_rocm_sdk_libraries_n1/.devel_links");
/// assert_eq!(TreeNames::default().root(), "_rocm_sdk_devel");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNames {
    root: String,
    libraries: String,
}

impl TreeNames {
    /// The names of a release whose platform packages carry `nonce`.
    pub fn new(nonce: &Nonce) -> Self {
        let name = |kind| {
            Package::new(kind, Mode::Kpack, nonce)
                .platform_package(None)
                .expect("devel and kpack libraries are not target specific")
                .expect("devel and libraries have platform packages")
        };
        Self {
            root: name(PackageKind::Devel),
            libraries: name(PackageKind::Libraries),
        }
    }

    /// The names the devel distribution installed in `site_packages` was
    /// built with: its `rocm_sdk_devel/_dist_info.json` says the nonce. No
    /// devel document (a hand-made tree) means no nonce.
    pub fn of_site(site_packages: &Path) -> Result<Self, Error> {
        let path = site_packages.join(DEVEL_PACKAGE_DIR).join(FILE_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::read("read", &path, e)),
        };
        let document = DistInfo::from_json(&bytes).map_err(|e| Error::Corrupt {
            reason: e.to_string(),
            path,
        })?;
        Ok(Self::new(&document.nonce))
    }

    /// The devel tree's directory in site-packages.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The libraries platform package that device wheels overlay.
    pub fn libraries(&self) -> &str {
        &self.libraries
    }

    /// Where device wheels keep their links documents, relative to
    /// site-packages.
    pub fn devel_links_dir(&self) -> String {
        format!("{}/.devel_links", self.libraries)
    }

    /// `relpath` inside the tree, relative to site-packages.
    pub fn in_tree(&self, relpath: &str) -> String {
        format!("{}/{relpath}", self.root)
    }
}

impl Default for TreeNames {
    /// The names of a release without a nonce.
    fn default() -> Self {
        Self::new(&Nonce::NONE)
    }
}

/// The pure package of the devel wheel, which holds `_devel.tar*`.
pub const DEVEL_PACKAGE_DIR: &str = "rocm_sdk_devel";

/// Links directly in the tree's `bin/` that stay symlinks when unpacked
/// (the compiler drivers find their resources through their own path).
pub const COMPILER_SYMLINKS: &[&str] = &[
    "amdclang",
    "amdclang++",
    "amdclang-cl",
    "amdclang-cpp",
    "amdflang",
    "amdlld",
    "amdllvm",
];

/// The target of the devel symlink for a file that a runtime package ships:
/// `"../"` once per segment of `relpath`, then the owner's platform package
/// directory, then `relpath` (SPEC §9). The link lives at
/// `_rocm_sdk_devel/{relpath}`, so the `..` chain climbs back to
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

/// True when `relpath` (inside the devel tree, e.g. `bin/amdclang`) names one
/// of the [`COMPILER_SYMLINKS`], which stay symlinks on unpack.
pub fn is_compiler_symlink(relpath: &str) -> bool {
    relpath
        .strip_prefix("bin/")
        .is_some_and(|name| COMPILER_SYMLINKS.contains(&name))
}

/// Checks that `relpath` is a clean relative path: non-empty `/`-separated
/// normal segments, no `.`/`..`, no leading or doubled `/`, no control
/// characters (RECORD is line based).
pub(crate) fn check_relpath(relpath: &str) -> Result<(), &'static str> {
    if relpath.is_empty() {
        return Err("empty path");
    }
    if relpath.starts_with('/') {
        return Err("absolute path");
    }
    if relpath.contains('\\') {
        return Err("backslash in path");
    }
    if relpath.chars().any(char::is_control) {
        return Err("control character in path");
    }
    for segment in relpath.split('/') {
        match segment {
            "" => return Err("empty segment (doubled or trailing `/`)"),
            "." | ".." => return Err("`.` or `..` segment"),
            _ => {}
        }
    }
    Ok(())
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

    #[test]
    fn compiler_links_only_directly_in_bin() {
        assert!(is_compiler_symlink("bin/amdclang++"));
        assert!(!is_compiler_symlink("lib/llvm/bin/amdclang"));
        assert!(!is_compiler_symlink("bin/hipcc"));
    }

    #[test]
    fn relpath_checks() {
        assert!(check_relpath("lib/x.so").is_ok());
        for bad in ["", "/a", "a/../b", "a//b", "a/", "./a", "a\nb", "a\\b"] {
            assert!(check_relpath(bad).is_err(), "{bad:?}");
        }
    }
}
