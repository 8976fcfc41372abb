//! The Python files shipped inside the packages (`python/` in the
//! repository, embedded at compile time; see docs/python.md).

use dist_info::package::PackageKind;
use dist_info::requirement::Platform;
use layout::ExtraFile;

use crate::native::{NativeProgramError, NativePrograms};

/// A file of the `rocm` sdist, relative to its top directory.
#[derive(Debug, Clone)]
pub(crate) struct SdistFile {
    /// Path inside the sdist.
    pub(crate) path: String,
    /// The bytes.
    pub(crate) bytes: &'static [u8],
    /// Stored executable.
    pub(crate) executable: bool,
}

/// A file of `python/`: its path there and its bytes. `crates/pipeline/python`
/// is a link to the repository's `python/`, so the crate's package carries
/// the files it embeds (docs/using-the-crates.md).
type Embedded = (&'static str, &'static [u8]);

macro_rules! python {
    ($path:literal) => {
        (
            $path,
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/python/", $path)) as &[u8],
        )
    };
}

/// The sdist's files: the build backend, the `rocm_sdk` package and its
/// pyproject (the build adds `rocm_sdk/_dist_info.json`).
const SDIST: &[Embedded] = &[
    python!("pyproject.toml"),
    python!("build_backend/rocm_sdk_build_backend.py"),
    python!("rocm_sdk/__init__.py"),
    python!("rocm_sdk/__main__.py"),
    python!("rocm_sdk/_detect.py"),
    python!("rocm_sdk/_devel.py"),
    python!("rocm_sdk/_dist_info.py"),
    python!("rocm_sdk/_document.py"),
    python!("rocm_sdk/_library_record.py"),
    python!("rocm_sdk/_selection_record.py"),
    python!("rocm_sdk/_selector.py"),
    python!("rocm_sdk/py.typed"),
];

/// Wheel files: `(package, path with {pure} for the pure package, bytes)`.
const WHEELS: &[(PackageKind, &str, Embedded)] = &[
    (
        PackageKind::Core,
        "{pure}/__init__.py",
        python!("rocm_sdk_core/__init__.py"),
    ),
    (
        PackageKind::Core,
        "{pure}/_cli.py",
        python!("rocm_sdk_core/_cli.py"),
    ),
    (
        PackageKind::Core,
        "{pure}/_console.py",
        python!("rocm_sdk_core/_console.py"),
    ),
    (
        PackageKind::Profiler,
        "{pure}/__init__.py",
        python!("rocm_profiler/__init__.py"),
    ),
    (
        PackageKind::Profiler,
        "{pure}/_cli.py",
        python!("rocm_profiler/_cli.py"),
    ),
    (
        PackageKind::Devel,
        "{pure}/__init__.py",
        python!("rocm_sdk_devel/__init__.py"),
    ),
    (
        PackageKind::Libraries,
        "{pure}/__init__.py",
        python!("rocm_sdk_libraries/__init__.py"),
    ),
];

/// The sdist's files.
pub(crate) fn sdist_files() -> Vec<SdistFile> {
    SDIST
        .iter()
        .map(|(path, bytes)| SdistFile {
            path: (*path).to_owned(),
            bytes,
            executable: false,
        })
        .collect()
}

/// Whether a plan needs the bytes of the native `rocm-sdk` its core wheel
/// carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Program {
    /// A build writes the program (and a shard plan's digest covers its
    /// bytes): refuse a platform whose program this tool lacks.
    Required,
    /// A plan that writes no package only lists it: without the program
    /// it is planned with no bytes, and the plan says the same.
    Listed,
}

/// The files the build adds to wheels: Python modules and the native
/// binary of the wheels' platform from `programs`; refuses a platform
/// without a program, unless the program is only [`Program::Listed`], and
/// always a supplied program that fails its check.
pub(crate) fn wheel_files(
    programs: &NativePrograms,
    platform: Platform,
    platform_tag: &str,
    program: Program,
) -> Result<Vec<ExtraFile>, NativeProgramError> {
    let (binary_path, binary) = match programs.program_for(platform, platform_tag)? {
        Some((path, bytes)) => (path, bytes.into_owned()),
        None if program == Program::Listed => {
            tracing::info!(
                "{:#}; the plan lists the program all the same",
                NativeProgramError::missing(platform, platform_tag)
            );
            (crate::native::wheel_path(platform), Vec::new())
        }
        None => return Err(NativeProgramError::missing(platform, platform_tag)),
    };
    Ok(WHEELS
        .iter()
        .map(|(package, dest, (_, bytes))| ExtraFile {
            package: *package,
            dest: (*dest).to_owned(),
            executable: false,
            bytes: bytes.to_vec(),
        })
        .chain(std::iter::once(ExtraFile {
            package: PackageKind::Core,
            dest: binary_path.to_owned(),
            executable: true,
            bytes: binary,
        }))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{Program, SDIST, wheel_files};
    use crate::native::NativePrograms;
    use dist_info::requirement::Platform;

    #[test]
    fn a_plan_lists_a_program_this_tool_lacks_and_a_build_refuses_it() {
        let without_windows = NativePrograms::new();
        let listed = wheel_files(
            &without_windows,
            Platform::Windows,
            "win_amd64",
            Program::Listed,
        )
        .unwrap();
        let program = listed
            .iter()
            .find(|f| f.dest == "{pure}/_bin/rocm-sdk.exe")
            .expect("the plan lists the program");
        assert!(program.executable && program.bytes.is_empty());
        let refused = wheel_files(
            &without_windows,
            Platform::Windows,
            "win_amd64",
            Program::Required,
        );
        assert!(refused.is_err());
    }

    #[test]
    fn the_sdist_embeds_every_module_of_rocm_sdk_and_its_type_marker() {
        // The backend loads its siblings by path: a module left out of the
        // sdist fails every install.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rocm_sdk");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file = entry.unwrap().path();
            let name = file.file_name().unwrap().to_str().unwrap();
            let path = format!("rocm_sdk/{name}");
            let shipped = file.extension().is_some_and(|e| e == "py") || name == "py.typed";
            if shipped && !SDIST.iter().any(|(p, _)| *p == path) {
                missing.push(path);
            }
        }
        assert!(missing.is_empty(), "not in SDIST: {missing:?}");
    }

    #[test]
    fn the_sdist_claims_the_python_every_package_claims() {
        let pyproject = std::str::from_utf8(SDIST[0].1).unwrap();
        let claim = format!(
            "requires-python = \"{}\"",
            dist_info::project_metadata::REQUIRES_PYTHON
        );
        assert!(pyproject.contains(&claim), "{pyproject}");
    }
}
