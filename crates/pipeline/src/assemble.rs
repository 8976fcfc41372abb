//! `therock-package assemble SHARD_DIR... --dest-dir OUT`: joins the
//! outputs of `build --shard K/N` into one release (docs/releasing.md).
//!
//! Shard outputs are untrusted (they come from other runners;
//! docs/behaviour.md#what-assemble-trusts): every path a manifest names
//! must be a clean relative path inside the shard's `dist/`, every package
//! must be the regular file with the hash its manifest records, and the
//! `rocm` sdists' document is planned again from the packages delivered
//! (their kinds, targets or families, the core wheel's nonce), the version
//! and the family lists; a manifest whose copy differs is refused. The
//! shards of each platform leg must come from one plan and cover it
//! exactly once; every shard must agree on what the `rocm` sdist says.
//! The release is staged beside `OUT/dist`, gets its `rocm` sdists and its
//! index, must pass `verify` (with the `--policy`/`--exclude` given), and
//! only then appears as `OUT/dist` in one step.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use dist_info::document::DistInfo;
use dist_info::families::Family;
use dist_info::package::{Package, PackageKind};
use layout::{SelectorBasis, SelectorPlan, plan_selectors};
use pypa_formats::member::check_relpath;
use pypa_formats::version::Version;
use serde::Serialize;
use wheel_writer::{WheelReader, WriteOptions, limits};

use crate::error::{AssembleError, Disagreement, IoAction, ReleaseValue, cannot};

/// What assembling returns.
type Result<T, E = AssembleError> = std::result::Result<T, E>;
use crate::execute::write_sdist;
use crate::index::{IndexLayout, IndexOptions, index};
use crate::python;
use crate::shard::{MANIFEST_NAME, ShardId, ShardManifest, slash_path};
use crate::staging::{Staging, StagingCleanup};
use fs_helpers::file_hash::sha256_file;
use pypa_formats::core_metadata::HeaderBlock;
use release_check::{ElfLinks, LinkRules, VerifyOptions};
use wheel_writer::dist_dir::list_packages;

/// What `assemble` joins, and where.
#[derive(Debug, Clone, Default)]
pub struct AssembleOptions {
    /// The `dest_dir` of every shard build of the release (one or more
    /// platforms, each split into its own shards).
    pub shard_dirs: Vec<PathBuf>,
    /// Where the release's `dist/` is written (it must be new or empty).
    pub dest_dir: PathBuf,
    /// What the verify step allows.
    pub link_rules: LinkRules,
    /// Refuse a release whose only failing check is `elf-links`, as every
    /// other failing check is refused; without it such a release is
    /// written and [`AssembleReport::elf_links`] says what fails, as
    /// `build` does (docs/behaviour.md#build-link-check).
    pub strict: bool,
    /// Who removes the staging directory if a signal ends the process
    /// mid-assembly.
    pub cleanup: Option<StagingCleanup>,
}

/// One shard's output, its manifest checked against its `dist/`.
#[derive(Debug)]
struct ShardOutput {
    dir: PathBuf,
    id: ShardId,
    manifest: ShardManifest,
}

impl ShardOutput {
    /// Reads `{dir}/shard.json` and checks that `{dir}/dist` holds exactly
    /// the packages it lists, with their hashes.
    fn read(dir: &Path) -> Result<Self> {
        let manifest = ShardManifest::read(dir)?;
        check_manifest_paths(&dir.join(MANIFEST_NAME), &manifest)?;
        let id: ShardId = manifest
            .shard
            .parse()
            .map_err(|reason| AssembleError::BadShardId {
                path: dir.join(MANIFEST_NAME),
                reason,
            })?;
        let dist = dir.join("dist");
        let found: Vec<String> = if dist.is_dir() {
            let listing = list_packages(&dist).map_err(cannot(IoAction::List, &dist))?;
            if let Some(refused) = listing.refused.first() {
                return Err(AssembleError::ShardHoldsForeign {
                    id,
                    dir: dir.to_owned(),
                    source: refused.clone(),
                });
            }
            listing
                .packages
                .iter()
                .map(|p| slash_path(p.strip_prefix(&dist).expect("listed under dist")))
                .collect()
        } else {
            Vec::new()
        };
        for package in &manifest.packages {
            let path = dist.join(&package.path);
            if !found.contains(&package.path) {
                return Err(AssembleError::ShardPackageMissing {
                    path,
                    id,
                    dir: dir.to_owned(),
                });
            }
            let sha = sha256_file(&path)
                .map(|digest| digest.hex())
                .map_err(cannot(IoAction::Read, &path))?;
            if sha != package.sha256 {
                return Err(AssembleError::ShardPackageChanged {
                    path,
                    found: sha,
                    recorded: package.sha256.clone(),
                });
            }
        }
        if let Some(extra) = found
            .iter()
            .find(|f| !manifest.packages.iter().any(|p| &p.path == *f))
        {
            return Err(AssembleError::ShardPackageExtra {
                path: dist.join(extra),
                id,
            });
        }
        Ok(Self {
            dir: dir.to_owned(),
            id,
            manifest,
        })
    }
}

/// Refuses a manifest naming a path that is not a clean relative path
/// inside the shard's `dist/` (docs/behaviour.md#what-assemble-trusts):
/// such a path is unsafe, whatever is on disk.
fn check_manifest_paths(path: &Path, manifest: &ShardManifest) -> Result<()> {
    let unsafe_path = |what: &'static str, rel: &str, problem| AssembleError::UnsafeShardPath {
        manifest: path.to_owned(),
        what,
        relpath: rel.to_owned(),
        problem,
    };
    for package in &manifest.packages {
        check_relpath(&package.path).map_err(|p| unsafe_path("the package", &package.path, p))?;
    }
    for selector in &manifest.selectors {
        if !selector.subdir.is_empty() {
            check_relpath(&selector.subdir)
                .map_err(|p| unsafe_path("the rocm sdist directory", &selector.subdir, p))?;
        }
    }
    Ok(())
}

/// The shards of one platform, all of one plan.
#[derive(Debug)]
struct Leg<'a> {
    platform_tag: String,
    shards: Vec<&'a ShardOutput>,
}

impl Leg<'_> {
    fn first(&self) -> &ShardManifest {
        &self.shards[0].manifest
    }
}

/// Groups shards by platform and checks each group: one plan, one shard
/// count, every shard exactly once.
fn legs(shards: &[ShardOutput]) -> Result<Vec<Leg<'_>>> {
    let mut by_platform: BTreeMap<&str, Vec<&ShardOutput>> = BTreeMap::new();
    for shard in shards {
        by_platform
            .entry(&shard.manifest.platform_tag)
            .or_default()
            .push(shard);
    }
    by_platform
        .into_iter()
        .map(|(platform_tag, shards)| {
            check_one_plan(platform_tag, &shards)?;
            check_coverage(platform_tag, &shards)?;
            Ok(Leg {
                platform_tag: platform_tag.to_owned(),
                shards,
            })
        })
        .collect()
}

/// The plan most shards of a platform come from (ties: the first given)
/// is the plan; a shard of any other plan is foreign.
fn check_one_plan(platform_tag: &str, shards: &[&ShardOutput]) -> Result<()> {
    let mut votes: Vec<(&str, usize)> = Vec::new();
    for shard in shards {
        match votes.iter_mut().find(|(p, _)| *p == shard.manifest.plan) {
            Some((_, n)) => *n += 1,
            None => votes.push((&shard.manifest.plan, 1)),
        }
    }
    let plan = votes
        .iter()
        .fold(votes[0], |best, &v| if v.1 > best.1 { v } else { best })
        .0;
    let reference = shards
        .iter()
        .find(|s| s.manifest.plan == plan)
        .expect("the plan has a shard");
    if let Some(foreign) = shards.iter().find(|s| s.manifest.plan != plan) {
        return Err(AssembleError::ForeignShard(Box::new(
            crate::error::ForeignShard {
                dir: foreign.dir.clone(),
                id: foreign.id,
                plan: foreign.manifest.plan.clone(),
                reference_dir: reference.dir.clone(),
                reference_id: reference.id,
                reference_plan: plan.to_owned(),
                platform_tag: platform_tag.to_owned(),
            },
        )));
    }
    if let Some(other) = shards.iter().find(|s| s.id.count != reference.id.count) {
        return Err(AssembleError::ShardCountDiffers {
            dir: other.dir.clone(),
            id: other.id,
            reference_dir: reference.dir.clone(),
            reference_id: reference.id,
            platform_tag: platform_tag.to_owned(),
        });
    }
    Ok(())
}

/// Every shard `1..=N` of the plan exactly once.
fn check_coverage(platform_tag: &str, shards: &[&ShardOutput]) -> Result<()> {
    let count = shards[0].id.count;
    let plan = &shards[0].manifest.plan;
    let mut seen: BTreeMap<usize, &Path> = BTreeMap::new();
    for shard in shards {
        if let Some(first) = seen.insert(shard.id.index, &shard.dir) {
            return Err(AssembleError::ShardTwice {
                id: shard.id,
                platform_tag: platform_tag.to_owned(),
                plan: plan.clone(),
                first: first.to_owned(),
                second: shard.dir.clone(),
            });
        }
    }
    let missing: Vec<ShardId> = (1..=count)
        .filter(|k| !seen.contains_key(k))
        .filter_map(|k| ShardId::new(k, count))
        .collect();
    if !missing.is_empty() {
        return Err(AssembleError::ShardsMissing {
            platform_tag: platform_tag.to_owned(),
            plan: plan.clone(),
            count,
            missing,
        });
    }
    Ok(())
}

/// The first value two manifests disagree on among those the shared `rocm`
/// sdists and the packages' bytes depend on.
fn disagreement(a: &ShardManifest, b: &ShardManifest) -> Option<Disagreement> {
    differing(a, b).map(|(what, first, other)| Disagreement { what, first, other })
}

/// [`disagreement`] as (what, one's, the other's).
fn differing(a: &ShardManifest, b: &ShardManifest) -> Option<(ReleaseValue, String, String)> {
    let given = |value: &Option<String>| {
        value
            .as_ref()
            .map_or_else(|| "(not given)".to_owned(), |v| format!("`{v}`"))
    };
    let epoch = |value: Option<u64>| value.map_or_else(|| "(unset)".to_owned(), |v| v.to_string());
    let mode = |m: &ShardManifest| format!("{:?}", m.mode).to_lowercase();
    if a.mode != b.mode {
        return Some((ReleaseValue::Mode, mode(a), mode(b)));
    }
    if a.version != b.version {
        return Some((ReleaseValue::Version, a.version.clone(), b.version.clone()));
    }
    if a.linux_amdgpu_families != b.linux_amdgpu_families {
        return Some((
            ReleaseValue::LinuxFamilies,
            given(&a.linux_amdgpu_families),
            given(&b.linux_amdgpu_families),
        ));
    }
    if a.windows_amdgpu_families != b.windows_amdgpu_families {
        return Some((
            ReleaseValue::WindowsFamilies,
            given(&a.windows_amdgpu_families),
            given(&b.windows_amdgpu_families),
        ));
    }
    if a.source_date_epoch != b.source_date_epoch {
        return Some((
            ReleaseValue::SourceDateEpoch,
            epoch(a.source_date_epoch),
            epoch(b.source_date_epoch),
        ));
    }
    if a.compression_level != b.compression_level {
        return Some((
            ReleaseValue::CompressionLevel,
            a.compression_level.to_string(),
            b.compression_level.to_string(),
        ));
    }
    if a.metadata != b.metadata {
        let text = |m: &ShardManifest| {
            serde_json::to_string(&m.metadata).expect("the metadata serialises")
        };
        return Some((ReleaseValue::Metadata, text(a), text(b)));
    }
    if a.selectors != b.selectors {
        let subdirs = |m: &ShardManifest| {
            m.selectors
                .iter()
                .map(|s| format!("dist/{}", s.subdir))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some((ReleaseValue::SelectorDocuments, subdirs(a), subdirs(b)));
    }
    None
}

/// Every shard must agree with the others of its plan, and the legs with
/// each other, on everything the shared `rocm` sdists and the packages'
/// bytes depend on.
fn check_legs_agree(legs: &[Leg<'_>]) -> Result<()> {
    for leg in legs {
        let (first, rest) = leg.shards.split_first().expect("a leg has a shard");
        for shard in rest {
            if let Some(disagreement) = disagreement(&first.manifest, &shard.manifest) {
                return Err(AssembleError::ShardsDisagree(Box::new(
                    crate::error::ShardsDisagree {
                        first_dir: first.dir.clone(),
                        first_id: first.id,
                        other_dir: shard.dir.clone(),
                        other_id: shard.id,
                        platform_tag: leg.platform_tag.clone(),
                        plan: first.manifest.plan.clone(),
                        disagreement,
                    },
                )));
            }
        }
    }
    let (first, rest) = legs.split_first().expect("at least one shard");
    for leg in rest {
        if let Some(disagreement) = disagreement(first.first(), leg.first()) {
            return Err(AssembleError::LegsDisagree(Box::new(
                crate::error::LegsDisagree {
                    first_platform: first.platform_tag.clone(),
                    first_dir: first.shards[0].dir.clone(),
                    other_platform: leg.platform_tag.clone(),
                    other_dir: leg.shards[0].dir.clone(),
                    disagreement,
                },
            )));
        }
    }
    Ok(())
}

/// The `rocm` sdists of one leg, planned again from what its shards
/// delivered (docs/behaviour.md#what-assemble-trusts): the kinds and
/// targets (or families) of its wheels as their METADATA names them, the
/// nonce of its core wheel's document, and the version and family lists,
/// which `verify` then checks against the packages. Every shard's copy
/// must be this one.
fn leg_selectors(leg: &Leg<'_>) -> Result<Vec<SelectorPlan>> {
    let manifest = leg.first();
    let manifest_path = leg.shards[0].dir.join(MANIFEST_NAME);
    let version: Version =
        manifest
            .version
            .parse()
            .map_err(|source| AssembleError::ShardVersion {
                manifest: manifest_path,
                version: manifest.version.clone(),
                source,
            })?;
    let mut kinds = BTreeSet::new();
    let mut on_disk = BTreeSet::new();
    let mut nonce = None;
    let mut built = None;
    for shard in &leg.shards {
        for package in &shard.manifest.packages {
            #[allow(clippy::case_sensitive_file_extension_comparisons)]
            if !package.path.ends_with(".whl") {
                continue;
            }
            let path = shard.dir.join("dist").join(&package.path);
            let cannot_read = |source| AssembleError::ReadShardWheel {
                path: path.clone(),
                id: shard.id,
                dir: shard.dir.clone(),
                source: Box::new(source),
            };
            let mut wheel = WheelReader::open(&path).map_err(cannot_read)?;
            let member = format!("{}/METADATA", wheel.dist_info_dir());
            let metadata = wheel
                .read_member(&member, limits::METADATA)
                .map_err(cannot_read)?;
            let name = HeaderBlock::parse(&metadata)
                .and_then(|block| block.get_line("Name").map(|v| v.map(str::to_owned)))
                .map_err(|source| AssembleError::CoreMetadata {
                    path: path.clone(),
                    member,
                    source,
                })?
                .unwrap_or_default();
            let Some((kind, target)) = Package::identify(manifest.mode, &name) else {
                return Err(AssembleError::UnknownShardPackage {
                    path,
                    name,
                    mode: format!("{:?}", manifest.mode).to_lowercase(),
                    id: shard.id,
                    dir: shard.dir.clone(),
                });
            };
            kinds.insert(kind);
            on_disk.extend(target);
            if kind == PackageKind::Core {
                let pure = Package::new(kind, manifest.mode, &dist_info::nonce::Nonce::NONE)
                    .pure_package(None)
                    .expect("core has a pure package")
                    .expect("core has a pure package");
                let member = format!("{pure}/{}", dist_info::document::FILE_NAME);
                let bytes = wheel
                    .read_member(&member, limits::DOCUMENT)
                    .map_err(cannot_read)?;
                let doc =
                    DistInfo::from_json(&bytes).map_err(|source| AssembleError::ShardDistInfo {
                        path: path.clone(),
                        member,
                        source,
                    })?;
                nonce = Some(doc.nonce);
                built = doc
                    .selector
                    .target_families
                    .map(|f| (f.available, path.clone()));
            }
        }
    }
    let nonce = nonce.ok_or_else(|| AssembleError::NoCoreShard {
        platform_tag: leg.platform_tag.clone(),
    })?;
    let mut on_disk: Vec<String> = on_disk.into_iter().collect();
    // The device wheels name base targets only; the targets as built
    // (`gfx942:xnack+`), which the document lists for the reference's
    // `AVAILABLE_TARGET_FAMILIES`, come from the core wheel's document when
    // no release list decides, and must be exactly the wheels' targets.
    let lists_given =
        manifest.linux_amdgpu_families.is_some() || manifest.windows_amdgpu_families.is_some();
    if manifest.mode == dist_info::package::Mode::Kpack
        && !lists_given
        && let Some((built, core)) = built
    {
        if dist_info::target::base_targets(&built) != on_disk
            || !built.iter().all(|t| dist_info::target::is_target_id(t))
        {
            return Err(AssembleError::ShardBuiltTargets {
                core,
                built,
                wheels: on_disk,
            });
        }
        on_disk = built;
    }
    let (linux, windows) = family_lists(leg.shards[0])?;
    plan_selectors(&SelectorBasis {
        mode: manifest.mode,
        version: &version,
        on_disk: &on_disk,
        packages: &kinds,
        linux_families: linux.as_deref(),
        windows_families: windows.as_deref(),
        nonce: &nonce,
    })
    .map_err(|source| AssembleError::PlanSelectors {
        platform_tag: leg.platform_tag.clone(),
        source: Box::new(source),
    })
}

/// A family list a manifest gives, if any.
type FamilyList = Option<Vec<Family>>;

/// The Linux and Windows family lists a shard's manifest gives, each
/// read as a list of families (a manifest is untrusted input).
fn family_lists(shard: &ShardOutput) -> Result<(FamilyList, FamilyList)> {
    let read = |platform: &'static str, list: &Option<String>| {
        list.as_deref()
            .map(|text| {
                Family::parse_list(text).map_err(|source| AssembleError::ShardFamilies {
                    manifest: shard.dir.join(MANIFEST_NAME),
                    platform,
                    list: text.to_owned(),
                    source: Box::new(source),
                })
            })
            .transpose()
    };
    Ok((
        read("Linux", &shard.manifest.linux_amdgpu_families)?,
        read("Windows", &shard.manifest.windows_amdgpu_families)?,
    ))
}

/// Refuses every shard whose manifest carries another `rocm` sdist
/// document than `planned`, naming the first field that differs.
fn check_selectors(leg: &Leg<'_>, planned: &[SelectorPlan]) -> Result<()> {
    for shard in &leg.shards {
        let manifest = shard.dir.join(MANIFEST_NAME);
        let carried = &shard.manifest.selectors;
        let subdirs = |s: &mut dyn Iterator<Item = &str>| {
            s.map(|d| format!("dist/{d}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let carried_dirs = subdirs(&mut carried.iter().map(|s| s.subdir.as_str()));
        let planned_dirs = subdirs(&mut planned.iter().map(|s| s.subdir.as_str()));
        if carried_dirs != planned_dirs {
            return Err(AssembleError::SelectorDirsDiffer {
                manifest,
                carried: carried_dirs,
                planned: planned_dirs,
            });
        }
        for (carried, planned) in carried.iter().zip(planned) {
            if carried.dist_info_json.as_bytes() == planned.dist_info_json.as_slice() {
                continue;
            }
            return Err(AssembleError::SelectorDiffers {
                manifest,
                subdir: carried.subdir.clone(),
                differences: differences(&carried.dist_info_json, &planned.dist_info_json),
            });
        }
    }
    Ok(())
}

/// Which top-level fields of two JSON documents differ, in key order,
/// for an error message.
fn differences(carried: &str, planned: &[u8]) -> String {
    let Ok(serde_json::Value::Object(a)) = serde_json::from_str::<serde_json::Value>(carried)
    else {
        return "it is not a JSON object".to_owned();
    };
    let Ok(serde_json::Value::Object(b)) = serde_json::from_slice::<serde_json::Value>(planned)
    else {
        return "a different document".to_owned();
    };
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("`{k}`"))
        .collect();
    match differ.len() {
        0 => "the same fields in other bytes".to_owned(),
        1 => format!("{} differs", differ[0]),
        _ => format!("{} differ", differ.join(", ")),
    }
}

/// `therock-package assemble`.
pub fn assemble(args: &AssembleOptions) -> Result<AssembleReport> {
    let shards = args
        .shard_dirs
        .iter()
        .map(|dir| ShardOutput::read(dir))
        .collect::<Result<Vec<_>>>()?;
    let legs = legs(&shards)?;
    check_legs_agree(&legs)?;
    let mut selectors = Vec::new();
    for leg in &legs {
        let planned = leg_selectors(leg)?;
        check_selectors(leg, &planned)?;
        if selectors.is_empty() {
            selectors = planned;
        }
    }
    let dist = args.dest_dir.join("dist");
    if fs::read_dir(&dist).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(AssembleError::DestinationNotEmpty { dist });
    }
    let staging = Staging::create(&dist, None, args.cleanup.as_ref())?;
    // `dist/`, without the trailing separator `join("")` leaves.
    let root: PathBuf = staging.dir("")?.components().collect();
    let mut staged = Vec::new();
    let mut placed: BTreeMap<&str, (&str, &Path)> = BTreeMap::new();
    for shard in &shards {
        for package in &shard.manifest.packages {
            if let Some((sha, other)) = placed.insert(&package.path, (&package.sha256, &shard.dir))
            {
                if sha == package.sha256 {
                    continue;
                }
                return Err(AssembleError::ConflictingPackages {
                    first: other.to_owned(),
                    second: shard.dir.clone(),
                    relpath: package.path.clone(),
                });
            }
            let from = shard.dir.join("dist").join(&package.path);
            let to = root.join(&package.path);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(cannot(IoAction::Create, parent))?;
            }
            fs::hard_link(&from, &to)
                .or_else(|_| fs::copy(&from, &to).map(drop))
                .map_err(|source| AssembleError::Copy {
                    from,
                    to: to.clone(),
                    source,
                })?;
            staged.push(to);
        }
    }
    let leg = legs[0].first();
    let options = WriteOptions::default()
        .with_compression(leg.compression())
        .with_source_date_epoch(leg.source_date_epoch);
    let sdist_files = python::sdist_files();
    for selector in &selectors {
        let dir = staging.dir(&selector.subdir)?;
        staged.push(write_sdist(
            &leg.version,
            &leg.metadata,
            &selector.dist_info_json,
            &sdist_files,
            &dir,
            &options,
        )?);
    }
    let has_platform = |windows: bool| {
        legs.iter()
            .any(|l| dist_info::requirement::Platform::is_windows_tag(&l.platform_tag) == windows)
    };
    let (linux, windows) = family_lists(legs[0].shards[0])?;
    let report = release_check::verify(&VerifyOptions {
        dirs: vec![root.clone()],
        linux_families: linux.filter(|_| has_platform(false)),
        windows_families: windows.filter(|_| has_platform(true)),
        link_rules: args.link_rules.clone(),
    })?;
    // Unresolved links alone do not stop a build; they stop an assembly
    // only when asked to, like build's `--strict`.
    if !report.ok() && (args.strict || !report.fails_only_elf_links()) {
        return Err(AssembleError::AssembledReleaseFailsVerify {
            report: Box::new(report),
        });
    }
    let per_family = shards
        .iter()
        .flat_map(|s| &s.manifest.packages)
        .any(|p| p.path.contains('/'));
    index(&IndexOptions {
        dir: root.clone(),
        layout: IndexLayout::Flat,
        per_family,
    })?;
    let files = staging.commit(&staged)?;
    Ok(AssembleReport {
        dist_dir: dist,
        elf_links: report.elf_links,
        files,
        platforms: legs
            .iter()
            .map(|leg| AssembledPlatform {
                plan: leg.first().plan.clone(),
                platform_tag: leg.platform_tag.clone(),
                shards: leg.shards.len(),
            })
            .collect(),
        schema: 1,
    })
}

/// What `assemble` joined (`--json` serialises it as is; docs/formats.md).
/// Fields are in key order, the order the document has always had.
#[derive(Debug, Clone, Serialize)]
pub struct AssembleReport {
    /// `DEST/dist`, the release.
    pub dist_dir: PathBuf,
    /// The release's `elf-links` check: when it fails (and `strict` was
    /// not asked for), the release was written all the same.
    pub elf_links: ElfLinks,
    /// Every file of the release.
    pub files: Vec<PathBuf>,
    /// Each platform's shards.
    pub platforms: Vec<AssembledPlatform>,
    /// The document's version.
    pub schema: u32,
}

/// The shards of one platform that `assemble` joined.
#[derive(Debug, Clone, Serialize)]
pub struct AssembledPlatform {
    /// The digest of the plan every shard was built from.
    pub plan: String,
    /// The wheel platform tag.
    pub platform_tag: String,
    /// How many shards.
    pub shards: usize,
}
