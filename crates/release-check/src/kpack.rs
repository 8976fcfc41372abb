//! Completeness against the release's family lists: every target of a
//! platform's list has its device wheel (kpack), or every family its
//! libraries wheel (legacy).

use dist_info::families::{Family, FamilyTable};
use dist_info::package::{Mode, Package, PackageKind};
use dist_info::requirement::Platform;
use pypa_formats::dist_name::normalize;

use super::Release;
use super::extras::DEVICE_PREFIX;
use super::release::Kind;

/// `None` when no list was given (the check is skipped).
pub(crate) fn check(
    release: &Release,
    linux: Option<&[Family]>,
    windows: Option<&[Family]>,
) -> Option<Vec<String>> {
    if linux.is_none() && windows.is_none() {
        return None;
    }
    let table = FamilyTable::builtin();
    let inferred = || {
        if release
            .unique()
            .any(|f| f.name().starts_with(DEVICE_PREFIX))
        {
            Mode::Kpack
        } else {
            Mode::Legacy
        }
    };
    let mode = release
        .rocm_sdists()
        .first()
        .map_or_else(inferred, |(_, doc)| doc.selector.mode);
    let mut problems = Vec::new();
    for (platform, list) in [(Platform::Linux, linux), (Platform::Windows, windows)] {
        let Some(list) = list else { continue };
        let families: Vec<String> = list.iter().map(|f| f.as_str().to_owned()).collect();
        if families.is_empty() {
            continue;
        }
        let present: Vec<String> = release
            .unique()
            .filter(|f| matches!(f.kind, Kind::Wheel(_)) && f.installs_on(platform))
            .map(|f| f.name().to_owned())
            .collect();
        let (units, expected): (Vec<String>, Vec<String>) = match mode {
            Mode::Kpack => {
                let targets = table.expand(&families).unwrap_or_default();
                let names = targets
                    .iter()
                    .map(|t| format!("{DEVICE_PREFIX}{t}"))
                    .collect();
                (targets, names)
            }
            Mode::Legacy => {
                let package = Package::new(
                    PackageKind::Libraries,
                    Mode::Legacy,
                    &dist_info::nonce::Nonce::NONE,
                );
                let names = families
                    .iter()
                    .filter_map(|f| package.dist_name(Some(f)).ok())
                    .map(|n| normalize(&n))
                    .collect();
                (families.clone(), names)
            }
        };
        let missing: Vec<&str> = units
            .iter()
            .zip(&expected)
            .filter(|(_, name)| !present.contains(name))
            .map(|(unit, _)| unit.as_str())
            .collect();
        if !missing.is_empty() {
            let kind = if mode == Mode::Kpack {
                "device wheels"
            } else {
                "libraries wheels"
            };
            problems.push(format!(
                "{}: no {kind} for {} (expected {} from --{}-amdgpu-families {:?}); build or fetch them",
                platform.sys_platform(),
                missing.join(", "),
                units.join(", "),
                flag_name(platform),
                Family::join(list)
            ));
        }
    }
    Some(problems)
}

fn flag_name(platform: Platform) -> &'static str {
    match platform {
        Platform::Linux => "linux",
        Platform::Windows => "windows",
    }
}
