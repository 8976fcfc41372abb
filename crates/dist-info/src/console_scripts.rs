//! The console scripts of core and the profiler (docs/behaviour.md#console-scripts): the tools pip
//! puts on `PATH`, and where each one lives in the tree.

use serde::{Deserialize, Serialize};

use crate::package::PackageKind;
use crate::requirement::Platform;

/// One console script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleScript {
    /// The command (`amdclang++`).
    pub name: String,
    /// The Python function the entry point names (`amdclang_pp`): the name
    /// with `++` → `_pp` and `-`/`.` → `_`.
    pub function: String,
    /// The package whose `_cli` module serves it (`core` or `profiler`).
    pub package: PackageKind,
    /// The tool inside the platform package and inside the devel tree.
    pub relpath: String,
    /// System-information tools never unpack the devel tree.
    pub system_info: bool,
    /// Platforms the script is installed on.
    pub platforms: Vec<Platform>,
}

impl ConsoleScript {
    /// The entry point value: `rocm_sdk_core._cli:amdclang_pp`.
    pub fn entry_point(&self) -> String {
        let module = match self.package {
            PackageKind::Profiler => "rocm_profiler",
            _ => "rocm_sdk_core",
        };
        format!("{module}._cli:{}", self.function)
    }

    /// Whether the script is installed on `platform`.
    pub fn on(&self, platform: Platform) -> bool {
        self.platforms.contains(&platform)
    }
}

/// `(name, directory, Linux only)` for core.
const CORE: &[(&str, &str, bool)] = &[
    ("amdclang", "lib/llvm/bin", false),
    ("amdclang++", "lib/llvm/bin", false),
    ("amdclang-cpp", "lib/llvm/bin", false),
    ("amdclang-cl", "lib/llvm/bin", false),
    ("amdflang", "lib/llvm/bin", false),
    ("amdlld", "lib/llvm/bin", false),
    ("offload-arch", "lib/llvm/bin", false),
    ("hipcc", "bin", false),
    ("hipconfig", "bin", false),
    ("hipify-clang", "bin", false),
    ("roc-obj", "bin", false),
    ("roc-obj-extract", "bin", false),
    ("roc-obj-ls", "bin", false),
    ("amd-smi", "bin", true),
    ("hipify-perl", "bin", true),
    ("rocm_agent_enumerator", "bin", true),
    ("rocminfo", "bin", true),
    ("rocm-smi", "bin", true),
    ("roccoremerge", "bin", true),
    ("rocgdb", "bin", true),
    ("rocpd", "bin", true),
    ("rocpd2csv", "bin", true),
    ("rocpd2otf2", "bin", true),
    ("rocpd2pftrace", "bin", true),
    ("rocpd2summary", "bin", true),
    ("rocprofv3", "bin", true),
    ("rocprofv3-attach", "bin", true),
    ("rocprofv3-avail", "bin", true),
];

/// The profiler's scripts (Linux only, in `bin/`).
const PROFILER: &[&str] = &[
    "rocprof-compute",
    "rocprof-sys-attach",
    "rocprof-sys-avail",
    "rocprof-sys-causal",
    "rocprof-sys-instrument",
    "rocprof-sys-run",
    "rocprof-sys-sample",
    "rocprof-sys-python",
];

/// Tools that report on the system and never unpack devel.
pub const SYSTEM_INFO_TOOLS: &[&str] = &[
    "amd-smi",
    "rocminfo",
    "rocm-smi",
    "rocm_agent_enumerator",
    "hipInfo",
];

fn function_name(name: &str) -> String {
    name.replace("++", "_pp").replace(['-', '.'], "_")
}

fn script(name: &str, package: PackageKind, dir: &str, linux_only: bool) -> ConsoleScript {
    ConsoleScript {
        name: name.to_owned(),
        function: function_name(name),
        package,
        relpath: format!("{dir}/{name}"),
        system_info: SYSTEM_INFO_TOOLS.contains(&name),
        platforms: if linux_only {
            vec![Platform::Linux]
        } else {
            vec![Platform::Linux, Platform::Windows]
        },
    }
}

/// Every console script, core first, in the order of docs/behaviour.md#console-scripts.
///
/// ```
/// let all = dist_info::console_scripts::all_console_scripts();
/// let clang = all.iter().find(|s| s.name == "amdclang++").unwrap();
/// assert_eq!(clang.entry_point(), "rocm_sdk_core._cli:amdclang_pp");
/// assert_eq!(clang.relpath, "lib/llvm/bin/amdclang++");
/// ```
pub fn all_console_scripts() -> Vec<ConsoleScript> {
    CORE.iter()
        .map(|&(name, dir, linux)| script(name, PackageKind::Core, dir, linux))
        .chain(
            PROFILER
                .iter()
                .map(|name| script(name, PackageKind::Profiler, "bin", true)),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn functions_are_unique_python_identifiers() {
        let all = all_console_scripts();
        let functions: BTreeSet<&str> = all.iter().map(|s| s.function.as_str()).collect();
        assert_eq!(functions.len(), all.len());
        for f in functions {
            assert!(
                f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{f}"
            );
            assert!(!f.starts_with(|c: char| c.is_ascii_digit()), "{f}");
        }
    }

    #[test]
    fn system_info_tools_and_platforms() {
        let all = all_console_scripts();
        let smi = all.iter().find(|s| s.name == "amd-smi").unwrap();
        assert!(smi.system_info && !smi.on(Platform::Windows));
        let hipcc = all.iter().find(|s| s.name == "hipcc").unwrap();
        assert!(!hipcc.system_info && hipcc.on(Platform::Windows));
        assert!(
            all.iter()
                .filter(|s| s.package == PackageKind::Profiler)
                .all(|s| s.on(Platform::Linux) && !s.on(Platform::Windows))
        );
        assert_eq!(all.len(), 28 + 8);
    }
}
