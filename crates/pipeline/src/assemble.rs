//! `therock-package assemble SHARD_DIR... --dest-dir OUT`: joins the
//! outputs of `build --shard K/N` into one release (docs/releasing.md).
//!
//! The shards of each platform leg must come from one plan and cover it
//! exactly once; the legs must agree on what the `rocm` sdist says
//! (version and family lists). The release is staged beside `OUT/dist`,
//! gets its `rocm` sdists and its index, must pass `verify`, and only then
//! appears as `OUT/dist` in one step.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use wheel_writer::WriteOptions;

use crate::execute::write_sdist;
use crate::index::{self, IndexArgs};
use crate::python;
use crate::shard::{MANIFEST_NAME, ShardId, ShardManifest, slash_path};
use crate::staging::Staging;
use release_check::{VerifyArgs, list_packages, sha256_file};

/// `therock-package assemble`.
#[derive(Debug, Args)]
pub struct AssembleArgs {
    /// The `--dest-dir` of every `build --shard K/N` of the release (one
    /// or more platforms, each split into its own shards).
    #[arg(required = true, value_name = "SHARD_DIR")]
    shard_dirs: Vec<PathBuf>,
    /// Where the release's `dist/` is written (it must be new or empty).
    #[arg(long, value_name = "DIR")]
    dest_dir: PathBuf,
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
        let id: ShardId = manifest
            .shard
            .parse()
            .map_err(|e| anyhow::anyhow!("{}: shard {e}", dir.join(MANIFEST_NAME).display()))?;
        let dist = dir.join("dist");
        let found: Vec<String> = if dist.is_dir() {
            list_packages(&dist)
                .with_context(|| format!("cannot list {}", dist.display()))?
                .iter()
                .map(|p| slash_path(p.strip_prefix(&dist).expect("listed under dist")))
                .collect()
        } else {
            Vec::new()
        };
        for package in &manifest.packages {
            let path = dist.join(&package.path);
            if !found.contains(&package.path) {
                bail!(
                    "{} is missing: shard {id} in {} lists it in {MANIFEST_NAME}; rebuild the shard",
                    path.display(),
                    dir.display()
                );
            }
            let sha =
                sha256_file(&path).with_context(|| format!("cannot read {}", path.display()))?;
            if sha != package.sha256 {
                bail!(
                    "{} has sha256 {sha} but {MANIFEST_NAME} records {}: the shard's dist/ changed after its build; rebuild the shard",
                    path.display(),
                    package.sha256
                );
            }
        }
        if let Some(extra) = found
            .iter()
            .find(|f| !manifest.packages.iter().any(|p| &p.path == *f))
        {
            bail!(
                "{} is not one of the packages of shard {id} ({MANIFEST_NAME} does not list it; \
                 left there by another build?); build each shard into an empty --dest-dir",
                dist.join(extra).display()
            );
        }
        Ok(Self {
            dir: dir.to_owned(),
            id,
            manifest,
        })
    }
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
        bail!(
            "{} holds shard {} of another plan ({}) than {} (shard {}, plan {}), both {platform_tag}: \
             every shard of a platform must be built from the same artifacts and flags; \
             rebuild it, or leave it out if it belongs to another release",
            foreign.dir.display(),
            foreign.id,
            foreign.manifest.plan,
            reference.dir.display(),
            reference.id,
            plan
        );
    }
    if let Some(other) = shards.iter().find(|s| s.id.count != reference.id.count) {
        bail!(
            "{} is shard {} but {} is shard {} of the same {platform_tag} plan: \
             build every shard with the --shards count `plan` was given",
            other.dir.display(),
            other.id,
            reference.dir.display(),
            reference.id
        );
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
            bail!(
                "shard {} of the {platform_tag} plan {plan} is given twice: {} and {}; pass one of them",
                shard.id,
                first.display(),
                shard.dir.display()
            );
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "the {platform_tag} plan {plan} has {count} shards but shard {} {} missing; \
             pass the --dest-dir of `build --shard {}` too",
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            missing[0]
        );
    }
    Ok(())
}

/// The legs must agree on everything the shared `rocm` sdists and the
/// packages' bytes depend on.
fn check_legs_agree(legs: &[Leg<'_>]) -> Result<()> {
    let (first, rest) = legs.split_first().expect("at least one shard");
    let a = first.first();
    for leg in rest {
        let b = leg.first();
        let disagree = |what: &str, x: String, y: String| {
            anyhow::anyhow!(
                "the {} shards ({}) and the {} shards ({}) disagree on {what}: {x} and {y}; \
                 one release needs the same value on every platform",
                first.platform_tag,
                first.shards[0].dir.display(),
                leg.platform_tag,
                leg.shards[0].dir.display()
            )
        };
        let given = |value: &Option<String>| {
            value
                .as_ref()
                .map_or_else(|| "(not given)".to_owned(), |v| format!("`{v}`"))
        };
        let epoch =
            |value: Option<u64>| value.map_or_else(|| "(unset)".to_owned(), |v| v.to_string());
        if a.version != b.version {
            return Err(disagree(
                "the version",
                a.version.clone(),
                b.version.clone(),
            ));
        }
        if a.linux_amdgpu_families != b.linux_amdgpu_families {
            return Err(disagree(
                "--linux-amdgpu-families",
                given(&a.linux_amdgpu_families),
                given(&b.linux_amdgpu_families),
            ));
        }
        if a.windows_amdgpu_families != b.windows_amdgpu_families {
            return Err(disagree(
                "--windows-amdgpu-families",
                given(&a.windows_amdgpu_families),
                given(&b.windows_amdgpu_families),
            ));
        }
        if a.source_date_epoch != b.source_date_epoch {
            return Err(disagree(
                "SOURCE_DATE_EPOCH",
                epoch(a.source_date_epoch),
                epoch(b.source_date_epoch),
            ));
        }
        if a.compression_level != b.compression_level {
            return Err(disagree(
                "the compression level",
                a.compression_level.to_string(),
                b.compression_level.to_string(),
            ));
        }
        if a.metadata != b.metadata {
            let text = |m: &ShardManifest| {
                serde_json::to_string(&m.metadata).expect("the metadata serialises")
            };
            return Err(disagree("the package metadata", text(a), text(b)));
        }
        if a.selectors != b.selectors {
            let subdirs = |m: &ShardManifest| {
                m.selectors
                    .iter()
                    .map(|s| format!("dist/{}", s.subdir))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(disagree(
                "the rocm sdists' _dist_info.json",
                subdirs(a),
                subdirs(b),
            ));
        }
    }
    Ok(())
}

/// `therock-package assemble`.
pub fn assemble(args: &AssembleArgs) -> Result<String> {
    let shards = args
        .shard_dirs
        .iter()
        .map(|dir| ShardOutput::read(dir))
        .collect::<Result<Vec<_>>>()?;
    let legs = legs(&shards)?;
    check_legs_agree(&legs)?;
    let dist = args.dest_dir.join("dist");
    if fs::read_dir(&dist).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(
            "{} is not empty; assemble writes a whole release: give a new or empty --dest-dir",
            dist.display()
        );
    }
    let staging = Staging::create(&dist, None)?;
    let root = staging.dir("")?;
    let mut staged = Vec::new();
    let mut placed: BTreeMap<&str, (&str, &Path)> = BTreeMap::new();
    for shard in &shards {
        for package in &shard.manifest.packages {
            if let Some((sha, other)) = placed.insert(&package.path, (&package.sha256, &shard.dir))
            {
                if sha == package.sha256 {
                    continue;
                }
                bail!(
                    "{} and {} both hold dist/{} with different bytes; one release cannot offer both",
                    other.display(),
                    shard.dir.display(),
                    package.path
                );
            }
            let from = shard.dir.join("dist").join(&package.path);
            let to = root.join(&package.path);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            fs::hard_link(&from, &to)
                .or_else(|_| fs::copy(&from, &to).map(drop))
                .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
            staged.push(to);
        }
    }
    let leg = legs[0].first();
    let options = WriteOptions::default()
        .with_compression(leg.compression())
        .with_source_date_epoch(leg.source_date_epoch);
    let sdist_files = python::sdist_files();
    for selector in &leg.selectors {
        let dir = staging.dir(&selector.subdir)?;
        staged.push(write_sdist(
            &leg.version,
            &leg.metadata,
            selector.dist_info_json.as_bytes(),
            &sdist_files,
            &dir,
            &options,
        )?);
    }
    let has_platform = |windows: bool| {
        legs.iter()
            .any(|l| dist_info::requirement::Platform::is_windows_tag(&l.platform_tag) == windows)
    };
    let mut verify_argv = vec![root.display().to_string()];
    if let Some(list) = leg
        .linux_amdgpu_families
        .as_ref()
        .filter(|_| has_platform(false))
    {
        verify_argv.push(format!("--linux-amdgpu-families={list}"));
    }
    if let Some(list) = leg
        .windows_amdgpu_families
        .as_ref()
        .filter(|_| has_platform(true))
    {
        verify_argv.push(format!("--windows-amdgpu-families={list}"));
    }
    let report = release_check::verify(&crate::from_flags::<VerifyArgs>("verify", &verify_argv)?)?;
    if !report.ok() {
        bail!(
            "the assembled release fails verify, so nothing was written:\n{}",
            report.to_text()
        );
    }
    let per_family = shards
        .iter()
        .flat_map(|s| &s.manifest.packages)
        .any(|p| p.path.contains('/'));
    let mut index_argv = vec![root.display().to_string()];
    if per_family {
        index_argv.push("--per-family".to_owned());
    }
    index::index(&crate::from_flags::<IndexArgs>("index", &index_argv)?)?;
    let written = staging.commit(&staged)?;
    let mut out = String::new();
    for leg in &legs {
        let _ = writeln!(
            out,
            "{}: {} shards of plan {}",
            leg.platform_tag,
            leg.shards.len(),
            leg.first().plan
        );
    }
    let _ = writeln!(
        out,
        "assembled {} packages into {} (verified, indexed)",
        written.len(),
        dist.display()
    );
    Ok(out)
}
