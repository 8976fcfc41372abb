//! Names and the relative-link rule of the devel tree (SPEC §9), written once.

/// Top directory of the devel tree in site-packages; every tar member starts
/// with it.
pub const DEVEL_ROOT: &str = "_rocm_sdk_devel";

/// The pure package of the devel wheel, which holds `_devel.tar*`.
pub const DEVEL_PACKAGE_DIR: &str = "rocm_sdk_devel";

/// Links directly in `_rocm_sdk_devel/bin/` that stay symlinks when unpacked
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
