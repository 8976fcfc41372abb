//! A file name present in two directories must be the same bytes: an index
//! keeps only one of them (the upload race of the seed bug report).

use std::collections::{BTreeMap, BTreeSet};

use super::Release;
use super::release::{DistFile, Kind};

/// How many differing members to name before summarising.
const SHOWN: usize = 8;

pub(crate) fn check(release: &Release) -> Vec<String> {
    // Keyed by the path inside each dist directory: a legacy release's
    // `dist/{F}/` directories are separate indexes and may differ.
    let mut by_path: BTreeMap<&str, Vec<&DistFile>> = BTreeMap::new();
    for f in &release.files {
        by_path.entry(&f.rel).or_default().push(f);
    }
    let mut problems = Vec::new();
    for (rel, files) in by_path {
        let first = files[0];
        for other in &files[1..] {
            if other.sha256 != first.sha256 {
                let hint = if first.name() == "rocm" {
                    "give every platform's build both --linux-amdgpu-families and --windows-amdgpu-families"
                } else {
                    "build both from the same inputs"
                };
                problems.push(format!(
                    "{rel}: {} and {} have the same file name but different bytes ({}); \
                     an index keeps only one of them: {hint}",
                    first.display,
                    other.display,
                    what_differs(first, other)
                ));
            }
        }
    }
    problems
}

fn what_differs(a: &DistFile, b: &DistFile) -> String {
    match (&a.kind, &b.kind) {
        (Kind::Sdist(sa), Kind::Sdist(sb)) => {
            if let (Some(da), Some(db)) = (&sa.dist_info, &sb.dist_info) {
                let ma = da.selector.metadata(None);
                let mb = db.selector.metadata(None);
                let ea: BTreeSet<&str> = ma.provides_extra().into_iter().collect();
                let eb: BTreeSet<&str> = mb.provides_extra().into_iter().collect();
                let mut parts = Vec::new();
                let only_a: Vec<&str> = ea.difference(&eb).copied().collect();
                let only_b: Vec<&str> = eb.difference(&ea).copied().collect();
                if !only_a.is_empty() {
                    parts.push(format!("extras only in the first: {}", only_a.join(", ")));
                }
                if !only_b.is_empty() {
                    parts.push(format!("extras only in the second: {}", only_b.join(", ")));
                }
                let ra: BTreeSet<String> = ma.requires_dist().into_iter().collect();
                let rb: BTreeSet<String> = mb.requires_dist().into_iter().collect();
                let req_a: Vec<&String> = ra.difference(&rb).collect();
                let req_b: Vec<&String> = rb.difference(&ra).collect();
                if !req_a.is_empty() {
                    parts.push(format!(
                        "Requires-Dist only in the first: [{}]",
                        shorten(&req_a)
                    ));
                }
                if !req_b.is_empty() {
                    parts.push(format!(
                        "Requires-Dist only in the second: [{}]",
                        shorten(&req_b)
                    ));
                }
                if !parts.is_empty() {
                    return parts.join("; ");
                }
            }
            members_differ(&sa.members, &sb.members)
        }
        (Kind::Wheel(wa), Kind::Wheel(wb)) => members_differ(&wa.record, &wb.record),
        _ => "one is a wheel, the other an sdist".into(),
    }
}

fn members_differ(a: &[(String, String)], b: &[(String, String)]) -> String {
    let ma: BTreeMap<&str, &str> = a.iter().map(|(p, h)| (p.as_str(), h.as_str())).collect();
    let mb: BTreeMap<&str, &str> = b.iter().map(|(p, h)| (p.as_str(), h.as_str())).collect();
    let names: BTreeSet<&str> = ma.keys().chain(mb.keys()).copied().collect();
    let differing: Vec<String> = names
        .into_iter()
        .filter(|n| ma.get(n) != mb.get(n))
        .map(|n| match (ma.get(n), mb.get(n)) {
            (Some(_), None) => format!("{n} only in the first"),
            (None, Some(_)) => format!("{n} only in the second"),
            _ => format!("{n} differs"),
        })
        .collect();
    if differing.is_empty() {
        "same members, different archive bytes".into()
    } else {
        format!("members: {}", shorten(&differing))
    }
}

fn shorten<S: AsRef<str>>(items: &[S]) -> String {
    let mut shown: Vec<&str> = items.iter().take(SHOWN).map(AsRef::as_ref).collect();
    let more = items.len().saturating_sub(SHOWN);
    let extra = format!("and {more} more");
    if more > 0 {
        shown.push(&extra);
    }
    shown.join(", ")
}
