//! `inspect`: what an artifact directory holds, identical for a tree and its archives.

use std::collections::BTreeMap;
use std::path::PathBuf;

use artifacts::{ArtifactDir, ArtifactFilter, PathFilter, Stats};
use serde::Serialize;

use crate::error::PlanError;

/// What to inspect.
#[derive(Debug, Clone, Default)]
pub struct InspectOptions {
    /// The directory holding TheRock artifacts (directories, .tar.zst or .tar.xz).
    pub artifact_dir: PathBuf,
}

/// What an artifact directory holds (`--json` serialises it as is;
/// docs/formats.md); field order is output order.
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    /// The document's version (docs/formats.md), as in every `--json`.
    pub schema: u32,
    /// The packaging mode `therock_manifest.json` records, as TheRock names it.
    pub mode: &'static str,
    /// The version `therock_manifest.json` records.
    pub version: Option<String>,
    /// The targets of `share/therock/dist_info.json`, when it can be read.
    pub dist_amdgpu_targets: Option<Vec<String>>,
    /// The targets of the target-specific artifacts.
    pub raw_targets: Vec<String>,
    /// The base targets those stand for.
    pub base_targets: Vec<String>,
    /// The artifacts by name, then component.
    pub artifacts: Vec<NameGroup>,
    /// The counts of the merged tree.
    pub merged: Counts,
    /// What the reader skipped or the merge noticed, one sentence each.
    pub warnings: Vec<String>,
}

/// The artifacts of one name.
#[derive(Debug, Clone, Serialize)]
pub struct NameGroup {
    /// The artifact name (`core-hip`).
    pub name: String,
    /// Its components.
    pub components: Vec<ComponentGroup>,
}

/// The artifacts of one name and component.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentGroup {
    /// The component (`lib`, `dev`, ...).
    pub component: String,
    /// One row per target.
    pub targets: Vec<TargetRow>,
}

/// One artifact: its target and what it holds.
#[derive(Debug, Clone, Serialize)]
pub struct TargetRow {
    /// The target (`generic`, `gfx942`, ...).
    pub target: String,
    /// What it holds.
    #[serde(flatten)]
    pub counts: Counts,
}

/// How many entries of each kind, and the bytes of the files.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Counts {
    /// Regular files.
    pub files: u64,
    /// Directories.
    pub dirs: u64,
    /// Symbolic links.
    pub symlinks: u64,
    /// Bytes of the files.
    pub bytes: u64,
}

impl From<Stats> for Counts {
    fn from(s: Stats) -> Self {
        Self {
            files: s.files,
            dirs: s.dirs,
            symlinks: s.symlinks,
            bytes: s.bytes,
        }
    }
}

/// `therock-package inspect`: what the artifact directory holds.
pub fn inspect(options: &InspectOptions) -> Result<InspectReport, PlanError> {
    let dir = ArtifactDir::open(&options.artifact_dir)?;
    let manifest = dir.therock_manifest()?;
    let mut warnings: Vec<String> = dir.notices().iter().map(ToString::to_string).collect();
    let dist_amdgpu_targets = match dir.dist_info() {
        Ok(d) => Some(d.targets),
        Err(e) => {
            warnings.push(fs_helpers::error_chain::Chain(&e).to_string());
            None
        }
    };
    let catalog = dir
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .map_err(|source| PlanError::Merge {
            artifact_dir: options.artifact_dir.clone(),
            source,
        })?;
    warnings.extend(catalog.warnings().iter().map(ToString::to_string));

    let mut groups: BTreeMap<&str, BTreeMap<&str, Vec<TargetRow>>> = BTreeMap::new();
    for a in dir.artifacts() {
        let n = a.name();
        groups
            .entry(n.name())
            .or_default()
            .entry(n.component())
            .or_default()
            .push(TargetRow {
                target: n.target().to_owned(),
                counts: a.stats().into(),
            });
    }
    let raw_targets: Vec<String> = dir
        .artifacts()
        .iter()
        .filter(|a| !a.name().is_generic())
        .map(|a| a.name().target().to_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let base_targets = dist_info::target::base_targets(&raw_targets);
    Ok(InspectReport {
        schema: 1,
        mode: manifest.mode.therock_name(),
        version: manifest.version,
        dist_amdgpu_targets,
        base_targets,
        raw_targets,
        artifacts: groups
            .into_iter()
            .map(|(name, components)| NameGroup {
                name: name.to_owned(),
                components: components
                    .into_iter()
                    .map(|(component, targets)| ComponentGroup {
                        component: component.to_owned(),
                        targets,
                    })
                    .collect(),
            })
            .collect(),
        merged: catalog.stats().into(),
        warnings,
    })
}
