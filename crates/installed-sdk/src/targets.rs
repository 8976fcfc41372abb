//! The GPU targets a release was built for: `dist_amdgpu_targets` of
//! `share/therock/dist_info.json` in core's platform package (docs/behaviour.md#build-flags).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;

/// Where the file lives inside core's platform package.
pub const DIST_TARGETS_RELPATH: &str = "share/therock/dist_info.json";

/// The targets of the installed release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistTargets {
    /// The value as written (`gfx942;gfx1100`).
    pub raw: String,
    /// The targets, split on `;` (and `,`), trimmed, empties dropped.
    pub targets: Vec<String>,
}

#[derive(Deserialize)]
struct DistInfoFile {
    dist_amdgpu_targets: String,
}

impl DistTargets {
    /// Reads the file from core's platform package directory.
    pub fn read(core_platform_dir: &Path) -> Result<Self, Error> {
        let path = core_platform_dir.join(DIST_TARGETS_RELPATH);
        let bytes = std::fs::read(&path).map_err(|e| Error::DistTargets {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        Self::parse(&bytes).map_err(|reason| Error::DistTargets { path, reason })
    }

    /// Parses the JSON document.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let file: DistInfoFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let targets = file
            .dist_amdgpu_targets
            .split([';', ','])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(Self {
            raw: file.dist_amdgpu_targets,
            targets,
        })
    }

    /// The path of the file for a core platform package directory.
    pub fn path(core_platform_dir: &Path) -> PathBuf {
        core_platform_dir.join(DIST_TARGETS_RELPATH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_keeps_the_raw_value() {
        let t = DistTargets::parse(br#"{"dist_amdgpu_targets": "gfx942; gfx942:xnack+;;gfx1100"}"#)
            .unwrap();
        assert_eq!(t.raw, "gfx942; gfx942:xnack+;;gfx1100");
        assert_eq!(t.targets, ["gfx942", "gfx942:xnack+", "gfx1100"]);
    }

    #[test]
    fn missing_key_and_missing_file_are_errors_naming_the_file() {
        assert!(DistTargets::parse(b"{}").is_err());
        let dir = tempfile::tempdir().unwrap();
        let err = DistTargets::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains(DIST_TARGETS_RELPATH), "{err}");
        assert!(err.contains("reinstall rocm-sdk-core"), "{err}");
    }
}
