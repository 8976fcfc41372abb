//! The installation's shared-library directories, in the order the loader
//! should search them (docs/behaviour.md#library-path): what `rocm-sdk path
//! --library-path` prints and `rocm_sdk.library_directories()` returns, for
//! programs built outside the wheels that need `LD_LIBRARY_PATH` (or
//! `PATH` on Windows).
//!
//! The order is the search path a libraries-package library has
//! (docs/behaviour.md#search-paths), the libraries' own directory first and
//! the profiler's last: a name the set ships twice resolves as the ROCm
//! libraries themselves resolve it.
//!
//! ```
//! use dist_info::library_path::library_path;
//! use dist_info::package::PackageKind;
//! use dist_info::requirement::Platform;
//!
//! let path = library_path();
//! let linux: Vec<_> = path
//!     .iter()
//!     .filter_map(|d| Some((d.package, d.dir(Platform::Linux)?)))
//!     .collect();
//! assert_eq!(linux[0], (PackageKind::Libraries, "lib"));
//! assert_eq!(linux[1], (PackageKind::Core, "lib"));
//! ```

use serde::{Deserialize, Serialize};

use crate::package::PackageKind;
use crate::requirement::Platform;

/// One directory of the library path: a directory inside the platform
/// package of `package` (every installed one, for a target-specific
/// package), on each platform that has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryDir {
    /// The logical package whose platform directory holds it.
    pub package: PackageKind,
    /// The directory on Linux, `/`-separated; None when Linux has none.
    pub linux: Option<String>,
    /// The directory on Windows, `/`-separated; None when Windows has none.
    pub windows: Option<String>,
}

impl LibraryDir {
    /// The directory on `platform`, if it has one there.
    pub fn dir(&self, platform: Platform) -> Option<&str> {
        match platform {
            Platform::Linux => self.linux.as_deref(),
            Platform::Windows => self.windows.as_deref(),
        }
    }
}

/// Every directory of the library path, in search order. Windows keeps
/// DLLs in `bin/` (the library table's `windows_relpath`) and has no
/// profiler.
pub fn library_path() -> Vec<LibraryDir> {
    let dir = |package, linux: &str, windows: Option<&str>| LibraryDir {
        package,
        linux: Some(linux.to_owned()),
        windows: windows.map(str::to_owned),
    };
    vec![
        dir(PackageKind::Libraries, "lib", Some("bin")),
        dir(PackageKind::Core, "lib", Some("bin")),
        dir(PackageKind::Core, "lib/rocm_sysdeps/lib", None),
        dir(PackageKind::Core, "lib/host-math/lib", None),
        dir(PackageKind::Core, "lib/llvm/lib", None),
        dir(PackageKind::Profiler, "lib", None),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::all_libraries;

    /// Every directory a table library lives in is on the path, on both
    /// platforms, so `find_libraries` and the path never disagree.
    #[test]
    fn every_table_directory_is_on_the_path() {
        let path = library_path();
        for library in all_libraries() {
            let kind = library.package;
            let on = |platform, dir: &str| {
                path.iter()
                    .any(|d| d.package == kind && d.dir(platform) == Some(dir))
            };
            assert!(
                on(Platform::Linux, &library.posix_relpath),
                "{}",
                library.shortname
            );
            if library.windows_glob.is_some() {
                assert!(
                    on(Platform::Windows, &library.windows_relpath),
                    "{}",
                    library.shortname
                );
            }
        }
    }
}
