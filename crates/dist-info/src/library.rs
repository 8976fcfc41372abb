//! The public library table (docs/behaviour.md#library-table): what `find_libraries` and
//! `preload_libraries` can locate by short name.

use serde::{Deserialize, Serialize};

use crate::package::PackageKind;
use crate::requirement::Platform;

/// One public library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Library {
    /// The short name callers use (`amdhip64`).
    pub shortname: String,
    /// The logical package that ships it (`core` or `libraries`).
    pub package: PackageKind,
    /// Glob for the Linux file name, `None` when the library is Linux-less.
    pub linux_glob: Option<String>,
    /// Glob for the Windows DLL name, `None` when there is no Windows DLL.
    pub windows_glob: Option<String>,
    /// Directory inside the platform package on Linux (`lib` unless stated).
    pub posix_relpath: String,
    /// Directory inside the platform package on Windows (DLLs live in `bin`).
    pub windows_relpath: String,
    /// True when a build may legitimately lack it (`rocdxg`).
    pub optional: bool,
}

/// `(shortname, package, linux glob, windows glob, relpath, optional)`; an
/// empty glob means none, an empty relpath means `lib`.
const TABLE: &[(&str, PackageKind, &str, &str, &str, bool)] = {
    use PackageKind::{Core as C, Libraries as L};
    &[
        ("amdhip64", C, "libamdhip64.so*", "amdhip64*.dll", "", false),
        ("hipfile", C, "libhipfile.so*", "", "", false),
        // `0` from the version keeps the glob off `hiprtc-builtins`.
        ("hiprtc", C, "libhiprtc.so*", "hiprtc0*.dll", "", false),
        ("roctx64", C, "libroctx64.so*", "", "", false),
        (
            "rocprofiler-sdk",
            C,
            "librocprofiler-sdk.so*",
            "",
            "",
            false,
        ),
        (
            "rocprofiler-sdk-roctx",
            C,
            "librocprofiler-sdk-roctx.so*",
            "",
            "",
            false,
        ),
        ("roctracer64", C, "libroctracer64.so*", "", "", false),
        (
            "rocm_sysdeps_liblzma",
            C,
            "librocm_sysdeps_liblzma.so.*",
            "",
            "lib/rocm_sysdeps/lib",
            false,
        ),
        (
            "rocm-openblas",
            C,
            "librocm-openblas.so.*",
            "rocm-openblas*.dll",
            "lib/host-math/lib",
            false,
        ),
        (
            "amd_comgr",
            C,
            "libamd_comgr.so*",
            "amd_comgr*.dll",
            "",
            false,
        ),
        (
            "rocm_kpack",
            C,
            "librocm_kpack.so*",
            "rocm_kpack*.dll",
            "",
            false,
        ),
        ("rocm_smi64", C, "librocm_smi64.so*", "", "", false),
        ("rocdecode", C, "librocdecode.so*", "", "", false),
        ("rocjpeg", C, "librocjpeg.so*", "", "", false),
        ("amd_smi", C, "libamd_smi.so*", "", "", false),
        ("rocdxg", C, "librocdxg*.so*", "", "", true),
        ("rpp", L, "librpp.so*", "", "", false),
        ("hipblas", L, "libhipblas.so*", "*hipblas*.dll", "", false),
        (
            "hipblaslt",
            L,
            "libhipblaslt.so*",
            "*hipblaslt*.dll",
            "",
            false,
        ),
        ("hipfft", L, "libhipfft.so*", "hipfft*.dll", "", false),
        ("hiprand", L, "libhiprand.so*", "hiprand*.dll", "", false),
        (
            "hipsparse",
            L,
            "libhipsparse.so*",
            "hipsparse*.dll",
            "",
            false,
        ),
        ("hipsparselt", L, "libhipsparselt.so*", "", "", false),
        (
            "hipsolver",
            L,
            "libhipsolver.so*",
            "hipsolver*.dll",
            "",
            false,
        ),
        ("rccl", L, "librccl.so*", "", "", false),
        ("miopen", L, "libMIOpen.so*", "MIOpen*.dll", "", false),
        ("origami", L, "liborigami.so*", "origami*.dll", "", false),
        (
            "hipdnn",
            L,
            "libhipdnn_backend.so*",
            "hipdnn_backend*.dll",
            "",
            false,
        ),
    ]
};

/// A short name that is not in the table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ROCm library `{name}`; known libraries: {}", .known.join(", "))]
pub struct UnknownLibrary {
    /// The name asked for.
    pub name: String,
    /// Every known short name, in table order.
    pub known: Vec<String>,
}

/// The whole library table, in the order of docs/behaviour.md#library-table.
pub fn all_libraries() -> Vec<Library> {
    TABLE
        .iter()
        .map(
            |&(shortname, package, linux, windows, relpath, optional)| Library {
                shortname: shortname.to_owned(),
                package,
                linux_glob: (!linux.is_empty()).then(|| linux.to_owned()),
                windows_glob: (!windows.is_empty()).then(|| windows.to_owned()),
                posix_relpath: if relpath.is_empty() { "lib" } else { relpath }.to_owned(),
                windows_relpath: "bin".to_owned(),
                optional,
            },
        )
        .collect()
}

/// The library called `shortname`.
pub fn library(shortname: &str) -> Result<Library, UnknownLibrary> {
    all_libraries()
        .into_iter()
        .find(|l| l.shortname == shortname)
        .ok_or_else(|| UnknownLibrary {
            name: shortname.to_owned(),
            known: TABLE.iter().map(|t| t.0.to_owned()).collect(),
        })
}

impl Library {
    /// The `rocm[...]` extra that installs this library's package, `None`
    /// for libraries of a required package (core).
    pub fn extra(&self) -> Option<&'static str> {
        (!self.package.required()).then(|| self.package.logical_name())
    }

    /// The directory (inside the platform package) and the file-name
    /// pattern of this library on `platform`; `None` when it has no file
    /// there.
    pub fn location(&self, platform: Platform) -> Option<(&str, &str)> {
        match platform {
            Platform::Linux => Some((self.posix_relpath.as_str(), self.linux_glob.as_deref()?)),
            Platform::Windows => {
                Some((self.windows_relpath.as_str(), self.windows_glob.as_deref()?))
            }
        }
    }

    /// Whether `relpath` (inside the platform package, `/`-separated) is a
    /// file of this library on `platform`: directly in its directory, its
    /// name matching the table's pattern as [`glob_matches`] decides. The
    /// one match of the table: the record of a distribution's libraries and
    /// the build's check of their bytes both ask it.
    pub fn matches(&self, platform: Platform, relpath: &str) -> bool {
        self.location(platform).is_some_and(|(dir, pattern)| {
            relpath
                .rsplit_once('/')
                .is_some_and(|(d, name)| d == dir && glob_matches(pattern, name))
        })
    }
}

/// Whether a file name matches a pattern of the library table, as Python's
/// `fnmatch` (which `Path.glob` uses within one directory) decides for the
/// characters the table uses: `*` matches any run, `?` one character,
/// everything else itself.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative wildcard matching with one backtrack point per `*`.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn table_is_consistent() {
        let libs = all_libraries();
        assert_eq!(libs.len(), 28);
        let names: BTreeSet<_> = libs.iter().map(|l| l.shortname.as_str()).collect();
        assert_eq!(names.len(), libs.len(), "short names are unique");
        for l in &libs {
            assert!(matches!(
                l.package,
                PackageKind::Core | PackageKind::Libraries
            ));
            assert!(l.linux_glob.is_some(), "{} has a Linux glob", l.shortname);
        }
    }

    #[test]
    fn a_library_matches_files_directly_in_its_directory() {
        let hip = all_libraries()
            .into_iter()
            .find(|l| l.shortname == "amdhip64")
            .unwrap();
        assert!(hip.matches(Platform::Linux, "lib/libamdhip64.so.7"));
        assert!(!hip.matches(Platform::Linux, "lib/llvm/lib/libamdhip64.so.7"));
        assert!(!hip.matches(Platform::Linux, "libamdhip64.so.7"));
        assert!(hip.matches(Platform::Windows, "bin/amdhip64_7.dll"));
        let foo = Library {
            linux_glob: Some("libfoo?.so".into()),
            ..hip
        };
        assert!(foo.matches(Platform::Linux, "lib/libfoo1.so"));
        assert!(!foo.matches(Platform::Linux, "lib/libfoo12.so"));
    }

    #[test]
    fn globs_match_as_fnmatch() {
        assert!(glob_matches("libamdhip64.so*", "libamdhip64.so"));
        assert!(glob_matches("libamdhip64.so*", "libamdhip64.so.7"));
        assert!(!glob_matches("libamdhip64.so*", "libamdhip64_static.so"));
        assert!(glob_matches("librocdxg*.so*", "librocdxg-wsl.so.1"));
        assert!(glob_matches("*hipblas*.dll", "libhipblas.dll"));
        assert!(!glob_matches("hiprtc0*.dll", "hiprtc-builtins0701.dll"));
        assert!(glob_matches(
            "librocm_sysdeps_liblzma.so.*",
            "librocm_sysdeps_liblzma.so.5"
        ));
        assert!(!glob_matches(
            "librocm_sysdeps_liblzma.so.*",
            "librocm_sysdeps_liblzma.so"
        ));
        assert!(glob_matches("a?c", "abc"));
        assert!(!glob_matches("a?c", "ac"));
    }

    #[test]
    fn lookups() {
        let lzma = library("rocm_sysdeps_liblzma").unwrap();
        assert_eq!(lzma.posix_relpath, "lib/rocm_sysdeps/lib");
        assert_eq!(lzma.extra(), None);
        let miopen = library("miopen").unwrap();
        assert_eq!(miopen.windows_glob.as_deref(), Some("MIOpen*.dll"));
        assert_eq!(miopen.extra(), Some("libraries"));
        assert_eq!(library("hipfile").unwrap().windows_glob, None);
        assert!(library("rocdxg").unwrap().optional);
        let err = library("cublas").unwrap_err().to_string();
        assert!(
            err.contains("`cublas`") && err.contains("amdhip64, hipfile"),
            "{err}"
        );
    }
}
