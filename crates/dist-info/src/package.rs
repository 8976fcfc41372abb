//! The package set (docs/behaviour.md#packages): logical packages, their distribution names,
//! their pure and platform Python package names, and the packaging mode.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::nonce::Nonce;
use crate::target::base_target;

/// The packaging mode, chosen by `flags.KPACK_SPLIT_ARTIFACTS` (docs/behaviour.md#build-flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One libraries package per family, device code embedded.
    Legacy,
    /// Arch-neutral libraries plus one device package per base target.
    Kpack,
}

impl Mode {
    /// How `inspect` names the mode: `legacy`, or `kpack-split` after
    /// TheRock's `KPACK_SPLIT_ARTIFACTS` flag.
    pub fn therock_name(self) -> &'static str {
        match self {
            Self::Legacy => "legacy",
            Self::Kpack => "kpack-split",
        }
    }
}

/// The logical packages, in the order docs/behaviour.md#package-names lists them (also the order of
/// every list this crate writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PackageKind {
    /// The `rocm` selector sdist.
    Meta,
    /// `rocm-sdk-core`.
    Core,
    /// `rocm-sdk-libraries` (kpack) or `rocm-sdk-libraries-{F}` (legacy).
    Libraries,
    /// `rocm-sdk-device-{T}` (kpack only).
    Device,
    /// `rocm-sdk-devel`.
    Devel,
    /// `rocm-profiler`.
    Profiler,
}

impl PackageKind {
    /// Every logical package, in the order of docs/behaviour.md#package-names.
    pub const ALL: [PackageKind; 6] = [
        PackageKind::Meta,
        PackageKind::Core,
        PackageKind::Libraries,
        PackageKind::Device,
        PackageKind::Devel,
        PackageKind::Profiler,
    ];

    /// The logical name (`meta`, `core`, ...), the key of `ALL_PACKAGES`.
    pub fn logical_name(self) -> &'static str {
        match self {
            PackageKind::Meta => "meta",
            PackageKind::Core => "core",
            PackageKind::Libraries => "libraries",
            PackageKind::Device => "device",
            PackageKind::Devel => "devel",
            PackageKind::Profiler => "profiler",
        }
    }

    /// Whether every installation has this package (meta and core).
    pub fn required(self) -> bool {
        matches!(self, PackageKind::Meta | PackageKind::Core)
    }
}

impl fmt::Display for PackageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.logical_name())
    }
}

/// A logical package name that is not one of docs/behaviour.md#package-names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown package `{0}`; known packages: meta, core, libraries, device, devel, profiler")]
pub struct UnknownPackage(pub String);

impl FromStr for PackageKind {
    type Err = UnknownPackage;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PackageKind::ALL
            .into_iter()
            .find(|k| k.logical_name() == s)
            .ok_or_else(|| UnknownPackage(s.to_owned()))
    }
}

/// Errors naming a package.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// A target-specific package was asked for without a target.
    #[error("package `{logical}` is target specific ({template}); pass a target")]
    TargetRequired {
        /// The logical package.
        logical: PackageKind,
        /// Its dist-name template.
        template: String,
    },
    /// The device package exists only in kpack mode.
    #[error("package `device` exists only in kpack-split builds (`KPACK_SPLIT_ARTIFACTS`)")]
    DeviceInLegacyMode,
}

/// The placeholder target-specific templates use.
pub const TARGET_PLACEHOLDER: &str = "{target}";

/// One logical package in a given mode with a given nonce suffix: the
/// source of every name docs/behaviour.md#package-names derives.
///
/// ```
/// use dist_info::package::{Mode, Package, PackageKind};
/// use dist_info::nonce::Nonce;
/// let libs = Package::new(PackageKind::Libraries, Mode::Legacy, &Nonce::NONE);
/// assert_eq!(libs.dist_name(Some("gfx94X-dcgpu")).unwrap(), "rocm-sdk-libraries-gfx94X-dcgpu");
/// assert_eq!(libs.platform_package(Some("gfx94X-dcgpu")).unwrap().unwrap(), "_rocm_sdk_libraries_gfx94X_dcgpu");
/// let dev = Package::new(PackageKind::Device, Mode::Kpack, &Nonce::NONE);
/// assert_eq!(dev.dist_name(Some("gfx942:xnack+")).unwrap(), "rocm-sdk-device-gfx942");
/// assert_eq!(dev.platform_package(Some("gfx942")).unwrap().unwrap(), "_rocm_sdk_libraries");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Package {
    kind: PackageKind,
    mode: Mode,
    nonce: Nonce,
}

impl Package {
    /// The package `kind` of a `mode` build whose platform packages carry
    /// the nonce suffix `nonce` (`--version-suffix`, usually empty).
    pub fn new(kind: PackageKind, mode: Mode, nonce: &Nonce) -> Self {
        Self {
            kind,
            mode,
            nonce: nonce.clone(),
        }
    }

    /// The logical package.
    pub fn kind(&self) -> PackageKind {
        self.kind
    }

    /// Whether the dist name depends on a target (legacy libraries: family;
    /// device: base target).
    pub fn is_target_specific(&self) -> bool {
        matches!(
            (self.kind, self.mode),
            (PackageKind::Libraries, Mode::Legacy) | (PackageKind::Device, _)
        )
    }

    /// The dist-name template, with [`TARGET_PLACEHOLDER`] where the target goes.
    pub fn dist_template(&self) -> &'static str {
        match (self.kind, self.mode) {
            (PackageKind::Meta, _) => "rocm",
            (PackageKind::Core, _) => "rocm-sdk-core",
            (PackageKind::Libraries, Mode::Legacy) => "rocm-sdk-libraries-{target}",
            (PackageKind::Libraries, Mode::Kpack) => "rocm-sdk-libraries",
            (PackageKind::Device, _) => "rocm-sdk-device-{target}",
            (PackageKind::Devel, _) => "rocm-sdk-devel",
            (PackageKind::Profiler, _) => "rocm-profiler",
        }
    }

    /// The distribution name (display form; METADATA `Name`). A target given
    /// to a package that is not target specific is ignored; a device target
    /// is reduced to its base.
    pub fn dist_name(&self, target: Option<&str>) -> Result<String, PackageError> {
        if self.kind == PackageKind::Device && self.mode == Mode::Legacy {
            return Err(PackageError::DeviceInLegacyMode);
        }
        let template = self.dist_template();
        if !self.is_target_specific() {
            return Ok(template.to_owned());
        }
        let target = target.ok_or_else(|| PackageError::TargetRequired {
            logical: self.kind,
            template: template.to_owned(),
        })?;
        let target = if self.kind == PackageKind::Device {
            base_target(target)
        } else {
            target
        };
        Ok(template.replace(TARGET_PLACEHOLDER, target))
    }

    /// Which package of a `mode` release the distribution name `name`
    /// (display form, as METADATA `Name` gives it) belongs to, and its
    /// target for a target-specific one: the inverse of
    /// [`Package::dist_name`]. `None` for a name no package of the mode has.
    ///
    /// ```
    /// use dist_info::package::{Mode, Package, PackageKind};
    /// assert_eq!(
    ///     Package::identify(Mode::Legacy, "rocm-sdk-libraries-gfx94X-dcgpu"),
    ///     Some((PackageKind::Libraries, Some("gfx94X-dcgpu".to_owned())))
    /// );
    /// assert_eq!(Package::identify(Mode::Kpack, "rocm-sdk-core"), Some((PackageKind::Core, None)));
    /// assert_eq!(Package::identify(Mode::Legacy, "rocm-sdk-device-gfx942"), None);
    /// ```
    pub fn identify(mode: Mode, name: &str) -> Option<(PackageKind, Option<String>)> {
        PackageKind::ALL
            .into_iter()
            .filter(|&k| !(k == PackageKind::Device && mode == Mode::Legacy))
            .find_map(|kind| {
                let package = Package::new(kind, mode, &Nonce::NONE);
                let template = package.dist_template();
                match template.split_once(TARGET_PLACEHOLDER) {
                    None => (name == template).then_some((kind, None)),
                    Some((prefix, suffix)) => name
                        .strip_prefix(prefix)
                        .and_then(|rest| rest.strip_suffix(suffix))
                        .filter(|target| !target.is_empty())
                        .map(|target| (kind, Some(target.to_owned()))),
                }
            })
    }

    /// The pure Python package (`rocm_sdk_core`, legacy `rocm_sdk_libraries_{F}`),
    /// or `None` for the device package, which has none.
    pub fn pure_package(&self, target: Option<&str>) -> Result<Option<String>, PackageError> {
        if self.kind == PackageKind::Device {
            return Ok(None);
        }
        let dist = self.dist_name(target)?;
        if self.kind == PackageKind::Meta {
            return Ok(Some("rocm_sdk".to_owned()));
        }
        Ok(Some(dist.replace('-', "_")))
    }

    /// The platform package directory in site-packages: `_` + dist name with
    /// `-` → `_` + nonce (case kept). The device package overlays the
    /// libraries platform package; the meta package has none.
    pub fn platform_package(&self, target: Option<&str>) -> Result<Option<String>, PackageError> {
        match self.kind {
            PackageKind::Meta => Ok(None),
            PackageKind::Device => {
                // Still validates mode and target.
                self.dist_name(target)?;
                Package::new(PackageKind::Libraries, self.mode, &self.nonce).platform_package(None)
            }
            _ => {
                let dist = self.dist_name(target)?;
                Ok(Some(format!("_{}{}", dist.replace('-', "_"), self.nonce)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_per_package_table() {
        let p = |k| Package::new(k, Mode::Kpack, &Nonce::NONE);
        assert_eq!(p(PackageKind::Meta).dist_name(None).unwrap(), "rocm");
        assert_eq!(
            p(PackageKind::Meta).pure_package(None).unwrap().unwrap(),
            "rocm_sdk"
        );
        assert_eq!(p(PackageKind::Meta).platform_package(None).unwrap(), None);
        assert_eq!(
            p(PackageKind::Core).pure_package(None).unwrap().unwrap(),
            "rocm_sdk_core"
        );
        assert_eq!(
            p(PackageKind::Core)
                .platform_package(None)
                .unwrap()
                .unwrap(),
            "_rocm_sdk_core"
        );
        assert_eq!(
            p(PackageKind::Libraries).dist_name(Some("gfx942")).unwrap(),
            "rocm-sdk-libraries"
        );
        assert_eq!(
            p(PackageKind::Devel)
                .platform_package(None)
                .unwrap()
                .unwrap(),
            "_rocm_sdk_devel"
        );
        assert_eq!(
            p(PackageKind::Profiler).dist_name(None).unwrap(),
            "rocm-profiler"
        );
        assert_eq!(
            p(PackageKind::Profiler)
                .pure_package(None)
                .unwrap()
                .unwrap(),
            "rocm_profiler"
        );
        assert_eq!(
            p(PackageKind::Device).pure_package(Some("gfx942")).unwrap(),
            None
        );
        assert!(!p(PackageKind::Libraries).is_target_specific());
        assert!(p(PackageKind::Device).is_target_specific());
    }

    #[test]
    fn nonce_and_targets() {
        let libs = Package::new(
            PackageKind::Libraries,
            Mode::Legacy,
            &"_n1".parse().unwrap(),
        );
        assert_eq!(
            libs.pure_package(Some("gfx110X-all")).unwrap().unwrap(),
            "rocm_sdk_libraries_gfx110X_all"
        );
        assert_eq!(
            libs.platform_package(Some("gfx110X-all")).unwrap().unwrap(),
            "_rocm_sdk_libraries_gfx110X_all_n1"
        );
        let err = libs.dist_name(None).unwrap_err();
        assert!(
            err.to_string().contains("rocm-sdk-libraries-{target}"),
            "{err}"
        );
        let dev = Package::new(PackageKind::Device, Mode::Kpack, &"_n1".parse().unwrap());
        assert_eq!(
            dev.platform_package(Some("gfx1100")).unwrap().unwrap(),
            "_rocm_sdk_libraries_n1"
        );
        assert!(dev.platform_package(None).is_err());
        let legacy_dev = Package::new(PackageKind::Device, Mode::Legacy, &Nonce::NONE);
        assert_eq!(
            legacy_dev.dist_name(Some("gfx942")),
            Err(PackageError::DeviceInLegacyMode)
        );
        assert_eq!(
            Package::new(PackageKind::Core, Mode::Legacy, &Nonce::NONE)
                .dist_name(Some("x"))
                .unwrap(),
            "rocm-sdk-core"
        );
    }

    #[test]
    fn logical_names_round_trip() {
        for k in PackageKind::ALL {
            assert_eq!(k.logical_name().parse::<PackageKind>().unwrap(), k);
        }
        assert!(
            "rocm"
                .parse::<PackageKind>()
                .unwrap_err()
                .to_string()
                .contains("known packages")
        );
        assert!(PackageKind::Core.required() && !PackageKind::Device.required());
    }
}
