//! Sharded builds (docs/releasing.md): the package set split into `N`
//! shards of balanced input bytes, `plan --shards N`, and the manifest
//! `build --shard K/N` leaves beside its `dist/` for `assemble`.
//!
//! Every shard plans the whole set from the same artifacts and flags, so
//! all shards agree on the split without talking to each other; the plan
//! digest in each manifest proves it.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use layout::{Action, DevelEntry, PackagePlan, Plan};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use wheel_writer::Compression;

use crate::error::{AssembleError, BuildError, IoAction, IoError, PlanError, cannot};
use crate::execute::Written;
use fs_helpers::file_hash::sha256_file;

/// The file a shard build writes beside its `dist/`.
pub(crate) const MANIFEST_NAME: &str = "shard.json";

/// The largest shard manifest read (its package list and the documents
/// of the plan are some KiB).
pub(crate) const MAX_MANIFEST: u64 = 16 << 20;

/// The manifest format this build writes and reads.
const MANIFEST_FORMAT: u32 = 1;

/// One shard of `count`: `index` is 1-based (`2/3`); parsed from `K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShardId {
    /// 1 ..= `count`.
    pub(crate) index: usize,
    /// How many shards the set is split into.
    pub(crate) count: usize,
}

impl ShardId {
    /// Shard `index` of `count` (1-based), if `1 <= index <= count`.
    pub fn new(index: usize, count: usize) -> Option<Self> {
        (index >= 1 && index <= count).then_some(Self { index, count })
    }

    /// Which shard, from 1.
    pub fn index(self) -> usize {
        self.index
    }

    /// How many shards the set is split into.
    pub fn count(self) -> usize {
        self.count
    }
}

/// A text that is no shard `K/N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardIdError {
    /// No `/`.
    #[error("`{text}` is not K/N (for example 2/4)")]
    NotKOfN {
        /// The text as given.
        text: String,
    },
    /// `K` or `N` is no number.
    #[error("`{text}` is not K/N: `{part}` is not a number")]
    NotANumber {
        /// The text as given.
        text: String,
        /// The part that is no number.
        part: String,
    },
    /// `K` is 0 or more than `N`.
    #[error("`{text}` is not K/N with 1 <= K <= N (shards are numbered from 1)")]
    OutOfRange {
        /// The text as given.
        text: String,
    },
}

impl FromStr for ShardId {
    type Err = ShardIdError;

    fn from_str(text: &str) -> Result<Self, ShardIdError> {
        let (k, n) = text.split_once('/').ok_or_else(|| ShardIdError::NotKOfN {
            text: text.to_owned(),
        })?;
        let number = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| ShardIdError::NotANumber {
                    text: text.to_owned(),
                    part: s.to_owned(),
                })
        };
        let (index, count) = (number(k)?, number(n)?);
        if count == 0 || index == 0 || index > count {
            return Err(ShardIdError::OutOfRange {
                text: text.to_owned(),
            });
        }
        Ok(Self { index, count })
    }
}

impl fmt::Display for ShardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Splits items of the given weights into `count` bins of balanced total
/// weight: heaviest first (ties: the earlier item), each into the lightest
/// bin so far (ties: the one with fewer items, then the lower one, so no
/// bin stays empty while items remain). Returns the item indexes of each
/// bin, ascending. Deterministic: the same weights give the same split.
pub(crate) fn partition(weights: &[u64], count: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(weights[i]), i));
    let mut bins: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); count];
    for item in order {
        let lightest = (0..count)
            .min_by_key(|&b| (bins[b].0, bins[b].1.len(), b))
            .expect("at least one bin");
        bins[lightest].0 += weights[item];
        bins[lightest].1.push(item);
    }
    bins.into_iter()
        .map(|(_, mut items)| {
            items.sort_unstable();
            items
        })
        .collect()
}

/// How a package is named in plans and errors: `dist_name`, or
/// `{subdir}/{dist_name}` for a legacy family's directory.
pub(crate) fn package_label(package: &PackagePlan) -> String {
    if package.subdir.is_empty() {
        package.dist_name.clone()
    } else {
        format!("{}/{}", package.subdir, package.dist_name)
    }
}

/// Every artifact file a package reads: `(artifact, relpath, size)`.
fn inputs(package: &PackagePlan) -> impl Iterator<Item = (&str, &str, u64)> {
    let files = package.files.iter().filter_map(|f| match &f.action {
        Action::Copy { source } | Action::PatchSearchPath { source, .. } => Some(source),
        Action::Launcher { .. }
        | Action::Generated { .. }
        | Action::DevelTar
        | Action::DevelDigest => None,
    });
    let devel = package.devel_tree.iter().filter_map(|e| match e {
        DevelEntry::File { source, .. } => Some(source),
        _ => None,
    });
    files
        .chain(devel)
        .map(|s| (s.artifact.as_str(), s.relpath.as_str(), s.size))
}

/// The digest of a whole plan: its JSON, then every byte string the JSON
/// leaves out (generated files and the selectors' `_dist_info.json`).
/// Independent of where the artifacts are unpacked.
pub(crate) fn plan_digest(plan: &Plan) -> String {
    let mut hash = Sha256::new();
    hash.update(plan.to_json().as_bytes());
    for package in &plan.packages {
        for file in &package.files {
            if let Action::Generated { bytes, .. } = &file.action {
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(bytes);
            }
        }
        for entry in &package.devel_tree {
            if let DevelEntry::Generated { bytes, .. } = entry {
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(bytes);
            }
        }
    }
    for selector in &plan.selectors {
        hash.update((selector.dist_info_json.len() as u64).to_le_bytes());
        hash.update(&selector.dist_info_json);
    }
    format!("sha256:{:x}", hash.finalize())
}

/// One shard of a [`ShardPlan`]: an entry of the CI matrix.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixEntry {
    /// `K/N`, what `build --shard` takes.
    #[serde(serialize_with = "display")]
    pub shard: ShardId,
    /// The digest of the plan it belongs to.
    pub plan: String,
    /// The bytes its packages read from the artifacts.
    pub input_bytes: u64,
    /// Its packages in plan order: `dist_name`, or `{F}/dist_name` for a
    /// legacy family directory.
    pub packages: Vec<String>,
    /// The artifacts its packages read, sorted.
    pub artifacts: Vec<String>,
    /// Indexes into the plan's packages.
    #[serde(skip)]
    members: Vec<usize>,
}

fn display<S: serde::Serializer>(id: &ShardId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(id)
}

/// A plan split into shards.
#[derive(Debug, Clone, Serialize)]
pub struct ShardPlan {
    /// One entry per shard: the CI matrix (`{"include": [...]}`).
    pub include: Vec<MatrixEntry>,
}

impl ShardPlan {
    /// Splits `plan`'s packages into `count` shards: every package is a
    /// unit (a device wheel per target, a legacy libraries wheel per
    /// family, core, devel and profiler each alone) weighed by the bytes
    /// it reads.
    pub(crate) fn new(plan: &Plan, count: usize) -> Result<Self, PlanError> {
        let packages = plan.packages.len();
        if count == 0 {
            return Err(PlanError::NoShards);
        }
        if count > packages {
            return Err(PlanError::TooManyShards { count, packages });
        }
        let weights: Vec<u64> = plan
            .packages
            .iter()
            .map(|p| inputs(p).map(|(_, _, size)| size).sum())
            .collect();
        let digest = plan_digest(plan);
        let include = partition(&weights, count)
            .into_iter()
            .enumerate()
            .map(|(i, members)| {
                let artifacts: BTreeSet<&str> = members
                    .iter()
                    .flat_map(|&m| inputs(&plan.packages[m]).map(|(a, _, _)| a))
                    .collect();
                MatrixEntry {
                    shard: ShardId {
                        index: i + 1,
                        count,
                    },
                    plan: digest.clone(),
                    input_bytes: members.iter().map(|&m| weights[m]).sum(),
                    packages: members
                        .iter()
                        .map(|&m| package_label(&plan.packages[m]))
                        .collect(),
                    artifacts: artifacts.into_iter().map(str::to_owned).collect(),
                    members,
                }
            })
            .collect();
        Ok(Self { include })
    }

    /// The plan of one shard: its packages, no selector (`assemble`
    /// writes the `rocm` sdists).
    pub(crate) fn select(&self, plan: &Plan, id: ShardId) -> Plan {
        let shard = &self.include[id.index - 1];
        let mut selected = plan.clone();
        selected.packages = shard
            .members
            .iter()
            .map(|&m| plan.packages[m].clone())
            .collect();
        selected.selectors.clear();
        selected
    }

    /// The digest of the inputs shard `id` reads: their artifact, path and
    /// size, sorted (the listing, not the bytes: hashing the bytes would
    /// read every input twice; the packages' sha256 stand for the content).
    pub(crate) fn inputs_digest(&self, plan: &Plan, id: ShardId) -> String {
        let mut listing: Vec<(&str, &str, u64)> = self.include[id.index - 1]
            .members
            .iter()
            .flat_map(|&m| inputs(&plan.packages[m]))
            .collect();
        listing.sort_unstable();
        listing.dedup();
        let mut hash = Sha256::new();
        for (artifact, relpath, size) in listing {
            hash.update(format!("{artifact}\t{relpath}\t{size}\n").as_bytes());
        }
        format!("sha256:{:x}", hash.finalize())
    }
}

/// A `rocm` selector sdist as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SelectorRecord {
    /// The sub-directory of `dist/` it is written to.
    pub(crate) subdir: String,
    /// The `_dist_info.json` it carries.
    pub(crate) dist_info_json: String,
}

/// A package a shard wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PackageRecord {
    /// Its path below `dist/` (`/`-separated).
    pub(crate) path: String,
    /// Its sha256, hex.
    pub(crate) sha256: String,
    /// Its size in bytes.
    pub(crate) size: u64,
}

/// `shard.json`: what one `build --shard K/N` wrote, and from what
/// (docs/formats.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardManifest {
    /// The manifest format (1).
    pub(crate) format: u32,
    /// `K/N`.
    pub(crate) shard: String,
    /// The digest of the whole plan ([`plan_digest`]).
    pub(crate) plan: String,
    /// The digest of the inputs this shard read.
    pub(crate) inputs: String,
    /// `legacy` or `kpack`.
    pub(crate) mode: dist_info::package::Mode,
    /// The version of every package.
    pub(crate) version: String,
    /// The wheel platform tag of the plan.
    pub(crate) platform_tag: String,
    /// The families the Linux release offers, `;`-separated
    /// ([`Family::join`](dist_info::families::Family::join)), if a list
    /// was given.
    pub(crate) linux_amdgpu_families: Option<String>,
    /// The families the Windows release offers, the same way.
    pub(crate) windows_amdgpu_families: Option<String>,
    /// `SOURCE_DATE_EPOCH` of the build, if set.
    pub(crate) source_date_epoch: Option<u64>,
    /// The deflate level of the packages (0: stored).
    pub(crate) compression_level: u32,
    /// The descriptive metadata of every package (the metadata file, the
    /// licence and project URLs given, over the defaults), which the
    /// `rocm` sdists carry too.
    pub(crate) metadata: dist_info::project_metadata::ProjectMetadata,
    /// The plan's `rocm` sdists, for `assemble` to write.
    pub(crate) selectors: Vec<SelectorRecord>,
    /// The packages written, sorted by path.
    pub(crate) packages: Vec<PackageRecord>,
}

/// What a shard build knows besides the plan, for its manifest.
#[derive(Debug, Clone)]
pub(crate) struct ShardSettings {
    /// The Linux family list, `;`-separated.
    pub(crate) linux_families: Option<String>,
    /// The Windows family list, `;`-separated.
    pub(crate) windows_families: Option<String>,
    /// The timestamp of every archive member.
    pub(crate) source_date_epoch: Option<u64>,
    /// The wheel codec.
    pub(crate) compression: Compression,
}

impl ShardManifest {
    /// The manifest of shard `id` of `plan`, which wrote `written`.
    pub(crate) fn new(
        plan: &Plan,
        shards: &ShardPlan,
        id: ShardId,
        settings: &ShardSettings,
        dist: &Path,
        written: &[Written],
    ) -> Result<Self, BuildError> {
        let mut packages = written
            .iter()
            .map(|w| {
                let rel = w
                    .path
                    .strip_prefix(dist)
                    .map_err(|_| BuildError::OutsideDist {
                        path: w.path.clone(),
                        dist: dist.to_owned(),
                    })?;
                Ok(PackageRecord {
                    path: slash_path(rel),
                    sha256: sha256_file(&w.path)
                        .map(|digest| digest.hex())
                        .map_err(cannot(IoAction::Read, &w.path))?,
                    size: w.size,
                })
            })
            .collect::<Result<Vec<_>, BuildError>>()?;
        packages.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Self {
            format: MANIFEST_FORMAT,
            shard: id.to_string(),
            plan: shards.include[id.index - 1].plan.clone(),
            inputs: shards.inputs_digest(plan, id),
            mode: plan.mode,
            version: plan.version.clone(),
            platform_tag: plan.platform_tag.clone(),
            linux_amdgpu_families: settings.linux_families.clone(),
            windows_amdgpu_families: settings.windows_families.clone(),
            source_date_epoch: settings.source_date_epoch,
            compression_level: match settings.compression {
                Compression::Stored => 0,
                Compression::Deflate { level } => level,
            },
            metadata: plan.metadata.clone(),
            selectors: plan
                .selectors
                .iter()
                .map(|s| SelectorRecord {
                    subdir: s.subdir.clone(),
                    dist_info_json: String::from_utf8_lossy(&s.dist_info_json).into_owned(),
                })
                .collect(),
            packages,
        })
    }

    /// Writes the manifest into `dir` (a temporary file renamed into place).
    pub(crate) fn write(&self, dir: &Path) -> Result<PathBuf, IoError> {
        let path = dir.join(MANIFEST_NAME);
        let mut json = serde_json::to_string_pretty(self).expect("manifests serialise");
        json.push('\n');
        fs_helpers::atomic_write::write_atomic(&path, json.as_bytes())
            .map_err(cannot(IoAction::Write, &path))?;
        Ok(path)
    }

    /// Reads `{dir}/shard.json`: a regular file (never through a link, never
    /// a FIFO) of at most [`MAX_MANIFEST`] bytes, since shard outputs are
    /// untrusted (docs/verify.md#caps).
    pub(crate) fn read(dir: &Path) -> Result<Self, AssembleError> {
        use std::io::Read as _;
        let path = dir.join(MANIFEST_NAME);
        let read = || -> std::io::Result<String> {
            let file = wheel_writer::dist_dir::open_package(&path)?;
            let mut text = String::new();
            file.take(MAX_MANIFEST + 1).read_to_string(&mut text)?;
            if text.len() as u64 > MAX_MANIFEST {
                return Err(std::io::Error::other(format!(
                    "it is larger than the {MAX_MANIFEST} bytes a shard manifest may be"
                )));
            }
            Ok(text)
        };
        let text = read().map_err(|source| AssembleError::ReadShardManifest {
            path: path.clone(),
            source,
        })?;
        let manifest: Self =
            serde_json::from_str(&text).map_err(|source| AssembleError::BadShardManifest {
                path: path.clone(),
                source,
            })?;
        if manifest.format != MANIFEST_FORMAT {
            return Err(AssembleError::ShardManifestFormat {
                path,
                found: manifest.format,
                expected: MANIFEST_FORMAT,
            });
        }
        Ok(manifest)
    }

    /// The wheel codec the shard used.
    pub(crate) fn compression(&self) -> Compression {
        match self.compression_level {
            0 => Compression::Stored,
            level => Compression::Deflate { level },
        }
    }
}

/// A relative path with `/` separators.
pub(crate) fn slash_path(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_ids_parse_and_print() {
        let id: ShardId = "2/4".parse().unwrap();
        assert_eq!((id.index, id.count), (2, 4));
        assert_eq!(id.to_string(), "2/4");
        for bad in ["0/3", "4/3", "1/0", "3", "a/3", "1/b", ""] {
            assert!(bad.parse::<ShardId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn partition_balances_heaviest_first() {
        // 10 alone; 7+3 and 6+4 make two bins of 10.
        let bins = partition(&[3, 10, 6, 7, 4], 3);
        assert_eq!(bins, vec![vec![1], vec![0, 3], vec![2, 4]]);
        let loads: Vec<u64> = bins
            .iter()
            .map(|b| b.iter().map(|&i| [3, 10, 6, 7, 4][i]).sum())
            .collect();
        assert_eq!(loads, vec![10, 10, 10]);
    }

    #[test]
    fn partition_covers_every_item_once_and_is_deterministic() {
        let weights = [5, 5, 5, 0, 0, 9, 1, 1, 1, 1, 1];
        for count in 1..=weights.len() {
            let bins = partition(&weights, count);
            assert_eq!(bins, partition(&weights, count));
            assert_eq!(bins.len(), count);
            let mut all: Vec<usize> = bins.concat();
            all.sort_unstable();
            assert_eq!(all, (0..weights.len()).collect::<Vec<_>>());
            if count == weights.len() {
                assert!(bins.iter().all(|b| b.len() == 1), "{bins:?}");
            }
        }
    }
}
