//! The GPU targets a release was built for: `dist_amdgpu_targets` of
//! `share/therock/dist_info.json` in core's platform package
//! (docs/behaviour.md#build-flags), read with the one reader of that
//! document ([`dist_info::dist_targets`]), the one the build checked it with.

use std::path::{Path, PathBuf};

use fs_helpers::error_chain::Chain;
use pypa_formats::installer::InstallCommand;

pub use dist_info::dist_targets::DistTargets;

use crate::error::Error;

/// Where the file lives inside core's platform package.
pub const DIST_TARGETS_RELPATH: &str = dist_info::dist_targets::RELPATH;

/// Reads the targets from core's platform package directory.
pub fn read_dist_targets(core_platform_dir: &Path) -> Result<DistTargets, Error> {
    let path = dist_targets_path(core_platform_dir);
    let bytes =
        fs_helpers::confined::read_regular(&path, 16 << 20).map_err(|e| Error::DistTargets {
            install: InstallCommand::default(),
            path: path.clone(),
            reason: e.to_string(),
        })?;
    DistTargets::parse(&bytes).map_err(|e| Error::DistTargets {
        install: InstallCommand::default(),
        path,
        reason: Chain(&e).to_string(),
    })
}

/// The path of the file for a core platform package directory.
pub fn dist_targets_path(core_platform_dir: &Path) -> PathBuf {
    core_platform_dir.join(DIST_TARGETS_RELPATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_unreadable_file_is_an_error_naming_it_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_dist_targets(dir.path()).unwrap_err().to_string();
        assert!(err.contains(DIST_TARGETS_RELPATH), "{err}");
        assert!(err.contains("reinstall rocm-sdk-core"), "{err}");
        let file = dist_targets_path(dir.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, br#"{"dist_amdgpu_targets": ["gfx942"]}"#).unwrap();
        let err = read_dist_targets(dir.path()).unwrap_err().to_string();
        let err = err.replace(&dir.path().display().to_string(), "[DIR]");
        insta::assert_snapshot!(err, @r#"[DIR]/share/therock/dist_info.json: "dist_amdgpu_targets" is an array, not a string of targets separated by `;` ("gfx942;gfx1100"); reinstall rocm-sdk-core (`pip install --force-reinstall rocm-sdk-core`)"#);
    }
}
