//! Every device wheel is reachable through `rocm[device-<T>]` and
//! `rocm[device-all]` on the platform its tag names, evaluating the rocm
//! sdist's requirements (computed from its `_dist_info.json`, as the sdist
//! does at install time) for that platform.

use dist_info::package::Mode;
use pypa_formats::dist_name::normalize;

use super::Release;
use super::release::Kind;

/// The device distributions' common prefix (docs/behaviour.md#package-names).
pub(crate) const DEVICE_PREFIX: &str = "rocm-sdk-device-";

pub(crate) fn check(release: &Release) -> Vec<String> {
    let mut problems = Vec::new();
    let sdists = release.rocm_sdists();
    let devices: Vec<_> = release
        .unique()
        .filter(|f| matches!(f.kind, Kind::Wheel(_)) && f.name().starts_with(DEVICE_PREFIX))
        .collect();
    if devices.is_empty() {
        return problems;
    }
    if sdists.is_empty() {
        problems.push(
            "the set has device wheels but no rocm sdist, so no rocm[device-...] extra reaches them"
                .into(),
        );
    }
    for (sdist, doc) in sdists {
        if doc.selector.mode != Mode::Kpack {
            problems.push(format!(
                "{}: a legacy-mode selector, yet the set has device wheels",
                sdist.display
            ));
            continue;
        }
        let metadata = doc.selector.metadata(None);
        let device_extras: Vec<&str> = metadata
            .provides_extra()
            .into_iter()
            .filter(|e| e.starts_with("device"))
            .collect();
        for wheel in &devices {
            let Kind::Wheel(w) = &wheel.kind else {
                continue;
            };
            let target = &w.name[DEVICE_PREFIX.len()..];
            for &platform in &w.platforms {
                for extra in [format!("device-{target}"), "device-all".to_owned()] {
                    let extra = normalize(&extra);
                    let Some(found) = metadata.extras.iter().find(|e| e.name == extra) else {
                        problems.push(format!(
                            "{}: rocm[{extra}] does not exist, so {} is unreachable on {}; \
                             the sdist's device extras are [{}]; build the sdist from the union of \
                             both platforms' family lists",
                            sdist.display,
                            wheel.file_name,
                            platform.sys_platform(),
                            device_extras.join(", ")
                        ));
                        continue;
                    };
                    let reaches = found.requirements.iter().any(|r| {
                        normalize(&r.name) == w.name
                            && r.platform.is_none_or(|p| p == platform)
                            && r.version == w.version
                    });
                    if !reaches {
                        problems.push(format!(
                            "{}: rocm[{extra}] on {} does not require {}=={}, so {} is unreachable there",
                            sdist.display,
                            platform.sys_platform(),
                            w.name,
                            w.version,
                            wheel.file_name
                        ));
                    }
                }
            }
        }
    }
    problems
}
