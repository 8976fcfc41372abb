//! Every requirement of every package is satisfiable inside the set, in
//! every target environment the set serves (each platform tag, each
//! supported Python): wheels' `Requires-Dist` (for no extra and for each
//! extra they provide) and the `rocm` sdist's requirements, which are
//! dynamic and computed here from its `_dist_info.json`.

use pypa_formats::dist_name::normalize;
use std::collections::BTreeSet;

use super::Release;
use super::pep508::{Env, PYTHON_VERSIONS, Requirement};
use super::release::{DistFile, Kind};

pub(crate) fn check(release: &Release) -> Vec<String> {
    let release_tags = release.platform_tags();
    let mut problems = BTreeSet::new();
    for file in release.unique() {
        let (requirements, extras, tags): (Vec<Requirement>, Vec<String>, Vec<String>) =
            match &file.kind {
                Kind::Wheel(w) => {
                    let tags = w
                        .platform_tags
                        .iter()
                        .filter(|t| release_tags.contains(t))
                        .cloned()
                        .collect();
                    (w.requires_dist.clone(), w.provides_extra.clone(), tags)
                }
                Kind::Sdist(s) => {
                    let Some(doc) = &s.dist_info else { continue };
                    let metadata = doc.selector.metadata(None);
                    let mut requirements = Vec::new();
                    for line in &metadata.requires_dist() {
                        match Requirement::parse(line) {
                            Ok(r) => requirements.push(r),
                            Err(e) => {
                                problems.insert(format!("{}: requirement {e}", file.display));
                            }
                        }
                    }
                    let extras = metadata
                        .provides_extra()
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    (requirements, extras, release_tags.clone())
                }
            };
        let extras: Vec<Option<&str>> = std::iter::once(None)
            .chain(extras.iter().map(|e| Some(e.as_str())))
            .collect();
        for tag in &tags {
            for &extra in &extras {
                for req in &requirements {
                    check_one(release, file, req, (tag, extra), &mut problems);
                }
            }
        }
    }
    problems.into_iter().collect()
}

/// Checks `req` of `file` on `tag` for `extra`, in every supported Python.
fn check_one(
    release: &Release,
    file: &DistFile,
    req: &Requirement,
    (tag, extra): (&str, Option<&str>),
    problems: &mut BTreeSet<String>,
) {
    let name = normalize(&req.name);
    let candidates: Vec<&DistFile> = release.unique().filter(|f| f.name() == name).collect();
    let mut unmet = Vec::new();
    for python in PYTHON_VERSIONS {
        let env = Env {
            platform_tag: tag,
            python,
            extra,
        };
        match req.applies(env) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                problems.insert(format!("{}: requirement {e}", file.display));
                return;
            }
        }
        if !candidates
            .iter()
            .any(|f| req.admits(f.version()) && f.installs_on(env.platform()))
        {
            unmet.push(*python);
        }
    }
    if unmet.is_empty() {
        return;
    }
    let pythons = if unmet.len() == PYTHON_VERSIONS.len() {
        String::new()
    } else {
        format!(" with Python {}", unmet.join(", "))
    };
    let have: Vec<String> = candidates
        .iter()
        .map(|f| format!("{} ({})", f.file_name, f.version()))
        .collect();
    let via = extra.map_or_else(String::new, |e| format!(" (extra {e})"));
    problems.insert(format!(
        "{}: requires {} on {tag}{pythons}{via}, which nothing in the set provides{}",
        file.display,
        req.text,
        if have.is_empty() {
            String::new()
        } else {
            format!(" (the set has {})", have.join(", "))
        }
    ));
}
