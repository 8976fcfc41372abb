//! Which artifacts and which relpaths feed each package (docs/behaviour.md#contents).

use artifacts::{ArtifactFilter, GENERIC_TARGET, PathFilter};
use dist_info::package::Mode;
use dist_info::requirement::Platform;
use dist_info::target::base_target;

/// Artifact names whose `lib`/`run` components make up core.
pub const CORE_NAMES: &[&str] = &[
    "amd-dbgapi",
    "amd-llvm",
    "aqlprofile",
    "base",
    "core-amdsmi",
    "core-hip",
    "core-kpack",
    "core-ocl",
    "core-hipinfo",
    "core-runtime",
    "hipfile",
    "hipify",
    "host-blas",
    "host-suite-sparse",
    "rocdecode",
    "rocgdb",
    "rocjpeg",
    "rocprofiler-sdk",
    "rocr-debug-agent",
    "sysdeps",
    "sysdeps-amd-mesa",
    "sysdeps-expat",
    "sysdeps-gmp",
    "sysdeps-mpfr",
    "sysdeps-ncurses",
    "sysdeps-util-linux",
    "wsl-rocdxg",
];

/// Relpaths core leaves to devel or to the profiler.
pub const CORE_EXCLUDES: &[&str] = &[
    "**/cmake/**",
    "bin/rocprof-*",
    "include/rocprofiler-systems/**",
    "lib/librocprof-sys*",
    "lib/python/site-packages/rocprofsys/**",
    "lib/rocprofiler-systems/**",
    "libexec/rocprofiler-systems/**",
    "share/**/rocprofiler-systems/**",
];

/// Artifact names of the profiler.
pub const PROFILER_NAMES: &[&str] = &["rocprofiler-compute", "rocprofiler-systems"];

/// The only relpaths the profiler takes.
pub const PROFILER_INCLUDES: &[&str] = &[
    "bin/rocprof-sys-*",
    "include/rocprofiler-systems/**",
    "lib/librocprof-sys*",
    "lib/libprofiler-hub.so*",
    "lib/python/site-packages/rocprofsys/**",
    "lib/rocprofiler-systems/**",
    "libexec/rocprofiler-systems/**",
    "share/**/rocprofiler-systems/**",
    "bin/rocprof-*",
    "libexec/rocprofiler-compute/**",
    "lib/rocprofiler-compute/**",
    "share/**/rocprofiler-compute/**",
];

/// Artifact names of the libraries package(s).
pub const LIBRARIES_NAMES: &[&str] = &[
    "blas",
    "fft",
    "hipdnn",
    "miopen",
    "miopenprovider",
    "hipblasltprovider",
    "hipkernelprovider",
    "rand",
    "rccl",
    "rpp",
];

/// Libraries names without device code of their own.
const HOST_ONLY_LIBRARIES: &[&str] = &["rpp"];

/// Names devel takes beyond those that fed a runtime package (kpack).
const DEVEL_EXTRA_KPACK: &[&str] = &[
    "prim",
    "rocwmma",
    "libhipcxx",
    "flatbuffers",
    "nlohmann-json",
    "rocshmem",
    "hipthreads",
    "rocjitsu",
    "mirage",
];

/// Names devel takes beyond those that fed a runtime package (legacy).
const DEVEL_EXTRA_LEGACY: &[&str] = &[
    "prim",
    "rocwmma",
    "flatbuffers",
    "nlohmann-json",
    "rocjitsu",
    "mirage",
];

/// Runtime components.
const RUNTIME_COMPONENTS: &[&str] = &["lib", "run"];

fn generic_only(target: &str) -> bool {
    target == GENERIC_TARGET
}

/// Core: the core names' `lib`/`run`, `rocjitsu-hotswap` `lib`, and the
/// `dev` of `core-hip` and `core-ocl` (hiprtc needs the HIP headers).
pub fn core_artifacts() -> ArtifactFilter {
    ArtifactFilter::new()
        .names(CORE_NAMES.iter().copied())
        .components(RUNTIME_COMPONENTS.iter().copied())
        .target_where(generic_only)
        .or(ArtifactFilter::new()
            .names(["rocjitsu-hotswap"])
            .components(["lib"])
            .target_where(generic_only))
        .or(ArtifactFilter::new()
            .names(["core-hip", "core-ocl"])
            .components(["dev"])
            .target_where(generic_only))
}

/// Core's relpaths.
pub fn core_paths() -> PathFilter {
    PathFilter::new().excludes(CORE_EXCLUDES.iter().copied())
}

/// The profiler's artifacts.
pub fn profiler_artifacts() -> ArtifactFilter {
    ArtifactFilter::new()
        .names(PROFILER_NAMES.iter().copied())
        .components(RUNTIME_COMPONENTS.iter().copied())
        .target_where(generic_only)
}

/// The profiler's relpaths (include-only).
pub fn profiler_paths() -> PathFilter {
    PathFilter::new().includes(PROFILER_INCLUDES.iter().copied())
}

/// Libraries: legacy, one family's artifacts plus generic ones; kpack,
/// generic artifacts only.
pub fn libraries_artifacts(family: Option<&str>) -> ArtifactFilter {
    let family = family.map(str::to_owned);
    ArtifactFilter::new()
        .names(LIBRARIES_NAMES.iter().copied())
        .components(["lib"])
        .target_where(move |t| t == GENERIC_TARGET || family.as_deref() == Some(t))
}

/// Device (kpack): the libraries names with device code, `lib`, whose
/// target's base is `base` and that have a place on `platform`
/// ([`device_target_on`]; never generic).
pub fn device_artifacts(base: &str, platform: Platform) -> ArtifactFilter {
    let base = base.to_owned();
    ArtifactFilter::new()
        .name_where(|n| LIBRARIES_NAMES.contains(&n) && !HOST_ONLY_LIBRARIES.contains(&n))
        .components(["lib"])
        .target_where(move |t| {
            t != GENERIC_TARGET && base_target(t) == base && device_target_on(t, platform)
        })
}

/// Whether device artifacts of `target` go into packages for `platform`:
/// on Linux every target, its feature variants (`gfx942:xnack+`) merging
/// into the base target's device wheel; on Windows only plain targets.
/// TheRock builds feature variants for Linux only, and their files carry
/// the variant in their names (`blas_lib_gfx942:xnack+.kpack`), whose `:`
/// NTFS takes as a stream (docs/windows.md#feature-variants).
pub fn device_target_on(target: &str, platform: Platform) -> bool {
    platform == Platform::Linux || base_target(target) == target
}

/// Whether an artifact name carries device code in kpack builds.
pub fn is_device_name(name: &str) -> bool {
    LIBRARIES_NAMES.contains(&name) && !HOST_ONLY_LIBRARIES.contains(&name)
}

/// Devel: every name that fed a runtime package plus the devel-only names,
/// minus the profiler's; any component (kpack: not `test`); target generic
/// or the devel's own family (legacy).
pub fn devel_artifacts(mode: Mode, family: Option<&str>) -> ArtifactFilter {
    let extra = match mode {
        Mode::Kpack => DEVEL_EXTRA_KPACK,
        Mode::Legacy => DEVEL_EXTRA_LEGACY,
    };
    let names: Vec<&str> = CORE_NAMES
        .iter()
        .chain(["rocjitsu-hotswap"].iter())
        .chain(LIBRARIES_NAMES)
        .chain(extra)
        .copied()
        .filter(|n| !PROFILER_NAMES.contains(n))
        .collect();
    let family = family.map(str::to_owned);
    ArtifactFilter::new()
        .names(names)
        .component_where(move |c| mode == Mode::Legacy || c != "test")
        .target_where(move |t| t == GENERIC_TARGET || family.as_deref() == Some(t))
}

#[cfg(test)]
mod tests {
    use artifacts::ArtifactName;

    use super::*;

    fn n(s: &str) -> ArtifactName {
        ArtifactName::parse(s).unwrap()
    }

    #[test]
    fn core_takes_runtime_components_and_hip_headers() {
        let f = core_artifacts();
        assert!(f.matches(&n("core-hip_lib_generic")));
        assert!(f.matches(&n("core-hip_dev_generic")));
        assert!(f.matches(&n("rocjitsu-hotswap_lib_generic")));
        assert!(!f.matches(&n("rocjitsu-hotswap_run_generic")));
        assert!(!f.matches(&n("base_dev_generic")));
        assert!(!f.matches(&n("blas_lib_generic")));
    }

    #[test]
    fn core_paths_leave_cmake_and_profiler_files() {
        let p = core_paths();
        assert!(p.matches("lib/libamdhip64.so.7"));
        assert!(!p.matches("lib/cmake/hip/hip-config.cmake"));
        assert!(!p.matches("bin/rocprof-sys-run"));
        assert!(!p.matches("lib/librocprof-sys-dl.so.1"));
    }

    #[test]
    fn profiler_paths_are_include_only() {
        let p = profiler_paths();
        assert!(p.matches("bin/rocprof-sys-run"));
        assert!(p.matches("lib/libprofiler-hub.so.1"));
        assert!(p.matches("libexec/rocprofiler-compute/rocprof-compute"));
        assert!(!p.matches("lib/libamdhip64.so.7"));
    }

    #[test]
    fn libraries_take_their_family_and_generic() {
        let f = libraries_artifacts(Some("gfx94X-dcgpu"));
        assert!(f.matches(&n("blas_lib_gfx94X-dcgpu")));
        assert!(f.matches(&n("blas_lib_generic")));
        assert!(!f.matches(&n("blas_lib_gfx110X-all")));
        assert!(!f.matches(&n("blas_dev_generic")));
        let kpack = libraries_artifacts(None);
        assert!(kpack.matches(&n("rpp_lib_generic")));
        assert!(!kpack.matches(&n("blas_lib_gfx942")));
    }

    #[test]
    fn device_merges_xnack_variants_and_skips_rpp_and_generic() {
        let f = device_artifacts("gfx942", Platform::Linux);
        assert!(f.matches(&n("blas_lib_gfx942")));
        assert!(f.matches(&n("blas_lib_gfx942:xnack+")));
        assert!(!f.matches(&n("blas_lib_generic")));
        assert!(!f.matches(&n("rpp_lib_gfx942")));
        assert!(!f.matches(&n("blas_lib_gfx1100")));
    }

    #[test]
    fn windows_device_wheels_take_plain_targets_only() {
        let f = device_artifacts("gfx942", Platform::Windows);
        assert!(f.matches(&n("blas_lib_gfx942")));
        assert!(!f.matches(&n("blas_lib_gfx942:xnack+")));
        assert!(!f.matches(&n("blas_lib_gfx942:xnack-")));
        assert!(device_target_on("gfx90a:xnack-", Platform::Linux));
        assert!(!device_target_on("gfx90a:xnack-", Platform::Windows));
        assert!(device_target_on("gfx1100", Platform::Windows));
    }

    #[test]
    fn devel_takes_any_component_but_kpack_tests_and_profiler() {
        let kpack = devel_artifacts(Mode::Kpack, None);
        assert!(kpack.matches(&n("core-hip_dev_generic")));
        assert!(kpack.matches(&n("prim_dev_generic")));
        assert!(kpack.matches(&n("libhipcxx_dev_generic")));
        assert!(!kpack.matches(&n("blas_test_generic")));
        assert!(!kpack.matches(&n("rocprofiler-systems_lib_generic")));
        assert!(!kpack.matches(&n("blas_lib_gfx942")));
        let legacy = devel_artifacts(Mode::Legacy, Some("gfx94X-dcgpu"));
        assert!(legacy.matches(&n("blas_test_gfx94X-dcgpu")));
        assert!(!legacy.matches(&n("libhipcxx_dev_generic")));
        assert!(!legacy.matches(&n("blas_lib_gfx110X-all")));
    }
}
