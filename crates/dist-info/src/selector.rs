//! The `rocm` selector (docs/behaviour.md#selector): which targets a release offers, its
//! default, and the requirements and extras written into the sdist.
//!
//! Build time: [`Selector::plan`] turns the on-disk targets and the release
//! family lists into data. Install time: [`Selector::select_target`] and
//! [`Selector::metadata`] compute the requirements from that data alone, the
//! same way the sdist's Python backend does (the JSON test vectors hold both
//! to it).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::families::{Family, FamilyError, FamilyTable};
use crate::package::{Mode, Package, PackageKind};
use crate::requirement::{Platform, Requirement};
use crate::selection::{Selection, SelectionError, TargetSource, select_target};
use crate::target::base_targets;
use pypa_formats::version::Version;

/// Errors while planning a selector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A family of a platform's list is not in the table given.
    #[error("the {} family list", platform_name(*platform))]
    Family {
        /// Whose list.
        platform: Platform,
        /// What was wrong.
        source: FamilyError,
    },
    /// A legacy per-family selector was asked for a family the release lacks.
    #[error(
        "cannot restrict the `rocm` selector to family `{family}`: it is not available \
         (available: {}); build that family or pick one of these",
        .available.join(", ")
    )]
    RestrictNotAvailable {
        /// The family asked for.
        family: String,
        /// What the release offers.
        available: Vec<String>,
    },
    /// Per-family selectors exist only in legacy mode.
    #[error(
        "per-family `rocm` selectors exist only in legacy mode; kpack builds make one arch-neutral selector"
    )]
    RestrictInKpackMode,
}

/// What the selector is built from (all values already read by the caller).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectorInput {
    /// Packages the set contains besides meta and core (`libraries`,
    /// `devel`, `profiler`; `device` is implied by the targets in kpack mode).
    pub packages: BTreeSet<PackageKind>,
    /// Kpack: device targets found on disk (raw, `:xnack±` allowed).
    /// Legacy: the families built.
    pub on_disk: Vec<String>,
    /// The families the Linux release offers (`Some` of an empty list:
    /// Linux takes no part; `None`: no list decides).
    pub linux_families: Option<Vec<Family>>,
    /// The families the Windows release offers.
    pub windows_families: Option<Vec<Family>>,
    /// Legacy with several families: the family this selector is restricted to.
    pub restrict_to_family: Option<String>,
}

/// The data an installed `rocm` selector decides from; serialised into
/// `_dist_info.json` (see `docs/formats.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selector {
    /// The packaging mode.
    pub mode: Mode,
    /// The canonical version every requirement pins.
    pub version: String,
    /// The `rocm` sdist's own version when it is a post-release (`V.postN`)
    /// of the selector over packages at `version` (docs/releasing.md,
    /// "Post-releases of the selector"); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector_version: Option<String>,
    /// Optional packages the release contains (`libraries`, `device`,
    /// `devel`, `profiler`), in the order of docs/behaviour.md#package-names.
    pub contents: Vec<PackageKind>,
    /// Units a user can select, sorted: base targets (kpack) or families (legacy).
    pub available_targets: Vec<String>,
    /// The fallback when nothing is requested or detected.
    pub default_target: Option<String>,
    /// Targets offered on one platform only (set only when both platform
    /// lists are non-empty); their requirements carry a `sys_platform` marker.
    pub target_platforms: BTreeMap<String, Platform>,
    /// Packages built on one platform only (the profiler, Linux) in a
    /// two-platform release.
    pub package_platforms: BTreeMap<PackageKind, Platform>,
    /// The target values of the reference's `_dist_info` module, as the
    /// reference computes them, for the Python facade to expose under the
    /// reference's names. Absent in documents written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_families: Option<TargetFamilies>,
}

/// What the reference's `rocm_sdk._dist_info` says about targets
/// (docs/drop-in.md), kept apart from the units the selector offers: the
/// reference lists the targets as built (`gfx90a:xnack+`), the selector
/// offers their base targets (`gfx90a`), one device package each.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TargetFamilies {
    /// `AVAILABLE_TARGET_FAMILIES`: without release lists, the targets (or
    /// families) as built, `:xnack±` kept, sorted (the reference iterates a
    /// set, so its order changes from run to run); with them, the sorted
    /// union of the lists.
    pub available: Vec<String>,
    /// `DEFAULT_TARGET_FAMILY`: the first of the sorted targets as built, or
    /// the release lists' default.
    pub default: Option<String>,
    /// `LINUX_TARGET_FAMILIES`: the Linux list as given (expanded to targets
    /// in kpack mode), sorted; empty when not given.
    pub linux: Vec<String>,
    /// `WINDOWS_TARGET_FAMILIES`, the same for Windows.
    pub windows: Vec<String>,
    /// `THIS_TARGET_FAMILY`: the family a per-family selector is restricted to.
    pub this: Option<String>,
}

/// The sdist's requirements: what pip reads as `Requires-Dist` and
/// `Provides-Extra`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// Unconditional requirements (`rocm-sdk-core==V`; never `rocm` itself).
    pub install_requires: Vec<Requirement>,
    /// The extras in the order they are written.
    pub extras: Vec<Extra>,
}

/// One extra and what it brings in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extra {
    /// The normalised extra name.
    pub name: String,
    /// Its requirements, each carrying `extra == name`.
    pub requirements: Vec<Requirement>,
}

impl Metadata {
    /// The `Provides-Extra` values, in order.
    pub fn provides_extra(&self) -> Vec<&str> {
        self.extras.iter().map(|e| e.name.as_str()).collect()
    }

    /// The `Requires-Dist` values, in order: install requirements first,
    /// then each extra's.
    pub fn requires_dist(&self) -> Vec<String> {
        self.install_requires
            .iter()
            .chain(self.extras.iter().flat_map(|e| &e.requirements))
            .map(ToString::to_string)
            .collect()
    }
}

/// The name of `platform` in messages.
fn platform_name(platform: Platform) -> &'static str {
    match platform {
        Platform::Linux => "Linux",
        Platform::Windows => "Windows",
    }
}

/// Which platforms take part in a release, from the two lists.
struct Release {
    linux: Option<Vec<String>>,
    windows: Option<Vec<String>>,
}

impl Selector {
    /// Plans the selector of a `mode` build at `version` (pinned in its
    /// canonical form).
    ///
    /// Without release lists the on-disk targets decide (kpack: their base
    /// targets, sorted). With either list, the release lists decide:
    /// available = sorted union of the participating platforms' units,
    /// default = first of their sorted intersection, else of the union, and
    /// markers only when both lists are non-empty — so Linux and Windows
    /// builds of one release write byte-identical selectors.
    pub fn plan(
        mode: Mode,
        version: &Version,
        input: &SelectorInput,
        families: &FamilyTable,
    ) -> Result<Self, SelectorError> {
        let units = |platform: Platform, names: &[Family]| -> Result<Vec<String>, SelectorError> {
            match mode {
                Mode::Kpack => families
                    .expand(names)
                    .map_err(|source| SelectorError::Family { platform, source }),
                Mode::Legacy => Ok(names
                    .iter()
                    .map(|name| name.as_str().to_owned())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect()),
            }
        };
        let release = Release {
            linux: input
                .linux_families
                .as_deref()
                .map(|names| units(Platform::Linux, names))
                .transpose()?,
            windows: input
                .windows_families
                .as_deref()
                .map(|names| units(Platform::Windows, names))
                .transpose()?,
        };
        let mut contents: BTreeSet<PackageKind> = input
            .packages
            .iter()
            .copied()
            .filter(|k| {
                matches!(
                    k,
                    PackageKind::Libraries | PackageKind::Devel | PackageKind::Profiler
                )
            })
            .collect();
        let mut target_platforms = BTreeMap::new();
        let mut package_platforms = BTreeMap::new();
        let (mut available, mut default_target);
        let mut reference;
        if release.linux.is_none() && release.windows.is_none() {
            let built: BTreeSet<String> = input
                .on_disk
                .iter()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect();
            reference = TargetFamilies {
                default: built.first().cloned(),
                available: built.into_iter().collect(),
                ..TargetFamilies::default()
            };
            available = match mode {
                Mode::Kpack => base_targets(&input.on_disk),
                Mode::Legacy => {
                    let set: BTreeSet<String> = input
                        .on_disk
                        .iter()
                        .map(|f| f.trim().to_owned())
                        .filter(|f| !f.is_empty())
                        .collect();
                    set.into_iter().collect()
                }
            };
            default_target = available.first().cloned();
        } else {
            let linux = release.linux.clone().unwrap_or_default();
            let windows = release.windows.clone().unwrap_or_default();
            let union: BTreeSet<String> = linux.iter().chain(&windows).cloned().collect();
            let both = !linux.is_empty() && !windows.is_empty();
            let intersection: BTreeSet<&String> = if both {
                linux.iter().filter(|t| windows.contains(t)).collect()
            } else {
                union.iter().collect()
            };
            default_target = intersection
                .first()
                .map(|t| (*t).clone())
                .or_else(|| union.first().cloned());
            if both {
                for t in &union {
                    match (linux.contains(t), windows.contains(t)) {
                        (true, false) => target_platforms.insert(t.clone(), Platform::Linux),
                        (false, true) => target_platforms.insert(t.clone(), Platform::Windows),
                        _ => None,
                    };
                }
            }
            // The profiler is built on Linux only (docs/behaviour.md#profiler-contents): whichever
            // platform builds this sdist, offer it exactly when Linux takes part.
            if linux.is_empty() {
                contents.remove(&PackageKind::Profiler);
            } else {
                contents.insert(PackageKind::Profiler);
                if both {
                    package_platforms.insert(PackageKind::Profiler, Platform::Linux);
                }
            }
            available = union.into_iter().collect();
            reference = TargetFamilies {
                available: available.clone(),
                default: default_target.clone(),
                linux: release.linux.clone().unwrap_or_default(),
                windows: release.windows.clone().unwrap_or_default(),
                this: None,
            };
        }
        if let Some(family) = &input.restrict_to_family {
            if mode == Mode::Kpack {
                return Err(SelectorError::RestrictInKpackMode);
            }
            let family = family.trim();
            if !available.iter().any(|a| a == family) {
                return Err(SelectorError::RestrictNotAvailable {
                    family: family.to_owned(),
                    available,
                });
            }
            available = vec![family.to_owned()];
            default_target = Some(family.to_owned());
            // The reference writes a per-family selector from scratch: that
            // family alone, and no platform lists.
            reference = TargetFamilies {
                available: available.clone(),
                default: default_target.clone(),
                this: default_target.clone(),
                ..TargetFamilies::default()
            };
            target_platforms.retain(|t, _| t == family);
        }
        if mode == Mode::Kpack && !available.is_empty() {
            contents.insert(PackageKind::Device);
        }
        Ok(Self {
            mode,
            version: version.to_string(),
            selector_version: None,
            contents: contents.into_iter().collect(),
            available_targets: available,
            default_target,
            target_platforms,
            package_platforms,
            target_families: Some(reference),
        })
    }

    /// The `rocm` sdist's own version: [`Selector::selector_version`] for a
    /// post-release of the selector, else the version it pins.
    pub fn own_version(&self) -> &str {
        self.selector_version.as_deref().unwrap_or(&self.version)
    }

    /// Chooses the install's target from the caller's override value and
    /// `offload-arch` output (see [`select_target`]).
    pub fn select_target(
        &self,
        requested: Option<&str>,
        offload_arch_output: Option<&str>,
    ) -> Result<Option<Selection>, SelectionError> {
        select_target(
            &self.available_targets,
            self.default_target.as_deref(),
            requested,
            offload_arch_output,
        )
    }

    fn contains(&self, kind: PackageKind) -> bool {
        self.contents.contains(&kind)
    }

    fn pin(&self, kind: PackageKind, target: Option<&str>) -> Requirement {
        let name = Package::new(kind, self.mode, &crate::nonce::Nonce::NONE)
            .dist_name(target)
            .expect("selector only pins packages its mode has, with a target when needed");
        let platform = match target {
            Some(t)
                if Package::new(kind, self.mode, &crate::nonce::Nonce::NONE)
                    .is_target_specific() =>
            {
                self.target_platforms.get(t).copied()
            }
            _ => self.package_platforms.get(&kind).copied(),
        };
        Requirement::pin(&name, &self.version).on_platform(platform)
    }

    /// The requirements and extras for an install where `selection` was
    /// chosen (`None`: no target available).
    ///
    /// Never names a package the release lacks: the generic `device` extra
    /// exists only when a target was requested or detected (a default guess
    /// would install code for a GPU the machine may not have), and legacy
    /// builds have no device extras at all.
    pub fn metadata(&self, selection: Option<&Selection>) -> Metadata {
        let mut extras = Vec::new();
        let mut add = |name: &str, reqs: Vec<Requirement>| {
            if !reqs.is_empty() {
                let requirements = reqs.into_iter().map(|r| r.for_extra(name)).collect();
                extras.push(Extra {
                    name: name.to_owned(),
                    requirements,
                });
            }
        };
        if self.contains(PackageKind::Libraries) {
            let reqs = match self.mode {
                Mode::Kpack => vec![self.pin(PackageKind::Libraries, None)],
                Mode::Legacy => selection
                    .map(|s| self.pin(PackageKind::Libraries, Some(&s.target)))
                    .into_iter()
                    .collect(),
            };
            add("libraries", reqs);
        }
        if self.contains(PackageKind::Devel) {
            add("devel", vec![self.pin(PackageKind::Devel, None)]);
        }
        if self.contains(PackageKind::Profiler) {
            add("profiler", vec![self.pin(PackageKind::Profiler, None)]);
        }
        if self.mode == Mode::Kpack && self.contains(PackageKind::Device) {
            if let Some(s) = selection.filter(|s| s.source != TargetSource::Default) {
                add(
                    "device",
                    vec![self.pin(PackageKind::Device, Some(&s.target))],
                );
            }
            for t in &self.available_targets {
                add(
                    &format!("device-{t}"),
                    vec![self.pin(PackageKind::Device, Some(t))],
                );
            }
            let all = self
                .available_targets
                .iter()
                .map(|t| self.pin(PackageKind::Device, Some(t)))
                .collect();
            add("device-all", all);
        }
        Metadata {
            install_requires: vec![self.pin(PackageKind::Core, None)],
            extras,
        }
    }
}
