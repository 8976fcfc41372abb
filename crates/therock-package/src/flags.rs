//! The flags of each command, and the library options they become: every
//! value parsed here (the `,`/`;` family lists, versions, the nonce), so
//! the libraries take typed values only.
//!
//! Defaults live on the options types of `pipeline` and `release-check`;
//! a flag with a shown or hidden default takes it from there, so the help
//! and the library never disagree.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pipeline::{
    AssembleOptions, BuildOptions, Compression, DevelCompression, Family, IndexLayout,
    IndexOptions, InspectOptions, LinkRules, Nonce, PlanOptions, PlatformTag, PolicyName, ShardId,
    Version,
};
use release_check::VerifyOptions;

/// A family list as a flag gives it. Not spelled `Vec<Family>`: clap would
/// take that for a repeatable flag.
type Families = Vec<Family>;

// The help headings of `plan` and `build`, in the order they appear.
const INPUT: &str = "Input and output";
const RELEASE: &str = "Release";
const COMPRESSION: &str = "Compression";
const METADATA: &str = "Package metadata";
/// The heading of flags that choose what is printed.
pub(crate) const REPORT: &str = "Report";

/// `inspect --artifact-dir DIR [--json]`.
#[derive(Debug, Args)]
pub(crate) struct InspectFlags {
    /// The directory holding TheRock artifacts (directories, .tar.zst or .tar.xz).
    #[arg(long, value_name = "DIR")]
    artifact_dir: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

impl InspectFlags {
    pub(crate) fn options(&self) -> InspectOptions {
        InspectOptions {
            artifact_dir: self.artifact_dir.clone(),
        }
    }
}

/// Inputs shared by `plan` and `build`.
#[derive(Debug, Args)]
pub(crate) struct PlanFlags {
    /// TheRock's artifact directory (one `NAME_COMPONENT_TARGET` directory
    /// or `.tar.zst`/`.tar.xz` archive per artifact).
    #[arg(long, value_name = "DIR", help_heading = INPUT)]
    artifact_dir: PathBuf,
    /// The package version (default: the one `therock_manifest.json` records).
    #[arg(long, help_heading = RELEASE)]
    version: Option<Version>,
    /// Nonce appended to platform package directory names.
    #[arg(
        long,
        default_value_t = PlanOptions::default().nonce,
        hide_default_value = true,
        value_name = "NONCE",
        help_heading = RELEASE
    )]
    version_suffix: Nonce,
    /// Families the Linux release offers (`,` or `;` separated; empty: none).
    #[arg(long, value_name = "FAMILIES", value_parser = Family::parse_list, help_heading = RELEASE)]
    linux_amdgpu_families: Option<Families>,
    /// Families the Windows release offers (`,` or `;` separated; empty: none).
    #[arg(long, value_name = "FAMILIES", value_parser = Family::parse_list, help_heading = RELEASE)]
    windows_amdgpu_families: Option<Families>,
    /// Wheel platform tag (default: `ROCM_SDK_WHEEL_PLATFORM_TAG`, else the host's).
    #[arg(long, value_name = "TAG", help_heading = RELEASE)]
    platform_tag: Option<PlatformTag>,
    /// The devel tarball codec.
    #[arg(long, value_enum, value_name = "CODEC", help_heading = COMPRESSION)]
    devel_compression: Option<DevelCodec>,
    /// Compress the devel tarball with xz (same as `--devel-compression xz`).
    #[arg(long, overrides_with = "no_devel_tarball_compression", help_heading = COMPRESSION)]
    devel_tarball_compression: bool,
    /// Store the devel tarball uncompressed (the default).
    #[arg(long, help_heading = COMPRESSION)]
    no_devel_tarball_compression: bool,
    /// A TOML file with the packages' `license-expression`, `[project-urls]`
    /// and `[summaries]`; unset keys keep their defaults.
    #[arg(long, value_name = "FILE", help_heading = METADATA)]
    metadata: Option<PathBuf>,
    /// Ship the absolute entries of host ELF files' search paths
    /// (`/home/builder/…/lib`: directories of the build host, which become
    /// `DT_RPATH`) instead of leaving them out with a warning.
    #[arg(long, help_heading = RELEASE)]
    keep_absolute_search_paths: bool,
    /// An unversioned library name (`libamdhip64.so`) that gets a runtime
    /// alias besides the names the build finds (repeatable).
    #[arg(long, value_name = "NAME", value_parser = runtime_alias_flag, help_heading = RELEASE)]
    runtime_alias: Vec<String>,
    /// `License-Expression` of every package (overrides `--metadata`).
    #[arg(long, value_name = "SPDX", help_heading = METADATA)]
    license_expression: Option<String>,
    /// A `Project-URL` as `LABEL=URL` (repeatable; replaces the list of
    /// `--metadata` and the defaults).
    #[arg(long, value_name = "LABEL=URL", value_parser = parse_project_url, help_heading = METADATA)]
    project_url: Vec<(String, String)>,
}

// Flag values are judged while parsing, so a bad one exits 2 like any
// other usage error (docs/behaviour.md#exit-status).

fn runtime_alias_flag(text: &str) -> Result<String, &'static str> {
    if elf_surgery::is_unversioned_name(text) {
        Ok(text.to_owned())
    } else {
        Err("not an unversioned library name; give a file name like libamdhip64.so")
    }
}

fn parse_project_url(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((label, url)) if !label.is_empty() && !url.is_empty() => {
            Ok((label.to_owned(), url.to_owned()))
        }
        _ => Err(format!("{text:?} is not LABEL=URL")),
    }
}

/// The devel tarball codecs (`--devel-compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DevelCodec {
    /// `_devel.tar`.
    None,
    /// `_devel.tar.xz`.
    Xz,
    /// `_devel.tar.zst`.
    Zstd,
}

impl From<DevelCodec> for DevelCompression {
    fn from(codec: DevelCodec) -> Self {
        match codec {
            DevelCodec::None => Self::None,
            DevelCodec::Xz => Self::Xz,
            DevelCodec::Zstd => Self::Zstd,
        }
    }
}

fn codec_name(codec: DevelCodec) -> String {
    codec
        .to_possible_value()
        .expect("every codec has a name")
        .get_name()
        .to_owned()
}

impl PlanFlags {
    /// The codec named by `--devel-tarball-compression` /
    /// `--no-devel-tarball-compression` (the reference's spellings), if given.
    fn reference_codec_flag(&self) -> Option<(&'static str, DevelCodec)> {
        if self.devel_tarball_compression {
            Some(("--devel-tarball-compression", DevelCodec::Xz))
        } else if self.no_devel_tarball_compression {
            Some(("--no-devel-tarball-compression", DevelCodec::None))
        } else {
            None
        }
    }

    /// A usage problem clap's own rules cannot express: the two spellings
    /// of the devel codec must agree.
    pub(crate) fn usage_conflict(&self) -> Option<String> {
        let (flag, implied) = self.reference_codec_flag()?;
        let chosen = self.devel_compression?;
        (chosen != implied).then(|| {
            format!(
                "{flag} means --devel-compression {} but --devel-compression {} was given; give one of them",
                codec_name(implied),
                codec_name(chosen)
            )
        })
    }

    /// The options these flags give (after [`PlanFlags::usage_conflict`]
    /// found none).
    pub(crate) fn options(&self) -> PlanOptions {
        let defaults = PlanOptions::default();
        PlanOptions {
            artifact_dir: self.artifact_dir.clone(),
            version: self.version.clone(),
            nonce: self.version_suffix.clone(),
            linux_families: self.linux_amdgpu_families.clone(),
            windows_families: self.windows_amdgpu_families.clone(),
            platform_tag: self.platform_tag.clone(),
            devel_compression: self
                .devel_compression
                .or(self.reference_codec_flag().map(|(_, c)| c))
                .map_or(defaults.devel_compression, Into::into),
            metadata: self.metadata.clone(),
            keep_absolute_search_paths: self.keep_absolute_search_paths,
            runtime_aliases: self.runtime_alias.clone(),
            license_expression: self.license_expression.clone(),
            project_urls: self.project_url.clone(),
            native_programs: defaults.native_programs,
        }
    }
}

/// `therock-package build`.
#[derive(Debug, Args)]
#[allow(clippy::struct_excessive_bools)] // clap's `--flag`/`--no-flag` pairs
pub(crate) struct BuildFlags {
    #[command(flatten)]
    plan: PlanFlags,
    /// Where `dist/` is written.
    #[arg(long, value_name = "DIR", help_heading = INPUT)]
    dest_dir: PathBuf,
    /// Write the packages (the default).
    #[arg(long, overrides_with = "no_build_packages", help_heading = INPUT)]
    build_packages: bool,
    /// Validate and write `plan.json` only.
    #[arg(long, help_heading = INPUT)]
    no_build_packages: bool,
    /// Deflate wheel members (the default).
    #[arg(long, overrides_with = "no_wheel_compression", help_heading = COMPRESSION)]
    wheel_compression: bool,
    /// Store wheel members uncompressed.
    #[arg(long, help_heading = COMPRESSION)]
    no_wheel_compression: bool,
    /// Deflate level of wheel members (libdeflate): 1 fastest … 12 smallest,
    /// 0 stores them. Default 6, smaller than Python's zipfile at level 6.
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u32).range(0..=12), help_heading = COMPRESSION)]
    compression_level: Option<u32>,
    /// Threads for extracting and compressing (default: one per core; at most four per core).
    #[arg(long, short, default_value_t = BuildOptions::default().jobs, hide_default_value = true, value_name = "N", help_heading = COMPRESSION)]
    jobs: usize,
    /// Build only shard K of N (`plan --shards N` lists them) and write
    /// `shard.json` beside `dist/` for `assemble`.
    #[arg(long, value_name = "K/N", conflicts_with = "no_build_packages", help_heading = INPUT)]
    shard: Option<ShardId>,
    /// Print the report as JSON: every written file with its size and
    /// sha256.
    #[arg(long, help_heading = REPORT)]
    pub(crate) json: bool,
    /// Measure wall and CPU time per build step, package and phase, and
    /// add the table to the report (and `timings` to `--json`).
    #[arg(long, help_heading = REPORT)]
    timings: bool,
    /// Exit 1, as `verify` does, when the packages written fail the
    /// ELF-link check (every `DT_NEEDED` resolves); without it the build
    /// warns and exits 0.
    #[arg(long, help_heading = REPORT)]
    pub(crate) strict: bool,
}

impl BuildFlags {
    /// See [`PlanFlags::usage_conflict`]; the wheel codec's two spellings
    /// must agree too.
    pub(crate) fn usage_conflict(&self) -> Option<String> {
        match (self.no_wheel_compression, self.compression_level) {
            (true, Some(level)) if level > 0 => Some(format!(
                "--no-wheel-compression stores wheel members but --compression-level {level} deflates them; give one of them"
            )),
            _ => self.plan.usage_conflict(),
        }
    }

    /// The options these flags give (after [`BuildFlags::usage_conflict`]
    /// found none).
    pub(crate) fn options(&self) -> BuildOptions {
        let defaults = BuildOptions::default();
        let wheel_compression = match (self.no_wheel_compression, self.compression_level) {
            (true, _) | (false, Some(0)) => Compression::Stored,
            (false, Some(level)) => Compression::Deflate { level },
            (false, None) => defaults.wheel_compression,
        };
        let build_packages = if self.no_build_packages {
            false
        } else if self.build_packages {
            true
        } else {
            defaults.build_packages
        };
        BuildOptions {
            plan: self.plan.options(),
            dest_dir: self.dest_dir.clone(),
            build_packages,
            wheel_compression,
            jobs: self.jobs,
            shard: self.shard,
            // Only the JSON report shows the hashes.
            hash_files: self.json,
            timings: self.timings,
            // The environment's values, the progress display and the
            // signal handler's cleanup are the caller's (main.rs).
            ..defaults
        }
    }
}

/// `therock-package assemble`.
#[derive(Debug, Args)]
pub(crate) struct AssembleFlags {
    /// The `--dest-dir` of every `build --shard K/N` of the release (one
    /// or more platforms, each split into its own shards).
    #[arg(required = true, value_name = "SHARD_DIR")]
    shard_dirs: Vec<PathBuf>,
    /// Where the release's `dist/` is written (it must be new or empty).
    #[arg(long, value_name = "DIR")]
    dest_dir: PathBuf,
    /// `verify`'s `--policy` and `--exclude`, for the verify step.
    #[command(flatten)]
    link_rules: LinkFlags,
    /// Print what was assembled as JSON: each platform's shards and plan,
    /// every file of the release.
    #[arg(long, help_heading = REPORT)]
    pub(crate) json: bool,
    /// Refuse the release, writing nothing, when its only failing check is
    /// the ELF-link check (every `DT_NEEDED` resolves); without it the
    /// release is written with a warning, as `build` does.
    #[arg(long, help_heading = REPORT)]
    strict: bool,
}

impl AssembleFlags {
    pub(crate) fn options(&self) -> AssembleOptions {
        AssembleOptions {
            shard_dirs: self.shard_dirs.clone(),
            dest_dir: self.dest_dir.clone(),
            link_rules: self.link_rules.rules(),
            strict: self.strict,
            cleanup: None,
        }
    }
}

/// What to verify: the flags of `therock-package verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyFlags {
    /// Dist directories of one release (searched recursively for `*.whl`
    /// and `*.tar.gz`).
    #[arg(required = true, value_name = "DIST_DIR")]
    dirs: Vec<PathBuf>,
    /// Families the Linux release must offer (`,` or `;` separated): every
    /// target needs its device wheel (kpack) or every family its libraries
    /// wheel (legacy).
    #[arg(long, value_name = "FAMILIES", value_parser = Family::parse_list)]
    linux_amdgpu_families: Option<Families>,
    /// Families the Windows release must offer.
    #[arg(long, value_name = "FAMILIES", value_parser = Family::parse_list)]
    windows_amdgpu_families: Option<Families>,
    #[command(flatten)]
    link_rules: LinkFlags,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

impl VerifyFlags {
    pub(crate) fn options(&self) -> VerifyOptions {
        VerifyOptions {
            dirs: self.dirs.clone(),
            linux_families: self.linux_amdgpu_families.clone(),
            windows_families: self.windows_amdgpu_families.clone(),
            link_rules: self.link_rules.rules(),
        }
    }
}

/// What the ELF-link and manylinux checks allow: `--policy` and
/// `--exclude`, the same flags for `verify` and for `assemble`, which
/// passes them on to its verify step.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct LinkFlags {
    /// The manylinux policy every Linux wheel must keep to (`manylinux_2_28`,
    /// `manylinux2014`); default: the one each wheel's own tag claims.
    #[arg(long, value_name = "POLICY")]
    policy: Option<PolicyName>,
    /// A library the release deliberately leaves to the system although no
    /// policy allows it (repeatable; auditwheel's `--exclude`).
    #[arg(long = "exclude", value_name = "SONAME")]
    exclude: Vec<String>,
}

impl LinkFlags {
    fn rules(&self) -> LinkRules {
        LinkRules {
            policy: self.policy,
            exclude: self.exclude.clone(),
        }
    }
}

/// What to index: the flags of `therock-package index`.
#[derive(Debug, Args)]
pub(crate) struct IndexFlags {
    /// The dist directory to index (the pages are written into it).
    #[arg(value_name = "DIST_DIR")]
    dir: PathBuf,
    /// Legacy releases with several families: one index per `dist/{F}/`
    /// listing that family's packages and the shared ones beside it.
    #[arg(long)]
    per_family: bool,
    /// Which pages to write: the flat `index.html` (a `--find-links`
    /// source), the PEP 503 tree `simple/` (an `--index-url`), or both.
    #[arg(long, value_enum, default_value_t = IndexOptions::default().layout.into())]
    layout: LayoutFlag,
    /// Print what was written as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

impl IndexFlags {
    pub(crate) fn options(&self) -> IndexOptions {
        IndexOptions {
            dir: self.dir.clone(),
            layout: self.layout.into(),
            per_family: self.per_family,
        }
    }
}

/// What to publish: the flags of `therock-package post-release`.
#[derive(Debug, Args)]
pub(crate) struct PostReleaseFlags {
    /// The `dist/` directory of the published release: its `rocm-sdk-core`
    /// wheel says the release `X`, its `rocm-X.tar.gz` (one per `dist/{F}/`
    /// in a legacy release with several families) gives the document. The
    /// new sdists are written beside them.
    #[arg(value_name = "DIST_DIR")]
    dir: PathBuf,
    /// The post-release's version: `X.postN`.
    #[arg(long, value_name = "VERSION")]
    version: Version,
    /// The release's metadata file (as `build --metadata`), for the sdist's
    /// Summary, License-Expression and Project-URL.
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// Print what was written as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

impl PostReleaseFlags {
    pub(crate) fn options(&self) -> pipeline::PostReleaseOptions {
        pipeline::PostReleaseOptions {
            dist_dir: self.dir.clone(),
            version: self.version.clone(),
            metadata: self.metadata.clone(),
            // `SOURCE_DATE_EPOCH` is the caller's (main.rs).
            source_date_epoch: None,
        }
    }
}

/// Which pages `index` writes (`--layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LayoutFlag {
    /// `index.html`, a find-links page.
    Flat,
    /// `simple/index.html` and `simple/<project>/index.html`.
    Simple,
    /// Both.
    Both,
}

impl From<LayoutFlag> for IndexLayout {
    fn from(flag: LayoutFlag) -> Self {
        match flag {
            LayoutFlag::Flat => Self::Flat,
            LayoutFlag::Simple => Self::Simple,
            LayoutFlag::Both => Self::Both,
        }
    }
}

impl From<IndexLayout> for LayoutFlag {
    fn from(layout: IndexLayout) -> Self {
        match layout {
            IndexLayout::Flat => Self::Flat,
            IndexLayout::Simple => Self::Simple,
            IndexLayout::Both => Self::Both,
        }
    }
}
