//! Putting the plan together: packages, selectors and the checks of docs/behaviour.md#build-checks.

use std::collections::BTreeSet;

use artifacts::{
    ArtifactDir, ArtifactFilter, Catalog, CatalogWarning, EntryKind, GENERIC_TARGET, PathFilter,
};
use dist_info::devel_links::DevelLinks;
use dist_info::devel_tree::TreeNames;
use dist_info::families::{Family, FamilyTable};
use dist_info::libraries_record::{self, LibrariesRecord};
use dist_info::nonce::Nonce;
use dist_info::package::{Mode, Package, PackageKind};
use dist_info::project_metadata::ProjectMetadata;
use dist_info::requirement::{Platform, Requirement};
use dist_info::target::{base_target, base_targets};
use pypa_formats::filename::PlatformTag;
use pypa_formats::version::Version;

use crate::devel::{RuntimeIndex, plan_devel};
use crate::dist_targets::check_dist_targets;
use crate::error::{CheckError, Error, ModelError};
use crate::libraries::check_runtime_libraries;
use crate::plan::{
    Action, DevelEntry, KeptSearchPath, PackagePlan, Plan, PlannedFile, SelectorPlan,
    windows_executable,
};
use crate::rules;
use crate::runtime::{Links, Runtime, Target};
use crate::selectors::{SelectorBasis, plan_selectors};
use crate::survey::{FileClass, SourceSurvey};

/// A file the caller adds to a package (Python modules, the native
/// `rocm-sdk` binary).
#[derive(Debug, Clone)]
pub struct ExtraFile {
    /// The package that ships it.
    pub package: PackageKind,
    /// Its path inside the wheel, `{pure}` standing for the pure package
    /// (`{pure}/__init__.py`).
    pub dest: String,
    /// Installed executable.
    pub executable: bool,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Everything a plan is made from, as typed values: the caller has read
/// its flags and the environment.
#[derive(Debug)]
pub struct PlanInput<'a> {
    /// The artifacts.
    pub artifacts: &'a ArtifactDir,
    /// The version of every package (written in its canonical form).
    pub version: Version,
    /// The nonce of platform packages (`_rocm_sdk_core{nonce}`).
    pub nonce: Nonce,
    /// The wheel platform tag; platform rules follow it, not the host.
    pub platform_tag: PlatformTag,
    /// The families the Linux release offers (`Some` of an empty list:
    /// Linux takes no part; `None`: the artifacts' targets decide).
    pub linux_families: Option<Vec<Family>>,
    /// The families the Windows release offers.
    pub windows_families: Option<Vec<Family>>,
    /// Files the caller adds to packages.
    pub extra_files: Vec<ExtraFile>,
    /// `console_scripts` per package kind: `(name, "module:function")`.
    pub console_scripts: Vec<(PackageKind, String, String)>,
    /// The devel tarball's file name in the devel pure package
    /// (`_devel.tar`, `_devel.tar.xz`, `_devel.tar.zst`).
    pub devel_tar_name: String,
    /// The file name of the tarball's digest file next to it, when the
    /// devel package ships one.
    pub devel_digest_name: Option<String>,
    /// Summaries, licence and project URLs of every package.
    pub metadata: ProjectMetadata,
    /// Ship the absolute entries of host ELF files' search paths
    /// (build-host directories) instead of leaving them out
    /// (docs/behaviour.md#search-paths).
    pub keep_absolute_search_paths: bool,
    /// Unversioned names that get a runtime alias besides the ones found
    /// (docs/behaviour.md#runtime-aliases).
    pub runtime_aliases: Vec<String>,
}

impl<'a> PlanInput<'a> {
    /// An input with no family lists, no nonce and no extra files.
    pub fn new(artifacts: &'a ArtifactDir, version: Version, platform_tag: PlatformTag) -> Self {
        Self {
            artifacts,
            version,
            nonce: Nonce::NONE,
            platform_tag,
            linux_families: None,
            windows_families: None,
            extra_files: Vec::new(),
            console_scripts: Vec::new(),
            devel_tar_name: "_devel.tar".to_owned(),
            devel_digest_name: None,
            metadata: ProjectMetadata::default(),
            keep_absolute_search_paths: false,
            runtime_aliases: Vec::new(),
        }
    }

    fn is_windows(&self) -> bool {
        Platform::is_windows_tag(self.platform_tag.as_str())
    }

    /// The platform the packages are for (Linux unless the tag is a
    /// Windows tag).
    fn platform(&self) -> Platform {
        if self.is_windows() {
            Platform::Windows
        } else {
            Platform::Linux
        }
    }
}

/// Builds the plan of every package and selector.
pub fn plan(input: &PlanInput<'_>) -> Result<Plan, Error> {
    let manifest = input.artifacts.therock_manifest()?;
    let mode = manifest.mode;
    let planner = Planner {
        input,
        mode,
        version: input.version.to_string(),
        core_platform: platform_of(PackageKind::Core, mode, &input.nonce, None),
        survey: SourceSurvey::default(),
        taken: BTreeSet::new(),
        contributing: BTreeSet::new(),
        warnings: BTreeSet::new(),
        devel_warnings: BTreeSet::new(),
    };
    planner.run(&input.version)
}

struct Planner<'i, 'a> {
    input: &'i PlanInput<'a>,
    mode: Mode,
    version: String,
    core_platform: String,
    survey: SourceSurvey,
    /// Artifacts some package's rules take (full names).
    taken: BTreeSet<String>,
    /// Artifacts that gave a package at least one file or link.
    contributing: BTreeSet<String>,
    /// The warnings of every catalog, each once.
    warnings: BTreeSet<CatalogWarning>,
    /// The devel plans' warnings said so far.
    devel_warnings: BTreeSet<String>,
}

fn package(kind: PackageKind, mode: Mode, nonce: &Nonce) -> Package {
    Package::new(kind, mode, nonce)
}

fn platform_of(kind: PackageKind, mode: Mode, nonce: &Nonce, target: Option<&str>) -> String {
    package(kind, mode, nonce)
        .platform_package(target)
        .expect("runtime packages have platform packages")
        .expect("runtime packages have platform packages")
}

impl Planner<'_, '_> {
    fn catalog(
        &mut self,
        artifacts: &ArtifactFilter,
        paths: &PathFilter,
    ) -> Result<Catalog, Error> {
        let catalog = self.input.artifacts.catalog(artifacts, paths)?;
        // Several packages merge the same artifacts: each warning is said
        // once, when the plan is complete (report_catalog_warnings).
        self.warnings.extend(catalog.warnings().iter().cloned());
        self.survey.gather(catalog.entries())?;
        self.taken.extend(
            self.input
                .artifacts
                .artifacts()
                .iter()
                .filter(|a| artifacts.matches(a.name()))
                .map(|a| a.name().to_string()),
        );
        self.contributing.extend(
            catalog
                .entries()
                .filter(|e| !matches!(e.kind(), EntryKind::Dir))
                .map(|e| e.artifact().to_string()),
        );
        Ok(catalog)
    }

    /// The catalogs' warnings, each once; a link not followed that the
    /// devel plan left out was already named by its warning (with the
    /// link's text and why the install would refuse it).
    fn report_catalog_warnings(&self, packages: &[PackagePlan]) {
        let left_out: BTreeSet<&str> = packages
            .iter()
            .filter(|p| p.kind == PackageKind::Devel)
            .flat_map(|p| p.dropped.iter().map(|d| d.relpath.as_str()))
            .collect();
        for warning in &self.warnings {
            if let CatalogWarning::LinkNotFollowed { relpath, .. } = warning
                && left_out.contains(relpath.as_str())
            {
                continue;
            }
            tracing::warn!("{warning}");
        }
    }

    /// docs/behaviour.md#search-paths: every ELF file whose search path
    /// names absolute directories is said once (whatever number of names
    /// and packages it ships under): the entries left out, kept by
    /// request, or shipped unchanged in a file this tool does not edit. A
    /// file `verify` would read those entries in (any ELF file of the
    /// devel tarball, the loader's files of runtime wheels) that the build
    /// does not edit refuses the build, unless they are kept by request;
    /// what is kept is returned, for the build to say that `verify` will
    /// refuse it.
    fn check_absolute_search_paths(
        &self,
        packages: &[PackagePlan],
    ) -> Result<Vec<KeptSearchPath>, Error> {
        let names = TreeNames::new(&self.input.nonce);
        let keep = self.input.keep_absolute_search_paths;
        let mut said = BTreeSet::new();
        let mut kept = Vec::new();
        for package in packages {
            // (installed path, source, edited, in the devel tarball)
            let files = package.files.iter().filter_map(|f| match &f.action {
                Action::PatchSearchPath { source, .. } => {
                    Some((f.dest.clone(), source, true, false))
                }
                Action::Copy { source } => Some((f.dest.clone(), source, false, false)),
                _ => None,
            });
            let devel = package.devel_tree.iter().filter_map(|e| match e {
                DevelEntry::File {
                    relpath,
                    source,
                    patch,
                } => Some((names.in_tree(relpath), source, patch.is_some(), true)),
                _ => None,
            });
            for (path, source, edited, in_devel) in files.chain(devel) {
                let Some(absolute) = self.survey.absolute_search_path_of(&source.source) else {
                    continue;
                };
                let class = self.survey.class_of(&source.source);
                let verify_reads = in_devel || class.is_some_and(FileClass::takes_search_path);
                if verify_reads && !edited && !keep {
                    return Err(CheckError::UneditedSearchPath {
                        file: source.describe(),
                        tag: absolute.tag,
                        entries: absolute.entries.clone(),
                        kind: unedited_kind(class),
                        package: package.dist_name.clone(),
                    }
                    .into());
                }
                if verify_reads && keep {
                    kept.push(KeptSearchPath {
                        package: package.dist_name.clone(),
                        subdir: package.subdir.clone(),
                        path,
                        in_devel,
                        // An edited file's search path is forced to DT_RPATH.
                        tag: if edited { "RPATH" } else { absolute.tag }.to_owned(),
                        entries: absolute.entries.clone(),
                    });
                }
                let file = source.describe();
                if !said.insert(file.clone()) {
                    continue;
                }
                let (entries, tag) = (absolute.entries.join(", "), absolute.tag);
                if !edited {
                    tracing::info!(
                        "{file}: ships with the absolute search-path entries {entries} ({tag}) \
                         unchanged: the build does not edit {}, and no loader reads its search \
                         path",
                        unedited_kind(class)
                    );
                } else if keep {
                    tracing::info!(
                        "{file}: keeping the absolute search-path entries {entries} ({tag}; \
                         --keep-absolute-search-paths)"
                    );
                } else {
                    tracing::warn!(
                        "{file}: left out the absolute search-path entries {entries} ({tag}): they \
                         name directories of the build host, where any machine that has them could \
                         supply libraries; pass --keep-absolute-search-paths to ship them"
                    );
                }
            }
        }
        Ok(kept)
    }

    /// docs/behaviour.md#inputs: an artifact a package takes that gives it
    /// nothing is a warning (its files would be missing without a word);
    /// one no package takes is only logged.
    fn report_silent_artifacts(&self) {
        for artifact in self.input.artifacts.artifacts() {
            let name = artifact.name().to_string();
            if self.contributing.contains(&name) {
                continue;
            }
            if !self.taken.contains(&name) {
                tracing::info!("{name}: not packaged: no package takes this artifact");
                continue;
            }
            let why = if artifact.members().is_empty() && !artifact.missing_prefixes().is_empty() {
                format!(
                    "no directory its {} names exists ({}); fix the manifest's lines",
                    artifacts::MANIFEST_FILE,
                    artifact
                        .missing_prefixes()
                        .iter()
                        .map(|line| format!("{line:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else if artifact
                .members()
                .iter()
                .all(|m| m.kind == artifacts::MemberKind::Dir)
            {
                "its base directories hold no file; rebuild the artifact".to_owned()
            } else {
                "the package rules leave out every file it holds, or other artifacts provide them"
                    .to_owned()
            };
            tracing::warn!(
                "{name} ({}) contributes no file to any package: {why}",
                artifact.location().path().display(),
            );
        }
    }

    fn run(mut self, version: &Version) -> Result<Plan, Error> {
        let on_disk = self.on_disk_targets();
        let mut packages = Vec::new();
        let index = self.core_and_profiler(&mut packages)?;
        match self.mode {
            Mode::Kpack => self.kpack_packages(&on_disk, index, &mut packages)?,
            Mode::Legacy => self.legacy_packages(&on_disk, &index, &mut packages)?,
        }
        // Windows finds DLLs by their unversioned names: no aliases there.
        if !self.input.is_windows() {
            crate::runtime_aliases::add(
                &mut packages,
                &self.survey,
                &self.input.runtime_aliases,
                &self.core_platform,
            )?;
        }
        self.report_catalog_warnings(&packages);
        self.report_silent_artifacts();
        self.finish(version, &on_disk, packages)
    }

    /// Plans a runtime package whose files later packages link to, and
    /// adds what it ships to `index`.
    fn indexed_runtime(
        &self,
        catalog: &Catalog,
        kind: PackageKind,
        family: Option<&str>,
        index: &mut RuntimeIndex,
    ) -> PackagePlan {
        let (plan, rt) = self.runtime(catalog, kind, family, Links::Runtime, None);
        index.add(
            &platform_of(kind, self.mode, &self.input.nonce, family),
            rt.shipped.keys(),
            &rt.aliases,
        );
        plan
    }

    /// The packages of both modes, core and (unless a Windows build has
    /// none) the profiler; the index of the files they ship.
    fn core_and_profiler(
        &mut self,
        packages: &mut Vec<PackagePlan>,
    ) -> Result<RuntimeIndex, Error> {
        let windows = self.input.is_windows();
        let mut index = RuntimeIndex::default();
        let core = self.catalog(&rules::core_artifacts(), &rules::core_paths())?;
        check_runtime_libraries(&core, &self.survey, PackageKind::Core, windows)?;
        check_dist_targets(&core)?;
        packages.push(self.indexed_runtime(&core, PackageKind::Core, None, &mut index));

        let profiler = self.catalog(&rules::profiler_artifacts(), &rules::profiler_paths())?;
        if profiler.is_empty() {
            if !windows {
                return Err(CheckError::NoProfiler.into());
            }
            tracing::info!("no profiler artifacts: rocm-profiler is skipped on Windows");
        } else {
            packages.push(self.indexed_runtime(&profiler, PackageKind::Profiler, None, &mut index));
        }
        Ok(index)
    }

    /// Kpack mode: one libraries package, one device package per base
    /// target, and the devel package.
    fn kpack_packages(
        &mut self,
        on_disk: &[String],
        mut index: RuntimeIndex,
        packages: &mut Vec<PackagePlan>,
    ) -> Result<(), Error> {
        let libs = self.catalog(&rules::libraries_artifacts(None), &PathFilter::new())?;
        require_libraries(&libs, None)?;
        let windows = self.input.is_windows();
        check_runtime_libraries(&libs, &self.survey, PackageKind::Libraries, windows)?;
        packages.push(self.indexed_runtime(&libs, PackageKind::Libraries, None, &mut index));
        self.check_kpack_complete(on_disk)?;
        for base in dist_info::target::base_targets(on_disk) {
            let device = self.catalog(
                &rules::device_artifacts(&base, self.input.platform()),
                &PathFilter::new(),
            )?;
            let (plan, _) = self.runtime(
                &device,
                PackageKind::Device,
                Some(&base),
                Links::Dereference,
                None,
            );
            packages.push(plan);
        }
        let devel = self.catalog(&rules::devel_artifacts(self.mode, None), &PathFilter::new())?;
        if !devel.is_empty() {
            packages.push(self.devel(&devel, &index, None));
        }
        Ok(())
    }

    /// Legacy mode: a libraries package and a devel package per family.
    fn legacy_packages(
        &mut self,
        on_disk: &[String],
        index: &RuntimeIndex,
        packages: &mut Vec<PackagePlan>,
    ) -> Result<(), Error> {
        let several = on_disk.len() > 1;
        let windows = self.input.is_windows();
        for family in on_disk {
            let libs = self.catalog(
                &rules::libraries_artifacts(Some(family)),
                &PathFilter::new(),
            )?;
            // Core and the profiler own their files first; never another family's.
            let mut family_index = index.clone();
            require_libraries(&libs, Some(family))?;
            check_runtime_libraries(&libs, &self.survey, PackageKind::Libraries, windows)?;
            packages.push(self.indexed_runtime(
                &libs,
                PackageKind::Libraries,
                Some(family),
                &mut family_index,
            ));
            let devel = self.catalog(
                &rules::devel_artifacts(self.mode, Some(family)),
                &PathFilter::new(),
            )?;
            if !devel.is_empty() {
                let subdir = if several { family.as_str() } else { "" };
                packages.push(self.devel(&devel, &family_index, Some((family, subdir))));
            }
        }
        Ok(())
    }

    /// The plan of `packages`: search paths checked, selectors planned,
    /// every package given its metadata, and the installed names checked.
    fn finish(
        self,
        version: &Version,
        on_disk: &[String],
        mut packages: Vec<PackagePlan>,
    ) -> Result<Plan, Error> {
        let kept_search_paths = self.check_absolute_search_paths(&packages)?;
        let selectors = self.selectors(version, on_disk, &packages)?;
        let dist_info = &selectors
            .iter()
            .find(|s| s.restricted_to.is_none())
            .or(selectors.first())
            .expect("every build has a selector")
            .dist_info_json;
        for p in &mut packages {
            self.finish_package(p, dist_info);
        }
        let names = TreeNames::new(&self.input.nonce);
        let shipped = crate::installed::installed(&packages, &names);
        crate::installed::check_name_lengths(&shipped)?;
        crate::installed::check_owners(&shipped)?;
        if self.input.is_windows() {
            crate::windows::check(&shipped, self.input.platform_tag.as_str())?;
            crate::windows::warn_long_paths(&shipped);
        }
        drop(shipped);
        Ok(Plan {
            schema: crate::plan::PLAN_SCHEMA,
            mode: self.mode,
            version: self.version,
            platform_tag: self.input.platform_tag.to_string(),
            nonce: self.input.nonce.clone(),
            metadata: self.input.metadata.clone(),
            packages,
            selectors,
            kept_search_paths,
        })
    }

    /// Device targets (kpack) or families (legacy) present on disk that
    /// have a place on the platform, sorted; device artifacts left out
    /// ([`rules::device_target_on`]) are named in one warning.
    fn on_disk_targets(&self) -> Vec<String> {
        let platform = self.input.platform();
        let mut left_out = BTreeSet::new();
        let set: BTreeSet<String> = self
            .input
            .artifacts
            .artifacts()
            .iter()
            .map(artifacts::Artifact::name)
            .filter(|n| n.target() != GENERIC_TARGET)
            .filter(|n| match self.mode {
                Mode::Kpack => rules::is_device_name(n.name()) && n.component() == "lib",
                Mode::Legacy => true,
            })
            .filter(|n| {
                let kept =
                    self.mode == Mode::Legacy || rules::device_target_on(n.target(), platform);
                if !kept {
                    left_out.insert((n.to_string(), n.target().to_owned()));
                }
                kept
            })
            .map(|n| n.target().to_owned())
            .collect();
        if !left_out.is_empty() {
            let names: Vec<&str> = left_out.iter().map(|(n, _)| n.as_str()).collect();
            let variants: BTreeSet<&str> = left_out.iter().map(|(_, t)| t.as_str()).collect();
            let plural = if variants.len() == 1 { "" } else { "s" };
            let pronoun = if names.len() == 1 { "it" } else { "them" };
            tracing::warn!(
                "left out of the Windows packages: {} (device artifacts of the feature variant{plural} \
                 {} of {}, which TheRock builds for Linux only; their files' names hold `:`, which \
                 NTFS takes as a stream, so no Windows package can hold {pronoun})",
                names.join(", "),
                variants.iter().copied().collect::<Vec<_>>().join(", "),
                base_targets(&variants).join(", ")
            );
        }
        set.into_iter().collect()
    }

    fn runtime(
        &self,
        catalog: &Catalog,
        kind: PackageKind,
        target: Option<&str>,
        links: Links,
        subdir: Option<&str>,
    ) -> (PackagePlan, Runtime) {
        let platform = platform_of(kind, self.mode, &self.input.nonce, target);
        let mut rt = Runtime::plan(
            catalog,
            &self.survey,
            &Target {
                kind,
                platform: &platform,
                core_platform: &self.core_platform,
                links,
                launchers: !self.input.is_windows(),
                keep_absolute: self.input.keep_absolute_search_paths,
            },
        );
        if kind == PackageKind::Profiler {
            rt.add_profiler_names(!self.input.is_windows());
        }
        let mut files = rt.files(&platform);
        if self.input.is_windows() {
            for file in &mut files {
                file.executable = windows_executable(&file.dest);
            }
        }
        if kind == PackageKind::Device {
            let target = target.expect("device packages have a target");
            let doc = DevelLinks::new(&self.version, &platform, rt.shipped.keys().cloned());
            files.push(generated(
                format!("{platform}/.devel_links/{}", DevelLinks::file_name(target)),
                "device-link manifest",
                doc.to_json().into_bytes(),
            ));
        } else {
            // The platform package is a physical package; only the owner of
            // the directory ships its `__init__.py` (never a device wheel).
            files.push(generated(
                format!("{platform}/__init__.py"),
                "platform package marker",
                Vec::new(),
            ));
        }
        let plan = PackagePlan {
            kind,
            dist_name: self.dist_name(kind, target),
            target: target.map(str::to_owned),
            subdir: subdir.unwrap_or_default().to_owned(),
            summary: self.input.metadata.summary(kind, target),
            requires: self.requires(kind, target),
            console_scripts: Vec::new(),
            files,
            devel_tree: Vec::new(),
            soname_aliases: rt.aliases.clone(),
            runtime_aliases: Vec::new(),
            dropped: rt.dropped.clone(),
        };
        (plan, rt)
    }

    fn devel(
        &mut self,
        catalog: &Catalog,
        index: &RuntimeIndex,
        family: Option<(&String, &str)>,
    ) -> PackagePlan {
        let names = TreeNames::new(&self.input.nonce);
        let (mut tree, dropped) = plan_devel(
            catalog,
            &self.survey,
            index,
            &names,
            self.input.keep_absolute_search_paths,
            &mut self.devel_warnings,
        );
        if self.input.is_windows() {
            for entry in &mut tree {
                if let DevelEntry::File { source, .. } = entry {
                    source.mode = if windows_executable(&source.relpath) {
                        0o755
                    } else {
                        0o644
                    };
                }
            }
        }
        PackagePlan {
            kind: PackageKind::Devel,
            dist_name: self.dist_name(PackageKind::Devel, None),
            target: family.map(|(f, _)| f.clone()),
            subdir: family.map(|(_, s)| s.to_owned()).unwrap_or_default(),
            summary: self.input.metadata.summary(PackageKind::Devel, None),
            requires: self.requires(PackageKind::Devel, None),
            console_scripts: Vec::new(),
            files: vec![PlannedFile {
                dest: String::new(),
                executable: false,
                action: Action::DevelTar,
            }],
            devel_tree: tree,
            soname_aliases: Vec::new(),
            runtime_aliases: Vec::new(),
            dropped,
        }
    }

    fn dist_name(&self, kind: PackageKind, target: Option<&str>) -> String {
        package(kind, self.mode, &self.input.nonce)
            .dist_name(target)
            .expect("packages of the mode, with a target when needed")
    }

    /// Exact pins between packages: libraries and devel need core, a device
    /// wheel needs the libraries it overlays.
    fn requires(&self, kind: PackageKind, _target: Option<&str>) -> Vec<String> {
        let needs = match kind {
            PackageKind::Libraries | PackageKind::Devel => Some(PackageKind::Core),
            PackageKind::Device => Some(PackageKind::Libraries),
            _ => None,
        };
        needs
            .map(|k| Requirement::pin(&self.dist_name(k, None), &self.version).to_string())
            .into_iter()
            .collect()
    }

    /// Adds the shared files: `_dist_info.json` in the pure package, the
    /// library record in the platform package (core and libraries), the
    /// caller's extra files, console scripts; then sorts.
    fn finish_package(&self, p: &mut PackagePlan, dist_info: &[u8]) {
        if let Some(record) = self.libraries_record(p) {
            p.files.push(record);
        }
        let pure = package(p.kind, self.mode, &self.input.nonce)
            .pure_package(p.target.as_deref())
            .ok()
            .flatten();
        if let Some(pure) = &pure {
            p.files.push(generated(
                format!("{pure}/_dist_info.json"),
                "dist-info document",
                dist_info.to_vec(),
            ));
            for extra in self
                .input
                .extra_files
                .iter()
                .filter(|e| e.package == p.kind)
            {
                p.files.push(PlannedFile {
                    dest: extra.dest.replace("{pure}", pure),
                    executable: extra.executable,
                    action: Action::Generated {
                        what: "shipped with therock-package".into(),
                        bytes: extra.bytes.clone(),
                    },
                });
            }
        }
        if p.kind == PackageKind::Devel {
            let tar = p
                .files
                .iter_mut()
                .find(|f| matches!(f.action, Action::DevelTar));
            if let (Some(tar), Some(pure)) = (tar, &pure) {
                tar.dest = format!("{pure}/{}", self.input.devel_tar_name);
                if let Some(digest) = &self.input.devel_digest_name {
                    p.files.push(PlannedFile {
                        dest: format!("{pure}/{digest}"),
                        executable: false,
                        action: Action::DevelDigest,
                    });
                }
            }
        }
        p.console_scripts = self
            .input
            .console_scripts
            .iter()
            .filter(|(k, _, _)| *k == p.kind)
            .map(|(_, name, object)| (name.clone(), object.clone()))
            .collect();
        p.files.sort_by(|a, b| a.dest.cmp(&b.dest));
    }

    /// `{pure}/_libraries.json` of a package that owns library-table
    /// entries (core, libraries): which entries its files provide, written
    /// even when none do (`docs/formats.md`). It sits in the pure package,
    /// not the platform directory, which the devel tree mirrors file for
    /// file (the reference's layout rule).
    fn libraries_record(&self, p: &PackagePlan) -> Option<PlannedFile> {
        if !matches!(p.kind, PackageKind::Core | PackageKind::Libraries) {
            return None;
        }
        let pure = package(p.kind, self.mode, &self.input.nonce)
            .pure_package(p.target.as_deref())
            .ok()
            .flatten()?;
        let platform_dir = platform_of(p.kind, self.mode, &self.input.nonce, p.target.as_deref());
        let prefix = format!("{platform_dir}/");
        let platform = self.input.platform();
        let record = LibrariesRecord::from_shipped_files(
            &p.dist_name,
            p.kind,
            platform,
            // A runtime alias is not the library it stands for.
            p.files
                .iter()
                .filter(|f| !p.runtime_aliases.iter().any(|a| a.relpath == f.dest))
                .filter_map(|f| f.dest.strip_prefix(&prefix)),
        );
        let aliases = p.runtime_aliases.iter().filter_map(|a| {
            let relpath = a.relpath.strip_prefix(&prefix)?;
            Some((relpath.to_owned(), a.target.clone()))
        });
        let record = record.with_aliases(aliases);
        Some(generated(
            format!("{pure}/{}", libraries_record::FILE_NAME),
            "library record",
            record.to_json(),
        ))
    }

    /// docs/behaviour.md#build-checks: with the platform's target list given, every listed target
    /// has device artifacts.
    fn check_kpack_complete(&self, on_disk: &[String]) -> Result<(), Error> {
        let list = if self.input.is_windows() {
            &self.input.windows_families
        } else {
            &self.input.linux_families
        };
        let Some(list) = list.as_deref() else {
            return Ok(());
        };
        let expected = FamilyTable::builtin()
            .expand(list)
            .map_err(ModelError::Families)?;
        let discovered: BTreeSet<&str> = on_disk.iter().map(|t| base_target(t)).collect();
        let missing: Vec<&str> = expected
            .iter()
            .map(String::as_str)
            .filter(|t| !discovered.contains(t))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(CheckError::IncompleteKpack {
            missing: missing.into_iter().map(str::to_owned).collect(),
            expected,
            discovered: discovered.into_iter().map(str::to_owned).collect(),
        }
        .into())
    }

    fn selectors(
        &self,
        version: &Version,
        on_disk: &[String],
        packages: &[PackagePlan],
    ) -> Result<Vec<SelectorPlan>, Error> {
        let kinds: BTreeSet<PackageKind> = packages.iter().map(|p| p.kind).collect();
        plan_selectors(&SelectorBasis {
            mode: self.mode,
            version,
            on_disk,
            packages: &kinds,
            linux_families: self.input.linux_families.as_deref(),
            windows_families: self.input.windows_families.as_deref(),
            nonce: &self.input.nonce,
        })
    }
}

/// docs/behaviour.md#build-checks: a set without its libraries package is not published.
fn require_libraries(libs: &Catalog, family: Option<&str>) -> Result<(), Error> {
    if !libs.is_empty() {
        return Ok(());
    }
    let which = family.map_or_else(|| "generic".to_owned(), |f| format!("generic or {f}"));
    Err(CheckError::NoLibraries {
        names: rules::LIBRARIES_NAMES.join(", "),
        which,
    }
    .into())
}

fn generated(dest: String, what: &str, bytes: Vec<u8>) -> PlannedFile {
    PlannedFile {
        dest,
        executable: false,
        action: Action::Generated {
            what: what.to_owned(),
            bytes,
        },
    }
}

/// What the build does not edit, as a message names it.
fn unedited_kind(class: Option<&FileClass>) -> &'static str {
    match class {
        Some(FileClass::StaticExecutable) => "a static executable",
        Some(FileClass::DeviceCode) => "device code, object files or other ELF types",
        _ => "such a file",
    }
}
