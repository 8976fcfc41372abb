//! The installation this binary belongs to: site-packages, found from the
//! binary's own location, and the `_dist_info.json` it ships.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use dist_info::document::{DistInfo, FILE_NAME};

/// Where the native binary lives inside site-packages.
pub(crate) const BINARY_RELPATH: &str = "rocm_sdk_core/_bin/rocm-sdk";

/// An installed set of ROCm packages.
#[derive(Debug)]
pub(crate) struct Site {
    pub(crate) root: PathBuf,
}

impl Site {
    /// The site-packages holding this executable (`SP/rocm_sdk_core/_bin/rocm-sdk`),
    /// or `explicit` when given.
    pub(crate) fn locate(explicit: Option<PathBuf>) -> Result<Self> {
        if let Some(root) = explicit {
            return Ok(Self { root });
        }
        let exe = std::env::current_exe().context("cannot find this program's own path")?;
        let exe = fs::canonicalize(&exe).unwrap_or(exe);
        let depth = BINARY_RELPATH.split('/').count();
        let root = exe.ancestors().nth(depth).map(Path::to_path_buf);
        match root {
            Some(root) if exe.ends_with(BINARY_RELPATH) => Ok(Self { root }),
            _ => bail!(
                "{} is not inside an installed rocm-sdk-core ({BINARY_RELPATH}); run the \
                 `rocm-sdk` command that pip installed, or pass --site-packages",
                exe.display()
            ),
        }
    }

    /// The dist-info document, from the `rocm` selector or else from core.
    pub(crate) fn dist_info(&self) -> Result<DistInfo> {
        let candidates = [
            self.root.join("rocm_sdk").join(FILE_NAME),
            self.root.join("rocm_sdk_core").join(FILE_NAME),
        ];
        let path = candidates.iter().find(|p| p.is_file()).with_context(|| {
            format!(
                "no {FILE_NAME} in {}: rocm-sdk-core is not installed there; run \
                 `pip install rocm`",
                self.root.display()
            )
        })?;
        let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        DistInfo::from_json(&bytes).with_context(|| path.display().to_string())
    }

    /// Whether `rocm-sdk-devel` is installed (its pure package exists).
    pub(crate) fn has_devel(&self) -> bool {
        self.root.join(devel_tar::DEVEL_PACKAGE_DIR).is_dir()
    }

    /// The devel tree root.
    pub(crate) fn devel_root(&self) -> PathBuf {
        self.root.join(devel_tar::DEVEL_ROOT)
    }
}
