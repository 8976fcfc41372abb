//! Every requirement of every package is satisfiable inside the set, on
//! every platform the set serves: wheels' `Requires-Dist` (for no extra and
//! for each extra they provide) and the `rocm` sdist's requirements, which
//! are dynamic and computed here from its `_dist_info.json`.

use std::collections::BTreeSet;

use wheel_writer::normalized_name;

use super::Release;
use super::marker::{Env, Requirement};
use super::release::{DistFile, Kind};

pub(crate) fn check(release: &Release) -> Vec<String> {
    let platforms = release.platforms();
    let mut problems = BTreeSet::new();
    for file in release.unique() {
        match &file.kind {
            Kind::Wheel(w) => {
                let extras: Vec<Option<&str>> = std::iter::once(None)
                    .chain(w.provides_extra.iter().map(|e| Some(e.as_str())))
                    .collect();
                for &platform in w.platforms.iter().filter(|p| platforms.contains(p)) {
                    for &extra in &extras {
                        for req in &w.requires_dist {
                            check_one(release, file, req, Env { platform, extra }, &mut problems);
                        }
                    }
                }
            }
            Kind::Sdist(s) => {
                let Some(doc) = &s.dist_info else { continue };
                let metadata = doc.selector.metadata(None);
                let lines = metadata.requires_dist();
                let extras = metadata.provides_extra();
                for line in &lines {
                    let req = match Requirement::parse(line) {
                        Ok(r) => r,
                        Err(e) => {
                            problems.insert(format!("{}: requirement {line:?}: {e}", file.display));
                            continue;
                        }
                    };
                    for &platform in &platforms {
                        for extra in std::iter::once(None).chain(extras.iter().map(|e| Some(*e))) {
                            check_one(release, file, &req, Env { platform, extra }, &mut problems);
                        }
                    }
                }
            }
        }
    }
    problems.into_iter().collect()
}

fn check_one(
    release: &Release,
    file: &DistFile,
    req: &Requirement,
    env: Env<'_>,
    problems: &mut BTreeSet<String>,
) {
    if !req.applies(env) {
        return;
    }
    let name = normalized_name(&req.name);
    let candidates: Vec<&DistFile> = release.unique().filter(|f| f.name() == name).collect();
    if candidates
        .iter()
        .any(|f| req.admits(f.version()) && f.installs_on(env.platform))
    {
        return;
    }
    let have: Vec<String> = candidates
        .iter()
        .map(|f| format!("{} ({})", f.file_name, f.version()))
        .collect();
    let via = env
        .extra
        .map_or_else(String::new, |e| format!(" (extra {e})"));
    problems.insert(format!(
        "{}: requires {} on {}{via}, which nothing in the set provides{}",
        file.display,
        req.text,
        env.platform.sys_platform(),
        if have.is_empty() {
            String::new()
        } else {
            format!(" (the set has {})", have.join(", "))
        }
    ));
}
