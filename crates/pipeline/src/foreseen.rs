//! What `verify` will refuse in a release the build writes because it was
//! asked to (docs/behaviour.md#build-checks): everything else `verify`
//! checks the build refuses before it writes, or makes right by
//! construction. Today that is the search-path entries
//! `--keep-absolute-search-paths` keeps, said in `verify`'s own words so
//! that `build --strict` can make them the verdict, as for ELF links.

use layout::Plan;
use pypa_formats::filename::{WheelFilename, WheelTag};
use serde::Serialize;

/// A check of `verify` the release written will fail, besides `elf-links`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForeseenFailure {
    /// The check's id in `verify`'s report (`search-paths`).
    pub check: &'static str,
    /// Its problems, one sentence each, as `verify` words them.
    pub problems: Vec<String>,
}

/// The failures `verify` will report for the packages of `plan` named
/// `written` (all of them for a one-machine build, a shard's for a shard).
pub(crate) fn foresee(plan: &Plan, written: &dyn Fn(&str) -> bool) -> Vec<ForeseenFailure> {
    let mut problems = Vec::new();
    for kept in plan
        .kept_search_paths
        .iter()
        .filter(|k| written(&k.package))
    {
        let Some(wheel) = wheel_file_name(plan, &kept.package) else {
            continue;
        };
        let origin = if kept.in_devel {
            let tarball = plan
                .packages
                .iter()
                .find(|p| p.dist_name == kept.package && p.subdir == kept.subdir)
                .and_then(|p| {
                    p.files
                        .iter()
                        .find(|f| matches!(f.action, layout::Action::DevelTar))
                })
                .map_or("", |f| f.dest.as_str());
            format!("{wheel} ({tarball})")
        } else {
            wheel
        };
        for entry in &kept.entries {
            problems.push(release_check::search_path_problem(
                &kept.path, &origin, &kept.tag, entry,
            ));
        }
    }
    if problems.is_empty() {
        return Vec::new();
    }
    vec![ForeseenFailure {
        check: "search-paths",
        problems,
    }]
}

/// The file name the build gives the wheel of `package`.
fn wheel_file_name(plan: &Plan, package: &str) -> Option<String> {
    let name = WheelFilename {
        name: package.parse().ok()?,
        version: plan.version.parse().ok()?,
        build: None,
        tag: WheelTag::py3_none(&plan.platform_tag).ok()?,
    };
    Some(name.to_string())
}
