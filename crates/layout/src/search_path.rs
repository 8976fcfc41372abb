//! The search-path policy (docs/behaviour.md#search-paths): the `$ORIGIN`
//! entries runtime files get, and the one tag every edited file is
//! written with.

use dist_info::package::PackageKind;

use crate::plan::SearchPathPatch;

/// Every search path the build edits is one `DT_RPATH`, in the runtime
/// packages and the devel tree alike: searched before `LD_LIBRARY_PATH`
/// and, unlike `DT_RUNPATH`, for the dependencies of a library too, so a
/// file finds what its dependencies need in another package.
const FORCE_RPATH: bool = true;

/// The edit of a file whose search path gains `append` and loses `remove`,
/// written with the build's one tag ([`FORCE_RPATH`]).
pub(crate) fn patch(append: Vec<String>, remove: Vec<String>) -> SearchPathPatch {
    SearchPathPatch {
        append,
        remove,
        force_rpath: FORCE_RPATH,
    }
}

/// The directories inside core that a package's ELF files search, in order.
pub fn core_dependency_dirs(kind: PackageKind) -> &'static [&'static str] {
    match kind {
        PackageKind::Core => &["lib/llvm/lib", "lib/rocm_sysdeps/lib"],
        PackageKind::Profiler => &["lib", "lib/llvm/lib", "lib/rocm_sysdeps/lib"],
        PackageKind::Libraries => &[
            "lib",
            "lib/rocm_sysdeps/lib",
            "lib/host-math/lib",
            "lib/llvm/lib",
        ],
        PackageKind::Device => &["lib", "lib/rocm_sysdeps/lib"],
        PackageKind::Meta | PackageKind::Devel => &[],
    }
}

/// The entries to append for a file at `dest` (relative to site-packages,
/// e.g. `_rocm_sdk_core/lib/libamdhip64.so.7`): one
/// `$ORIGIN/{up}/{core}/{dir}` per dependency directory, where `{up}`
/// climbs from the file's directory back to site-packages.
///
/// ```
/// use dist_info::package::PackageKind;
/// assert_eq!(
///     layout::search_path_entries(PackageKind::Core, "_rocm_sdk_core/lib/llvm/bin/clang", "_rocm_sdk_core"),
///     ["$ORIGIN/../../../../_rocm_sdk_core/lib/llvm/lib", "$ORIGIN/../../../../_rocm_sdk_core/lib/rocm_sysdeps/lib"]
/// );
/// ```
pub fn search_path_entries(kind: PackageKind, dest: &str, core_platform: &str) -> Vec<String> {
    let depth = dest.split('/').count().saturating_sub(1);
    let up = vec![".."; depth].join("/");
    core_dependency_dirs(kind)
        .iter()
        .map(|dir| format!("$ORIGIN/{up}/{core_platform}/{dir}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_in_core_lib_climbs_two() {
        assert_eq!(
            search_path_entries(
                PackageKind::Core,
                "_rocm_sdk_core/lib/x.so",
                "_rocm_sdk_core"
            ),
            [
                "$ORIGIN/../../_rocm_sdk_core/lib/llvm/lib",
                "$ORIGIN/../../_rocm_sdk_core/lib/rocm_sysdeps/lib"
            ]
        );
    }

    #[test]
    fn libraries_search_core_in_documented_order() {
        let e = search_path_entries(
            PackageKind::Libraries,
            "_rocm_sdk_libraries_gfx94X_dcgpu/lib/libhipblas.so.3",
            "_rocm_sdk_core",
        );
        assert_eq!(
            e,
            [
                "$ORIGIN/../../_rocm_sdk_core/lib",
                "$ORIGIN/../../_rocm_sdk_core/lib/rocm_sysdeps/lib",
                "$ORIGIN/../../_rocm_sdk_core/lib/host-math/lib",
                "$ORIGIN/../../_rocm_sdk_core/lib/llvm/lib",
            ]
        );
    }

    #[test]
    fn device_and_profiler_entries() {
        assert_eq!(
            search_path_entries(
                PackageKind::Device,
                "_rocm_sdk_libraries/lib/a/b.so",
                "_rocm_sdk_core"
            ),
            [
                "$ORIGIN/../../../_rocm_sdk_core/lib",
                "$ORIGIN/../../../_rocm_sdk_core/lib/rocm_sysdeps/lib"
            ]
        );
        assert_eq!(
            search_path_entries(
                PackageKind::Profiler,
                "_rocm_profiler/bin/rocprof-sys-run",
                "_rocm_sdk_core"
            )
            .len(),
            3
        );
    }
}
