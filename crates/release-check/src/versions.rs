//! All `rocm*` distributions of a release carry one version.

use std::collections::BTreeMap;

use super::Release;

/// One problem when two or more versions appear.
pub(crate) fn check(release: &Release) -> Vec<String> {
    let mut by_version: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in &release.files {
        if f.name().starts_with("rocm") {
            by_version.entry(f.version()).or_default().push(&f.display);
        }
    }
    if by_version.len() <= 1 {
        return Vec::new();
    }
    let listed: Vec<String> = by_version
        .iter()
        .map(|(v, files)| format!("{v} ({})", files.join(", ")))
        .collect();
    vec![format!(
        "the rocm* packages carry {} different versions: {}; rebuild every package with one --version",
        by_version.len(),
        listed.join("; ")
    )]
}
